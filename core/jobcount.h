/* jobcount.h - the jobs of the table by state, cluster, source and
 * account, counted as their views come and go: loom_jobs of GET /metrics
 * without a walk over the jobs. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_JOBCOUNT_H
#define LOOM_CORE_JOBCOUNT_H

#include <stddef.h>

#include "core/metrics.h"
#include "core/snapshot.h"

/* The view of a job replaces another (either may be NULL): one job moves
 * from the old one's counts to the new one's. Called by the job table's
 * builder (core/snapshot.c); any thread. */
void jobcount_move(const struct jview *old, const struct jview *new_view);
/* How many accounts have series of their own ([loomd] metrics_accounts):
 * the accounts with the most jobs, ties by name; the others are counted
 * as account "other". */
void jobcount_top_set(size_t n);
/* Append the family loom_jobs: for every cluster, source and account
 * (folded) with jobs, a sample per job state, zeros included. */
void jobcount_render(struct metrics_out *o);
/* Forget every count (for tests). */
void jobcount_reset(void);

#endif
