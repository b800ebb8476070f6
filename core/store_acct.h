/* store_acct.h - the jobs' history read from PostgreSQL: the jobs that
 * ran or ended in a window of time, and their use summed. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_ACCT_H
#define LOOM_CORE_STORE_ACCT_H

#include <stdint.h>

#include "core/error.h"
#include "core/store.h"

/* Which jobs: those whose life meets [start, end) (start and end in the
 * form of time_format, "2026-11-26T10:00:00Z", which sorts as the times
 * do): they ended in it, or started before its end and had not ended by
 * its start. Never an array's own record (its tasks are the jobs that
 * ran). The other fields narrow it (NULL: any): the job's owner,
 * account (the one it ran as on its cluster), cluster and state; viewer
 * keeps only the jobs viewer owns or submitted. Rows come in the order
 * of their record id, those above after, at most limit of them. */
struct store_acct_filter {
    const char *start, *end;
    const char *owner, *account, *cluster, *state;
    const char *viewer;
    int64_t after, limit;
};

/* One job of the history; every string borrowed for the callback's
 * duration, NULL when the job has none. */
struct store_acct_row {
    int64_t record;      /* the jobs table's id: what paging goes by */
    const char *id;      /* the job's id as the API shows it ("12_3") */
    const char *name, *owner, *account, *cluster, *state, *reason;
    const char *submit_time, *start_time, *end_time; /* RFC 3339 */
    const char *exit_code;  /* its text */
    const char *nodes;      /* a JSON array of node names */
    long long cpus;         /* allocated: nodes x cpus per node */
    long long elapsed_s;    /* end (or, running, now) - start; 0 unstarted */
};

/* Call cb for each job f selects; cb returns 0 to go on, anything else
 * stops the list (which then returns -1 with err LOOM_EINTERNAL). 0, or
 * -1 with err (LOOM_EUNAVAIL when the database is down). */
int store_acct_list(struct store *st, const struct store_acct_filter *f,
                    int (*cb)(void *arg, const struct store_acct_row *r),
                    void *arg, struct loom_error *err);

/* The use of the jobs that ran in the window, each counted for the part
 * of its run inside the window: per cluster and account (owner NULL),
 * each such row followed by its owners' rows. f as for store_acct_list;
 * its state, after and limit are not used. */
struct store_usage_row {
    const char *cluster, *account, *owner; /* borrowed, as above */
    long long jobs;
    double cpu_seconds;
};
int store_acct_usage(struct store *st, const struct store_acct_filter *f,
                     int (*cb)(void *arg, const struct store_usage_row *r),
                     void *arg, struct loom_error *err);

#endif
