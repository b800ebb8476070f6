/* store_jobs.h - fabric jobs in PostgreSQL: group insert, update, load. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_JOBS_H
#define LOOM_CORE_STORE_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/store.h"
#include "core/store_resv.h"

/* One row of the jobs table. Every string is borrowed: from the caller for
 * insert and update, from the store for the duration of one callback for
 * load. idem_owner, idem_key and idem_hash may be NULL (no idempotency
 * key); state, owner and doc (the job as JSON text) may not, except for a
 * job that store_jobs_load reads light: its doc is NULL and the fields
 * after it hold what is read of it instead (each string NULL when the
 * document has none). Insert and update write start_time and end_time
 * too, which must be the doc's (NULL: it has none); the other fields after
 * doc they do not use. */
struct store_job_row {
    int64_t id;
    const char *state;
    const char *owner;
    const char *idem_owner;
    const char *idem_key;
    const char *idem_hash;
    const char *doc;
    const char *submitted_by;
    const char *start_time, *end_time; /* RFC 3339 UTC */
    int nodes, cpus_per_node; /* 1 when the document has none */
    const char *source, *cluster, *native_id;
};

/* Insert n rows in one statement and so one transaction: the group commit
 * of concurrent submits. All rows are inserted or none. Returns 0, or -1
 * with err: LOOM_ECONFLICT when an idempotency key (idem_owner, idem_key) is
 * already used, by a stored job or by another row of the batch (the caller
 * then retries the rows one by one to find which); LOOM_EUNAVAIL when the
 * database is down; LOOM_EINVAL for a row missing state, owner or doc;
 * LOOM_EINTERNAL otherwise (e.g. a duplicate id). n == 0 does nothing. */
int store_jobs_insert(struct store *st, const struct store_job_row *rows,
                      size_t n, struct loom_error *err);

/* Set state and doc (and updated_at) of n jobs in one transaction. Each id
 * may appear once (LOOM_EINVAL otherwise). A job whose row is missing is
 * written whole (owner and idem_* are then used): the caller's record is
 * the authority. Other errors as for insert. */
int store_jobs_update(struct store *st, const struct store_job_row *rows,
                      size_t n, struct loom_error *err);

/* Insert ins, update upd and write the reservations rv, all in one
 * transaction (one commit, one flush to disk): a turn of the scheduler's
 * loop. Errors as for insert and update; on any error nothing is written. */
int store_jobs_write(struct store *st, const struct store_job_row *ins,
                     size_t n_ins, const struct store_job_row *upd,
                     size_t n_upd, const struct store_resv_row *rv,
                     size_t n_rv, struct loom_error *err);

/* Call cb for every job, in id order, streamed through a cursor in batches
 * so that memory does not grow with the number of jobs. A job in a final
 * state that ended at or before light_upto (RFC 3339 UTC text, as
 * time_format writes it; NULL: none), and is no array or array task, is
 * read light: no document, only the fields after it in store_job_row.
 * row and its strings are valid only during the call. cb returns 0 to go
 * on; anything else stops the load, which then returns -1 with err
 * LOOM_EINTERNAL (cb keeps its own reason in arg). Returns 0 or -1 with
 * err; the read transaction is closed either way. */
int store_jobs_load(struct store *st, const char *light_upto,
                    int (*cb)(void *arg, const struct store_job_row *row),
                    void *arg, struct loom_error *err);

/* Settle the jobs whose write is in doubt (store_in_doubt after their
 * insert): the rows of drop go, if they are stored (their jobs are made
 * again under new ids), and cb is called with each row of take that is
 * stored, in id order (row valid during the call; only id, idem_key,
 * idem_hash and doc set). One statement, so all or nothing. Returns 0 or -1 with err; on
 * -1 they are still in doubt. */
int store_jobs_doubt(struct store *st, const int64_t *take, size_t n_take,
                     const int64_t *drop, size_t n_drop,
                     int (*cb)(void *arg, const struct store_job_row *row),
                     void *arg, struct loom_error *err);

/* The highest job id stored, 0 when there are none, or -1 with err. */
int64_t store_jobs_max_id(struct store *st, struct loom_error *err);

#endif
