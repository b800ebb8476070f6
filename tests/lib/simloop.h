/* simloop.h - a discrete-event replay of jobs on simulated clusters that
 * drives the planner as the scheduler does each cycle: at every event
 * (arrival, end, reservation boundary) a new plan of the fabric, what runs
 * as allocations to their walltime, the reservations, the waiting jobs in
 * policy order, plan_run, and the jobs it says start start. Simulated
 * time; the replay benchmark and the planner's property test share it. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_TESTS_SIMLOOP_H
#define LOOM_TESTS_SIMLOOP_H

#include <stddef.h>

#include "core/error.h"
#include "scheduler/plan.h"
#include "scheduler/prio.h"

enum sim_state {
    SIM_FUTURE, /* not submitted yet */
    SIM_WAITING,
    SIM_RUNNING,
    SIM_DONE,
    SIM_REJECTED, /* plan_feasible said no cluster could ever run it */
};

struct sim_job {
    struct plan_job req; /* what it asks; its pointers stay borrowed */
    double submit;
    double run;        /* real runtime; it is killed at its walltime */
    const char *owner; /* for fair share; NULL counts as "" */
    int priority;      /* explicit priority */
    /* Filled by the loop. */
    enum sim_state state;
    double start, end; /* end = start + min(run, walltime) */
    size_t cluster;
    size_t *nodes; /* owned: simloop_fini frees them */
    size_t n_nodes;
};

enum sim_order {
    SIM_FIFO,     /* by submit time, then as given */
    SIM_PRIORITY, /* by the prio.h total, highest first */
};

/* What a cycle hook sees: the jobs as they were before the plan (the ones
 * the plan starts are still SIM_WAITING), and the plan's answer. */
struct sim_cycle {
    double now;
    const struct sim_job *jobs;
    size_t n_jobs;
    const size_t *queue;        /* indices into jobs, in the order planned */
    const struct plan_out *out; /* one per queue entry */
    size_t n_queue;
};

/* Called after each plan_run; a non-zero return stops the run. */
typedef int (*sim_cycle_f)(void *arg, const struct sim_cycle *c);

struct sim_config {
    const struct plan_cluster *clusters;
    size_t n_clusters;
    const struct plan_resv *resv; /* held every cycle */
    size_t n_resv;
    struct plan_config plan;
    enum sim_order order;
    struct prio_weights weights; /* SIM_PRIORITY only */
    sim_cycle_f cycle_cb;        /* may be NULL */
    void *cb_arg;
};

struct sim_stats {
    size_t cycles, started, rejected, unstarted;
    double cycle_ms_total, cycle_ms_max; /* planner time: create to destroy */
};

/* Replay the n jobs (any order; ties in submit time keep the given order)
 * until nothing is left to happen. Jobs still waiting then (they can never
 * start) stay SIM_WAITING and are counted in st->unstarted. 0, or -1 when
 * out of memory, when the planner fails or the hook stops the run. */
int simloop_run(const struct sim_config *cfg, struct sim_job *jobs, size_t n,
                struct sim_stats *st, struct loom_error *err);
/* Free what the loop allocated in the jobs (their nodes). */
void simloop_fini(struct sim_job *jobs, size_t n);

#endif
