/* msgq.h - a thread's message queue: commands in, a reply slot back. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_MSGQ_H
#define LOOM_CORE_MSGQ_H

#include <stddef.h>

#include "core/error.h"
#include "core/log.h"

/* The answer to a request, shared by the asking thread and the owner. The
 * body is a rendered JSON string (never a json_t: jansson values are not
 * shared across threads). */
struct reply {
    int refs;           /* guarded by lock */
    int done;
    int status;         /* HTTP status of the answer */
    char *body;         /* JSON text, owned; NULL for no body */
    struct loom_error err; /* when status >= 400 */
    char *location;     /* optional, owned */
    void *lock_and_cond; /* private */
};

/* A new reply slot with one reference (the asker's). NULL on no memory. */
struct reply *reply_create(void);
struct reply *reply_ref(struct reply *r);
void reply_unref(struct reply *r); /* NULL-safe */
/* Owner side: set the answer and wake the asker. body is taken. */
void reply_send(struct reply *r, int status, char *body_take);
/* As reply_send, with the Location of what the request created (taken;
 * NULL for none). */
void reply_send_at(struct reply *r, int status, char *body_take,
                   char *location_take);
void reply_send_error(struct reply *r, const struct loom_error *err);
/* Asker side: wait up to timeout_s. 0 when answered, -1 on time-out. */
int reply_wait(struct reply *r, double timeout_s);

struct msg {
    int type;            /* the owning room's command */
    char request[LOG_REQUEST_ID_MAX + 1]; /* the API request it serves, as
                                             the poster's log lines name
                                             it ("" for none) */
    void *data;          /* owned by the message */
    void (*data_free)(void *data);
    struct reply *reply; /* a reference, or NULL for fire-and-forget */
    struct msg *next;
};

struct msgq;
struct msgq *msgq_create(void);
void msgq_destroy(struct msgq *q); /* frees messages still queued */
/* A new message (data taken, freed with data_free; reply referenced),
 * for the request the calling thread works for (log_request()): the
 * thread that handles it names the same in its log lines
 * (log_request_set(m->request) while it does). */
struct msg *msg_create(int type, void *data, void (*data_free)(void *),
                       struct reply *reply);
void msg_destroy(struct msg *m); /* NULL-safe; unrefs the reply */
/* Append (takes m). Thread-safe. */
void msgq_post(struct msgq *q, struct msg *m);
/* Append (takes m) without waking the owner at once: for news the owner
 * need not act on at once (a commit that answers no one of its own, a
 * start's result). The owner takes it with whatever wakes it next (a
 * msgq_post, the end of its wait), at the latest quiet_s (msgq_set_quiet)
 * after the post: a post that finds the owner asleep until later wakes
 * it, as does any post while the owner asks for it (msgq_set_quiet's
 * now). Thread-safe. */
void msgq_post_quiet(struct msgq *q, struct msg *m);
/* Owner: how late quiet posts may be taken (0, the default: a quiet post
 * is a post), and whether they are wanted now (the owner waits for
 * one). */
void msgq_set_quiet(struct msgq *q, double quiet_s, int now);
/* Wait up to timeout_s (<0: forever) for messages and take all queued ones
 * (at most max) as a list in order. NULL on time-out. */
struct msg *msgq_take(struct msgq *q, double timeout_s, size_t max);
/* Take what is queued (at most max), without ever waiting: msgq_take with
 * a timeout of 0 does a timed wait on a deadline already past, which puts
 * the thread to sleep until its timer fires, and on a busy machine it gets
 * the CPU back only after the others' turns. NULL when none is queued. */
struct msg *msgq_take_now(struct msgq *q, size_t max);
size_t msgq_length(struct msgq *q);
/* Have every post also call wake_cb(arg) (after the message is queued,
 * outside the queue's lock, on the posting thread): for an owner that
 * waits on something else than the queue, such as sockets (the server
 * thread waits in libcurl's poll). Set it before the owner's thread runs;
 * wake_cb must be safe to call from any thread. */
void msgq_set_waker(struct msgq *q, void (*wake_cb)(void *arg), void *arg);

#endif
