/* sched.c - the scheduler thread: its loop, the job table, commits. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/store.h"
#include "core/store_jobs.h"
#include "core/timeutil.h"
#include "core/vec.h"
#include "scheduler/planner.h"
#include "scheduler/sched_state.h"

#define CYCLE_MIN_GAP_S 0.005
#define BATCH_MAX 1024
#define SLICE 512 /* cluster job list entries applied per turn */
#define DB_RETRY_S 1.0
#define LAZY_S 10.0
#define UPD_MAX 128 /* changed jobs a turn writes: keeps a turn short */
#define LAZY_MIN 32 /* lazy writes a turn takes even when busy */

struct sched S;

int sched_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    return vec_grow(v, cap, need, elem, 64);
}

struct job *sched_job(int64_t id)
{
    return id > 0 && (size_t)id <= S.cap ? S.jobs[id - 1] : NULL;
}

int sched_job_add(struct job *j)
{
    size_t cap = S.cap;

    if (sched_grow((void **)&S.jobs, &cap, (size_t)j->id, sizeof(*S.jobs)) < 0)
        return -1;
    cap = S.cap;
    if (sched_grow((void **)&S.views, &cap, (size_t)j->id, sizeof(*S.views)) < 0)
        return -1;
    S.cap = cap;
    if (!job_state_final(j->state) &&
        sched_grow((void **)&S.live, &S.cap_live, S.n_live + 1,
                   sizeof(*S.live)) < 0)
        return -1;
    S.jobs[j->id - 1] = j;
    if (!job_state_final(j->state))
        S.live[S.n_live++] = j->id;
    if (j->id >= S.next_id)
        S.next_id = j->id + 1;
    if (j->idem_key) {
        char key[512];
        snprintf(key, sizeof(key), "%s\x1f%s", j->owner, j->idem_key);
        if (hmap_put(&S.idem, key, (void *)(intptr_t)j->id) < 0)
            return -1;
    }
    if (!strcmp(j->source, "cluster") && j->cluster && j->native_id) {
        char key[512];
        snprintf(key, sizeof(key), "%s\x1f%s", j->cluster, j->native_id);
        if (hmap_put(&S.native, key, (void *)(intptr_t)j->id) < 0)
            return -1;
    }
    sched_view(j);
    return 0;
}

void sched_view(struct job *j)
{
    struct jview *v = jview_create(j->id, job_state_name(j->state), j->owner,
                                   j->cluster, job_render(j));

    if (!v) {
        log_err("job=%lld: out of memory rendering the job", (long long)j->id);
        return;
    }
    jview_unref(S.views[j->id - 1]);
    S.views[j->id - 1] = v;
    /* a submit is published at once, and shown once it is committed (the
     * committer moves the mark of committed ids) */
    sched_publish_view(j);
}

void sched_publish_view(struct job *j)
{
    if (jobtab_builder_set(&S.tab, jview_ref(S.views[j->id - 1])) < 0)
        log_err("job=%lld: out of memory publishing the job",
                (long long)j->id);
    S.views_changed = 1;
}

void sched_touch(struct job *j)
{
    sched_view(j);
    if (j->dirty == 3)
        j->dirty = 0; /* now urgent: its lazy entry is skipped */
    if (j->dirty)
        return;
    if (sched_grow((void **)&S.dirty, &S.cap_dirty, S.n_dirty + 1,
             sizeof(*S.dirty)) < 0) {
        log_err("job=%lld: out of memory; the change stays in memory only",
                (long long)j->id);
        return;
    }
    j->dirty = 1;
    S.dirty[S.n_dirty++] = j->id;
}

void sched_touch_lazy(struct job *j)
{
    sched_view(j);
    if (j->dirty)
        return;
    if (S.lazy_head > 1024 && S.lazy_head * 2 > S.n_lazy) {
        /* drop the taken entries from the front */
        memmove(S.lazy, S.lazy + S.lazy_head,
                (S.n_lazy - S.lazy_head) * sizeof(*S.lazy));
        S.n_lazy -= S.lazy_head;
        S.lazy_head = 0;
    } else if (S.lazy_head && S.lazy_head == S.n_lazy) {
        S.lazy_head = S.n_lazy = 0; /* all taken: start over */
    }
    if (sched_grow((void **)&S.lazy, &S.cap_lazy, S.n_lazy + 1,
                   sizeof(*S.lazy)) < 0) {
        sched_touch(j);
        return;
    }
    j->dirty = 3;
    S.lazy[S.n_lazy++] = (struct lazy){j->id, time_mono()};
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

int sched_pending_push(int64_t id)
{
    if (sched_grow((void **)&S.pending, &S.cap_pending, S.n_pending + 1,
             sizeof(*S.pending)) < 0)
        return -1;
    S.pending[S.n_pending++] = id;
    S.need_cycle = 1;
    return 0;
}

void sched_ack_later(struct reply *r, int64_t id, int status)
{
    if (sched_grow((void **)&S.acks, &S.cap_acks, S.n_acks + 1, sizeof(*S.acks)) < 0) {
        struct loom_error err;
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(r, &err);
        return;
    }
    S.acks[S.n_acks++] = (struct ack){reply_ref(r), id, status, NULL};
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

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int copy_strv(struct strv *dst, const struct strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (strv_push(dst, src->v[i]) < 0)
            return -1;
    return 0;
}

void sched_start_later(struct job *j, int adopt)
{
    struct server_start *s = calloc(1, sizeof(*s));

    if (!s || sched_grow((void **)&S.to_start, &S.cap_to_start, S.n_to_start + 1,
                   sizeof(*S.to_start)) < 0)
        goto error;
    s->cluster = dup_or_null(j->cluster);
    s->loom_id = j->id;
    s->name = dup_or_null(j->name);
    s->owner = dup_or_null(j->owner);
    s->script = dup_or_null(j->script);
    s->queue = dup_or_null(j->req.queue);
    if (copy_strv(&s->command, &j->command) < 0 ||
        copy_strv(&s->env, &j->env) < 0 || copy_strv(&s->nodes, &j->nodes) < 0)
        goto error;
    s->cpus_per_node = j->req.cpus_per_node;
    s->gpus = j->req.gpus;
    s->memory_mb = j->req.memory_mb;
    s->walltime_s = j->req.walltime_s;
    s->adopt = adopt;
    s->start_time = j->start_time;
    if (j->held_for_loom && j->native_id &&
        !(s->native_id = strdup(j->native_id)))
        goto error;
    S.to_start[S.n_to_start++] = s;
    return;
error:
    log_err("job=%lld: out of memory queueing its start", (long long)j->id);
    server_start_free(s);
}

/* Nodes j leaves have room again: move the placement hint back to them. */
static void hint_back(const struct job *j)
{
    struct snapshot *snap = snapshot_get();

    for (size_t ci = 0; snap && ci < snap->n_clusters && ci < 64; ci++) {
        struct scluster *c = snap->clusters[ci];
        if (!j->cluster || strcmp(c->name, j->cluster) != 0)
            continue;
        for (size_t i = 0; i < j->nodes.n; i++) {
            struct snode *n = scluster_node(c, j->nodes.v[i]);
            size_t idx = n ? (size_t)(n - c->nodes) : 0;
            if (idx < S.place_first[ci])
                S.place_first[ci] = idx;
        }
    }
    snapshot_put(snap);
}

void sched_release(struct job *j)
{
    hint_back(j);
    /* Loom's usage holds its own jobs only (and the native ones it
     * started); the cluster reports the others. */
    if ((strcmp(j->source, "cluster") || j->held_for_loom) &&
        usage_apply(&S.usage, j, -1) < 0)
        log_err("job=%lld: out of memory releasing its nodes",
                (long long)j->id);
    S.need_cycle = 1;
}

/* What a turn's batch carries back: whom to answer, what to start. */
struct after {
    struct ins *subs;
    size_t n_subs;
    struct ack *acks;
    size_t n_acks;
    struct server_start **starts;
    size_t n_starts;
};

static int copy_one(struct commit_ins *c, const struct job *j)
{
    c->view = jview_ref(S.views[j->id - 1]);
    if (j->idem_key) {
        c->idem_key = strdup(j->idem_key);
        memcpy(c->idem_hash, j->idem_hash, sizeof(c->idem_hash));
        if (!c->idem_key)
            return -1;
    }
    return 0;
}

static int turn_copy(struct commit_batch *b, size_t n_dirty, size_t n_lazy)
{
    b->ins = calloc(S.n_ins + 1, sizeof(*b->ins));
    b->upd = calloc(n_dirty + n_lazy + 1, sizeof(*b->upd));
    if (!b->ins || !b->upd)
        return -1;
    for (size_t i = 0; i < n_lazy; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (j && j->dirty == 3 && copy_one(&b->upd[b->n_upd++], j) < 0)
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
            r->id, resv_state_name(r->state), doc};
    }
    return 0;
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

/* Hand the turn to the committer: the accepted submits, the changed jobs,
 * and the answers and starts that wait for them. One batch in flight at a
 * time, so batches are written in order and the next one grows while the
 * disk flushes this one. */
static void send_turn(void)
{
    struct commit_batch *b;
    struct after *a;

    size_t n_dirty = S.n_dirty < UPD_MAX ? S.n_dirty : UPD_MAX;
    size_t n_lazy = S.inflight ? 0 : lazy_due(n_dirty + LAZY_MIN < UPD_MAX ?
                                              UPD_MAX - n_dirty : LAZY_MIN);

    if (S.inflight || (!S.n_ins && (time_mono() < S.db_retry_at ||
                                    (!S.n_dirty && !S.n_acks &&
                                     !S.n_to_start && !n_lazy &&
                                     !S.n_resv_dirty))))
        return;
    b = calloc(1, sizeof(*b));
    a = calloc(1, sizeof(*a));
    if (!b || !a || turn_copy(b, n_dirty, n_lazy) < 0) {
        log_err("out of memory handing a turn to the committer");
        commit_batch_free(b);
        free(a);
        return;
    }
    take_dirty(n_dirty);
    S.n_resv_dirty = 0;
    for (size_t i = 0; i < n_lazy; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (j && j->dirty == 3)
            j->dirty = 0;
    }
    S.lazy_head += n_lazy;
    keep_waiting(a);
    b->after = a;
    S.inflight = b;
    commit_post(b);
}

/* A failed turn: what it changed is marked again, its starts wait for the
 * next turn, its answers say the database is unavailable. */
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
    loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable; the change "
                   "is kept and committed when it is back: retry to see it");
    for (size_t i = 0; i < a->n_acks; i++) {
        reply_send_error(a->acks[i].reply, &err);
        free(a->acks[i].body);
        a->acks[i].body = NULL;
    }
}

static void turn_done(struct commit_batch *b)
{
    struct after *a = b->after;

    S.inflight = NULL;
    for (size_t i = 0; i < a->n_subs; i++) {
        int64_t id = a->subs[i].id;
        /* changed while its insert was being written: write it again */
        int changed = b->ok && i < b->n_ins && sched_job(id) &&
                      b->ins[i].view != S.views[id - 1];
        sched_insert_done(&a->subs[i], b->ok, &b->err);
        if (changed)
            sched_touch(sched_job(id));
    }
    if (!b->ok) {
        turn_failed(b, a);
    } else {
        for (size_t i = 0; i < a->n_acks; i++) {
            reply_send(a->acks[i].reply, a->acks[i].status,
                       a->acks[i].body ? a->acks[i].body
                                       : strdup(S.views[a->acks[i].id - 1]->json));
            a->acks[i].body = NULL;
        }
        for (size_t i = 0; i < a->n_starts; i++)
            msgq_post(server_queue(),
                      msg_create(SERVER_START_JOB, a->starts[i],
                                 server_start_free, NULL));
    }
    for (size_t i = 0; i < a->n_acks; i++)
        reply_unref(a->acks[i].reply);
    free(a->subs);
    free(a->acks);
    free(a->starts);
    free(a);
    commit_batch_free(b);
}

static void status_reply(struct reply *r)
{
    size_t count[JOB_CANCELLED + 1] = {0};
    json_t *o, *states = json_object();
    char *body;

    for (size_t i = 0; i < S.cap; i++)
        if (S.jobs[i])
            count[S.jobs[i]->state]++;
    for (int s = 0; s <= JOB_CANCELLED; s++)
        json_object_set_new(states, job_state_name(s),
                            json_integer((json_int_t)count[s]));
    o = json_pack("{s:b, s:s, s:o, s:b, s:{s:I, s:f, s:f, s:f}}", "enabled",
                  S.enabled, "policy", sched_policy_name(&S.conf), "jobs",
                  states, "database_ok", S.n_dirty == 0, "cycles", "count",
                  (json_int_t)S.cycles, "last_ms", S.cycle_last_ms, "max_ms",
                  S.cycle_max_ms, "mean_ms",
                  S.cycles ? S.cycle_sum_ms / (double)S.cycles : 0.0);
    body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4));
    json_decref(o);
    reply_send(r, 200, body);
}

static void finish_partial(void)
{
    if (S.partial) {
        sched_cluster_jobs(S.partial->data, (size_t)-1);
        msg_destroy(S.partial);
        S.partial = NULL;
    }
}

static void partial_slice(void)
{
    if (S.partial && sched_cluster_jobs(S.partial->data, SLICE)) {
        msg_destroy(S.partial);
        S.partial = NULL;
    }
}

static void handle(struct msg *m)
{
    switch (m->type) {
    case SCHED_SUBMIT:
        sched_submit(m);
        return; /* answered after the commit */
    case SCHED_JOB_OP:
        sched_job_op(m);
        break;
    case SCHED_CLUSTER_JOBS:
        finish_partial(); /* lists apply in the order they came */
        if (!sched_cluster_jobs(m->data, SLICE)) {
            S.partial = m;
            return;
        }
        break;
    case SCHED_STARTED:
        sched_started(m->data);
        break;
    case SCHED_ENABLE:
        S.enabled = (int)(intptr_t)m->data;
        S.need_cycle = 1;
        log_info("built-in scheduler %s", S.enabled ? "enabled" : "disabled");
        if (m->reply)
            status_reply(m->reply);
        break;
    case SCHED_STATUS:
        status_reply(m->reply);
        break;
    case SCHED_COMMITTED:
        turn_done(m->data);
        break;
    case SCHED_RESV_CREATE:
        sched_resv_create(m);
        break;
    case SCHED_RESV_CANCEL:
        sched_resv_cancel(m);
        break;
    case SCHED_PLANNED:
        S.planning = 0;
        if (S.enabled)
            sched_cycle_done(m->data);
        break;
    case SCHED_CONFIG:
        S.conf = *(struct sched_conf *)m->data;
        S.need_cycle = 1;
        log_info("scheduler: policy %s, depth %zu, cycle every %.3g s",
                 sched_policy_name(&S.conf), S.conf.plan.depth,
                 S.conf.interval_s);
        break;
    }
    msg_destroy(m);
}

static void publish_views(void)
{
    struct jobtab *t;

    if (!S.views_changed)
        return;
    if ((t = jobtab_builder_publish(&S.tab))) {
        snapshot_publish_jobs(t);
        S.views_changed = 0;
    }
}

static int work_left(void)
{
    return S.inflight || S.n_dirty || S.n_acks || S.n_to_start || S.n_ins ||
           S.lazy_head < S.n_lazy || S.partial || S.n_resv_dirty;
}

static void *sched_main(void *arg)
{
    double stop_by = 0;

    log_thread_name("sched");
    while (!S.stopping || (work_left() && time_mono() < stop_by)) {
        double now = time_mono(), wait = S.next_cycle - now, gap;
        struct msg *m, *next;

        gap = 2 * S.cycle_last_ms / 1000;
        if (gap < CYCLE_MIN_GAP_S)
            gap = CYCLE_MIN_GAP_S;
        if (S.planning) /* its answer wakes the loop */
            wait = S.conf.interval_s;
        else if (S.enabled && S.need_cycle &&
            S.next_cycle - S.conf.interval_s + gap - now < wait)
            wait = S.next_cycle - S.conf.interval_s + gap - now;
        if (!S.inflight && work_left() && S.db_retry_at - now < wait)
            wait = S.db_retry_at - now;
        if (S.lazy_head < S.n_lazy &&
            S.lazy[S.lazy_head].since + LAZY_S - now < wait)
            wait = S.lazy[S.lazy_head].since + LAZY_S - now;
        if (S.stopping)
            wait = 0.1;
        if (S.partial)
            wait = 0;
        m = msgq_take(S.q, wait < 0 ? 0 : wait, BATCH_MAX);
        for (; m; m = next) {
            next = m->next;
            if (m->type == 0) { /* stop: flush for at most 10 s */
                S.stopping = 1;
                stop_by = time_mono() + 10;
                msg_destroy(m);
                continue;
            }
            handle(m);
        }
        partial_slice();
        /* before the turn goes: its jobs are in the table when the
         * committer marks them committed and answers */
        publish_views();
        send_turn();
        now = time_mono();
        /* An event's cycle comes at least `gap` after the last one: twice
         * as long as that one took, so cycles take at most a third of the
         * thread. */
        if (S.enabled && !S.stopping && !S.planning &&
            (now >= S.next_cycle ||
             (S.need_cycle &&
              now >= S.next_cycle - S.conf.interval_s + gap))) {
            S.planning = sched_cycle();
            S.next_cycle = now + S.conf.interval_s;
        } else if (now >= S.next_cycle && !S.planning) {
            S.next_cycle = now + S.conf.interval_s;
        }
        sched_resv_publish();
        publish_views();
    }
    msg_destroy(S.partial); /* only left when the flush timed out */
    S.partial = NULL;
    if (work_left())
        log_err("stopping with job changes not committed: the database "
                "stayed unavailable");
    return NULL;
}

int sched_start(struct store *st, int enabled, const struct sched_conf *conf,
                struct loom_error *err)
{
    S.st = st;
    S.enabled = enabled;
    S.conf = *conf;
    S.next_id = 1;
    S.next_resv = 1;
    S.fs = prio_usage_create(conf->weights.half_life_s);
    if (!S.fs)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    S.q = msgq_create();
    hmap_init(&S.idem);
    hmap_init(&S.native);
    usage_init(&S.usage);
    jobtab_builder_init(&S.tab);
    if (!S.q || !S.tab.work)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (sched_load(err) < 0 || sched_resv_load(err) < 0)
        return -1;
    jobs_committed_set(S.next_id - 1);
    sched_resv_publish();
    if (commit_start(S.st, S.q, SCHED_COMMITTED, err) < 0 ||
        planner_start(S.q, SCHED_PLANNED, err) < 0)
        return -1;
    S.st = NULL; /* the committer's now */
    snapshot_publish_jobs(jobtab_builder_publish(&S.tab));
    S.views_changed = 0;
    S.need_cycle = 1;
    if (pthread_create(&S.thread, NULL, sched_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "scheduler thread");
    return 0;
}

void sched_stop(void)
{
    if (!S.q)
        return;
    msgq_post(S.q, msg_create(0, NULL, NULL, NULL));
    pthread_join(S.thread, NULL);
    planner_stop();
    commit_stop();
    for (size_t i = 0; i < S.n_to_start; i++)
        server_start_free(S.to_start[i]);
    for (size_t i = 0; i < S.cap; i++) {
        job_destroy(S.jobs[i]);
        jview_unref(S.views[i]);
    }
    free(S.jobs);
    free(S.views);
    for (size_t i = 0; i < S.n_resv; i++)
        resv_destroy(S.resv[i]);
    free(S.resv);
    free(S.resv_dirty);
    prio_usage_destroy(S.fs);
    free(S.pending);
    free(S.dirty);
    free(S.live);
    free(S.to_start);
    free(S.acks);
    free(S.ins);
    free(S.lazy);
    hmap_fini(&S.idem);
    hmap_fini(&S.native);
    usage_fini(&S.usage);
    jobtab_builder_fini(&S.tab);
    msgq_destroy(S.q);
    memset(&S, 0, sizeof(S));
}

struct msgq *sched_queue(void)
{
    return S.q;
}

void sched_cluster_jobs_free(void *p)
{
    struct sched_cluster_jobs *cj = p;

    if (!cj)
        return;
    free(cj->cluster);
    cl_job_list_fini(&cj->list);
    free(cj);
}

void sched_started_free(void *p)
{
    struct sched_started *st = p;

    if (!st)
        return;
    start_result_fini(&st->res);
    free(st);
}
