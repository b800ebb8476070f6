/* msgq.c - message queues and reply slots (mutex + condition variable). */
/* SPDX-License-Identifier: MIT */
#include "core/msgq.h"

#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct sync {
    pthread_mutex_t lock;
    pthread_cond_t cond;
};

static int sync_init(struct sync *s)
{
    pthread_condattr_t ca;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, &ca);
    pthread_condattr_destroy(&ca);
    return 0;
}

static void sync_fini(struct sync *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cond);
}

static void deadline(struct timespec *ts, double timeout_s)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    ts->tv_sec += (time_t)timeout_s;
    ts->tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

struct reply *reply_create(void)
{
    struct reply *r = calloc(1, sizeof(*r));
    struct sync *s = calloc(1, sizeof(*s));

    if (!r || !s) {
        free(r);
        free(s);
        return NULL;
    }
    sync_init(s);
    r->lock_and_cond = s;
    r->refs = 1;
    return r;
}

struct reply *reply_ref(struct reply *r)
{
    struct sync *s = r->lock_and_cond;

    pthread_mutex_lock(&s->lock);
    r->refs++;
    pthread_mutex_unlock(&s->lock);
    return r;
}

void reply_unref(struct reply *r)
{
    struct sync *s;
    int last;

    if (!r)
        return;
    s = r->lock_and_cond;
    pthread_mutex_lock(&s->lock);
    last = --r->refs == 0;
    pthread_mutex_unlock(&s->lock);
    if (!last)
        return;
    sync_fini(s);
    free(s);
    free(r->body);
    free(r->location);
    free(r);
}

void reply_send(struct reply *r, int status, char *body_take)
{
    reply_send_at(r, status, body_take, NULL);
}

void reply_send_at(struct reply *r, int status, char *body_take,
                   char *location_take)
{
    struct sync *s = r->lock_and_cond;

    pthread_mutex_lock(&s->lock);
    if (r->done) { /* answered already: keep the first answer */
        pthread_mutex_unlock(&s->lock);
        free(body_take);
        free(location_take);
        return;
    }
    r->status = status;
    r->body = body_take;
    r->location = location_take;
    r->done = 1;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
}

void reply_send_error(struct reply *r, const struct loom_error *err)
{
    struct sync *s = r->lock_and_cond;

    pthread_mutex_lock(&s->lock);
    if (!r->done)
        r->err = *err;
    pthread_mutex_unlock(&s->lock);
    reply_send(r, loom_error_status(err->kind), NULL);
}

int reply_wait(struct reply *r, double timeout_s)
{
    struct sync *s = r->lock_and_cond;
    struct timespec ts;
    int rc = 0;

    deadline(&ts, timeout_s);
    pthread_mutex_lock(&s->lock);
    while (!r->done && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    rc = r->done ? 0 : -1;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

struct msgq {
    struct sync sync;
    struct msg *head, *tail;
    size_t n;
    void (*wake_cb)(void *arg); /* set before any post; then read only */
    void *wake_arg;
    double quiet_s;    /* msgq_set_quiet's */
    int quiet_now;
    int waiting;       /* the owner waits, until wait_until (monotonic s) */
    double wait_until;
};

void msgq_set_quiet(struct msgq *q, double quiet_s, int now)
{
    pthread_mutex_lock(&q->sync.lock);
    q->quiet_s = quiet_s;
    q->quiet_now = now;
    pthread_mutex_unlock(&q->sync.lock);
}

void msgq_set_waker(struct msgq *q, void (*wake_cb)(void *arg), void *arg)
{
    pthread_mutex_lock(&q->sync.lock);
    q->wake_cb = wake_cb;
    q->wake_arg = arg;
    pthread_mutex_unlock(&q->sync.lock);
}

struct msgq *msgq_create(void)
{
    struct msgq *q = calloc(1, sizeof(*q));

    if (q)
        sync_init(&q->sync);
    return q;
}

void msgq_destroy(struct msgq *q)
{
    if (!q)
        return;
    while (q->head) {
        struct msg *m = q->head;
        q->head = m->next;
        msg_destroy(m);
    }
    sync_fini(&q->sync);
    free(q);
}

struct msg *msg_create(int type, void *data, void (*data_free)(void *),
                       struct reply *reply)
{
    struct msg *m = calloc(1, sizeof(*m));

    if (!m) {
        if (data_free)
            data_free(data);
        return NULL;
    }
    m->type = type;
    snprintf(m->request, sizeof(m->request), "%s", log_request());
    m->data = data;
    m->data_free = data_free;
    m->reply = reply ? reply_ref(reply) : NULL;
    return m;
}

void msg_destroy(struct msg *m)
{
    if (!m)
        return;
    if (m->data_free)
        m->data_free(m->data);
    reply_unref(m->reply);
    free(m);
}

static double mono_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void post(struct msgq *q, struct msg *m, int quiet)
{
    void (*wake)(void *) = NULL;
    void *arg = NULL;
    int loud;

    if (!m)
        return;
    m->next = NULL;
    pthread_mutex_lock(&q->sync.lock);
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    q->n++;
    /* quiet: only when the owner waits for it, or would sleep past the
     * latest it may be taken */
    loud = !quiet || q->quiet_s <= 0 || q->quiet_now ||
           (q->waiting && q->wait_until > mono_now() + q->quiet_s);
    if (loud) {
        pthread_cond_signal(&q->sync.cond);
        wake = q->wake_cb;
        arg = q->wake_arg;
    }
    pthread_mutex_unlock(&q->sync.lock);
    if (wake)
        wake(arg);
}

void msgq_post(struct msgq *q, struct msg *m)
{
    post(q, m, 0);
}

void msgq_post_quiet(struct msgq *q, struct msg *m)
{
    post(q, m, 1);
}

/* now: take what is queued and never wait (for msgq_take_now). */
static struct msg *take(struct msgq *q, double timeout_s, size_t max,
                        int now)
{
    struct msg *first, *last;
    struct timespec ts;
    size_t k = 1;
    int rc = 0;

    if (timeout_s >= 0 && !now)
        deadline(&ts, timeout_s);
    pthread_mutex_lock(&q->sync.lock);
    q->wait_until = timeout_s < 0 ? 1e300 : mono_now() + timeout_s;
    while (!now && !q->head && rc != ETIMEDOUT) {
        q->waiting = 1;
        if (timeout_s < 0)
            pthread_cond_wait(&q->sync.cond, &q->sync.lock);
        else
            rc = pthread_cond_timedwait(&q->sync.cond, &q->sync.lock, &ts);
        q->waiting = 0;
    }
    first = q->head;
    if (first) {
        for (last = first; last->next && k < max; last = last->next)
            k++;
        q->head = last->next;
        if (!q->head)
            q->tail = NULL;
        last->next = NULL;
        q->n -= k;
    }
    pthread_mutex_unlock(&q->sync.lock);
    return first;
}

struct msg *msgq_take(struct msgq *q, double timeout_s, size_t max)
{
    return take(q, timeout_s, max, 0);
}

struct msg *msgq_take_now(struct msgq *q, size_t max)
{
    return take(q, 0, max, 1);
}

size_t msgq_length(struct msgq *q)
{
    size_t n;

    pthread_mutex_lock(&q->sync.lock);
    n = q->n;
    pthread_mutex_unlock(&q->sync.lock);
    return n;
}
