/* store_maint.c - goal state, actual reports, mismatches, maintenance
 * requests and paused nodes in PostgreSQL. */
/* SPDX-License-Identifier: MIT */
#include "core/store_maint.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One statement in its own transaction (a statement is one already). */
int store_goal_put(struct store *st, const char *items, struct loom_error *err)
{
    const char *v[1] = {items};

    if (store_run(st, "goal: begin", "BEGIN", 0, NULL, err) < 0 ||
        store_run(st, "goal: write",
                  "DELETE FROM goal_nodes WHERE node IN (SELECT e->>'node' "
                  "FROM json_array_elements($1::json) e)", 1, v, err) < 0 ||
        store_run(st, "goal: write",
                  "INSERT INTO goal_nodes (node, attrs) "
                  "SELECT e->>'node', e->'attributes' "
                  "FROM json_array_elements($1::json) e "
                  "WHERE (e->'attributes')::jsonb <> '{}'::jsonb", 1, v, err) < 0 ||
        store_run(st, "goal: commit", "COMMIT", 0, NULL, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

int store_actual_put(struct store *st, const char *node, const char *reports,
                     struct loom_error *err)
{
    const char *v[2] = {node, reports};

    return store_run(st, "actual: write",
                     "INSERT INTO actual_reports (node, attribute, value, time) "
                     "SELECT $1, e->>'attribute', e->'value', "
                     "to_timestamp((e->>'time')::double precision) "
                     "FROM json_array_elements($2::json) e "
                     "ON CONFLICT (node, attribute) DO UPDATE SET "
                     "value = EXCLUDED.value, time = EXCLUDED.time",
                     2, v, err);
}

int store_mismatch_apply(struct store *st, const char *set, const char *gone,
                         struct loom_error *err)
{
    const char *vs[1] = {set}, *vg[1] = {gone};

    if (store_run(st, "mismatches: begin", "BEGIN", 0, NULL, err) < 0 ||
        store_run(st, "mismatches: write",
                  "DELETE FROM mismatches m USING json_array_elements($1::json) e "
                  "WHERE m.node = e->>'node' AND m.attribute = e->>'attribute'",
                  1, vg, err) < 0 ||
        store_run(st, "mismatches: write",
                  "INSERT INTO mismatches (node, attribute, goal, actual, since) "
                  "SELECT e->>'node', e->>'attribute', e->'goal', e->'actual', "
                  "to_timestamp((e->>'since')::double precision) "
                  "FROM json_array_elements($1::json) e "
                  "ON CONFLICT (node, attribute) DO UPDATE SET "
                  "goal = EXCLUDED.goal, actual = EXCLUDED.actual",
                  1, vs, err) < 0 ||
        store_run(st, "mismatches: commit", "COMMIT", 0, NULL, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

int store_maint_put(struct store *st, int64_t id, const char *state,
                    const char *doc, struct loom_error *err)
{
    char ids[24];
    const char *v[3] = {ids, state, doc};

    snprintf(ids, sizeof(ids), "%" PRId64, id);
    return store_run(st, "maintenance: write",
                     "INSERT INTO maintenance (id, state, doc) "
                     "VALUES ($1::bigint, $2, $3::json) "
                     "ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, "
                     "doc = EXCLUDED.doc, updated_at = now()",
                     3, v, err);
}

int store_maint_delete(struct store *st, const int64_t *ids, size_t n,
                       struct loom_error *err)
{
    char *a = store_id_array(ids, n);
    const char *v[1] = {a};
    int rc;

    if (!a)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    rc = store_run(st, "maintenance: delete",
                   "DELETE FROM maintenance WHERE id = ANY($1::bigint[])", 1,
                   v, err);
    free(a);
    return rc;
}

int store_pause_put(struct store *st, const char *node, const char *doc,
                    struct loom_error *err)
{
    const char *v[2] = {node, doc};

    return store_run(st, "pause: write",
                     "INSERT INTO node_pauses (node, doc) "
                     "VALUES ($1, $2::json) "
                     "ON CONFLICT (node) DO UPDATE SET doc = EXCLUDED.doc, "
                     "updated_at = now()", 2, v, err);
}

int store_pause_del(struct store *st, const char *node,
                    struct loom_error *err)
{
    const char *v[1] = {node};

    return store_run(st, "pause: delete",
                     "DELETE FROM node_pauses WHERE node = $1", 1, v, err);
}

static int load(struct store *st, const char *what, const char *sql,
                store_row_cb cb, void *arg, struct loom_error *err)
{
    PGresult *r = (PGresult *)store_exec(st, what, sql, 0, NULL, err);
    const char *cols[8];
    int rc = 0;

    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        int n = PQnfields(r) < 8 ? PQnfields(r) : 8;
        for (int k = 0; k < n; k++)
            cols[k] = PQgetvalue(r, i, k);
        if (cb(arg, n, cols) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "%s: stopped at row %d",
                                what, i);
    }
    PQclear(r);
    return rc;
}

int store_goal_load(struct store *st, store_row_cb cb, void *arg,
                    struct loom_error *err)
{
    return load(st, "goal: load",
                "SELECT node, attrs, extract(epoch FROM updated_at)::bigint "
                "FROM goal_nodes", cb, arg, err);
}

int store_actual_load(struct store *st, store_row_cb cb, void *arg,
                      struct loom_error *err)
{
    return load(st, "actual: load",
                "SELECT node, attribute, value, "
                "extract(epoch FROM time)::bigint FROM actual_reports",
                cb, arg, err);
}

int store_mismatch_load(struct store *st, store_row_cb cb, void *arg,
                        struct loom_error *err)
{
    return load(st, "mismatches: load",
                "SELECT node, attribute, extract(epoch FROM since)::bigint "
                "FROM mismatches", cb, arg, err);
}

int store_pause_load(struct store *st, store_row_cb cb, void *arg,
                     struct loom_error *err)
{
    return load(st, "pause: load",
                "SELECT node, doc FROM node_pauses ORDER BY node", cb, arg,
                err);
}

int store_maint_doc(struct store *st, int64_t id, char **state, char **doc,
                    struct loom_error *err)
{
    return store_doc_read(st, "maintenance: read one",
                          "SELECT state, doc::text FROM maintenance "
                          "WHERE id = $1::bigint", id, state, doc, err);
}

int store_maint_ended(struct store *st, const char *but, int64_t upto,
                      const char *match, store_row_cb cb, void *arg,
                      struct loom_error *err)
{
    return store_docs_read(st, "maintenance: read the ended",
                           "SELECT id, doc::text FROM maintenance "
                           "WHERE state IN ('done', 'failed', 'cancelled') "
                           "AND id <= $2::bigint "
                           "AND NOT id = ANY($1::bigint[]) "
                           "AND " STORE_DOC_MATCH " ORDER BY id",
                           but, upto, match, cb, arg, err);
}
