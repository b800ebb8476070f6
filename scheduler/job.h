/* job.h - a fabric job: the request, its life, its JSON. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_JOB_H
#define LOOM_SCHEDULER_JOB_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

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

struct job {
    int64_t id;
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
    char *output, *error; /* its output file names as asked (patterns,
                             relative to workdir), or NULL: the default */
    char *directives; /* what the script's directives did: a JSON array
                         (core/directives.h), or NULL */
    int priority;
    char *cluster;
    char *native_id;
    struct strv nodes;
    time_t submit_time, start_time, end_time;
    int has_exit_code;
    int exit_code;
    char *reason;
    char *stdout_path, *stderr_path;
    int requeues; /* times the job went back to the queue because its
                     cluster no longer knew it */
    int held_for_loom; /* a native job its cluster holds for Loom to start */
    /* Idempotency: key given by the submitter, hash of the request body. */
    char *idem_key;
    char idem_hash[65];
    /* Scheduler-thread bookkeeping, not part of the record. */
    int dirty;
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
    struct job_plan plan;
};

const char *job_state_name(enum job_state s);
int job_state_parse(const char *name, enum job_state *out); /* 0 or -1 */
int job_state_final(enum job_state s);
int job_state_active(enum job_state s); /* starting, running, suspended */
/* Does the job hold its nodes: active, or held inside its cluster? */
int job_holds_nodes(const struct job *j);

/* A new pending job from a POST /v1/jobs body (borrowed), submitted by
 * owner to run as account. Unknown fields, wrong types and out-of-range
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
