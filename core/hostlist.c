/* hostlist.c - Slurm-style host lists ("n[1-3,5],gpu7"): expanded into
 * names, and names written compressed as one. */
/* SPDX-License-Identifier: MIT */
#include "core/hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- expanding ---------------------------------------------------------- */

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

/* ---- compressing --------------------------------------------------------- */


/* A name taken apart: its prefix, and the number at its end (digits: 0
 * when it has none; width: the digits' count when zero-padded, else 0). */
struct hname {
    size_t prefix, digits;
    int width;
    long long num;
};

static void split(const char *s, struct hname *h)
{
    size_t len = strlen(s), k = len;

    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
        k--;
    h->prefix = k;
    h->digits = len - k;
    h->num = 0;
    h->width = 0;
    if (h->digits == 0 || h->digits > 18) { /* no number, or too long */
        h->prefix = len;
        h->digits = 0;
        return;
    }
    for (size_t i = k; i < len; i++)
        h->num = h->num * 10 + (s[i] - '0');
    if (s[k] == '0' && h->digits > 1)
        h->width = (int)h->digits;
}

static int same_group(const char *a, const struct hname *ha, const char *b,
                      const struct hname *hb)
{
    return hb->digits && ha->prefix == hb->prefix &&
           ha->width == hb->width && !strncmp(a, b, ha->prefix);
}

static int by_num(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;

    return (a > b) - (a < b);
}

/* One group's numbers v[0..n), sorted, as ranges. */
static void ranges(FILE *f, const long long *v, size_t n, int width)
{
    size_t i = 0, out = 0;

    while (i < n) {
        size_t j = i;
        while (j + 1 < n && v[j + 1] <= v[j] + 1)
            j++;
        fprintf(f, "%s%0*lld", out++ ? "," : "", width, v[i]);
        if (v[j] != v[i])
            fprintf(f, "-%0*lld", width, v[j]);
        i = j + 1;
    }
}

char *hostlist_compress(char *const *names, size_t n)
{
    struct hname *h = calloc(n ? n : 1, sizeof(*h));
    long long *num = calloc(n ? n : 1, sizeof(*num));
    char *done = calloc(n ? n : 1, 1), *out = NULL;
    size_t len = 0, items = 0;
    FILE *f = NULL;

    if (!h || !num || !done || !(f = open_memstream(&out, &len)))
        goto out;
    for (size_t i = 0; i < n; i++)
        split(names[i], &h[i]);
    /* a number as wide as a padded one of its prefix is of that width */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; !h[i].width && h[i].digits > 1 && k < n; k++)
            if (h[k].width == (int)h[i].digits && h[k].prefix == h[i].prefix &&
                !strncmp(names[i], names[k], h[i].prefix))
                h[i].width = h[k].width;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0, u = 0;
        if (done[i])
            continue;
        if (items++)
            fputc(',', f);
        for (size_t j = i; j < n; j++) /* the group, or the same name */
            if (!done[j] && (!strcmp(names[i], names[j]) ||
                             (h[i].digits &&
                              same_group(names[i], &h[i], names[j], &h[j])))) {
                done[j] = 1;
                num[k++] = h[j].num;
            }
        qsort(num, k, sizeof(*num), by_num);
        for (size_t j = 0; j < k; j++) /* each number once */
            if (!u || num[u - 1] != num[j])
                num[u++] = num[j];
        if (u == 1) {
            fputs(names[i], f);
            continue;
        }
        fprintf(f, "%.*s[", (int)h[i].prefix, names[i]);
        ranges(f, num, u, h[i].width);
        fputc(']', f);
    }
out:
    if (!f || fclose(f) != 0) {
        free(out);
        out = NULL;
    }
    free(h);
    free(num);
    free(done);
    return out;
}
