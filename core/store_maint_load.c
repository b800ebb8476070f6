/* store_maint_load.c - start-up's read of the maintenance table: in full
 * the requests that stay in memory, only the id and state of one that
 * ended long ago. */
/* SPDX-License-Identifier: MIT */
#include "core/store_maint.h"

#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

/* Which requests the maintenance thread's first look (mreq_evict, at the
 * end of mreq_load) would let go: id, state, and whether it would ($1:
 * the latest time it may have ended). One that
 *  - ended (done, failed, cancelled; its document says the same, and its
 *    own id) at or before $1: when its last history entry says
 *    (mreq_from_doc), RFC 3339 UTC text of the one form loomd writes,
 *    compared bytewise (STORE_TIME_FORM); any other form is kept;
 *  - and that the rules' back-off counts not (mevict.c): a failed one has,
 *    on each of its nodes, a later request with its action done; a done
 *    one comes after no failure of its action on any of its nodes. (One
 *    that does is let go only when that failure is: it is kept here, and
 *    the first look decides, as it always did.)
 * Nodes are compared by name within the cluster, as node_ids_in makes
 * them; a missing action is node-off and a state loomd does not know is
 * failed, as mreq_from_doc reads them. x holds a row for each request
 * (node NULL) and one for each node of a done or failed one, so that
 * window functions (y: per cluster, action and node; z: per request)
 * decide without a join, whose plan could go quadratic on a misjudged
 * row count. PostgreSQL parses each document once (json_to_record);
 * loomd fetches and parses only those read in full. */
#define LOOK_SQL                                                          \
    "WITH r AS (SELECT m.id, m.state, CASE WHEN d.state IN ("             \
    "'requested', 'planned', 'draining', 'in-progress', 'verifying', "    \
    "'done', 'cancelled') THEN d.state ELSE 'failed' END AS seen, "       \
    "d.cluster, CASE WHEN json_typeof(d.action) = 'string' THEN "         \
    "d.action #>> '{}' ELSE 'node-off' END AS action, d.nodes, "          \
    "COALESCE(m.state IN ('done', 'failed', 'cancelled') AND "            \
    "d.state = m.state AND d.id = m.id::text AND d.cluster IS NOT NULL "  \
    "AND d.history -> -1 ->> 'time' ~ " STORE_TIME_FORM " AND "           \
    "(d.history -> -1 ->> 'time') COLLATE \"C\" <= $1::text, false) "     \
    "AS old FROM maintenance AS m, LATERAL json_to_record(CASE WHEN "     \
    "json_typeof(m.doc) = 'object' THEN m.doc END) AS d(id text, "        \
    "state text, cluster text, action json, nodes json, history json)), " \
    "x AS (SELECT id, state, old, seen, cluster, action, NULL::text AS "  \
    "node FROM r UNION ALL SELECT r.id, NULL, NULL, r.seen, r.cluster, "  \
    "r.action, regexp_replace(e.node, '^[^/]*/', '') FROM r, "            \
    "json_array_elements_text(CASE WHEN json_typeof(r.nodes) = 'array' "  \
    "THEN r.nodes END) AS e(node) WHERE r.seen IN ('done', 'failed')), "  \
    "y AS (SELECT id, state, old, seen, node, min(id) FILTER (WHERE "     \
    "seen = 'failed') OVER k AS first_failed, max(id) FILTER (WHERE "     \
    "seen = 'done') OVER k AS last_done FROM x "                          \
    "WINDOW k AS (PARTITION BY cluster, action, node)), "                 \
    "z AS (SELECT id, state, old, node, bool_or(node IS NOT NULL AND "    \
    "((seen = 'failed' AND (last_done IS NULL OR last_done < id)) OR "    \
    "(seen = 'done' AND first_failed < id))) OVER (PARTITION BY id) AS "  \
    "held FROM y) "                                                       \
    "SELECT id, state, old AND NOT held FROM z WHERE node IS NULL "       \
    "ORDER BY id"
/* The documents of those read in full ($1: their ids). */
#define DOCS_SQL                                                          \
    "SELECT id, doc::text FROM maintenance WHERE id = ANY($1::bigint[]) " \
    "ORDER BY id"
#define ALL_SQL "SELECT id, state, doc::text FROM maintenance ORDER BY id"

/* Every request in full: cb(id, state, doc). 0 or -1. */
static int load_all(struct store *st, store_row_cb cb, void *arg,
                    struct loom_error *err)
{
    PGresult *r = (PGresult *)store_exec(st, "maintenance: load", ALL_SQL,
                                         0, NULL, err);
    const char *cols[3];
    int rc = 0;

    if (!r)
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        for (int k = 0; k < 3; k++)
            cols[k] = PQgetvalue(r, i, k);
        if (cb(arg, 3, cols) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "maintenance: load "
                                "stopped at request %s", cols[0]);
    }
    PQclear(r);
    return rc;
}

/* The ids of look's rows read in full, as a bigint[] parameter: a new
 * string, or NULL out of memory. */
static char *full_ids(PGresult *look)
{
    int n = PQntuples(look);
    int64_t *ids = malloc(((size_t)n + 1) * sizeof(*ids));
    size_t k = 0;
    char *s;

    if (!ids)
        return NULL;
    for (int i = 0; i < n; i++)
        if (PQgetvalue(look, i, 2)[0] != 't')
            ids[k++] = strtoll(PQgetvalue(look, i, 0), NULL, 10);
    s = store_id_array(ids, k);
    free(ids);
    return s;
}

/* cb for each of look's rows, with its document from docs (both in id
 * order) or, read light, without. 0 or -1. */
static int merge(PGresult *look, PGresult *docs, store_row_cb cb, void *arg,
                 struct loom_error *err)
{
    const char *cols[3];
    int k = 0;

    for (int i = 0; i < PQntuples(look); i++) {
        cols[0] = PQgetvalue(look, i, 0);
        cols[1] = PQgetvalue(look, i, 1);
        cols[2] = NULL;
        if (PQgetvalue(look, i, 2)[0] != 't') {
            if (k >= PQntuples(docs) ||
                strcmp(PQgetvalue(docs, k, 0), cols[0]) != 0)
                return loom_error_set(err, LOOM_EINTERNAL, "maintenance: "
                                      "load: request %s has no document",
                                      cols[0]);
            cols[2] = PQgetvalue(docs, k++, 1);
        }
        if (cb(arg, 3, cols) != 0)
            return loom_error_set(err, LOOM_EINTERNAL, "maintenance: load "
                                  "stopped at request %s", cols[0]);
    }
    return 0;
}

int store_maint_load(struct store *st, const char *light_upto,
                     store_row_cb cb, void *arg, struct loom_error *err)
{
    PGresult *look = NULL, *docs = NULL;
    const char *params[1] = {light_upto};
    char *ids = NULL;
    int rc = -1;

    if (!light_upto)
        return load_all(st, cb, arg, err);
    /* the look and the documents from one snapshot */
    if (store_run(st, "maintenance: load",
                  "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", 0, NULL,
                  err) < 0)
        return -1;
    if (!(look = (PGresult *)store_exec(st, "maintenance: load", LOOK_SQL,
                                        1, params, err)))
        goto error;
    if (!(ids = full_ids(look))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    params[0] = ids;
    if (!(docs = (PGresult *)store_exec(st, "maintenance: load", DOCS_SQL,
                                        1, params, err)))
        goto error;
    if (store_run(st, "maintenance: load", "COMMIT", 0, NULL, err) == 0)
        rc = merge(look, docs, cb, arg, err);
out:
    PQclear(look);
    PQclear(docs);
    free(ids);
    return rc;
error:
    store_rollback(st);
    goto out;
}
