/* slurmrest_parse.c - slurmrestd's answers into adaptor lists. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/slurmrest.h"
#include "core/hostlist.h"

/* "what[i].field: why" as a temporary failure (Slurm said something
 * Loom cannot read: the cluster is degraded, not the job failed). */
static int bad(struct loom_error *err, const char *what, size_t i,
               const char *field, const char *why)
{
    return loom_error_set(err, LOOM_ETEMP, "slurmrestd's answer: "
                          "%s[%zu].%s: %s", what, i, field, why);
}

/* The array doc.key, or NULL with err. */
static json_t *list_of(json_t *doc, const char *key, struct loom_error *err)
{
    json_t *a = json_is_object(doc) ? json_object_get(doc, key) : NULL;

    if (!json_is_array(a))
        loom_error_set(err, LOOM_ETEMP, "slurmrestd's answer: %s: %s", key,
                       a ? "not a list" : "missing");
    return json_is_array(a) ? a : NULL;
}

/* A string member v: required ones must be strings; optional ones may be
 * absent (NULL) or null (then def). */
static int str_v(json_t *v, int required, const char *def, const char **out)
{
    *out = def;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return 0;
    }
    return (!v || json_is_null(v)) && !required ? 0 : -1;
}

/* An integer member v: absent or null is def (Slurm says null for
 * unset). */
static int int_v(json_t *v, long long def, long long *out)
{
    *out = def;
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return 0;
    }
    return !v || json_is_null(v) ? 0 : -1;
}

/* The same for the member key of the object o. */
static int str_of(json_t *o, const char *key, int required, const char *def,
                  const char **out)
{
    return str_v(json_object_get(o, key), required, def, out);
}

static int int_of(json_t *o, const char *key, long long def, long long *out)
{
    return int_v(json_object_get(o, key), def, out);
}

/* Is word one of the items of the comma list? */
static int in_list(const char *list, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && !strncmp(p, word, n))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* ---- nodes -------------------------------------------------------------- */

/* The state Loom shows, from Slurm's base state and flags (the same
 * mapping as the slurm pack's lib/nodes.awk). */
static const char *node_state(const char *base, json_t *flags, int alloc)
{
    int drain = 0, maint = 0, noresp = 0, completing = 0;
    size_t i;
    json_t *f;

    json_array_foreach(flags, i, f) {
        const char *s = json_string_value(f);
        if (!s)
            continue;
        drain |= !strcmp(s, "DRAIN") || !strcmp(s, "FAIL");
        maint |= !strcmp(s, "MAINTENANCE");
        noresp |= !strcmp(s, "NOT_RESPONDING");
        completing |= !strcmp(s, "COMPLETING");
    }
    if (!strcmp(base, "down") || !strcmp(base, "future") ||
        !strcmp(base, "error"))
        return "down";
    if (drain)
        return alloc > 0 || !strcmp(base, "allocated") ||
                       !strcmp(base, "mixed") || completing
                   ? "draining" : "drained";
    if (maint)
        return "maint";
    if (noresp)
        return "unknown";
    if (!strcmp(base, "idle") || !strcmp(base, "mixed") ||
        !strcmp(base, "allocated") || !strcmp(base, "unknown"))
        return base;
    return !strcmp(base, "completing") ? "allocated" : "unknown";
}

/* GPUs in a gres string: "gpu:2", "gpu:a100:2,mps:100", "gpu:1(IDX:0)". */
static int gpus_of(const char *g)
{
    int total = 0;

    for (const char *p = g; p && *p;) {
        const char *e = strchr(p, ','), *paren;
        size_t k = e ? (size_t)(e - p) : strlen(p);
        char item[256], *colon;
        snprintf(item, sizeof(item), "%.*s", (int)k, p);
        if ((paren = strchr(item, '(')))
            item[paren - item] = '\0';
        if (!strncmp(item, "gpu", 3) && (item[3] == ':' || !item[3])) {
            char *end;
            long n;
            colon = strrchr(item, ':');
            n = colon ? strtol(colon + 1, &end, 10) : 1;
            total += colon && colon[1] && !*end && n >= 0 && n < 100000
                         ? (int)n : 1;
        }
        p = e ? e + 1 : NULL;
    }
    return total;
}

static int has_flag(json_t *flags, const char *flag)
{
    size_t i;
    json_t *f;

    json_array_foreach(flags, i, f)
        if (json_is_string(f) && !strcmp(json_string_value(f), flag))
            return 1;
    return 0;
}

static int strv_split(struct strv *out, const char *list)
{
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        char buf[256];
        snprintf(buf, sizeof(buf), "%.*s", (int)(e ? e - p : (long)strlen(p)),
                 p);
        if (*buf && strv_push(out, buf) < 0)
            return -1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int node_one(json_t *o, size_t i, const char *only,
                    struct cl_node_list *out, struct loom_error *err)
{
    const char *name, *state, *reason, *gres, *features;
    json_t *flags = json_object_get(o, "state_flags");
    json_t *parts = json_object_get(o, "partitions"), *v;
    long long cpus, alloc, mem, amem;
    struct cl_node *n;
    size_t k;
    int mine = !only;

    if (!json_is_object(o))
        return bad(err, "nodes", i, "", "not an object");
    if (str_of(o, "name", 1, NULL, &name) < 0)
        return bad(err, "nodes", i, "name", "missing or not a string");
    if (str_of(o, "state", 1, NULL, &state) < 0)
        return bad(err, "nodes", i, "state", "missing or not a string");
    if (int_of(o, "cpus", -1, &cpus) < 0 || cpus < 0)
        return bad(err, "nodes", i, "cpus", "missing or not a number");
    if (int_of(o, "alloc_cpus", 0, &alloc) < 0)
        return bad(err, "nodes", i, "alloc_cpus", "not a number");
    if (int_of(o, "real_memory", 0, &mem) < 0)
        return bad(err, "nodes", i, "real_memory", "not a number");
    if (int_of(o, "alloc_memory", 0, &amem) < 0)
        return bad(err, "nodes", i, "alloc_memory", "not a number");
    if (str_of(o, "reason", 0, "", &reason) < 0 ||
        str_of(o, "gres", 0, "", &gres) < 0 ||
        str_of(o, "features", 0, "", &features) < 0)
        return bad(err, "nodes", i, "reason, gres or features",
                   "not a string");
    if ((flags && !json_is_array(flags)) || (parts && !json_is_array(parts)))
        return bad(err, "nodes", i, flags && !json_is_array(flags)
                                        ? "state_flags" : "partitions",
                   "not a list");
    json_array_foreach(parts, k, v)
        mine |= json_is_string(v) && in_list(only, json_string_value(v));
    if (!mine)
        return 0;
    if (!(n = cl_node_list_add(out)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    n->name = strdup(name);
    n->state = strdup(node_state(state, flags, (int)alloc));
    n->cpus = (int)cpus;
    n->cpus_alloc = (int)alloc;
    n->memory_mb = (long)mem;
    n->memory_alloc_mb = (long)amem;
    n->gpus = gpus_of(gres);
    if (*reason)
        n->reason = strdup(reason);
    else if (has_flag(flags, "NOT_RESPONDING"))
        n->reason = strdup("not responding");
    if (strv_split(&n->features, features) < 0 || !n->name || !n->state)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    json_array_foreach(parts, k, v)
        if (json_is_string(v) && strv_push(&n->queues, json_string_value(v)))
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

int srest_parse_nodes(json_t *doc, const char *only, struct cl_node_list *out,
                      struct loom_error *err)
{
    json_t *a = list_of(doc, "nodes", err), *o;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o)
        if (node_one(o, i, only, out, err) < 0) {
            cl_node_list_fini(out);
            return -1;
        }
    return 0;
}

/* ---- jobs --------------------------------------------------------------- */

/* Slurm's job_state (base state names) as an API state; reason tells a
 * held job from a pending one. */
static const char *job_state(const char *st, const char *reason, int nodes)
{
    static const char *const map[][2] = {
        {"PENDING", "pending"}, {"RUNNING", "running"},
        {"COMPLETING", "running"}, {"CONFIGURING", "running"},
        {"RESIZING", "running"}, {"SIGNALING", "running"},
        {"STAGE_OUT", "running"}, {"SUSPENDED", "suspended"},
        {"STOPPED", "suspended"}, {"COMPLETED", "completed"},
        {"FAILED", "failed"}, {"TIMEOUT", "failed"}, {"NODE_FAIL", "failed"},
        {"OUT_OF_MEMORY", "failed"}, {"BOOT_FAIL", "failed"},
        {"DEADLINE", "failed"}, {"PREEMPTED", "failed"},
        {"CANCELLED", "cancelled"}, {"REVOKED", "cancelled"},
        {"REQUEUED", "pending"}, {"REQUEUE_FED", "pending"},
        {"REQUEUE_HOLD", "held"}, {"RESV_DEL_HOLD", "held"},
        {"SPECIAL_EXIT", "held"},
    };
    const char *s = NULL;

    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]) && !s; i++)
        if (!strcmp(map[i][0], st))
            s = map[i][1];
    if (!s)
        s = nodes ? "running" : "pending";
    if (!strcmp(s, "pending") && !strncmp(reason, "JobHeld", 7))
        s = "held";
    return s;
}

static int finished(const char *s)
{
    return !strcmp(s, "completed") || !strcmp(s, "failed") ||
           !strcmp(s, "cancelled");
}

static int dup_or_null(char **dst, const char *s)
{
    *dst = s && *s ? strdup(s) : NULL;
    return s && *s && !*dst ? -1 : 0;
}

/* What a job its user holds asked for (the scheduler plans it). */
static void job_request(json_t *const f[], struct cl_job *j)
{
    long long v, cpn, mem;

    int_v(f[SREST_F_NODE_COUNT], 0, &v);
    j->req.nodes = v > 0 && v < HOSTLIST_MAX ? (int)v : 0;
    int_v(f[SREST_F_CPUS_PER_NODE], 0, &cpn);
    j->req.cpus_per_node = cpn > 0 && cpn < 1000000 ? (int)cpn : 0;
    if (int_v(f[SREST_F_MEMORY_PER_NODE], 0, &mem) == 0 && mem > 0)
        j->req.memory_mb = (long)mem;
    else if (int_v(f[SREST_F_MEMORY_PER_CPU], 0, &mem) == 0 && mem > 0)
        j->req.memory_mb = (long)(mem * (cpn > 0 ? cpn : 1));
    if (int_v(f[SREST_F_TIME_LIMIT], 0, &v) == 0 && v > 0)
        j->req.walltime_s = (long)v * 60;
}

const char *const srest_job_fields[SREST_N_JOB_FIELDS] = {
    [SREST_F_JOB_ID] = "job_id",
    [SREST_F_JOB_STATE] = "job_state",
    [SREST_F_STATE_REASON] = "state_reason",
    [SREST_F_NAME] = "name",
    [SREST_F_USER_NAME] = "user_name",
    [SREST_F_NODES] = "nodes",
    [SREST_F_COMMENT] = "comment",
    [SREST_F_STDOUT] = "standard_output",
    [SREST_F_STDERR] = "standard_error",
    [SREST_F_SUBMIT_TIME] = "submit_time",
    [SREST_F_START_TIME] = "start_time",
    [SREST_F_END_TIME] = "end_time",
    [SREST_F_EXIT_CODE] = "exit_code",
    [SREST_F_NODE_COUNT] = "node_count",
    [SREST_F_CPUS_PER_NODE] = "minimum_cpus_per_node",
    [SREST_F_MEMORY_PER_NODE] = "memory_per_node",
    [SREST_F_MEMORY_PER_CPU] = "memory_per_cpu",
    [SREST_F_TIME_LIMIT] = "time_limit",
};

int srest_job_from(json_t *const f[SREST_N_JOB_FIELDS], size_t i,
                   struct cl_job_list *out, unsigned long *max_id,
                   struct loom_error *err)
{
    const char *st, *reason, *name, *user, *nodes, *comment, *sout, *serr;
    long long id, submit, start, end, ec;
    struct cl_job *j;
    char num[32];

    if (int_v(f[SREST_F_JOB_ID], -1, &id) < 0 || id <= 0)
        return bad(err, "jobs", i, "job_id", "missing or not a number");
    if (str_v(f[SREST_F_JOB_STATE], 1, NULL, &st) < 0)
        return bad(err, "jobs", i, "job_state", "missing or not a string");
    if (str_v(f[SREST_F_STATE_REASON], 0, "None", &reason) < 0 ||
        str_v(f[SREST_F_NAME], 0, "", &name) < 0 ||
        str_v(f[SREST_F_USER_NAME], 0, "", &user) < 0 ||
        str_v(f[SREST_F_NODES], 0, "", &nodes) < 0 ||
        str_v(f[SREST_F_COMMENT], 0, "", &comment) < 0 ||
        str_v(f[SREST_F_STDOUT], 0, "", &sout) < 0 ||
        str_v(f[SREST_F_STDERR], 0, "", &serr) < 0)
        return bad(err, "jobs", i, "state_reason, name, user_name, nodes, "
                   "comment, standard_output or standard_error",
                   "not a string");
    if (int_v(f[SREST_F_SUBMIT_TIME], 0, &submit) < 0 ||
        int_v(f[SREST_F_START_TIME], 0, &start) < 0 ||
        int_v(f[SREST_F_END_TIME], 0, &end) < 0 ||
        int_v(f[SREST_F_EXIT_CODE], -1, &ec) < 0)
        return bad(err, "jobs", i, "submit_time, start_time, end_time or "
                   "exit_code", "not a number");
    if ((unsigned long)id > *max_id)
        *max_id = (unsigned long)id;
    if (!(j = cl_job_list_add(out)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    snprintf(num, sizeof(num), "%lld", id);
    if (hostlist_expand(nodes, LOOM_ETEMP, &j->nodes, err) < 0)
        return bad(err, "jobs", i, "nodes", err->message);
    j->state = strdup(job_state(st, reason, j->nodes.n > 0));
    j->node_failure = !strcmp(st, "NODE_FAIL");
    if (!strncmp(comment, "loom:", 5) && comment[5] &&
        strspn(comment + 5, "0123456789") == strlen(comment + 5))
        j->loom_id = strtoll(comment + 5, NULL, 10);
    if (!j->state || dup_or_null(&j->native_id, num) < 0 ||
        dup_or_null(&j->name, name) < 0 || dup_or_null(&j->owner, user) < 0 ||
        dup_or_null(&j->reason, strcmp(reason, "None") ? reason : NULL) < 0 ||
        dup_or_null(&j->stdout_path, strchr(sout, '%') ? NULL : sout) < 0 ||
        dup_or_null(&j->stderr_path, strchr(serr, '%') ? NULL : serr) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    j->submit_time = (time_t)submit;
    if (j->nodes.n && strcmp(j->state, "pending") && strcmp(j->state, "held"))
        j->start_time = (time_t)start;
    if (finished(j->state)) {
        j->end_time = (time_t)end;
        /* exit_code is the wait status: a signal is 128 + it, as the
         * local executor says; a job cancelled before it ran has none. */
        if (!strcmp(j->state, "completed")) {
            j->has_exit_code = 1;
        } else if (ec >= 0 && (ec & 0x7f)) {
            j->has_exit_code = 1;
            j->exit_code = 128 + (int)(ec & 0x7f);
        } else if (ec >= 0 && !(!strcmp(j->state, "cancelled") && ec == 0)) {
            j->has_exit_code = 1;
            j->exit_code = (int)((ec >> 8) & 0xff);
        }
    }
    if (!strcmp(j->state, "held") && !strcmp(reason, "JobHeldUser"))
        job_request(f, j);
    return 0;
}

int srest_parse_jobs(json_t *doc, struct cl_job_list *out,
                     unsigned long *max_id, struct loom_error *err)
{
    json_t *a = list_of(doc, "jobs", err), *o, *f[SREST_N_JOB_FIELDS];
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        if (!json_is_object(o)) {
            bad(err, "jobs", i, "", "not an object");
            goto error;
        }
        for (int k = 0; k < SREST_N_JOB_FIELDS; k++)
            f[k] = json_object_get(o, srest_job_fields[k]);
        if (srest_job_from(f, i, out, max_id, err) < 0)
            goto error;
    }
    return 0;
error:
    cl_job_list_fini(out);
    return -1;
}

/* ---- partitions ------------------------------------------------------------ */

int srest_parse_partitions(json_t *doc, const char *only,
                           struct cl_queue_list *out, struct loom_error *err)
{
    json_t *a = list_of(doc, "partitions", err), *o;
    const char *name, *state;
    long long nodes, max;
    struct cl_queue *q;
    size_t i;

    if (!a)
        return -1;
    json_array_foreach(a, i, o) {
        if (!json_is_object(o) || str_of(o, "name", 1, NULL, &name) < 0) {
            bad(err, "partitions", i, "name", "missing or not a string");
            goto error;
        }
        /* v0.0.36 has no state: a partition it lists is taken as up. */
        if (str_of(o, "state", 0, "UP", &state) < 0 ||
            int_of(o, "total_nodes", 0, &nodes) < 0 ||
            int_of(o, "max_time_limit", 0, &max) < 0) {
            bad(err, "partitions", i, "state, total_nodes or max_time_limit",
                "of the wrong type");
            goto error;
        }
        if (only && !in_list(only, name))
            continue;
        if (!(q = cl_queue_list_add(out)) || !(q->name = strdup(name)) ||
            !(q->state = strdup(strcmp(state, "UP") ? "closed" : "open"))) {
            loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            goto error;
        }
        q->nodes = nodes > 0 && nodes < 10000000 ? (int)nodes : 0;
        /* minutes; INFINITE is null or UINT32_MAX (NO_VAL: UINT32_MAX - 1) */
        q->max_walltime_s = max > 0 && max < 0xfffffffeLL ? (long)max * 60
                                                         : 0;
    }
    return 0;
error:
    cl_queue_list_fini(out);
    return -1;
}

/* ---- submit and errors ----------------------------------------------------- */

int srest_parse_submit(json_t *doc, char **job_id, struct loom_error *err)
{
    json_t *v = json_is_object(doc) ? json_object_get(doc, "job_id") : NULL;
    char num[32];

    if (!json_is_integer(v) || json_integer_value(v) <= 0)
        return loom_error_set(err, LOOM_ETEMP, "slurmrestd's answer: job_id: "
                              "%s", v ? "not a job id" : "missing");
    snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
    *job_id = strdup(num);
    return *job_id ? 0 : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

int srest_first_error(json_t *doc, char *out, size_t n)
{
    json_t *e = json_array_get(json_object_get(doc, "errors"), 0);
    json_t *code = json_object_get(e, "error_number");
    const char *what = json_string_value(json_object_get(e, "error"));
    const char *desc = json_string_value(json_object_get(e, "description"));
    long long c;

    *out = '\0';
    if (!json_is_object(e))
        return 0;
    if (!json_is_integer(code))
        code = json_object_get(e, "error_code");
    c = json_is_integer(code) ? json_integer_value(code) : -1;
    snprintf(out, n, "%s%s%s (%lld)", desc && *desc ? desc : "",
             desc && *desc && what ? ": " : "", what ? what : "", c);
    return c > 0 ? (int)c : -1;
}
