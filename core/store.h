/* store.h - the PostgreSQL store: one libpq connection, migrations, events. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_H
#define LOOM_CORE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* A struct store wraps one libpq connection. Each thread that uses the
 * database opens its own; a store is not thread-safe.
 *
 * Every statement is parameterised (PQexecParams, or PQexecPrepared for
 * the few run at every turn); no query text is ever built at run time. When
 * a call finds the connection broken it tries PQreset, at most once per
 * second per store, and otherwise fails fast with LOOM_EUNAVAIL "database
 * unavailable: <libpq's message>", so a daemon rides out a restart of
 * PostgreSQL without restarting itself. A call that fails leaves nothing
 * behind: its transaction is rolled back. */
struct store;

/* One numbered migration, embedded at build time from sql/NNNN_name.sql by
 * sql/embed.sh into the generated core/sql_migrations.c. */
struct store_migration {
    int version;      /* NNNN: 1, 2, 3, ... without gaps */
    const char *name; /* "0001_init" */
    const char *sql;  /* the file's text: one or more statements */
};
extern const struct store_migration store_migrations[];
extern const size_t store_n_migrations;

/* Connect to conninfo (a libpq connection string, e.g. "host=/srv/loom/pg
 * dbname=loom"). Returns a new store (close with store_close), or NULL with
 * err (LOOM_EUNAVAIL when the server cannot be reached, LOOM_EINTERNAL when
 * out of memory). At start-up the caller ends the daemon on failure. */
struct store *store_open(const char *conninfo, struct loom_error *err);

/* Another connection to st's database, opened as store_open opens one (with
 * the identity and epoch set now). Returns a new store (close with
 * store_close), or NULL with err as store_open. */
struct store *store_open_again(const struct store *st,
                               struct loom_error *err);

/* Close the connection and free the store. NULL-safe. */
void store_close(struct store *st);

/* Process-wide, for the connections opened after the call (and their
 * reconnections): application_name (at most 63 bytes; it wins over one in
 * the connection string), so that a standby can tell this loomd's
 * sessions (core/leader.h); and the epoch their writes are made under
 * (epoch > 0; given as the session setting loom.epoch, after the options
 * of the connection string). The write fence of the database (the trigger
 * loom_fence, sql/0005_leader.sql) refuses the writes of a session whose
 * epoch is not the current one: they fail with LOOM_EUNAVAIL "WHAT:
 * refused by the write fence: ...". Any thread; call before the stores
 * concerned are opened. */
void store_identity_set(const char *application_name);
void store_epoch_set(int64_t epoch);

/* Counts the sessions of st: it changes when a call reconnected, and with
 * the session went whatever belonged to it (advisory locks, settings). */
unsigned store_session(const struct store *st);

/* Bring the schema up to date: create schema_version(version, name,
 * applied_at) if missing, then apply each embedded migration above the
 * current version, each in one transaction with its schema_version row,
 * under a transaction-level advisory lock so that two daemons never migrate
 * at once. Logs each migration applied. Idempotent. Returns 0, or -1 with
 * err (also when the database is newer than this build). */
int store_migrate(struct store *st, struct loom_error *err);

/* 1 when the connection is up as far as libpq knows, else 0. Never blocks
 * and never reconnects. */
int store_ok(struct store *st);

/* Append one row to the event log. level and subject may be NULL; kind and
 * message are required. Returns 0 or -1 with err. */
int store_event(struct store *st, const char *level, const char *kind,
                const char *subject, const char *message,
                struct loom_error *err);

/* Append rows to the event log in one statement (all or none): rows is a
 * JSON array of objects {"time" (RFC 3339), "level", "kind", "subject",
 * "message", "detail" (any JSON, kept as the row's detail)}. 0 or -1 with
 * err. */
int store_events_append(struct store *st, const char *rows,
                        struct loom_error *err);

/* ---- For the store's own files (store_*.c) only. ---------------------- */

struct pg_conn;   /* PGconn of libpq-fe.h */
struct pg_result; /* PGresult of libpq-fe.h */

/* The connection, reset first if it is broken (at most once a second).
 * NULL with err LOOM_EUNAVAIL when the database cannot be reached. A
 * transaction left open by an earlier failed call is rolled back first. */
struct pg_conn *store_conn(struct store *st, struct loom_error *err);

/* Loads: cb gets each row's columns as text (valid during the call) and
 * returns 0 to go on. */
typedef int (*store_row_cb)(void *arg, int n, const char *const *cols);
/* Run one parameterised statement (text parameters, text results; values[i]
 * may be NULL for SQL NULL). Returns the result, which the caller frees
 * with PQclear, or NULL with err: LOOM_EUNAVAIL when the connection is lost
 * or the server is shutting down, LOOM_ECONFLICT on a unique violation,
 * LOOM_ETEMP when a lock_timeout or statement_timeout ended the statement,
 * LOOM_EUNAVAIL when the write fence refused it (store_epoch_set),
 * LOOM_EINTERNAL otherwise. what names the operation in messages. */
struct pg_result *store_exec(struct store *st, const char *what,
                             const char *sql, int n_params,
                             const char *const *values,
                             struct loom_error *err);

/* As store_exec for statements whose result is not needed. 0 or -1. */
int store_run(struct store *st, const char *what, const char *sql,
              int n_params, const char *const *values,
              struct loom_error *err);

/* An item that may have left loomd's memory, read back: sql takes its id
 * ($1) and gives its state and document. 1 with *state and *doc (new
 * strings), 0 when there is none, or -1 with err. */
int store_doc_read(struct store *st, const char *what, const char *sql,
                   int64_t id, char **state, char **doc,
                   struct loom_error *err);
/* The ended items read back: sql takes a PostgreSQL array of ids to leave
 * out ($1, "{1,2}"), the highest id to read ($2) and a JSON object whose
 * members each document must hold ($3, NULL: any), and gives id, doc in
 * id order. cb returns 0 to go on, -1 (out of memory) to stop. 0 or -1
 * with err. */
int store_docs_read(struct store *st, const char *what, const char *sql,
                    const char *but, int64_t upto, const char *match,
                    store_row_cb cb, void *arg, struct loom_error *err);
/* The condition on $3 of store_docs_read's sql. */
#define STORE_DOC_MATCH "($3::jsonb IS NULL OR doc::jsonb @> $3::jsonb)"
/* A pattern of the one form of time time_format writes into documents
 * (2026-11-26T10:00:00Z): such text compared COLLATE "C" sorts as the
 * times do. A time of another form (time_parse takes a few) matches not. */
#define STORE_TIME_FORM                                                   \
    "'^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"                 \
    "T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z$'"


/* A statement that PostgreSQL parses and plans once per connection rather
 * than at every call: a turn of the scheduler's loop runs the same one some
 * thousand times a second. name and sql are constants; name is unique in
 * the program. */
struct store_stmt {
    const char *name;
    const char *sql;
    int n_params;
};

/* As store_exec and store_run, for a prepared statement: prepared on the
 * connection at its first use, and again after a reconnect (a new session
 * has none). A store keeps at most 8 prepared (LOOM_EINTERNAL beyond). */
struct pg_result *store_exec_prepared(struct store *st, const char *what,
                                      const struct store_stmt *stmt,
                                      const char *const *values,
                                      struct loom_error *err);
int store_run_prepared(struct store *st, const char *what,
                       const struct store_stmt *stmt,
                       const char *const *values, struct loom_error *err);

/* ids as a PostgreSQL array literal ("{1,2}", "{}" for none) to pass
 * as a bigint[] parameter: a new string, or NULL out of memory. */
char *store_id_array(const int64_t *ids, size_t n);

/* Whether the last call on st failed with the connection lost after it
 * sent a statement that commits by itself (a COMMIT, or one outside a
 * transaction): what it wrote may be stored or not, and only a read
 * once the database is back can tell. */
int store_in_doubt(const struct store *st);

/* The constraint named by the last LOOM_ECONFLICT from store_exec (e.g.
 * "jobs_idem_key"), or "". Borrowed until the next call on st. */
const char *store_last_constraint(struct store *st);

/* Roll back the open transaction, if any; errors are ignored. */
void store_rollback(struct store *st);

#endif
