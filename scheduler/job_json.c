/* job_json.c - a job to and from the JSON the API shows and the store keeps. */
/* SPDX-License-Identifier: MIT */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/jsonx.h"
#include "scheduler/job.h"


static void env_out(struct jw *w, const struct strv *env)
{
    jw_key(w, "env");
    jw_open(w, '{');
    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        if (!eq)
            continue;
        jw_key_n(w, env->v[i], (size_t)(eq - env->v[i]));
        jw_str(w, eq + 1);
    }
    jw_close(w, '}');
}

/* {"CLUSTER": "ACCOUNT"} of the entries "CLUSTER=ACCOUNT". */
static void cluster_accounts_out(struct jw *w, const struct strv *ca)
{
    jw_key(w, "cluster_accounts");
    jw_open(w, '{');
    for (size_t i = 0; i < ca->n; i++) {
        const char *eq = strchr(ca->v[i], '=');
        char name[128];
        size_t n = eq ? (size_t)(eq - ca->v[i]) : 0;
        if (!eq || n >= sizeof(name))
            continue;
        memcpy(name, ca->v[i], n);
        name[n] = '\0';
        jw_key(w, name);
        jw_str(w, eq + 1);
    }
    jw_close(w, '}');
}

/* "usage": what an ended job used, where its cluster measured it; else
 * null. */
static void usage_out(struct jw *w, const struct job *j)
{
    jw_key(w, "usage");
    if (!j->usage.known) {
        jw_null(w);
        return;
    }
    jw_open(w, '{');
    jw_kv_int(w, "user_cpu_ms", j->usage.user_cpu_ms);
    jw_kv_int(w, "system_cpu_ms", j->usage.system_cpu_ms);
    jw_kv_int(w, "max_rss_kb", j->usage.max_rss_kb);
    jw_close(w, '}');
}

static void usage_in(struct job *j, const json_t *u)
{
    json_int_t user, sys, rss;

    if (json_unpack((json_t *)u, "{s:I, s:I, s:I}", "user_cpu_ms", &user,
                    "system_cpu_ms", &sys, "max_rss_kb", &rss) < 0)
        return;
    j->usage.known = 1;
    j->usage.user_cpu_ms = user;
    j->usage.system_cpu_ms = sys;
    j->usage.max_rss_kb = rss;
}

/* What the last cycle said: planned start and cluster, place in the queue,
 * and the priority factors. */
static const struct job_plan plan_none; /* a job without a plan shows */

static void plan_out(struct jw *w, const struct job_plan *p)
{
    jw_kv_time(w, "planned_start", p->planned_start);
    jw_kv_str(w, "planned_cluster", p->planned_cluster);
    jw_key(w, "queue_position");
    if (p->position)
        jw_int(w, p->position);
    else
        jw_null(w);
    jw_key(w, "priority_factors");
    if (!p->has_factors) {
        jw_null(w);
        return;
    }
    jw_open(w, '{');
    jw_kv_double(w, "age", p->age);
    jw_kv_double(w, "fairshare", p->fairshare);
    jw_kv_double(w, "size", p->size);
    jw_kv_double(w, "priority", p->priority);
    jw_kv_double(w, "total", p->total);
    jw_close(w, '}');
}

/* An array's tasks, or a task's array; what a job waits for. */
static void array_out(struct jw *w, const struct job *j)
{
    const struct job_array *a = j->array;
    char *text = a ? array_spec_text(&a->spec) : NULL;
    char *rest = a ? array_spec_format(&a->spec, a->next, a->ooo, a->n_ooo)
                   : NULL;
    char id[24];
    long unsplit = a ? a->spec.tasks - a->n_split : 0;
    int gone = a && a->tasks_state == JOB_CANCELLED;

    jw_kv_str(w, "array", text);
    snprintf(id, sizeof(id), "%lld", (long long)(a ? j->id : j->array_id));
    jw_kv_str(w, "array_job_id", a || j->array_id ? id : NULL);
    jw_key(w, "array_task_id");
    if (j->array_id)
        jw_int(w, j->array_task);
    else
        jw_null(w);
    jw_kv_str(w, "array_tasks", rest);
    jw_kv_str(w, "array_tasks_state",
              a ? job_state_name(a->tasks_state) : NULL);
    jw_key(w, "array_counts");
    if (a) {
        jw_open(w, '{');
        jw_kv_int(w, "tasks", a->spec.tasks);
        jw_kv_int(w, "pending", a->count[TC_WAITING] + (gone ? 0 : unsplit));
        jw_kv_int(w, "running", a->count[TC_ACTIVE]);
        jw_kv_int(w, "completed", a->count[TC_COMPLETED]);
        jw_kv_int(w, "failed", a->count[TC_FAILED]);
        jw_kv_int(w, "cancelled",
                  a->count[TC_CANCELLED] + (gone ? unsplit : 0));
        jw_close(w, '}');
    } else {
        jw_null(w);
    }
    if (a && (!text || !rest))
        w->oom = 1;
    free(text);
    free(rest);
}

static void deps_out(struct jw *w, const struct job *j)
{
    char *text = j->deps.n ? dep_format(&j->deps) : NULL;

    if (j->deps.n && !text)
        w->oom = 1;
    jw_kv_str(w, "dependency", text);
    free(text);
}

/* The job as the API shows it and the store keeps it, written straight to
 * text: it is rendered on every change, so it skips the jansson tree. */
char *job_render(const struct job *j, size_t priv[2])
{
    struct jw w;
    char id[48];

    job_id_text(j, id);
    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "id", id);
    jw_kv_str(&w, "name", j->name);
    jw_kv_str(&w, "comment", j->comment);
    jw_kv_str(&w, "owner", j->owner);
    jw_kv_str(&w, "account", j->account);
    cluster_accounts_out(&w, &j->cluster_accounts);
    jw_kv_str(&w, "source", j->source);
    jw_kv_str(&w, "submitted_by",
              j->submitted_by ? j->submitted_by : j->owner);
    jw_key(&w, "grid_identity");
    if (j->grid_issuer) {
        jw_open(&w, '{');
        jw_kv_str(&w, "issuer", j->grid_issuer);
        jw_kv_str(&w, "subject", j->grid_subject);
        jw_close(&w, '}');
    } else {
        jw_null(&w);
    }
    jw_kv_str(&w, "vo", j->vo);
    jw_kv_str(&w, "state", job_state_name(j->state));
    jw_key(&w, "request");
    jw_open(&w, '{');
    jw_kv_int(&w, "nodes", j->req.nodes);
    jw_kv_int(&w, "cpus_per_node", j->req.cpus_per_node);
    jw_kv_int(&w, "memory_mb", j->req.memory_mb);
    jw_kv_int(&w, "gpus", j->req.gpus);
    jw_kv_int(&w, "walltime_s", j->req.walltime_s);
    jw_kv_strs(&w, "features", j->req.features.v, j->req.features.n);
    jw_kv_str(&w, "cluster", j->req.cluster);
    jw_kv_str(&w, "queue", j->req.queue);
    jw_key(&w, "reservation");
    if (j->req.reservation) {
        char rid[24];
        snprintf(rid, sizeof(rid), "%lld", (long long)j->req.reservation);
        jw_str(&w, rid);
    } else {
        jw_null(&w);
    }
    jw_close(&w, '}');
    jw_kv_str(&w, "workdir", j->workdir);
    jw_kv_str(&w, "submit_dir", j->submit_dir);
    jw_kv_str(&w, "output", j->output);
    jw_kv_str(&w, "error", j->error);
    /* the private fields, one span: a redacted copy leaves it out */
    if (priv)
        priv[0] = w.len;
    if (j->command.n) {
        jw_kv_strs(&w, "command", j->command.v, j->command.n);
    } else {
        jw_key(&w, "command");
        jw_null(&w);
    }
    jw_kv_str(&w, "script", j->script);
    env_out(&w, &j->env);
    jw_key(&w, "directives");
    jw_raw(&w, j->directives ? j->directives : "[]");
    if (priv)
        priv[1] = w.len - priv[0];
    jw_kv_int(&w, "priority", j->priority);
    jw_kv_str(&w, "cluster", j->cluster);
    jw_kv_str(&w, "native_id", j->native_id);
    jw_kv_strs(&w, "nodes", j->nodes.v, j->nodes.n);
    jw_kv_time(&w, "submit_time", j->submit_time);
    jw_kv_time(&w, "start_time", j->start_time);
    jw_kv_time(&w, "end_time", j->end_time);
    jw_key(&w, "exit_code");
    if (j->has_exit_code)
        jw_int(&w, j->exit_code);
    else
        jw_null(&w);
    usage_out(&w, j);
    jw_kv_str(&w, "reason", j->reason);
    plan_out(&w, j->plan ? j->plan : &plan_none);
    jw_kv_str(&w, "stdout", j->stdout_path);
    jw_kv_str(&w, "stderr", j->stderr_path);
    jw_kv_int(&w, "requeues", j->requeues);
    jw_key(&w, "requeue");
    jw_bool(&w, !j->no_requeue);
    jw_key(&w, "held_for_loom");
    jw_bool(&w, j->held_for_loom);
    array_out(&w, j);
    deps_out(&w, j);
    if (j->array_id && j->id) { /* a task: the number of its record */
        char own[24];
        snprintf(own, sizeof(own), "%lld", (long long)j->id);
        jw_kv_str(&w, "loom_id", own);
    }
    jw_close(&w, '}');
    return jw_finish_fit(&w);
}

/* An array's tasks and their state, or a task's array. 0 or 1 (bad). */
static int array_in(struct job *j, json_t *doc)
{
    const char *spec = jx_str(doc, "array", NULL);
    json_t *task = json_object_get(doc, "array_task_id");
    struct loom_error err;

    if (json_is_integer(task)) {
        j->array_id = strtoll(jx_str(doc, "array_job_id", "0"), NULL, 10);
        j->array_task = (long)json_integer_value(task);
        return j->array_id <= 0;
    }
    if (!spec)
        return 0;
    if (!(j->array = calloc(1, sizeof(*j->array))) ||
        array_spec_parse(spec, &j->array->spec, &err) < 0 ||
        job_state_parse(jx_str(doc, "array_tasks_state", "pending"),
                        &j->array->tasks_state) < 0)
        return 1;
    return 0;
}

/* The stored document is what job_render wrote: read it back leniently
 * (a newer field is ignored) but completely. */
struct job *job_from_doc(json_t *doc, struct loom_error *err)
{
    struct job *j = calloc(1, sizeof(*j));
    json_t *r = json_object_get(doc, "request"), *env, *v;
    const char *k;
    int bad = 0;

    if (!j || !r) {
        free(j);
        loom_error_set(err, LOOM_EINVAL, "stored job document is incomplete");
        return NULL;
    }
    /* a task's "id" is its array's and its own ("123_7"); its record's
     * number is "loom_id" */
    j->id = strtoll(jx_str(doc, "loom_id", jx_str(doc, "id", "0")), NULL, 10);
    if (job_state_parse(jx_str(doc, "state", ""), &j->state) < 0 || j->id <= 0)
        bad = 1;
    j->req.nodes = (int)jx_int(r, "nodes", 1);
    j->req.cpus_per_node = (int)jx_int(r, "cpus_per_node", 1);
    j->req.memory_mb = (long)jx_int(r, "memory_mb", 0);
    j->req.gpus = (int)jx_int(r, "gpus", 0);
    j->req.walltime_s = (long)jx_int(r, "walltime_s", 3600);
    bad |= jx_strv(json_object_get(r, "features"), &j->req.features);
    bad |= job_set_str(&j->req.cluster, jx_str(r, "cluster", NULL));
    bad |= job_set_str(&j->req.queue, jx_str(r, "queue", NULL));
    j->req.reservation = strtoll(jx_str(r, "reservation", "0"), NULL, 10);
    j->held_for_loom = json_is_true(json_object_get(doc, "held_for_loom"));
    bad |= job_set_str(&j->name, jx_str(doc, "name", "job"));
    bad |= job_set_str(&j->comment, jx_str(doc, "comment", NULL));
    bad |= job_set_str(&j->owner, jx_str(doc, "owner", "?"));
    bad |= job_set_str(&j->account, jx_str(doc, "account", NULL));
    bad |= job_set_str(&j->source, jx_str(doc, "source", "local"));
    bad |= job_set_str(&j->submitted_by, jx_str(doc, "submitted_by",
                                                 j->owner));
    v = json_object_get(doc, "grid_identity");
    bad |= job_set_str(&j->grid_issuer, jx_str(v, "issuer", NULL));
    bad |= job_set_str(&j->grid_subject, jx_str(v, "subject", NULL));
    bad |= job_set_str(&j->vo, jx_str(doc, "vo", NULL));
    env = json_object_get(doc, "cluster_accounts");
    json_object_foreach(env, k, v)
        bad |= strv_push_kv(&j->cluster_accounts, k, jx_str(env, k, "")) < 0;
    bad |= jx_strv(json_object_get(doc, "command"), &j->command);
    bad |= job_set_str(&j->script, jx_str(doc, "script", NULL));
    v = json_object_get(doc, "directives");
    if (json_array_size(v) &&
        !(j->directives = json_dumps(v, JSON_COMPACT)))
        bad = 1;
    env = json_object_get(doc, "env");
    json_object_foreach(env, k, v)
        bad |= strv_push_kv(&j->env, k, jx_str(env, k, "")) < 0;
    bad |= job_set_str(&j->workdir, jx_str(doc, "workdir", NULL));
    bad |= job_set_str(&j->submit_dir, jx_str(doc, "submit_dir", NULL));
    bad |= job_set_str(&j->output, jx_str(doc, "output", NULL));
    bad |= job_set_str(&j->error, jx_str(doc, "error", NULL));
    j->priority = (int)jx_int(doc, "priority", 0);
    j->requeues = (int)jx_int(doc, "requeues", 0);
    j->no_requeue = json_is_false(json_object_get(doc, "requeue"));
    bad |= job_set_str(&j->cluster, jx_str(doc, "cluster", NULL));
    bad |= job_set_str(&j->native_id, jx_str(doc, "native_id", NULL));
    bad |= jx_strv(json_object_get(doc, "nodes"), &j->nodes);
    j->submit_time = jx_time(doc, "submit_time");
    j->start_time = jx_time(doc, "start_time");
    j->end_time = jx_time(doc, "end_time");
    v = json_object_get(doc, "exit_code");
    j->has_exit_code = json_is_integer(v);
    j->exit_code = (int)json_integer_value(v);
    usage_in(j, json_object_get(doc, "usage"));
    bad |= job_set_str(&j->reason, jx_str(doc, "reason", NULL));
    bad |= job_set_str(&j->stdout_path, jx_str(doc, "stdout", NULL));
    bad |= job_set_str(&j->stderr_path, jx_str(doc, "stderr", NULL));
    bad |= array_in(j, doc);
    if (jx_str(doc, "dependency", NULL)) {
        struct loom_error derr;
        bad |= dep_parse(jx_str(doc, "dependency", ""), &j->deps, &derr);
        j->dep_wait = j->deps.n > 0; /* until the scheduler looks */
    }
    if (bad) {
        job_destroy(j);
        loom_error_set(err, LOOM_EINVAL, "stored job document is invalid");
        return NULL;
    }
    return j;
}

void job_body_hash(json_t *body, char out[65])
{
    char *canon = json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS);
    unsigned char md[32];
    unsigned int n = 0;

    EVP_Digest(canon ? canon : "", canon ? strlen(canon) : 0, md, &n,
               EVP_sha256(), NULL);
    for (unsigned int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    free(canon);
}
