/* commit.h - the scheduler's committer: writes a turn's jobs while the
 * scheduler thread goes on with the next turn. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_COMMIT_H
#define LOOM_SCHEDULER_COMMIT_H

#include <stddef.h>

#include "core/error.h"
#include "core/msgq.h"
#include "core/snapshot.h"

#include "core/store_resv.h"

struct store;

/* A job to write: its view and its idempotency key, if any. */
struct commit_ins {
    struct jview *view;     /* a reference */
    char *idem_key;         /* owned, or NULL */
    char idem_hash[65];
    struct reply *reply;    /* a submit's asker (a reference), or NULL: the
                               committer answers 201 once it is written */
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
    int ok;
    struct loom_error err;
    void *after;            /* the scheduler's own: answers, starts */
};
void commit_batch_free(struct commit_batch *b); /* NULL-safe; not `after` */

/* Start the committer thread on its own connection st (taken). Each batch
 * posted is written in order and posted back to done_q as a message of
 * type done_type with the batch as data. */
int commit_start(struct store *st, struct msgq *done_q, int done_type,
                 struct loom_error *err);
/* Hand over a batch (taken). */
void commit_post(struct commit_batch *b);
/* End the thread once the batches posted so far are written. */
void commit_stop(void);

#endif
