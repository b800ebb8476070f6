/* outpath.h - a job's working directory and output file names: what they
 * may be, and the patterns of the output names (%j %u %x %A %a %N %%). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_OUTPATH_H
#define LOOM_CORE_OUTPATH_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define LOOM_PATH_MAX 4095 /* bytes of a workdir or an output name */
/* The output name when the request gives none, in the working directory
 * (Slurm's slurm-%j.out). The error stream goes to the same file. */
#define LOOM_OUTPUT_DEFAULT "loom-%j.out"
/* What the patterns may name, for messages. */
#define LOOM_OUTPUT_PATTERNS "%j %u %x %A %a %N %%"

/* What a pattern stands for in one job. Borrowed strings. */
struct outpath_vars {
    int64_t job_id;      /* %j, and %A of a job that is no array task */
    const char *account; /* %u */
    const char *name;    /* %x */
    int64_t array_id;    /* %A of an array's task: its array's id; else 0 */
    int64_t task_id;     /* %a: an array task's id; 0 for another job */
    const char *node;    /* %N: the first node */
};

/* May text be the request's field (workdir, output or error)? Non-empty,
 * at most LOOM_PATH_MAX bytes, no control characters; a workdir absolute
 * (absolute = 1) and without patterns; an output or error name with known
 * patterns only. 0, or -1 with a 400 naming field, what is wrong and (for
 * a pattern) the ones there are. Any thread. */
int outpath_check(const char *text, const char *field, int absolute,
                  struct loom_error *err);
/* The name with its patterns replaced: a new string, or NULL when out of
 * memory. The text was checked with outpath_check (an unknown pattern is
 * kept as it is). Any thread. */
char *outpath_expand(const char *pattern, const struct outpath_vars *v);

#endif
