/* store_jobs.c - the jobs table: group insert and update through unnest. */
/* SPDX-License-Identifier: MIT */
#include "core/store_jobs.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The nine columns of a row, and the rows from nine array parameters
 * $p1..$p9. start_time and end_time are the doc's, written beside
 * it for the indexes of the jobs' history (sql/0008_job_times.sql). */
#define JOB_COLS                                                     \
    "id, state, owner, idem_owner, idem_key, idem_hash, doc, start_time, " \
    "end_time"
#define ROWS_FROM(p1, p2, p3, p4, p5, p6, p7, p8, p9)                       \
    "SELECT id, state, owner, idem_owner, idem_key, idem_hash, doc::json, " \
    "start_time, end_time "                                                 \
    "FROM unnest($" #p1 "::bigint[], $" #p2 "::text[], $" #p3 "::text[], "  \
    "$" #p4 "::text[], $" #p5 "::text[], $" #p6 "::text[], $" #p7           \
    "::text[], $" #p8 "::text[], $" #p9 "::text[]) AS u(" JOB_COLS ")"
#define INSERT_SQL \
    "INSERT INTO jobs (" JOB_COLS ") " ROWS_FROM(1, 2, 3, 4, 5, 6, 7, 8, 9)
/* An upsert, so that a job the caller holds as stored is written whole even
 * if its row is gone (its state in memory is the authority). */
#define UPSERT_SQL(a, b, c, d, e, f, g, h, i)                                \
    "INSERT INTO jobs AS j (" JOB_COLS ") "                                  \
    ROWS_FROM(a, b, c, d, e, f, g, h, i)                                     \
    " ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, "              \
    "doc = EXCLUDED.doc, start_time = EXCLUDED.start_time, "                \
    "end_time = EXCLUDED.end_time, updated_at = now()"
#define N_COLS 9

static const struct store_stmt insert_stmt = {"loom_jobs_insert", INSERT_SQL,
                                              N_COLS};
static const struct store_stmt upsert_stmt = {
    "loom_jobs_upsert", UPSERT_SQL(1, 2, 3, 4, 5, 6, 7, 8, 9), N_COLS};
/* A turn's new and changed jobs in one statement, and so one round trip and
 * one transaction. The two sets must not share an id: both parts see the
 * table as it was before the statement. */
static const struct store_stmt turn_stmt = {
    "loom_jobs_turn",
    "WITH ins AS (" INSERT_SQL ") "
    UPSERT_SQL(10, 11, 12, 13, 14, 15, 16, 17, 18), 2 * N_COLS};

/* A growable buffer for one PostgreSQL array literal. Quoting the elements
 * of an array value is data encoding, like escaping JSON; the statement
 * text itself is constant and the array travels as a parameter. */
struct arr {
    char *p;
    size_t len, cap;
    int oom;
};

static void arr_reserve(struct arr *a, size_t more)
{
    size_t cap;
    char *p;

    if (a->oom || a->len + more + 1 <= a->cap)
        return;
    cap = a->cap ? a->cap : 256;
    while (cap < a->len + more + 1) {
        if (cap > SIZE_MAX / 2) {
            a->oom = 1;
            return;
        }
        cap *= 2;
    }
    p = realloc(a->p, cap);
    if (!p) {
        a->oom = 1;
        return;
    }
    a->p = p;
    a->cap = cap;
}

static void arr_put(struct arr *a, const char *s, size_t n)
{
    arr_reserve(a, n);
    if (a->oom)
        return;
    memcpy(a->p + a->len, s, n);
    a->len += n;
    a->p[a->len] = '\0';
}

/* Open "{" or separate with ",". */
static void arr_next(struct arr *a, size_t i)
{
    arr_put(a, i ? "," : "{", 1);
}

/* A text element: NULL, or double-quoted with " and \ escaped, so that
 * commas, braces, blanks and the word NULL inside it stay data. */
static void arr_text(struct arr *a, size_t i, const char *s)
{
    size_t n;
    char *w;

    arr_next(a, i);
    if (!s) {
        arr_put(a, "NULL", 4);
        return;
    }
    n = strlen(s);
    arr_reserve(a, 2 * n + 2); /* room for every byte escaped: one pass */
    if (a->oom)
        return;
    w = a->p + a->len;
    *w++ = '"';
    for (size_t k = 0; k < n; k++) {
        if (s[k] == '"' || s[k] == '\\')
            *w++ = '\\';
        *w++ = s[k];
    }
    *w++ = '"';
    *w = '\0';
    a->len = (size_t)(w - a->p);
}

static void arr_int64(struct arr *a, size_t i, int64_t v)
{
    char num[24];
    int n;

    arr_next(a, i);
    n = snprintf(num, sizeof(num), "%" PRId64, v);
    arr_put(a, num, (size_t)n);
}

static void arr_close(struct arr *a, size_t n)
{
    arr_put(a, n ? "}" : "{}", n ? 1 : 2);
}

static void arrs_free(struct arr *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i].p);
}

/* 0, or -1 with err when any buffer ran out of memory. */
static int arrs_check(struct arr *a, size_t n, const char **values,
                      struct loom_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].oom)
            return loom_error_set(err, LOOM_EINTERNAL,
                                  "jobs: out of memory");
        values[i] = a[i].p;
    }
    return 0;
}

static int check_rows(const struct store_job_row *rows, size_t n,
                      int need_owner, struct loom_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!rows[i].state || !rows[i].doc || (need_owner && !rows[i].owner))
            return loom_error_set(err, LOOM_EINVAL,
                                  "jobs: job %" PRId64 " lacks state, "
                                  "owner or doc", rows[i].id);
    }
    return 0;
}

/* The N_COLS columns of rows as array literals for unnest(): values[k]
 * points into a[k]. */
static int rows_to_arrays(const struct store_job_row *rows, size_t n,
                          struct arr a[N_COLS], const char *values[N_COLS],
                          struct loom_error *err)
{
    for (size_t i = 0; i < n; i++) {
        arr_int64(&a[0], i, rows[i].id);
        arr_text(&a[1], i, rows[i].state);
        arr_text(&a[2], i, rows[i].owner);
        arr_text(&a[3], i, rows[i].idem_owner);
        arr_text(&a[4], i, rows[i].idem_key);
        arr_text(&a[5], i, rows[i].idem_hash);
        arr_text(&a[6], i, rows[i].doc);
        arr_text(&a[7], i, rows[i].start_time);
        arr_text(&a[8], i, rows[i].end_time);
    }
    for (size_t k = 0; k < N_COLS; k++)
        arr_close(&a[k], n);
    return arrs_check(a, N_COLS, values, err);
}

/* A unique violation is an idempotency key used twice; any other (a
 * duplicate id) is our bug. */
static void insert_failed(struct store *st, struct loom_error *e)
{
    if (e->kind == LOOM_ECONFLICT &&
        strcmp(store_last_constraint(st), "jobs_idem_key") != 0)
        e->kind = LOOM_EINTERNAL;
    else if (e->kind == LOOM_ECONFLICT)
        loom_error_set(e, LOOM_ECONFLICT,
                       "jobs: idempotency key already used");
}

/* New jobs (ins) through a prepared statement, with the changed ones
 * (upd, when not NULL) as its second N_COLS parameters. */
static int write_rows(struct store *st, const char *what,
                      const struct store_stmt *stmt,
                      const struct store_job_row *ins, size_t n_ins,
                      const struct store_job_row *upd, size_t n_upd,
                      struct loom_error *err)
{
    struct arr a[2 * N_COLS] = {{0}};
    const char *values[2 * N_COLS];
    struct loom_error e = {0};
    int rc = -1;

    if (check_rows(ins, n_ins, 1, err) < 0)
        return -1;
    if (rows_to_arrays(ins, n_ins, a, values, err) < 0 ||
        (upd && rows_to_arrays(upd, n_upd, a + N_COLS, values + N_COLS,
                               err) < 0))
        goto out;
    rc = store_run_prepared(st, what, stmt, values, &e);
    if (rc < 0) {
        insert_failed(st, &e);
        if (err)
            *err = e;
    }
out:
    arrs_free(a, 2 * N_COLS);
    return rc;
}

int store_jobs_insert(struct store *st, const struct store_job_row *rows,
                      size_t n, struct loom_error *err)
{
    if (n == 0)
        return 0;
    return write_rows(st, "jobs: insert", &insert_stmt, rows, n, NULL, 0,
                      err);
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

/* 1 when some id (then in *twice) is named twice among rows a and b, 0
 * when none is, -1 with err when out of memory. */
static int ids_repeat(const struct store_job_row *a, size_t n_a,
                      const struct store_job_row *b, size_t n_b,
                      int64_t *twice, struct loom_error *err)
{
    int64_t *ids = malloc((n_a + n_b + 1) * sizeof(*ids));
    int rc = 0;

    if (!ids)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; i < n_a; i++)
        ids[i] = a[i].id;
    for (size_t i = 0; i < n_b; i++)
        ids[n_a + i] = b[i].id;
    qsort(ids, n_a + n_b, sizeof(*ids), cmp_id);
    for (size_t i = 1; i < n_a + n_b && rc == 0; i++)
        if ((rc = ids[i] == ids[i - 1]))
            *twice = ids[i];
    free(ids);
    return rc;
}

/* The rows of one upsert name each job once: an upsert may not change a
 * row twice. */
static int check_upd(const struct store_job_row *rows, size_t n,
                     struct loom_error *err)
{
    int64_t twice;
    int rc = check_rows(rows, n, 1, err) < 0
                 ? -1 : ids_repeat(rows, n, NULL, 0, &twice, err);

    if (rc > 0)
        return loom_error_set(err, LOOM_EINVAL, "jobs: update: job %" PRId64
                              " named twice", twice);
    return rc;
}

/* The write itself, inside the caller's transaction. */
static int update_rows(struct store *st, const struct store_job_row *rows,
                       size_t n, struct loom_error *err)
{
    struct arr a[N_COLS] = {{0}};
    const char *values[N_COLS];
    int rc = -1;

    if (check_upd(rows, n, err) < 0)
        return -1;
    if (rows_to_arrays(rows, n, a, values, err) < 0)
        goto out;
    rc = store_run_prepared(st, "jobs: update", &upsert_stmt, values, err);
out:
    arrs_free(a, N_COLS);
    return rc;
}

int store_jobs_update(struct store *st, const struct store_job_row *rows,
                      size_t n, struct loom_error *err)
{
    if (n == 0)
        return 0;
    if (store_run(st, "jobs: update", "BEGIN", 0, NULL, err) < 0)
        return -1;
    if (update_rows(st, rows, n, err) < 0 ||
        store_run(st, "jobs: update", "COMMIT", 0, NULL, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

int store_jobs_write(struct store *st, const struct store_job_row *ins,
                     size_t n_ins, const struct store_job_row *upd,
                     size_t n_upd, const struct store_resv_row *rv,
                     size_t n_rv, struct loom_error *err)
{
    int64_t twice;
    int shared;

    if (!n_upd && !n_rv) /* one statement: its own transaction */
        return store_jobs_insert(st, ins, n_ins, err);
    if (n_upd && check_upd(upd, n_upd, err) < 0)
        return -1;
    shared = ids_repeat(ins, n_ins, upd, n_upd, &twice, err);
    if (shared < 0)
        return -1;
    if (!n_rv && !shared) /* new and changed in one statement too */
        return write_rows(st, "jobs: write", &turn_stmt, ins, n_ins, upd,
                          n_upd, err);
    if (store_run(st, "jobs: write", "BEGIN", 0, NULL, err) < 0)
        return -1;
    if (store_jobs_insert(st, ins, n_ins, err) < 0 ||
        (n_upd && update_rows(st, upd, n_upd, err) < 0) ||
        store_resv_upsert(st, rv, n_rv, err) < 0 ||
        store_run(st, "jobs: write", "COMMIT", 0, NULL, err) < 0) {
        store_rollback(st);
        return -1;
    }
    return 0;
}

int64_t store_jobs_max_id(struct store *st, struct loom_error *err)
{
    PGresult *r;
    int64_t id;

    r = store_exec(st, "jobs: max id",
                   "SELECT coalesce(max(id), 0) FROM jobs", 0, NULL, err);
    if (!r)
        return -1;
    id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return id;
}
