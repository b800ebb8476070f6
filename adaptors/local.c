/* local.c - the local adaptor: jobs as processes here, on virtual nodes. */
/* SPDX-License-Identifier: MIT */
/*
 * Each job lives in its own directory (adaptors/local_job.h) and is run by a
 * detached loom-supervise process, as the job's account and in the job's
 * cgroups (adaptors/cgroup.h), so jobs survive loomd. Everything this
 * instance knows is rebuilt from those directories at create(). See
 * docs/internals/local-executor.md.
 */
#include "adaptors/local_state.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/log.h"

#define QUEUE "default"

int local_oom(struct loom_error *err)
{
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

/* A positive decimal and nothing else (a native id, a node number), or -1. */
int64_t local_parse_id(const char *s)
{
    char *end;
    long long v;

    if (!isdigit((unsigned char)s[0]) || s[0] == '0')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    return errno || *end ? -1 : (int64_t)v;
}

/* "n1".."nN" to 0..N-1, or -1. */
int local_node_index(const struct local *l, const char *name)
{
    int64_t i = name[0] == 'n' ? local_parse_id(name + 1) : -1;

    return i < 1 || i > l->n_nodes ? -1 : (int)i - 1;
}

/* jobs_dir is checked short enough at create(), so this always fits. */
static void job_dir(const struct local *l, int64_t id, char buf[PATH_MAX])
{
    snprintf(buf, PATH_MAX, "%s/%lld", l->jobs_dir, (long long)id);
}

static struct local_job *job_find(struct local *l, int64_t id)
{
    for (size_t i = 0; i < l->n_jobs; i++)
        if (l->jobs[i]->spec.loom_id == id)
            return l->jobs[i];
    return NULL;
}

/* Room for one more job, so that adding a started job cannot fail. */
static int job_reserve(struct local *l)
{
    size_t cap = l->cap_jobs ? l->cap_jobs * 2 : 16;
    struct local_job **v;

    if (l->n_jobs < l->cap_jobs)
        return 0;
    v = realloc(l->jobs, cap * sizeof(*v));
    if (!v)
        return -1;
    l->jobs = v;
    l->cap_jobs = cap;
    return 0;
}

int local_job_get_id(struct local *l, int64_t id, struct local_job **out,
                      struct loom_error *err)
{
    char dir[PATH_MAX];
    int r;

    *out = job_find(l, id);
    if (*out)
        return 1;
    if (job_reserve(l) < 0)
        return local_oom(err);
    job_dir(l, id, dir);
    r = local_job_load(dir, &l->ctx, out, err);
    if (r > 0)
        l->jobs[l->n_jobs++] = *out;
    return r;
}

/* Every running job holds its cpus, memory and gpus on each of its nodes.
 * Jobs are brought up to date first, so an ended one frees its nodes. */
static void alloc_count(struct local *l)
{
    for (size_t i = 0; i < l->n_jobs; i++)
        local_job_refresh(l->jobs[i]);
    for (int k = 0; k < l->n_nodes; k++) {
        l->nodes[k].cpus_alloc = l->nodes[k].gpus_alloc = 0;
        l->nodes[k].mem_alloc = 0;
    }
    for (size_t i = 0; i < l->n_jobs; i++) {
        const struct local_job *j = l->jobs[i];
        for (size_t m = 0; local_job_active(j) && m < j->spec.nodes.n; m++) {
            int k = local_node_index(l, j->spec.nodes.v[m]);
            if (k < 0)
                continue;
            l->nodes[k].cpus_alloc += j->spec.cpus_per_node;
            l->nodes[k].mem_alloc += j->spec.memory_mb;
            l->nodes[k].gpus_alloc += j->spec.gpus;
        }
    }
}

static const char *node_state(const struct local *l, const struct lnode *n)
{
    int busy = n->cpus_alloc > 0 || n->mem_alloc > 0 || n->gpus_alloc > 0;

    if (n->admin == A_DOWN)
        return "down";
    if (n->admin == A_DRAIN)
        return busy ? "draining" : "drained";
    if (!busy)
        return "idle";
    return n->cpus_alloc >= l->cpus ? "allocated" : "mixed";
}

/* ---- the operations ---------------------------------------------------- */

static void local_destroy(void *self)
{
    struct local *l = self;

    if (!l)
        return;
    for (size_t i = 0; i < l->n_jobs; i++)
        local_job_destroy(l->jobs[i]);
    free(l->jobs);
    for (int k = 0; l->nodes && k < l->n_nodes; k++)
        free(l->nodes[k].reason);
    free(l->nodes);
    strv_fini(&l->features);
    local_teardown(l);
    free(l->name);
    free(l);
}

static int local_create(struct conf_section *sec,
                        const struct adaptor_env *env, void **self,
                        struct loom_error *err)
{
    struct local *l = calloc(1, sizeof(*l));
    size_t running = 0;

    *self = NULL;
    if (!l || !(l->name = strdup(env->cluster))) {
        free(l);
        return local_oom(err);
    }
    if (local_setup(l, sec, env, err) < 0) {
        loom_error_prefix(err, "cluster %s", env->cluster);
        local_destroy(l);
        return -1;
    }
    for (size_t i = 0; i < l->n_jobs; i++)
        running += local_job_active(l->jobs[i]);
    log_info("cluster=%s: local executor: %d nodes of %d cpus, %ld MB, "
             "%d gpus; %zu running jobs adopted", l->name, l->n_nodes,
             l->cpus, l->memory_mb, l->gpus, running);
    *self = l;
    return 0;
}

static int local_probe(void *self, struct loom_error *err)
{
    struct local *l = self;

    if (access(l->jobs_dir, W_OK | X_OK) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "cluster %s: %s: %s",
                              l->name, l->jobs_dir, strerror(errno));
    if (access(l->runas, X_OK) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "cluster %s: %s: %s",
                              l->name, l->runas, strerror(errno));
    return 0;
}

static int node_fill(struct local *l, int k, struct cl_node *c)
{
    const struct lnode *n = &l->nodes[k];
    int bad;

    if (!c)
        return -1;
    c->name = local_strf("n%d", k + 1);
    c->state = strdup(node_state(l, n));
    c->cpus = l->cpus;
    c->cpus_alloc = n->cpus_alloc;
    c->memory_mb = l->memory_mb;
    c->memory_alloc_mb = n->mem_alloc;
    c->gpus = l->gpus;
    c->gpus_alloc = n->gpus_alloc;
    c->reason = n->reason ? strdup(n->reason) : NULL;
    bad = !c->name || !c->state || (n->reason && !c->reason) ||
          strv_push(&c->queues, QUEUE) < 0;
    for (size_t i = 0; !bad && i < l->features.n; i++)
        bad = strv_push(&c->features, l->features.v[i]) < 0;
    return bad ? -1 : 0;
}

static int local_nodes(void *self, struct cl_node_list *out,
                       struct loom_error *err)
{
    struct local *l = self;

    alloc_count(l);
    for (int k = 0; k < l->n_nodes; k++)
        if (node_fill(l, k, cl_node_list_add(out)) < 0) {
            cl_node_list_fini(out);
            return loom_error_set(err, LOOM_EINTERNAL, "cluster %s: nodes: "
                                  "out of memory", l->name);
        }
    return 0;
}

/* A job as the adaptor contract reports it. */
static int job_fill(const struct local_job *j, struct cl_job *c)
{
    const struct local_spec *s = &j->spec;
    int ended = !local_job_active(j), bad;

    if (!c)
        return -1;
    c->loom_id = s->loom_id;
    c->native_id = local_strf("%lld", (long long)s->loom_id);
    c->state = strdup(local_state_names[j->state]);
    c->name = s->name ? strdup(s->name) : NULL;
    c->owner = s->owner ? strdup(s->owner) : NULL;
    c->submit_time = s->submit_time;
    c->start_time = ended && j->exit.start_time ? j->exit.start_time
                                                : j->pid.start_time;
    c->end_time = ended ? j->exit.end_time : 0;
    c->has_exit_code = ended && j->exit.has_exit_code;
    c->exit_code = c->has_exit_code ? j->exit.exit_code : 0;
    if (ended)
        c->usage = j->exit.usage;
    c->reason = ended && j->exit.reason[0] ? strdup(j->exit.reason) : NULL;
    c->stdout_path = j->pid.stdout_path ? strdup(j->pid.stdout_path) : NULL;
    c->stderr_path = j->pid.stderr_path ? strdup(j->pid.stderr_path) : NULL;
    bad = !c->native_id || !c->state || (s->name && !c->name) ||
          (s->owner && !c->owner) ||
          (ended && j->exit.reason[0] && !c->reason) ||
          (j->pid.stdout_path && !c->stdout_path) ||
          (j->pid.stderr_path && !c->stderr_path);
    for (size_t i = 0; !bad && i < s->nodes.n; i++)
        bad = strv_push(&c->nodes, s->nodes.v[i]) < 0;
    return bad ? -1 : 0;
}

static int local_jobs(void *self, struct cl_job_list *out, int *complete,
                      struct loom_error *err)
{
    struct local *l = self;
    int all = !l->listed;
    size_t kept = 0;

    local_cg_left_retry(l);
    for (size_t i = 0; i < l->n_jobs; i++)
        local_job_refresh(l->jobs[i]);
    for (size_t i = 0; i < l->n_jobs; i++) {
        const struct local_job *j = l->jobs[i];
        if ((all || (int)j->state != j->reported) &&
            job_fill(j, cl_job_list_add(out)) < 0) {
            cl_job_list_fini(out);
            return loom_error_set(err, LOOM_EINTERNAL, "cluster %s: jobs: "
                                  "out of memory", l->name);
        }
    }
    *complete = all;
    l->listed = 1;
    /* A reported end is done with here (its cgroups too); its directory
     * still answers a repeated start() or cancel(). */
    for (size_t i = 0; i < l->n_jobs; i++) {
        struct local_job *j = l->jobs[i];
        j->reported = (int)j->state;
        if (local_job_active(j)) {
            l->jobs[kept++] = j;
            continue;
        }
        if (local_job_cgroups_remove(&l->ctx, j->spec.loom_id,
                                     j->spec.account) < 0)
            local_cg_left_add(l, j->spec.loom_id);
        local_job_destroy(j);
    }
    l->n_jobs = kept;
    return 0;
}

static int local_queues(void *self, struct cl_queue_list *out,
                        struct loom_error *err)
{
    struct local *l = self;
    struct cl_queue *q = cl_queue_list_add(out);

    if (!q || !(q->name = strdup(QUEUE)) || !(q->state = strdup("open"))) {
        cl_queue_list_fini(out);
        return local_oom(err);
    }
    q->nodes = l->n_nodes;
    q->max_walltime_s = 0;
    return 0;
}

/* Is the request well formed? (Whether its nodes can take it is
 * check_node's question.) */
static int check_req(const struct start_req *req, struct loom_error *err)
{
    if (req->loom_id <= 0)
        return loom_error_set(err, LOOM_EINVAL, "loom id is not positive");
    if (!req->nodes || req->n_nodes == 0)
        return loom_error_field(err, LOOM_EINVAL, "nodes", "no nodes given");
    if (req->cpus_per_node < 0 || req->memory_mb < 0 || req->gpus < 0 ||
        req->walltime_s < 0)
        return loom_error_set(err, LOOM_EINVAL, "negative cpus, memory, "
                              "gpus or walltime");
    if (!req->command == !req->script)
        return loom_error_set(err, LOOM_EINVAL, "a job needs a command or "
                              "a script, and not both");
    if (req->command && (!req->command[0] || !req->command[0][0]))
        return loom_error_field(err, LOOM_EINVAL, "command",
                                "the command is empty");
    if (!req->account || !*req->account)
        return loom_error_set(err, LOOM_EINVAL, "the job has no account to "
                              "run as (a record from before accounts)");
    if (req->workdir && req->workdir[0] != '/')
        return loom_error_field(err, LOOM_EINVAL, "workdir", "workdir '%s' "
                                "is not an absolute path", req->workdir);
    for (const char *const *e = req->env; e && *e; e++)
        if (**e == '=' || !strchr(*e, '='))
            return loom_error_field(err, LOOM_EINVAL, "env", "env: '%s' is "
                                    "not NAME=value", *e);
    return 0;
}

/* Can the i-th node of req take the job now? After alloc_count(). Every
 * "no" is LOOM_ECONFLICT, which puts the job back in the fabric queue: the
 * scheduler decided on an older picture of this cluster. */
static int check_node(struct local *l, const struct start_req *req,
                      size_t i, struct loom_error *err)
{
    const char *name = req->nodes[i];
    int k = local_node_index(l, name);
    int cpus = req->cpus_per_node > 0 ? req->cpus_per_node : 1;
    const struct lnode *n;

    if (k < 0)
        return loom_error_field(err, LOOM_ECONFLICT, "nodes", "no node %s "
                                "(nodes are n1..n%d)", name, l->n_nodes);
    for (size_t m = 0; m < i; m++)
        if (strcmp(req->nodes[m], name) == 0)
            return loom_error_field(err, LOOM_EINVAL, "nodes", "node %s is "
                                    "given twice", name);
    n = &l->nodes[k];
    if (n->admin != A_UP)
        return loom_error_set(err, LOOM_ECONFLICT, "node %s is %s (%s) and "
                              "takes no new jobs", name, node_state(l, n),
                              n->reason ? n->reason : "no reason given");
    if (cpus > l->cpus || req->memory_mb > l->memory_mb || req->gpus > l->gpus)
        return loom_error_set(err, LOOM_ECONFLICT, "node %s has %d cpus, "
                              "%ld MB, %d gpus; the job needs %d, %ld, %d",
                              name, l->cpus, l->memory_mb, l->gpus, cpus,
                              req->memory_mb, req->gpus);
    if (l->cpus - n->cpus_alloc < cpus)
        return loom_error_set(err, LOOM_ECONFLICT, "node %s has %d free "
                              "cpus, needs %d", name, l->cpus - n->cpus_alloc,
                              cpus);
    if (l->memory_mb - n->mem_alloc < req->memory_mb)
        return loom_error_set(err, LOOM_ECONFLICT, "node %s has %ld MB free "
                              "memory, needs %ld", name,
                              l->memory_mb - n->mem_alloc, req->memory_mb);
    if (l->gpus - n->gpus_alloc < req->gpus)
        return loom_error_set(err, LOOM_ECONFLICT, "node %s has %d free "
                              "gpus, needs %d", name, l->gpus - n->gpus_alloc,
                              req->gpus);
    return 0;
}

/* What start() answers: the job's id and where its output goes (as its
 * supervisor resolved the names). */
static int result_fill(const struct local_job *j, struct start_result *out,
                       struct loom_error *err)
{
    out->native_id = local_strf("%lld", (long long)j->spec.loom_id);
    out->stdout_path = j->pid.stdout_path ? strdup(j->pid.stdout_path) : NULL;
    out->stderr_path = j->pid.stderr_path ? strdup(j->pid.stderr_path) : NULL;
    if (out->native_id && (out->stdout_path || !j->pid.stdout_path) &&
        (out->stderr_path || !j->pid.stderr_path))
        return 0;
    start_result_fini(out);
    return local_oom(err);
}

static int local_start(void *self, const struct start_req *req,
                       struct start_result *out, struct loom_error *err)
{
    struct local *l = self;
    struct local_job *j;
    char dir[PATH_MAX];
    int r;

    memset(out, 0, sizeof(*out));
    if (check_req(req, err) < 0 || job_reserve(l) < 0)
        goto error;
    r = local_job_get_id(l, req->loom_id, &j, err);
    if (r < 0)
        goto error;
    if (r > 0) {
        if (result_fill(j, out, err) < 0)
            goto error;
        out->adopted = 1;
        log_info("cluster=%s job=%lld: exists, adopted (%s)", l->name,
                 (long long)req->loom_id, local_state_names[j->state]);
        return 0;
    }
    alloc_count(l);
    for (size_t i = 0; i < req->n_nodes; i++)
        if (check_node(l, req, i, err) < 0)
            goto error;
    if (access(l->runas, X_OK) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "cannot run %s: %s", l->runas,
                       strerror(errno));
        goto error;
    }
    job_dir(l, req->loom_id, dir);
    j = local_job_start(dir, &l->ctx, req, err);
    if (!j && err->kind == LOOM_ECONFLICT &&
        local_job_get_id(l, req->loom_id, &j, err) > 0) {
        /* another loomd started it meanwhile: it is adopted */
        if (result_fill(j, out, err) < 0)
            goto error;
        out->adopted = 1;
        log_info("cluster=%s job=%lld: started by another loomd, adopted",
                 l->name, (long long)req->loom_id);
        return 0;
    }
    if (!j)
        goto error;
    l->jobs[l->n_jobs++] = j; /* room was reserved */
    if (result_fill(j, out, err) < 0)
        goto error;
    log_info("cluster=%s job=%lld: started on %s%s as %s, supervisor pid %d",
             l->name, (long long)req->loom_id, req->nodes[0],
             req->n_nodes > 1 ? " and more" : "", req->account,
             (int)j->pid.sup_pid);
    return 0;
error:
    start_result_fini(out);
    return loom_error_prefix(err, "cluster %s: start job %lld", l->name,
                             (long long)req->loom_id);
}

/* The job of a native id, from memory or from its directory. */
static struct local_job *job_get(struct local *l, const char *native_id,
                                 const char *op, struct loom_error *err)
{
    int64_t id = local_parse_id(native_id);
    struct local_job *j = NULL;
    int r = id > 0 ? local_job_get_id(l, id, &j, err) : 0;

    if (r > 0)
        return j;
    if (r == 0)
        loom_error_set(err, LOOM_ENOENT, "no such job");
    loom_error_prefix(err, "cluster %s: %s job %s", l->name, op, native_id);
    return NULL;
}

static int local_cancel(void *self, const char *native_id,
                        struct loom_error *err)
{
    struct local *l = self;
    struct local_job *j = job_get(l, native_id, "cancel", err);

    if (j && local_job_cancel(j, err) < 0)
        return loom_error_prefix(err, "cluster %s: cancel job %s", l->name,
                                 native_id);
    return j ? 0 : -1;
}

/* Suspend (stop = 1) or resume the job's whole process group. */
static int stop_cont(struct local *l, const char *native_id, int stop,
                     struct loom_error *err)
{
    const char *op = stop ? "suspend" : "resume";
    enum local_state from = stop ? LOOM_LOCAL_RUNNING : LOOM_LOCAL_SUSPENDED;
    struct local_job *j = job_get(l, native_id, op, err);

    if (!j)
        return -1;
    local_job_refresh(j);
    if (local_job_active(j) && j->state != from)
        return 0; /* suspended already, or running already */
    if (j->state != from)
        loom_error_set(err, LOOM_ECONFLICT, "it has ended (%s)",
                       local_state_names[j->state]);
    else if (!j->has_pid)
        loom_error_set(err, LOOM_ETEMP, "it is still starting");
    else if (local_job_stop(j, stop, err) == 0)
        return 0;
    return loom_error_prefix(err, "cluster %s: %s job %s", l->name, op,
                             native_id);
}

static int local_suspend(void *self, const char *native_id,
                         struct loom_error *err)
{
    return stop_cont(self, native_id, 1, err);
}

static int local_resume(void *self, const char *native_id,
                        struct loom_error *err)
{
    return stop_cont(self, native_id, 0, err);
}

static int local_set_node_state(void *self, const char *node,
                                const char *state, const char *reason,
                                struct loom_error *err)
{
    struct local *l = self;
    int k = local_node_index(l, node), a = A_UP;
    struct lnode *n, old;
    char *copy = NULL;

    if (k < 0)
        return loom_error_set(err, LOOM_ENOENT, "cluster %s: no node %s",
                              l->name, node);
    while (a <= A_DOWN && strcmp(state, local_admin_names[a]) != 0)
        a++;
    if (a > A_DOWN)
        return loom_error_field(err, LOOM_EINVAL, "state", "cluster %s: "
                                "node %s: state '%s' is not up, drain or "
                                "down", l->name, node, state);
    if (a != A_UP && reason && *reason && !(copy = strdup(reason)))
        return local_oom(err);
    n = &l->nodes[k];
    old = *n;
    n->admin = (enum admin)a;
    n->reason = copy;
    if (local_nodes_save(l, err) < 0) {
        *n = old;
        free(copy);
        return loom_error_prefix(err, "cluster %s: node %s", l->name, node);
    }
    free(old.reason);
    log_info("cluster=%s node=%s: state %s reason=%s", l->name, node, state,
             copy ? copy : "none");
    return 0;
}

static const char *const local_conf_keys[] = {
    "nodes", "cpus_per_node", "memory_mb", "gpus", "features", "confine",
    "pids_max", NULL,
};

const struct adaptor_type adaptor_local = {
    .name = "local",
    .conf_keys = local_conf_keys,
    .poll_s = 1.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_NODE_STATE,
    .model = LOOM_MODEL_DISABLED_SCHEDULER,
    .create = local_create,
    .destroy = local_destroy,
    .probe = local_probe,
    .describe = local_describe,
    .nodes = local_nodes,
    .jobs = local_jobs,
    .queues = local_queues,
    .start = local_start,
    .cancel = local_cancel,
    .set_node_state = local_set_node_state,
    .suspend = local_suspend,
    .resume = local_resume,
};
