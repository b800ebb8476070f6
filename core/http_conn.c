/* http_conn.c - the deadline of every connection's request: a client that
 * has not sent a whole request (headers and body) within request_timeout_s
 * of its connection, or of its last answer, is cut off. libmicrohttpd's
 * own timeout restarts with every byte, so a trickle of one byte a second
 * would hold a connection for ever. */
/* SPDX-License-Identifier: MIT */
#include "core/http_conn.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "core/log.h"
#include "core/timeutil.h"

struct http_conn {
    struct http_conn *prev, *next;
    int fd;
    int handling;  /* the request is whole: it is being answered */
    int cut;       /* shut down already */
    double since;  /* the request being read began (time_mono) */
};

static pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_ = PTHREAD_COND_INITIALIZER;
static struct {
    struct http_conn head; /* a ring */
    pthread_t thread;
    int running, stopping;
    double timeout_s;
    unsigned long cut_total;
} C;

struct http_conn *http_conn_open(int fd)
{
    struct http_conn *c = calloc(1, sizeof(*c));

    if (!c)
        return NULL;
    c->fd = fd;
    c->since = time_mono();
    pthread_mutex_lock(&lock_);
    c->next = C.head.next;
    c->prev = &C.head;
    C.head.next->prev = c;
    C.head.next = c;
    pthread_mutex_unlock(&lock_);
    return c;
}

/* The socket is about to be closed: after this the fd may be another's,
 * so the watchdog must not touch it (both under the lock). */
void http_conn_close(struct http_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&lock_);
    c->prev->next = c->next;
    c->next->prev = c->prev;
    pthread_mutex_unlock(&lock_);
    free(c);
}

void http_conn_handling(struct http_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&lock_);
    c->handling = 1;
    pthread_mutex_unlock(&lock_);
}

void http_conn_answered(struct http_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&lock_);
    c->handling = 0;
    c->since = time_mono();
    pthread_mutex_unlock(&lock_);
}

/* Cut off the connections over their deadline: shutdown(2) ends their
 * reads and writes, and libmicrohttpd closes them as it would any
 * connection its peer closed (closing the fd here would race with it). */
static void *watch(void *arg)
{
    struct timespec ts;

    (void)arg;
    log_thread_name("http-watch");
    pthread_mutex_lock(&lock_);
    while (!C.stopping) {
        double now = time_mono();
        unsigned n = 0;
        for (struct http_conn *c = C.head.next; c != &C.head; c = c->next) {
            if (c->handling || c->cut || now - c->since < C.timeout_s)
                continue;
            shutdown(c->fd, SHUT_RDWR);
            c->cut = 1;
            n++;
        }
        C.cut_total += n;
        if (n)
            log_info("cut off %u connection(s) whose request was not "
                     "complete within %.0f s", n, C.timeout_s);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 250 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&wake_, &lock_, &ts);
    }
    pthread_mutex_unlock(&lock_);
    return NULL;
}

int http_conn_start(double timeout_s, struct loom_error *err)
{
    C.head.next = C.head.prev = &C.head;
    C.timeout_s = timeout_s;
    C.stopping = 0;
    if (pthread_create(&C.thread, NULL, watch, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "connection watchdog thread");
    C.running = 1;
    return 0;
}

void http_conn_stop(void)
{
    if (!C.running)
        return;
    pthread_mutex_lock(&lock_);
    C.stopping = 1;
    pthread_cond_signal(&wake_);
    pthread_mutex_unlock(&lock_);
    pthread_join(C.thread, NULL);
    C.running = 0;
}

unsigned long http_conn_cut_total(void)
{
    unsigned long n;

    pthread_mutex_lock(&lock_);
    n = C.cut_total;
    pthread_mutex_unlock(&lock_);
    return n;
}
