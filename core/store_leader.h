/* store_leader.h - the heartbeat row, the advisory lock of the active
 * loomd, and ending the sessions of a stalled one. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_LEADER_H
#define LOOM_CORE_STORE_LEADER_H

#include <stdint.h>

#include "core/error.h"
#include "core/store.h"

/* For the leader thread (core/leader.c) on its own connection; the table
 * and the fence are sql/0005_leader.sql. 0, or -1 with err, unless said. */

/* The row of the table leader, as read. */
struct store_leader_row {
    int64_t epoch;      /* 0: no loomd was ever active */
    int64_t seq;        /* renewals in this epoch */
    char identity[64];  /* host:pid:nonce of the holder, or "" */
    char url[512];      /* where it answers, or "" */
    long lease_ms;
    int released;       /* it stopped and let go */
};

/* The session advisory lock of the active loomd, without waiting: 1 held
 * (now or already), 0 another session holds it, -1 with err. */
int store_leader_lock(struct store *st, struct loom_error *err);
/* Let the lock go (the session stays). */
int store_leader_unlock(struct store *st, struct loom_error *err);

/* Read the row. -1 with err also when the table is missing (a database
 * that this build's migrations have not reached yet). */
int store_leader_get(struct store *st, struct store_leader_row *row,
                     struct loom_error *err);

/* Take over, holding the lock: in one transaction, wait (at most
 * lock_timeout_ms) for the writes in flight to end (they hold the fence's
 * lock), read the row as it is then into prev, and raise the epoch with
 * identity, url and lease_ms written. 0 with the new epoch in *epoch; -1
 * with err: LOOM_ETEMP when writes in flight did not end in time (the
 * transaction of a stalled loomd, whose sessions must be ended first). */
int store_leader_take(struct store *st, const char *identity, const char *url,
                      long lease_ms, long lock_timeout_ms,
                      struct store_leader_row *prev, int64_t *epoch,
                      struct loom_error *err);

/* Renew the heartbeat of epoch (and write url): 1 renewed, 0 the row is no
 * longer epoch's and identity's (another loomd took over), -1 with err. */
int store_leader_renew(struct store *st, int64_t epoch, const char *identity,
                       const char *url, struct loom_error *err);

/* Mark epoch's row released: its holder stopped and acts no more. */
int store_leader_release(struct store *st, int64_t epoch,
                         const char *identity, struct loom_error *err);

/* End every other session whose application_name is name
 * (pg_terminate_backend): the number asked to end, or -1 with err. */
long store_leader_terminate(struct store *st, const char *name,
                            struct loom_error *err);

/* The session for the heartbeat (ms > 0): its statements time out after
 * ms, and its commits do not wait for the WAL to be flushed
 * (synchronous_commit off): a renewal counts from when it was sent and is
 * worth nothing lost in a crash of the server (docs/internals/standby.md),
 * so it must not queue behind the other sessions' flushes. ms = 0: no
 * time-out, commits flushed (the migrations; a takeover's transaction sets
 * its own). */
int store_leader_timeout(struct store *st, long ms, struct loom_error *err);

#endif
