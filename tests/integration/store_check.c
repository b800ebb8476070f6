/* store_check.c - drives core/store*.c against a real PostgreSQL, in TAP. */
/* SPDX-License-Identifier: MIT */
/*
 * Run as `store_check -`: reads commands on stdin, one per line, and
 * answers each with TAP test points followed by the line "# ready", so that
 * a script can stop and start PostgreSQL between commands while this
 * process keeps its connection (see 1001-store.t). The database comes
 * from LOOM_PG_CONNINFO.
 *
 *   open-bad      store_open fails cleanly on bad and unreachable servers
 *   migrate       concurrent and repeated migrations apply 0001 once
 *   insert        1,000 jobs in one call; values come back intact
 *   conflict      idempotency keys: duplicates refused, nothing inserted
 *   update        state and doc of 500 jobs; missing ids change nothing
 *   load          every job once, in id order; a callback may stop it
 *   event         rows appended to the event log
 *   expect-down   the database is gone: LOOM_EUNAVAIL, and fast
 *   expect-up     it is back: the same store works again within ~1 s
 *   first-call-ok it was restarted while the store was idle: the first
 *                 call after that already succeeds
 *   bench N       insert N jobs with ~600-byte docs; time the load
 *   done          print the plan and exit
 */
#include <inttypes.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/store.h"
#include "core/store_jobs.h"
#include "tests/lib/tap.h"

static const char *conninfo;
static struct store *st;
static PGconn *check; /* a second connection, to look behind the store */

/* A cleared error for one call, so a message printed after it is its own. */
#define E (loom_error_clear(&err), &err)

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One value from the check connection, or "" (and a diagnostic). */
static const char *q1(const char *sql, const char *param)
{
    static char out[256];
    const char *values[1] = {param};
    PGresult *r;

    out[0] = '\0';
    if (PQstatus(check) != CONNECTION_OK)
        PQreset(check);
    r = PQexecParams(check, sql, param ? 1 : 0, NULL, values, NULL, NULL, 0);
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
        snprintf(out, sizeof(out), "%s", PQgetvalue(r, 0, 0));
    else if (PQresultStatus(r) != PGRES_TUPLES_OK &&
             PQresultStatus(r) != PGRES_COMMAND_OK)
        printf("# check query failed: %s", PQresultErrorMessage(r));
    PQclear(r);
    return out;
}

static long q1_long(const char *sql, const char *param)
{
    return strtol(q1(sql, param), NULL, 10);
}

/* The doc of job id: JSON with characters that need care in an array
 * literal (quotes, backslashes, braces, commas, NULL, non-ASCII). */
static char *make_doc(int64_t id, const char *state, int version)
{
    char *s = NULL;
    json_t *j = json_pack(
        "{s:I, s:s, s:s, s:i, s:s, s:[s,s], s:n}", "id", (json_int_t)id,
        "state", state, "name", "job \"quoted\" \\ {a,b} NULL", "version",
        version, "note", "caf\xc3\xa9 \xe2\x9c\x93\ttab", "command",
        "/bin/echo", "NULL", "planned_start");

    if (j)
        s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static int same_json(const char *a, const char *b)
{
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    int same = ja && jb && json_equal(ja, jb);

    json_decref(ja);
    json_decref(jb);
    return same;
}

/* ---- commands ---------------------------------------------------------- */

static void cmd_open_bad(void)
{
    struct loom_error err = {0};
    struct store *s;

    s = store_open("host=/nonexistent/loom dbname=loom connect_timeout=2",
                   &err);
    ok(s == NULL, "store_open on a missing server fails");
    is_int(err.kind, LOOM_EUNAVAIL, "... with LOOM_EUNAVAIL");
    ok(strncmp(err.message, "database unavailable: ", 22) == 0 &&
           !strchr(err.message, '\n'),
       "... and one line: %s", err.message);
    store_close(s);
    s = store_open("dbname='unterminated", &err);
    ok(s == NULL && err.kind == LOOM_EINVAL,
       "a malformed connection string is LOOM_EINVAL: %s", err.message);
    store_close(s);
}

static void cmd_migrate(void)
{
    struct loom_error err = {0};
    pid_t kids[3];
    int status, all_ok = 1;

    /* Three processes migrate an empty database at once. */
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            struct store *s = store_open(conninfo, &err);
            int rc = s ? store_migrate(s, E) : -1;
            if (rc < 0)
                fprintf(stderr, "child %d: %s\n", i, err.message);
            store_close(s);
            _exit(rc < 0 ? 1 : 0);
        }
    }
    for (int i = 0; i < 3; i++) {
        if (kids[i] < 0 || waitpid(kids[i], &status, 0) < 0 ||
            !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            all_ok = 0;
    }
    ok(all_ok, "three concurrent store_migrate calls all succeed");
    is_int(q1_long("SELECT count(*) FROM schema_version", NULL),
           (long)store_n_migrations, "each migration recorded once");
    is_int(store_migrate(st, E), 0, "store_migrate again: %s",
           err.message);
    is_int(store_migrate(st, E), 0, "and again");
    is_int(q1_long("SELECT count(*) FROM schema_version", NULL),
           (long)store_n_migrations, "still recorded once");
    is_str(q1("SELECT name FROM schema_version WHERE version = 1", NULL),
           "0001_init", "schema_version names 0001_init");
    is_int(q1_long("SELECT count(*) FROM pg_indexes WHERE tablename = "
                   "'jobs' AND indexname IN ('jobs_idem_key', "
                   "'jobs_active')", NULL),
           2, "the jobs indexes exist");
    ok(store_ok(st), "store_ok");
}

static void cmd_insert(void)
{
    enum { N = 1000 };
    struct store_job_row rows[N];
    char *docs[N], owners[N][16], keys[N][16];
    struct loom_error err = {0};
    int all = 1;
    double t;

    for (int i = 0; i < N; i++) {
        docs[i] = make_doc(i + 1, "pending", 1);
        all &= docs[i] != NULL;
        snprintf(owners[i], sizeof(owners[i]), "user%d", i % 7);
        snprintf(keys[i], sizeof(keys[i]), "key-%d", i);
        rows[i] = (struct store_job_row){
            .id = i + 1, .state = "pending", .owner = owners[i],
            .idem_owner = i % 2 ? owners[i] : NULL,
            .idem_key = i % 2 ? keys[i] : NULL,
            .idem_hash = i % 2 ? "h\"1,}" : NULL, .doc = docs[i]};
    }
    ok(all, "made 1000 docs");
    t = now_s();
    is_int(store_jobs_insert(st, rows, N, E), 0,
           "store_jobs_insert of 1000 rows in one call: %s", err.message);
    printf("# inserted 1000 rows in %.1f ms\n", (now_s() - t) * 1e3);
    is_int(q1_long("SELECT count(*) FROM jobs", NULL), N, "1000 rows");
    is_str(q1("SELECT idem_hash FROM jobs WHERE id = $1", "8"), "h\"1,}",
           "an escaped text element comes back intact");
    is_str(q1("SELECT coalesce(idem_key, 'null') FROM jobs WHERE id = $1",
              "7"),
           "null", "a NULL element stays NULL");
    ok(same_json(q1("SELECT doc::text FROM jobs WHERE id = $1", "500"),
                 docs[499]),
       "the doc of job 500 is the JSON given");
    is_int(store_jobs_insert(st, rows, 0, E), 0, "inserting 0 rows");
    for (int i = 0; i < N; i++)
        free(docs[i]);
}

static void cmd_conflict(void)
{
    struct loom_error err = {0};
    char *doc = make_doc(1001, "pending", 1);
    struct store_job_row rows[3] = {
        {.id = 1001, .state = "pending", .owner = "user1",
         .idem_owner = "user1", .idem_key = "fresh-1", .idem_hash = "h",
         .doc = doc},
        {.id = 1002, .state = "pending", .owner = "user2",
         .idem_owner = "user2", .idem_key = "key-1", .idem_hash = "h",
         .doc = doc},
        {.id = 1003, .state = "pending", .owner = "user3", .doc = doc},
    };
    long before = q1_long("SELECT count(*) FROM jobs", NULL);

    /* key-1 belongs to user1 (job 2); for user2 it is a new key. */
    rows[1].idem_owner = "user1";
    is_int(store_jobs_insert(st, rows, 3, E), -1,
           "a batch with a used idempotency key fails");
    is_int(err.kind, LOOM_ECONFLICT, "... with LOOM_ECONFLICT: %s",
           err.message);
    is_int(q1_long("SELECT count(*) FROM jobs", NULL), before,
           "... and inserts none of its rows");
    rows[1].idem_key = "fresh-1";
    is_int(store_jobs_insert(st, rows, 3, E), -1,
           "two rows of one batch with the same key fail");
    is_int(err.kind, LOOM_ECONFLICT, "... with LOOM_ECONFLICT");
    rows[1].idem_owner = "user2";
    is_int(store_jobs_insert(st, rows, 3, E), 0,
           "the same key for another owner is fine: %s", err.message);
    is_int(q1_long("SELECT count(*) FROM jobs", NULL), before + 3,
           "3 more rows");
    rows[0].idem_key = "fresh-2";
    rows[1].idem_key = "fresh-3";
    is_int(store_jobs_insert(st, rows, 1, E), -1, "a duplicate id fails");
    is_int(err.kind, LOOM_EINTERNAL, "... as LOOM_EINTERNAL, not a conflict");
    rows[0].state = NULL;
    is_int(store_jobs_insert(st, rows, 1, E), -1, "a row without state");
    is_int(err.kind, LOOM_EINVAL, "... is LOOM_EINVAL");
    ok(store_ok(st), "the connection is fine after the errors");
    free(doc);
}

static void cmd_update(void)
{
    enum { N = 501 };
    struct store_job_row rows[N];
    char *docs[N];
    struct loom_error err = {0};

    for (int i = 0; i < 500; i++) {
        docs[i] = make_doc(i + 1, "running", 2);
        rows[i] = (struct store_job_row){.id = i + 1, .state = "running",
                                         .owner = "alice", .doc = docs[i]};
    }
    docs[500] = make_doc(10, "held", 3); /* job 10 again */
    rows[500] = (struct store_job_row){.id = 10, .state = "held",
                                       .owner = "alice", .doc = docs[500]};
    is_int(store_jobs_update(st, rows, N, E), -1,
           "an update naming job 10 twice is refused");
    is_int(err.kind, LOOM_EINVAL, "... with LOOM_EINVAL: %s", err.message);
    is_int(store_jobs_update(st, rows, 500, E), 0,
           "store_jobs_update of 500 jobs: %s", err.message);
    is_int(store_jobs_update(st, rows + 500, 1, E), 0,
           "job 10 updated again: %s", err.message);
    is_int(q1_long("SELECT count(*) FROM jobs WHERE state = 'running'",
                   NULL),
           499, "499 running");
    is_str(q1("SELECT state FROM jobs WHERE id = $1", "10"), "held",
           "the later row for job 10 won");
    ok(same_json(q1("SELECT doc::text FROM jobs WHERE id = $1", "10"),
                 docs[500]),
       "... with its doc");
    rows[1].id = 999999;
    rows[1].owner = "alice";
    rows[0].state = "failed";
    is_int(store_jobs_update(st, rows, 2, E), 0,
           "an update naming a job whose row is missing: %s", err.message);
    is_str(q1("SELECT state FROM jobs WHERE id = $1", "999999"), "running",
           "... writes that job whole");
    is_str(q1("SELECT state FROM jobs WHERE id = $1", "1"), "failed",
           "... and updates the other");
    is_str(q1("DELETE FROM jobs WHERE id = $1 RETURNING id::text", "999999"),
           "999999", "(the written job is removed again)");
    for (int i = 0; i < N; i++)
        free(docs[i]);
}

struct load_acc {
    long n, stop_at;
    int64_t last;
    int ordered, doc10_ok;
    char state10[16];
};

static int load_cb(void *arg, const struct store_job_row *row)
{
    struct load_acc *a = arg;

    a->n++;
    if (row->id <= a->last)
        a->ordered = 0;
    a->last = row->id;
    if (row->id == 10) {
        snprintf(a->state10, sizeof(a->state10), "%s", row->state);
        json_t *j = json_loads(row->doc, 0, NULL);
        a->doc10_ok = j != NULL;
        json_decref(j);
    }
    return a->stop_at && a->n >= a->stop_at;
}

static void cmd_load(void)
{
    struct load_acc a = {.ordered = 1};
    struct loom_error err = {0};
    long total = q1_long("SELECT count(*) FROM jobs", NULL);

    is_int(store_jobs_load(st, NULL, load_cb, &a, E), 0,
           "store_jobs_load: %s", err.message);
    is_int(a.n, total, "every job once (%ld)", total);
    ok(a.ordered, "in id order");
    is_str(a.state10, "held", "job 10 is held");
    ok(a.doc10_ok, "its doc is JSON");
    a = (struct load_acc){.ordered = 1, .stop_at = 10};
    is_int(store_jobs_load(st, NULL, load_cb, &a, E), -1,
           "a callback stops the load");
    is_int(a.n, 10, "... after 10 rows");
    is_int(store_jobs_max_id(st, E), 1003,
           "store_jobs_max_id works after it (no transaction left)");
}

static void cmd_event(void)
{
    struct loom_error err = {0};

    is_int(store_event(st, "info", "job.submit", "job/1", "submitted", E),
           0, "store_event: %s", err.message);
    is_int(store_event(st, NULL, "daemon.start", NULL, "loomd started",
                       &err),
           0, "store_event without level and subject");
    is_int(store_event(st, "info", NULL, NULL, "x", E), -1,
           "an event needs a kind");
    is_int(q1_long("SELECT count(*) FROM events", NULL), 2, "two events");
    is_str(q1("SELECT subject || ' ' || message FROM events "
              "WHERE kind = $1", "job.submit"),
           "job/1 submitted", "the event's fields");
}

static void cmd_expect_down(void)
{
    struct loom_error err = {0};
    double t;

    is_int(store_jobs_max_id(st, E), -1,
           "a call with the database stopped fails");
    is_int(err.kind, LOOM_EUNAVAIL, "... with LOOM_EUNAVAIL");
    ok(strncmp(err.message, "database unavailable: ", 22) == 0 &&
           !strchr(err.message, '\n'),
       "... saying so in one line: %s", err.message);
    ok(!store_ok(st), "store_ok is 0");
    t = now_s();
    is_int(store_event(st, "info", "x", NULL, "y", E), -1,
           "the next call fails too");
    ok(now_s() - t < 0.1, "... at once (%.1f ms): no reconnect within 1 s",
       (now_s() - t) * 1e3);
    is_int(err.kind, LOOM_EUNAVAIL, "... with LOOM_EUNAVAIL");
}

static void cmd_expect_up(void)
{
    struct loom_error err = {0};
    struct load_acc a = {.ordered = 1};
    double t = now_s();
    int64_t id = -1;
    int tries = 0;

    while (now_s() - t < 10 && (id = store_jobs_max_id(st, E)) < 0) {
        tries++;
        usleep(100 * 1000);
    }
    is_int(id, 1003, "the same store works again once the database is back");
    ok(now_s() - t < 1.5, "... within %.2f s (%d failed tries)",
       now_s() - t, tries);
    ok(store_ok(st), "store_ok is 1");
    is_int(store_event(st, "info", "store.back", NULL, "back", E), 0,
           "writes work: %s", err.message);
    is_int(store_jobs_load(st, NULL, load_cb, &a, E), 0, "a load works");
    is_int(a.n, 1003, "... and sees every job (nothing lost)");
}

static void cmd_first_call_ok(void)
{
    struct loom_error err = {0};

    is_int(store_jobs_max_id(st, E), 1003,
           "after a restart while idle, the first call succeeds: %s",
           err.message);
}

static int count_cb(void *arg, const struct store_job_row *row)
{
    (*(long *)arg)++;
    return 0;
}

static int parse_cb(void *arg, const struct store_job_row *row)
{
    json_t *j = json_loads(row->doc, 0, NULL);

    if (!j)
        return -1;
    json_decref(j);
    (*(long *)arg)++;
    return 0;
}

/* A doc shaped like an API job, about 600 bytes. */
static char *bench_doc(int64_t id)
{
    char *s = NULL;
    json_t *j = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:{s:i, s:i, s:i, s:i, s:i, s:[], s:s, "
        "s:n}, s:[s,s,s], s:n, s:{s:s}, s:i, s:s, s:s, s:[s], s:s, s:s, "
        "s:n, s:n, s:s, s:n, s:s, s:I}",
        "id", "", "name", "bench-array-task-with-a-long-name", "owner",
        "alice", "source", "local", "state", "pending", "request", "nodes",
        1, "cpus_per_node", 4, "memory_mb", 4096, "gpus", 0, "walltime_s",
        3600, "features", "cluster", "sim1000", "queue", "command",
        "/bin/sh", "-c", "exec /opt/app/bin/simulate --input /data/in.h5",
        "script", "env", "LOOM_SIM_RUNTIME_S", "30", "priority", 0, "cluster",
        "sim1000", "native_id", "sim-000000000001", "nodes", "sim1000/n0001",
        "submit_time", "2026-11-21T20:00:00Z", "start_time",
        "2026-11-21T20:00:01Z", "end_time", "exit_code", "reason",
        "waiting for resources on every cluster that fits", "planned_start",
        "planned_cluster", "sim1000", "seq", (json_int_t)id);
    char idbuf[24];

    if (!j)
        return NULL;
    snprintf(idbuf, sizeof(idbuf), "%" PRId64, id);
    json_object_set_new(j, "id", json_string(idbuf));
    s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static void cmd_bench(long n)
{
    enum { BATCH = 1000 };
    struct store_job_row rows[BATCH];
    char *docs[BATCH];
    struct loom_error err = {0};
    int64_t base = store_jobs_max_id(st, E);
    long count = 0, done = 0;
    size_t doc_bytes = 0;
    double t;
    int rc = 0;

    t = now_s();
    while (rc == 0 && done < n) {
        int k = n - done < BATCH ? (int)(n - done) : BATCH;
        for (int i = 0; i < k; i++) {
            docs[i] = bench_doc(base + done + i + 1);
            doc_bytes += strlen(docs[i]);
            rows[i] = (struct store_job_row){
                .id = base + done + i + 1, .state = "pending",
                .owner = "alice", .doc = docs[i]};
        }
        rc = store_jobs_insert(st, rows, (size_t)k, E);
        for (int i = 0; i < k; i++)
            free(docs[i]);
        done += k;
    }
    is_int(rc, 0, "bench: inserted %ld jobs (%zu-byte docs) in %.2f s: %s",
           done, done ? doc_bytes / (size_t)done : 0, now_s() - t,
           err.message);
    q1("VACUUM ANALYZE jobs", NULL);
    t = now_s();
    is_int(store_jobs_load(st, NULL, count_cb, &count, E), 0, "bench: load");
    printf("# bench: loaded %ld jobs in %.3f s (rows only)\n", count,
           now_s() - t);
    count = 0;
    t = now_s();
    is_int(store_jobs_load(st, NULL, parse_cb, &count, E), 0,
           "bench: load and parse");
    printf("# bench: loaded %ld jobs in %.3f s (each doc parsed by "
           "jansson)\n", count, now_s() - t);
}

int main(int argc, char **argv)
{
    struct loom_error err = {0};
    char line[256];

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc != 2 || strcmp(argv[1], "-") != 0) {
        /* Not a test on its own: 1001-store.t drives it. */
        printf("1..0 # SKIP run as 'store_check -' by 1001-store.t\n");
        return 0;
    }
    conninfo = getenv("LOOM_PG_CONNINFO");
    if (!conninfo) {
        printf("Bail out! LOOM_PG_CONNINFO is not set\n");
        return 1;
    }
    check = PQconnectdb(conninfo);
    st = store_open(conninfo, &err);
    if (PQstatus(check) != CONNECTION_OK || !st) {
        printf("Bail out! cannot connect: %s\n", err.message);
        return 1;
    }
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "open-bad") == 0)
            cmd_open_bad();
        else if (strcmp(line, "migrate") == 0)
            cmd_migrate();
        else if (strcmp(line, "insert") == 0)
            cmd_insert();
        else if (strcmp(line, "conflict") == 0)
            cmd_conflict();
        else if (strcmp(line, "update") == 0)
            cmd_update();
        else if (strcmp(line, "load") == 0)
            cmd_load();
        else if (strcmp(line, "event") == 0)
            cmd_event();
        else if (strcmp(line, "expect-down") == 0)
            cmd_expect_down();
        else if (strcmp(line, "expect-up") == 0)
            cmd_expect_up();
        else if (strcmp(line, "first-call-ok") == 0)
            cmd_first_call_ok();
        else if (strncmp(line, "bench ", 6) == 0)
            cmd_bench(strtol(line + 6, NULL, 10));
        else if (strcmp(line, "done") == 0)
            break;
        else
            ok(0, "unknown command '%s'", line);
        printf("# ready\n");
    }
    store_close(st);
    PQfinish(check);
    return done_testing();
}
