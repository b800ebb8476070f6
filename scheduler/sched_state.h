/* sched_state.h - the scheduler thread's own state; private to scheduler/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_SCHED_STATE_H
#define LOOM_SCHEDULER_SCHED_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "adaptors/server.h"
#include "core/hmap.h"
#include "core/snapshot.h"
#include "scheduler/commit.h"
#include "scheduler/fcfs.h"
#include "scheduler/held.h"
#include "scheduler/prio.h"
#include "scheduler/resv.h"
#include "scheduler/sched.h"
#include "scheduler/sched_conf.h"
#include "scheduler/waitq.h"

struct ack {
    struct reply *reply;
    int64_t id;    /* the job whose view is the answer */
    int status;
    char *body;    /* or this answer (taken), when not NULL */
};

struct ins {
    int64_t id;
    struct msg *m; /* the submit to answer, or NULL */
};

/* A job's turn (struct job) while an insert or an answer that waits for
 * the next turn names it: later than any turn. */
#define TURN_QUEUED UINT64_MAX

/* What a cycle asks of every job, a byte per job by id - 1, kept by
 * sched_view: a pass over these stays in the caches, one over the job
 * records does not. */
enum {
    JF_PENDING = 1, /* waiting for the scheduler */
    JF_HOLDS = 2,   /* holds nodes (job_holds_nodes) */
    JF_QUEUED = 4,  /* has an entry in the waiting queue */
    JF_CHANGED = 8, /* changed since its entry was filled */
    JF_WATCHED = 16, /* other jobs depend on it (sched_depend.c) */
    JF_ENDED = 32,  /* ended: waits to leave memory (sched_evict.c) */
};

struct lazy {
    int64_t id;
    double since;
};

/* One account's jobs (sched_acct.c): counted as they change. */
struct sched_acct {
    char *name;
    long own_limit; /* an array's %N ("array=ID"): its running limit */
    long waiting; /* pending and held */
    long running; /* starting, running, suspended */
    double *times; /* the last submits (time_mono), a ring */
    size_t head, n_times, cap_times;
};

struct sched {
    struct msgq *q;
    pthread_t thread;
    struct store *st;
    int enabled;
    int stopping;
    /* jobs by id - 1 (each with its rendered view, job.view) */
    struct job **jobs;
    uint8_t *jf; /* JF_ flags */
    uint32_t *held_ix; /* of a job with JF_HOLDS: its slot (held.c) */
    uint32_t *gone; /* of a job that left memory: its state, and who owns
                       it (sched_evict.c); 0 for any other */
    size_t cap;
    int64_t next_id;
    /* ids of jobs not final when last looked at (compacted as they end) */
    int64_t *live;
    size_t n_live, cap_live;
    unsigned list_gen; /* stamps jobs named by a complete cluster list */
    /* ids of jobs that became pending since the last cycle (which moves
     * them to the waiting queue) */
    int64_t *pending;
    size_t n_pending, cap_pending;
    struct waitq wq;
    /* jobs changed since the last commit */
    int64_t *dirty;
    size_t n_dirty, cap_dirty;
    /* start decisions and answers that wait for the next commit */
    struct server_start **to_start;
    size_t n_to_start, cap_to_start;
    struct ack *acks;
    size_t n_acks, cap_acks;
    /* jobs new in this turn, inserted with the turn's commit: submits (with
     * the message to answer) and jobs found in a cluster (msg NULL) */
    struct ins *ins;
    size_t n_ins, cap_ins;
    struct hmap native; /* "cluster\x1fnative id" -> id of a cluster job */
    struct hmap idem; /* "owner\x1fkey" -> id (intptr_t) */
    struct {
        struct hmap ix; /* name -> index + 1 */
        struct sched_acct *a;
        size_t n, cap;
        size_t n_own; /* entries with an own_limit */
    } accts;
    struct usage usage;
    struct jobtab_builder tab;
    int views_changed;
    int need_cycle;
    double next_cycle;
    double db_retry_at;
    size_t n_inflight;    /* turns being written (at most COMMIT_CONNS) */
    /* turns numbered as they are handed over, and the last one back (they
     * come back in that order): a job named by a later one stays */
    uint64_t turn_sent, turn_done;
    int changes_inflight; /* one of them writes changes, not only new jobs */
    int release_commits;  /* one failed: commit_release once published */
    /* a cluster's job list applied a slice per turn, so that a large one
     * does not hold up submits (the message; NULL when none) */
    struct msg *partial;
    /* changes that may wait (dirty == 3): a job seen running is written
     * with its next change or after LAZY_S; a restart re-attaches it */
    struct lazy *lazy;    /* in the order they were marked */
    size_t lazy_head, n_lazy, cap_lazy;
    /* jobs whose start failed for now, to wait again after START_RETRY_S
     * (since: when it failed), in that order */
    struct lazy *later;
    size_t later_head, n_later, cap_later;
    /* the [scheduler] section, and the decayed usage for fair share */
    struct sched_conf conf;
    struct prio_usage *fs;
    /* reservations by creation; ids from next_resv */
    struct resv **resv;
    size_t n_resv, cap_resv;
    int64_t next_resv;
    int64_t *resv_dirty; /* to write with the next turn */
    size_t n_resv_dirty, cap_resv_dirty;
    int resv_changed; /* publish the list again */
    struct strv resv_polls; /* clusters whose nodes show a reservation that
                               changed: shown again once the list is out */
    size_t n_resv_open; /* planned or active */
    /* of a reservation that left memory (sched_resv_evict.c), by id - 1:
     * its state and purpose; 0 for any other */
    uint8_t *resv_gone;
    size_t cap_resv_gone;
    size_t n_resv_evicted; /* those let go */
    double resv_evict_next; /* when the next look is due (time_mono) */
    unsigned resv_gen; /* bumped by every reservation change */
    /* the estimates jobs show are from a cycle under the present settings,
     * with the reservations of resv_gen estimates_gen: an event's cycle
     * may keep them (sched_cycle) */
    int estimates_fresh;
    unsigned estimates_gen;
    json_t *events; /* rows for the event log, written with the next turn
                       (an array, or NULL) */
    double native_next; /* when sched_resv_native_tick looks again */
    int planning; /* a cycle is with the planner thread, or applied */
    /* the planner's answer being applied (its message, which holds the
     * plan_work; NULL when none), how far, and the time it took so far */
    struct {
        struct msg *m;
        size_t at;
        int position; /* waiting entries passed */
        double ms, cpu_ms; /* wall and CPU time */
        size_t considered, started; /* jobs of the plan, and started */
    } apply;
    /* cycles run, and their times in ms */
    unsigned long cycles;
    double cycle_last_ms, cycle_max_ms, cycle_sum_ms;
    /* the last cycle's parts: building the work, planning, applying */
    double cycle_build_ms, cycle_plan_ms, cycle_apply_ms;
    /* per cluster (snapshot order): nodes before it have no free cpu; valid
     * while usage only grows (reset when a job leaves its nodes) */
    size_t place_first[64];
    /* arrays whose view is rendered again at the end of the turn (a wave
     * of starts changes an array once per task) */
    int64_t *arr_stale;
    size_t n_arr_stale, cap_arr_stale;
    /* dependencies (sched_depend.c): the jobs waiting for each job
     * ("id" -> struct sched_waiters *), the jobs whose dependents are
     * looked at again, and the singleton groups ("owner\x1fname" ->
     * struct sched_single *) */
    struct hmap waiters;
    int64_t *dep_due;
    size_t n_dep_due, cap_dep_due;
    struct hmap singles;
    /* where the apply of a cycle's answer is within an entry of several
     * tasks */
    size_t apply_sub;
    /* ended jobs, in the order they ended (since: their end, wall clock),
     * that leave memory job_memory_s after it (sched_evict.c) */
    struct lazy *ended;
    size_t ended_head, n_ended, cap_ended;
    double evict_next; /* when the next look at them is due (time_mono) */
    double trim_next; /* when memory may next go back (time_mono) */
    size_t trim_from; /* n_evicted when it last went back */
    size_t n_in_memory, n_evicted; /* job records held, and let go */
    size_t evicted_by_state[JOB_CANCELLED + 1]; /* those let go, by state */
    struct hmap gone_who; /* "owner\x1fsubmitted_by" -> index + 1 */
    struct strv gone_owner, gone_by; /* by that index */
    /* new jobs whose commit is in doubt (sched_doubt.c): submits to take
     * back if stored, tasks and cluster jobs to delete if stored */
    struct {
        struct sched_doubt_ids {
            int64_t *v;
            size_t n, cap;
        } take, drop;
        int inflight; /* a batch carries them to the committer */
        double at;    /* no look before (time_mono) */
    } doubt;
};

extern struct sched S;

struct job *sched_job(int64_t id);
/* Make room in the tables by id for job id (and the next id past it).
 * 0, or -1 when out of memory. */
int sched_job_room(int64_t id);
/* Put a job in the table (taken). 0, or -1 when out of memory. */
int sched_job_add(struct job *j);
/* A job its cluster started (source "cluster"): S.native finds it by its
 * cluster and native id from now on. 0 (nothing to do for another job),
 * or -1 when out of memory. */
int sched_native_put(const struct job *j);
/* The key S.native finds a cluster's job by, into key (n bytes). */
void sched_native_key(const char *cluster, const char *native_id,
                      char *key, size_t n);
/* The record leaves the table and the view (published with the next
 * views), and is destroyed. What else names it is the caller's to drop. */
void sched_job_drop(struct job *j);
/* j's Idempotency-Key as S.idem holds it, into key (n bytes): its
 * submitter's (a gateway's for all it submits for others). */
void sched_idem_key(const struct job *j, char *key, size_t n);
/* Re-render the job's view and mark it for the next commit. */
void sched_touch(struct job *j);
void sched_view(struct job *j); /* re-render only */
/* Re-render and mark for a commit that may wait (see struct sched). */
void sched_touch_lazy(struct job *j);
/* A queue of n entries taken from the front up to *head: the taken ones
 * dropped once they are most of it (or all of it). */
void sched_lazy_compact(struct lazy *q, size_t *head, size_t *n);
/* Show the job's current view in the next published table. */
void sched_publish_view(struct job *j);
int sched_pending_push(int64_t id);
/* sched_turn.c */
/* A row for the event log, written with the next turn. */
void sched_event(const char *level, const char *kind, const char *subject,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define DB_RETRY_S 1.0 /* a failed turn's retry, after this */
#define LAZY_S 10.0 /* a lazy change is written at the latest after this */
/* Hand the turn to the committer (when none is in flight and there is
 * something to write or answer). */
void sched_send_turn(void);
/* The committer wrote a turn (or failed to): answer, start, or retry. */
void sched_turn_done(struct commit_batch *b);
/* Queue an answer to send after the next successful commit. */
void sched_ack_later(struct reply *r, int64_t id, int status);
/* Job id (0: none) is named by an insert or an answer waiting for the
 * next turn: it stays in memory until that turn is back. */
void sched_turn_queued(int64_t id);
/* Queue a start for after the next commit (the decision is taken). */
void sched_start_later(struct job *j, int adopt);
/* A job leaves its nodes (final state, or back to pending). */
void sched_release(struct job *j);
int sched_grow(void **v, size_t *cap, size_t need, size_t elem);
/* Grow n parallel arrays (*arrays[k] of elem[k] bytes each) of one
 * capacity *cap to hold need; *cap moves only when all grew. */
int sched_grow_alike(void **const *arrays, const size_t *elem, size_t n,
                     size_t *cap, size_t need);

/* What a start-up load counted: rows read in full, and read light (ended
 * long ago: left in the database). Jobs (sched_update.c) and
 * reservations (sched_resv.c). */
struct load_count {
    size_t n, n_light;
};

/* sched_update.c: a job made from its stored row (document and
 * Idempotency-Key), or NULL when unreadable or out of memory. */
struct job *sched_job_of_row(const struct store_job_row *row);

/* sched_doubt.c */
/* j's insert failed with its commit in doubt: note it before it is
 * forgotten, for a look once the database is back. */
void sched_doubt_note(const struct job *j);
/* Some are noted, a look is due, and no batch carries them. */
int sched_doubt_due(void);
/* When due, hand what is noted to batch b. 0, or -1 out of memory. */
int sched_doubt_attach(struct commit_batch *b);
/* b is back: what it found stored is taken back. */
void sched_doubt_back(struct commit_batch *b);
void sched_doubt_fini(void);

/* sched_ops.c */
/* Accept a submit for this turn's commit (or answer it at once). */
void sched_submit(struct msg *m);
/* Cancel a job for the scheduler's own reasons (a forced maintenance
 * window): no answer to anyone. */
void sched_cancel_job(struct job *j, const char *why);
/* After a turn's commit: show a new job and answer its submitter (ok), or
 * refuse it and forget the job. */
void sched_insert_done(struct ins *in, int ok, int in_doubt,
                       const struct loom_error *cerr);
/* Queue a new job for the turn's commit (it is in the table already). */
int sched_insert_later(int64_t id, struct msg *m);
void sched_job_op(struct msg *m);
/* One operation on job j (a task's own record, or a job that is not an
 * array): 0 (answered, or the answer queued), or -1 with err. */
int sched_job_op_one(struct msg *m, struct job *j, struct sched_job_op *op,
                     struct loom_error *err);
/* Its owner (or the gateway that submitted it for the owner) and an admin
 * control a job; the scheduler role starts any job. */
int sched_may_control(const struct job *j, const struct sched_job_op *op);
/* Users and gateways do not see others' jobs (private_data). */
int sched_hidden_from(const struct job *j, const struct sched_job_op *op);
/* sched_arrayops.c: an operation on an array (op->task < 0) or one of its
 * tasks (op->task >= 0), and a task's view. */
int sched_array_op(struct msg *m, struct job *a, struct sched_job_op *op,
                   struct loom_error *err);
/* sched_patch.c: change a waiting job (PATCH /v1/jobs/{id}). */
int sched_patch(struct msg *m, struct job *j, struct sched_job_op *op,
                struct loom_error *err);
/* Free the requests a change replaced while a cycle was with the planner
 * (after the queue's refresh, whose entries borrowed them). */
void sched_patch_graveyard_free(void);
void sched_patch_fini(void);
/* Drop a job that was never committed from the table and the view. */
void sched_forget(struct job *j);
/* The job ends now with state st (not started: pending or held). */
void sched_finish_now(struct job *j, enum job_state st, const char *why);
/* sched_native.c: a job the cluster reports that Loom did not submit. */
void sched_native_job(const char *cluster, const struct cl_job *c);
/* Loom's job j, which its cluster lost (how: "no longer knows job 42"):
 * back to the queue, counted in requeues, logged and an event, unless its
 * requeue is false or it was requeued REQUEUE_MAX times: 1 when requeued,
 * 0 when the caller is to end it. */
int sched_requeue_lost(struct job *j, const char *how);
/* A complete list lacks these: native jobs end, Loom's are requeued once. */
void sched_missing_jobs(const char *cluster, const struct cl_job_list *l);
/* sched_update.c */
/* Is c, listed under Loom job j's id, the ended submission before j's
 * requeue (the cluster lists it still)? 1 when it is: its news are not
 * j's, and it does not tell that the cluster knows j. 0 otherwise. */
int sched_old_submission(const struct job *j, const struct cl_job *c);
/* Apply at most max more entries of a cluster's job list; 1 when all are
 * applied. A complete list first settles the jobs it no longer names. */
int sched_cluster_jobs(struct sched_cluster_jobs *cj, size_t max);
void sched_started(struct sched_started *st);
/* Begin a cycle (1 when one is under way); its answer comes back as
 * SCHED_PLANNED, applied by sched_cycle_apply. event: an event's cycle,
 * between the periodic ones, which keeps the estimates jobs show from the
 * last periodic cycle while its settings and reservations stand (EASY). */
int sched_cycle(int event);
struct plan_work;
/* Apply the planner's answer a slice at a time, between the loop's turns
 * (a wave of thousands of starts would otherwise hold up every submit
 * behind it): from entry S.apply.at on, at most `most` starts or re-rendered
 * views. 1 when the whole answer is applied (the cycle is counted), or when
 * it is void: a reservation made meanwhile (the next cycle plans again). */
int sched_cycle_apply(struct plan_work *w, size_t most);
/* What a waiting job beyond the planning depth shows as its reason. It
 * names no depth: a reload that changes the depth then renders again only
 * the jobs that cross it, not the whole queue beyond it. */
#define SCHED_BEYOND_REASON "waiting: beyond the planning depth"
/* Checks that need the plan: could any cluster ever run j (0, or -1 with a
 * 422); may j start on these nodes now (0, or -1 with 404/409). */
int sched_feasible(const struct job *j, struct loom_error *err);
int sched_check_start(const struct job *j, const char *cluster,
                      const struct strv *nodes, struct loom_error *err);
/* Give j its cluster and nodes: starting, committed before it is started. */
void sched_assign(struct job *j, const char *cluster, struct strv *nodes_take);
/* Charge a finished job's use to its owner's fair share. */
void sched_charge(const struct job *j);

/* sched_acct.c */
/* Count j for its account as it is now (called with every change). */
void sched_acct_count(struct job *j);
/* j leaves the table: count it no more. */
void sched_acct_forget(struct job *j);
/* j runs as account from now on (placed on a cluster where its identity
 * has another account, or back to waiting): counted for it. */
void sched_acct_move(struct job *j, const char *account);
/* May j be submitted: its priority within max_user_priority (unless
 * staff), its account, VO and gateway under max_pending_jobs and
 * max_submits_per_minute? 0 (the submit is counted), or -1 with a 403 or a
 * 429 (retry_after set). */
int sched_acct_submit_check(struct job *j, struct loom_error *err);
/* Running jobs each account may still start, by account index (a new
 * array of *n; the caller frees it), or NULL when no account has a
 * running limit. */
int *sched_acct_room(size_t *n);
/* May j start now under the running limits of its account, VO and
 * gateway? 1, or 0 with the reason in why. */
int sched_acct_may_start(const struct job *j, char *why, size_t size);
/* The reason a job waits for the running limit of entry ix (its index +
 * 1: an account, a VO or a gateway). */
void sched_acct_why(uint32_t ix, char *why, size_t size);
void sched_acct_fini(void);
/* The entry of array id's limit of limit tasks at once (its index + 1),
 * which its tasks count against; 0 when out of memory. */
uint32_t sched_acct_array(int64_t id, long limit);

/* sched_evict.c: ended jobs leave memory */
/* j changed: an ended job is noted to leave memory job_memory_s after its
 * end (called by sched_view with its flags). */
void sched_evict_note(struct job *j);
/* Let go of the ended jobs whose time in memory is over. */
void sched_evict_tick(void);
/* Did job id leave memory? 1 with its state and, when not NULL, its owner
 * and submitter (borrowed until sched_evict_fini); 0 otherwise. */
int sched_gone(int64_t id, enum job_state *st, const char **owner,
               const char **submitted_by);
struct store_job_row;
/* Start-up read job row light (store_jobs_load): it ended long ago and is
 * noted as gone, as if it had left memory now. 0, or -1 when out of
 * memory. */
int sched_evict_loaded(const struct store_job_row *row);
void sched_evict_fini(void);
/* sched_depend.c: job id leaves memory: what watched it is let go. */
void sched_depend_forget(int64_t id);

/* sched_array.c: job arrays */
/* An array came into the table (submitted or loaded): its limit's entry. */
void sched_array_added(struct job *a);
/* A record of its own for the task at ordinal ord of array a (pending, or
 * held when the array's tasks are), in the table and queued for the turn's
 * insert; NULL when out of memory. */
struct job *sched_array_split(struct job *a, long ord);
/* The ordinal of a's next task to start (the first without a record), or
 * -1 when every task has one. */
long sched_array_next(const struct job *a);
/* A task's insert failed (t leaves the table): its array stands for it
 * again. */
void sched_array_unsplit(struct job *t);
/* A loaded task joins its array's bookkeeping. */
void sched_array_link(struct job *t);
/* Count task t as it is now (from every change of its view); its array's
 * state follows. */
void sched_array_task_note(struct job *t);
/* The array's view is rendered again at the end of the turn. */
void sched_array_view_later(struct job *a);
void sched_array_views_flush(void);
/* The state of array a as a whole, from its tasks. */
enum job_state sched_array_state(const struct job *a);
/* The whole array: cancel every task, or hold or release those that wait.
 * 0, or -1 with a 409 when there is nothing to do. why: who did it. */
int sched_array_cancel(struct job *a, const char *why, struct loom_error *err);
int sched_array_hold(struct job *a, int hold, const char *why,
                     struct loom_error *err);
/* The variables a task gets (LOOM_, SLURM_, SGE_ and PBS_ array ids) into
 * env. 0, or -1 when out of memory. */
int sched_array_env(const struct job *t, struct strv *env);
/* Every task record of a, in ordinal order: fn(t, arg). */
void sched_array_each(struct job *a, void (*fn)(struct job *t, void *arg),
                      void *arg);

/* sched_depend.c: dependencies */
/* May j (a new job, or one changing its dependency to deps) wait for the
 * jobs deps names: each exists, is seen by j's owner, and (changing)
 * waits for j neither? 0, or -1 with a 400 on field "dependency". */
int sched_depend_check(const struct job *j, const struct dep_list *deps,
                       struct loom_error *err);
/* j's dependencies are registered and looked at (sets dep_wait and the
 * reason; a dependency never met ends j under kill_invalid_depend). */
void sched_depend_add(struct job *j);
/* j's view changed: its dependents are looked at again when what they see
 * of it changed (from every change of its view). */
void sched_depend_note(struct job *j);
/* Look at the dependents of the jobs that changed (each turn). */
void sched_depend_run(void);
/* Look at j's dependencies again (released, or changed). */
void sched_depend_eval(struct job *j);
/* May j start now, as far as its singleton goes? 1, or 0 (it waits again,
 * with the reason). */
int sched_depend_may_start(struct job *j);
/* After a load: every job's dependencies registered and looked at. */
void sched_depend_load(void);
void sched_depend_fini(void);

/* sched_resv_why.c */
struct fabric;
/* Could cluster c of f ever give rq its count of nodes with its features?
 * 0, or -1 with a 422 naming the count and the cluster's nodes, or the
 * feature no node has. Named nodes always could. */
int sched_resv_never(const struct fabric *f, size_t c,
                     const struct resv_req *rq, struct loom_error *err);
/* Say in why (size bytes, cut to fit) what holds the nodes rq wants over
 * [start, end): jobs and reservations with their nodes and until when,
 * nodes that are down, drained or busy beside Loom; and, for named nodes,
 * that "force" takes the window anyway. */
void sched_resv_in_way(const struct fabric *f, size_t c,
                       const struct resv_req *rq, double start, double end,
                       char *why, size_t size);

/* sched_resv_native.c: each reservation's twin in its cluster's system
 * made, or removed, as the reservation is (docs/internals/planner.md). */
/* Make or remove r's twin as r is now, if r was written once; no adaptor
 * call when one is under way. */
void sched_resv_native_sync(struct resv *r);
/* Once a second: sync every reservation (retries, a cluster that became
 * able to, the active loomd after a takeover). */
void sched_resv_native_tick(void);
/* A SERVER_RESV's answer. */
void sched_resv_native_done(struct sched_resv_native *n);

/* sched_resv_evict.c: ended reservations leave memory */
/* Let go of the ended reservations whose time in memory is over. */
void sched_resv_evict_tick(void);
/* Did reservation id leave memory? 1 with its state and whether it is a
 * maintenance one; 0 otherwise. */
int sched_resv_gone(int64_t id, enum resv_state *st, int *maint);
struct store_resv_row;
/* Start-up read reservation row light (store_resv_load): it ended long
 * ago and is noted as gone, as if it had left memory at the first look.
 * 0, or -1 when out of memory. */
int sched_resv_evict_loaded(const struct store_resv_row *row);
void sched_resv_evict_fini(void);

/* sched_resv.c */
void sched_resv_create(struct msg *m);
void sched_resv_cancel(struct msg *m);
void sched_resv_adjust(struct msg *m);
void sched_resv_tick(time_t now); /* planned -> active -> done */
void sched_resv_publish(void);
void sched_resv_touch(int64_t id); /* write, show and plan it again */
void sched_ack_body_later(struct reply *r, int status, char *body_take);
struct resv *sched_resv_find(int64_t id);
int sched_resv_load(struct loom_error *err);
/* Place a just-submitted job now when nothing older waits (its insert then
 * carries the decision). */
void sched_place_now(struct job *j);
/* A job leaves its cluster and waits again (why says so). */
void sched_to_pending(struct job *j, const char *why);
/* The same, after a start that failed for now (the cluster's system is
 * unreachable, its disk is full): the job is planned again only after
 * START_RETRY_S, not at the next cycle, which an event may bring at once
 * and which would try it again and again while the cause lasts. */
void sched_to_pending_later(struct job *j, const char *why);
#define START_RETRY_S 2.0
/* Put the jobs whose START_RETRY_S passed back into the waiting queue;
 * the seconds until the next one is due (a large number when none is). */
double sched_later_due(double now);
/* The job ended: state, times, exit code from c (may be NULL). */
void sched_set_final(struct job *j, const struct cl_job *c,
                     enum job_state st);
int sched_load(struct loom_error *err);

#endif
