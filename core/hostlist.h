/* hostlist.h - Slurm-style host lists ("n[1-3,5],gpu7") expanded. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HOSTLIST_H
#define LOOM_CORE_HOSTLIST_H

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

#endif
