/* sched.c - the scheduler thread: its loop, the job table, commits. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched.h"

#include <stdlib.h>
#include <string.h>

#include "core/leader.h"
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
#define APPLY_SLICE 256 /* starts and re-rendered views of a cycle's
                           answer applied per turn */

struct sched S;

int sched_grow(void **v, size_t *cap, size_t need, size_t elem)
{
    return vec_grow(v, cap, need, elem, 64);
}

int sched_grow_alike(void **const *arrays, const size_t *elem, size_t n,
                     size_t *cap, size_t need)
{
    size_t c = *cap;

    for (size_t k = 0; k < n; k++) {
        c = *cap; /* each from the same capacity, to the same */
        if (sched_grow(arrays[k], &c, need, elem[k]) < 0)
            return -1;
    }
    *cap = c; /* moved only when all grew */
    return 0;
}

struct job *sched_job(int64_t id)
{
    return id > 0 && (size_t)id <= S.cap ? S.jobs[id - 1] : NULL;
}

int sched_job_room(int64_t id)
{
    void **const by_id[] = {(void **)&S.jobs, (void **)&S.jf,
                            (void **)&S.held_ix, (void **)&S.gone};
    const size_t elem[] = {sizeof(*S.jobs), sizeof(*S.jf),
                           sizeof(*S.held_ix), sizeof(*S.gone)};

    if (sched_grow_alike(by_id, elem, 4, &S.cap, (size_t)id) < 0)
        return -1;
    if (id >= S.next_id)
        S.next_id = id + 1;
    return 0;
}

void sched_native_key(const char *cluster, const char *native_id,
                      char *key, size_t n)
{
    snprintf(key, n, "%s\x1f%s", cluster, native_id);
}

int sched_native_put(const struct job *j)
{
    char key[512];

    if (strcmp(j->source, "cluster") != 0 || !j->cluster || !j->native_id)
        return 0;
    sched_native_key(j->cluster, j->native_id, key, sizeof(key));
    return hmap_put(&S.native, key, (void *)(intptr_t)j->id);
}

int sched_job_add(struct job *j)
{
    if (sched_job_room(j->id) < 0)
        return -1;
    if (!job_state_final(j->state) &&
        sched_grow((void **)&S.live, &S.cap_live, S.n_live + 1,
                   sizeof(*S.live)) < 0)
        return -1;
    S.jobs[j->id - 1] = j;
    S.n_in_memory++;
    if (!job_state_final(j->state))
        S.live[S.n_live++] = j->id;
    if (j->array)
        sched_array_added(j);
    if (j->idem_key) {
        char key[1024];
        sched_idem_key(j, key, sizeof(key));
        if (hmap_put(&S.idem, key, (void *)(intptr_t)j->id) < 0)
            return -1;
    }
    if (sched_native_put(j) < 0)
        return -1;
    sched_view(j);
    return 0;
}

void sched_job_drop(struct job *j)
{
    int64_t id = j->id;

    S.jobs[id - 1] = NULL;
    held_drop(id);
    S.jf[id - 1] = 0;
    S.n_in_memory--;
    jview_unref(j->view);
    j->view = NULL;
    jobtab_builder_clear(&S.tab, id);
    /* published before a later id is committed, which would show it */
    S.views_changed = 1;
    job_destroy(j);
}

/* Keep the job's flags: what a cycle reads instead of the record. */
static void flags_of(struct job *j)
{
    uint8_t *f = &S.jf[j->id - 1];
    uint8_t was = *f;

    *f = (uint8_t)((was & (JF_QUEUED | JF_WATCHED | JF_ENDED)) |
                   (was & JF_QUEUED ? JF_CHANGED : 0) |
                   (job_ready(j) ? JF_PENDING : 0) |
                   (job_holds_nodes(j) ? JF_HOLDS : 0));
    if (*f & JF_HOLDS)
        held_note(j);
    else if (was & JF_HOLDS)
        held_drop(j->id);
    sched_acct_count(j);
    if (j->array_id)
        sched_array_task_note(j);
    sched_depend_note(j);
    if (!(was & JF_ENDED) && job_state_final(j->state))
        sched_evict_note(j);
    if ((was & JF_QUEUED) && (was & JF_PENDING) && !(*f & JF_PENDING))
        S.wq.n_left++;
    else if ((was & JF_QUEUED) && !(was & JF_PENDING) && (*f & JF_PENDING))
        S.wq.n_left--;
}

void sched_view(struct job *j)
{
    struct jview *v = job_view_new(j);

    flags_of(j);
    if (!v) {
        log_err("job=%lld: out of memory rendering the job", (long long)j->id);
        return;
    }
    jview_unref(j->view);
    j->view = v;
    /* a submit is published at once, and shown once it is committed (the
     * committer moves the mark of committed ids) */
    sched_publish_view(j);
}

void sched_publish_view(struct job *j)
{
    if (jobtab_builder_set(&S.tab, jview_ref(j->view)) < 0)
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

void sched_lazy_compact(struct lazy *q, size_t *head, size_t *n)
{
    if (*head > 1024 && *head * 2 > *n) {
        /* drop the taken entries from the front */
        memmove(q, q + *head, (*n - *head) * sizeof(*q));
        *n -= *head;
        *head = 0;
    } else if (*head && *head == *n) {
        *head = *n = 0; /* all taken: start over */
    }
}

void sched_touch_lazy(struct job *j)
{
    sched_view(j);
    if (j->dirty)
        return;
    sched_lazy_compact(S.lazy, &S.lazy_head, &S.n_lazy);
    if (sched_grow((void **)&S.lazy, &S.cap_lazy, S.n_lazy + 1,
                   sizeof(*S.lazy)) < 0) {
        sched_touch(j);
        return;
    }
    j->dirty = 3;
    S.lazy[S.n_lazy++] = (struct lazy){j->id, time_mono()};
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

/* Is the variable of entry kv ("NAME=value") set in env? */
static int env_has(const struct strv *env, const char *kv)
{
    size_t n = strcspn(kv, "=");

    for (size_t i = 0; i < env->n; i++)
        if (!strncmp(env->v[i], kv, n) && env->v[i][n] == '=')
            return 1;
    return 0;
}

/* The job's environment; a task's with its array's variables, which win
 * over the job's own of the same names. */
static int start_env(const struct job *j, struct server_start *s)
{
    struct strv arr = {0};
    int rc = 0;

    if (j->array_id && sched_array_env(j, &arr) < 0)
        rc = -1;
    for (size_t i = 0; rc == 0 && i < j->env.n; i++)
        if (!env_has(&arr, j->env.v[i]))
            rc = strv_push(&s->env, j->env.v[i]);
    for (size_t i = 0; rc == 0 && i < arr.n; i++)
        rc = strv_push(&s->env, arr.v[i]);
    strv_fini(&arr);
    return rc;
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
    s->account = dup_or_null(j->account);
    s->script = dup_or_null(j->script);
    s->queue = dup_or_null(j->req.queue);
    s->workdir = dup_or_null(j->workdir);
    s->output = dup_or_null(j->output);
    s->error = dup_or_null(j->error);
    if (copy_strv(&s->command, &j->command) < 0 || start_env(j, s) < 0 ||
        copy_strv(&s->nodes, &j->nodes) < 0)
        goto error;
    s->cpus_per_node = j->req.cpus_per_node;
    s->gpus = j->req.gpus;
    s->memory_mb = j->req.memory_mb;
    s->walltime_s = j->req.walltime_s;
    s->adopt = adopt;
    s->start_time = j->start_time;
    s->array_id = j->array_id;
    s->array_task = j->array_id ? j->array_task : -1;
    s->priority = j->priority;
    s->no_requeue = j->no_requeue;
    if (j->held_for_loom && j->native_id &&
        !(s->native_id = strdup(j->native_id)))
        goto error;
    if (j->req.reservation) { /* inside its twin in the cluster's system */
        const struct resv *r = sched_resv_find(j->req.reservation);
        if (r && r->native_id && j->cluster &&
            !strcmp(r->cluster, j->cluster) &&
            !(s->reservation = strdup(r->native_id)))
            goto error;
    }
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

static void fairshare_owner(void *arg, const char *owner, double usage,
                            double share)
{
    json_object_set_new(arg, owner, json_pack("{s:f, s:f}", "usage_cpu_s",
                                              usage, "share", share));
}

/* The decayed past usage fair share reads: per owner, at now. */
static json_t *fairshare_json(void)
{
    json_t *owners = json_object();

    if (owners)
        prio_usage_each(S.fs, time_real(), fairshare_owner, owners);
    return json_pack("{s:f, s:o*}", "half_life_s",
                     S.conf.weights.half_life_s, "owners", owners);
}

static void status_reply(struct reply *r)
{
    size_t count[JOB_CANCELLED + 1];
    json_t *o, *states = json_object();
    char *body;

    /* every job, those that left memory too */
    memcpy(count, S.evicted_by_state, sizeof(count));
    for (size_t i = 0; i < S.cap; i++)
        if (S.jobs[i])
            count[S.jobs[i]->state]++;
    for (int s = 0; s <= JOB_CANCELLED; s++)
        json_object_set_new(states, job_state_name(s),
                            json_integer((json_int_t)count[s]));
    o = json_pack("{s:b, s:s, s:o, s:I, s:I, s:I, s:I, s:b, s:{s:I, s:f, "
                  "s:f, s:f, s:{s:f, s:f, s:f}}}", "enabled", S.enabled,
                  "policy", sched_policy_name(&S.conf), "jobs", states,
                  "jobs_in_memory", (json_int_t)S.n_in_memory,
                  "jobs_evicted", (json_int_t)S.n_evicted,
                  "reservations_in_memory", (json_int_t)S.n_resv,
                  "reservations_evicted", (json_int_t)S.n_resv_evicted,
                  "database_ok",
                  S.n_dirty == 0, "cycles", "count", (json_int_t)S.cycles,
                  "last_ms", S.cycle_last_ms, "max_ms", S.cycle_max_ms,
                  "mean_ms", S.cycles ? S.cycle_sum_ms / (double)S.cycles : 0.0,
                  "last_parts_ms", "build", S.cycle_build_ms, "plan",
                  S.cycle_plan_ms, "apply", S.cycle_apply_ms);
    json_object_set_new(o, "fairshare", fairshare_json());
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

/* The next slice of the planner's answer; the cycle ends with the last. */
static void apply_slice(void)
{
    if (!S.apply.m)
        return;
    if (S.enabled && !sched_cycle_apply(S.apply.m->data, APPLY_SLICE))
        return;
    msg_destroy(S.apply.m);
    S.apply.m = NULL;
    S.planning = 0;
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
        S.estimates_fresh = 0;
        waitq_forget_shown(&S.wq); /* an external scheduler may have
                                      changed what jobs show */
        log_info("built-in scheduler %s", S.enabled ? "enabled" : "disabled");
        if (m->reply)
            status_reply(m->reply);
        break;
    case SCHED_STATUS:
        status_reply(m->reply);
        break;
    case SCHED_COMMITTED:
        sched_turn_done(m->data);
        break;
    case SCHED_RESV_CREATE:
        sched_resv_create(m);
        break;
    case SCHED_RESV_CANCEL:
        sched_resv_cancel(m);
        break;
    case SCHED_RESV_ADJUST:
        sched_resv_adjust(m);
        break;
    case SCHED_RESV_NATIVE:
        sched_resv_native_done(m->data);
        break;
    case SCHED_PLANNED:
        if (S.enabled) {
            S.apply.m = m;
            S.apply.at = 0;
            S.apply.position = 0;
            S.apply.ms = S.apply.cpu_ms = 0;
            S.apply.considered = S.apply.started = 0;
            apply_slice();
            return; /* kept until applied */
        }
        S.planning = 0;
        break;
    case SCHED_CONFIG:
        if (((struct sched_conf *)m->data)->policy != S.conf.policy)
            S.wq.reorder = 1; /* by the new policy's order */
        S.conf = *(struct sched_conf *)m->data;
        S.need_cycle = 1;
        S.estimates_fresh = 0; /* a new depth or policy estimates anew */
        /* What jobs show is kept: the next cycle compares it with what it
         * says under the new settings (a depth, a weight), and renders
         * again only the jobs that then show something else. */
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

/* Work that waits for a turn in flight to come back (a free connection,
 * or the end of the changes being written). */
static int work_unsent(void)
{
    return S.n_dirty || S.n_acks || S.n_to_start || S.n_ins ||
           S.n_resv_dirty || json_array_size(S.events);
}

/* News that needs no answer at once is posted quietly (a commit of new
 * jobs, a start's result): the loop takes it with the next message, or
 * at the latest gather_s after it came; at once while work waits for a
 * turn in flight to come back. */
static void gather_set(void)
{
    msgq_set_quiet(S.q, S.conf.gather_s,
                   S.stopping || (S.n_inflight && work_unsent()));
}

static int work_left(void)
{
    return S.n_inflight || S.n_dirty || S.n_acks || S.n_to_start || S.n_ins ||
           S.lazy_head < S.n_lazy || S.partial || S.n_resv_dirty ||
           S.doubt.take.n || S.doubt.drop.n;
}

/* What a turn's changes set off: the dependents of the jobs that changed
 * looked at, the arrays whose tasks changed shown again (which may change
 * what their own dependents see). */
static void settle(void)
{
    for (int round = 0; round < 16 && (S.n_dep_due || S.n_arr_stale);
         round++) {
        sched_depend_run();
        sched_array_views_flush();
    }
}

static void *sched_main(void *arg)
{
    double stop_by = 0;
    int took = 0; /* the last take returned messages */

    log_thread_name("sched");
    while (!S.stopping || (work_left() && time_mono() < stop_by)) {
        /* due retries first: they may call for a cycle */
        double now = time_mono(), later = sched_later_due(now);
        double wait = S.next_cycle - now, gap;
        struct msg *m, *next;
        /* Cycles only while this loomd is the active one. */
        int cycles = S.enabled && leader_may_act();

        gap = 2 * S.cycle_last_ms / 1000;
        if (gap < CYCLE_MIN_GAP_S)
            gap = CYCLE_MIN_GAP_S;
        if (S.planning) /* its answer wakes the loop */
            wait = S.conf.interval_s;
        else if (cycles && S.need_cycle &&
            S.next_cycle - S.conf.interval_s + gap - now < wait)
            wait = S.next_cycle - S.conf.interval_s + gap - now;
        /* a retry after a failed turn; work that waits for a timer of
         * its own (a lazy change) does not make the loop spin */
        if (!S.n_inflight && work_left() && S.db_retry_at > now &&
            S.db_retry_at - now < wait)
            wait = S.db_retry_at - now;
        if (S.lazy_head < S.n_lazy &&
            S.lazy[S.lazy_head].since + LAZY_S - now < wait)
            wait = S.lazy[S.lazy_head].since + LAZY_S - now;
        if (later < wait)
            wait = later;
        if (S.stopping)
            wait = 0.1;
        if (S.partial || S.apply.m)
            wait = 0;
        /* a turn in flight comes back quietly: within gather_s while
         * news comes; when none came, a quiet post is loud to a loop
         * asleep past gather_s (msgq), so a stalled commit does not make
         * the loop spin */
        if (S.n_inflight && took && S.conf.gather_s > 0 &&
            S.conf.gather_s < wait)
            wait = S.conf.gather_s;
        gather_set();
        m = msgq_take(S.q, wait < 0 ? 0 : wait, BATCH_MAX);
        took = m != NULL;
        for (; m; m = next) {
            next = m->next;
            if (m->type == 0) { /* stop: flush for at most 10 s */
                S.stopping = 1;
                stop_by = time_mono() + 10;
                msg_destroy(m);
                continue;
            }
            log_request_set(m->request);
            handle(m);
            log_request_set(NULL);
        }
        partial_slice();
        apply_slice();
        settle();
        /* before the turn goes: its jobs are in the table when the
         * committer marks them committed and answers */
        publish_views();
        /* a failed turn's jobs are gone from the table: the turns written
         * after it may be answered */
        if (S.release_commits && !S.views_changed) {
            S.release_commits = 0;
            commit_release();
        }
        sched_send_turn();
        now = time_mono();
        /* An event's cycle comes at least `gap` after the last one: twice
         * as long as that one took, so cycles take at most a third of the
         * thread. */
        if (cycles && !S.stopping && !S.planning &&
            (now >= S.next_cycle ||
             (S.need_cycle &&
              now >= S.next_cycle - S.conf.interval_s + gap))) {
            S.planning = sched_cycle(now < S.next_cycle);
            S.next_cycle = now + S.conf.interval_s;
        } else if (now >= S.next_cycle && !S.planning) {
            S.next_cycle = now + S.conf.interval_s;
        }
        sched_resv_native_tick();
        sched_resv_evict_tick();
        sched_resv_publish();
        sched_evict_tick();
        publish_views();
    }
    msg_destroy(S.partial); /* only left when the flush timed out */
    S.partial = NULL;
    msg_destroy(S.apply.m);
    S.apply.m = NULL;
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
    hmap_init(&S.accts.ix);
    usage_init(&S.usage);
    jobtab_builder_init(&S.tab);
    if (!S.q || !S.tab.work)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    hmap_init(&S.waiters);
    hmap_init(&S.singles);
    hmap_init(&S.gone_who);
    if (sched_load(err) < 0 || sched_resv_load(err) < 0)
        return -1;
    sched_depend_load();
    settle();
    if (S.enabled) {
        /* the waiting jobs' records read now, not in the first cycle */
        if (waitq_prefill(&S.wq,
                          S.conf.plan.depth ? SCHED_BEYOND_REASON : NULL) < 0)
            log_warn("scheduler: out of memory filling the waiting queue; "
                     "the first cycle fills it");
    }
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
        if (S.jobs[i])
            jview_unref(S.jobs[i]->view);
        job_destroy(S.jobs[i]);
    }
    free(S.jobs);
    free(S.jf);
    free(S.held_ix);
    sched_evict_fini();
    held_fini();
    fabric_current_fini();
    for (size_t i = 0; i < S.n_resv; i++)
        resv_destroy(S.resv[i]);
    free(S.resv);
    free(S.resv_dirty);
    sched_resv_evict_fini();
    strv_fini(&S.resv_polls);
    json_decref(S.events);
    prio_usage_destroy(S.fs);
    free(S.pending);
    free(S.dirty);
    free(S.live);
    free(S.to_start);
    free(S.acks);
    free(S.ins);
    free(S.lazy);
    free(S.later);
    free(S.arr_stale);
    sched_doubt_fini();
    sched_depend_fini();
    sched_patch_fini();
    hmap_fini(&S.idem);
    hmap_fini(&S.native);
    sched_acct_fini();
    usage_fini(&S.usage);
    jobtab_builder_fini(&S.tab);
    msgq_destroy(S.q); /* a cycle's answer left in it borrows the queue */
    waitq_fini(&S.wq);
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
