/* mreq_ops.c - what a maintenance request asks of the other threads (its
 * reservation of the scheduler, its nodes' states of the server) and its
 * commits. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "adaptors/server.h"
#include "core/log.h"
#include "core/store_maint.h"
#include "core/vec.h"
#include "maintenance/maint_state.h"
#include "scheduler/sched.h"

#define CALL_S 30.0 /* the longest wait for the scheduler's answer */

/* M.open again, when a request may have changed state: the history of
 * requests only grows, and lookups need the open ones alone. */
static void open_refresh(void)
{
    if (!M.open_stale)
        return;
    M.n_open = 0;
    for (size_t i = 0; i < M.n_req; i++)
        if (mstate_open(M.req[i]->state)) {
            if (vec_grow((void **)&M.open, &M.cap_open, M.n_open + 1,
                         sizeof(*M.open), 16) < 0)
                return; /* stays stale: tried again at the next lookup */
            M.open[M.n_open++] = M.req[i];
        }
    M.open_stale = 0;
}

struct mreq *mreq_open_on(const char *node, const char *action)
{
    size_t cl = strcspn(node, "/");

    open_refresh();
    for (size_t i = 0; i < M.n_open; i++) {
        struct mreq *r = M.open[i];
        if (!mstate_open(r->state) || strlen(r->cluster) != cl ||
            strncmp(r->cluster, node, cl) || (action && strcmp(r->action,
                                                               action)))
            continue;
        for (size_t k = 0; k < r->nodes.n; k++)
            if (!strcmp(r->nodes.v[k], node + cl + 1))
                return r;
    }
    return NULL;
}

size_t mreq_nodes_open(const char *cluster)
{
    size_t n = 0;

    open_refresh();
    for (size_t i = 0; i < M.n_open; i++)
        if (mstate_open(M.open[i]->state) && !strcmp(M.open[i]->cluster,
                                                    cluster))
            n += M.open[i]->nodes.n;
    return n;
}

struct mreq *mreq_find(int64_t id)
{
    for (size_t i = 0; i < M.n_req; i++)
        if (M.req[i]->id == id)
            return M.req[i];
    return NULL;
}

/* Commit the request as it is now. 0, or -1 (logged; the caller keeps
 * the step for the next tick). */
int mreq_save(struct mreq *r)
{
    struct loom_error err;
    char *doc = mreq_render(r);
    int rc = doc ? store_maint_put(M.st, r->id, mstate_name(r->state), doc,
                                   &err)
                 : loom_error_set(&err, LOOM_EINTERNAL, "out of memory");

    free(doc);
    if (rc < 0)
        log_warn("maintenance=%lld: not written (%s); tried again",
                 (long long)r->id, err.message);
    M.req_changed = 1;
    M.open_stale = 1;
    diff_requests_changed();
    return rc;
}

void mreq_doubt_note(const struct mreq *r)
{
    if (!store_in_doubt(M.st))
        return;
    if (vec_grow((void **)&M.doubt, &M.cap_doubt, M.n_doubt + 1,
                 sizeof(*M.doubt), 4) < 0) {
        log_err("maintenance=%lld: out of memory noting that its write is "
                "in doubt; if it is stored, the next start loads it",
                (long long)r->id);
        return;
    }
    M.doubt[M.n_doubt++] = r->id;
}

void mreq_doubt_settle(void)
{
    struct loom_error err;

    if (!M.n_doubt || store_maint_delete(M.st, M.doubt, M.n_doubt, &err) < 0)
        return;
    log_info("maintenance: %zu request(s) whose first write lost its "
             "connection deleted if stored (their askers were told 503)",
             M.n_doubt);
    M.n_doubt = 0;
}

/* Move to state s and commit it; on failure nothing changes. */
int mreq_step_to(struct mreq *r, enum mstate s, time_t now)
{
    enum mstate old = r->state;
    time_t since = r->since;
    size_t h = json_array_size(r->history);

    mreq_set_state(r, s, now);
    if (mreq_save(r) == 0)
        return 0;
    r->state = old;
    r->since = since;
    while (json_array_size(r->history) > h)
        json_array_remove(r->history, json_array_size(r->history) - 1);
    return -1;
}

/* Ask a thread and wait for its answer: 0 with the reply (the caller
 * unrefs it), or -1 with err. */
int mreq_call(struct msgq *q, int type, void *data,
              void (*data_free)(void *), struct reply **out,
              struct loom_error *err)
{
    struct reply *rp = reply_create();

    *out = NULL;
    if (!rp) {
        data_free(data);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    msgq_post(q, msg_create(type, data, data_free, rp));
    if (reply_wait(rp, CALL_S) < 0) {
        reply_unref(rp);
        return loom_error_set(err, LOOM_EUNAVAIL, "the scheduler did not "
                              "answer within %.0f s", CALL_S);
    }
    if (rp->status >= 400) {
        *err = rp->err;
        reply_unref(rp);
        return -1;
    }
    *out = rp;
    return 0;
}

int mreq_resv_op(int type, int64_t id, int start_now, int end_now,
                 struct loom_error *err)
{
    struct sched_resv_op *op = calloc(1, sizeof(*op));
    struct reply *rp;

    if (!op || !(op->subject = strdup("maintenance"))) {
        free(op);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    op->id = id;
    op->start_now = start_now;
    op->end_now = end_now;
    if (mreq_call(sched_queue(), type, op, sched_resv_op_free, &rp, err) < 0)
        return -1;
    reply_unref(rp);
    return 0;
}

/* Set every node of r to state through its cluster's adaptor; the
 * answers are looked at by the next ticks (r->pending: the last one). */
void mreq_set_nodes(struct mreq *r, const char *state, const char *reason)
{
    for (size_t i = 0; i < r->nodes.n; i++) {
        struct server_node_state *ns = calloc(1, sizeof(*ns));
        struct reply *rp = reply_create();
        if (!ns || !rp || !(ns->cluster = strdup(r->cluster)) ||
            !(ns->node = strdup(r->nodes.v[i])) ||
            !(ns->state = strdup(state)) ||
            (reason && !(ns->reason = strdup(reason)))) {
            server_node_state_free(ns);
            reply_unref(rp);
            log_err("maintenance=%lld: out of memory setting node state",
                    (long long)r->id);
            continue;
        }
        msgq_post(server_queue(), msg_create(SERVER_NODE_STATE, ns,
                                             server_node_state_free, rp));
        reply_unref(r->pending);
        r->pending = rp;
        r->pending_until = 0;
    }
}

void mreq_mark_nodes(struct mreq *r, int on, int wait)
{
    char id[512], why[512];
    struct reply *rp = wait ? reply_create() : NULL;

    if (wait && !rp)
        log_err("maintenance=%lld: out of memory: not waiting for cluster "
                "%s to show its nodes", (long long)r->id, r->cluster);
    snprintf(why, sizeof(why), "loom maintenance %lld: %s", (long long)r->id,
             r->reason);
    for (size_t i = 0; i < r->nodes.n; i++) {
        snprintf(id, sizeof(id), "%s/%s", r->cluster, r->nodes.v[i]);
        infra_maint_mark(id, on ? why : NULL);
    }
    /* shown at once, not at the next poll */
    server_republish(r->cluster, rp);
    if (rp) {
        reply_unref(r->pending);
        r->pending = rp;
        r->pending_until = time(NULL) + MARK_WAIT_S;
    }
}

void mreq_drain_reason(const struct mreq *r, char *buf, size_t len)
{
    snprintf(buf, len, "loom maintenance %lld: %s", (long long)r->id,
             r->reason);
}

void mreq_end_resv(struct mreq *r, int cancel)
{
    struct loom_error err;

    if (r->resv &&
        mreq_resv_op(cancel ? SCHED_RESV_CANCEL : SCHED_RESV_ADJUST, r->resv,
                     0, !cancel, &err) < 0 &&
        err.kind != LOOM_ECONFLICT)
        log_warn("maintenance=%lld: reservation %lld: %s", (long long)r->id,
                 (long long)r->resv, err.message);
}
