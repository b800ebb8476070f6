/* commit.c - the committer: COMMIT_CONNS threads, each on its own
 * connection, write the batches they are handed; what they wrote is
 * answered and handed back in the order it was handed over. */
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
#include "core/vec.h"

static struct {
    struct store *st[COMMIT_CONNS];
    struct msgq *q, *done_q;
    int done_type;
    pthread_t thread[COMMIT_CONNS];
    size_t n_running, n_conns;
    /* The order of answers: batches are numbered as they are handed over
     * (next_seq); one written ahead of an earlier one waits in done[]
     * until every earlier one is written or has failed (next_out). */
    pthread_mutex_t mu;
    unsigned long long next_seq, next_out;
    struct commit_batch *done[COMMIT_CONNS];
    int held; /* a failed batch went back: see commit_release */
} C = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void doubt_free(struct commit_doubt *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_found; i++) {
        struct store_job_row *r = &d->found[i];
        free((char *)r->idem_key);
        free((char *)r->idem_hash);
        free((char *)r->doc);
    }
    free(d->found);
    free(d->take);
    free(d->drop);
    free(d);
}

void commit_batch_free(struct commit_batch *b)
{
    if (!b)
        return;
    doubt_free(b->doubt);
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
        .doc = c->view->json,
        .start_time = c->start_time[0] ? c->start_time : NULL,
        .end_time = c->end_time[0] ? c->end_time : NULL};
}

static char *dup_opt(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int keep_found(void *arg, const struct store_job_row *row)
{
    struct commit_doubt *d = arg;
    struct store_job_row *r;

    if (vec_grow((void **)&d->found, &d->cap_found, d->n_found + 1,
                 sizeof(*d->found), 8) < 0)
        return -1;
    r = &d->found[d->n_found];
    *r = (struct store_job_row){.id = row->id};
    r->idem_key = dup_opt(row->idem_key);
    r->idem_hash = dup_opt(row->idem_hash);
    r->doc = dup_opt(row->doc);
    d->n_found++; /* freed with the rest, whatever failed */
    return r->doc && (!row->idem_key || r->idem_key) &&
                   (!row->idem_hash || r->idem_hash)
               ? 0
               : -1;
}

/* Before the batch: what an earlier one left in doubt, settled. A failure
 * leaves it unsettled, for a later batch; the batch is written anyway. */
static void settle_doubt(struct store *st, struct commit_doubt *d)
{
    struct loom_error err;

    if (store_jobs_doubt(st, d->take, d->n_take, d->drop, d->n_drop,
                         keep_found, d, &err) == 0) {
        d->settled = 1;
        return;
    }
    log_warn("jobs whose commit is in doubt: not settled yet: %s",
             err.message);
}

static void write_batch(struct store *st, struct commit_batch *b)
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
    if (b->doubt)
        settle_doubt(st, b->doubt);
    for (size_t i = 0; i < b->n_ins; i++)
        ins[i] = row_of(&b->ins[i]);
    for (size_t i = 0; i < b->n_upd; i++)
        upd[i] = row_of(&b->upd[i]);
    t0 = time_mono();
    b->ok = store_jobs_write(st, ins, b->n_ins, upd, b->n_upd, b->resv,
                             b->n_resv, &b->err) == 0;
    if (b->ok) {
        metrics_observe(METRICS_DB_COMMIT_SECONDS, NULL, time_mono() - t0);
        metrics_observe(METRICS_DB_COMMIT_JOBS, NULL,
                        (double)(b->n_ins + b->n_upd + b->n_resv));
    } else {
        metrics_add(METRICS_DB_COMMIT_FAILURES, NULL, 1);
        b->in_doubt = b->n_ins && store_in_doubt(st);
    }
    /* After the batch, not in it: an event log that cannot be written
     * holds up no job (the events are in loomd's log too). */
    if (b->ok && b->events) {
        struct loom_error err;
        if (store_events_append(st, b->events, &err) < 0)
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

/* Answer and hand back, in the order they were handed over, the batches
 * written so far. A submit is answered once its own batch and every
 * earlier one are done, so that no id is acknowledged before a smaller
 * one is, and the scheduler sees the batches come back as it sent them.
 * After a failed batch the later ones wait until the scheduler has let go
 * of its jobs (commit_release): a later id shown would show them too. */
static void drain_locked(void)
{
    for (size_t i = 0; i < COMMIT_CONNS && !C.held;) {
        struct commit_batch *d = C.done[i];
        if (!d || d->seq != C.next_out) {
            i++;
            continue;
        }
        C.done[i] = NULL;
        C.next_out++;
        if (d->ok) { /* shown, then answered: no hop through the scheduler */
            answer_submits(d);
            if (d->written)
                d->written(d);
        } else {
            C.held = 1;
        }
        if (d->ok && d->quiet)
            msgq_post_quiet(C.done_q, msg_create(C.done_type, d, NULL, NULL));
        else
            msgq_post(C.done_q, msg_create(C.done_type, d, NULL, NULL));
        i = 0; /* the next one may be anywhere */
    }
}

/* b is written (or failed): answer it when its turn comes. */
static void finish_in_order(struct commit_batch *b)
{
    pthread_mutex_lock(&C.mu);
    for (size_t i = 0; i < COMMIT_CONNS; i++) {
        if (!C.done[i]) {
            C.done[i] = b;
            break;
        }
    }
    drain_locked();
    pthread_mutex_unlock(&C.mu);
}

void commit_release(void)
{
    pthread_mutex_lock(&C.mu);
    C.held = 0;
    drain_locked();
    pthread_mutex_unlock(&C.mu);
}

static void *commit_main(void *arg)
{
    struct store *st = arg;

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
        write_batch(st, b);
        finish_in_order(b);
    }
}

int commit_start(struct store *st, struct msgq *done_q, int done_type,
                 struct loom_error *err)
{
    C.st[0] = st;
    C.done_q = done_q;
    C.done_type = done_type;
    C.q = msgq_create();
    if (!C.q)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    C.n_conns = COMMIT_CONNS;
    for (size_t i = 1; i < C.n_conns; i++) {
        if (!(C.st[i] = store_open_again(st, err))) {
            loom_error_prefix(err, "committer connection %zu of %d", i + 1,
                              COMMIT_CONNS);
            return -1;
        }
    }
    for (size_t i = 0; i < C.n_conns; i++) {
        if (pthread_create(&C.thread[i], NULL, commit_main, C.st[i]) != 0)
            return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                                  "committer threads");
        C.n_running++;
    }
    return 0;
}

size_t commit_conns(void)
{
    return C.n_conns;
}

void commit_post(struct commit_batch *b)
{
    pthread_mutex_lock(&C.mu);
    b->seq = C.next_seq++;
    pthread_mutex_unlock(&C.mu);
    msgq_post(C.q, msg_create(1, b, NULL, NULL));
}

void commit_stop(void)
{
    for (size_t i = 0; i < C.n_running; i++)
        msgq_post(C.q, msg_create(1, NULL, NULL, NULL));
    for (size_t i = 0; i < C.n_running; i++)
        pthread_join(C.thread[i], NULL);
    msgq_destroy(C.q);
    for (size_t i = 0; i < COMMIT_CONNS; i++)
        store_close(C.st[i]);
    pthread_mutex_destroy(&C.mu);
    memset(&C, 0, sizeof(C));
    pthread_mutex_init(&C.mu, NULL);
}
