/* plan_state.h - the planner's insides, shared by its files (plan.c: the
 * fabric and what holds it; plan_search.c: a job's earliest start;
 * plan_run.c: a cycle under a policy; plan_check.c: checks for the API;
 * plan_ff.c: the nodes in the order they are free for ever).
 * Not for use outside scheduler/plan*.c. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_PLAN_STATE_H
#define LOOM_SCHEDULER_PLAN_STATE_H

#include <stdint.h>

#include "scheduler/plan.h"
#include "scheduler/profile.h"

/* A usable node and when it is free for ever after. */
struct ffent {
    double ff;
    size_t node;
};

/* A short run of the order of nodes by that time (plan_ff.c). */
#define PLAN_FF_BLOCK 64
struct ffblock {
    size_t n;
    struct ffent e[PLAN_FF_BLOCK];
};

struct pcl {
    const struct plan_cluster *def;
    struct prof_node *nodes;
    long cpus_total, cpus_used_now;
    /* usable nodes by the time they are free for ever (built on first
     * use, kept in order as the plan takes nodes): the entries of the
     * blocks ffb[0..n_ffb) in turn */
    struct ffblock **ffb;
    size_t n_ffb, cap_ffb;
    double *ffkey; /* usable node -> the time it is kept in order by */
    int ff_ok;
    /* usable nodes with free cpus now, a bit each, and their count: on a
     * busy fabric few nodes have any, and only they can start a job that
     * asks for cpus, so a start now is looked for there alone */
    uint64_t *open;
    size_t n_open;
    /* the smallest usable node: a job that fits it and names no feature
     * or queue matches every node, without asking each */
    int min_cpus, min_gpus;
    long min_memory_mb;
};

struct presv {
    int64_t id;
    size_t cluster;
};

struct plan {
    struct pcl *cl;
    size_t n_cl;
    double now, overdue_s;
    size_t width; /* candidates a future start is searched on (0: all) */
    struct presv *rv;
    size_t n_rv, cap_rv;
    /* scratch for searches, sized for the largest cluster */
    size_t *cand, *pick;
    double *when, *sel;
    /* the clusters in the order a search takes them, and what orders them */
    size_t *order;
    double *order_key;
    int index_order; /* take them in index order (plan_config) */
    size_t reordered; /* searches that took them in another order */
};

/* plan.c */
/* Take u on node i of cluster c over [start, end), keeping the cluster's
 * load and order. 0, or -1 when out of memory. */
int plan_take(struct plan *p, size_t c, size_t i, double start, double end,
              const struct plan_use *u);
/* plan_ff.c */
/* Order the usable nodes of c by the time they are free for ever (once;
 * kept in order after). 0, or -1 when out of memory. */
int plan_ff_build(struct plan *p, size_t c);
/* Node i of the cluster changed: move it to its place in the order, if
 * there is one (out of memory: the order is dropped, built anew when next
 * needed). */
void plan_ff_update(struct pcl *pc, size_t i);
void plan_ff_fini(struct pcl *pc); /* the order's memory */
/* Has the node every feature j asks for, and does it serve j's queue? */
int plan_node_names(const struct plan_node *nd, const struct plan_job *j);
/* Could this node ever give j what it asks (whatever holds it now)? Inline:
 * a search asks it of every candidate node, and most jobs name nothing. */
static inline int plan_node_matches(const struct plan_node *nd,
                                    const struct plan_job *j)
{
    if (nd->cpus < j->per_node.cpus || nd->gpus < j->per_node.gpus ||
        nd->memory_mb < j->per_node.memory_mb)
        return 0;
    return (!j->n_features && !j->queue) || plan_node_names(nd, j);
}
const struct plan_queue *plan_queue_of(const struct plan_cluster *c,
                                       const char *name);
/* Does the cluster take j at all: the cluster j names, or (j names none)
 * any cluster but one that takes pinned jobs only, unless j runs in a
 * reservation (which names its cluster)? */
int plan_cluster_takes(const struct plan_cluster *cl,
                       const struct plan_job *j);
/* Cluster-wide checks: pin, queue and its walltime limit, reservation. */
int plan_cluster_matches(const struct plan *p, size_t c,
                         const struct plan_job *j);
struct prof_need plan_need_of(const struct plan_job *j);

/* plan_search.c */
/* The earliest t in [t0, limit] at which want of the n candidate nodes
 * (p->cand, used as scratch) of cluster c give need for dur (PLAN_FOREVER
 * when none); the chosen nodes go to p->pick. by_ff: the candidates are in
 * the order they are free for ever, the time of the want-th in
 * p->sel[want - 1]. */
double plan_search(struct plan *p, size_t c, size_t n, size_t want,
                   double dur, const struct prof_need *need, double t0,
                   double limit, int by_ff);
/* Where j can start earliest, not later than limit: *cluster and nodes
 * (malloc'd). PLAN_FOREVER when nowhere; -1 when out of memory. */
double plan_place(struct plan *p, const struct plan_job *j, double limit,
                  size_t *cluster, size_t **nodes);

#endif
