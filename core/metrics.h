/* metrics.h - what GET /metrics shows that the threads record as they
 * work: counters, gauges and histograms by label, each family with a
 * ceiling on its series, rendered in the Prometheus text format. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_METRICS_H
#define LOOM_CORE_METRICS_H

#include <stddef.h>

/* The families recorded here (core/metrics.c has their names, help,
 * labels and buckets; docs/api.md lists them). The others of /metrics
 * are read from the snapshot when scraped (core/api/runtime.c). */
enum metrics_id {
    METRICS_SCHED_CYCLE_SECONDS,    /* histogram */
    METRICS_SCHED_CYCLE_LAST,       /* gauge */
    METRICS_SCHED_CYCLE_CONSIDERED, /* histogram */
    METRICS_SCHED_CYCLE_STARTED,    /* histogram */
    METRICS_ADAPTOR_OP_SECONDS,     /* histogram: cluster, op */
    METRICS_ADAPTOR_OP_FAILURES,    /* counter: cluster, op */
    METRICS_ADAPTOR_OWN_SECONDS,    /* histogram: cluster, op (API
                                       adaptors only: may have no series) */
    METRICS_HTTP_SECONDS,           /* histogram: method, route, code */
    METRICS_DB_COMMIT_SECONDS,      /* histogram */
    METRICS_DB_COMMIT_JOBS,         /* histogram */
    METRICS_DB_COMMIT_FAILURES,     /* counter */
    METRICS_MAINT_REQUESTS,         /* gauge: state */
    METRICS_MISMATCHES,             /* gauge: attribute */
    METRICS_AUTH_VERIFICATIONS,     /* counter: kind, result */
    METRICS_AUTH_DENIALS,           /* counter: kind, reason */
    METRICS_N
};

/* Label values, in the order of the family's labels (NULL for a family
 * without labels). A value is copied; any text is allowed (it is escaped
 * when rendered). When a family holds its ceiling of series, a new label
 * set is counted as the series whose every value is "other". Any thread. */
void metrics_add(enum metrics_id id, const char *const *values, double v);
void metrics_set(enum metrics_id id, const char *const *values, double v);
void metrics_observe(enum metrics_id id, const char *const *values,
                     double v);
/* Replace every series of a gauge family: n label sets (n * labels
 * values) and their values, in the order to show them; past the
 * family's ceiling the rest are summed into "other". */
void metrics_replace(enum metrics_id id, const char *const *values,
                     const double *v, size_t n);

/* The Prometheus text being written: grows as needed; oom once an
 * allocation failed (the text is then incomplete). */
struct metrics_out {
    char *p;
    size_t len, cap;
    int oom;
};
void metrics_printf(struct metrics_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A label value with \, " and newlines escaped as the format wants. */
void metrics_label(struct metrics_out *o, const char *value);
/* "# HELP name help\n# TYPE name type\n". */
void metrics_family(struct metrics_out *o, const char *name,
                    const char *type, const char *help);
/* Append every family of enum metrics_id, each whole with its HELP and
 * TYPE, its series in the order they first came. */
void metrics_render(struct metrics_out *o);

/* Forget every series (for tests; not while other threads record). */
void metrics_reset(void);

#endif
