/* http_stream.c - streamed answers: a content reader that suspends its
 * connection when its stream has nothing to send, and a wake that
 * resumes every suspended one. A suspended connection holds no thread of
 * the pool, so an open dashboard costs a socket and a few bytes. */
/* SPDX-License-Identifier: MIT */
#include "core/http_stream.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

/* Bytes asked of a stream at once. */
#define BLOCK 16384

struct sconn {
    struct sconn *prev, *next; /* the ring of streams being answered */
    struct MHD_Connection *conn;
    struct http_stream s;
    int suspended;
};

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static struct sconn ring_ = {&ring_, &ring_, NULL, {0}, 0};
static uint64_t wakes_;  /* wakes so far (under lock_) */
static int ending_;      /* the server stops (under lock_) */
static unsigned count_;  /* streams being answered (under lock_) */

/* The connection can take bytes. Nothing ready: suspend it, unless a wake
 * came while the stream was asked (then ask again at once). */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct sconn *sc = cls;
    uint64_t w;
    long n;

    (void)pos;
    pthread_mutex_lock(&lock_);
    w = wakes_;
    n = ending_ ? -1 : 0;
    pthread_mutex_unlock(&lock_);
    if (n == 0)
        n = sc->s.next(sc->s.cls, buf, max);
    if (n < 0)
        return MHD_CONTENT_READER_END_OF_STREAM;
    if (n > 0)
        return (ssize_t)n;
    pthread_mutex_lock(&lock_);
    if (w == wakes_ && !ending_) {
        sc->suspended = 1;
        MHD_suspend_connection(sc->conn);
    }
    pthread_mutex_unlock(&lock_);
    return 0;
}

/* The response is destroyed: the answer ended or the connection closed. */
static void stream_free(void *cls)
{
    struct sconn *sc = cls;

    pthread_mutex_lock(&lock_);
    sc->prev->next = sc->next;
    sc->next->prev = sc->prev;
    count_--;
    pthread_mutex_unlock(&lock_);
    if (sc->s.done)
        sc->s.done(sc->s.cls);
    free(sc);
}

struct MHD_Response *http_stream_response(struct MHD_Connection *conn,
                                          const struct http_stream *s)
{
    struct sconn *sc = calloc(1, sizeof(*sc));
    struct MHD_Response *r;

    if (!sc) {
        if (s->done)
            s->done(s->cls);
        return NULL;
    }
    sc->conn = conn;
    sc->s = *s;
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, BLOCK,
                                          stream_read, sc, stream_free);
    if (!r) {
        if (s->done)
            s->done(s->cls);
        free(sc);
        return NULL;
    }
    pthread_mutex_lock(&lock_);
    sc->next = ring_.next;
    sc->prev = &ring_;
    ring_.next->prev = sc;
    ring_.next = sc;
    count_++;
    pthread_mutex_unlock(&lock_);
    return r;
}

void http_stream_wake(void)
{
    pthread_mutex_lock(&lock_);
    wakes_++;
    for (struct sconn *sc = ring_.next; sc != &ring_; sc = sc->next)
        if (sc->suspended) {
            sc->suspended = 0;
            MHD_resume_connection(sc->conn);
        }
    pthread_mutex_unlock(&lock_);
}

unsigned http_streams(void)
{
    unsigned n;

    pthread_mutex_lock(&lock_);
    n = count_;
    pthread_mutex_unlock(&lock_);
    return n;
}

void http_stream_end_all(void)
{
    pthread_mutex_lock(&lock_);
    ending_ = 1;
    pthread_mutex_unlock(&lock_);
    http_stream_wake();
}

void http_stream_reset(void)
{
    pthread_mutex_lock(&lock_);
    ending_ = 0;
    pthread_mutex_unlock(&lock_);
}
