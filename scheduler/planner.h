/* planner.h - the planner thread: a cycle's plan_run away from the
 * scheduler thread and at a lower CPU priority, so that neither submits
 * (the scheduler thread) nor API reads (libmicrohttpd's threads) wait for a
 * long cycle. The scheduler thread builds the work and applies the answer;
 * the planner thread only runs the plan. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_PLANNER_H
#define LOOM_SCHEDULER_PLANNER_H

#include "core/error.h"
#include "core/msgq.h"
#include "scheduler/plan.h"
#include "scheduler/sched_plan.h"

/* One cycle's plan. The jobs, their ids and the answer's entries are the
 * waiting queue's (struct waitq), borrowed: the scheduler thread leaves
 * them alone until the answer comes back. The jobs' strings (features,
 * cluster, queue) are borrowed from committed job records, whose requests
 * never change. */
struct plan_work {
    struct fabric f;   /* the snapshot the plan was built from */
    struct plan *p;
    struct plan_config cfg;
    const struct plan_job *pj;
    struct plan_out *out; /* what each entry's node list holds is freed
                             with the work */
    const int64_t *ids;
    size_t n;
    unsigned resv_gen; /* reservations as they were */
    double build_ms, plan_ms;
    double build_cpu_ms, plan_cpu_ms; /* the CPU time of each: what a wall
                                         time much longer waited for */
};
void plan_work_free(struct plan_work *w); /* NULL-safe */

/* Start the thread; each work posted comes back to done_q as a message of
 * done_type with the work as data. */
int planner_start(struct msgq *done_q, int done_type, struct loom_error *err);
void planner_post(struct plan_work *w); /* taken */
void planner_stop(void); /* work in flight is dropped */

#endif
