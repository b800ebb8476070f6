/* sched_plan.h - the fabric as the planner sees it, built from the
 * snapshot and the scheduler's jobs and reservations (scheduler thread). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_SCHED_PLAN_H
#define LOOM_SCHEDULER_SCHED_PLAN_H

#include "core/snapshot.h"
#include "scheduler/job.h"
#include "scheduler/plan.h"

/* Clusters, nodes and queues of one snapshot (held while the fabric
 * lives), in the snapshot's order. */
struct fabric {
    struct snapshot *snap;
    struct plan_cluster *cl;
    size_t n;
    struct plan_node *nodes;
    struct plan_queue *queues;
    long cpus; /* usable cpus of the fabric */
};

int fabric_build(struct fabric *f); /* 0, or -1 (no snapshot, OOM) */
void fabric_fini(struct fabric *f);
/* The fabric of the clusters as last polled, built again only when a poll
 * changed one (a submit's feasibility asks it at every submit); NULL when
 * there is no snapshot yet or out of memory. Scheduler thread only; valid
 * until the next call. */
const struct fabric *fabric_current(void);
void fabric_current_fini(void);
int fabric_cluster(const struct fabric *f, const char *name, size_t *out);
int fabric_nodes(const struct fabric *f, size_t c, const struct strv *names,
                 size_t *out);
void fabric_job(const struct job *j, struct plan_job *out);
/* A plan at now holding every job on its nodes, what the clusters report
 * beyond them, and every open reservation but skip_resv. NULL when OOM. */
struct plan *fabric_plan(const struct fabric *f, double now,
                         int64_t skip_resv);

#endif
