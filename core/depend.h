/* depend.h - a job's dependencies as Slurm writes them
 * ("afterok:12:13,afterany:14", "afterok:12?afternotok:13", "singleton"):
 * read and written back. What they wait for is the scheduler's
 * (scheduler/depend.c). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_DEPEND_H
#define LOOM_CORE_DEPEND_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

enum dep_type {
    DEP_AFTER,      /* the job has started (or ended without starting) */
    DEP_AFTERANY,   /* the job has ended, however */
    DEP_AFTEROK,    /* the job has completed (exit code 0) */
    DEP_AFTERNOTOK, /* the job has failed or was cancelled */
    DEP_SINGLETON,  /* no other job of the owner's with this job's name
                       runs */
    DEP_N
};

/* One job waited for: an array's task, or a whole job (task -1; of an
 * array, every task). A singleton names none (job 0). */
struct dep {
    enum dep_type type;
    int64_t job;
    long task;
};

struct dep_list {
    struct dep *v;
    size_t n;
    int any; /* joined by '?': one of them is enough; else all are needed */
};

/* Read text: TYPE:JOB[:JOB...] or singleton, joined by ',' (all of them)
 * or '?' (any of them), not both; JOB is an id (123) or an array's task
 * (123_7). At most LOOM_JOB_DEPS_MAX jobs. 0, or -1 with a LOOM_EINVAL
 * error naming what is wrong and what Loom takes (LOOM_EINTERNAL when out
 * of memory); out is then empty. */
int dep_parse(const char *text, struct dep_list *out, struct loom_error *err);
/* The list as it is read again ("afterok:12:13,afterany:14"): a new
 * string, or NULL when out of memory. */
char *dep_format(const struct dep_list *l);
int dep_list_copy(struct dep_list *dst, const struct dep_list *src);
void dep_list_fini(struct dep_list *l); /* NULL-safe; empty after */
const char *dep_type_name(enum dep_type t);

#endif
