/* metrics.c - the families the threads record into, and the Prometheus
 * text of them. */
/* SPDX-License-Identifier: MIT */
#include "core/metrics.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/vec.h"

#define MAX_LABELS 3

enum kind { COUNTER, GAUGE, HISTOGRAM };

struct series {
    char *values[MAX_LABELS];
    double value;      /* counter, gauge */
    uint64_t *buckets; /* histogram: n_bounds + 1 counts, the last +Inf */
    uint64_t count;
    double sum;
};

struct family {
    const char *name, *help;
    enum kind kind;
    const char *labels[MAX_LABELS];
    size_t n_labels;
    const double *bounds;
    size_t n_bounds;
    size_t max_series;
    pthread_mutex_t lock;
    struct series *s;
    size_t n, cap;
};

/* Seconds: from a tenth of a millisecond to a minute. */
static const double fast_s[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                1, 2.5, 5, 10, 30, 60};
/* An adaptor's operations run commands: from a millisecond to minutes. */
static const double op_s[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                              0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
/* Loom's own part of an API adaptor's call: tens of microseconds to
 * tens of milliseconds, with a bound at the millisecond it is to stay
 * under. */
static const double own_s[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.00075,
                               0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1};
static const double jobs_n[] = {0, 1, 10, 100, 1000, 10000, 100000};
static const double started_n[] = {0, 1, 2, 5, 10, 50, 100, 1000, 10000};
static const double rows_n[] = {1, 2, 5, 10, 50, 100, 500, 1000, 5000,
                                10000};

#define N(a) (sizeof(a) / sizeof(*(a)))
#define LOCK PTHREAD_MUTEX_INITIALIZER

static struct family fams[METRICS_N] = {
    [METRICS_SCHED_CYCLE_SECONDS] = {
        "loom_sched_cycle_seconds", "How long a scheduling cycle takes: "
        "building the plan, planning, applying it.", HISTOGRAM, {0}, 0,
        fast_s, N(fast_s), 1, LOCK, 0, 0, 0},
    [METRICS_SCHED_CYCLE_LAST] = {
        "loom_sched_cycle_last_seconds", "How long the last scheduling "
        "cycle took.", GAUGE, {0}, 0, NULL, 0, 1, LOCK, 0, 0, 0},
    [METRICS_SCHED_CYCLE_CONSIDERED] = {
        "loom_sched_cycle_jobs_considered", "Waiting jobs a scheduling "
        "cycle considered (its queue).", HISTOGRAM, {0}, 0, jobs_n,
        N(jobs_n), 1, LOCK, 0, 0, 0},
    [METRICS_SCHED_CYCLE_STARTED] = {
        "loom_sched_cycle_jobs_started", "Jobs a scheduling cycle started.",
        HISTOGRAM, {0}, 0, started_n, N(started_n), 1, LOCK, 0, 0, 0},
    [METRICS_ADAPTOR_OP_SECONDS] = {
        "loom_adaptor_op_seconds", "How long an adaptor operation of a "
        "cluster takes, failed ones included.", HISTOGRAM,
        {"cluster", "op"}, 2, op_s, N(op_s), 1024, LOCK, 0, 0, 0},
    [METRICS_ADAPTOR_OP_FAILURES] = {
        "loom_adaptor_op_failures_total", "Adaptor operations of a cluster "
        "that failed.", COUNTER, {"cluster", "op"}, 2, NULL, 0, 1024, LOCK,
        0, 0, 0},
    [METRICS_ADAPTOR_OWN_SECONDS] = {
        "loom_adaptor_own_seconds", "Loom's own time in an operation of a "
        "cluster reached through an API (slurmrestd, another loomd): the "
        "operation's time less libcurl's time of its requests, the "
        "cluster system's answer.", HISTOGRAM, {"cluster", "op"}, 2, own_s,
        N(own_s), 1024, LOCK, 0, 0, 0},
    [METRICS_HTTP_SECONDS] = {
        "loom_http_request_seconds", "How long loomd takes to answer an API "
        "request, by method, route (its pattern) and status class.",
        HISTOGRAM, {"method", "route", "code"}, 3, fast_s, N(fast_s), 512,
        LOCK, 0, 0, 0},
    [METRICS_DB_COMMIT_SECONDS] = {
        "loom_db_commit_seconds", "How long a PostgreSQL transaction of "
        "job changes takes to commit.", HISTOGRAM, {0}, 0, fast_s,
        N(fast_s), 1, LOCK, 0, 0, 0},
    [METRICS_DB_COMMIT_JOBS] = {
        "loom_db_commit_jobs", "Jobs and reservations written by one "
        "transaction (new and changed).", HISTOGRAM, {0}, 0, rows_n,
        N(rows_n), 1, LOCK, 0, 0, 0},
    [METRICS_DB_COMMIT_FAILURES] = {
        "loom_db_commit_failures_total", "Transactions of job changes that "
        "failed (retried until PostgreSQL takes them).", COUNTER, {0}, 0,
        NULL, 0, 1, LOCK, 0, 0, 0},
    [METRICS_MAINT_REQUESTS] = {
        "loom_maintenance_requests", "Maintenance requests by state.", GAUGE,
        {"state"}, 1, NULL, 0, 16, LOCK, 0, 0, 0},
    [METRICS_MISMATCHES] = {
        "loom_mismatches", "Attributes of nodes whose actual state differs "
        "from their goal, by attribute.", GAUGE, {"attribute"}, 1, NULL, 0,
        100, LOCK, 0, 0, 0},
    [METRICS_AUTH_VERIFICATIONS] = {
        "loom_auth_verifications_total", "Credentials checked: Loom tokens, "
        "tokens of outside issuers, client certificates.", COUNTER,
        {"kind", "result"}, 2, NULL, 0, 16, LOCK, 0, 0, 0},
    [METRICS_AUTH_DENIALS] = {
        "loom_auth_denials_total", "Requests refused with 401 or 403 by "
        "kind of credential and reason.", COUNTER, {"kind", "reason"}, 2,
        NULL, 0, 128, LOCK, 0, 0, 0},
};

static const char *const other[MAX_LABELS] = {"other", "other", "other"};

static int same(const struct family *f, const struct series *s,
                const char *const *values)
{
    for (size_t i = 0; i < f->n_labels; i++)
        if (strcmp(s->values[i], values[i]) != 0)
            return 0;
    return 1;
}

static void series_free(const struct family *f, struct series *s)
{
    for (size_t i = 0; i < f->n_labels; i++)
        free(s->values[i]);
    free(s->buckets);
    memset(s, 0, sizeof(*s));
}

/* The series of values, made when new (under f->lock); NULL when out of
 * memory. At the ceiling, the series "other". */
static struct series *find(struct family *f, const char *const *values)
{
    struct series *s;

    for (size_t i = 0; i < f->n; i++)
        if (same(f, &f->s[i], values))
            return &f->s[i];
    if (f->n + 1 >= f->max_series && f->n_labels && values != other)
        return find(f, other);
    if (vec_grow((void **)&f->s, &f->cap, f->n + 1, sizeof(*f->s), 8) < 0)
        return NULL;
    s = &f->s[f->n];
    for (size_t i = 0; i < f->n_labels; i++)
        if (!(s->values[i] = strdup(values[i] ? values[i] : "")))
            goto error;
    if (f->kind == HISTOGRAM &&
        !(s->buckets = calloc(f->n_bounds + 1, sizeof(*s->buckets))))
        goto error;
    f->n++;
    return s;
error:
    series_free(f, s);
    return NULL;
}

static void update(enum metrics_id id, const char *const *values, double v,
                   int how)
{
    struct family *f = &fams[id];
    struct series *s;
    size_t b;

    pthread_mutex_lock(&f->lock);
    s = find(f, values);
    if (s && how == 0) {
        s->value += v;
    } else if (s && how == 1) {
        s->value = v;
    } else if (s && f->kind == HISTOGRAM) {
        for (b = 0; b < f->n_bounds && v > f->bounds[b]; b++)
            ;
        s->buckets[b]++;
        s->count++;
        s->sum += v;
    }
    pthread_mutex_unlock(&f->lock);
}

void metrics_add(enum metrics_id id, const char *const *values, double v)
{
    update(id, values, v, 0);
}

void metrics_set(enum metrics_id id, const char *const *values, double v)
{
    update(id, values, v, 1);
}

void metrics_observe(enum metrics_id id, const char *const *values, double v)
{
    update(id, values, v, 2);
}

void metrics_replace(enum metrics_id id, const char *const *values,
                     const double *v, size_t n)
{
    struct family *f = &fams[id];

    pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->n; i++)
        series_free(f, &f->s[i]);
    f->n = 0;
    for (size_t i = 0; i < n; i++) {
        struct series *s = find(f, values + i * f->n_labels);
        if (s)
            s->value += v[i];
    }
    pthread_mutex_unlock(&f->lock);
}

void metrics_printf(struct metrics_out *o, const char *fmt, ...)
{
    va_list ap;
    int n;

    for (int pass = 0; pass < 2 && !o->oom; pass++) {
        size_t room = o->cap - o->len;
        va_start(ap, fmt);
        n = vsnprintf(o->p ? o->p + o->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->oom = 1;
        } else if ((size_t)n < room) {
            o->len += (size_t)n;
            return;
        } else if (vec_grow((void **)&o->p, &o->cap, o->len + (size_t)n + 1,
                            1, 65536) < 0) {
            o->oom = 1;
        }
    }
}

void metrics_label(struct metrics_out *o, const char *v)
{
    for (; *v; v++) {
        size_t run = strcspn(v, "\\\"\n");
        if (run)
            metrics_printf(o, "%.*s", (int)run, v);
        v += run;
        if (!*v)
            break;
        metrics_printf(o, "\\%c", *v == '\n' ? 'n' : *v);
    }
}

void metrics_family(struct metrics_out *o, const char *name,
                    const char *type, const char *help)
{
    metrics_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
                   type);
}

/* A number as the format reads it: whole numbers without a fraction. */
static void number(struct metrics_out *o, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        metrics_printf(o, "%.0f", v);
    else
        metrics_printf(o, "%.9g", v);
}

/* name{l1="v1",l2="v2"[,le="b"]} */
static void sample(struct metrics_out *o, const struct family *f,
                   const char *suffix, const struct series *s,
                   const char *le)
{
    int any = f->n_labels || le;

    metrics_printf(o, "%s%s%s", f->name, suffix, any ? "{" : " ");
    for (size_t i = 0; i < f->n_labels; i++) {
        metrics_printf(o, "%s%s=\"", i ? "," : "", f->labels[i]);
        metrics_label(o, s->values[i]);
        metrics_printf(o, "\"");
    }
    if (le)
        metrics_printf(o, "%sle=\"%s\"", f->n_labels ? "," : "", le);
    if (any)
        metrics_printf(o, "} ");
}

static void render_series(struct metrics_out *o, const struct family *f,
                          const struct series *s)
{
    uint64_t cum = 0;
    char le[32];

    if (f->kind != HISTOGRAM) {
        sample(o, f, "", s, NULL);
        number(o, s->value);
        metrics_printf(o, "\n");
        return;
    }
    for (size_t b = 0; b <= f->n_bounds; b++) {
        cum += s->buckets ? s->buckets[b] : 0;
        if (b < f->n_bounds)
            snprintf(le, sizeof(le), "%g", f->bounds[b]);
        sample(o, f, "_bucket", s, b < f->n_bounds ? le : "+Inf");
        metrics_printf(o, "%llu\n", (unsigned long long)cum);
    }
    sample(o, f, "_sum", s, NULL);
    number(o, s->sum);
    metrics_printf(o, "\n");
    sample(o, f, "_count", s, NULL);
    metrics_printf(o, "%llu\n", (unsigned long long)s->count);
}

/* The label sets every scrape shows, zeros included, so that a
 * dashboard has its series before the first event. */
static void seed(void)
{
    static const char *const kinds[] = {"loom", "issuer", "certificate",
                                         "peer"};
    static const char *const results[] = {"ok", "denied"};
    const char *v[2];

    for (size_t k = 0; k < N(kinds); k++)
        for (size_t r = 0; r < N(results); r++) {
            v[0] = kinds[k];
            v[1] = results[r];
            metrics_add(METRICS_AUTH_VERIFICATIONS, v, 0);
        }
    for (size_t i = 0; domain_maint_states.names[i]; i++)
        metrics_add(METRICS_MAINT_REQUESTS, &domain_maint_states.names[i],
                    0);
}

void metrics_render(struct metrics_out *o)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    static const char *const types[] = {"counter", "gauge", "histogram"};
    struct series none = {0};

    pthread_once(&once, seed);
    for (size_t i = 0; i < METRICS_N; i++) {
        struct family *f = &fams[i];
        pthread_mutex_lock(&f->lock);
        metrics_family(o, f->name, types[f->kind], f->help);
        for (size_t k = 0; k < f->n; k++)
            render_series(o, f, &f->s[k]);
        if (!f->n && !f->n_labels) /* one series, zero until recorded */
            render_series(o, f, &none);
        pthread_mutex_unlock(&f->lock);
    }
}

void metrics_reset(void)
{
    for (size_t i = 0; i < METRICS_N; i++) {
        struct family *f = &fams[i];
        pthread_mutex_lock(&f->lock);
        for (size_t k = 0; k < f->n; k++)
            series_free(f, &f->s[k]);
        free(f->s);
        f->s = NULL;
        f->n = f->cap = 0;
        pthread_mutex_unlock(&f->lock);
    }
}
