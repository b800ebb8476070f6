/* http_accept.c - a listener's accept thread. libmicrohttpd's own accept
 * runs on whichever pool thread wakes first, which takes every connection
 * waiting (up to ten at once): eight clients that connect together end up
 * on two or three threads. A handler waits on its thread for a call's
 * answer (a submit: its commit), so the requests of connections that share
 * a thread wait for each other; here MHD_add_connection picks the pool
 * thread by the new socket's number, and connections opened together go
 * to threads of their own. */
/* SPDX-License-Identifier: MIT */
#include "core/http_accept.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"

/* Out of descriptors: accept again after this long, not in a busy loop
 * (the kernel keeps the connection waiting in the backlog meanwhile). */
#define FULL_WAIT_MS 100

struct http_accept {
    int fd;       /* the listening socket */
    int stop_fd;  /* an eventfd: written to stop the thread */
    struct MHD_Daemon *daemon;
    pthread_t thread;
    int failing;  /* the last accept failed: said once, until one works */
};

/* Accept what waits on a->fd. Returns the poll timeout to use next: -1,
 * or FULL_WAIT_MS when out of descriptors. */
static int accept_all(struct http_accept *a)
{
    for (;;) {
        struct sockaddr_storage sa;
        socklen_t len = sizeof(sa);
        int c = accept4(a->fd, (struct sockaddr *)&sa, &len,
                        SOCK_NONBLOCK | SOCK_CLOEXEC);

        if (c < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return -1;
            /* out of descriptors or memory, or worse: said once, and
             * tried again every FULL_WAIT_MS */
            if (!a->failing++)
                log_warn("http: accept: %s; trying again every %d ms until "
                         "it works", strerror(errno), FULL_WAIT_MS);
            return FULL_WAIT_MS;
        }
        if (a->failing) {
            log_info("http: accept works again after %d failed tries",
                     a->failing);
            a->failing = 0;
        }
        /* MHD_NO (a limit reached, no memory): the socket is closed */
        (void)MHD_add_connection(a->daemon, c, (struct sockaddr *)&sa, len);
    }
}

static void *accept_main(void *arg)
{
    struct http_accept *a = arg;
    int timeout = -1;

    log_thread_name("accept");
    for (;;) {
        struct pollfd p[2] = {{a->fd, POLLIN, 0}, {a->stop_fd, POLLIN, 0}};
        int n = poll(p, 2, timeout);

        if (n < 0 && errno != EINTR) {
            log_err("http: accept: poll: %s; no new connections are taken",
                    strerror(errno));
            return NULL;
        }
        if (n > 0 && p[1].revents)
            return NULL;
        timeout = accept_all(a);
    }
}

struct http_accept *http_accept_start(int fd, struct MHD_Daemon *daemon,
                                      struct loom_error *err)
{
    struct http_accept *a = calloc(1, sizeof(*a));

    if (!a) {
        close(fd);
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    a->fd = fd;
    a->daemon = daemon;
    a->stop_fd = eventfd(0, EFD_CLOEXEC);
    /* accept_all takes connections until none waits */
    if (a->stop_fd < 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "HTTP accept thread: %s",
                       strerror(errno));
        goto error;
    }
    if (pthread_create(&a->thread, NULL, accept_main, a) != 0) {
        loom_error_set(err, LOOM_EINTERNAL, "cannot start the HTTP accept "
                       "thread");
        goto error;
    }
    return a;
error:
    if (a->stop_fd >= 0)
        close(a->stop_fd);
    close(fd);
    free(a);
    return NULL;
}

void http_accept_stop(struct http_accept *a)
{
    uint64_t one = 1;

    if (!a)
        return;
    if (write(a->stop_fd, &one, sizeof(one)) != sizeof(one)) {
        /* the thread goes on and needs a: left as it is */
        log_warn("http: cannot stop the accept thread: %s", strerror(errno));
        return;
    }
    pthread_join(a->thread, NULL);
    close(a->stop_fd);
    close(a->fd);
    free(a);
}
