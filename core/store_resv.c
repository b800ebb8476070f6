/* store_resv.c - reservations in PostgreSQL: written with a turn, loaded
 * at start-up (the long-ended ones light), read back once ended. */
/* SPDX-License-Identifier: MIT */
#include "core/store_resv.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>

int store_resv_upsert(struct store *st, const struct store_resv_row *rows,
                      size_t n, struct loom_error *err)
{
    for (size_t i = 0; i < n; i++) {
        char id[24];
        const char *values[3] = {id, rows[i].state, rows[i].doc};
        snprintf(id, sizeof(id), "%" PRId64, rows[i].id);
        if (store_run(st, "reservations: write",
                      "INSERT INTO reservations (id, state, doc) "
                      "VALUES ($1::bigint, $2, $3::json) "
                      "ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, "
                      "doc = EXCLUDED.doc, updated_at = now()",
                      3, values, err) < 0)
            return -1;
    }
    return 0;
}

/* A reservation is read light when $1 is set and it would leave memory
 * at the scheduler's first look (may_go, scheduler/sched_resv_evict.c):
 * it ended (done or cancelled, and its document says the same) at or
 * before $1. A loaded one ended at its end or at the load, whichever
 * came first (ended_at, scheduler/sched_resv.c), so an end at or before
 * $1 is an end resv_memory_s ago at least. It has no twin in its
 * cluster's system (native) and no error about one (native_error, which
 * the first look clears and writes): such a one is read in full and goes
 * as it always did. Its end is compared as text (STORE_TIME_FORM); one of
 * another form is read in full. Only the ended rows' documents are
 * parsed, once each (json_to_record); loomd parses none it reads light. */
#define LOAD_SQL                                                          \
    "SELECT id, state, CASE WHEN light THEN NULL ELSE doc::text END, "    \
    "light AND purpose IS NOT DISTINCT FROM 'maintenance' "               \
    "FROM (SELECT r.id, r.state, r.doc, d.purpose, "                      \
    "COALESCE(d.id = r.id::text AND d.state = r.state AND "               \
    "d.native IS NULL AND d.native_error IS NULL AND "                    \
    "d.\"end\" ~ " STORE_TIME_FORM " AND "                                \
    "d.\"end\" COLLATE \"C\" <= $1::text, false) AS light "               \
    "FROM reservations AS r, LATERAL json_to_record(CASE WHEN "           \
    "$1::text IS NOT NULL AND r.state IN ('done', 'cancelled') AND "      \
    "json_typeof(r.doc) = 'object' THEN r.doc END) AS d(id text, "        \
    "state text, purpose text, \"end\" text, native json, "               \
    "native_error text)) AS x ORDER BY id"

int store_resv_load(struct store *st, const char *light_upto,
                    int (*cb)(void *arg, const struct store_resv_row *row),
                    void *arg, struct loom_error *err)
{
    const char *params[1] = {light_upto};
    PGresult *r = (PGresult *)store_exec(st, "reservations: load", LOAD_SQL,
                                         1, params, err);
    int rc = 0;

    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        struct store_resv_row row = {
            strtoll(PQgetvalue(r, i, 0), NULL, 10), PQgetvalue(r, i, 1),
            PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2),
            PQgetvalue(r, i, 3)[0] == 't'};
        if (cb(arg, &row) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "reservations: load "
                                "stopped at reservation %" PRId64, row.id);
    }
    PQclear(r);
    return rc;
}

int store_resv_maint_max(struct store *st, int64_t *max,
                         struct loom_error *err)
{
    /* as the maintenance thread read it from each document before: the
     * member a string, its number as strtoll takes it */
    PGresult *r = (PGresult *)store_exec(
        st, "reservations: read the maintenance requests",
        "SELECT d.maintenance #>> '{}' FROM reservations AS r, "
        "LATERAL json_to_record(CASE WHEN json_typeof(r.doc) = 'object' "
        "THEN r.doc END) AS d(maintenance json) "
        "WHERE json_typeof(d.maintenance) = 'string'",
        0, NULL, err);

    *max = 0;
    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r); i++) {
        int64_t id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
        if (id > *max)
            *max = id;
    }
    PQclear(r);
    return 0;
}

int store_resv_doc(struct store *st, int64_t id, char **state, char **doc,
                   struct loom_error *err)
{
    return store_doc_read(st, "reservations: read one",
                          "SELECT state, doc::text FROM reservations "
                          "WHERE id = $1::bigint", id, state, doc, err);
}

int store_resv_ended(struct store *st, const char *but, int64_t upto,
                     const char *match, store_row_cb cb, void *arg,
                     struct loom_error *err)
{
    return store_docs_read(st, "reservations: read the ended",
                           "SELECT id, doc::text FROM reservations "
                           "WHERE state IN ('done', 'cancelled') "
                           "AND id <= $2::bigint "
                           "AND NOT id = ANY($1::bigint[]) "
                           "AND " STORE_DOC_MATCH " ORDER BY id",
                           but, upto, match, cb, arg, err);
}
