/* job.c - job validation, states and JSON. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/job.h"

#include <ctype.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "core/outpath.h"
#include "core/timeutil.h"
#include "scheduler/plan.h"

/* The states' names are the API's, kept in core/domain.c. */
_Static_assert(JOB_CANCELLED + 1 == DOMAIN_JOB_STATES_N,
               "enum job_state and domain_job_states differ");

const char *job_state_name(enum job_state s)
{
    return domain_job_states.names[s];
}

int job_state_parse(const char *name, enum job_state *out)
{
    int i = domain_find(&domain_job_states, name);

    if (i < 0)
        return -1;
    *out = (enum job_state)i;
    return 0;
}

int job_state_final(enum job_state s)
{
    return s == JOB_COMPLETED || s == JOB_FAILED || s == JOB_CANCELLED;
}

int job_state_active(enum job_state s)
{
    return s == JOB_STARTING || s == JOB_RUNNING || s == JOB_SUSPENDED;
}

int job_ready(const struct job *j)
{
    return j->state == JOB_PENDING && !j->dep_wait && !j->start_wait &&
           (!j->array || (j->array->tasks_state == JOB_PENDING &&
                          j->array->n_split < j->array->spec.tasks));
}

enum task_class job_task_class(const struct job *j)
{
    switch (j->state) {
    case JOB_PENDING:
    case JOB_HELD:
        return TC_WAITING;
    case JOB_STARTING:
    case JOB_RUNNING:
    case JOB_SUSPENDED:
        return TC_ACTIVE;
    case JOB_COMPLETED:
        return TC_COMPLETED;
    case JOB_FAILED:
        return TC_FAILED;
    default:
        return TC_CANCELLED;
    }
}

const char *job_id_text(const struct job *j, char buf[48])
{
    if (j->array_id)
        snprintf(buf, 48, "%lld_%ld", (long long)j->array_id, j->array_task);
    else
        snprintf(buf, 48, "%lld", (long long)j->id);
    return buf;
}

void job_array_destroy(struct job_array *a)
{
    if (!a)
        return;
    array_spec_fini(&a->spec);
    free(a->ooo);
    free(a->rec);
    free(a);
}

int job_holds_nodes(const struct job *j)
{
    return j->cluster && j->nodes.n &&
           (job_state_active(j->state) ||
            (j->state == JOB_HELD && j->native_id));
}

int job_set_str(char **field, const char *value)
{
    char *copy = value ? strdup(value) : NULL;

    if (value && !copy)
        return -1;
    free(*field);
    *field = copy;
    return 0;
}

const char *job_account_on(const struct job *j, const char *cluster)
{
    return plan_account_on((const char *const *)j->cluster_accounts.v,
                           j->cluster_accounts.n, j->account, cluster);
}

const char *job_gateway(const struct job *j)
{
    return j->source && !strcmp(j->source, "grid") ? j->submitted_by : NULL;
}

void job_plan_drop(struct job *j)
{
    if (!j->plan)
        return;
    free(j->plan->planned_cluster);
    free(j->plan);
    j->plan = NULL;
}

void job_destroy(struct job *j)
{
    if (!j)
        return;
    free(j->name);
    job_plan_drop(j);
    free(j->owner);
    free(j->account);
    strv_fini(&j->cluster_accounts);
    free(j->source);
    free(j->submitted_by);
    free(j->grid_issuer);
    free(j->grid_subject);
    free(j->vo);
    job_request_fini(&j->req);
    job_array_destroy(j->array);
    dep_list_fini(&j->deps);
    strv_fini(&j->command);
    free(j->script);
    strv_fini(&j->env);
    free(j->workdir);
    free(j->submit_dir);
    free(j->output);
    free(j->error);
    free(j->comment);
    free(j->directives);
    free(j->cluster);
    free(j->native_id);
    strv_fini(&j->nodes);
    free(j->reason);
    free(j->stdout_path);
    free(j->stderr_path);
    free(j->idem_key);
    free(j->idem_hash);
    free(j);
}

static const struct jx_field body_fields[] = {
    {"name", JX_STRING | JX_NULLABLE, 0},
    {"comment", JX_STRING | JX_NULLABLE, 0},
    {"request", JX_OBJECT, 0},
    {"command", JX_ARRAY | JX_NULLABLE, 0},
    {"script", JX_STRING | JX_NULLABLE, 0},
    {"env", JX_OBJECT, 0},
    {"workdir", JX_STRING | JX_NULLABLE, 0},
    {"submit_dir", JX_STRING | JX_NULLABLE, 0},
    {"submit_env", JX_OBJECT, 0},
    {"output", JX_STRING | JX_NULLABLE, 0},
    {"error", JX_STRING | JX_NULLABLE, 0},
    {"priority", JX_INT, 0},
    {"array", JX_STRING | JX_NULLABLE, 0},
    {"dependency", JX_STRING | JX_NULLABLE, 0},
    {"hold", JX_BOOL, 0},
    {"requeue", JX_BOOL, 0},
    {NULL, 0, 0},
};

static const struct jx_field request_fields[] = {
    {"nodes", JX_INT, 0},
    {"cpus_per_node", JX_INT, 0},
    {"memory_mb", JX_INT, 0},
    {"gpus", JX_INT, 0},
    {"walltime_s", JX_INT, 0},
    {"features", JX_ARRAY, 0},
    {"cluster", JX_STRING | JX_NULLABLE, 0},
    {"queue", JX_STRING | JX_NULLABLE, 0},
    {"reservation", JX_STRING | JX_NULLABLE, 0},
    {NULL, 0, 0},
};

/* An array of non-empty strings into s; each element checked. */
int job_strings_in(json_t *arr, const char *path, size_t max_n,
                   struct strv *s, struct loom_error *err)
{
    size_t i;
    json_t *v;
    char fp[96];

    if (json_array_size(arr) > max_n)
        return loom_error_field(err, LOOM_EINVAL, path, "field '%s' has more "
                                "than %zu elements", path, max_n);
    json_array_foreach(arr, i, v) {
        snprintf(fp, sizeof(fp), "%s[%zu]", path, i);
        if (!json_is_string(v) || !json_string_length(v))
            return loom_error_field(err, LOOM_EINVAL, fp, "field '%s' must "
                                    "be a non-empty string", fp);
        if (strv_push(s, json_string_value(v)) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

/* A number of the request: its value in r, else *v as it is. */
static int request_num(json_t *r, const char *key, long long min,
                       long long max, long long *v, struct loom_error *err)
{
    return jx_int_range(r, "request", key, *v, min, max, v, err);
}

int job_request_in(json_t *r, struct job_request *req, struct loom_error *err)
{
    long long nodes = req->nodes, cpus = req->cpus_per_node,
              mem = req->memory_mb, gpus = req->gpus,
              wall = req->walltime_s;
    struct strv features = {0};
    int64_t resv = req->reservation;
    json_t *f;

    if (r && jx_check(r, "request", request_fields, err) < 0)
        return -1;
    if (request_num(r, "nodes", 1, LOOM_JOB_NODES_MAX, &nodes, err) < 0 ||
        request_num(r, "cpus_per_node", 1, LOOM_JOB_CPUS_MAX, &cpus,
                    err) < 0 ||
        request_num(r, "memory_mb", LOOM_JOB_MEMORY_MB_MIN,
                    LOOM_JOB_MEMORY_MB_MAX, &mem, err) < 0 ||
        request_num(r, "gpus", 0, LOOM_JOB_GPUS_MAX, &gpus, err) < 0 ||
        request_num(r, "walltime_s", 1, LOOM_JOB_WALLTIME_MAX_S, &wall,
                    err) < 0)
        return -1;
    f = json_object_get(r, "reservation");
    if (f && json_is_null(f)) {
        resv = 0;
    } else if (f && domain_id_parse(json_string_value(f), &resv) < 0) {
        return loom_error_field(err, LOOM_EINVAL, "request.reservation",
                                "'%.100s' is not a reservation id (a number "
                                "from 1, without leading zeros)",
                                json_string_value(f));
    }
    f = json_object_get(r, "features");
    if (f && job_strings_in(f, "request.features", LOOM_JOB_FEATURES_MAX,
                            &features, err) < 0) {
        strv_fini(&features);
        return -1;
    }
    if ((json_object_get(r, "cluster") &&
         job_set_str(&req->cluster, jx_str(r, "cluster", NULL)) < 0) ||
        (json_object_get(r, "queue") &&
         job_set_str(&req->queue, jx_str(r, "queue", NULL)) < 0)) {
        strv_fini(&features);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    if (f) {
        strv_fini(&req->features);
        req->features = features;
    }
    req->nodes = (int)nodes;
    req->cpus_per_node = (int)cpus;
    req->memory_mb = (long)mem;
    req->gpus = (int)gpus;
    req->walltime_s = (long)wall;
    req->reservation = resv;
    return 0;
}

void job_request_fini(struct job_request *req)
{
    strv_fini(&req->features);
    free(req->cluster);
    free(req->queue);
    memset(req, 0, sizeof(*req));
}

int job_request_copy(struct job_request *dst, const struct job_request *src)
{
    *dst = *src;
    memset(&dst->features, 0, sizeof(dst->features));
    dst->cluster = dst->queue = NULL;
    for (size_t i = 0; i < src->features.n; i++)
        if (strv_push(&dst->features, src->features.v[i]) < 0)
            goto oom;
    if (job_set_str(&dst->cluster, src->cluster) < 0 ||
        job_set_str(&dst->queue, src->queue) < 0)
        goto oom;
    return 0;
oom:
    job_request_fini(dst);
    return -1;
}

static int request_in(struct job *j, json_t *r, struct loom_error *err)
{
    j->req = (struct job_request){.nodes = 1, .cpus_per_node = 1,
                                  .memory_mb = LOOM_JOB_MEMORY_MB_DEFAULT,
                                  .walltime_s = LOOM_JOB_WALLTIME_DEFAULT_S};
    return job_request_in(r, &j->req, err);
}

static int env_name_ok(const char *k)
{
    if (!*k || isdigit((unsigned char)*k))
        return 0;
    for (; *k; k++)
        if (!isalnum((unsigned char)*k) && *k != '_')
            return 0;
    return 1;
}

/* env or submit_env (field): variables and their text; each "NAME=value"
 * into s when s is not NULL. */
static int env_in(struct strv *s, const char *field, json_t *env,
                  struct loom_error *err)
{
    const char *k;
    json_t *v;
    char fp[96];

    if (json_object_size(env) > LOOM_JOB_ENV_MAX)
        return loom_error_field(err, LOOM_EINVAL, field, "field '%s' has "
                                "more than %d variables", field,
                                LOOM_JOB_ENV_MAX);
    /* jansson iterates in insertion order; sort for a stable record. */
    json_object_foreach(env, k, v) {
        snprintf(fp, sizeof(fp), "%s.%.64s", field, k);
        if (!env_name_ok(k))
            return loom_error_field(err, LOOM_EINVAL, fp, "'%.64s' is not a "
                                    "valid environment variable name", k);
        if (!json_is_string(v))
            return loom_error_field(err, LOOM_EINVAL, fp, "field '%s' must be "
                                    "a string", fp);
        if (!s)
            continue;
        if (strv_push_kv(s, k, json_string_value(v)) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

/* submit_dir, workdir, output and error: paths the job's account will
 * use. */
static int paths_in(struct job *j, json_t *body, struct loom_error *err)
{
    static const char *const keys[] = {"submit_dir", "workdir", "output",
                                       "error"};
    char **fields[] = {&j->submit_dir, &j->workdir, &j->output, &j->error};

    for (int i = 0; i < 4; i++) {
        const char *v = jx_str(body, keys[i], NULL);
        if (!v)
            continue;
        if (outpath_check(v, keys[i], i < 2, err) < 0)
            return -1;
        if (job_set_str(fields[i], v) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int job_field_error(struct loom_error *err, const char *field)
{
    if (err->kind == LOOM_EINVAL)
        snprintf(err->field, sizeof(err->field), "%s", field);
    return loom_error_prefix(err, "field '%s'", field);
}

/* "array": its tasks. */
static int job_array_in(struct job *j, const char *text,
                        struct loom_error *err)
{
    if (!(j->array = calloc(1, sizeof(*j->array))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    j->array->tasks_state = JOB_PENDING;
    if (array_spec_parse(text, &j->array->spec, err) < 0)
        return job_field_error(err, "array");
    return 0;
}

static int body_in(struct job *j, json_t *body, struct loom_error *err)
{
    json_t *cmd = json_object_get(body, "command");
    const char *script = jx_str(body, "script", NULL);
    long long prio;

    if (jx_check(body, "", body_fields, err) < 0)
        return -1;
    if ((cmd && !json_is_null(cmd)) == (script != NULL))
        return loom_error_field(err, LOOM_EINVAL, "command", "give exactly "
                                "one of 'command' (an array) and 'script'");
    if (cmd && !json_is_null(cmd)) {
        if (!json_array_size(cmd))
            return loom_error_field(err, LOOM_EINVAL, "command", "field "
                                    "'command' must not be empty");
        if (job_strings_in(cmd, "command", LOOM_JOB_ARGS_MAX, &j->command,
                           err) < 0)
            return -1;
    }
    if (script && job_set_str(&j->script, script) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (json_object_get(body, "env") &&
        env_in(&j->env, "env", json_object_get(body, "env"), err) < 0)
        return -1;
    /* the submitter's environment: for the directives only (see
     * core/directives.h), not kept */
    if (json_object_get(body, "submit_env") &&
        env_in(NULL, "submit_env", json_object_get(body, "submit_env"),
               err) < 0)
        return -1;
    if (j->env.n)
        qsort(j->env.v, j->env.n, sizeof(char *), cmp_str);
    if (paths_in(j, body, err) < 0)
        return -1;
    if (jx_int_range(body, "", "priority", 0, -LOOM_JOB_PRIORITY_MAX,
                     LOOM_JOB_PRIORITY_MAX, &prio, err) < 0)
        return -1;
    j->priority = (int)prio;
    j->no_requeue = json_is_false(json_object_get(body, "requeue"));
    if (jx_str(body, "array", NULL) &&
        job_array_in(j, jx_str(body, "array", NULL), err) < 0)
        return -1;
    if (jx_str(body, "dependency", NULL) &&
        dep_parse(jx_str(body, "dependency", NULL), &j->deps, err) < 0)
        return job_field_error(err, "dependency");
    if (strlen(jx_str(body, "name", "")) > LOOM_JOB_NAME_MAX)
        return loom_error_field(err, LOOM_EINVAL, "name", "field 'name' is "
                                "longer than %d characters",
                                LOOM_JOB_NAME_MAX);
    if (strlen(jx_str(body, "comment", "")) > LOOM_JOB_COMMENT_MAX)
        return loom_error_field(err, LOOM_EINVAL, "comment", "field "
                                "'comment' is longer than %d bytes",
                                LOOM_JOB_COMMENT_MAX);
    if (job_set_str(&j->comment, jx_str(body, "comment", NULL)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return request_in(j, json_object_get(body, "request"), err);
}

struct job *job_from_request(json_t *body, const char *owner,
                             const char *account, const char *source,
                             struct loom_error *err)
{
    struct job *j = calloc(1, sizeof(*j));

    if (!j) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    j->state = JOB_PENDING;
    if (body_in(j, body, err) < 0)
        goto error;
    for (size_t i = 0; j->array && i < j->deps.n; i++)
        if (j->deps.v[i].type == DEP_SINGLETON) {
            loom_error_field(err, LOOM_EINVAL, "dependency", "singleton is "
                             "not for arrays: their tasks share one name");
            goto error;
        }
    if (json_is_true(json_object_get(body, "hold"))) {
        char why[300];
        snprintf(why, sizeof(why), "held by %.256s at submit", owner);
        j->state = JOB_HELD;
        if (j->array)
            j->array->tasks_state = JOB_HELD;
        if (job_set_str(&j->reason, why) < 0) {
            loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            goto error;
        }
    }
    if (job_set_str(&j->name, jx_str(body, "name", "job")) < 0 ||
        job_set_str(&j->owner, owner) < 0 ||
        job_set_str(&j->submitted_by, owner) < 0 ||
        job_set_str(&j->account, account) < 0 ||
        job_set_str(&j->source, source) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    return j;
error:
    job_destroy(j);
    return NULL;
}
