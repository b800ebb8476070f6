/* planner.c - the planner thread. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/planner.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"

static struct {
    struct msgq *q, *done_q;
    int done_type;
    pthread_t thread;
    int running;
} P;

void plan_work_free(struct plan_work *w)
{
    if (!w)
        return;
    if (w->out)
        plan_out_fini(w->out, w->n);
    plan_destroy(w->p);
    fabric_fini(&w->f);
    free(w->cfg.room);
    free(w);
}

static void *planner_main(void *arg)
{
    (void)arg;
    log_thread_name("plan");
    /* A batch thread: its wake-ups do not preempt the threads that answer
     * requests, and it keeps loomd's share of the CPU. At nice 10 it had a
     * tenth of the share of any other program's thread: on a busy host a
     * plan of 25 ms of CPU took 600 ms, and the cycles stalled. */
    if (pthread_setschedparam(pthread_self(), SCHED_BATCH,
                              &(struct sched_param){0}) != 0)
        log_warn("planner: cannot make its thread a batch thread; its "
                 "wake-ups may delay requests");
    for (;;) {
        struct msg *m = msgq_take(P.q, -1, 1);
        struct plan_work *w = m ? m->data : NULL;
        double t0, c0;
        if (!m)
            continue;
        m->data = NULL;
        msg_destroy(m);
        if (!w)
            return NULL; /* stop */
        t0 = time_mono();
        c0 = time_thread_cpu();
        if (plan_run(w->p, &w->cfg, w->pj, w->n, w->out) < 0) {
            log_err("scheduling cycle: out of memory; the next one tries "
                    "again");
            plan_out_fini(w->out, w->n);
            memset(w->out, 0, w->n * sizeof(*w->out));
        }
        w->plan_ms = (time_mono() - t0) * 1000;
        w->plan_cpu_ms = (time_thread_cpu() - c0) * 1000;
        msgq_post(P.done_q, msg_create(P.done_type, w,
                                       (void (*)(void *))plan_work_free,
                                       NULL));
    }
}

int planner_start(struct msgq *done_q, int done_type, struct loom_error *err)
{
    P.done_q = done_q;
    P.done_type = done_type;
    P.q = msgq_create();
    if (!P.q)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (pthread_create(&P.thread, NULL, planner_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "planner thread");
    P.running = 1;
    return 0;
}

void planner_post(struct plan_work *w)
{
    msgq_post(P.q, msg_create(1, w, (void (*)(void *))plan_work_free, NULL));
}

void planner_stop(void)
{
    if (P.running) {
        msgq_post(P.q, msg_create(1, NULL, NULL, NULL));
        pthread_join(P.thread, NULL);
    }
    msgq_destroy(P.q);
    memset(&P, 0, sizeof(P));
}
