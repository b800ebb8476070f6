/* adaptor.c - the adaptor registry, defaults for optional ops, the cluster lists. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/adaptor.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

extern const struct adaptor_type adaptor_local;
extern const struct adaptor_type adaptor_sim;
extern const struct adaptor_type adaptor_script;
extern const struct adaptor_type adaptor_slurmrest;
extern const struct adaptor_type adaptor_loom;

static const struct adaptor_type *const registry[] = {
    &adaptor_local,
    &adaptor_sim,
    &adaptor_script,
    &adaptor_slurmrest,
    &adaptor_loom,
};
#define N_TYPES (sizeof(registry) / sizeof(registry[0]))

static struct adaptor_type filled[N_TYPES];
static const struct adaptor_type *filled_ptrs[N_TYPES];
static pthread_once_t fill_once = PTHREAD_ONCE_INIT;

static int unsupported_state(void *self, const char *node, const char *state,
                             const char *reason, struct loom_error *err)
{
    return loom_error_set(err, LOOM_ENOTSUP,
                          "setting node state is not supported by this "
                          "cluster system");
}

static int unsupported_job(void *self, const char *native_id,
                           struct loom_error *err)
{
    return loom_error_set(err, LOOM_ENOTSUP,
                          "this job operation is not supported by this "
                          "cluster system");
}

static int unsupported_reserve(void *self, const struct resv_spec *spec,
                               char **native_id, struct loom_error *err)
{
    *native_id = NULL;
    return loom_error_set(err, LOOM_ENOTSUP,
                          "reservations are not supported by this cluster "
                          "system");
}

static int unsupported_unreserve(void *self, const char *native_id,
                                 struct loom_error *err)
{
    return loom_error_set(err, LOOM_ENOTSUP,
                          "reservations are not supported by this cluster "
                          "system");
}

static void fill(void)
{
    for (size_t i = 0; i < N_TYPES; i++) {
        struct adaptor_type *t = &filled[i];
        *t = *registry[i];
        if (!t->set_node_state)
            t->set_node_state = unsupported_state;
        if (!t->suspend)
            t->suspend = unsupported_job;
        if (!t->resume)
            t->resume = unsupported_job;
        if (!t->hold)
            t->hold = unsupported_job;
        if (!t->release)
            t->release = unsupported_job;
        if (!t->reserve)
            t->reserve = unsupported_reserve;
        if (!t->unreserve)
            t->unreserve = unsupported_unreserve;
        filled_ptrs[i] = t;
    }
}

const struct adaptor_type *adaptor_type_find(const char *name)
{
    pthread_once(&fill_once, fill);
    for (size_t i = 0; i < N_TYPES; i++)
        if (strcmp(filled[i].name, name) == 0)
            return &filled[i];
    return NULL;
}

const struct adaptor_type *const *adaptor_types(size_t *n)
{
    pthread_once(&fill_once, fill);
    *n = N_TYPES;
    return filled_ptrs;
}

int adaptor_type_check(const struct adaptor_type *t, struct loom_error *err)
{
    const struct adaptor_type *raw = NULL;

    for (size_t i = 0; i < N_TYPES; i++)
        if (strcmp(registry[i]->name, t->name) == 0)
            raw = registry[i];
    if (!raw)
        return loom_error_set(err, LOOM_EINVAL, "%s: not registered", t->name);
    return adaptor_table_check(raw, err);
}

int adaptor_table_check(const struct adaptor_type *raw, struct loom_error *err)
{
    if (raw->version != LOOM_ADAPTOR_VERSION)
        return loom_error_set(err, LOOM_EINVAL, "%s: interface version %d, "
                              "want %d", raw->name, raw->version,
                              LOOM_ADAPTOR_VERSION);
    if (!raw->conf_keys)
        return loom_error_set(err, LOOM_EINVAL, "%s: no conf_keys list",
                              raw->name);
    if (!raw->create || !raw->destroy || !raw->probe || !raw->nodes ||
        !raw->jobs || !raw->queues || !raw->start || !raw->cancel)
        return loom_error_set(err, LOOM_EINVAL, "%s: a core op is missing",
                              raw->name);
    if (!!(raw->caps & LOOM_CAP_SUSPEND) != !!(raw->suspend && raw->resume))
        return loom_error_set(err, LOOM_EINVAL, "%s: suspend capability and "
                              "ops disagree", raw->name);
    if (!!(raw->caps & LOOM_CAP_HOLD) != !!(raw->hold && raw->release))
        return loom_error_set(err, LOOM_EINVAL, "%s: hold capability and ops "
                              "disagree", raw->name);
    if (!!(raw->caps & LOOM_CAP_NODE_STATE) != !!raw->set_node_state)
        return loom_error_set(err, LOOM_EINVAL, "%s: node-state capability "
                              "and op disagree", raw->name);
    if (!!(raw->caps & LOOM_CAP_RESERVE) != !!(raw->reserve &&
                                                raw->unreserve) ||
        !raw->reserve != !raw->unreserve)
        return loom_error_set(err, LOOM_EINVAL, "%s: reserve capability and "
                              "ops disagree", raw->name);
    if (raw->caps & ~(unsigned)LOOM_CAP_ALL)
        return loom_error_set(err, LOOM_EINVAL, "%s: unknown capability bits "
                              "%#x", raw->name,
                              raw->caps & ~(unsigned)LOOM_CAP_ALL);
    return 0;
}

static int key_known(const char *const *keys, const char *key)
{
    static const char *const common[] = {"adaptor", "poll_s", "preference",
                                         "hold_for_loom", "annotate.",
                                         "annotate[", NULL};

    for (int pass = 0; pass < 2; pass++)
        for (const char *const *k = pass ? keys : common; *k; k++) {
            size_t n = strlen(*k);
            if ((*k)[n - 1] == '.' || (*k)[n - 1] == '['
                    ? strncmp(*k, key, n) == 0 && key[n]
                                   : strcmp(*k, key) == 0)
                return 1;
        }
    return 0;
}

int adaptor_conf_check(const struct adaptor_type *t,
                       const struct conf_section *sec,
                       struct loom_error *err)
{
    for (size_t i = 0; i < sec->n_entries; i++)
        if (!key_known(t->conf_keys, sec->entries[i].key))
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown key '%s' "
                                  "in [cluster %s]", sec->file,
                                  sec->entries[i].line, sec->entries[i].key,
                                  sec->name);
    return 0;
}

#define LIST_ADD(type, list)                                                 \
    do {                                                                     \
        if ((list->n & (list->n - 1)) == 0) { /* grow at powers of two */    \
            size_t cap_ = list->n ? list->n * 2 : 8;                         \
            type *v_ = realloc(list->v, cap_ * sizeof(*v_));                 \
            if (!v_)                                                         \
                return NULL;                                                 \
            list->v = v_;                                                    \
        }                                                                    \
        memset(&list->v[list->n], 0, sizeof(list->v[0]));                    \
        return &list->v[list->n++];                                          \
    } while (0)

int cl_usage_read(const json_t *v, struct cl_usage *u)
{
    json_int_t user, sys, rss;

    memset(u, 0, sizeof(*u));
    if (!v || json_is_null(v))
        return 0;
    if (json_unpack((json_t *)v, "{s:I, s:I, s:I}", "user_cpu_ms", &user,
                    "system_cpu_ms", &sys, "max_rss_kb", &rss) < 0 ||
        user < 0 || sys < 0 || rss < 0)
        return -1;
    *u = (struct cl_usage){1, user, sys, rss};
    return 0;
}

struct cl_node *cl_node_list_add(struct cl_node_list *l)
{
    LIST_ADD(struct cl_node, l);
}

struct cl_job *cl_job_list_add(struct cl_job_list *l)
{
    LIST_ADD(struct cl_job, l);
}

struct cl_queue *cl_queue_list_add(struct cl_queue_list *l)
{
    LIST_ADD(struct cl_queue, l);
}

void cl_node_list_fini(struct cl_node_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        struct cl_node *n = &l->v[i];
        free(n->name);
        free(n->state);
        strv_fini(&n->features);
        strv_fini(&n->queues);
        free(n->reason);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void cl_job_list_fini(struct cl_job_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        struct cl_job *j = &l->v[i];
        free(j->native_id);
        free(j->name);
        free(j->owner);
        free(j->state);
        strv_fini(&j->nodes);
        free(j->reason);
        free(j->stdout_path);
        free(j->stderr_path);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

void cl_queue_list_fini(struct cl_queue_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].state);
    }
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

const char *adaptor_op_name(enum adaptor_op op)
{
    static const char *const names[LOOM_N_OPS] = {
        "nodes", "jobs", "queues", "start", "cancel", "set_node_state",
        "suspend", "resume", "hold", "release", "reserve", "unreserve",
    };

    return (unsigned)op < LOOM_N_OPS ? names[op] : "?";
}

unsigned adaptor_op_cap(enum adaptor_op op)
{
    switch (op) {
    case LOOM_OP_SET_NODE_STATE:
        return LOOM_CAP_NODE_STATE;
    case LOOM_OP_SUSPEND:
    case LOOM_OP_RESUME:
        return LOOM_CAP_SUSPEND;
    case LOOM_OP_HOLD:
    case LOOM_OP_RELEASE:
        return LOOM_CAP_HOLD;
    case LOOM_OP_RESERVE:
    case LOOM_OP_UNRESERVE:
        return LOOM_CAP_RESERVE;
    default:
        return 0;
    }
}

const char *adaptor_cap_name(unsigned cap)
{
    switch (cap) {
    case LOOM_CAP_SUSPEND:
        return "suspend";
    case LOOM_CAP_HOLD:
        return "hold";
    case LOOM_CAP_NODE_STATE:
        return "node_state";
    case LOOM_CAP_RESERVE:
        return "reserve";
    default:
        return "?";
    }
}

void adaptor_call_fini(struct adaptor_call *k)
{
    if (!k)
        return;
    cl_node_list_fini(&k->nodes);
    cl_job_list_fini(&k->jobs);
    cl_queue_list_fini(&k->queues);
    start_result_fini(&k->started);
    free(k->resv_id);
    k->resv_id = NULL;
}

void adaptor_call_run(const struct adaptor_type *t, void *self,
                      struct adaptor_call *k)
{
    struct loom_error *err = &k->err;
    const char *id = k->native_id;

    k->blocking = 0;
    switch (k->op) {
    case LOOM_OP_NODES:
        k->rc = t->nodes(self, &k->nodes, err);
        break;
    case LOOM_OP_JOBS:
        k->rc = t->jobs(self, &k->jobs, &k->complete, err);
        break;
    case LOOM_OP_QUEUES:
        k->rc = t->queues(self, &k->queues, err);
        break;
    case LOOM_OP_START:
        k->rc = t->start(self, k->start, &k->started, err);
        break;
    case LOOM_OP_CANCEL:
        k->rc = t->cancel(self, id, err);
        break;
    case LOOM_OP_SET_NODE_STATE:
        k->rc = t->set_node_state(self, k->node, k->state, k->reason, err);
        break;
    case LOOM_OP_SUSPEND:
        k->rc = t->suspend(self, id, err);
        break;
    case LOOM_OP_RESUME:
        k->rc = t->resume(self, id, err);
        break;
    case LOOM_OP_HOLD:
        k->rc = t->hold(self, id, err);
        break;
    case LOOM_OP_RELEASE:
        k->rc = t->release(self, id, err);
        break;
    case LOOM_OP_RESERVE:
        k->rc = t->reserve(self, k->resv, &k->resv_id, err);
        break;
    case LOOM_OP_UNRESERVE:
        k->rc = t->unreserve(self, id, err);
        break;
    default:
        k->rc = loom_error_set(err, LOOM_EINVAL, "no operation %d", k->op);
    }
}

void start_result_fini(struct start_result *r)
{
    if (!r)
        return;
    free(r->native_id);
    free(r->stdout_path);
    free(r->stderr_path);
    memset(r, 0, sizeof(*r));
}
