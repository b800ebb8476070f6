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

void job_destroy(struct job *j)
{
    if (!j)
        return;
    free(j->name);
    free(j->plan.planned_cluster);
    free(j->owner);
    free(j->account);
    strv_fini(&j->cluster_accounts);
    free(j->source);
    free(j->submitted_by);
    free(j->grid_issuer);
    free(j->grid_subject);
    free(j->vo);
    strv_fini(&j->req.features);
    free(j->req.cluster);
    free(j->req.queue);
    strv_fini(&j->command);
    free(j->script);
    strv_fini(&j->env);
    free(j->workdir);
    free(j->output);
    free(j->error);
    free(j->directives);
    free(j->cluster);
    free(j->native_id);
    strv_fini(&j->nodes);
    free(j->reason);
    free(j->stdout_path);
    free(j->stderr_path);
    free(j->idem_key);
    free(j);
}

static const struct jx_field body_fields[] = {
    {"name", JX_STRING | JX_NULLABLE, 0},
    {"request", JX_OBJECT, 0},
    {"command", JX_ARRAY | JX_NULLABLE, 0},
    {"script", JX_STRING | JX_NULLABLE, 0},
    {"env", JX_OBJECT, 0},
    {"workdir", JX_STRING | JX_NULLABLE, 0},
    {"output", JX_STRING | JX_NULLABLE, 0},
    {"error", JX_STRING | JX_NULLABLE, 0},
    {"priority", JX_INT, 0},
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

static int request_in(struct job *j, json_t *r, struct loom_error *err)
{
    long long v;
    json_t *f;

    if (r && jx_check(r, "request", request_fields, err) < 0)
        return -1;
    if (jx_int_range(r, "request", "nodes", 1, 1, LOOM_JOB_NODES_MAX, &v,
                     err) < 0)
        return -1;
    j->req.nodes = (int)v;
    if (jx_int_range(r, "request", "cpus_per_node", 1, 1, LOOM_JOB_CPUS_MAX,
                     &v, err) < 0)
        return -1;
    j->req.cpus_per_node = (int)v;
    if (jx_int_range(r, "request", "memory_mb", LOOM_JOB_MEMORY_MB_DEFAULT,
                     LOOM_JOB_MEMORY_MB_MIN, LOOM_JOB_MEMORY_MB_MAX, &v,
                     err) < 0)
        return -1;
    j->req.memory_mb = (long)v;
    if (jx_int_range(r, "request", "gpus", 0, 0, LOOM_JOB_GPUS_MAX, &v,
                     err) < 0)
        return -1;
    j->req.gpus = (int)v;
    if (jx_int_range(r, "request", "walltime_s", LOOM_JOB_WALLTIME_DEFAULT_S,
                     1, LOOM_JOB_WALLTIME_MAX_S, &v, err) < 0)
        return -1;
    j->req.walltime_s = (long)v;
    f = json_object_get(r, "features");
    if (f && job_strings_in(f, "request.features", LOOM_JOB_FEATURES_MAX,
                            &j->req.features, err) < 0)
        return -1;
    if (job_set_str(&j->req.cluster, jx_str(r, "cluster", NULL)) < 0 ||
        job_set_str(&j->req.queue, jx_str(r, "queue", NULL)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (jx_str(r, "reservation", NULL) &&
        domain_id_parse(jx_str(r, "reservation", ""),
                        &j->req.reservation) < 0)
        return loom_error_field(err, LOOM_EINVAL, "request.reservation",
                                "'%.100s' is not a reservation id (a number "
                                "from 1, without leading zeros)",
                                jx_str(r, "reservation", ""));
    return 0;
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

static int env_in(struct job *j, json_t *env, struct loom_error *err)
{
    const char *k;
    json_t *v;
    char fp[96];

    if (json_object_size(env) > LOOM_JOB_ENV_MAX)
        return loom_error_field(err, LOOM_EINVAL, "env", "field 'env' has "
                                "more than %d variables", LOOM_JOB_ENV_MAX);
    /* jansson iterates in insertion order; sort for a stable record. */
    json_object_foreach(env, k, v) {
        size_t n;
        char *kv;
        snprintf(fp, sizeof(fp), "env.%s", k);
        if (!env_name_ok(k))
            return loom_error_field(err, LOOM_EINVAL, fp, "'%s' is not a valid "
                                    "environment variable name", k);
        if (!json_is_string(v))
            return loom_error_field(err, LOOM_EINVAL, fp, "field '%s' must be "
                                    "a string", fp);
        n = strlen(k) + json_string_length(v) + 2;
        kv = malloc(n);
        if (!kv)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        snprintf(kv, n, "%s=%s", k, json_string_value(v));
        if (strv_push(&j->env, kv) < 0) {
            free(kv);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
        free(kv);
    }
    return 0;
}

/* workdir, output and error: paths the job's account will use. */
static int paths_in(struct job *j, json_t *body, struct loom_error *err)
{
    static const char *const keys[] = {"workdir", "output", "error"};
    char **fields[] = {&j->workdir, &j->output, &j->error};

    for (int i = 0; i < 3; i++) {
        const char *v = jx_str(body, keys[i], NULL);
        if (!v)
            continue;
        if (outpath_check(v, keys[i], i == 0, err) < 0)
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
        env_in(j, json_object_get(body, "env"), err) < 0)
        return -1;
    if (j->env.n)
        qsort(j->env.v, j->env.n, sizeof(char *), cmp_str);
    if (paths_in(j, body, err) < 0)
        return -1;
    if (jx_int_range(body, "", "priority", 0, -LOOM_JOB_PRIORITY_MAX,
                     LOOM_JOB_PRIORITY_MAX, &prio, err) < 0)
        return -1;
    j->priority = (int)prio;
    if (strlen(jx_str(body, "name", "")) > LOOM_JOB_NAME_MAX)
        return loom_error_field(err, LOOM_EINVAL, "name", "field 'name' is "
                                "longer than %d characters",
                                LOOM_JOB_NAME_MAX);
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
