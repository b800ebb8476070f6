/* maint.c - the maintenance interface thread: its loop and queue. */
/* SPDX-License-Identifier: MIT */
#include "maintenance/maint.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

#define PERIOD_S 5.0

static struct {
    struct msgq *q;
    pthread_t thread;
    int running;
    size_t n_requests, n_mismatches;
} M;

static void status(struct reply *r)
{
    json_t *o = json_pack("{s:I, s:I}", "requests", (json_int_t)M.n_requests,
                          "mismatches", (json_int_t)M.n_mismatches);

    reply_send(r, 200, json_dumps(o, JSON_COMPACT));
    json_decref(o);
}

static void *maint_main(void *arg)
{
    log_thread_name("maint");
    for (;;) {
        struct msg *m = msgq_take(M.q, PERIOD_S, 64), *next;
        for (; m; m = next) {
            int type = m->type;
            next = m->next;
            if (type == MAINT_STATUS && m->reply)
                status(m->reply);
            msg_destroy(m);
            if (type == 0) {
                while (next) {
                    m = next->next;
                    msg_destroy(next);
                    next = m;
                }
                return NULL;
            }
        }
    }
}

int maint_start(struct loom_error *err)
{
    M.q = msgq_create();
    if (!M.q)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (pthread_create(&M.thread, NULL, maint_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "maintenance thread");
    M.running = 1;
    return 0;
}

void maint_stop(void)
{
    if (M.running) {
        msgq_post(M.q, msg_create(0, NULL, NULL, NULL));
        pthread_join(M.thread, NULL);
    }
    msgq_destroy(M.q);
    memset(&M, 0, sizeof(M));
}

struct msgq *maint_queue(void)
{
    return M.q;
}
