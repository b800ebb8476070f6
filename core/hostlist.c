/* hostlist.c - Slurm-style host lists ("n[1-3,5],gpu7") expanded. */
/* SPDX-License-Identifier: MIT */
#include "core/hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* prefix + every number of the range list "1-3,05" (widths kept). */
static int expand_ranges(const char *prefix, size_t plen, const char *r,
                         size_t rlen, const char *suffix, size_t slen,
                         enum loom_err_kind kind, struct strv *out,
                         struct loom_error *err)
{
    char buf[512];
    const char *p = r, *end = r + rlen;

    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        const char *dash = memchr(p, '-', (size_t)(stop - p));
        char *e1, *e2;
        unsigned long lo = strtoul(p, &e1, 10), hi = lo;
        int width = (int)((dash ? dash : stop) - p);
        if (e1 != (dash ? dash : stop) || e1 == p)
            return loom_error_set(err, kind, "bad range '%.*s'",
                                  (int)rlen, r);
        if (dash) {
            hi = strtoul(dash + 1, &e2, 10);
            if (e2 != stop || e2 == dash + 1 || hi < lo)
                return loom_error_set(err, kind, "bad range '%.*s'",
                                      (int)rlen, r);
        }
        if (hi - lo >= HOSTLIST_MAX || out->n + (hi - lo) >= HOSTLIST_MAX)
            return loom_error_set(err, kind, "more than %d hosts",
                                  HOSTLIST_MAX);
        for (unsigned long k = lo; k <= hi; k++) {
            int n = snprintf(buf, sizeof(buf), "%.*s%0*lu%.*s", (int)plen,
                             prefix, width, k, (int)slen, suffix);
            if (n < 0 || (size_t)n >= sizeof(buf))
                return loom_error_set(err, kind, "host name too long");
            if (strv_push(out, buf) < 0)
                return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
        p = stop + 1;
    }
    return 0;
}

int hostlist_expand(const char *list, enum loom_err_kind kind,
                    struct strv *out, struct loom_error *err)
{
    const char *p = list;

    while (p && *p) {
        const char *open = NULL, *close = NULL, *q = p;
        /* One item: up to a comma outside brackets. */
        for (; *q && (*q != ',' || (open && !close)); q++) {
            if (*q == '[' && !open)
                open = q;
            else if (*q == ']' && open && !close)
                close = q;
        }
        if (open && !close)
            return loom_error_set(err, kind, "bad hostlist '%s'", list);
        if (open) {
            if (expand_ranges(p, (size_t)(open - p), open + 1,
                              (size_t)(close - open - 1), close + 1,
                              (size_t)(q - close - 1), kind, out, err) < 0)
                return -1;
        } else if (q > p) {
            char buf[512];
            snprintf(buf, sizeof(buf), "%.*s", (int)(q - p), p);
            if (strv_push(out, buf) < 0)
                return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
        p = *q ? q + 1 : NULL;
    }
    return 0;
}
