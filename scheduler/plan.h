/* plan.h - the planner: from the fabric's nodes, what holds them (running
 * jobs, reservations) and the waiting jobs in policy order, to the jobs that
 * start now (on which nodes) and the planned start of the others.
 *
 * Pure: no threads, no I/O, no clock. The scheduler thread fills a plan
 * each cycle; the replay benchmark and the property tests drive the same
 * code with simulated time. Times are seconds (any epoch, as doubles). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_PLAN_H
#define LOOM_SCHEDULER_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define PLAN_FOREVER 1e18 /* "no end" */

/* ---- the fabric (borrowed by the plan for its lifetime) ---------------- */

struct plan_node {
    const char *name;
    int cpus, gpus;
    long memory_mb;
    const char *const *features; /* its features and KEY=VALUE of each of
                                    its annotations: what a job's features
                                    match */
    size_t n_features;
    const char *const *queues; /* the queues (partitions) it serves; NULL:
                                  every queue of its cluster */
    size_t n_queues;
    int usable; /* offers resources: not down, drained, draining, maint,
                   unknown, and its cluster is not unreachable */
};
/* Is every one of the n_want strings of want among the n_have of have?
 * How a job's or a reservation's features match a node's features. */
int plan_has_all(const char *const *have, size_t n_have,
                 const char *const *want, size_t n_want);

struct plan_queue {
    const char *name;
    long max_walltime_s; /* 0: no limit */
    int open; /* takes jobs now; a job of a closed queue waits (it stays
                 feasible: the queue may open again) */
};

struct plan_cluster {
    const char *name;
    int preference; /* ties in the earliest start: lower first, then the
                       less loaded cluster */
    const struct plan_node *nodes;
    size_t n_nodes;
    const struct plan_queue *queues;
    size_t n_queues;
    int pinned_only; /* takes only jobs that name it (plan_job.cluster) or
                        run in one of its reservations */
    const char *single_account; /* runs every job as this account, so it
                                   takes only this account's jobs; NULL:
                                   anyone's */
};

/* Capacity one node gives to one job (or reservation) over a time. */
struct plan_use {
    int cpus, gpus;
    long memory_mb;
};

/* What holds nodes now: a running (or starting) job until its expected end,
 * start + walltime. An end at or before now means "any moment": the plan
 * treats it as ending at now + overdue_s (struct plan_config). */
struct plan_alloc {
    size_t cluster; /* index into the clusters */
    const size_t *nodes; /* node indices in that cluster (copied) */
    size_t n_nodes;
    struct plan_use per_node;
    double end;
};

/* A reservation: its nodes are the reservation's alone over [start, end).
 * Jobs outside it are not placed so that they would still run at start;
 * jobs inside it (plan_job.reservation) run only on its nodes, within it. */
struct plan_resv {
    int64_t id;
    size_t cluster;
    const size_t *nodes; /* copied */
    size_t n_nodes;
    double start, end;
};

/* ---- a job to place ------------------------------------------------------ */

#define PLAN_GROUPS 4 /* running limits a job counts against */

struct plan_job {
    int64_t id;
    int nodes;
    int estimated; /* it shows an estimate (a planned start) from an
                      earlier cycle, which a cycle that keeps estimates
                      leaves standing (here, where it costs no room) */
    struct plan_use per_node;
    long walltime_s;
    const char *const *features; /* every one must be on the node */
    size_t n_features;
    const char *cluster; /* pinned to this cluster, or NULL */
    const char *queue;   /* only nodes serving it; walltime within its limit */
    int64_t reservation; /* runs inside this reservation, or 0 */
    uint32_t group[PLAN_GROUPS]; /* its account's, its VO's, its
                            gateway's and its array's indices + 1 in the
                            config's room, or 0: it starts only while each
                            has room */
    long count;          /* an array's tasks alike that this entry stands
                            for (0 or 1: one job): as many as can start now
                            start; the next of them then waits as the entry's
                            job would */
    const char *account; /* the local account it runs as, or NULL (not
                            known) */
    const char *const *cluster_accounts; /* "CLUSTER=ACCOUNT" and
                            "*=ACCOUNT" where its account differs between
                            clusters (struct job's); account elsewhere */
    size_t n_cluster_accounts;
};

enum plan_backfill {
    PLAN_BF_NONE,         /* strict order: the first job that cannot start
                             stops the cycle */
    PLAN_BF_EASY,         /* the first job that cannot start gets the one
                             reservation; later jobs start only where they
                             do not delay it */
    PLAN_BF_CONSERVATIVE, /* every job up to depth gets a reservation in
                             order; later ones start only where they delay
                             none of them */
};

struct plan_config {
    enum plan_backfill backfill;
    size_t depth;     /* conservative: jobs that get a reservation; for all
                         policies: how many waiting jobs get a planned start
                         (0: every job) */
    double overdue_s; /* how long a job past its walltime is assumed to
                         keep its nodes (default 60) */
    size_t width;     /* a future start is searched on this many nodes of
                         each cluster, those free for ever the soonest (at
                         least 2 x the job's nodes); 0: on every node. A
                         start now is always searched on every node. */
    int index_order;  /* a future start searched on the clusters in their
                         index order, not soonest bound first: the same
                         plan, slower (for the tests' comparison) */
    int *room;        /* per group: jobs it may still start (a running
                         limit), or NULL: no limit; plan_run counts the
                         starts down */
    size_t n_room;
    int keep_estimates; /* EASY: a job within the depth that is neither
                         started nor the head, and shows an estimate
                         (plan_job.estimated), is not searched again
                         (plan_out.kept). An estimate takes nothing from
                         the plan, so the starts and the head's
                         reservation are those of a cycle that searches
                         every estimate; it skips most of that cycle's
                         work (a search to the end of the profiles for
                         each of up to depth jobs). */
};

/* One start of an entry that stands for several tasks. */
struct plan_start {
    size_t cluster;
    size_t *nodes; /* the job's count of node indices (owned) */
};

/* What the plan says of one job, in the order the jobs were given. */
struct plan_out {
    int64_t id;
    int start;           /* 1: start it now on cluster/nodes */
    int planned;         /* 1: planned_start and cluster are known */
    int reserved;        /* 1: the plan holds its nodes from planned_start
                            (the EASY head, conservative jobs up to the
                            depth, strict order up to the depth); 0: an
                            estimate only */
    int kept;            /* 1: within the depth, its estimate not searched
                            again (keep_estimates): it shows what it
                            showed; planned and reason say nothing */
    double planned_start;
    size_t cluster;
    size_t *nodes;       /* start now: node indices (owned by the result) */
    size_t n_nodes;
    uint32_t limited;    /* a group that runs as many jobs as it may
                            (its room is 0): that group, else 0 */
    int beyond;          /* 1: past the planning depth, no estimate (the
                            reason is left "": most of a long queue says
                            so, which the caller words once) */
    struct plan_start *starts; /* an entry of several tasks (count > 1):
                            those that start now (start is 0; what follows
                            says of the next of them, if any is left) */
    size_t n_starts;
    char reason[72];     /* why it waits ("" when it starts); the longest
                            is 64 characters, and a small entry keeps the
                            result of a 100,000-job queue small */
};

struct plan; /* opaque */

/* A plan of these clusters at time now, every usable node free. NULL when
 * out of memory. The clusters stay borrowed. */
struct plan *plan_create(const struct plan_cluster *clusters, size_t n,
                         double now);
void plan_destroy(struct plan *p); /* NULL-safe */
/* How many searches of a future start took the clusters in another
 * order than their index order (for the tests). */
size_t plan_reordered(const struct plan *p);

/* Add what holds nodes. 0, or -1 when out of memory or an index is bad. */
int plan_add_alloc(struct plan *p, const struct plan_alloc *a);
int plan_add_resv(struct plan *p, const struct plan_resv *r);

/* Place the jobs, given in policy order, under the configured backfill.
 * A job whose id is 0 is a hole, skipped (its entry says nothing).
 * out has n entries; free them with plan_out_fini. Jobs that start and
 * reservations of the plan are added to p as they are decided, so p
 * afterwards shows the planned fabric. 0, or -1 when out of memory. */
int plan_run(struct plan *p, const struct plan_config *cfg,
             const struct plan_job *jobs, size_t n, struct plan_out *out);
void plan_out_fini(struct plan_out *out, size_t n);

/* The account in ca ("CLUSTER=ACCOUNT" entries, "*=ACCOUNT" for every
 * cluster without one) for cluster (NULL: not placed), else account.
 * Borrowed. */
const char *plan_account_on(const char *const *ca, size_t n,
                            const char *account, const char *cluster);
/* May j run there at all: a cluster that runs every job as one account
 * (single_account) takes only the jobs whose account there is that one. */
int plan_cluster_runs_as(const struct plan_cluster *cl,
                         const struct plan_job *j);
/* "cluster C runs every job as A (single_account); this job is B's". */
void plan_why_account(const struct plan_cluster *cl, const struct plan_job *j,
                      char *why, size_t why_len);

/* Could any cluster ever run j (all its matching nodes free, whatever their
 * state now)? 1, or 0 with why filled ("needs 8 nodes with 64 cpus; the
 * largest fitting cluster has 4"). */
int plan_feasible(const struct plan_cluster *clusters, size_t n,
                  const struct plan_job *j, char *why, size_t why_len);

/* Do these nodes fit j from now on for its walltime (no running job, no
 * reservation of another in the way)? 1, or 0 with why. */
int plan_fits_nodes(const struct plan *p, const struct plan_job *j,
                    size_t cluster, const size_t *nodes, size_t n_nodes,
                    char *why, size_t why_len);

/* The earliest window for a new reservation of duration_s, starting within
 * [not_before, latest_start], on the given nodes of a cluster (n_nodes > 0)
 * or on any count usable nodes of it (nodes NULL; only nodes with every
 * feature), such that no running job and no other reservation overlaps it.
 * 1 with *start and *chosen (node indices, malloc'd, count entries) set;
 * 0 when none exists (why says so); -1 when out of memory. */
int plan_find_window(const struct plan *p, size_t cluster,
                     const size_t *nodes, size_t n_nodes, size_t count,
                     const char *const *features, size_t n_features,
                     double not_before, double latest_start,
                     double duration_s, double *start, size_t **chosen,
                     char *why, size_t why_len);

#endif
