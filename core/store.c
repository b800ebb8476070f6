/* store.c - the PostgreSQL connection: open, reconnect, run, migrate. */
/* SPDX-License-Identifier: MIT */
#include "core/store.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/log.h"

/* A key of our own for pg_advisory_xact_lock: "LOOM" and 1 (migrations). */
#define STORE_LOCK_SQL "SELECT pg_advisory_xact_lock(1280266061, 1)"
#define STORE_RESET_INTERVAL_MS 1000
#define STORE_PREPARED_MAX 8 /* statements a store keeps prepared */
#define STORE_FENCE_STATE "LF001" /* raised by loom_fence() (0005_leader) */

/* What the connections opened from now on say of themselves: who they
 * are (application_name) and the epoch their writes are made under. */
static struct {
    pthread_mutex_t lock;
    char app[64];
    int64_t epoch; /* 0: none */
} G = {PTHREAD_MUTEX_INITIALIZER, "", 0};

struct store {
    PGconn *conn;
    char *conninfo;          /* as opened: for store_open_again */
    long long last_reset_ms; /* monotonic time of the last PQreset, or 0 */
    int broken;              /* a call lost the connection: reset it */
    int down_logged;         /* the outage is in the log already */
    int in_tx;               /* a BEGIN of ours is open on this connection */
    int doubt;               /* the last call lost the connection after a
                                statement that commits by itself was sent */
    char last_msg[256];      /* why the connection was last found broken */
    char constraint[64];     /* constraint named by the last failure */
    /* Statements prepared on this connection's session; a reset opens a
     * new session, which has none (session counts the resets). */
    unsigned session;
    struct {
        const struct store_stmt *stmt;
        unsigned session;
    } prepared[STORE_PREPARED_MAX];
    size_t n_prepared;
};

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The first non-empty line of a libpq message, without its "ERROR:  "
 * style severity prefix, so that an error message stays one line. */
static void one_line(const char *msg, char *out, size_t size)
{
    static const char *const prefixes[] = {"ERROR:  ", "FATAL:  ",
                                           "PANIC:  ", "WARNING:  "};
    size_t n;

    if (!msg)
        msg = "";
    while (*msg == '\n' || *msg == ' ' || *msg == '\t')
        msg++;
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        n = strlen(prefixes[i]);
        if (strncmp(msg, prefixes[i], n) == 0) {
            msg += n;
            break;
        }
    }
    n = strcspn(msg, "\n");
    while (n > 0 && (msg[n - 1] == ' ' || msg[n - 1] == '\t' ||
                     msg[n - 1] == '\r'))
        n--;
    if (n == 0) {
        msg = "no message from libpq";
        n = strlen(msg);
    }
    if (n >= size)
        n = size - 1;
    memcpy(out, msg, n);
    out[n] = '\0';
}

static void notice_cb(void *arg, const char *message)
{
    char line[256];

    one_line(message, line, sizeof(line));
    log_debug("store: server notice: %s", line);
}

static int unavailable(struct store *st, struct loom_error *err)
{
    if (!st->down_logged) {
        log_warn("store: database unavailable: %s", st->last_msg);
        st->down_logged = 1;
    }
    return loom_error_set(err, LOOM_EUNAVAIL, "database unavailable: %s",
                          st->last_msg);
}

void store_identity_set(const char *application_name)
{
    pthread_mutex_lock(&G.lock);
    snprintf(G.app, sizeof(G.app), "%s", application_name);
    pthread_mutex_unlock(&G.lock);
}

void store_epoch_set(int64_t epoch)
{
    pthread_mutex_lock(&G.lock);
    G.epoch = epoch;
    pthread_mutex_unlock(&G.lock);
}

/* The options a connection starts with: those of conninfo (opts), and the
 * epoch when there is one. 0, or -1 when they do not fit. */
static int start_options(const PQconninfoOption *opts, int64_t epoch,
                         char *buf, size_t size)
{
    const char *given = "";
    int n;

    for (const PQconninfoOption *o = opts; o && o->keyword; o++)
        if (!strcmp(o->keyword, "options") && o->val)
            given = o->val;
    if (epoch > 0)
        n = snprintf(buf, size, "%s%s-c loom.epoch=%" PRId64, given,
                     *given ? " " : "", epoch);
    else
        n = snprintf(buf, size, "%s", given);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

struct store *store_open(const char *conninfo, struct loom_error *err)
{
    /* Defaults first: conninfo, expanded in place of dbname, overrides
     * them; who we are and the epoch come last, so that they win. */
    const char *keys[] = {"connect_timeout", "client_encoding",
                          "fallback_application_name", "dbname",
                          NULL, NULL, NULL};
    const char *values[] = {"5", "UTF8", "loomd", conninfo ? conninfo : "",
                            NULL, NULL, NULL};
    PQconninfoOption *opts;
    struct store *st;
    char *parse_err = NULL;
    char line[256], app[64], options[1024];
    int64_t epoch;
    size_t k = 4;

    opts = PQconninfoParse(conninfo ? conninfo : "", &parse_err);
    if (!opts) {
        one_line(parse_err ? parse_err : "out of memory", line,
                 sizeof(line));
        PQfreemem(parse_err);
        loom_error_set(err, LOOM_EINVAL,
                       "database: bad connection string: %s", line);
        return NULL;
    }
    pthread_mutex_lock(&G.lock);
    memcpy(app, G.app, sizeof(app));
    epoch = G.epoch;
    pthread_mutex_unlock(&G.lock);
    if (start_options(opts, epoch, options, sizeof(options)) < 0) {
        PQconninfoFree(opts);
        loom_error_set(err, LOOM_EINVAL, "database: the connection "
                       "string's options are too long");
        return NULL;
    }
    PQconninfoFree(opts);
    if (app[0]) {
        keys[k] = "application_name";
        values[k++] = app;
    }
    if (options[0]) {
        keys[k] = "options";
        values[k++] = options;
    }
    st = calloc(1, sizeof(*st));
    if (!st) {
        loom_error_set(err, LOOM_EINTERNAL, "database: out of memory");
        return NULL;
    }
    st->conninfo = strdup(conninfo ? conninfo : "");
    st->conn = st->conninfo ? PQconnectdbParams(keys, values, 1) : NULL;
    if (!st->conn) {
        if (st->conninfo)
            OPENSSL_cleanse(st->conninfo, strlen(st->conninfo));
        free(st->conninfo);
        free(st);
        loom_error_set(err, LOOM_EINTERNAL, "database: out of memory");
        return NULL;
    }
    PQsetNoticeProcessor(st->conn, notice_cb, NULL);
    if (PQstatus(st->conn) != CONNECTION_OK) {
        /* The caller reports this one; it is not an outage to log. */
        one_line(PQerrorMessage(st->conn), st->last_msg,
                 sizeof(st->last_msg));
        loom_error_set(err, LOOM_EUNAVAIL, "database unavailable: %s",
                       st->last_msg);
        store_close(st);
        return NULL;
    }
    return st;
}

void store_close(struct store *st)
{
    if (!st)
        return;
    PQfinish(st->conn);
    if (st->conninfo) /* it may hold a password */
        OPENSSL_cleanse(st->conninfo, strlen(st->conninfo));
    free(st->conninfo);
    free(st);
}

struct store *store_open_again(const struct store *st,
                               struct loom_error *err)
{
    return store_open(st->conninfo, err);
}

unsigned store_session(const struct store *st)
{
    return st->session;
}

int store_ok(struct store *st)
{
    return st && !st->broken && PQstatus(st->conn) == CONNECTION_OK;
}

/* An idle connection has nothing to say. Input waiting on one means the
 * server ended it (a restart sends FATAL then closes): it is broken, and
 * nothing was sent on it yet, so a reset loses nothing. */
static int idle_but_readable(PGconn *conn)
{
    struct pollfd pfd = {.fd = PQsocket(conn), .events = POLLIN};

    if (pfd.fd < 0 || PQtransactionStatus(conn) != PQTRANS_IDLE)
        return 0;
    if (poll(&pfd, 1, 0) <= 0)
        return 0;
    PQconsumeInput(conn);
    return 1;
}

struct pg_conn *store_conn(struct store *st, struct loom_error *err)
{
    long long now;

    if (PQstatus(st->conn) == CONNECTION_OK && !st->broken) {
        if (!idle_but_readable(st->conn))
            return st->conn;
        if (PQstatus(st->conn) == CONNECTION_OK)
            snprintf(st->last_msg, sizeof(st->last_msg),
                     "the server ended the connection");
        else
            one_line(PQerrorMessage(st->conn), st->last_msg,
                     sizeof(st->last_msg));
    }
    now = now_ms();
    if (st->last_reset_ms &&
        now - st->last_reset_ms < STORE_RESET_INTERVAL_MS) {
        unavailable(st, err);
        return NULL;
    }
    st->last_reset_ms = now;
    PQreset(st->conn);
    if (PQstatus(st->conn) != CONNECTION_OK) {
        one_line(PQerrorMessage(st->conn), st->last_msg,
                 sizeof(st->last_msg));
        unavailable(st, err);
        return NULL;
    }
    st->broken = 0;
    st->down_logged = 0;
    st->session++;
    log_info("store: reconnected to the database");
    return st->conn;
}

/* Errors that mean "the database is not there right now": connection
 * exceptions (class 08), the server shutting down or starting up, and
 * errors libpq made itself (no SQLSTATE): the connection broke under the
 * call, which libpq does not always show in PQstatus at once. */
static int unavailable_state(const char *sqlstate)
{
    if (!sqlstate)
        return 1;
    return strncmp(sqlstate, "08", 2) == 0 ||
           strcmp(sqlstate, "57P01") == 0 || /* admin_shutdown */
           strcmp(sqlstate, "57P02") == 0 || /* crash_shutdown */
           strcmp(sqlstate, "57P03") == 0;   /* cannot_connect_now */
}

/* The connection for a statement, or NULL with err. Inside a transaction
 * a lost connection must not be replaced: the statements so far are gone
 * with it, and a COMMIT on a new connection would report success for
 * nothing. */
static PGconn *conn_for(struct store *st, const char *what,
                        struct loom_error *err)
{
    st->constraint[0] = '\0';
    st->doubt = 0;
    if (st->in_tx && (PQstatus(st->conn) != CONNECTION_OK || st->broken ||
                      idle_but_readable(st->conn))) {
        st->in_tx = 0;
        st->broken = 1;
        loom_error_set(err, LOOM_EUNAVAIL, "%s: the database connection was "
                       "lost inside a transaction; nothing was committed",
                       what);
        return NULL;
    }
    return store_conn(st, err);
}

/* Sort out the result r of sql (NULL for a prepared statement) on conn:
 * returned when it succeeded, else freed and NULL with err. may_commit:
 * the statement commits if it runs (a COMMIT, or a statement outside a
 * transaction), so a connection lost under it leaves it in doubt. */
static PGresult *result_of(struct store *st, const char *what,
                           const char *sql, PGconn *conn, PGresult *r,
                           int may_commit, struct loom_error *err)
{
    const char *sqlstate, *name;
    char line[256];

    if (r && (PQresultStatus(r) == PGRES_COMMAND_OK ||
              PQresultStatus(r) == PGRES_TUPLES_OK)) {
        if (sql && !strncmp(sql, "BEGIN", 5))
            st->in_tx = 1;
        else if (sql && (!strcmp(sql, "COMMIT") || !strcmp(sql, "ROLLBACK")))
            st->in_tx = 0;
        return r;
    }
    if (sql && !strcmp(sql, "COMMIT"))
        st->in_tx = 0;
    one_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn), line,
             sizeof(line));
    sqlstate = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(conn) != CONNECTION_OK || unavailable_state(sqlstate)) {
        snprintf(st->last_msg, sizeof(st->last_msg), "%s", line);
        st->broken = 1;
        st->doubt = may_commit;
        PQclear(r);
        unavailable(st, err);
        return NULL;
    }
    if (sqlstate && strcmp(sqlstate, STORE_FENCE_STATE) == 0) {
        PQclear(r);
        loom_error_set(err, LOOM_EUNAVAIL, "%s: refused by the write "
                       "fence: %s", what, line);
        return NULL;
    }
    /* Errors that pass by themselves: a lock or statement timeout, and the
     * server short of a resource (class 53: disk full, out of memory). The
     * server is up and answers reads; a write is worth trying again. */
    if (sqlstate && (!strcmp(sqlstate, "55P03") ||   /* lock_timeout */
                     !strcmp(sqlstate, "57014") ||   /* statement_timeout */
                     !strncmp(sqlstate, "53", 2))) { /* insufficient_resources */
        PQclear(r);
        loom_error_set(err, LOOM_ETEMP, "%s: %s", what, line);
        return NULL;
    }
    if (sqlstate && strcmp(sqlstate, "23505") == 0) {
        name = PQresultErrorField(r, PG_DIAG_CONSTRAINT_NAME);
        snprintf(st->constraint, sizeof(st->constraint), "%s",
                 name ? name : "");
        PQclear(r);
        loom_error_set(err, LOOM_ECONFLICT, "%s: %s", what, line);
        return NULL;
    }
    PQclear(r);
    loom_error_set(err, LOOM_EINTERNAL, "%s: %s", what, line);
    return NULL;
}

struct pg_result *store_exec(struct store *st, const char *what,
                             const char *sql, int n_params,
                             const char *const *values,
                             struct loom_error *err)
{
    PGconn *conn = conn_for(st, what, err);
    int may_commit;

    if (!conn)
        return NULL;
    may_commit = !strcmp(sql, "COMMIT") ||
                 (!st->in_tx && strncmp(sql, "BEGIN", 5) != 0);
    return result_of(st, what, sql, conn,
                     PQexecParams(conn, sql, n_params, NULL, values, NULL,
                                  NULL, 0),
                     may_commit, err);
}

/* Prepare stmt on this session unless it is already. 0, or -1 with err. */
static int prepare(struct store *st, PGconn *conn, const char *what,
                   const struct store_stmt *stmt, struct loom_error *err)
{
    size_t i, free_slot = st->n_prepared;
    PGresult *r;

    for (i = 0; i < st->n_prepared; i++) {
        if (st->prepared[i].stmt != stmt)
            continue;
        if (st->prepared[i].session == st->session)
            return 0;
        free_slot = i; /* prepared on an earlier session: again */
    }
    if (free_slot == STORE_PREPARED_MAX)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: more than %d "
                              "prepared statements", what,
                              STORE_PREPARED_MAX);
    r = result_of(st, what, NULL, conn,
                  PQprepare(conn, stmt->name, stmt->sql, stmt->n_params,
                            NULL),
                  0, err);
    if (!r)
        return -1;
    PQclear(r);
    st->prepared[free_slot].stmt = stmt;
    st->prepared[free_slot].session = st->session;
    if (free_slot == st->n_prepared)
        st->n_prepared++;
    return 0;
}

struct pg_result *store_exec_prepared(struct store *st, const char *what,
                                      const struct store_stmt *stmt,
                                      const char *const *values,
                                      struct loom_error *err)
{
    PGconn *conn = conn_for(st, what, err);

    if (!conn || prepare(st, conn, what, stmt, err) < 0)
        return NULL;
    return result_of(st, what, NULL, conn,
                     PQexecPrepared(conn, stmt->name, stmt->n_params, values,
                                    NULL, NULL, 0),
                     !st->in_tx, err);
}

int store_run(struct store *st, const char *what, const char *sql,
              int n_params, const char *const *values,
              struct loom_error *err)
{
    PGresult *r = store_exec(st, what, sql, n_params, values, err);

    if (!r)
        return -1;
    PQclear(r);
    return 0;
}

int store_doc_read(struct store *st, const char *what, const char *sql,
                   int64_t id, char **state, char **doc,
                   struct loom_error *err)
{
    char ids[24];
    const char *v[1] = {ids};
    PGresult *r;
    int found;

    *state = *doc = NULL;
    snprintf(ids, sizeof(ids), "%" PRId64, id);
    if (!(r = store_exec(st, what, sql, 1, v, err)))
        return -1;
    found = PQntuples(r) > 0;
    if (found && (!(*state = strdup(PQgetvalue(r, 0, 0))) ||
                  !(*doc = strdup(PQgetvalue(r, 0, 1))))) {
        free(*state);
        *state = NULL;
        PQclear(r);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    PQclear(r);
    return found;
}

int store_docs_read(struct store *st, const char *what, const char *sql,
                    const char *but, int64_t upto, const char *match,
                    store_row_cb cb, void *arg, struct loom_error *err)
{
    char ups[24];
    const char *v[3] = {but, ups, match};
    PGresult *r;
    int rc = 0;

    snprintf(ups, sizeof(ups), "%" PRId64, upto);
    if (!(r = store_exec(st, what, sql, 3, v, err)))
        return -1;
    for (int i = 0; rc == 0 && i < PQntuples(r); i++) {
        const char *cols[2] = {PQgetvalue(r, i, 0), PQgetvalue(r, i, 1)};
        rc = cb(arg, 2, cols);
    }
    PQclear(r);
    return rc < 0 ? loom_error_set(err, LOOM_EINTERNAL, "out of memory") : 0;
}

int store_run_prepared(struct store *st, const char *what,
                       const struct store_stmt *stmt,
                       const char *const *values, struct loom_error *err)
{
    PGresult *r = store_exec_prepared(st, what, stmt, values, err);

    if (!r)
        return -1;
    PQclear(r);
    return 0;
}

char *store_id_array(const int64_t *ids, size_t n)
{
    size_t cap = 3 + n * 21, len = 1;
    char *s = malloc(cap);

    if (!s)
        return NULL;
    s[0] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(s + len, cap - len, "%s%" PRId64,
                                i ? "," : "", ids[i]);
    snprintf(s + len, cap - len, "}");
    return s;
}

int store_in_doubt(const struct store *st)
{
    return st->doubt;
}

const char *store_last_constraint(struct store *st)
{
    return st->constraint;
}

void store_rollback(struct store *st)
{
    st->in_tx = 0;
    if (PQstatus(st->conn) != CONNECTION_OK ||
        PQtransactionStatus(st->conn) == PQTRANS_IDLE)
        return;
    PQclear(PQexecParams(st->conn, "ROLLBACK", 0, NULL, NULL, NULL, NULL, 0));
}

int store_event(struct store *st, const char *level, const char *kind,
                const char *subject, const char *message,
                struct loom_error *err)
{
    const char *const values[] = {level, kind, subject, message};

    if (!kind || !message)
        return loom_error_set(err, LOOM_EINVAL,
                              "event: kind and message are required");
    return store_run(st, "event",
                     "INSERT INTO events (level, kind, subject, message) "
                     "VALUES ($1, $2, $3, $4)",
                     4, values, err);
}

int store_events_append(struct store *st, const char *rows,
                        struct loom_error *err)
{
    const char *const values[] = {rows};

    return store_run(st, "events",
                     "INSERT INTO events (time, level, kind, subject, "
                     "message, detail) "
                     "SELECT (e->>'time')::timestamptz, e->>'level', "
                     "e->>'kind', e->>'subject', e->>'message', e->'detail' "
                     "FROM json_array_elements($1::json) AS e",
                     1, values, err);
}

/* ---- Migrations ------------------------------------------------------- */

/* Run one embedded migration: its text holds several statements, which the
 * extended protocol (PQexecParams) cannot take. The text is a constant
 * compiled into the binary, never built at run time; it runs inside the
 * caller's transaction. */
static int run_script(struct store *st, const struct store_migration *m,
                      struct loom_error *err)
{
    PGresult *r;
    char line[256];
    int failed = 0;

    if (!PQsendQuery(st->conn, m->sql)) {
        one_line(PQerrorMessage(st->conn), line, sizeof(line));
        st->broken = 1;
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "database unavailable: %s", line);
    }
    while ((r = PQgetResult(st->conn))) {
        if (!failed && PQresultStatus(r) != PGRES_COMMAND_OK &&
            PQresultStatus(r) != PGRES_TUPLES_OK &&
            PQresultStatus(r) != PGRES_EMPTY_QUERY) {
            one_line(PQresultErrorMessage(r), line, sizeof(line));
            if (unavailable_state(
                    PQresultErrorField(r, PG_DIAG_SQLSTATE))) {
                st->broken = 1;
                loom_error_set(err, LOOM_EUNAVAIL,
                               "database unavailable: %s", line);
            } else {
                loom_error_set(err, LOOM_EINTERNAL, "migration %s: %s",
                               m->name, line);
            }
            failed = 1;
        }
        PQclear(r);
    }
    return failed ? -1 : 0;
}

/* The version the database is at, under the migration lock, inside an open
 * transaction. -1 with err on failure. */
static int locked_version(struct store *st, struct loom_error *err)
{
    PGresult *r;
    int v;

    if (store_run(st, "migrate: lock", STORE_LOCK_SQL, 0, NULL, err) < 0 ||
        store_run(st, "migrate: schema_version",
                  "CREATE TABLE IF NOT EXISTS schema_version ("
                  "version integer PRIMARY KEY, name text NOT NULL, "
                  "applied_at timestamptz NOT NULL DEFAULT now())",
                  0, NULL, err) < 0)
        return -1;
    r = store_exec(st, "migrate: version",
                   "SELECT coalesce(max(version), 0) FROM schema_version", 0,
                   NULL, err);
    if (!r)
        return -1;
    v = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return v;
}

/* Apply the next migration if one is due. 1 applied, 0 up to date, -1. */
static int migrate_step(struct store *st, struct loom_error *err)
{
    const struct store_migration *m;
    char version[16];
    const char *values[2];
    int cur, top = (int)store_n_migrations;

    if (store_run(st, "migrate: begin", "BEGIN", 0, NULL, err) < 0)
        return -1;
    cur = locked_version(st, err);
    if (cur < 0)
        goto error;
    if (cur > top) {
        loom_error_set(err, LOOM_EINTERNAL,
                       "database schema version %d is newer than this "
                       "build of loom knows (%d)", cur, top);
        goto error;
    }
    if (cur == top)
        return store_run(st, "migrate: commit", "COMMIT", 0, NULL, err);
    m = &store_migrations[cur];
    snprintf(version, sizeof(version), "%d", m->version);
    values[0] = version;
    values[1] = m->name;
    if (run_script(st, m, err) < 0 ||
        store_run(st, "migrate: record",
                  "INSERT INTO schema_version (version, name) "
                  "VALUES ($1, $2)", 2, values, err) < 0 ||
        store_run(st, "migrate: commit", "COMMIT", 0, NULL, err) < 0)
        goto error;
    log_info("store: migration applied version=%d name=%s", m->version,
             m->name);
    return 1;
error:
    store_rollback(st);
    return -1;
}

int store_migrate(struct store *st, struct loom_error *err)
{
    int rc;

    for (size_t i = 0; i < store_n_migrations; i++) {
        if (store_migrations[i].version != (int)i + 1)
            return loom_error_set(err, LOOM_EINTERNAL,
                                  "migration %s is out of order",
                                  store_migrations[i].name);
    }
    while ((rc = migrate_step(st, err)) == 1)
        ;
    return rc;
}
