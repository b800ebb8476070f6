/* maint_state.h - the maintenance thread's own state; private to its
 * files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_MAINTENANCE_MAINT_STATE_H
#define LOOM_MAINTENANCE_MAINT_STATE_H

#include <jansson.h>
#include <pthread.h>

#include "core/hmap.h"
#include "core/snapshot.h"
#include "core/store.h"
#include "maintenance/maint.h"
#include "maintenance/maint_conf.h"
#include "maintenance/mreq.h"

/* A node with a goal or reports ("cluster/name"). */
struct gnode {
    char *id;
    json_t *goal;     /* object, or NULL */
    time_t goal_time;
    json_t *reports;  /* object: attribute -> {"value": v, "time": epoch} */
    json_t *mm;       /* object: attribute -> true, its mismatches */
};

/* One attribute of one node that differs from its goal. */
struct mism {
    char *node, *attr;
    json_t *goal, *actual; /* actual NULL: unknown */
    time_t since;
    const struct maint_rule *rule; /* the rule that covers it, or NULL */
    double retry_at; /* the rule tries again from then */
    char *held;      /* why the rule last made no request (logged once) */
    char *json;      /* as GET /v1/state/diff shows it, or NULL: render */
};

struct maint {
    struct msgq *q;
    pthread_t thread;
    int running;
    struct store *st;
    struct maint_conf conf;
    struct hmap nodes; /* id -> struct gnode * */
    struct hmap mism;  /* "node\x1fattr" -> struct mism * */
    struct mreq **req; /* by id order, those in memory (mevict.c) */
    size_t n_req, cap_req;
    size_t n_gone; /* the ended ones let go, or read light */
    size_t gone_by_state[MS_CANCELLED + 1];
    double next_evict;
    struct mreq **open; /* the open ones, rebuilt when open_stale */
    size_t n_open, cap_open;
    int open_stale;
    int64_t next_id;
    /* mismatches written to PostgreSQL with the next flush (JSON arrays) */
    json_t *mism_set, *mism_gone;
    int diff_changed, req_changed;
    int compare_all;            /* compare every node at the next tick */
    double next_compare;        /* the periodic comparison */
    struct scluster **seen;     /* the cluster versions last compared */
    size_t n_seen;
    double compare_ms_last, compare_ms_max;
    unsigned long compares;
    struct hmap pauses; /* "cluster/name" -> its pause (pause.c) */
    /* new requests whose write lost its connection under it, so that it
     * may be stored: their askers were told 503 (not accepted), and they
     * are deleted once the database answers (mreq_doubt_settle) */
    int64_t *doubt;
    size_t n_doubt, cap_doubt;
};

extern struct maint M;

/* goal.c: goal state and reports (messages from the API). */
void goal_put(struct msg *m);
void goal_get(struct msg *m);
void actual_post(struct msg *m);
void actual_get(struct msg *m);
int goal_load(struct loom_error *err);
struct gnode *gnode_get(const char *id, int create); /* NULL: none/no memory */
/* The node of a "cluster/name" id in s, or NULL. */
const struct snode *maint_node(struct snapshot *s, const char *id);
/* The node's actual value of attr from the cluster's report (n may be
 * NULL: the node is gone), or NULL when the cluster does not report attr.
 * A new reference. */
json_t *actual_from_cluster(const struct snode *n, const char *attr);
int attr_from_cluster(const char *attr);

/* compare.c */
/* Goal and actual agree: text for scalars ("6.1" is 6.1), sets for
 * lists; a NULL actual (unknown) never agrees. */
int maint_same_value(json_t *goal, json_t *actual);
/* Compare one node (id) or, with id NULL, every node with a goal. */
void compare_run(struct snapshot *s, const char *id, double now);
void compare_tick(double now);  /* periodic and on cluster changes */
void diff_publish(void);        /* when diff_changed */
void diff_requests_changed(void); /* every row shows its request again */
int mism_flush(void);           /* write pending changes; 0 or -1 */
int mism_load(struct loom_error *err);
void mism_free(void *x);

/* mreq_ops.c: what a request asks of other threads, and its commits */
struct mreq *mreq_find(int64_t id); /* or NULL */
/* Commit r as it is now: 0, or -1 (logged; the step is tried again). */
int mreq_save(struct mreq *r);
/* r's first write failed: if it may be stored, note it for deletion. */
void mreq_doubt_note(const struct mreq *r);
/* Delete the noted ones, when the database answers. */
void mreq_doubt_settle(void);
/* Move r to state s and commit it; on failure nothing changes. 0 or -1. */
int mreq_step_to(struct mreq *r, enum mstate s, time_t now);
/* Post a command with a reply slot to a thread and wait for the answer:
 * 0 with *out (the caller unrefs it), or -1 with err. */
int mreq_call(struct msgq *q, int type, void *data, void (*data_free)(void *),
              struct reply **out, struct loom_error *err);
/* A reservation operation on the scheduler thread (SCHED_RESV_CANCEL, or
 * SCHED_RESV_ADJUST to begin it now or end it now), waited for. */
int mreq_resv_op(int type, int64_t id, int start_now, int end_now,
                 struct loom_error *err);
/* Set r's nodes' state through their adaptor; the answer is looked at by
 * later ticks (r->pending). */
void mreq_set_nodes(struct mreq *r, const char *state, const char *reason);
/* Show r's nodes "maint" (on) or as their cluster reports them: marked at
 * once, and the cluster's worker publishes its part again from its last
 * poll. With wait, r->pending is the worker's answer, which later ticks
 * wait for (MARK_WAIT_S at most: a worker may be busy with a slow CMS). */
void mreq_mark_nodes(struct mreq *r, int on, int wait);
#define MARK_WAIT_S 30
void mreq_drain_reason(const struct mreq *r, char *buf, size_t len);
/* End r's reservation now (done), or cancel it; a failure is logged. */
void mreq_end_resv(struct mreq *r, int cancel);

/* mrun.c: requests made and ended */
void mreq_post(struct msg *m);   /* POST /v1/maintenance */
void mreq_cancel(struct msg *m); /* DELETE /v1/maintenance/{id} */
/* Make a request (from a rule); 0 or -1 with err. */
int mreq_submit(struct mreq *r_take, struct loom_error *err);
/* Done: the nodes up, the reservation ended. Failed: the nodes left
 * drained with why. Both committed first. */
void mreq_finish_ok(struct mreq *r, time_t now);
void mreq_fail(struct mreq *r, time_t now, const char *why);
void mreq_publish(void);
/* mstep.c: one step of each open request; an action's end */
void mreq_tick(double now);
void mreq_action_done(struct msg *m);
int mreq_load(struct loom_error *err);
/* The open request on node ("cluster/name") with that action (NULL: any),
 * or NULL. */
struct mreq *mreq_open_on(const char *node, const char *action);
size_t mreq_nodes_open(const char *cluster); /* in open requests */

/* mevict.c: the ended requests past [maintenance] request_memory_s let
 * go (at most once a second). */
void mreq_evict(double now);
/* Start-up read request id light (store_maint_load): it ended long ago
 * and is counted as gone, as if it had left memory at the first look. */
void mreq_evict_loaded(int64_t id, const char *state);

/* action.c: run an action in a worker thread; MAINT_ACTION_DONE comes
 * back with struct action_done. */
struct action_done {
    int64_t id;
    int ok;
    char *error, *output;
};
void action_done_free(void *p);
int action_start(const struct mreq *r, const struct maint_action *a,
                 struct loom_error *err);
void action_shutdown(void); /* workers that end later post nothing */

/* rules.c */
void rules_apply(double now);

/* pause.c: paused nodes */
void pause_put(struct msg *m); /* PUT .../state pause or resume */
/* The answers of the jobs' suspends looked at; jobs found running on a
 * paused node suspended. */
void pause_tick(void);
void pause_fini(void);

/* maint.c */
void maint_event(const char *level, const char *subject, const char *fmt,
                 ...) __attribute__((format(printf, 3, 4)));

#endif
