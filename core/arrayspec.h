/* arrayspec.h - the task ids of a job array as the cluster systems write
 * them ("1-100:2%10", "1,3,5-7"): read, looked up by position, and written
 * back compressed. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_ARRAYSPEC_H
#define LOOM_CORE_ARRAYSPEC_H

#include <stddef.h>

#include "core/error.h"

/* Tasks first, first + step, ..., last (last - first is a multiple of
 * step; step is 1 for a single task). */
struct array_range {
    long first, last, step;
};

/* The tasks in increasing order, each once, as ranges; a task's ordinal
 * is its place in that order (0 for the first). */
struct array_spec {
    struct array_range *r;
    long *start; /* the ordinal of r[i].first */
    size_t n;
    long tasks;  /* in all */
    long limit;  /* tasks that may run at once (%N); 0: no limit */
};

/* Read text: ITEM[,ITEM...][%LIMIT], each ITEM a task N, a range N-M or a
 * range with a step N-M:S. Tasks from 0 to LOOM_ARRAY_INDEX_MAX, at most
 * LOOM_ARRAY_TASKS_MAX of them. 0, or -1 with a LOOM_EINVAL error saying
 * what is wrong (LOOM_EINTERNAL when out of memory); out is then empty. */
int array_spec_parse(const char *text, struct array_spec *out,
                     struct loom_error *err);
void array_spec_fini(struct array_spec *s); /* NULL-safe; s is empty after */
/* A copy of src into dst: 0, or -1 when out of memory. */
int array_spec_copy(struct array_spec *dst, const struct array_spec *src);

/* The task at ordinal ord (0 <= ord < tasks). */
long array_spec_task(const struct array_spec *s, long ord);
/* The ordinal of task, or -1 when the array has no such task. */
long array_spec_ord(const struct array_spec *s, long task);

/* The tasks at ordinals from on, except those at the ordinals in skip
 * (sorted, n_skip of them), compressed ("1-5,7,9-99:2"): a new string, ""
 * when none is left, NULL when out of memory. */
char *array_spec_format(const struct array_spec *s, long from,
                        const long *skip, size_t n_skip);
/* The whole spec as it is read again: every task, then "%LIMIT". A new
 * string, or NULL when out of memory. */
char *array_spec_text(const struct array_spec *s);

#endif
