/* audit.c - grid submits, cancels and denials: a log line at once, and a
 * row of the events table written by a thread of its own (with its own
 * connection), in batches, so that a request never waits for PostgreSQL
 * and a flood of denials costs one statement per batch. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jsonw.h"
#include "core/log.h"
#include "core/store.h"
#include "core/timeutil.h"
#include "grid/issuer.h"

#define QUEUE_MAX 10000 /* rows waiting; more are dropped (and counted) */
#define BATCH_MAX 500   /* rows a statement */
#define RETRY_S 2       /* after a failed write */
#define FLUSH_S 3       /* at stop, at most */

static struct {
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t cv;
    char **q;           /* rendered rows, oldest first */
    size_t head, n;
    int started, stop;
    char *conninfo;
    atomic_ulong written, dropped;
} A = {.m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void kv(struct jw *w, const char *k, const char *v)
{
    if (v && *v)
        jw_kv_str(w, k, v);
}

/* The row as store_events_append takes it. */
static char *render(const struct grid_audit *a, const char *msg)
{
    char t[40];
    struct timespec ts;
    struct tm tm;
    struct jw w;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(t + strlen(t), sizeof(t) - strlen(t), ".%06ldZ",
             ts.tv_nsec / 1000);
    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "time", t);
    jw_kv_str(&w, "level", a->status ? "warning" : "info");
    jw_key(&w, "kind");
    {
        char kind[32];
        snprintf(kind, sizeof(kind), "grid.%s", a->kind);
        jw_str(&w, kind);
    }
    jw_kv_str(&w, "subject", a->identity);
    jw_kv_str(&w, "message", msg);
    jw_key(&w, "detail");
    jw_open(&w, '{');
    kv(&w, "identity", a->identity);
    kv(&w, "iss", a->iss);
    kv(&w, "sub", a->sub);
    if (a->iss || a->sub) {
        jw_key(&w, "verified");
        jw_bool(&w, a->verified);
    }
    kv(&w, "vo", a->vo);
    kv(&w, "account", a->account);
    kv(&w, "gateway", a->gateway);
    if (a->job)
        jw_kv_int(&w, "job", a->job);
    if (a->status)
        jw_kv_int(&w, "status", a->status);
    kv(&w, "reason", a->reason);
    kv(&w, "method", a->method);
    kv(&w, "path", a->path);
    jw_close(&w, '}');
    jw_close(&w, '}');
    return jw_finish(&w);
}

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

void grid_audit(const struct grid_audit *a)
{
    char msg[1024], job[32] = "";
    char *row;

    if (a->job)
        snprintf(job, sizeof(job), " job=%lld", (long long)a->job);
    if (a->status)
        snprintf(msg, sizeof(msg), "%s %s denied (%d)%s: %s",
                 or_dash(a->method), or_dash(a->path), a->status, job,
                 or_dash(a->reason));
    else
        snprintf(msg, sizeof(msg), "%s%s", a->kind, job);
    log_msg(a->status ? LOG_WARNING : LOG_INFO, "audit=grid.%s identity=%s%s "
            "vo=%s account=%s gateway=%s%s: %s", a->kind,
            or_dash(a->identity),
            (a->iss || a->sub) && !a->verified ? " (unverified)" : "",
            or_dash(a->vo), or_dash(a->account), or_dash(a->gateway), job,
            a->status ? msg : "ok");
    row = render(a, msg);
    pthread_mutex_lock(&A.m);
    if (!row || !A.started || A.n == QUEUE_MAX) {
        pthread_mutex_unlock(&A.m);
        free(row);
        atomic_fetch_add(&A.dropped, 1);
        return;
    }
    A.q[(A.head + A.n++) % QUEUE_MAX] = row;
    pthread_cond_signal(&A.cv);
    pthread_mutex_unlock(&A.m);
}

/* Up to BATCH_MAX queued rows as one JSON array (a new string; the rows
 * stay queued until written); *k: how many. */
static char *batch(size_t *k)
{
    size_t len = 3, n;
    char *s, *p;

    pthread_mutex_lock(&A.m);
    n = A.n < BATCH_MAX ? A.n : BATCH_MAX;
    for (size_t i = 0; i < n; i++)
        len += strlen(A.q[(A.head + i) % QUEUE_MAX]) + 1;
    if ((s = p = malloc(len))) {
        *p++ = '[';
        for (size_t i = 0; i < n; i++) {
            const char *r = A.q[(A.head + i) % QUEUE_MAX];
            size_t rl = strlen(r);
            if (i)
                *p++ = ',';
            memcpy(p, r, rl);
            p += rl;
        }
        *p++ = ']';
        *p = '\0';
    }
    pthread_mutex_unlock(&A.m);
    *k = s ? n : 0;
    return s;
}

static void written(size_t k)
{
    pthread_mutex_lock(&A.m);
    for (size_t i = 0; i < k; i++) {
        free(A.q[A.head]);
        A.head = (A.head + 1) % QUEUE_MAX;
        A.n--;
    }
    pthread_mutex_unlock(&A.m);
    atomic_fetch_add(&A.written, k);
}

/* Wait for rows (or stop, or the retry time); 1 when stopping. */
static int wait_rows(double secs)
{
    struct timespec ts;
    int stop;

    pthread_mutex_lock(&A.m);
    if (!A.stop && (!A.n || secs > 0)) {
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += secs > 0 ? (time_t)secs : 1;
        pthread_cond_timedwait(&A.cv, &A.m, &ts);
    }
    stop = A.stop;
    pthread_mutex_unlock(&A.m);
    return stop;
}

static void *audit_main(void *arg)
{
    struct store *st = NULL;
    struct loom_error err;
    double stop_at = 0, retry = 0;
    int failing = 0;

    log_thread_name("audit");
    for (;;) {
        size_t k = 0;
        char *rows = NULL;
        int stopping = wait_rows(retry);
        if (stopping && !stop_at)
            stop_at = time_mono() + FLUSH_S;
        retry = 0;
        if (!st && !(st = store_open(A.conninfo, &err)))
            retry = RETRY_S;
        while (st && (rows = batch(&k)) && k) {
            int rc = store_events_append(st, rows, &err);
            free(rows);
            if (rc < 0) {
                if (!failing)
                    log_err("audit: cannot write %zu rows to the events "
                            "table: %s; they are kept and tried again", k,
                            err.message);
                failing = 1;
                retry = RETRY_S;
                break;
            }
            if (failing)
                log_info("audit: writing to the events table again");
            failing = 0;
            written(k);
        }
        if (st && k == 0)
            free(rows);
        pthread_mutex_lock(&A.m);
        k = A.n;
        pthread_mutex_unlock(&A.m);
        if (stopping && k && retry > 0) /* the database is away */
            nanosleep(&(struct timespec){0, 200000000L}, NULL);
        if (stopping && (!k || time_mono() >= stop_at)) {
            if (k)
                log_err("audit: %zu rows were not written to the events "
                        "table before loomd stopped (the log has them)", k);
            store_close(st);
            return NULL;
        }
    }
}

int audit_start(const char *conninfo, struct loom_error *err)
{
    if (!(A.q = calloc(QUEUE_MAX, sizeof(*A.q))) ||
        !(A.conninfo = strdup(conninfo)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    pthread_mutex_lock(&A.m);
    A.started = 1;
    pthread_mutex_unlock(&A.m);
    if (pthread_create(&A.thread, NULL, audit_main, NULL) != 0) {
        A.started = 0;
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the audit "
                              "thread");
    }
    return 0;
}

void audit_stop(void)
{
    pthread_mutex_lock(&A.m);
    if (!A.started) {
        pthread_mutex_unlock(&A.m);
        return;
    }
    A.stop = 1;
    pthread_cond_signal(&A.cv);
    pthread_mutex_unlock(&A.m);
    pthread_join(A.thread, NULL);
    pthread_mutex_lock(&A.m);
    A.started = 0;
    while (A.n) {
        free(A.q[A.head]);
        A.head = (A.head + 1) % QUEUE_MAX;
        A.n--;
    }
    pthread_mutex_unlock(&A.m);
    free(A.q);
    free(A.conninfo);
    A.q = NULL;
    A.conninfo = NULL;
}

void audit_counts(unsigned long *wr, unsigned long *dr, unsigned long *q)
{
    *wr = atomic_load(&A.written);
    *dr = atomic_load(&A.dropped);
    pthread_mutex_lock(&A.m);
    *q = A.n;
    pthread_mutex_unlock(&A.m);
}
