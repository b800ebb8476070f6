/* sim_table.h - the sim adaptor's jobs: by loom id, by end time, by change. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SIM_TABLE_H
#define LOOM_ADAPTORS_SIM_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "adaptors/adaptor.h"

enum sim_state {
    SIM_RUNNING,
    SIM_SUSPENDED,
    SIM_COMPLETED,
    SIM_FAILED,
    SIM_CANCELLED,
};

#define SIM_NOT_QUEUED ((size_t)-1)

/*
 * One simulated job. Times are real wall-clock seconds (CLOCK_REALTIME);
 * the clock speed-up is already applied to `end` and `remaining`. The
 * fields from heap_pos on belong to the table.
 */
struct sim_job {
    int64_t loom_id;
    char *name, *owner;   /* owned, or NULL */
    uint32_t *nodes;      /* node indices, owned */
    size_t n_nodes;
    int cpus, gpus;       /* per node */
    long memory_mb;       /* per node */
    enum sim_state state;
    int exit_code;        /* what it ends with when it ends by itself */
    int killed;           /* it ends at its walltime */
    double start;         /* on the monotonic clock, as end */
    double end;           /* projected while running, actual once over */
    double start_wall;    /* the wall-clock times reported: start, and */
    double end_wall;      /* end once over */
    double remaining;     /* while suspended: real seconds left to run */
    double reported;      /* when jobs() reported it over */

    size_t heap_pos;      /* in the end-time heap, or SIM_NOT_QUEUED */
    int changed;          /* on the changed list */
    int retained;         /* on the retention list */
    struct sim_job *hash_next, *changed_next, *retained_next;
};

/*
 * Every job the simulated cluster knows, reachable three ways: a hash by
 * loom id; a min-heap of the running ones by end time, so that advancing
 * the clock costs O(k log n) for k ended jobs; and two lists. The changed
 * list holds the jobs not yet reported since they last changed, in the
 * order they changed; until the first report it holds every job. The
 * retention list holds the finished jobs already reported, in report
 * order, so the oldest can be dropped from its head.
 *
 * Invariant: heap_cap >= n_jobs, so queueing a known job never allocates.
 * Not thread-safe: one instance is used by one thread at a time.
 */
struct sim_table {
    struct sim_job **buckets; /* n_buckets: a power of two */
    size_t n_buckets, n_jobs;
    struct sim_job **heap;
    size_t heap_n, heap_cap;
    struct sim_job *changed_first, *changed_last;
    struct sim_job *retained_first, *retained_last;
};

static inline int sim_job_over(const struct sim_job *j)
{
    return j->state >= SIM_COMPLETED;
}

/* Fill an element of a job list with j as the cluster reports it: native
 * id "sim-<loom id>", state, nodes "n<i>", real wall-clock times (end_time
 * 0 until it is over), exit code once it completed or failed, reason once
 * it failed or was cancelled. 0, or -1 when out of memory (out may then
 * hold some strings; the list's fini frees them). */
int sim_job_fill(const struct sim_job *j, struct cl_job *out);
/* Free a job that is in no table (or being dropped from one); NULL-safe. */
void sim_job_free(struct sim_job *j);

/* An empty table in t; 0, or -1 when out of memory (t then needs only
 * sim_table_fini). */
int sim_table_init(struct sim_table *t);
/* Free every job and the table's arrays; safe on a zeroed table. */
void sim_table_fini(struct sim_table *t);

/* The job with this loom id, or NULL. Borrowed from the table. */
struct sim_job *sim_table_find(const struct sim_table *t, int64_t loom_id);
/* Make room for one more job, so that sim_table_insert cannot fail;
 * 0, or -1 when out of memory (the table is unchanged in meaning). */
int sim_table_reserve(struct sim_table *t);
/* Take ownership of j, whose loom id is not in the table yet. Call
 * sim_table_reserve first. */
void sim_table_insert(struct sim_table *t, struct sim_job *j);

/* Put a running job on the end-time heap, keyed by j->end. */
void sim_table_queue(struct sim_table *t, struct sim_job *j);
/* Take a job off the heap (it must be on it). */
void sim_table_unqueue(struct sim_table *t, struct sim_job *j);
/* Take off the heap and return the job ending soonest when it ends at
 * or before now; NULL when none does. */
struct sim_job *sim_table_due(struct sim_table *t, double now);

/* Note that j changed; it goes to the end of the changed list once. */
void sim_table_mark(struct sim_table *t, struct sim_job *j);
/* The changed list was reported at `now`: empty it, and move the finished
 * jobs on it to the retention list. */
void sim_table_reported(struct sim_table *t, double now);
/* Drop and free the retained jobs reported at or before `before`. */
void sim_table_expire(struct sim_table *t, double before);

#endif
