/* domain.h - the values Loom's API knows by name (states, purposes), its
 * ids and its node ids: one list and one parser each, which loomd's checks
 * and loomctl's read. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_DOMAIN_H
#define LOOM_CORE_DOMAIN_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/strv.h"

/* A set of names, for checks and for messages that list them. */
struct domain {
    const char *what;          /* one of them: "job state" */
    const char *whats;         /* all of them: "job states" */
    const char *const *names;  /* NULL-terminated */
};

/* In the order of enum job_state (scheduler/job.h). */
#define DOMAIN_JOB_STATES_N 8
extern const struct domain domain_job_states;
/* What the clusters report of a node (GET /v1/nodes "state"); unknown is
 * the last. */
#define DOMAIN_NODE_STATES_N 10
extern const struct domain domain_node_states;
/* What PUT /v1/nodes/{cluster}/{name}/state sets: up, drain, down, and
 * pause and resume (docs/api.md). */
extern const struct domain domain_node_state_set;
/* In the order of enum resv_state (scheduler/resv.h). */
#define DOMAIN_RESV_STATES_N 4
extern const struct domain domain_resv_states;
extern const struct domain domain_resv_purposes; /* user, maintenance */
/* GET /v1/queues?view=: clusters (each cluster's queues, the default) or
 * fabric (every queue as a partition of one cluster) */
extern const struct domain domain_queue_views;
/* In the order of enum mstate (maintenance/mreq.h). */
#define DOMAIN_MAINT_STATES_N 8
extern const struct domain domain_maint_states;
/* What the goal "state" of a node may be: the actual states a node rests
 * in (up, down, drained); draining, maint and unknown pass. */
extern const struct domain domain_goal_states;

/* The index of name in d, or -1. */
int domain_find(const struct domain *d, const char *name);
/* "a, b and c" into buf (size bytes). Returns buf. */
const char *domain_list(const struct domain *d, char *buf, size_t size);
/* 0 when value is one of d; else -1 with a LOOM_EINVAL error on field
 * (may be "") that names the value and every allowed one:
 *     'bogus' is not a job state; the job states are pending, ... */
int domain_check(const struct domain *d, const char *value,
                 const char *field, struct loom_error *err);

/* A comma-separated list of names of d ("pending,held"): 0 with *bits
 * holding bit i for the i-th name of d (d has at most 32), or -1 with the
 * error of domain_check for the first that is none (an empty one too). */
int domain_list_parse(const struct domain *d, const char *list,
                      unsigned *bits, const char *field,
                      struct loom_error *err);

/* A Loom id (of a job, reservation or maintenance request): [1-9][0-9]*
 * within int64, nothing else ("013", "+13", "1 " are not ids). Returns 0
 * with *out, or -1. */
int domain_id_parse(const char *s, int64_t *out);

/* A job as the API names it: its id ("123"), or a task of an array, the
 * array's id and the task's ("123_7", the task 0 to LOOM_ARRAY_INDEX_MAX
 * without leading zeros). 0 with *id and *task (-1 for a whole job), or
 * -1. */
int domain_job_ref_parse(const char *s, int64_t *id, long *task);

/*
 * A node as the API takes it: its id "CLUSTER/NAME" (as Loom hands it
 * out), or its bare NAME when the cluster is given. *cluster is the
 * cluster given (or NULL: it becomes the cluster of the first id, a new
 * string the caller frees); the node's name is appended to names. -1 with
 * a LOOM_EINVAL error on field when ref is neither, names another
 * cluster than *cluster ("node b/n1 is of cluster b, not a"), or is a bare
 * name without a cluster; LOOM_EINTERNAL when out of memory. Whether the
 * node exists is for the caller to see.
 */
int domain_node_add(const char *ref, char **cluster, struct strv *names,
                    const char *field, struct loom_error *err);

/* A group of a grid identity as the WLCG profile writes it: "/" name, then
 * any more "/" name, each name [a-zA-Z0-9][a-zA-Z0-9_.-]*, at most
 * LOOM_GRID_GROUP_MAX characters ("/atlas/production"). 1 or 0. */
int domain_group_valid(const char *s);

#endif
