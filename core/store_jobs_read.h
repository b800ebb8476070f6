/* store_jobs_read.h - single jobs and pages of ended jobs read back from
 * PostgreSQL, for the jobs that have left loomd's memory. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_JOBS_READ_H
#define LOOM_CORE_STORE_JOBS_READ_H

#include <stdint.h>

#include "core/error.h"
#include "core/store.h"

/* Job id's document (the JSON text as written) into *doc, a new string
 * the caller frees: 1, 0 when there is no such job, -1 with err. */
int store_job_doc(struct store *st, int64_t id, char **doc,
                  struct loom_error *err);

/* The job submitted by owner (or the gateway) with Idempotency-Key key:
 * 1 with its id, the hash of its request (a new string, "" when none) and
 * its document (a new string), 0 when there is none, -1 with err. */
int store_job_by_idem(struct store *st, const char *owner, const char *key,
                      int64_t *id, char **hash, char **doc,
                      struct loom_error *err);

/* What a page of ended jobs is narrowed to; a NULL member narrows nothing.
 * states: the ended states asked for, as a PostgreSQL array text
 * ("{completed,failed}"); seen_by: only the jobs this identity owns or
 * submitted. */
struct store_ended_filter {
    const char *states;
    const char *owner, *account, *name, *cluster;
    const char *seen_by;
    /* JSON arrays as text, owned by the caller: ids (numbers), users (an
     * owner or an account among them), queues (the request's queue) */
    char *ids, *users, *queues;
};

/* The ended jobs with ids after `after` and up to upto, in id order, at
 * most n, that f lets through: cb(arg, id, doc) for each (doc borrowed for
 * the call; cb returns 0 to go on). Returns the number of rows, or -1 with
 * err. */
int store_jobs_ended(struct store *st, int64_t after, long n, int64_t upto,
                     const struct store_ended_filter *f,
                     int (*cb)(void *arg, int64_t id, const char *doc),
                     void *arg, struct loom_error *err);

#endif
