/* store_jobs_load.c - start-up's read of the jobs table: in full what
 * stays in memory, the few fields of a long-ended job otherwise. */
/* SPDX-License-Identifier: MIT */
#include "core/store_jobs.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdlib.h>

/* Rows per round trip while loading; the two must agree. */
#define LOAD_BATCH 2000
#define LOAD_BATCH_SQL "FETCH FORWARD 2000 FROM loom_jobs_load"

/* A job is read light when $1 is set and it ended (a final state, as the
 * jobs_active index says) at or before $1, and is no array or task of
 * one. The times are RFC 3339 UTC text of one form, which sorts as the
 * times do, in columns beside doc (see 0008_job_times.sql). doc is json,
 * parsed again by each ->> on it: json_to_record parses it once for all
 * the other fields. */
#define LOAD_SQL                                                            \
    "DECLARE loom_jobs_load NO SCROLL CURSOR FOR "                          \
    "SELECT id, state, owner, idem_owner, idem_key, idem_hash, "            \
    "CASE WHEN light THEN NULL ELSE doc::text END, "                        \
    "CASE WHEN light THEN submitted_by END, "                               \
    "CASE WHEN light THEN start_time END, "                                 \
    "CASE WHEN light THEN end_time END, "                                   \
    "CASE WHEN light THEN request->>'nodes' END, "                          \
    "CASE WHEN light THEN request->>'cpus_per_node' END, "                  \
    "CASE WHEN light THEN source END, "                                     \
    "CASE WHEN light THEN cluster END, "                                    \
    "CASE WHEN light THEN native_id END "                                   \
    "FROM (SELECT j.*, d.*, $1::text IS NOT NULL AND "                      \
    "j.state IN ('completed', 'failed', 'cancelled') AND "                  \
    "j.end_time <= $1::text AND d.\"array\" IS NULL AND "                   \
    "d.array_task_id IS NULL AS light FROM jobs AS j, "                     \
    "LATERAL json_to_record(CASE WHEN $1::text IS NOT NULL AND "            \
    "j.state IN ('completed', 'failed', 'cancelled') THEN j.doc END) "      \
    "AS d(submitted_by text, \"array\" text, array_task_id text, "          \
    "request json, source text, cluster text, native_id text)) AS x "       \
    "ORDER BY id"

static const char *opt_value(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int opt_int(PGresult *r, int row, int col, int dflt)
{
    const char *v = opt_value(r, row, col);

    return v ? (int)strtol(v, NULL, 10) : dflt;
}

/* Hand one fetched batch to cb. Returns the number of rows, or -1. */
static int load_batch(PGresult *r,
                      int (*cb)(void *arg, const struct store_job_row *row),
                      void *arg, struct loom_error *err)
{
    struct store_job_row row;
    int n = PQntuples(r);

    for (int i = 0; i < n; i++) {
        row.id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        row.state = PQgetvalue(r, i, 1);
        row.owner = PQgetvalue(r, i, 2);
        row.idem_owner = opt_value(r, i, 3);
        row.idem_key = opt_value(r, i, 4);
        row.idem_hash = opt_value(r, i, 5);
        row.doc = opt_value(r, i, 6);
        row.submitted_by = opt_value(r, i, 7);
        row.start_time = opt_value(r, i, 8);
        row.end_time = opt_value(r, i, 9);
        row.nodes = opt_int(r, i, 10, 1);
        row.cpus_per_node = opt_int(r, i, 11, 1);
        row.source = opt_value(r, i, 12);
        row.cluster = opt_value(r, i, 13);
        row.native_id = opt_value(r, i, 14);
        if (cb(arg, &row) != 0)
            return loom_error_set(err, LOOM_EINTERNAL,
                                  "jobs: load stopped at job %" PRId64,
                                  row.id);
    }
    return n;
}

int store_jobs_load(struct store *st, const char *light_upto,
                    int (*cb)(void *arg, const struct store_job_row *row),
                    void *arg, struct loom_error *err)
{
    const char *params[1] = {light_upto};
    PGresult *r;
    int n;

    if (store_run(st, "jobs: load",
                  "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL,
                  err) < 0)
        return -1;
    if (store_run(st, "jobs: load", LOAD_SQL, 1, params, err) < 0)
        goto error;
    do {
        r = store_exec(st, "jobs: load", LOAD_BATCH_SQL, 0, NULL, err);
        if (!r)
            goto error;
        n = load_batch(r, cb, arg, err);
        PQclear(r);
        if (n < 0)
            goto error;
    } while (n == LOAD_BATCH);
    return store_run(st, "jobs: load", "COMMIT", 0, NULL, err);
error:
    store_rollback(st);
    return -1;
}
