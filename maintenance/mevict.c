/* mevict.c - ended maintenance requests leave memory: [maintenance]
 * request_memory_s after it ended a request is let go, and read from
 * PostgreSQL from then on (as an ended job after job_memory_s). A failed
 * request stays while the rules' back-off counts it: until every node of
 * it has had a later request with its action done. Start-up counts the
 * long-ended ones so without loading them (store_maint_load reads them
 * light). */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "core/domain.h"
#include "core/log.h"
#include "maintenance/maint_state.h"

#define EVICT_EVERY_S 1.0 /* how often the ended requests are looked at */

/* a and b have the same action on one node at least. */
static int shares(const struct mreq *a, const struct mreq *b)
{
    if (strcmp(a->action, b->action) || strcmp(a->cluster, b->cluster))
        return 0;
    for (size_t i = 0; i < a->nodes.n; i++)
        for (size_t k = 0; k < b->nodes.n; k++)
            if (!strcmp(a->nodes.v[i], b->nodes.v[k]))
                return 1;
    return 0;
}

/* A later request with r's action on node, done: the rules' back-off
 * counts r's failure there no more. */
static int done_after(const struct mreq *r, size_t from, const char *node)
{
    for (size_t i = from; i < M.n_req; i++) {
        const struct mreq *o = M.req[i];
        if (o->state != MS_DONE || strcmp(o->action, r->action) ||
            strcmp(o->cluster, r->cluster))
            continue;
        for (size_t k = 0; k < o->nodes.n; k++)
            if (!strcmp(o->nodes.v[k], node))
                return 1;
    }
    return 0;
}

/* M.req[i] is failed, and on a node of it the back-off counts it. */
static int failure_counts(size_t i)
{
    const struct mreq *r = M.req[i];

    if (r->state != MS_FAILED)
        return 0;
    for (size_t k = 0; k < r->nodes.n; k++)
        if (!done_after(r, i + 1, r->nodes.v[k]))
            return 1;
    return 0;
}

/* M.req[i] is done, and one of the earlier requests kept (M.req[0..kept))
 * failed where it was done: without it, that failure would count again. */
static int resets_failure(size_t i, size_t kept)
{
    if (M.req[i]->state != MS_DONE)
        return 0;
    for (size_t k = 0; k < kept; k++)
        if (M.req[k]->state == MS_FAILED && shares(M.req[k], M.req[i]))
            return 1;
    return 0;
}

/* Whether M.req[i] stays, M.req[0..kept) being those that stay. */
static int keeps(size_t i, size_t kept, double now)
{
    const struct mreq *r = M.req[i];
    double keep = M.conf.request_memory_s;

    return keep <= 0 || mstate_open(r->state) || r->pending || r->running ||
           (double)r->since + keep > now || failure_counts(i) ||
           resets_failure(i, kept);
}

/* What a request that left memory leaves behind: the count, by state,
 * and the highest id that left. */
static void let_go(int64_t id, enum mstate st)
{
    M.n_gone++;
    maint_evicted_note(id);
    M.gone_by_state[st]++;
    M.req_changed = 1;
}

void mreq_evict(double now)
{
    size_t k = 0;

    if (now < M.next_evict && now > M.next_evict - 2 * EVICT_EVERY_S)
        return;
    M.next_evict = now + EVICT_EVERY_S;
    for (size_t i = 0; i < M.n_req; i++) {
        struct mreq *r = M.req[i];
        if (keeps(i, k, now)) {
            M.req[k++] = r;
            continue;
        }
        let_go(r->id, r->state);
        mreq_destroy(r);
    }
    if (k < M.n_req) {
        M.n_req = k;
        M.open_stale = 1;
    }
}

void mreq_evict_loaded(int64_t id, const char *state)
{
    int st = domain_find(&domain_maint_states, state);

    if (st < 0 || mstate_open((enum mstate)st)) {
        log_err("maintenance=%lld: stored state '%s' is no final one; "
                "skipped", (long long)id, state);
        return;
    }
    let_go(id, (enum mstate)st);
    /* ids go on after it, as after one loaded in full */
    if (id >= M.next_id)
        M.next_id = id + 1;
}
