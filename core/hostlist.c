/* hostlist.c - node names written compressed, as Slurm writes them. */
/* SPDX-License-Identifier: MIT */
#include "core/hostlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
