/* store_resv.c - reservations in PostgreSQL. */
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

int store_resv_load(struct store *st,
                    int (*cb)(void *arg, const struct store_resv_row *row),
                    void *arg, struct loom_error *err)
{
    PGresult *r = (PGresult *)store_exec(st, "reservations: load",
                                         "SELECT id, state, doc FROM "
                                         "reservations ORDER BY id",
                                         0, NULL, err);
    int rc = 0;

    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        struct store_resv_row row = {strtoll(PQgetvalue(r, i, 0), NULL, 10),
                                     PQgetvalue(r, i, 1),
                                     PQgetvalue(r, i, 2)};
        if (cb(arg, &row) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "reservations: load "
                                "stopped at reservation %" PRId64, row.id);
    }
    PQclear(r);
    return rc;
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
