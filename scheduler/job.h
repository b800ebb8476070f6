/* job.h - a fabric job: the request, its life, its JSON. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_JOB_H
#define LOOM_SCHEDULER_JOB_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "core/arrayspec.h"
#include "core/depend.h"
#include "core/error.h"
#include "core/strv.h"

enum job_state {
    JOB_PENDING,
    JOB_HELD,
    JOB_STARTING,
    JOB_RUNNING,
    JOB_SUSPENDED,
    JOB_COMPLETED,
    JOB_FAILED,
    JOB_CANCELLED,
};

struct job_request {
    int nodes;
    int cpus_per_node;
    long memory_mb;
    int gpus;
    long walltime_s;
    struct strv features;
    char *cluster; /* pinned cluster, or NULL */
    char *queue;   /* or NULL */
    int64_t reservation; /* runs inside this reservation, or 0 */
};

/* What the last scheduling cycle said of a waiting job (shown, not
 * stored: the next cycle says it again). */
struct job_plan {
    time_t planned_start;  /* 0: unknown */
    char *planned_cluster; /* or NULL */
    int position;          /* 1-based place in the queue, 0: none */
    int has_factors;
    double age, fairshare, size, priority, total;
    double shown_total; /* the total last rendered */
};

/* How an array counts a task that has a record of its own. */
enum task_class {
    TC_NONE,      /* not counted (not yet, or no longer in the table) */
    TC_WAITING,   /* pending or held */
    TC_ACTIVE,    /* starting, running, suspended */
    TC_COMPLETED,
    TC_FAILED,
    TC_CANCELLED,
    TC_N
};

/* An array's tasks (its record holds them). A task gets a record of its
 * own, a job of the table with a new id, when it starts or is held,
 * cancelled or changed by itself; until then the array stands for it.
 * Kept by the scheduler (scheduler/array.c). */
struct job_array {
    struct array_spec spec;
    enum job_state tasks_state; /* of the tasks without a record: pending,
                                   held, or cancelled (the whole array) */
    long next;        /* every task before this ordinal has a record */
    long *ooo;        /* the ordinals from next on that have one, sorted */
    size_t n_ooo, cap_ooo;
    int64_t *rec;     /* each ordinal's record, 0 for none (cap_rec of
                         them, grown as records are made) */
    size_t cap_rec;
    long n_split;     /* tasks with a record */
    long count[TC_N]; /* those by class */
    uint32_t limit_ix; /* its limit's entry in the account table + 1, or
                          0 (no %N) */
    int stale;        /* its view waits to be rendered again */
};

struct jview;

struct job {
    int64_t id; /* the record's: a task's own, not its array's */
    struct jview *view; /* its rendered view while in the scheduler's
                           table (a reference the scheduler owns), else
                           NULL */
    char *name;
    char *owner;   /* the identity that submitted it */
    char *account; /* the local account it runs as (NULL: not known, a
                      record from before accounts): while it waits, its
                      account on every cluster without one of its own;
                      once placed, its account there */
    struct strv cluster_accounts; /* "CLUSTER=ACCOUNT" where its identity
                                     has accounts that differ between
                                     clusters (cluster= lines of the
                                     accounts file), and "*=ACCOUNT" for
                                     every other cluster; empty otherwise */
    char *source; /* local|grid|maintenance|cluster */
    char *submitted_by; /* the identity that submitted it: the owner, or
                           the gateway that submitted for the owner */
    char *grid_issuer, *grid_subject; /* the grid identity that owns it
                                         (iss and sub), or NULL */
    char *vo;     /* its grid identity's VO (a group), or NULL */
    enum job_state state;
    struct job_request req;
    struct strv command; /* empty when script is used */
    char *script;
    struct strv env;     /* "NAME=value", sorted by name */
    char *workdir;       /* where it runs (absolute), or NULL: the
                            cluster's default (the account's home) */
    char *submit_dir;    /* where it was submitted from (absolute), or
                            NULL: not said */
    char *output, *error; /* its output file names as asked (patterns,
                             relative to workdir), or NULL: the default */
    char *comment;    /* free text the submitter keeps with the job (sbatch
                         --comment), or NULL */
    char *directives; /* what the script's directives did: a JSON array
                         (core/directives.h), or NULL */
    int priority;
    char *cluster;
    char *native_id;
    struct strv nodes;
    time_t submit_time, start_time, end_time;
    int has_exit_code;
    int exit_code;
    struct {          /* what it used, where its cluster measured it */
        int known;
        long long user_cpu_ms, system_cpu_ms, max_rss_kb;
    } usage;
    char *reason;
    char *stdout_path, *stderr_path;
    int requeues; /* times the job went back to the queue because its
                     cluster no longer knew it */
    int no_requeue; /* "requeue": false: a job its cluster loses fails,
                       it is not submitted again */
    int held_for_loom; /* a native job its cluster holds for Loom to start */
    struct job_array *array; /* an array: its tasks; NULL for other jobs */
    int64_t array_id;  /* a task: its array's id; 0 for other jobs */
    long array_task;   /* a task: its id in the array */
    struct dep_list deps; /* the jobs it waits for (empty: none) */
    /* Idempotency: key given by the submitter, hash of the request body. */
    char *idem_key;
    char *idem_hash; /* hex, when idem_key is set (else NULL): a pointer,
                        not 65 bytes in every job of the table */
    /* Scheduler-thread bookkeeping, not part of the record. */
    int dirty;
    /* The last turn (sched_turn.c) that names it (its change, its insert
     * or an answer about it), or TURN_QUEUED while an insert or an
     * answer that waits for a turn does: it leaves memory only once that
     * turn is back (sched_evict.c). */
    uint64_t turn;
    int cancel_requested;
    int own_reason; /* Loom cancelled it for a reason of its own (a forced
                       maintenance window): the reason stays when the
                       cluster reports the end in its own words */
    unsigned seen; /* the last complete cluster list that named it */
    uint32_t acct_ix; /* its account's entry in the scheduler's account
                         table + 1, or 0 (scheduler/sched_acct.c) */
    uint32_t vo_ix, gw_ix; /* the same for its VO and its gateway */
    uint8_t acct_class; /* what it is counted as there: 0 nothing,
                           1 waiting, 2 running */
    int staff;      /* submitted by an admin or operator (not stored) */
    int dep_wait;   /* its dependencies are not met yet (not stored: the
                       scheduler says so again after a restart) */
    int start_wait; /* its start failed for now: not planned until
                       START_RETRY_S passed (not stored) */
    uint8_t task_class; /* a task: how its array counts it (TC_*) */
    uint8_t dep_class;  /* what its dependents last saw of it (TC_*) */
    uint32_t arr_ix;    /* a task: its array's limit entry + 1, or 0 */
    struct job_plan *plan; /* what the last cycle said of it while it
                              waits, or NULL: nothing (most jobs: running,
                              ended, or beyond the planning depth) */
};

const char *job_state_name(enum job_state s);
int job_state_parse(const char *name, enum job_state *out); /* 0 or -1 */
int job_state_final(enum job_state s);
int job_state_active(enum job_state s); /* starting, running, suspended */
/* Does the job hold its nodes: active, or held inside its cluster? */
int job_holds_nodes(const struct job *j);

/* A new pending job (held, when the body says "hold": true) from a POST
 * /v1/jobs body (borrowed), submitted by owner to run as account; an
 * array when it has "array". Unknown fields, wrong types and out-of-range
 * values fail with a 400 naming the field. */
struct job *job_from_request(json_t *body, const char *owner,
                             const char *account, const char *source,
                             struct loom_error *err);
/* A job from its stored JSON document (as job_render made it). */
struct job *job_from_doc(json_t *doc, struct loom_error *err);
/* The job as the API shows it and the store keeps it: compact JSON text
 * (a new string), or NULL when out of memory. priv (may be NULL) gets the
 * span of the private fields (command, script, env) in it: the text
 * without bytes [priv[0], priv[0] + priv[1]) is the job without them. */
char *job_render(const struct job *j, size_t priv[2]);
/* SHA-256 (hex) of the canonical form of a request body, for
 * idempotency: the same request always hashes the same. */
void job_body_hash(json_t *body, char out[65]);
void job_destroy(struct job *j); /* NULL-safe */
struct jview;
/* The job's view (core/snapshot.h): its JSON as job_render makes it, and
 * what the job list matches. A new view (one reference), or NULL when out
 * of memory. Any thread; j is only read. */
struct jview *job_view_new(const struct job *j);
/* The view of a stored job (its document as the store keeps it), built
 * as job_view_new builds it: a new view, or NULL with err. */
struct jview *job_view_from_doc(const char *doc, struct loom_error *err);
/* Forget what the last cycle said of j (j->plan). */
void job_plan_drop(struct job *j);
/* Is j waiting for the scheduler: pending, its dependencies met, and (an
 * array) with tasks to start? */
int job_ready(const struct job *j);
/* How an array counts j (TC_*), by its state. */
enum task_class job_task_class(const struct job *j);
/* The id the API shows: "123", or a task's "123_7" (buf of 48 bytes). */
const char *job_id_text(const struct job *j, char buf[48]);
/* The request's fields (borrowed) checked into req, over the values req
 * has (a field the object lacks keeps its value): a 400 naming the field
 * ("request.nodes"), or 0. Used by a submit (over the defaults) and a
 * change of a waiting job. */
int job_request_in(json_t *r, struct job_request *req,
                   struct loom_error *err);
void job_request_fini(struct job_request *req);
/* A copy of src into dst (0, or -1 when out of memory). */
int job_request_copy(struct job_request *dst, const struct job_request *src);
void job_array_destroy(struct job_array *a); /* NULL-safe */
/* The error in err (from reading field's value) as one on field: "field
 * 'F': ...". Returns -1. */
int job_field_error(struct loom_error *err, const char *field);
/* The account of j on cluster (NULL: not placed): its cluster_accounts'
 * entry for it, else the one for every other ("*"), else its account.
 * Borrowed from j. */
const char *job_account_on(const struct job *j, const char *cluster);
/* The gateway j was submitted through (its submitted_by, when a gateway
 * submitted it: source grid), or NULL. */
const char *job_gateway(const struct job *j);
/* Replace a string field: *field = copy of value (NULL allowed). */
int job_set_str(char **field, const char *value);
/* A JSON array of at most max_n non-empty strings into s; 0, or -1 with a
 * 400 naming path[i]. */
int job_strings_in(json_t *arr, const char *path, size_t max_n,
                   struct strv *s, struct loom_error *err);

#endif
