/* sched_resv_native.c - each Loom reservation made in its cluster's own
 * system too, where the adaptor can (LOOM_CAP_RESERVE), so that jobs
 * submitted to it directly keep off the nodes; removed when the
 * reservation ends, is cancelled or its window moves. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/leader.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

/* After a failure, the next try (seconds). */
#define NATIVE_RETRY_S 30
/* A call without an answer for this long is taken as lost (its answer
 * could not be posted) and asked again: far beyond a pack's time limit. */
#define NATIVE_LOST_S 900

/* Can r's cluster make reservations (as its last published part says)? */
static int cluster_can(const char *cluster)
{
    struct snapshot *snap = snapshot_get();
    struct scluster *c = snap ? snapshot_cluster(snap, cluster) : NULL;
    int can = c && (c->caps & LOOM_CAP_RESERVE);

    snapshot_put(snap);
    return can;
}

static void ask(struct resv *r, int remove)
{
    struct server_resv *q = calloc(1, sizeof(*q));
    char name[32];
    int bad = !q;

    snprintf(name, sizeof(name), "loom-r%lld", (long long)r->id);
    if (q) {
        q->id = r->id;
        q->remove = remove;
        q->start = r->start;
        q->end = r->end;
        bad |= !(q->cluster = strdup(r->cluster)) ||
               !(q->name = strdup(name)) ||
               !(q->purpose = strdup(r->purpose)) ||
               job_set_str(&q->account, r->account) < 0 ||
               job_set_str(&q->native_id, remove ? r->native_id : NULL) < 0;
        for (size_t i = 0; !bad && i < r->nodes.n; i++)
            bad |= strv_push(&q->nodes, r->nodes.v[i]) < 0;
    }
    if (bad) {
        server_resv_free(q);
        log_err("reservation=%lld: out of memory; its twin in cluster=%s "
                "waits for the next try", (long long)r->id, r->cluster);
        return;
    }
    r->native_asked = time(NULL);
    msgq_post(server_queue(),
              msg_create(SERVER_RESV, q, server_resv_free, NULL));
}

void sched_resv_native_sync(struct resv *r)
{
    time_t now = time(NULL);
    int want;

    if ((r->native_asked && now - r->native_asked < NATIVE_LOST_S) ||
        !r->stored || !leader_may_act())
        return;
    want = (r->state == RESV_PLANNED || r->state == RESV_ACTIVE) &&
           r->end > now && r->nodes.n;
    if (!want && !r->native_id) {
        /* Over without one: nothing is owed any more, at once, not at
         * the next retry of a failed one (the event log keeps the
         * failure). */
        if (r->native_error) {
            free(r->native_error);
            r->native_error = NULL;
            sched_resv_touch(r->id);
        }
        return;
    }
    if (now < r->native_retry)
        return;
    if (r->native_id) {
        /* Made for another window (begun early): made again. */
        if (!want || r->native_start != r->start || r->native_end != r->end)
            ask(r, 1);
        return;
    }
    if (cluster_can(r->cluster))
        ask(r, 0);
}

void sched_resv_native_tick(void)
{
    double now = time_mono();

    if (now < S.native_next)
        return;
    S.native_next = now + 1;
    for (size_t i = 0; i < S.n_resv; i++)
        sched_resv_native_sync(S.resv[i]);
}

void sched_resv_native_done(struct sched_resv_native *n)
{
    struct resv *r = sched_resv_find(n->id);
    char subject[64];
    const char *was;

    if (!r)
        return;
    r->native_asked = 0;
    snprintf(subject, sizeof(subject), "reservation %lld", (long long)r->id);
    if (!n->ok) {
        r->native_retry = time(NULL) + NATIVE_RETRY_S;
        if (r->native_error && !strcmp(r->native_error, n->err.message))
            return; /* shown and logged already: tried again later */
        job_set_str(&r->native_error, n->err.message);
        sched_event("warn", "reservation", subject, "%s its reservation "
                    "in the cluster's system failed (tried again every %d "
                    "s): %s", n->remove ? "removing" : "making",
                    NATIVE_RETRY_S, n->err.message);
        sched_resv_touch(r->id);
        return;
    }
    r->native_retry = 0;
    free(r->native_error);
    r->native_error = NULL;
    if (n->remove) {
        was = r->native_id ? r->native_id : "?";
        sched_event("info", "reservation", subject, "cluster %s: its "
                    "reservation %s removed", r->cluster, was);
        free(r->native_id);
        r->native_id = NULL;
        r->native_start = r->native_end = 0;
    } else {
        job_set_str(&r->native_id, n->native_id);
        r->native_start = n->start;
        r->native_end = n->end;
        sched_event("info", "reservation", subject, "cluster %s: made as "
                    "its reservation %s", r->cluster, n->native_id);
    }
    sched_resv_touch(r->id);
}
