/* swf.h - a reader of the Standard Workload Format (SWF 2.2) of the
 * Parallel Workloads Archive, for replays of real traces. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_SWF_H
#define LOOM_SCHEDULER_SWF_H

#include <stddef.h>
#include <stdio.h>

#include "core/error.h"

/* What a replay needs of one job record. Times are seconds. */
struct swf_job {
    long id;         /* field 1, job number */
    double submit;   /* field 2, from the trace's start */
    double run;      /* field 4 */
    int procs;       /* field 8 (requested), else field 5 (allocated) */
    double req_time; /* field 9, or -1 when unknown */
    int user;        /* field 12, or -1 when unknown */
};

/* Read a whole trace from f (plain text: a gzipped trace is unpacked by
 * the caller, e.g. through `gzip -dc`). Lines starting with ';' are
 * comments and blank lines are skipped; every other line must hold the 18
 * numeric fields of SWF 2.2 (-1: unknown). Jobs with run < 0, no known
 * processor count (procs <= 0) or submit < 0 are left out and counted in
 * *skipped (may be NULL). On 0, *out is a new array of *n jobs in file
 * order (NULL when none) that the caller frees; on -1 (a malformed line:
 * the message names its line number and field; a read error; out of
 * memory) nothing is returned and err says why. */
int swf_read(FILE *f, struct swf_job **out, size_t *n, size_t *skipped,
             struct loom_error *err);

#endif
