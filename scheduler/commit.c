/* commit.c - the committer thread: one transaction per batch, in order. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/commit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/leader.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/store.h"
#include "core/store_jobs.h"
#include "core/timeutil.h"

static struct {
    struct store *st;
    struct msgq *q, *done_q;
    int done_type;
    pthread_t thread;
    int running;
} C;

void commit_batch_free(struct commit_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_ins; i++) {
        jview_unref(b->ins[i].view);
        free(b->ins[i].idem_key);
        reply_unref(b->ins[i].reply);
    }
    for (size_t i = 0; i < b->n_upd; i++) {
        jview_unref(b->upd[i].view);
        free(b->upd[i].idem_key);
    }
    for (size_t i = 0; i < b->n_resv; i++)
        free((char *)b->resv[i].doc);
    free(b->resv);
    free(b->events);
    free(b->ins);
    free(b->upd);
    free(b);
}

static struct store_job_row row_of(const struct commit_ins *c)
{
    return (struct store_job_row){
        .id = c->view->id, .state = c->view->state, .owner = c->view->owner,
        .idem_owner = c->idem_key ? c->view->submitted_by : NULL,
        .idem_key = c->idem_key, .idem_hash = c->idem_key ? c->idem_hash : NULL,
        .doc = c->view->json};
}

static void write_batch(struct commit_batch *b)
{
    struct store_job_row *ins = calloc(b->n_ins + 1, sizeof(*ins));
    struct store_job_row *upd = calloc(b->n_upd + 1, sizeof(*upd));
    double t0;

    if (!ins || !upd) {
        loom_error_set(&b->err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    /* Not the active loomd: nothing is written (the database's fence would
     * refuse it too, in the same transaction). */
    if (leader_check("commit", &b->err) < 0)
        goto out;
    for (size_t i = 0; i < b->n_ins; i++)
        ins[i] = row_of(&b->ins[i]);
    for (size_t i = 0; i < b->n_upd; i++)
        upd[i] = row_of(&b->upd[i]);
    t0 = time_mono();
    b->ok = store_jobs_write(C.st, ins, b->n_ins, upd, b->n_upd, b->resv,
                             b->n_resv, &b->err) == 0;
    if (b->ok) {
        metrics_observe(METRICS_DB_COMMIT_SECONDS, NULL, time_mono() - t0);
        metrics_observe(METRICS_DB_COMMIT_JOBS, NULL,
                        (double)(b->n_ins + b->n_upd + b->n_resv));
    } else {
        metrics_add(METRICS_DB_COMMIT_FAILURES, NULL, 1);
    }
    /* After the batch, not in it: an event log that cannot be written
     * holds up no job (the events are in loomd's log too). */
    if (b->ok && b->events) {
        struct loom_error err;
        if (store_events_append(C.st, b->events, &err) < 0)
            log_warn("event log: %s", err.message);
    }
out:
    free(ins);
    free(upd);
}

static void answer_submits(struct commit_batch *b)
{
    int64_t upto = 0;

    for (size_t i = 0; i < b->n_ins; i++)
        if (b->ins[i].view->id > upto)
            upto = b->ins[i].view->id;
    jobs_committed_set(upto);
    for (size_t i = 0; i < b->n_ins; i++) {
        char where[48];
        if (!b->ins[i].reply)
            continue;
        snprintf(where, sizeof(where), "/v1/jobs/%lld",
                 (long long)b->ins[i].view->id);
        reply_send_at(b->ins[i].reply, 201, strdup(b->ins[i].view->json),
                      strdup(where));
        reply_unref(b->ins[i].reply);
        b->ins[i].reply = NULL;
    }
}

static void *commit_main(void *arg)
{
    log_thread_name("commit");
    for (;;) {
        struct msg *m = msgq_take(C.q, -1, 1);
        struct commit_batch *b = m ? m->data : NULL;
        if (!m)
            continue;
        m->data = NULL;
        msg_destroy(m);
        if (!b)
            return NULL; /* stop */
        write_batch(b);
        if (b->ok) /* shown, then answered: no hop through the scheduler */
            answer_submits(b);
        msgq_post(C.done_q, msg_create(C.done_type, b, NULL, NULL));
    }
}

int commit_start(struct store *st, struct msgq *done_q, int done_type,
                 struct loom_error *err)
{
    C.st = st;
    C.done_q = done_q;
    C.done_type = done_type;
    C.q = msgq_create();
    if (!C.q)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (pthread_create(&C.thread, NULL, commit_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "committer thread");
    C.running = 1;
    return 0;
}

void commit_post(struct commit_batch *b)
{
    msgq_post(C.q, msg_create(1, b, NULL, NULL));
}

void commit_stop(void)
{
    if (C.running) {
        msgq_post(C.q, msg_create(1, NULL, NULL, NULL));
        pthread_join(C.thread, NULL);
    }
    msgq_destroy(C.q);
    store_close(C.st);
    memset(&C, 0, sizeof(C));
}
