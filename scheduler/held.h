/* held.h - what running jobs hold, kept beside the job flags (a slot of
 * their own while they hold nodes, found by id), and the node layouts
 * their node indices were found in. Scheduler thread only; private to
 * scheduler/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_HELD_H
#define LOOM_SCHEDULER_HELD_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "scheduler/job.h"
#include "scheduler/plan.h"
#include "scheduler/sched_plan.h"

struct held {
    time_t start;        /* 0: not started yet (counts from the cycle's now) */
    long walltime_s;
    struct plan_use use; /* per node */
    /* a one-node job, once found: its cluster and node indices, valid while
     * the cluster's layout is still `layout` (0: not found yet) */
    unsigned layout;
    uint32_t cl, idx;
};

/* The job holds nodes (again): note what, and find where anew, in its
 * slot (taken now if it has none). Out of memory it has none, and
 * held_of says so. */
void held_note(const struct job *j);
/* Job id's slot, or NULL when it has none (it holds no nodes). */
struct held *held_of(int64_t id);
/* What job j holds, as held_note notes it, into h (no slot). */
void held_fill(struct held *h, const struct job *j);
/* Job id holds no nodes any more (or leaves memory): its slot goes back. */
void held_drop(int64_t id);

/* The layout id of each cluster of the fabric (f->n entries in out; 0 for
 * one that could not be noted). */
void held_layouts(const struct fabric *f, unsigned *out);

/* Are h's indices valid in the fabric of these layouts (n clusters)? */
int held_known(const struct held *h, const unsigned *layouts, size_t n);
void held_remember(struct held *h, const unsigned *layouts, size_t c,
                   size_t idx);

void held_fini(void); /* drop the layouts and the slots */

#endif
