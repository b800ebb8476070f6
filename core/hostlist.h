/* hostlist.h - Slurm-style host lists ("n[1-3,5],gpu7"): expanded, and
 * written compressed. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HOSTLIST_H
#define LOOM_CORE_HOSTLIST_H

#include <stddef.h>

#include "core/error.h"
#include "core/strv.h"

#define HOSTLIST_MAX 100000 /* names in one list, at most */

/* The names of list appended to out: comma-separated items, each a name or
 * PREFIX[RANGES]SUFFIX with RANGES such as 1-3,05 (widths kept). 0, or -1
 * with err of that kind (a CMS's answer: LOOM_ETEMP; configuration:
 * LOOM_EINVAL) when malformed or past HOSTLIST_MAX names; out may then hold
 * some of them. Any thread. */
int hostlist_expand(const char *list, enum loom_err_kind kind,
                    struct strv *out, struct loom_error *err);

/* The n names as one hostlist: names that differ only in a number at
 * their end share a bracket of ranges, numbers in order ("n1", "n2", "n3",
 * "n5" -> "n[1-3,5]"); a zero-padded number keeps its width and joins
 * only numbers of as many digits ("n01", "n02", "n10" -> "n[01-02,10]");
 * other names stay as they are. Groups and lone names come in the order
 * of their first name, separated by ','; a name given twice is written
 * once. Returns a new string ("" for none) that the caller frees, or NULL
 * when out of memory. Any thread. */
char *hostlist_compress(char *const *names, size_t n);

#endif
