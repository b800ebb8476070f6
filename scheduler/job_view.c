/* job_view.c - a job's view: its JSON and what the job list matches. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/job.h"

#include "core/snapshot.h"

struct jview *job_view_new(const struct job *j)
{
    /* ?cluster= finds a job where it runs or ran, or before placement
     * on the cluster it asked for */
    size_t priv[2] = {0, 0};
    char *json = job_render(j, priv);
    /* an array is listed while it stands for tasks without records of
     * their own, in their state */
    int rest = j->array && j->array->n_split < j->array->spec.tasks;
    struct jview *v;
    char *tasks;

    if (!json)
        return NULL;
    v = jview_create(j->id, job_state_name(rest ? j->array->tasks_state
                                                : j->state),
                     j->source, j->owner, j->submitted_by, j->account,
                     j->cluster ? j->cluster : j->req.cluster, json, priv);
    if (!v)
        return NULL;
    /* ?id=ID_N finds task N in its array's item while N waits there */
    tasks = rest ? array_spec_format(&j->array->spec, j->array->next,
                                     j->array->ooo, j->array->n_ooo)
                 : NULL;
    if ((rest && !tasks) ||
        jview_set_match(v, j->name, j->req.queue, tasks, j->nodes.v,
                        j->nodes.n) < 0) {
        free(tasks);
        jview_unref(v);
        return NULL;
    }
    free(tasks);
    v->unlisted = j->array && !rest;
    v->array_id = j->array ? j->id : j->array_id;
    v->array_task = j->array_id ? j->array_task : -1;
    return v;
}

struct jview *job_view_from_doc(const char *doc, struct loom_error *err)
{
    json_error_t jerr;
    json_t *o = json_loads(doc, 0, &jerr);
    struct job *j;
    struct jview *v;

    if (!o) {
        loom_error_set(err, LOOM_EINTERNAL, "a stored job is not JSON: %s",
                       jerr.text);
        return NULL;
    }
    j = job_from_doc(o, err);
    json_decref(o);
    if (!j)
        return NULL;
    v = job_view_new(j);
    job_destroy(j);
    if (!v)
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return v;
}
