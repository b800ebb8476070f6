/* store_jobs_doubt.c - the jobs whose write lost its connection under the
 * commit: which of them are stored, looked at once the database is back. */
/* SPDX-License-Identifier: MIT */
#include "core/store_jobs.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOUBT_SELECT                                                     \
    "SELECT id, idem_key, idem_hash, doc::text " \
    "FROM jobs WHERE id = ANY($1::bigint[]) ORDER BY id"

int store_jobs_doubt(struct store *st, const int64_t *take, size_t n_take,
                     const int64_t *drop, size_t n_drop,
                     int (*cb)(void *arg, const struct store_job_row *row),
                     void *arg, struct loom_error *err)
{
    char *t = store_id_array(take, n_take), *d = store_id_array(drop, n_drop);
    const char *v[] = {t, d};
    PGresult *r = NULL;
    int rc = -1;

    if (!t || !d) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    /* one statement: the rows made again elsewhere go, the others are
     * read, in one transaction; only a read when none goes (a read waits
     * for no lock on the table) */
    if (n_drop)
        r = store_exec(st, "jobs: commits in doubt",
                       "WITH gone AS (DELETE FROM jobs "
                       "WHERE id = ANY($2::bigint[])) " DOUBT_SELECT,
                       2, v, err);
    else
        r = store_exec(st, "jobs: commits in doubt", DOUBT_SELECT, 1, v, err);
    if (!r)
        goto out;
    rc = 0;
    for (int i = 0; i < PQntuples(r); i++) {
        struct store_job_row row = {
            .id = strtoll(PQgetvalue(r, i, 0), NULL, 10),
            .idem_key = PQgetisnull(r, i, 1) ? NULL : PQgetvalue(r, i, 1),
            .idem_hash = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2),
            .doc = PQgetvalue(r, i, 3)};
        if (cb(arg, &row) != 0) {
            rc = loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            break;
        }
    }
out:
    PQclear(r);
    free(t);
    free(d);
    return rc;
}
