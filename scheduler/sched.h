/* sched.h - the scheduler interface thread: the fabric queue and its door. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_SCHED_H
#define LOOM_SCHEDULER_SCHED_H

#include <stdint.h>

#include "adaptors/adaptor.h"
#include "scheduler/resv.h"
#include "scheduler/sched_conf.h"
#include "core/msgq.h"
#include "scheduler/job.h"

/* Commands the scheduler thread takes (struct msg.type). */
enum sched_msg {
    SCHED_SUBMIT = 1,   /* data: struct job * (pending, idem fields set) */
    SCHED_JOB_OP,       /* data: struct sched_job_op * */
    SCHED_CLUSTER_JOBS, /* data: struct sched_cluster_jobs * (from server) */
    SCHED_STARTED,      /* data: struct sched_started * (from server) */
    SCHED_ENABLE,       /* data: (intptr_t) 0 or 1 */
    SCHED_STATUS,       /* reply: {"enabled", "pending", "running", ...} */
    SCHED_COMMITTED,    /* data: struct commit_batch * (from the committer) */
    SCHED_RESV_CREATE,  /* data: struct sched_resv_op *; reply: 201 */
    SCHED_RESV_CANCEL,  /* data: struct sched_resv_op *; reply: 200 */
    SCHED_CONFIG,       /* data: struct sched_conf * (a reload) */
    SCHED_PLANNED,      /* data: struct plan_work * (from the planner) */
    SCHED_RESV_ADJUST,  /* data: struct sched_resv_op *; reply: 200 */
    SCHED_RESV_NATIVE,  /* data: struct sched_resv_native * (from server) */
};

/* Create a reservation (rq) or cancel one (id), asked by subject; or
 * adjust a maintenance reservation (id): begin it now, if its nodes are
 * free (start_now), or end it now (end_now). */
struct sched_resv_op {
    struct resv_req rq;
    int64_t id;
    char *subject;
    unsigned roles; /* of who asks (LOOM_ROLE_*); 0: Loom itself */
    int start_now, end_now;
    /* Reservation id as the database holds it, read by the API when it
     * may have left memory (resv_memory_s), or NULL: the answer to an
     * ended one that left is this one's. Owned by the op. */
    struct resv *stored;
};
void sched_resv_op_free(void *op);

struct sched_job_op {
    int64_t id;
    long task;          /* an array's task (-1: the job itself) */
    char op[16];        /* cancel|suspend|resume|hold|release|start, patch
                           (body: the change), get (a task's view) */
    char *subject;      /* who asks */
    unsigned roles;
    char *cluster;      /* start: where */
    struct strv nodes;  /* start: on which nodes */
    json_t *body;       /* patch: the fields to change (a reference) */
    struct job *stored; /* the job as stored, read by the handler when it
                           had ended (owned, or NULL): it answers for a
                           job that left memory (job_memory_s) */
};
void sched_job_op_free(void *op);

struct sched_cluster_jobs {
    char *cluster;
    struct cl_job_list list;
    int complete;
    size_t done; /* entries applied so far (the scheduler's) */
};
void sched_cluster_jobs_free(void *p);

struct sched_started {
    int64_t id;
    int ok;
    struct start_result res;
    struct loom_error err;
};
void sched_started_free(void *p);

/* What the cluster's system said to a SERVER_RESV: ok with the native id
 * of the reservation made (remove 0) or removed (remove 1), else why not. */
struct sched_resv_native {
    int64_t id;
    int remove;
    int ok;
    char *native_id;   /* owned */
    time_t start, end; /* the window asked for */
    struct loom_error err;
};
void sched_resv_native_free(void *p);

struct store;
/* Load every job from the store (the thread takes st), publish them, and
 * start the thread. Start-up errors end the daemon: -1 with err. */
int sched_start(struct store *st, int enabled, const struct sched_conf *conf,
                struct loom_error *err);
/* Flush what is not yet committed and end the thread. */
void sched_stop(void);
struct msgq *sched_queue(void);

#endif
