/* curlloop.h - HTTP requests of the server thread: one libcurl multi. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_CURLLOOP_H
#define LOOM_ADAPTORS_CURLLOOP_H

#include <stddef.h>

#include "core/conf.h"
#include "core/error.h"

/*
 * The server thread's transfers: one libcurl multi handle, so that every
 * request of every API adaptor runs at once on that one thread, none
 * waiting for another, with one pool of connections kept open between
 * requests. The thread waits in curlloop_run (on the transfers' sockets,
 * their deadlines and a wake-up pipe that a post to its message queue
 * writes to), never in a request. Everything here but curlloop_wakeup is
 * for that thread only (at start-up, before the thread, the main thread).
 */
struct curlloop;

/* What a request came to: borrowed by done_cb for the call only. */
struct fetch_result {
    long status;        /* the HTTP status; 0 when no answer came */
    const char *body;   /* the body, NUL-terminated ("" for none) */
    size_t len;
    const char *error;  /* no answer: why (a sentence), else NULL */
    int timed_out;      /* no answer within the request's timeout */
    double seconds;     /* from the start to the end of the transfer */
    /* libcurl's own time of the transfer (CURLINFO_TOTAL_TIME_T: name
     * lookup, connecting, sending, the server's answer), every try
     * included: what the far side and the network took, where seconds
     * also counts the loop's turns around it. 0 when it was never sent. */
    double transfer_s;
    const char *etag;   /* the answer's ETag header as sent, or NULL */
};

struct fetch_req {
    const char *method;          /* "GET", "POST" or "DELETE" */
    const char *url;             /* http://host:port/path (copied) */
    const char *unix_socket;     /* or NULL: talk HTTP on that socket */
    /* HTTPS (an https:// url; copied): the CAs that may sign the
     * server's certificate (NULL: the system's), and a client
     * certificate and its key (NULL: none). The server's certificate and
     * name are always checked. */
    const char *ca_file, *cert_file, *key_file;
    const char *const *headers;  /* "Name: value", NULL-terminated, or NULL
                                    (copied) */
    const char *body;            /* or NULL (copied) */
    double timeout_s;            /* the whole transfer */
    size_t max_bytes;            /* a longer answer fails the request */
    int retries;                 /* sent again this many times when the
                                    connection broke without an answer:
                                    only for reads */
    void (*done_cb)(void *arg, const struct fetch_result *r);
    void *arg;
};

/* A new loop, or NULL with err. curl_global_init must have run. */
struct curlloop *curlloop_create(struct loom_error *err);
/* Abort every transfer (no callback is called) and free. NULL-safe. */
void curlloop_destroy(struct curlloop *l);

/* Start a request; done_cb(arg, result) is called once, later, from
 * curlloop_run (never from inside this call). 0, or -1 with err (out of
 * memory): then done_cb is never called. */
int curlloop_fetch(struct curlloop *l, const struct fetch_req *r,
                   struct loom_error *err);

/* A request that could not be sent: call done_cb(arg, r) with r->error =
 * why (copied) from the next curlloop_run, as for any failed request (so
 * that no caller sees its callback from inside its own call). */
void curlloop_fail(struct curlloop *l,
                   void (*done_cb)(void *arg, const struct fetch_result *r),
                   void *arg, const char *why);

/* Carry the transfers on and call the callbacks of those that ended; when
 * none ended, wait up to timeout_s for one of their sockets, the nearest
 * deadline or curlloop_wakeup, and do it again. */
void curlloop_run(struct curlloop *l, double timeout_s);
/* Transfers under way. */
size_t curlloop_active(const struct curlloop *l);
/* The url key of an API cluster's section (sec): "unix:/PATH", HTTP on
 * that socket (*base "http://localhost", *socket the path), or
 * "http://HOST:PORT" with no path (*base that, *socket NULL), or with
 * https = 1 also "https://HOST:PORT": new strings. 0, or -1 with err
 * naming the section's file and line and what a url may be (both left
 * NULL). Any thread. */
int curlloop_url_parse(const struct conf_section *sec, const char *url,
                       int https, char **base, char **socket,
                       struct loom_error *err);
/* Make curlloop_run return now. Any thread (a msgq waker: void *). */
void curlloop_wakeup(void *l);

#endif
