/* held.h - what running jobs hold, kept beside the job flags (S.held, by
 * id - 1), and the node layouts their node indices were found in.
 * Scheduler thread only; private to scheduler/. */
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

/* The job holds nodes (again): note what, and find where anew. */
void held_note(const struct job *j);

/* The layout id of each cluster of the fabric (f->n entries in out; 0 for
 * one that could not be noted). */
void held_layouts(const struct fabric *f, unsigned *out);

/* Are h's indices valid in the fabric of these layouts (n clusters)? */
int held_known(const struct held *h, const unsigned *layouts, size_t n);
void held_remember(struct held *h, const unsigned *layouts, size_t c,
                   size_t idx);

void held_fini(void); /* drop the layouts */

#endif
