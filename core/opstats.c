/* opstats.c - per cluster and operation: recent durations, sums, counts. */
/* SPDX-License-Identifier: MIT */
#include "core/opstats.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PAIRS 64
#define RING 256

struct pair {
    char cluster[64], op[24];
    double ring[RING];
    size_t next, filled;
    unsigned long count, failures;
    double sum;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pair pairs[MAX_PAIRS];
static size_t n_pairs;

void opstats_record(const char *cluster, const char *op, double seconds,
                    int ok)
{
    struct pair *p = NULL;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_pairs && !p; i++)
        if (!strcmp(pairs[i].cluster, cluster) && !strcmp(pairs[i].op, op))
            p = &pairs[i];
    if (!p && n_pairs < MAX_PAIRS) {
        p = &pairs[n_pairs++];
        snprintf(p->cluster, sizeof(p->cluster), "%s", cluster);
        snprintf(p->op, sizeof(p->op), "%s", op);
    }
    if (p) {
        p->ring[p->next] = seconds;
        p->next = (p->next + 1) % RING;
        if (p->filled < RING)
            p->filled++;
        p->count++;
        p->sum += seconds;
        p->failures += !ok;
    }
    pthread_mutex_unlock(&lock);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

size_t opstats_render(char *out, size_t n)
{
    size_t off = 0;
    double v[RING];

#define EMIT(...)                                                            \
    do {                                                                     \
        int w_ = snprintf(out + off, n > off ? n - off : 0, __VA_ARGS__);    \
        if (w_ > 0)                                                          \
            off += (size_t)w_;                                               \
    } while (0)
    pthread_mutex_lock(&lock);
    if (n_pairs)
        EMIT("# HELP loom_adaptor_op_seconds How long an adaptor operation "
             "of a cluster takes: quantiles over its last %d calls, sum and "
             "count over all.\n"
             "# TYPE loom_adaptor_op_seconds summary\n", RING);
    for (size_t i = 0; i < n_pairs; i++) {
        struct pair *p = &pairs[i];
        memcpy(v, p->ring, p->filled * sizeof(*v));
        qsort(v, p->filled, sizeof(*v), cmp_double);
        EMIT("loom_adaptor_op_seconds{cluster=\"%s\",op=\"%s\",quantile=\"0.5\"}"
             " %.6f\n", p->cluster, p->op, p->filled ? v[p->filled / 2] : 0);
        EMIT("loom_adaptor_op_seconds{cluster=\"%s\",op=\"%s\","
             "quantile=\"0.99\"} %.6f\n", p->cluster, p->op,
             p->filled ? v[(p->filled * 99) / 100] : 0);
        EMIT("loom_adaptor_op_seconds_sum{cluster=\"%s\",op=\"%s\"} %.6f\n",
             p->cluster, p->op, p->sum);
        EMIT("loom_adaptor_op_seconds_count{cluster=\"%s\",op=\"%s\"} %lu\n",
             p->cluster, p->op, p->count);
    }
    /* A family's samples stay together: the failures come after. */
    if (n_pairs)
        EMIT("# HELP loom_adaptor_op_failures_total Adaptor operations of a "
             "cluster that failed.\n"
             "# TYPE loom_adaptor_op_failures_total counter\n");
    for (size_t i = 0; i < n_pairs; i++)
        EMIT("loom_adaptor_op_failures_total{cluster=\"%s\",op=\"%s\"} %lu\n",
             pairs[i].cluster, pairs[i].op, pairs[i].failures);
    pthread_mutex_unlock(&lock);
#undef EMIT
    return off < n ? off : n;
}
