/* store_leader.c - the heartbeat row and the lock of the active loomd. */
/* SPDX-License-Identifier: MIT */
#include "core/store_leader.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "LOOM" and 2: the lock of the active loomd (1 is the migrations', 3 the
 * fence's: sql/0005_leader.sql). */
#define LOCK_ARGS "1280266061, 2"
#define FENCE_ARGS "1280266061, 3"

/* The first column of the one row of r as 1 (true) or 0. */
static int truth(PGresult *r)
{
    int t = PQntuples(r) == 1 && !strcmp(PQgetvalue(r, 0, 0), "t");

    PQclear(r);
    return t;
}

int store_leader_lock(struct store *st, struct loom_error *err)
{
    PGresult *r = store_exec(st, "leader: lock",
                             "SELECT pg_try_advisory_lock(" LOCK_ARGS ")", 0,
                             NULL, err);

    return r ? truth(r) : -1;
}

int store_leader_unlock(struct store *st, struct loom_error *err)
{
    return store_run(st, "leader: unlock",
                     "SELECT pg_advisory_unlock(" LOCK_ARGS ")", 0, NULL,
                     err);
}

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* The row from the columns of row i of r: epoch, seq, identity, url,
 * lease_ms, released. */
static void row_of(PGresult *r, struct store_leader_row *row)
{
    row->epoch = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    row->seq = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
    copy(row->identity, sizeof(row->identity), PQgetvalue(r, 0, 2));
    copy(row->url, sizeof(row->url), PQgetvalue(r, 0, 3));
    row->lease_ms = strtol(PQgetvalue(r, 0, 4), NULL, 10);
    row->released = !strcmp(PQgetvalue(r, 0, 5), "t");
}

#define ROW_COLS "epoch, seq, identity, url, lease_ms, released"

int store_leader_get(struct store *st, struct store_leader_row *row,
                     struct loom_error *err)
{
    PGresult *r = store_exec(st, "leader: read",
                             "SELECT " ROW_COLS " FROM leader WHERE id = 1",
                             0, NULL, err);

    if (!r)
        return -1;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return loom_error_set(err, LOOM_EINTERNAL, "leader: the heartbeat "
                              "row is missing");
    }
    row_of(r, row);
    PQclear(r);
    return 0;
}

int store_leader_take(struct store *st, const char *identity, const char *url,
                      long lease_ms, long lock_timeout_ms,
                      struct store_leader_row *prev, int64_t *epoch,
                      struct loom_error *err)
{
    char lease[24], wait[24];
    const char *tv[] = {wait};
    const char *uv[] = {identity, url, lease};
    PGresult *r;

    snprintf(lease, sizeof(lease), "%ld", lease_ms);
    snprintf(wait, sizeof(wait), "%ld", lock_timeout_ms);
    if (store_run(st, "leader: take over", "BEGIN", 0, NULL, err) < 0)
        return -1;
    /* The new epoch is flushed before it is acted on. */
    if (store_run(st, "leader: take over",
                  "SELECT set_config('lock_timeout', $1, true), "
                  "set_config('synchronous_commit', 'on', true)", 1, tv,
                  err) < 0 ||
        store_run(st, "leader: take over: the writes in flight",
                  "SELECT pg_advisory_xact_lock(" FENCE_ARGS ")", 0, NULL,
                  err) < 0)
        goto error;
    r = store_exec(st, "leader: take over",
                   "SELECT " ROW_COLS " FROM leader WHERE id = 1 FOR UPDATE",
                   0, NULL, err);
    if (!r)
        goto error;
    if (PQntuples(r) != 1) {
        PQclear(r);
        loom_error_set(err, LOOM_EINTERNAL, "leader: the heartbeat row is "
                       "missing");
        goto error;
    }
    row_of(r, prev);
    PQclear(r);
    r = store_exec(st, "leader: take over",
                   "UPDATE leader SET epoch = epoch + 1, identity = $1, "
                   "url = $2, lease_ms = $3::integer, seq = 0, "
                   "released = false, since = now(), renewed_at = now() "
                   "WHERE id = 1 RETURNING epoch",
                   3, uv, err);
    if (!r)
        goto error;
    *epoch = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return store_run(st, "leader: take over", "COMMIT", 0, NULL, err);
error:
    store_rollback(st);
    return -1;
}

int store_leader_renew(struct store *st, int64_t epoch, const char *identity,
                       const char *url, struct loom_error *err)
{
    char e[24];
    const char *v[] = {e, identity, url};
    PGresult *r;
    int n;

    snprintf(e, sizeof(e), "%" PRId64, epoch);
    r = store_exec(st, "leader: renew",
                   "UPDATE leader SET seq = seq + 1, renewed_at = now(), "
                   "url = $3 WHERE id = 1 AND epoch = $1::bigint AND "
                   "identity = $2",
                   3, v, err);
    if (!r)
        return -1;
    n = (int)strtol(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    return n == 1;
}

int store_leader_release(struct store *st, int64_t epoch,
                         const char *identity, struct loom_error *err)
{
    char e[24];
    const char *v[] = {e, identity};

    snprintf(e, sizeof(e), "%" PRId64, epoch);
    return store_run(st, "leader: release",
                     "UPDATE leader SET released = true, renewed_at = now() "
                     "WHERE id = 1 AND epoch = $1::bigint AND identity = $2",
                     2, v, err);
}

long store_leader_terminate(struct store *st, const char *name,
                            struct loom_error *err)
{
    const char *v[] = {name};
    PGresult *r = store_exec(st, "leader: end the sessions of a stalled "
                             "loomd",
                             "SELECT count(pg_terminate_backend(pid)) FROM "
                             "pg_stat_activity WHERE application_name = $1 "
                             "AND pid <> pg_backend_pid()",
                             1, v, err);
    long n;

    if (!r)
        return -1;
    n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return n;
}

int store_leader_timeout(struct store *st, long ms, struct loom_error *err)
{
    char t[24];
    const char *v[] = {t, ms > 0 ? "off" : "on"};

    snprintf(t, sizeof(t), "%ld", ms);
    return store_run(st, "leader: statement_timeout and synchronous_commit",
                     "SELECT set_config('statement_timeout', $1, false), "
                     "set_config('synchronous_commit', $2, false)", 2,
                     v, err);
}
