/* leader.h - which loomd acts: the lock, the lease, the epoch, standbys. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_LEADER_H
#define LOOM_CORE_LEADER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/error.h"

/* Several loomd may share one database (and one state_dir); one of them is
 * active, the others stand by (docs/internals/standby.md). The leader
 * thread (`loom-leader`, leader.c) has a connection of its own:
 *
 *  - standby: it tries the session advisory lock every 250 ms and watches
 *    the heartbeat row (table leader). It takes over when it gets the lock
 *    (the active one's connection died), or, when the heartbeat has not
 *    moved for the lease and a margin, after it ended the active one's
 *    sessions (pg_terminate_backend). Taking over: the migrations, then the
 *    epoch raised in the row (waiting for the writes in flight, which the
 *    fence holds), then RUNTIME_TAKEOVER to the runtime queue.
 *  - active: it renews the heartbeat every lease/3 over its connection
 *    (commits not waiting for the WAL flush, statements timing out after
 *    the lease). The daemon acts only while its last successful renewal
 *    (counted from when it was sent, on CLOCK_BOOTTIME) is younger than
 *    the lease.
 *  - fenced: an active one whose lease ran out or whose connection died. It
 *    acts no more; it takes its lease back when it gets the lock again and
 *    the epoch is still its own (the database was away, no one took over),
 *    and otherwise sends RUNTIME_FENCED: another loomd acts now.
 */
enum leader_role {
    LEADER_STANDBY,
    LEADER_ACTIVE, /* "taking-over" until leader_serving() */
    LEADER_FENCED,
};

struct leader_conf {
    const char *database; /* libpq connection string */
    double lease_s;       /* [loomd] lease_s */
    const char *url;      /* where clients reach this loomd (the redirect
                             of the standbys), or NULL: none */
};

/* Open the connection (its sessions are named loomd/IDENTITY, as every
 * store opened afterwards: store_identity_set), start the thread. The
 * first decision comes to the runtime queue: RUNTIME_TAKEOVER, or
 * RUNTIME_STANDBY when another holds the lock. -1 with err when the
 * database cannot be reached (the daemon ends). Main thread. */
int leader_start(const struct leader_conf *c, struct loom_error *err);
/* End the thread and close the connection, which lets the lock go. With
 * release, an active one first marks the row released (a clean stop: a
 * standby takes over without waiting for the lease). Main thread. */
void leader_stop(int release);

/* Any thread: 1 while this loomd may act (start, cancel, suspend, hold,
 * node states, reservations, scheduling, commits): it is active, its lease
 * is valid, and the lease of the one before it has surely ended. */
int leader_may_act(void);
/* As leader_may_act: 0, or -1 with err (LOOM_EUNAVAIL, retry after 1 s)
 * "WHAT: not done: this loomd is ROLE (WHY)". */
int leader_check(const char *what, struct loom_error *err);

/* Main thread, at a takeover: the epoch's threads run. Before the first
 * of them acts, wait until the lease of the previous holder has surely
 * ended (returns at once when it let go cleanly, or sooner when this loomd
 * is fenced meanwhile). */
void leader_wait_safe(void);
/* Main thread: the start list is done; the API serves as the active one. */
void leader_serving(void);
/* Main thread: the URL of this loomd once its listener is bound (the
 * advertised one of leader_conf wins). NULL-safe. */
void leader_set_url(const char *url);

enum leader_role leader_role(void);
/* "standby", "taking-over", "active" or "fenced" (a valid lease counts:
 * an active one whose lease ran out is "fenced"). */
const char *leader_role_name(void);
/* The threads of an epoch run and serve (active or fenced after serving):
 * the API may read the snapshot and post to them. */
int leader_threads_up(void);
/* The active loomd, when it is another one and its heartbeat is fresh:
 * 0 with its URL in buf; 1 with its identity in buf when it gives no URL;
 * -1 when no active loomd is known. Any thread. */
int leader_active_url(char *buf, size_t size);
/* The role, this loomd's identity and epoch, and the active one as the
 * heartbeat shows it: a new JSON object (json_decref it), or NULL. */
json_t *leader_status_json(void);

#endif
