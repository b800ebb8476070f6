/* commit.h - the scheduler's committer: writes turns' jobs while the
 * scheduler thread goes on with the next turn. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_COMMIT_H
#define LOOM_SCHEDULER_COMMIT_H

#include <stddef.h>

#include "core/error.h"
#include "core/msgq.h"
#include "core/snapshot.h"

#include "core/store_jobs.h"
#include "core/store_resv.h"

struct store;

/* Batches written at once, each on a connection of its own: a commit waits
 * for PostgreSQL's flush to disk, and the flushes of several connections'
 * commits are one. Two, not more: the submits that come while both write
 * go together in the next, and PostgreSQL's CPU time per submit falls
 * with the size of its transaction (tests/bench/core.sh: 15 % less than
 * with four, and as many submits a second or more). */
#define COMMIT_CONNS 2

/* A job to write: its view and its idempotency key, if any. */
struct commit_ins {
    struct jview *view;     /* a reference */
    char *idem_key;         /* owned, or NULL */
    char idem_hash[65];
    struct reply *reply;    /* a submit's asker (a reference), or NULL: the
                               committer answers 201 once it is written */
    char start_time[32], end_time[32]; /* the view's, as time_format
                               writes them; "" when it has none */
};

/* Jobs whose insert lost its connection under the commit (in_doubt
 * below), settled by the committer before the batch that carries them:
 * the rows of drop go, those of take that are stored come back in found
 * (rows with owned strings: id, idem_key, idem_hash, doc). */
struct commit_doubt {
    int64_t *take, *drop;
    size_t n_take, n_drop;
    int settled;            /* looked at: found is all that is stored */
    struct store_job_row *found;
    size_t n_found, cap_found;
};

/* One transaction: what the scheduler thread hands over, and what it gets
 * back (ok, err) with everything it attached to answer afterwards. */
struct commit_batch {
    struct commit_ins *ins;
    size_t n_ins;
    struct commit_ins *upd; /* jobs changed (written whole if their row
                               is missing) */
    size_t n_upd;
    struct store_resv_row *resv; /* reservations to write (owned strings) */
    size_t n_resv;
    char *events;           /* rows for the event log (a JSON array, as
                               store_events_append takes it), or NULL */
    struct commit_doubt *doubt; /* owned, or NULL */
    int ok;
    struct loom_error err;
    int in_doubt;           /* it failed with the connection lost under its
                               commit: its new jobs may be stored */
    int quiet;              /* its return need not wake the scheduler at
                               once (it answers no one of the scheduler's):
                               handed back with msgq_post_quiet */
    void (*written)(struct commit_batch *b); /* or NULL: called on a
                               committer thread once b is written and its
                               submits answered, before it is handed back,
                               in the order the batches were handed over */
    unsigned long long seq; /* the committer's: the order handed over */
    void *after;            /* the scheduler's own: answers, starts */
};
void commit_batch_free(struct commit_batch *b); /* NULL-safe; not `after` */

/* Start the committer's COMMIT_CONNS threads: one on st (taken), the
 * others on connections of their own to st's database, opened now (an
 * error, then, when one cannot be). A batch posted is written by the
 * first thread free, in a transaction of its own: the caller posts no
 * batch that names a job another batch in flight names, and at most
 * COMMIT_CONNS in flight. Whatever order they are written in, their
 * submits are answered (201) and the batches posted back to done_q (a
 * message of type done_type with the batch as data) in the order they
 * were posted. */
int commit_start(struct store *st, struct msgq *done_q, int done_type,
                 struct loom_error *err);
/* After a batch that failed, those handed over after it are answered and
 * handed back only once this is called: when the failed batch's jobs are
 * gone from the published table (a later id shown would show them). */
void commit_release(void);
/* How many batches may be in flight at once. */
size_t commit_conns(void);
/* Hand over a batch (taken). */
void commit_post(struct commit_batch *b);
/* End the threads once the batches posted so far are written. */
void commit_stop(void);

#endif
