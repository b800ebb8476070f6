/* core_msgq.c - message queues: order, batches, waits, a take that
 * must not wait (msgq_take_now) never giving the CPU away, and quiet
 * posts, which wake an owner only when it would sleep too long or asks. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static pid_t owner_tid;

/* Is the owner thread asleep (in its wait) now? */
static int owner_sleeps(void)
{
    char path[64], line[256], *p;
    FILE *f;
    int asleep = 0;

    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)owner_tid);
    if (!(f = fopen(path, "r")))
        return 0;
    if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
        asleep = p[2] == 'S';
    fclose(f);
    return asleep;
}

/* Post quietly once the owner sleeps in its wait. */
static void *post_quiet_asleep(void *arg)
{
    struct msgq *q = arg;

    while (!owner_sleeps())
        usleep(1000);
    msgq_post_quiet(q, msg_create(8, NULL, NULL, NULL));
    return NULL;
}

/* Take from q, posted quietly to while asleep: the seconds it took. */
static double quiet_take(struct msgq *q, double timeout_s, int *type)
{
    pthread_t t;
    double t0 = time_mono();
    struct msg *m;

    pthread_create(&t, NULL, post_quiet_asleep, q);
    m = msgq_take(q, timeout_s, 256);
    pthread_join(t, NULL);
    *type = m && !m->next ? m->type : -1;
    msg_destroy(m);
    return time_mono() - t0;
}

/* A quiet post to an owner asleep for wait_s, after msgq_set_quiet
 * (quiet_s, now) unless quiet_s < 0: does it wake the owner? */
static const struct quiet_case {
    double quiet_s;
    int now;
    double wait_s;
    int wakes;
    const char *says;
} quiet[] = {
    {-1, 0, 30, 1, "without msgq_set_quiet a quiet post wakes the owner as "
                   "a post does"},
    {0.05, 0, 30, 1, "quiet_s 0.05: a quiet post wakes an owner asleep for "
                     "longer"},
    {30, 0, 0.3, 0, "quiet_s 30: a quiet post does not wake an owner asleep "
                    "for 0.3 s; it takes it at the end"},
    {30, 1, 30, 1, "quiet_s 30, asked for now: a quiet post wakes the owner"},
};

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
    double t0, took;
    int i, type;

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

    owner_tid = (pid_t)syscall(SYS_gettid);
    for (i = 0; i < (int)(sizeof(quiet) / sizeof(quiet[0])); i++) {
        const struct quiet_case *c = &quiet[i];
        if (c->quiet_s >= 0)
            msgq_set_quiet(q, c->quiet_s, c->now);
        took = quiet_take(q, c->wait_s, &type);
        ok(type == 8 && (c->wakes ? took < 20 : took >= c->wait_s - 0.01),
           "%s (%.3f s of a %g s wait)", c->says, took, c->wait_s);
    }
    msgq_set_quiet(q, 30, 0);
    msgq_post_quiet(q, msg_create(9, NULL, NULL, NULL));
    m = msgq_take(q, 30, 256);
    ok(m && m->type == 9, "a quiet post queued before the take is taken "
       "at once");
    free_list(m);
    msgq_destroy(q);
    return done_testing();
}
