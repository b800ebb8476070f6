/* store_jobs_read.c - jobs read back from PostgreSQL one at a time or a
 * page of ended ones at a time. */
/* SPDX-License-Identifier: MIT */
#include "core/store_jobs_read.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_job_doc(struct store *st, int64_t id, char **doc,
                  struct loom_error *err)
{
    char ids[24];
    const char *v[] = {ids};
    PGresult *r;
    int found;

    *doc = NULL;
    snprintf(ids, sizeof(ids), "%" PRId64, id);
    r = store_exec(st, "jobs: read one",
                   "SELECT doc::text FROM jobs WHERE id = $1::bigint", 1, v,
                   err);
    if (!r)
        return -1;
    found = PQntuples(r) > 0;
    if (found && !(*doc = strdup(PQgetvalue(r, 0, 0)))) {
        PQclear(r);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    PQclear(r);
    return found;
}

int store_job_by_idem(struct store *st, const char *owner, const char *key,
                      int64_t *id, char **hash, char **doc,
                      struct loom_error *err)
{
    const char *v[] = {owner, key};
    PGresult *r;

    *hash = *doc = NULL;
    r = store_exec(st, "jobs: read by idempotency key",
                   "SELECT id, coalesce(idem_hash, ''), doc::text FROM jobs "
                   "WHERE idem_owner = $1 AND idem_key = $2",
                   2, v, err);
    if (!r)
        return -1;
    if (PQntuples(r) == 0) {
        PQclear(r);
        return 0;
    }
    *id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    *hash = strdup(PQgetvalue(r, 0, 1));
    *doc = strdup(PQgetvalue(r, 0, 2));
    PQclear(r);
    if (!*hash || !*doc) {
        free(*hash);
        free(*doc);
        *hash = *doc = NULL;
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 1;
}

/* cluster: where it runs or ran, else the one it asked for (as the job
 * table's views match ?cluster=). */
#define ENDED_SQL                                                          \
    "SELECT id, doc::text FROM jobs "                                      \
    "WHERE id > $1::bigint "                                               \
    "AND state IN ('completed', 'failed', 'cancelled') "                   \
    "AND ($3::text[] IS NULL OR state = ANY ($3::text[])) "                \
    "AND ($4::text IS NULL OR owner = $4) "                                \
    "AND ($5::text IS NULL OR doc->>'account' = $5) "                      \
    "AND ($6::text IS NULL OR doc->>'name' = $6) "                         \
    "AND ($7::text IS NULL OR coalesce(doc->>'cluster', "                  \
    "doc->'request'->>'cluster') = $7) "                                   \
    "AND ($8::text IS NULL OR owner = $8 OR doc->>'submitted_by' = $8) "   \
    "AND ($9::jsonb IS NULL OR id IN "                                     \
    "(SELECT jsonb_array_elements_text($9::jsonb)::bigint)) "              \
    "AND ($10::jsonb IS NULL OR owner IN "                                 \
    "(SELECT jsonb_array_elements_text($10::jsonb)) OR doc->>'account' IN " \
    "(SELECT jsonb_array_elements_text($10::jsonb))) "                     \
    "AND ($11::jsonb IS NULL OR doc->'request'->>'queue' IN "              \
    "(SELECT jsonb_array_elements_text($11::jsonb))) "                     \
    "AND id <= $12::bigint "                                               \
    "ORDER BY id LIMIT $2::bigint"

int store_jobs_ended(struct store *st, int64_t after, long n, int64_t upto,
                     const struct store_ended_filter *f,
                     int (*cb)(void *arg, int64_t id, const char *doc),
                     void *arg, struct loom_error *err)
{
    char a[24], lim[24], u[24];
    const char *v[] = {a, lim, f->states, f->owner, f->account, f->name,
                       f->cluster, f->seen_by, f->ids, f->users,
                       f->queues, u};
    PGresult *r;
    int rows;

    snprintf(a, sizeof(a), "%" PRId64, after);
    snprintf(lim, sizeof(lim), "%ld", n);
    snprintf(u, sizeof(u), "%" PRId64, upto);
    r = store_exec(st, "jobs: read ended", ENDED_SQL, 12, v, err);
    if (!r)
        return -1;
    rows = PQntuples(r);
    for (int i = 0; i < rows; i++)
        if (cb(arg, strtoll(PQgetvalue(r, i, 0), NULL, 10),
               PQgetvalue(r, i, 1)) != 0)
            break;
    PQclear(r);
    return rows;
}
