/* plan.c - the planner's fabric: per-node profiles, what holds them
 * (running jobs, reservations), and which nodes match a job. */
/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan_state.h"

/* Node i of c has free cpus now or not: keep its bit in pc->open. */
static void open_update(struct pcl *pc, size_t i)
{
    uint64_t bit = (uint64_t)1 << (i % 64), *w = &pc->open[i / 64];
    int was = (*w & bit) != 0;
    int is = pc->def->nodes[i].usable && prof_free_now(&pc->nodes[i]) > 0;

    if (was == is)
        return;
    *w ^= bit;
    if (is)
        pc->n_open++;
    else
        pc->n_open--;
}

struct plan *plan_create(const struct plan_cluster *clusters, size_t n,
                         double now)
{
    struct plan *p = calloc(1, sizeof(*p));
    size_t most = 1;

    if (!p || !(p->cl = calloc(n + 1, sizeof(*p->cl))))
        goto error;
    p->n_cl = n;
    p->now = now;
    p->overdue_s = 60;
    for (size_t c = 0; c < n; c++) {
        struct pcl *pc = &p->cl[c];
        pc->def = &clusters[c];
        pc->nodes = calloc(clusters[c].n_nodes + 1, sizeof(*pc->nodes));
        pc->open = calloc(clusters[c].n_nodes / 64 + 1, sizeof(*pc->open));
        if (!pc->nodes || !pc->open)
            goto error;
        pc->min_cpus = pc->min_gpus = INT_MAX;
        pc->min_memory_mb = LONG_MAX;
        for (size_t i = 0; i < clusters[c].n_nodes; i++) {
            const struct plan_node *nd = &clusters[c].nodes[i];
            if (prof_node_init(&pc->nodes[i], nd, now) < 0)
                goto error;
            open_update(pc, i);
            if (!nd->usable)
                continue;
            pc->cpus_total += nd->cpus;
            if (nd->cpus < pc->min_cpus)
                pc->min_cpus = nd->cpus;
            if (nd->gpus < pc->min_gpus)
                pc->min_gpus = nd->gpus;
            if (nd->memory_mb < pc->min_memory_mb)
                pc->min_memory_mb = nd->memory_mb;
        }
        if (clusters[c].n_nodes > most)
            most = clusters[c].n_nodes;
    }
    p->cand = malloc(most * sizeof(*p->cand));
    p->pick = malloc(most * sizeof(*p->pick));
    p->when = malloc(most * sizeof(*p->when));
    p->sel = malloc(most * sizeof(*p->sel));
    p->order = malloc((n + 1) * sizeof(*p->order));
    p->order_key = malloc((n + 1) * sizeof(*p->order_key));
    if (!p->cand || !p->pick || !p->when || !p->sel || !p->order ||
        !p->order_key)
        goto error;
    return p;
error:
    plan_destroy(p);
    return NULL;
}

void plan_destroy(struct plan *p)
{
    if (!p)
        return;
    for (size_t c = 0; p->cl && c < p->n_cl; c++) {
        for (size_t i = 0; p->cl[c].nodes && i < p->cl[c].def->n_nodes; i++)
            prof_node_fini(&p->cl[c].nodes[i]);
        free(p->cl[c].nodes);
        plan_ff_fini(&p->cl[c]);
        free(p->cl[c].open);
    }
    free(p->cl);
    free(p->rv);
    free(p->cand);
    free(p->pick);
    free(p->when);
    free(p->sel);
    free(p->order);
    free(p->order_key);
    free(p);
}

/* Take use on a node over [start, end), keeping the cluster's load and
 * order. */
int plan_take(struct plan *p, size_t c, size_t i, double start, double end,
                const struct plan_use *u)
{
    struct pcl *pc = &p->cl[c];

    if (start <= p->now && end > p->now && pc->def->nodes[i].usable)
        pc->cpus_used_now += u->cpus;
    if (prof_take(&pc->nodes[i], start, end, u) < 0)
        return -1;
    if (start <= p->now)
        open_update(pc, i);
    plan_ff_update(pc, i);
    return 0;
}

int plan_add_alloc(struct plan *p, const struct plan_alloc *a)
{
    double end = a->end <= p->now ? p->now + p->overdue_s : a->end;

    if (a->cluster >= p->n_cl)
        return -1;
    for (size_t k = 0; k < a->n_nodes; k++) {
        if (a->nodes[k] >= p->cl[a->cluster].def->n_nodes ||
            plan_take(p, a->cluster, a->nodes[k], p->now, end, &a->per_node) < 0)
            return -1;
    }
    return 0;
}

int plan_add_resv(struct plan *p, const struct plan_resv *r)
{
    struct presv *nv;

    if (r->cluster >= p->n_cl)
        return -1;
    if (p->n_rv == p->cap_rv) {
        size_t cap = p->cap_rv ? 2 * p->cap_rv : 8;
        if (!(nv = realloc(p->rv, cap * sizeof(*nv))))
            return -1;
        p->rv = nv;
        p->cap_rv = cap;
    }
    p->rv[p->n_rv++] = (struct presv){r->id, r->cluster};
    p->cl[r->cluster].ff_ok = 0;
    for (size_t k = 0; k < r->n_nodes; k++)
        if (r->nodes[k] >= p->cl[r->cluster].def->n_nodes ||
            prof_add_resv(&p->cl[r->cluster].nodes[r->nodes[k]], r->id,
                          r->start, r->end) < 0)
            return -1;
    return 0;
}

/* ---- matching ---------------------------------------------------------- */

static int has(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

int plan_has_all(const char *const *have, size_t n_have,
                 const char *const *want, size_t n_want)
{
    for (size_t i = 0; i < n_want; i++)
        if (!has(have, n_have, want[i]))
            return 0;
    return 1;
}

/* Has the node every feature j asks for, and does it serve j's queue? */
int plan_node_names(const struct plan_node *nd, const struct plan_job *j)
{
    if (!plan_has_all(nd->features, nd->n_features, j->features,
                      j->n_features))
        return 0;
    return !j->queue || !nd->queues || has(nd->queues, nd->n_queues, j->queue);
}

const struct plan_queue *plan_queue_of(const struct plan_cluster *c,
                                         const char *name)
{
    for (size_t q = 0; q < c->n_queues; q++)
        if (!strcmp(c->queues[q].name, name))
            return &c->queues[q];
    return NULL;
}

const char *plan_account_on(const char *const *ca, size_t n,
                            const char *account, const char *cluster)
{
    const char *other = NULL;

    for (size_t i = 0; i < n; i++) {
        size_t k = strcspn(ca[i], "=");
        if (cluster && k == strlen(cluster) && !strncmp(ca[i], cluster, k))
            return ca[i] + k + 1;
        if (k == 1 && ca[i][0] == '*')
            other = ca[i] + 2;
    }
    return other ? other : account;
}

static const char *account_there(const struct plan_cluster *cl,
                                 const struct plan_job *j)
{
    return plan_account_on(j->cluster_accounts, j->n_cluster_accounts,
                           j->account, cl->name);
}

int plan_cluster_runs_as(const struct plan_cluster *cl,
                         const struct plan_job *j)
{
    const char *a = cl->single_account ? account_there(cl, j) : NULL;

    return !cl->single_account || (a && !strcmp(cl->single_account, a));
}

void plan_why_account(const struct plan_cluster *cl, const struct plan_job *j,
                      char *why, size_t why_len)
{
    const char *a = account_there(cl, j);

    if (a)
        snprintf(why, why_len, "cluster %s runs every job as %s "
                 "(single_account); this job is %s's", cl->name,
                 cl->single_account, a);
    else
        snprintf(why, why_len, "cluster %s runs every job as %s "
                 "(single_account); this job's account is not known",
                 cl->name, cl->single_account);
}

int plan_cluster_takes(const struct plan_cluster *cl,
                       const struct plan_job *j)
{
    if (!plan_cluster_runs_as(cl, j))
        return 0;
    if (j->cluster)
        return !strcmp(j->cluster, cl->name);
    return !cl->pinned_only || j->reservation;
}

/* Cluster-wide checks: pin, queue and its walltime limit, reservation. */
int plan_cluster_matches(const struct plan *p, size_t c,
                           const struct plan_job *j)
{
    const struct plan_cluster *cl = p->cl[c].def;
    const struct plan_queue *q;

    if (!plan_cluster_takes(cl, j))
        return 0;
    if (j->queue && (!(q = plan_queue_of(cl, j->queue)) || !q->open ||
                     (q->max_walltime_s && j->walltime_s > q->max_walltime_s)))
        return 0;
    if (j->reservation) {
        for (size_t r = 0; r < p->n_rv; r++)
            if (p->rv[r].id == j->reservation)
                return p->rv[r].cluster == c;
        return 0;
    }
    return 1;
}

struct prof_need plan_need_of(const struct plan_job *j)
{
    return (struct prof_need){j->per_node, 0, j->reservation};
}

