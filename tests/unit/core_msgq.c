/* core_msgq.c - message queues: order, batches, waits, and a take that
 * must not wait (msgq_take_now) never giving the CPU away. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "core/msgq.h"
#include "core/timeutil.h"
#include "tests/lib/tap.h"

static long voluntary_switches(void)
{
    struct rusage ru;

    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

static void *post_later(void *arg)
{
    struct msgq *q = arg;

    msgq_post(q, msg_create(7, NULL, NULL, NULL));
    return NULL;
}

static void free_list(struct msg *m)
{
    while (m) {
        struct msg *nx = m->next;
        msg_destroy(m);
        m = nx;
    }
}

int main(void)
{
    struct msgq *q = msgq_create();
    struct msg *m;
    pthread_t t;
    long before, switches;
    double t0;
    int i;

    for (i = 1; i <= 3; i++)
        msgq_post(q, msg_create(i, NULL, NULL, NULL));
    m = msgq_take_now(q, 2);
    ok(m && m->type == 1 && m->next && m->next->type == 2 && !m->next->next,
       "take_now(2) of 3 queued: the first two, in order");
    free_list(m);
    is_int((int)msgq_length(q), 1, "one left queued");
    m = msgq_take(q, 0, 256);
    ok(m && m->type == 3 && !m->next, "then the third");
    free_list(m);
    ok(msgq_take_now(q, 256) == NULL && msgq_take(q, 0, 256) == NULL,
       "an empty queue: take_now and take(0) are NULL");

    /* A timed wait on a deadline already past still sleeps until its timer
     * fires: a switch away from the thread each time. */
    before = voluntary_switches();
    for (i = 0; i < 2000; i++)
        if (msgq_take_now(q, 256))
            break;
    switches = voluntary_switches() - before;
    ok(i == 2000 && switches < 20, "2000 take_now of an empty queue: %ld "
       "voluntary context switches (none waits)", switches);

    t0 = time_mono();
    m = msgq_take(q, 0.05, 256);
    ok(!m && time_mono() - t0 >= 0.049, "take(0.05) of an empty queue waits "
       "0.05 s, then NULL");

    pthread_create(&t, NULL, post_later, q);
    m = msgq_take(q, -1, 256);
    pthread_join(t, NULL);
    ok(m && m->type == 7, "take(-1) waits for a post from another thread");
    free_list(m);
    msgq_destroy(q);
    return done_testing();
}
