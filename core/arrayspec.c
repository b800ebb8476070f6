/* arrayspec.c - a job array's task ids: read, normalised into ranges,
 * looked up by ordinal, written back compressed. */
/* SPDX-License-Identifier: MIT */
#include "core/arrayspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"

#define FORMS "N, N-M or N-M:S, joined by commas, then %%LIMIT if any"

/* Digits at *p into *v (at most max + 1, so that a long number is still
 * too large); *p moves past them. 0, or -1 when there are none. */
static int digits(const char **p, long max, long *v)
{
    const char *s = *p;

    *v = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++)
        if (*v <= max)
            *v = *v * 10 + (**p - '0');
    if (*v > max)
        *v = max + 1;
    return *p == s ? -1 : 0;
}

/* One item [p, end): N, N-M or N-M:S. */
static int item(const char *p, const char *end, struct array_range *r,
                struct loom_error *err)
{
    const char *s = p;
    long a, b, step = 1;

    if (digits(&p, LOOM_ARRAY_INDEX_MAX, &a) < 0)
        goto bad;
    b = a;
    if (p < end && *p == '-') {
        p++;
        if (digits(&p, LOOM_ARRAY_INDEX_MAX, &b) < 0)
            goto bad;
        if (p < end && *p == ':') {
            p++;
            if (digits(&p, LOOM_ARRAY_TASKS_MAX, &step) < 0)
                goto bad;
        }
    }
    if (p != end)
        goto bad;
    if (a > LOOM_ARRAY_INDEX_MAX || b > LOOM_ARRAY_INDEX_MAX)
        return loom_error_set(err, LOOM_EINVAL, "task ids go from 0 to %ld, "
                              "not '%.*s'", LOOM_ARRAY_INDEX_MAX,
                              (int)(end - s < 64 ? end - s : 64), s);
    if (b < a)
        return loom_error_set(err, LOOM_EINVAL, "the range %ld-%ld ends "
                              "before it begins", a, b);
    if (step < 1)
        return loom_error_set(err, LOOM_EINVAL, "the range '%.*s' has a step "
                              "of 0: give 1 or more",
                              (int)(end - s < 64 ? end - s : 64), s);
    *r = (struct array_range){a, a + (b - a) / step * step, step};
    if (r->first == r->last)
        r->step = 1;
    return 0;
bad:
    return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a task id or "
                          "range (" FORMS ")",
                          (int)(end - s < 64 ? end - s : 64), s);
}

static long count_of(const struct array_range *r)
{
    return (r->last - r->first) / r->step + 1;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;

    return (x > y) - (x < y);
}

/* Ranges from the sorted, distinct tasks v[0..n): runs of one step. */
static size_t compress(const long *v, size_t n, struct array_range *r)
{
    size_t i = 0, k = 0;

    while (i < n) {
        if (i + 2 < n && v[i + 1] - v[i] == v[i + 2] - v[i + 1]) {
            long d = v[i + 1] - v[i];
            size_t j = i + 2;
            while (j + 1 < n && v[j + 1] - v[j] == d)
                j++;
            r[k++] = (struct array_range){v[i], v[j], d};
            i = j + 1;
        } else if (i + 1 < n && v[i + 1] - v[i] == 1) {
            r[k++] = (struct array_range){v[i], v[i + 1], 1};
            i += 2;
        } else {
            r[k++] = (struct array_range){v[i], v[i], 1};
            i++;
        }
    }
    return k;
}

/* Several items: every task, sorted, each once, into ranges again. */
static int normalise(struct array_spec *s, struct loom_error *err)
{
    long *v = malloc(((size_t)s->tasks + 1) * sizeof(*v));
    struct array_range *r;
    size_t n = 0, u = 0;

    if (!v)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; i < s->n; i++)
        for (long t = s->r[i].first; t <= s->r[i].last; t += s->r[i].step)
            v[n++] = t;
    qsort(v, n, sizeof(*v), cmp_long);
    for (size_t i = 0; i < n; i++)
        if (!u || v[i] != v[u - 1])
            v[u++] = v[i];
    if (!(r = malloc((u + 1) * sizeof(*r)))) {
        free(v);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    free(s->r);
    s->r = r;
    s->n = compress(v, u, r);
    s->tasks = (long)u;
    free(v);
    return 0;
}

/* The ordinal of each range's first task. */
static int starts(struct array_spec *s)
{
    long at = 0;

    if (!(s->start = malloc((s->n + 1) * sizeof(*s->start))))
        return -1;
    for (size_t i = 0; i < s->n; i++) {
        s->start[i] = at;
        at += count_of(&s->r[i]);
    }
    return 0;
}

static int read_limit(const char *p, long *limit, struct loom_error *err)
{
    const char *s = p;

    if (digits(&p, LOOM_ARRAY_TASKS_MAX, limit) < 0 || *p || *limit < 1 ||
        *limit > LOOM_ARRAY_TASKS_MAX)
        return loom_error_set(err, LOOM_EINVAL, "'%%%.32s' is not a limit of "
                              "tasks at once: give %%N, N from 1 to %ld", s,
                              LOOM_ARRAY_TASKS_MAX);
    return 0;
}

static int parse(const char *text, struct array_spec *s,
                 struct loom_error *err)
{
    const char *pct = strchr(text, '%'), *end, *p;
    size_t items = 1;

    if (strlen(text) > LOOM_ARRAY_SPEC_MAX)
        return loom_error_set(err, LOOM_EINVAL, "an array's task ids take "
                              "at most %d characters", LOOM_ARRAY_SPEC_MAX);
    end = pct ? pct : text + strlen(text);
    if (end == text)
        return loom_error_set(err, LOOM_EINVAL, "give the array's task ids "
                              "(" FORMS ")");
    if (pct && read_limit(pct + 1, &s->limit, err) < 0)
        return -1;
    for (p = text; p < end; p++)
        items += *p == ',';
    if (!(s->r = calloc(items, sizeof(*s->r))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (p = text; p <= end; s->n++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        if (item(p, stop, &s->r[s->n], err) < 0)
            return -1;
        s->tasks += count_of(&s->r[s->n]);
        if (s->tasks > LOOM_ARRAY_TASKS_MAX)
            return loom_error_set(err, LOOM_EINVAL, "an array has at most "
                                  "%ld tasks", LOOM_ARRAY_TASKS_MAX);
        p = stop + 1;
    }
    if (s->n > 1 && normalise(s, err) < 0)
        return -1;
    if (starts(s) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

int array_spec_parse(const char *text, struct array_spec *out,
                     struct loom_error *err)
{
    memset(out, 0, sizeof(*out));
    if (parse(text, out, err) == 0)
        return 0;
    array_spec_fini(out);
    return -1;
}

void array_spec_fini(struct array_spec *s)
{
    if (!s)
        return;
    free(s->r);
    free(s->start);
    memset(s, 0, sizeof(*s));
}

int array_spec_copy(struct array_spec *dst, const struct array_spec *src)
{
    *dst = *src;
    dst->r = malloc((src->n + 1) * sizeof(*dst->r));
    dst->start = malloc((src->n + 1) * sizeof(*dst->start));
    if (!dst->r || !dst->start) {
        array_spec_fini(dst);
        return -1;
    }
    memcpy(dst->r, src->r, src->n * sizeof(*dst->r));
    memcpy(dst->start, src->start, src->n * sizeof(*dst->start));
    return 0;
}

/* The range that holds ordinal ord. */
static size_t range_of_ord(const struct array_spec *s, long ord)
{
    size_t lo = 0, hi = s->n;

    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->start[mid] <= ord)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

long array_spec_task(const struct array_spec *s, long ord)
{
    size_t i = range_of_ord(s, ord);

    return s->r[i].first + (ord - s->start[i]) * s->r[i].step;
}

long array_spec_ord(const struct array_spec *s, long task)
{
    size_t lo = 0, hi = s->n;

    if (!s->n || task < s->r[0].first)
        return -1;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (s->r[mid].first <= task)
            lo = mid;
        else
            hi = mid;
    }
    if (task > s->r[lo].last || (task - s->r[lo].first) % s->r[lo].step)
        return -1;
    return s->start[lo] + (task - s->r[lo].first) / s->r[lo].step;
}

/* Tasks first, first + step, ... (count of them), as one piece. */
static void piece(FILE *f, int *any, long first, long step, long count)
{
    long last = first + (count - 1) * step;

    fputs(*any ? "," : "", f);
    *any = 1;
    if (count == 1)
        fprintf(f, "%ld", first);
    else if (step == 1)
        fprintf(f, "%ld-%ld", first, last);
    else if (count == 2)
        fprintf(f, "%ld,%ld", first, last);
    else
        fprintf(f, "%ld-%ld:%ld", first, last, step);
}

char *array_spec_format(const struct array_spec *s, long from,
                        const long *skip, size_t n_skip)
{
    char *out = NULL;
    size_t len = 0, k = 0;
    FILE *f = open_memstream(&out, &len);
    int any = 0;

    if (!f)
        return NULL;
    for (size_t i = s->n ? range_of_ord(s, from < 0 ? 0 : from) : 0;
         i < s->n; i++) {
        long o = s->start[i] > from ? s->start[i] : from;
        long end = s->start[i] + count_of(&s->r[i]);
        while (o < end) {
            long stop = end;
            while (k < n_skip && skip[k] < o)
                k++;
            if (k < n_skip && skip[k] < end)
                stop = skip[k];
            if (stop > o)
                piece(f, &any, s->r[i].first + (o - s->start[i]) *
                                                   s->r[i].step,
                      s->r[i].step, stop - o);
            o = stop + (stop < end); /* past the skipped one */
        }
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}

char *array_spec_text(const struct array_spec *s)
{
    char *tasks = array_spec_format(s, 0, NULL, 0), *out;
    size_t n;

    if (!tasks || !s->limit)
        return tasks;
    n = strlen(tasks) + 24;
    if ((out = malloc(n)))
        snprintf(out, n, "%s%%%ld", tasks, s->limit);
    free(tasks);
    return out;
}
