/* sim.c - the sim adaptor: a simulated cluster whose jobs only take time. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/adaptor.h"
#include "adaptors/sim_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * A cluster of n1..nN that runs nothing: a job holds its nodes' cpus,
 * memory and gpus from start() until its runtime has passed on a clock
 * running `speed` times faster than real time. Times reported are real
 * wall-clock times; only durations are compressed. The clock advances
 * lazily: every operation first ends the jobs whose end time has passed,
 * taking them off a min-heap of end times.
 *
 * Simplifications, on purpose: a node set down keeps running the jobs it
 * has (no node failure is simulated; drain or cancel them); a suspended
 * job keeps its resources; a finished job is forgotten SIM_RETAIN_S after
 * jobs() first reported it, after which a start of its loom id would run
 * it again. Runtimes run on CLOCK_MONOTONIC, as a real system's walltime
 * does: a step of the wall clock neither ends a job early nor keeps it
 * late; the times reported are the wall clock's at the start and the end.
 */

#define SIM_MAX_NODES 100000
#define SIM_MAX_MEMORY_MB (1L << 30)
#define SIM_MAX_RUNTIME_S 1e9
#define SIM_DEFAULT_RUNTIME_S 60.0
#define SIM_RETAIN_S 600.0
#define SIM_WALLTIME_EXIT 137 /* 128 + SIGKILL, as a CMS reports it */

enum { NODE_UP, NODE_DRAIN, NODE_DOWN };

struct sim_node {
    char *reason;          /* owned, or NULL */
    long memory_alloc_mb;
    int cpus_alloc, gpus_alloc;
    int n_jobs;            /* running or suspended jobs on it */
    uint32_t mark;         /* == sim.mark: named already by this start */
    unsigned char admin;   /* NODE_* */
};

struct sim {
    char *cluster;
    size_t n_nodes;
    int cpus, gpus;        /* per node */
    long memory_mb;        /* per node */
    double speed;
    int unpinned_jobs;     /* takes jobs that do not name it */
    struct strv features;
    struct sim_node *nodes;
    uint32_t mark;
    int listed;            /* jobs() has given its complete answer */
    struct sim_table jobs;
};

/* The sim's clock: monotonic seconds. */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The wall-clock time of the sim's moment t, as the wall clock runs now. */
static double wall_of(double t)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9 - (now_s() - t);
}

static int no_memory(const struct sim *s, const char *op,
                     struct loom_error *err)
{
    return loom_error_set(err, LOOM_EINTERNAL, "cluster %s: %s: out of memory",
                          s->cluster, op);
}

static int dup_opt(char **out, const char *s)
{
    *out = NULL;
    return s && !(*out = strdup(s)) ? -1 : 0;
}

/* The index of node "n<i>" (1 <= i <= n_nodes, no leading zero), or -1. */
static long node_index(const struct sim *s, const char *name)
{
    size_t i = 0;

    if (!name || name[0] != 'n' || name[1] < '1' || name[1] > '9')
        return -1;
    for (const char *p = name + 1; *p; p++) {
        if (*p < '0' || *p > '9' || i > SIM_MAX_NODES)
            return -1;
        i = i * 10 + (size_t)(*p - '0');
    }
    return i <= s->n_nodes ? (long)i - 1 : -1;
}

static const char *node_state(const struct sim *s, const struct sim_node *n)
{
    if (n->admin == NODE_DOWN)
        return "down";
    if (n->admin == NODE_DRAIN)
        return n->n_jobs ? "draining" : "drained";
    if (!n->n_jobs)
        return "idle";
    return n->cpus_alloc >= s->cpus ? "allocated" : "mixed";
}

/* --- creation ----------------------------------------------------------- */

/* Split "a, b,c" into features; empty items are skipped. */
static int features_parse(struct strv *out, const char *list)
{
    const char *p = list;

    while (p && *p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        char *f;
        int rc;

        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
            end--;
        if (end > p) {
            if (!(f = strndup(p, (size_t)(end - p))))
                return -1;
            rc = strv_push(out, f);
            free(f);
            if (rc < 0)
                return -1;
        }
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static int sim_config(struct sim *s, struct conf_section *sec,
                      struct loom_error *err)
{
    long nodes, cpus, gpus;
    const char *features;

    if (conf_get_long(sec, "nodes", 64, 1, SIM_MAX_NODES, &nodes, err) < 0 ||
        conf_get_long(sec, "cpus_per_node", 32, 1, 4096, &cpus, err) < 0 ||
        conf_get_long(sec, "memory_mb", 131072, 1, SIM_MAX_MEMORY_MB,
                      &s->memory_mb, err) < 0 ||
        conf_get_long(sec, "gpus", 0, 0, 1024, &gpus, err) < 0 ||
        conf_get_str(sec, "features", NULL, &features, err) < 0 ||
        conf_get_double(sec, "speed", 1.0, 0.001, 1e6, &s->speed, err) < 0 ||
        conf_get_bool(sec, "unpinned_jobs", 0, &s->unpinned_jobs, err) < 0)
        return -1;
    s->n_nodes = (size_t)nodes;
    s->cpus = (int)cpus;
    s->gpus = (int)gpus;
    if (features_parse(&s->features, features) < 0)
        return no_memory(s, "create", err);
    return 0;
}

static void sim_destroy(void *self)
{
    struct sim *s = self;

    if (!s)
        return;
    for (size_t i = 0; s->nodes && i < s->n_nodes; i++)
        free(s->nodes[i].reason);
    free(s->nodes);
    sim_table_fini(&s->jobs);
    strv_fini(&s->features);
    free(s->cluster);
    free(s);
}

static int sim_create(struct conf_section *sec, const struct adaptor_env *env,
                      void **self, struct loom_error *err)
{
    const char *name = env && env->cluster ? env->cluster : "sim";
    struct sim *s = calloc(1, sizeof(*s));

    if (!s || !(s->cluster = strdup(name))) {
        loom_error_set(err, LOOM_EINTERNAL, "cluster %s: create: out of "
                       "memory", name);
        goto error;
    }
    if (sim_config(s, sec, err) < 0)
        goto error;
    s->nodes = calloc(s->n_nodes, sizeof(*s->nodes));
    if (!s->nodes || sim_table_init(&s->jobs) < 0) {
        no_memory(s, "create", err);
        goto error;
    }
    *self = s;
    return 0;
error:
    sim_destroy(s);
    return -1;
}

static int sim_probe(void *self, struct loom_error *err)
{
    return 0;
}

/* Nothing runs here: unless its section says unpinned_jobs, only a job
 * that names the cluster is placed on it, never a real job by chance. */
static void sim_describe(void *self, struct adaptor_desc *d)
{
    const struct sim *s = self;

    d->pinned_only = !s->unpinned_jobs;
}

/* --- the clock ---------------------------------------------------------- */

/* Take (sign 1) or give back (sign -1) the job's share of its nodes. */
static void job_hold(struct sim *s, const struct sim_job *j, int sign)
{
    for (size_t i = 0; i < j->n_nodes; i++) {
        struct sim_node *n = &s->nodes[j->nodes[i]];
        n->cpus_alloc += sign * j->cpus;
        n->memory_alloc_mb += sign * j->memory_mb;
        n->gpus_alloc += sign * j->gpus;
        n->n_jobs += sign;
    }
}

static enum sim_state job_outcome(const struct sim_job *j)
{
    return j->killed || j->exit_code ? SIM_FAILED : SIM_COMPLETED;
}

/* End a running or suspended job at `when`, freeing its nodes. */
static void job_end(struct sim *s, struct sim_job *j, enum sim_state state,
                    double when)
{
    if (j->heap_pos != SIM_NOT_QUEUED)
        sim_table_unqueue(&s->jobs, j);
    job_hold(s, j, -1);
    j->state = state;
    j->end = when;
    j->end_wall = wall_of(when);
    sim_table_mark(&s->jobs, j);
}

/* End every job whose end time has come: O(k log n) for k of them. */
static void sim_advance(struct sim *s, double now)
{
    struct sim_job *j;

    while ((j = sim_table_due(&s->jobs, now)))
        job_end(s, j, job_outcome(j), j->end);
}

/* --- nodes and queues --------------------------------------------------- */

static int node_fill(const struct sim *s, size_t i, struct cl_node *out)
{
    const struct sim_node *n = &s->nodes[i];
    char name[24];

    snprintf(name, sizeof(name), "n%zu", i + 1);
    out->cpus = s->cpus;
    out->cpus_alloc = n->cpus_alloc;
    out->memory_mb = s->memory_mb;
    out->memory_alloc_mb = n->memory_alloc_mb;
    out->gpus = s->gpus;
    out->gpus_alloc = n->gpus_alloc;
    if (!(out->name = strdup(name)) ||
        !(out->state = strdup(node_state(s, n))) ||
        dup_opt(&out->reason, n->reason) < 0 ||
        strv_push(&out->queues, "default") < 0)
        return -1;
    for (size_t f = 0; f < s->features.n; f++)
        if (strv_push(&out->features, s->features.v[f]) < 0)
            return -1;
    return 0;
}

static int sim_nodes(void *self, struct cl_node_list *out,
                     struct loom_error *err)
{
    struct sim *s = self;

    sim_advance(s, now_s());
    for (size_t i = 0; i < s->n_nodes; i++) {
        struct cl_node *n = cl_node_list_add(out);
        if (!n || node_fill(s, i, n) < 0) {
            cl_node_list_fini(out);
            return no_memory(s, "nodes", err);
        }
    }
    return 0;
}

static int sim_queues(void *self, struct cl_queue_list *out,
                      struct loom_error *err)
{
    struct sim *s = self;
    struct cl_queue *q = cl_queue_list_add(out);

    if (!q || !(q->name = strdup("default")) || !(q->state = strdup("open"))) {
        cl_queue_list_fini(out);
        return no_memory(s, "queues", err);
    }
    q->nodes = (int)s->n_nodes;
    q->max_walltime_s = 0;
    return 0;
}

/* --- jobs --------------------------------------------------------------- */

/* Until the first answer every job is on the changed list (a job leaves it
 * only by being reported), so the first, complete answer is that list too:
 * either way the answer costs O(jobs in it), never a scan of all jobs. */
static int sim_jobs(void *self, struct cl_job_list *out, int *complete,
                    struct loom_error *err)
{
    struct sim *s = self;
    double now = now_s();

    sim_advance(s, now);
    sim_table_expire(&s->jobs, now - SIM_RETAIN_S);
    for (struct sim_job *j = s->jobs.changed_first; j; j = j->changed_next) {
        struct cl_job *c = cl_job_list_add(out);
        if (!c || sim_job_fill(j, c) < 0) {
            cl_job_list_fini(out);
            return no_memory(s, "jobs", err);
        }
    }
    sim_table_reported(&s->jobs, now);
    *complete = !s->listed;
    s->listed = 1;
    return 0;
}

/* --- start -------------------------------------------------------------- */

static int start_fail(const struct sim *s, const struct start_req *req,
                      struct loom_error *err, enum loom_err_kind kind,
                      const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int start_fail(const struct sim *s, const struct start_req *req,
                      struct loom_error *err, enum loom_err_kind kind,
                      const char *fmt, ...)
{
    char why[384];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    return loom_error_set(err, kind, "cluster %s: start job %" PRId64 ": %s",
                          s->cluster, req->loom_id, why);
}

static int req_check(const struct sim *s, const struct start_req *req,
                     struct loom_error *err)
{
    if (req->loom_id <= 0)
        return start_fail(s, req, err, LOOM_EINVAL, "the loom id must be "
                          "positive");
    if (!req->nodes || !req->n_nodes)
        return start_fail(s, req, err, LOOM_EINVAL, "no nodes given");
    if (req->n_nodes > s->n_nodes)
        return start_fail(s, req, err, LOOM_EINVAL, "%zu nodes asked for, "
                          "the cluster has %zu", req->n_nodes, s->n_nodes);
    if (req->cpus_per_node < 0 || req->memory_mb < 0 || req->gpus < 0 ||
        req->walltime_s < 0)
        return start_fail(s, req, err, LOOM_EINVAL, "a negative resource "
                          "request");
    return 0;
}

/* The value of "NAME=value" when entry sets name, else NULL. */
static const char *env_value(const char *entry, const char *name)
{
    size_t len = strlen(name);

    return !strncmp(entry, name, len) && entry[len] == '=' ? entry + len + 1
                                                           : NULL;
}

static int runtime_parse(const char *v, double *out)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= 0 && d <= SIM_MAX_RUNTIME_S))
        return -1;
    *out = d;
    return 0;
}

static int exit_code_parse(const char *v, int *out)
{
    char *end;
    long c;

    errno = 0;
    c = strtol(v, &end, 10);
    if (errno || end == v || *end || c < 0 || c > 255)
        return -1;
    *out = (int)c;
    return 0;
}

/* The simulated runtime and exit code the request's environment asks for:
 * LOOM_SIM_RUNTIME_S (default: the walltime, else 60 s) and
 * LOOM_SIM_EXIT_CODE (default 0). */
static int env_parse(const struct sim *s, const struct start_req *req,
                     double *runtime, int *exit_code, struct loom_error *err)
{
    *runtime = req->walltime_s > 0 ? (double)req->walltime_s
                                   : SIM_DEFAULT_RUNTIME_S;
    *exit_code = 0;
    for (const char *const *e = req->env; e && *e; e++) {
        const char *v;

        if ((v = env_value(*e, "LOOM_SIM_RUNTIME_S")) &&
            runtime_parse(v, runtime) < 0)
            return start_fail(s, req, err, LOOM_EINVAL, "LOOM_SIM_RUNTIME_S="
                              "'%s': expected seconds from 0 to %g", v,
                              SIM_MAX_RUNTIME_S);
        if ((v = env_value(*e, "LOOM_SIM_EXIT_CODE")) &&
            exit_code_parse(v, exit_code) < 0)
            return start_fail(s, req, err, LOOM_EINVAL, "LOOM_SIM_EXIT_CODE="
                              "'%s': expected an integer from 0 to 255", v);
    }
    return 0;
}

/* Can node n (named name) take one more share of the request? */
static int node_fits(const struct sim *s, const struct start_req *req,
                     const struct sim_node *n, const char *name,
                     struct loom_error *err)
{
    int cpus = s->cpus - n->cpus_alloc, gpus = s->gpus - n->gpus_alloc;
    long memory = s->memory_mb - n->memory_alloc_mb;

    if (!req->adopt && n->admin != NODE_UP)
        return start_fail(s, req, err, LOOM_ECONFLICT, "node %s is %s", name,
                          node_state(s, n));
    if (cpus < req->cpus_per_node)
        return start_fail(s, req, err, LOOM_ECONFLICT, "node %s has %d free "
                          "cpus, needs %d", name, cpus, req->cpus_per_node);
    if (memory < req->memory_mb)
        return start_fail(s, req, err, LOOM_ECONFLICT, "node %s has %ld MB "
                          "free memory, needs %ld", name, memory,
                          req->memory_mb);
    if (gpus < req->gpus)
        return start_fail(s, req, err, LOOM_ECONFLICT, "node %s has %d free "
                          "gpus, needs %d", name, gpus, req->gpus);
    return 0;
}

/* Resolve the request's node names into idx: each must exist and be named
 * once; when `fit` is set each must also be able to take the job. */
static int nodes_resolve(struct sim *s, const struct start_req *req,
                         uint32_t *idx, int fit, struct loom_error *err)
{
    if (++s->mark == 0) { /* wrapped after 2^32 starts: forget old marks */
        for (size_t i = 0; i < s->n_nodes; i++)
            s->nodes[i].mark = 0;
        s->mark = 1;
    }
    for (size_t i = 0; i < req->n_nodes; i++) {
        const char *name = req->nodes[i] ? req->nodes[i] : "(null)";
        long k = node_index(s, req->nodes[i]);
        struct sim_node *n = k < 0 ? NULL : &s->nodes[k];

        if (!n)
            return start_fail(s, req, err, LOOM_ECONFLICT, "node %s does not "
                              "exist (the nodes are n1 to n%zu)", name,
                              s->n_nodes);
        if (n->mark == s->mark)
            return start_fail(s, req, err, LOOM_EINVAL, "node %s is named "
                              "twice", name);
        n->mark = s->mark;
        idx[i] = (uint32_t)k;
        if (fit && node_fits(s, req, n, name, err) < 0)
            return -1;
    }
    return 0;
}

static struct sim_job *job_new(const struct sim *s, const struct start_req *req,
                               double runtime, int exit_code, double now)
{
    struct sim_job *j = calloc(1, sizeof(*j));

    if (!j || !(j->nodes = calloc(req->n_nodes, sizeof(*j->nodes))) ||
        dup_opt(&j->name, req->name) < 0 ||
        dup_opt(&j->owner, req->owner) < 0) {
        sim_job_free(j);
        return NULL;
    }
    j->loom_id = req->loom_id;
    j->n_nodes = req->n_nodes;
    j->cpus = req->cpus_per_node;
    j->memory_mb = req->memory_mb;
    j->gpus = req->gpus;
    j->start = now;
    j->start_wall = wall_of(now);
    /* adopted: it started when loomd's record says (a wall-clock time) */
    if (req->adopt && req->start_time > 0 &&
        (double)req->start_time < j->start_wall) {
        j->start -= j->start_wall - (double)req->start_time;
        j->start_wall = (double)req->start_time;
    }
    if (req->walltime_s > 0 && runtime > (double)req->walltime_s) {
        runtime = (double)req->walltime_s;
        j->killed = 1;
        exit_code = SIM_WALLTIME_EXIT;
    }
    j->exit_code = exit_code;
    j->end = j->start + runtime / s->speed;
    return j;
}

/* Enter a checked job: it runs from now, or is over already (adopted). */
static void job_begin(struct sim *s, struct sim_job *j, double now)
{
    sim_table_insert(&s->jobs, j);
    sim_table_mark(&s->jobs, j);
    if (j->end <= now) {
        j->state = job_outcome(j);
        /* from its start's wall time, not two clocks read apart: an
         * adopted job's end is its recorded start plus its run */
        j->end_wall = j->start_wall + (j->end - j->start);
        return;
    }
    j->state = SIM_RUNNING;
    job_hold(s, j, 1);
    sim_table_queue(&s->jobs, j);
}

static int result_set(const struct sim *s, const struct sim_job *j,
                      int adopted, struct start_result *out,
                      struct loom_error *err)
{
    char id[32];

    snprintf(id, sizeof(id), "sim-%" PRId64, j->loom_id);
    memset(out, 0, sizeof(*out));
    if (!(out->native_id = strdup(id)))
        return no_memory(s, "start", err);
    out->adopted = adopted;
    return 0;
}

static int sim_start(void *self, const struct start_req *req,
                     struct start_result *out, struct loom_error *err)
{
    struct sim *s = self;
    double now = now_s(), runtime;
    struct sim_job *j;
    int exit_code;

    sim_advance(s, now);
    if (req_check(s, req, err) < 0)
        return -1;
    if ((j = sim_table_find(&s->jobs, req->loom_id)))
        return result_set(s, j, 1, out, err);
    if (env_parse(s, req, &runtime, &exit_code, err) < 0)
        return -1;
    if (!(j = job_new(s, req, runtime, exit_code, now)))
        return no_memory(s, "start", err);
    if (nodes_resolve(s, req, j->nodes, !req->adopt || j->end > now, err) < 0)
        goto error;
    if (sim_table_reserve(&s->jobs) < 0) {
        no_memory(s, "start", err);
        goto error;
    }
    if (result_set(s, j, req->adopt, out, err) < 0)
        goto error;
    job_begin(s, j, now);
    return 0;
error:
    sim_job_free(j);
    return -1;
}

/* --- job control -------------------------------------------------------- */

/* The job "sim-<loom id>", after advancing the clock to now; or NULL
 * (ENOENT). */
static struct sim_job *job_lookup(struct sim *s, const char *op,
                                  const char *native_id, double now,
                                  struct loom_error *err)
{
    const char *digits = native_id && !strncmp(native_id, "sim-", 4)
                             ? native_id + 4 : NULL;
    struct sim_job *j = NULL;
    char *end;
    long long id;

    sim_advance(s, now);
    if (digits && *digits >= '0' && *digits <= '9') {
        errno = 0;
        id = strtoll(digits, &end, 10);
        if (!errno && !*end)
            j = sim_table_find(&s->jobs, (int64_t)id);
    }
    if (!j)
        loom_error_set(err, LOOM_ENOENT, "cluster %s: %s %s: no such job",
                       s->cluster, op, native_id ? native_id : "(null)");
    return j;
}

static int sim_cancel(void *self, const char *native_id,
                      struct loom_error *err)
{
    struct sim *s = self;
    double now = now_s();
    struct sim_job *j = job_lookup(s, "cancel", native_id, now, err);

    if (!j)
        return -1;
    if (!sim_job_over(j))
        job_end(s, j, SIM_CANCELLED, now);
    return 0;
}

static int control_fail(const struct sim *s, const char *op,
                        const struct sim_job *j, struct loom_error *err)
{
    return loom_error_set(err, LOOM_ECONFLICT, "cluster %s: %s sim-%" PRId64
                          ": the job is over", s->cluster, op, j->loom_id);
}

/* The remaining runtime is frozen: the job leaves the end-time heap. */
static int sim_suspend(void *self, const char *native_id,
                       struct loom_error *err)
{
    struct sim *s = self;
    double now = now_s();
    struct sim_job *j = job_lookup(s, "suspend", native_id, now, err);

    if (!j)
        return -1;
    if (sim_job_over(j))
        return control_fail(s, "suspend", j, err);
    if (j->state == SIM_SUSPENDED)
        return 0;
    sim_table_unqueue(&s->jobs, j);
    j->remaining = j->end - now; /* > 0: not due at now */
    j->state = SIM_SUSPENDED;
    sim_table_mark(&s->jobs, j);
    return 0;
}

static int sim_resume(void *self, const char *native_id,
                      struct loom_error *err)
{
    struct sim *s = self;
    double now = now_s();
    struct sim_job *j = job_lookup(s, "resume", native_id, now, err);

    if (!j)
        return -1;
    if (sim_job_over(j))
        return control_fail(s, "resume", j, err);
    if (j->state == SIM_RUNNING)
        return 0;
    j->end = now + j->remaining;
    j->state = SIM_RUNNING;
    sim_table_queue(&s->jobs, j); /* cannot fail: heap_cap >= n_jobs */
    sim_table_mark(&s->jobs, j);
    return 0;
}

/* --- node state --------------------------------------------------------- */

static int sim_set_node_state(void *self, const char *node, const char *state,
                              const char *reason, struct loom_error *err)
{
    struct sim *s = self;
    long k = node_index(s, node);
    char *copy = NULL;
    int admin;

    if (k < 0)
        return loom_error_set(err, LOOM_ENOENT, "cluster %s: set node state: "
                              "no node %s", s->cluster, node ? node : "(null)");
    if (state && !strcmp(state, "up"))
        admin = NODE_UP;
    else if (state && !strcmp(state, "drain"))
        admin = NODE_DRAIN;
    else if (state && !strcmp(state, "down"))
        admin = NODE_DOWN;
    else
        return loom_error_field(err, LOOM_EINVAL, "state", "cluster %s: node "
                                "%s: unknown state '%s' (up, drain or down)",
                                s->cluster, node, state ? state : "(null)");
    if (admin != NODE_UP && dup_opt(&copy, reason) < 0)
        return no_memory(s, "set node state", err);
    free(s->nodes[k].reason);
    s->nodes[k].reason = copy;
    s->nodes[k].admin = (unsigned char)admin;
    return 0;
}

static const char *const sim_conf_keys[] = {
    "nodes", "cpus_per_node", "memory_mb", "gpus", "features", "speed",
    "unpinned_jobs", NULL,
};

const struct adaptor_type adaptor_sim = {
    .name = "sim",
    .conf_keys = sim_conf_keys,
    .poll_s = 1.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_NODE_STATE,
    .model = LOOM_MODEL_DISABLED_SCHEDULER,
    .create = sim_create,
    .destroy = sim_destroy,
    .probe = sim_probe,
    .describe = sim_describe,
    .nodes = sim_nodes,
    .jobs = sim_jobs,
    .queues = sim_queues,
    .start = sim_start,
    .cancel = sim_cancel,
    .set_node_state = sim_set_node_state,
    .suspend = sim_suspend,
    .resume = sim_resume,
};
