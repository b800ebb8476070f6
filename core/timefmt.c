/* timefmt.c - walltimes in Slurm's formats and in [[H:]M:]S. */
/* SPDX-License-Identifier: MIT */
#include "core/timefmt.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/limits.h"

#define FIELD_MAX 99999999L /* larger is too long anyway: no overflow */

/* Digits [p, end) into *v (empty: 0 when empty_ok). 0, or -1 when there
 * are none (and they are needed) or something else is there. */
static int digits(const char *p, const char *end, int empty_ok, long *v)
{
    *v = 0;
    if (p == end)
        return empty_ok ? 0 : -1;
    for (; p < end; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        if (*v <= FIELD_MAX)
            *v = *v * 10 + (*p - '0');
    }
    return 0;
}

/* Split text at sep into at most max fields: their starts and ends. The
 * number of fields, or -1 when there are more. */
static int split(const char *text, char sep, int max, const char **start,
                 const char **end)
{
    int n = 0;
    const char *p = text, *q;

    for (;;) {
        if (n == max)
            return -1;
        q = strchr(p, sep);
        start[n] = p;
        end[n] = q ? q : p + strlen(p);
        n++;
        if (!q)
            return n;
        p = q + 1;
    }
}

static int no_limit(const char *text, struct loom_error *err)
{
    return loom_error_set(err, LOOM_EINVAL, "'%.64s' asks for no time limit, "
                          "which Loom does not take: give one of at most "
                          "%ld days", text, LOOM_JOB_WALLTIME_MAX_S / 86400);
}

static int out_of_range(const char *text, const char *what, int max,
                        struct loom_error *err)
{
    return loom_error_set(err, LOOM_EINVAL, "'%.64s': the %s must be 0 to %d",
                          text, what, max);
}

/* The total, checked against Loom's limits. */
static int total(const char *text, long d, long h, long m, long s,
                 long *secs, struct loom_error *err)
{
    if (d > FIELD_MAX / 86400 || h > FIELD_MAX / 3600 || m > FIELD_MAX / 60 ||
        d * 86400 + h * 3600 + m * 60 + s > LOOM_JOB_WALLTIME_MAX_S)
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is longer than "
                              "Loom's limit of %ld days", text,
                              LOOM_JOB_WALLTIME_MAX_S / 86400);
    if (d * 86400 + h * 3600 + m * 60 + s == 0)
        return no_limit(text, err);
    *secs = d * 86400 + h * 3600 + m * 60 + s;
    return 0;
}

int timefmt_slurm(const char *text, long *secs, struct loom_error *err)
{
    const char *dash = strchr(text, '-'), *st[3], *en[3];
    long d = 0, f[3] = {0, 0, 0}, h = 0, m = 0, s = 0;
    int n, bad = 0;

    if (!strcasecmp(text, "INFINITE") || !strcasecmp(text, "UNLIMITED") ||
        !strcmp(text, "-1"))
        return no_limit(text, err);
    if (dash && digits(text, dash, 0, &d) < 0)
        bad = 1;
    n = bad ? -1 : split(dash ? dash + 1 : text, ':', 3, st, en);
    for (int i = 0; i < n && !bad; i++)
        bad = digits(st[i], en[i], 0, &f[i]) < 0;
    if (!*text || bad || n < 0)
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not a time in "
                              "Slurm's formats (" TIMEFMT_SLURM_FORMATS ")",
                              text);
    if (dash) { /* D-HH[:MM[:SS]] */
        h = f[0], m = f[1], s = f[2];
        if (h > 23)
            return out_of_range(text, "hours", 23, err);
    } else if (n == 3) { /* HH:MM:SS */
        h = f[0], m = f[1], s = f[2];
    } else { /* MM[:SS] */
        m = f[0], s = f[1];
    }
    if ((dash || n == 3) && m > 59)
        return out_of_range(text, "minutes", 59, err);
    if (s > 59)
        return out_of_range(text, "seconds", 59, err);
    return total(text, d, h, m, s, secs, err);
}

int timefmt_hms(const char *text, long *secs, struct loom_error *err)
{
    const char *st[3], *en[3], *dot;
    long f[3] = {0, 0, 0}, frac = 0;
    int n, bad = 0;

    if (!strcasecmp(text, "INFINITY"))
        return no_limit(text, err);
    n = split(text, ':', 3, st, en);
    /* a fraction of the last field: rounded up to a whole second */
    dot = n > 0 ? memchr(st[n - 1], '.', (size_t)(en[n - 1] - st[n - 1]))
                : NULL;
    if (dot) {
        bad = digits(dot + 1, en[n - 1], 0, &frac) < 0;
        en[n - 1] = dot;
    }
    for (int i = 0; i < n && !bad; i++)
        bad = digits(st[i], en[i], n > 1 || dot, &f[i]) < 0;
    if (!*text || bad || n < 0)
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not a time in "
                              "the form [[H:]M:]S (" TIMEFMT_HMS_FORMATS ")",
                              text);
    if (n > 1 && f[n - 1] > 59)
        return out_of_range(text, "seconds", 59, err);
    if (n > 2 && f[1] > 59)
        return out_of_range(text, "minutes", 59, err);
    if (frac)
        f[n - 1]++;
    if (n == 3)
        return total(text, 0, f[0], f[1], f[2], secs, err);
    if (n == 2)
        return total(text, 0, 0, f[0], f[1], secs, err);
    return total(text, 0, 0, 0, f[0], secs, err);
}

void timefmt_slurm_str(long secs, char *buf)
{
    long d = secs / 86400, h = secs % 86400 / 3600, m = secs % 3600 / 60;

    if (d)
        snprintf(buf, 32, "%ld-%02ld:%02ld:%02ld", d, h, m, secs % 60);
    else
        snprintf(buf, 32, "%02ld:%02ld:%02ld", h, m, secs % 60);
}

void timefmt_hms_str(long secs, char *buf)
{
    snprintf(buf, 32, "%02ld:%02ld:%02ld", secs / 3600, secs % 3600 / 60,
             secs % 60);
}
