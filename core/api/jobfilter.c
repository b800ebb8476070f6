/* jobfilter.c - the filters of GET /v1/jobs: their values checked and
 * read, and a job matched against them. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/arrayspec.h"

/* The items of a comma-separated list, each of 1 to size - 1 bytes, in
 * turn into one: the next item's start, or NULL after the last. */
static const char *item_next(const char *p, char *one, size_t size,
                             size_t *len)
{
    *len = strcspn(p, ",");
    snprintf(one, size, "%.*s", (int)(*len < size ? *len : size - 1), p);
    return p[*len] ? p + *len + 1 : NULL;
}

int api_list_check(const char *name, const char *list,
                   struct loom_error *err)
{
    for (const char *p = list;; p++) {
        size_t len = strcspn(p, ",");
        if (!len)
            return loom_error_field(err, LOOM_EINVAL, name, "query "
                                    "parameter %s: '%.100s' has an empty "
                                    "item; it is a comma-separated list of "
                                    "names", name, list);
        p += len;
        if (!*p)
            return 0;
    }
}

/* One item of ?id=: ID or ID_N. */
static int ref_parse(const char *one, size_t len, struct api_job_ref *r)
{
    if (len >= 48)
        return -1;
    return domain_job_ref_parse(one, &r->id, &r->task);
}

int api_job_ids_parse(const char *list, struct api_job_ref **refs,
                      size_t *n, struct loom_error *err)
{
    const char *p = list;
    char one[48];
    size_t len, cap = 0;

    *refs = NULL;
    *n = 0;
    do {
        struct api_job_ref r;
        p = item_next(p, one, sizeof(one), &len);
        if (ref_parse(one, len, &r) < 0) {
            free(*refs);
            *refs = NULL;
            *n = 0;
            return loom_error_field(err, LOOM_EINVAL, "id", "query "
                                    "parameter id: '%s' is not a job: "
                                    "the ids are a comma-separated list of "
                                    "jobs (123) and array tasks (123_7)",
                                    one);
        }
        if (*n == cap) {
            struct api_job_ref *more;
            cap = cap ? cap * 2 : 16;
            if (!(more = realloc(*refs, cap * sizeof(*more)))) {
                free(*refs);
                *refs = NULL;
                *n = 0;
                return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            }
            *refs = more;
        }
        (*refs)[(*n)++] = r;
    } while (p);
    return 0;
}

/* The items of list (NULL: none), sorted, into names. */
static int names_of(const char *list, struct strv *names,
                    struct loom_error *err)
{
    char *items = list ? strdup(list) : NULL;

    if (list && !items)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (char *p = items; p;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (strv_push(names, p) < 0) {
            free(items);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
        p = comma ? comma + 1 : NULL;
    }
    free(items);
    api_strv_sort(names);
    return 0;
}

int api_job_filter_init(struct api_job_filter *f,
                        const struct api_route_args *a,
                        struct loom_error *err)
{
    const char *fn = api_param(a, "nodelist"), *ids = api_param(a, "id");
    const char *states = api_param(a, "state");

    memset(f, 0, sizeof(*f));
    f->cluster = api_param(a, "cluster");
    f->owner = api_param(a, "owner");
    f->account = api_param(a, "account");
    f->name = api_param(a, "name");
    f->by_nodes = fn != NULL;
    /* each checked against the route's table; the nodes again, as they
     * are now */
    if ((states && domain_list_parse(&domain_job_states, states, &f->states,
                                     "state", err) < 0) ||
        (fn && api_nodelist_ids(fn, f->cluster, &f->nodes, err) < 0) ||
        (ids && api_job_ids_parse(ids, &f->ids, &f->n_ids, err) < 0) ||
        names_of(api_param(a, "user"), &f->users, err) < 0 ||
        names_of(api_param(a, "queue"), &f->queues, err) < 0) {
        api_job_filter_fini(f);
        return -1;
    }
    return 0;
}

void api_job_filter_fini(struct api_job_filter *f)
{
    strv_fini(&f->nodes);
    strv_fini(&f->users);
    strv_fini(&f->queues);
    free(f->ids);
    f->ids = NULL;
}

/* Is task one of the tasks of v, an array's item, that wait in it? */
static int task_waits(const struct jview *v, long task)
{
    struct array_spec spec;
    struct loom_error err;
    int in;

    if (!v->tasks || array_spec_parse(v->tasks, &spec, &err) < 0)
        return 0;
    in = array_spec_ord(&spec, task) >= 0;
    array_spec_fini(&spec);
    return in;
}

/* ?id=: the job itself (its own id, a task's loom_id), every item of an
 * array (ID), a task (ID_N): its own record, or its array's item while
 * it waits there. */
static int id_matches(const struct api_job_filter *f, const struct jview *v)
{
    for (size_t i = 0; i < f->n_ids; i++) {
        const struct api_job_ref *r = &f->ids[i];
        if (r->task < 0 && (r->id == v->id || r->id == v->array_id))
            return 1;
        if (r->task >= 0 && r->id == v->array_id &&
            (r->task == v->array_task ||
             (v->id == r->id && task_waits(v, r->task))))
            return 1;
    }
    return 0;
}

int api_job_filter_matches(const struct api_job_filter *f,
                           const struct jview *v)
{
    int k;

    /* v->cluster: where it runs or ran, else the one it asked for */
    if (f->states && ((k = domain_find(&domain_job_states, v->state)) < 0 ||
                      !(f->states & (1u << k))))
        return 0;
    if ((f->owner && strcmp(f->owner, v->owner) != 0) ||
        (f->account && strcmp(f->account, v->account) != 0) ||
        (f->name && (!v->name || strcmp(f->name, v->name) != 0)) ||
        (f->cluster && (!v->cluster || strcmp(f->cluster, v->cluster) != 0)))
        return 0;
    if ((f->users.n && !api_strv_has(&f->users, v->owner) &&
         !api_strv_has(&f->users, v->account)) ||
        (f->queues.n && !api_strv_has(&f->queues, v->queue)) ||
        (f->n_ids && !id_matches(f, v)))
        return 0;
    if (!f->by_nodes)
        return 1;
    for (size_t i = 0; v->cluster && i < v->n_nodes; i++)
        if (api_nodelist_has(&f->nodes, v->cluster, v->nodes[i]))
            return 1;
    return 0;
}
