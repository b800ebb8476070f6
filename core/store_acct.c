/* store_acct.c - the jobs' history: the jobs of a window of time read from
 * their docs, and their use summed per cluster, account and owner. */
/* SPDX-License-Identifier: MIT */
#include "core/store_acct.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>

/* The jobs of the window, with the account each ran as on its cluster
 * (cluster_accounts: the cluster's entry, else the '*' one, else the
 * job's account). Parameters: $1 start, $2 end, $3 owner, $4 cluster,
 * $5 state, $6 viewer, $7 after, $8 account (NULL: any). The times are
 * compared as text: the columns sql/0008_job_times.sql indexes. */
#define WINDOW_SQL                                                          \
    "WITH w AS (SELECT id, doc, start_time AS t_start, end_time AS t_end, " \
    "coalesce(doc->'cluster_accounts'->>(doc->>'cluster'), "                \
    "doc->'cluster_accounts'->>'*', doc->>'account') AS account "           \
    "FROM jobs WHERE doc->>'array' IS NULL "                                \
    "AND (end_time >= $1::text OR (end_time IS NULL AND "                   \
    "start_time IS NOT NULL)) "                                             \
    "AND coalesce(start_time, end_time) < $2::text "                        \
    "AND ($3::text IS NULL OR owner = $3::text) "                           \
    "AND ($4::text IS NULL OR doc->>'cluster' = $4::text) "                 \
    "AND ($5::text IS NULL OR state = $5::text) "                           \
    "AND ($6::text IS NULL OR owner = $6::text "                            \
    "OR doc->>'submitted_by' = $6::text) "                                  \
    "AND id > $7::bigint), "                                                \
    "j AS (SELECT * FROM w WHERE $8::text IS NULL OR account = $8::text) "

/* A job's allocated cpus. */
#define CPUS_SQL                                                            \
    "coalesce((doc->'request'->>'nodes')::bigint * "                        \
    "(doc->'request'->>'cpus_per_node')::bigint, 0)"

static const char list_sql[] =
    WINDOW_SQL
    "SELECT id, doc->>'id', doc->>'name', doc->>'owner', account, "
    "doc->>'cluster', doc->>'state', doc->>'reason', doc->>'submit_time', "
    "t_start, t_end, doc->>'exit_code', coalesce(doc->'nodes', '[]'), "
    CPUS_SQL ", "
    "CASE WHEN t_start IS NULL THEN 0 ELSE greatest(0, floor(extract(epoch "
    "FROM coalesce(t_end::timestamptz, now()) - t_start::timestamptz))) "
    "END::bigint "
    "FROM j ORDER BY id LIMIT $9::bigint";

/* Each job counted for the part of its run inside the window; a row per
 * cluster and account (ga = 1), then one per owner. */
static const char usage_sql[] =
    WINDOW_SQL
    ", u AS (SELECT doc->>'cluster' AS cluster, account, doc->>'owner' AS "
    "owner, " CPUS_SQL " * greatest(0, extract(epoch FROM "
    "least(coalesce(t_end::timestamptz, now()), $2::text::timestamptz) - "
    "greatest(t_start::timestamptz, $1::text::timestamptz))) AS cs "
    "FROM j WHERE t_start IS NOT NULL) "
    "SELECT cluster, account, owner, count(*), sum(cs)::float8, "
    "GROUPING(owner) FROM u "
    "GROUP BY GROUPING SETS ((cluster, account), (cluster, account, owner)) "
    "ORDER BY cluster, account, GROUPING(owner) DESC, owner";

static const char *val(PGresult *r, int i, int c)
{
    return PQgetisnull(r, i, c) ? NULL : PQgetvalue(r, i, c);
}

/* The parameters of WINDOW_SQL from f into v (nums: room for the two
 * numbers). */
static void params(const struct store_acct_filter *f, const char *v[9],
                   char nums[2][24])
{
    snprintf(nums[0], sizeof(nums[0]), "%" PRId64, f->after);
    snprintf(nums[1], sizeof(nums[1]), "%" PRId64, f->limit);
    v[0] = f->start;
    v[1] = f->end;
    v[2] = f->owner;
    v[3] = f->cluster;
    v[4] = f->state;
    v[5] = f->viewer;
    v[6] = nums[0];
    v[7] = f->account;
    v[8] = nums[1];
}

int store_acct_list(struct store *st, const struct store_acct_filter *f,
                    int (*cb)(void *arg, const struct store_acct_row *r),
                    void *arg, struct loom_error *err)
{
    const char *v[9];
    char nums[2][24];
    PGresult *r;
    int rc = 0;

    params(f, v, nums);
    if (!(r = store_exec(st, "accounting: read", list_sql, 9, v,
                                     err)))
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        struct store_acct_row row = {
            .record = strtoll(PQgetvalue(r, i, 0), NULL, 10),
            .id = val(r, i, 1),
            .name = val(r, i, 2),
            .owner = val(r, i, 3),
            .account = val(r, i, 4),
            .cluster = val(r, i, 5),
            .state = val(r, i, 6),
            .reason = val(r, i, 7),
            .submit_time = val(r, i, 8),
            .start_time = val(r, i, 9),
            .end_time = val(r, i, 10),
            .exit_code = val(r, i, 11),
            .nodes = val(r, i, 12),
            .cpus = strtoll(PQgetvalue(r, i, 13), NULL, 10),
            .elapsed_s = strtoll(PQgetvalue(r, i, 14), NULL, 10),
        };
        if (cb(arg, &row) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "accounting: the list "
                                "was stopped");
    }
    PQclear(r);
    return rc;
}

int store_acct_usage(struct store *st, const struct store_acct_filter *f,
                     int (*cb)(void *arg, const struct store_usage_row *r),
                     void *arg, struct loom_error *err)
{
    struct store_acct_filter g = *f;
    const char *v[9];
    char nums[2][24];
    PGresult *r;
    int rc = 0;

    g.state = NULL;
    g.after = 0;
    g.limit = 0;
    params(&g, v, nums);
    if (!(r = store_exec(st, "usage: read", usage_sql, 8, v,
                                     err)))
        return -1;
    for (int i = 0; i < PQntuples(r) && rc == 0; i++) {
        int total = PQgetvalue(r, i, 5)[0] == '1';
        struct store_usage_row row = {
            .cluster = val(r, i, 0),
            .account = val(r, i, 1),
            .owner = total ? NULL : val(r, i, 2),
            .jobs = strtoll(PQgetvalue(r, i, 3), NULL, 10),
            .cpu_seconds = strtod(PQgetvalue(r, i, 4), NULL),
        };
        if (!total && !row.owner)
            row.owner = ""; /* a job without an owner: not NULL, a name */
        if (cb(arg, &row) != 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "usage: the list was "
                                "stopped");
    }
    PQclear(r);
    return rc;
}
