/* sched_turn.c - a turn of the scheduler's loop goes to PostgreSQL: the
 * accepted submits, the changed jobs, and the answers and starts that wait
 * for them, handed to the committer; what comes back is answered, started,
 * or kept for the next turn. */
/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

/* Changed jobs a turn writes: keeps a turn short. A wave of starts (a
 * full cluster draining its queue) is thousands of changes at once; 128 a
 * turn made each ~1.5 ms and the submits riding them wait 5-20 ms, 32
 * keeps it ~0.6 ms and still writes some 40,000 changes a second. */
#define UPD_MAX 32
#define LAZY_MIN 32 /* lazy writes a turn takes even when busy */

void sched_ack_later(struct reply *r, int64_t id, int status)
{
    if (sched_grow((void **)&S.acks, &S.cap_acks, S.n_acks + 1, sizeof(*S.acks)) < 0) {
        struct loom_error err;
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(r, &err);
        return;
    }
    S.acks[S.n_acks++] = (struct ack){reply_ref(r), id, status, NULL};
    sched_turn_queued(id);
}

void sched_turn_queued(int64_t id)
{
    struct job *j = id ? sched_job(id) : NULL;

    if (j)
        j->turn = TURN_QUEUED;
}

void sched_ack_body_later(struct reply *r, int status, char *body)
{
    struct loom_error err;

    if (!body || sched_grow((void **)&S.acks, &S.cap_acks, S.n_acks + 1,
                            sizeof(*S.acks)) < 0) {
        free(body);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(r, &err);
        return;
    }
    S.acks[S.n_acks++] = (struct ack){reply_ref(r), 0, status, body};
}

void sched_event(const char *level, const char *kind, const char *subject,
                 const char *fmt, ...)
{
    char msg[1024], stamp[32];
    va_list ap;
    json_t *row;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_msg(strcmp(level, "warn") ? LOG_INFO : LOG_WARNING, "%s: %s",
            subject, msg);
    time_format(time(NULL), stamp);
    if (!S.events)
        S.events = json_array();
    row = json_pack("{s:s, s:s, s:s, s:s, s:s}", "time", stamp, "level",
                    level, "kind", kind, "subject", subject, "message", msg);
    if (!S.events || !row || json_array_append_new(S.events, row) < 0)
        log_err("%s: out of memory; the event above is in this log only",
                subject);
}

/* How many lazy entries are due now (the oldest first), at most max. */
static size_t lazy_due(size_t max)
{
    double now = time_mono();
    size_t n = 0;

    while (S.lazy_head + n < S.n_lazy && n < max &&
           (S.stopping || S.lazy[S.lazy_head + n].since + LAZY_S <= now))
        n++;
    return n;
}

/* What a turn's batch carries back: whom to answer, what to start. */
struct after {
    struct ins *subs;
    size_t n_subs;
    struct ack *acks;
    size_t n_acks;
    struct server_start **starts;
    size_t n_starts;
    int changes; /* the batch writes changes, not only new jobs */
    uint64_t seq; /* the turn's number */
};

static int copy_one(struct commit_ins *c, const struct job *j)
{
    c->view = jview_ref(j->view);
    /* the times the view shows: it is rendered whenever j changes */
    if (j->start_time)
        time_format(j->start_time, c->start_time);
    if (j->end_time)
        time_format(j->end_time, c->end_time);
    if (j->idem_key) {
        c->idem_key = strdup(j->idem_key);
        snprintf(c->idem_hash, sizeof(c->idem_hash), "%s",
                 j->idem_hash ? j->idem_hash : "");
        if (!c->idem_key)
            return -1;
    }
    return 0;
}

/* The turn's new jobs, n_dirty changed and n_lazy lazy ones; and, unless
 * new_only, the reservations and events. */
static int turn_copy(struct commit_batch *b, size_t n_dirty, size_t n_lazy,
                     int new_only)
{
    b->ins = calloc(S.n_ins + 1, sizeof(*b->ins));
    b->upd = calloc(n_dirty + n_lazy + 1, sizeof(*b->upd));
    if (!b->ins || !b->upd)
        return -1;
    /* A job touched lazily again after a turn took it has two entries;
     * once copied (4) its later ones are skipped: a batch names a job
     * once. */
    for (size_t i = 0; i < n_lazy; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (!j || j->dirty != 3)
            continue;
        j->dirty = 4;
        if (copy_one(&b->upd[b->n_upd++], j) < 0)
            return -1;
    }
    for (size_t i = 0; i < S.n_ins; i++) {
        struct commit_ins *c = &b->ins[b->n_ins++];
        if (copy_one(c, sched_job(S.ins[i].id)) < 0)
            return -1;
        if (S.ins[i].m)
            c->reply = reply_ref(S.ins[i].m->reply);
    }
    for (size_t i = 0; i < n_dirty; i++) {
        struct job *j = sched_job(S.dirty[i]);
        if (j && j->dirty == 1 && copy_one(&b->upd[b->n_upd++], j) < 0)
            return -1;
    }
    if (new_only)
        return 0;
    if (S.n_resv_dirty &&
        !(b->resv = calloc(S.n_resv_dirty, sizeof(*b->resv))))
        return -1;
    for (size_t i = 0; i < S.n_resv_dirty; i++) {
        const struct resv *r = sched_resv_find(S.resv_dirty[i]);
        char *doc = r ? resv_render(r) : NULL;
        if (!r)
            continue;
        if (!doc)
            return -1;
        b->resv[b->n_resv++] = (struct store_resv_row){
            .id = r->id, .state = resv_state_name(r->state), .doc = doc};
    }
    if (S.events && json_array_size(S.events)) {
        if (!(b->events = json_dumps(S.events, JSON_COMPACT)))
            return -1;
        json_array_clear(S.events);
    }
    return 0;
}

/* The lazy changes in the window of n that turn_copy marked copied (4):
 * to (3, waiting still) or, once they go, to 0. */
static void lazy_mark(size_t n, int to)
{
    for (size_t i = 0; i < n; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (j && j->dirty == 4)
            j->dirty = to;
    }
}

/* The first n changed jobs go with this turn; the rest wait for the next. */
static void take_dirty(size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (sched_job(S.dirty[i]) && sched_job(S.dirty[i])->dirty == 1)
            sched_job(S.dirty[i])->dirty = 0;
    if (n < S.n_dirty)
        memmove(S.dirty, S.dirty + n, (S.n_dirty - n) * sizeof(*S.dirty));
    S.n_dirty -= n;
}

static int still_dirty(int64_t id)
{
    struct job *j = sched_job(id);
    return j && j->dirty == 1;
}

/* Answers and starts whose job's change waits for a later turn wait with
 * it: nothing is answered or carried out before it is committed. */
static void keep_waiting(struct after *a)
{
    size_t n = 0;

    *a = (struct after){.subs = S.ins, .n_subs = S.n_ins};
    S.ins = NULL;
    S.n_ins = S.cap_ins = 0;
    if (!S.n_dirty) { /* the common case: everything goes */
        a->acks = S.acks;
        a->n_acks = S.n_acks;
        a->starts = S.to_start;
        a->n_starts = S.n_to_start;
        S.acks = NULL;
        S.n_acks = S.cap_acks = 0;
        S.to_start = NULL;
        S.n_to_start = S.cap_to_start = 0;
        return;
    }
    a->acks = malloc((S.n_acks + 1) * sizeof(*a->acks));
    a->starts = malloc((S.n_to_start + 1) * sizeof(*a->starts));
    if (!a->acks || !a->starts) /* all of them wait for the next turn */
        return;
    for (size_t i = 0; i < S.n_acks; i++) {
        if (still_dirty(S.acks[i].id))
            S.acks[n++] = S.acks[i];
        else
            a->acks[a->n_acks++] = S.acks[i];
    }
    S.n_acks = n;
    n = 0;
    for (size_t i = 0; i < S.n_to_start; i++) {
        if (still_dirty(S.to_start[i]->loom_id))
            S.to_start[n++] = S.to_start[i];
        else
            a->starts[a->n_starts++] = S.to_start[i];
    }
    S.n_to_start = n;
}

/* The jobs turn seq names (a new one, a change, an answer) and the
 * reservations it writes stay in memory until it is back. */
static void turn_stamp(const struct commit_batch *b, const struct after *a,
                       uint64_t seq)
{
    struct job *j;

    for (size_t i = 0; i < b->n_upd; i++)
        if ((j = sched_job(b->upd[i].view->id)))
            j->turn = seq;
    for (size_t i = 0; i < a->n_subs; i++)
        if ((j = sched_job(a->subs[i].id)))
            j->turn = seq;
    for (size_t i = 0; i < a->n_acks; i++)
        if (a->acks[i].id && (j = sched_job(a->acks[i].id)))
            j->turn = seq;
    for (size_t i = 0; i < b->n_resv; i++) {
        struct resv *r = sched_resv_find(b->resv[i].id);
        if (r)
            r->turn = seq;
    }
}

/* On a committer thread, once b is written (in the order the batches were
 * handed over): its starts go to the server thread now, not after a hop
 * through the scheduler thread, which then need not wake for the batch
 * at once. Only the batch's own starts are touched (the scheduler thread
 * leaves a batch alone until it is handed back). */
static void turn_written(struct commit_batch *b)
{
    struct after *a = b->after;

    for (size_t i = 0; i < a->n_starts; i++)
        msgq_post(server_queue(),
                  msg_create(SERVER_START_JOB, a->starts[i],
                             server_start_free, NULL));
    a->n_starts = 0;
}

/* Hand the turn to the committer: the accepted submits, the changed jobs,
 * and the answers and starts that wait for them. Up to COMMIT_CONNS
 * batches are written at once, and answered in the order they went; the
 * next one grows while the disk flushes them. A change goes only when no
 * other batch of changes is in flight: two changes of one job (or of a
 * reservation) written at once could commit in the wrong order, and the
 * event log would lose its order. Beside one, a turn takes new jobs only
 * (a new job is in no other batch), and the answers and starts that wait
 * for nothing still dirty. */
void sched_send_turn(void)
{
    struct commit_batch *b;
    struct after *a;
    int new_only = S.changes_inflight;
    size_t n_dirty = new_only ? 0 : S.n_dirty < UPD_MAX ? S.n_dirty : UPD_MAX;
    size_t n_lazy = new_only ? 0 : lazy_due(n_dirty + LAZY_MIN < UPD_MAX ?
                                            UPD_MAX - n_dirty : LAZY_MIN);

    if (S.n_inflight >= commit_conns() || (new_only && !S.n_ins) ||
        (!S.n_ins && (time_mono() < S.db_retry_at ||
                      (!S.n_dirty && !S.n_acks && !S.n_to_start && !n_lazy &&
                       !S.n_resv_dirty && !json_array_size(S.events) &&
                       !sched_doubt_due()))))
        return;
    b = calloc(1, sizeof(*b));
    a = calloc(1, sizeof(*a));
    if (!b || !a || turn_copy(b, n_dirty, n_lazy, new_only) < 0 ||
        sched_doubt_attach(b) < 0) {
        log_err("out of memory handing a turn to the committer");
        lazy_mark(n_lazy, 3);
        commit_batch_free(b);
        free(a);
        return;
    }
    take_dirty(n_dirty);
    if (!new_only)
        S.n_resv_dirty = 0;
    lazy_mark(n_lazy, 0);
    S.lazy_head += n_lazy;
    keep_waiting(a);
    a->seq = ++S.turn_sent;
    turn_stamp(b, a, a->seq);
    a->changes = b->n_upd || b->n_resv || b->events;
    b->after = a;
    b->written = turn_written;
    b->quiet = !a->n_acks; /* its submits the committer answers */
    S.n_inflight++;
    S.changes_inflight |= a->changes;
    commit_post(b);
}

/* A failed turn: what it changed is marked again, its starts wait for the
 * next turn, its answers say the database is unavailable, or why it could
 * not write. */
static void turn_failed(struct commit_batch *b, struct after *a)
{
    struct loom_error err;

    log_warn("commit of %zu new and %zu changed job(s) failed: %s", b->n_ins,
             b->n_upd, b->err.message);
    S.db_retry_at = time_mono() + DB_RETRY_S;
    for (size_t i = 0; i < b->n_upd; i++) {
        struct job *j = sched_job(b->upd[i].view->id);
        if (j && !j->dirty) {
            j->dirty = 0;
            sched_touch(j);
        }
    }
    for (size_t i = 0; i < b->n_resv; i++)
        sched_resv_touch(b->resv[i].id);
    for (size_t i = 0; i < a->n_starts; i++) {
        if (!sched_job(a->starts[i]->loom_id) || /* a refused submit */
            sched_grow((void **)&S.to_start, &S.cap_to_start,
                       S.n_to_start + 1, sizeof(*S.to_start)) < 0) {
            server_start_free(a->starts[i]);
            continue;
        }
        S.to_start[S.n_to_start++] = a->starts[i];
    }
    a->n_starts = 0;
    if (b->err.kind == LOOM_ETEMP) /* up, but the write failed: say why */
        loom_error_set(&err, LOOM_ETEMP, "the database could not store the "
                       "change (%s); it is kept and committed when the "
                       "database can: retry to see it", b->err.message);
    else
        loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable; the change "
                       "is kept and committed when it is back: retry to see "
                       "it");
    for (size_t i = 0; i < a->n_acks; i++) {
        reply_send_error(a->acks[i].reply, &err);
        free(a->acks[i].body);
        a->acks[i].body = NULL;
    }
}

void sched_turn_done(struct commit_batch *b)
{
    struct after *a = b->after;

    S.n_inflight--;
    S.turn_done = a->seq;
    sched_doubt_back(b);
    if (a->changes)
        S.changes_inflight = 0;
    for (size_t i = 0; i < a->n_subs; i++) {
        int64_t id = a->subs[i].id;
        /* changed while its insert was being written: write it again */
        int changed = b->ok && i < b->n_ins && sched_job(id) &&
                      b->ins[i].view != sched_job(id)->view;
        sched_insert_done(&a->subs[i], b->ok, b->in_doubt, &b->err);
        if (changed)
            sched_touch(sched_job(id));
    }
    if (!b->ok) {
        turn_failed(b, a);
        S.release_commits = 1;
    } else {
        for (size_t i = 0; i < a->n_acks; i++) {
            /* its job stays in memory until this turn is back */
            const struct job *j = sched_job(a->acks[i].id);
            reply_send(a->acks[i].reply, a->acks[i].status,
                       a->acks[i].body ? a->acks[i].body
                                       : strdup(j->view->json));
            a->acks[i].body = NULL;
        }
        /* its starts went when it was written (turn_written) */
        for (size_t i = 0; i < b->n_resv; i++) {
            struct resv *r = sched_resv_find(b->resv[i].id);
            if (r) { /* written: its twin follows it */
                r->stored = 1;
                sched_resv_native_sync(r);
            }
        }
    }
    for (size_t i = 0; i < a->n_acks; i++)
        reply_unref(a->acks[i].reply);
    free(a->subs);
    free(a->acks);
    free(a->starts);
    free(a);
    commit_batch_free(b);
}

