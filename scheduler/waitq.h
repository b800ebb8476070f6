/* waitq.h - the waiting queue, kept from one cycle to the next: the
 * pending jobs in policy order, what the planner needs of each, and what
 * each shows. A cycle after one event reads and writes the records of the
 * jobs that event touched, not those of the whole queue: 100,000 job
 * records do not stay in the caches, and a pass over them all costs more
 * than the plan itself. Scheduler thread only; private to scheduler/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_WAITQ_H
#define LOOM_SCHEDULER_WAITQ_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/hmap.h"
#include "scheduler/plan.h"
#include "scheduler/prio.h"

/* What orders a job (its record's, copied). */
struct waitq_key {
    time_t submit;
    const char *owner; /* borrowed, like the plan_job's strings */
    uint32_t owner_ix; /* in the queue's owners; UINT32_MAX: not there (out
                          of memory): looked up by name */
    long cpus;         /* in all: nodes x cpus per node */
    int priority;      /* explicit */
    struct prio_factors pf; /* the priority policy's, this cycle */
};

/* What a waiting job shows, as the last cycle left it. */
struct waitq_shown {
    uint64_t text; /* hash of its reason and planned cluster; 0: not known
                      (the next cycle asks the job itself) */
    time_t planned_start;
    int position;
    int has_factors;
    double total;
};

/* The entries, in policy order. An entry whose job left the queue is a
 * hole (id 0, which the planner skips) until the queue is compacted. */
struct waitq {
    int64_t *ids;
    struct plan_job *pj;
    struct plan_out *out; /* the cycle's answer, entry by entry */
    struct waitq_key *key;
    struct waitq_shown *shown;
    size_t n, cap, n_holes;
    size_t n_left; /* entries whose job left since the last refresh */
    /* every owner that had a job in the queue, by index: a priority cycle
     * looks each one's usage up once, not once per job */
    struct {
        struct hmap ix; /* name -> index + 1 */
        char **names;
        size_t n, cap;
    } owners;
    int reorder;   /* order every entry anew at the next refresh */
    size_t ordered; /* the entries before it are in policy order */
};

/* Bring the queue up to date for a cycle at now: drop the jobs that left
 * it, take again what changed in the others, add the jobs pushed since
 * (S.pending), and put it in policy order; under the priority policy,
 * with each job's factors at now (fabric_cpus: usable cpus of the fabric).
 * 0, or -1 when out of memory (the queue stays as it was). Never while a
 * cycle is with the planner: the planner reads the entries. */
int waitq_refresh(struct waitq *q, double now, long fabric_cpus);

/* At start-up, before the first cycle: append the jobs pushed so far
 * (their records are read then, not in that cycle), in no order yet. A job
 * that shows shown_reason (NULL: none) and nothing of a plan is known to
 * show it: the first cycle leaves it be when it says the same. 0, or -1
 * when out of memory (the next refresh takes them). */
int waitq_prefill(struct waitq *q, const char *shown_reason);

/* Jobs waiting: those in the queue and those pushed since. */
size_t waitq_waiting(const struct waitq *q);

/* Forget what every job shows (the scheduler was off: another may have
 * changed it). The order stands: what orders the entries changes only
 * through their flags, which the next refresh reads, on or off (a new
 * policy sets q->reorder). */
void waitq_forget_shown(struct waitq *q);

/* The text hash of a reason and a planned cluster (NULL: none). */
uint64_t waitq_text(const char *reason, const char *cluster);

void waitq_fini(struct waitq *q);

#endif
