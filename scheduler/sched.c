/* sched.c - the scheduler thread: its loop, the job table, commits. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched.h"

#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/store.h"
#include "core/store_jobs.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

#define CYCLE_PERIOD_S 1.0
#define CYCLE_MIN_GAP_S 0.005
#define BATCH_MAX 1024
#define DB_RETRY_S 1.0
#define LAZY_S 10.0
#define LAZY_MAX 512

struct sched S;

int sched_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    size_t n = *cap ? *cap : 64;
    void *nv;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    nv = realloc(*v, n * elem);
    if (!nv)
        return -1;
    memset((char *)nv + *cap * elem, 0, (n - *cap) * elem);
    *v = nv;
    *cap = n;
    return 0;
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
    S.jobs[j->id - 1] = j;
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
    if (j->dirty != 2) /* a submit is shown once it is committed */
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

/* How many lazy entries are due now (the oldest first), at most LAZY_MAX
 * a turn so that no turn grows large. */
static size_t lazy_due(void)
{
    double now = time_mono();
    size_t n = 0;

    while (S.lazy_head + n < S.n_lazy && n < LAZY_MAX &&
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
    S.acks[S.n_acks++] = (struct ack){reply_ref(r), id, status};
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
    if (usage_apply(&S.usage, j, -1) < 0)
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

static int turn_copy(struct commit_batch *b, size_t n_lazy)
{
    b->ins = calloc(S.n_ins + 1, sizeof(*b->ins));
    b->upd = calloc(S.n_dirty + n_lazy + 1, sizeof(*b->upd));
    if (!b->ins || !b->upd)
        return -1;
    for (size_t i = 0; i < n_lazy; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (j && j->dirty == 3 && copy_one(&b->upd[b->n_upd++], j) < 0)
            return -1;
    }
    for (size_t i = 0; i < S.n_ins; i++)
        if (copy_one(&b->ins[b->n_ins++], sched_job(S.ins[i].id)) < 0)
            return -1;
    for (size_t i = 0; i < S.n_dirty; i++) {
        struct job *j = sched_job(S.dirty[i]);
        if (j && j->dirty == 1 && copy_one(&b->upd[b->n_upd++], j) < 0)
            return -1;
    }
    return 0;
}

/* Hand the turn to the committer: the accepted submits, the changed jobs,
 * and the answers and starts that wait for them. One batch in flight at a
 * time, so batches are written in order and the next one grows while the
 * disk flushes this one. */
static void send_turn(void)
{
    struct commit_batch *b;
    struct after *a;

    size_t n_lazy = S.inflight ? 0 : lazy_due();

    if (S.inflight || (!S.n_ins && (time_mono() < S.db_retry_at ||
                                    (!S.n_dirty && !S.n_acks &&
                                     !S.n_to_start && !n_lazy))))
        return;
    b = calloc(1, sizeof(*b));
    a = calloc(1, sizeof(*a));
    if (!b || !a || turn_copy(b, n_lazy) < 0) {
        log_err("out of memory handing a turn to the committer");
        commit_batch_free(b);
        free(a);
        return;
    }
    for (size_t i = 0; i < S.n_dirty; i++)
        if (sched_job(S.dirty[i]) && sched_job(S.dirty[i])->dirty == 1)
            sched_job(S.dirty[i])->dirty = 0;
    S.n_dirty = 0;
    for (size_t i = 0; i < n_lazy; i++) {
        struct job *j = sched_job(S.lazy[S.lazy_head + i].id);
        if (j && j->dirty == 3)
            j->dirty = 0;
    }
    S.lazy_head += n_lazy;
    *a = (struct after){S.ins, S.n_ins, S.acks, S.n_acks, S.to_start,
                        S.n_to_start};
    S.ins = NULL;
    S.n_ins = S.cap_ins = 0;
    S.acks = NULL;
    S.n_acks = S.cap_acks = 0;
    S.to_start = NULL;
    S.n_to_start = S.cap_to_start = 0;
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
    for (size_t i = 0; i < a->n_acks; i++)
        reply_send_error(a->acks[i].reply, &err);
}

static void turn_done(struct commit_batch *b)
{
    struct after *a = b->after;

    S.inflight = NULL;
    for (size_t i = 0; i < a->n_subs; i++)
        sched_insert_done(&a->subs[i], b->ok, &b->err);
    if (!b->ok) {
        turn_failed(b, a);
    } else {
        for (size_t i = 0; i < a->n_acks; i++)
            reply_send(a->acks[i].reply, a->acks[i].status,
                       strdup(S.views[a->acks[i].id - 1]->json));
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
    o = json_pack("{s:b, s:s, s:o, s:b}", "enabled", S.enabled, "policy",
                  "fcfs", "jobs", states, "database_ok", S.n_dirty == 0);
    body = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    reply_send(r, 200, body);
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
        sched_cluster_jobs(m->data);
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
    }
    msg_destroy(m);
}

static int work_left(void)
{
    return S.inflight || S.n_dirty || S.n_acks || S.n_to_start || S.n_ins ||
           S.lazy_head < S.n_lazy;
}

static void *sched_main(void *arg)
{
    double stop_by = 0;

    log_thread_name("sched");
    while (!S.stopping || (work_left() && time_mono() < stop_by)) {
        double now = time_mono(), wait = S.next_cycle - now;
        struct msg *m, *next;

        if (!S.inflight && work_left() && S.db_retry_at - now < wait)
            wait = S.db_retry_at - now;
        if (S.lazy_head < S.n_lazy &&
            S.lazy[S.lazy_head].since + LAZY_S - now < wait)
            wait = S.lazy[S.lazy_head].since + LAZY_S - now;
        if (S.stopping)
            wait = 0.1;
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
        send_turn();
        now = time_mono();
        if (S.enabled && !S.stopping &&
            (now >= S.next_cycle ||
             (S.need_cycle &&
              now >= S.next_cycle - CYCLE_PERIOD_S + CYCLE_MIN_GAP_S))) {
            sched_cycle();
            S.next_cycle = now + CYCLE_PERIOD_S;
            send_turn();
        } else if (now >= S.next_cycle) {
            S.next_cycle = now + CYCLE_PERIOD_S;
        }
        if (S.views_changed) {
            struct jobtab *t = jobtab_builder_publish(&S.tab);
            if (t) {
                snapshot_publish_jobs(t);
                S.views_changed = 0;
            }
        }
    }
    if (work_left())
        log_err("stopping with job changes not committed: the database "
                "stayed unavailable");
    return NULL;
}

int sched_start(struct store *st, int enabled, struct loom_error *err)
{
    S.st = st;
    S.enabled = enabled;
    S.next_id = 1;
    S.q = msgq_create();
    hmap_init(&S.idem);
    hmap_init(&S.native);
    usage_init(&S.usage);
    jobtab_builder_init(&S.tab);
    if (!S.q || !S.tab.work)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (sched_load(err) < 0)
        return -1;
    if (commit_start(S.st, S.q, SCHED_COMMITTED, err) < 0)
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
    commit_stop();
    for (size_t i = 0; i < S.n_to_start; i++)
        server_start_free(S.to_start[i]);
    for (size_t i = 0; i < S.cap; i++) {
        job_destroy(S.jobs[i]);
        jview_unref(S.views[i]);
    }
    free(S.jobs);
    free(S.views);
    free(S.pending);
    free(S.dirty);
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
