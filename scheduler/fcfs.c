/* fcfs.c - first fit placement over the snapshot's nodes. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/fcfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan.h"

void usage_init(struct usage *u)
{
    hmap_init(&u->by_node);
}

void usage_fini(struct usage *u)
{
    hmap_fini_values(&u->by_node, free);
}

static struct use *use_of(struct usage *u, const char *cluster,
                          const char *node, int create)
{
    char key[256];
    struct use *x;

    snprintf(key, sizeof(key), "%s/%s", cluster, node);
    x = hmap_get(&u->by_node, key);
    if (x || !create)
        return x;
    x = calloc(1, sizeof(*x));
    if (x && hmap_put(&u->by_node, key, x) < 0) {
        free(x);
        x = NULL;
    }
    return x;
}

int usage_apply(struct usage *u, const struct job *j, int sign)
{
    if (!j->cluster)
        return 0;
    for (size_t i = 0; i < j->nodes.n; i++) {
        struct use *x = use_of(u, j->cluster, j->nodes.v[i], 1);
        if (!x)
            return -1;
        x->cpus += sign * j->req.cpus_per_node;
        x->memory_mb += sign * j->req.memory_mb;
        x->gpus += sign * j->req.gpus;
    }
    return 0;
}

/* Could this node ever hold one share of j? */
static int node_could(const struct snode *n, const struct job *j)
{
    return n->cpus >= j->req.cpus_per_node &&
           n->memory_mb >= j->req.memory_mb && n->gpus >= j->req.gpus &&
           plan_has_all((const char *const *)n->match.v, n->match.n,
                        (const char *const *)j->req.features.v,
                        j->req.features.n);
}

static int cpus_used(const struct snode *n, const struct use *x)
{
    return x && x->cpus > n->cpus_alloc ? x->cpus : n->cpus_alloc;
}

/* Does it have room for one share of j now? */
static int node_fits(const struct snode *n, const struct usage *u,
                     const char *cluster, const struct job *j)
{
    struct use *x = use_of((struct usage *)u, cluster, n->name, 0);
    int cpus = cpus_used(n, x);
    long mem = x && x->memory_mb > n->memory_alloc_mb ? x->memory_mb
                                                       : n->memory_alloc_mb;
    int gpus = x && x->gpus > n->gpus_alloc ? x->gpus : n->gpus_alloc;

    return snode_usable(n) && node_could(n, j) &&
           n->cpus - cpus >= j->req.cpus_per_node &&
           n->memory_mb - mem >= j->req.memory_mb &&
           n->gpus - gpus >= j->req.gpus;
}

static int queue_ok(const struct scluster *c, const struct job *j,
                    char *why, size_t why_len)
{
    if (!j->req.queue)
        return 1;
    for (size_t i = 0; i < c->n_queues; i++) {
        const struct squeue *q = &c->queues[i];
        if (strcmp(q->name, j->req.queue) != 0)
            continue;
        if (q->max_walltime_s && j->req.walltime_s > q->max_walltime_s) {
            snprintf(why, why_len, "walltime %lds exceeds the %lds limit of "
                     "queue %s", j->req.walltime_s, q->max_walltime_s, q->id);
            return 0;
        }
        return 1;
    }
    snprintf(why, why_len, "cluster %s has no queue %s", c->name,
             j->req.queue);
    return 0;
}

static int place_in(const struct scluster *c, const struct usage *u,
                    const struct job *j, size_t *first, struct strv *nodes)
{
    size_t k = first ? *first : 0;

    /* skip the nodes in front that have no cpu left for anybody */
    for (; first && k < c->n_nodes; k++) {
        const struct snode *n = &c->nodes[k];
        if (snode_usable(n) &&
            n->cpus > cpus_used(n, use_of((struct usage *)u, c->name,
                                          n->name, 0)))
            break;
    }
    if (first)
        *first = k;
    for (; k < c->n_nodes && (int)nodes->n < j->req.nodes; k++)
        if (node_fits(&c->nodes[k], u, c->name, j) &&
            strv_push(nodes, c->nodes[k].name) < 0)
            return -1;
    if ((int)nodes->n == j->req.nodes)
        return 1;
    strv_fini(nodes);
    return 0;
}

/* The clusters' indexes in placement order: preference, then the order of
 * the configuration. At most 64 clusters are ordered; more keep file order. */
static size_t order(const struct snapshot *s, size_t *idx, size_t max)
{
    size_t n = s ? (s->n_clusters < max ? s->n_clusters : max) : 0;

    for (size_t i = 0; i < n; i++) {
        size_t k = i;
        idx[i] = i;
        while (k > 0 && s->clusters[idx[k - 1]]->preference >
                            s->clusters[idx[k]]->preference) {
            size_t t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
            k--;
        }
    }
    return n;
}

int fcfs_place(const struct snapshot *s, const struct usage *u,
               const struct job *j, size_t *first, const char **cluster,
               struct strv *nodes, char *why, size_t why_len)
{
    size_t idx[64], n = order(s, idx, 64);

    snprintf(why, why_len, "waiting for free nodes");
    for (size_t o = 0; o < n; o++) {
        size_t i = idx[o];
        const struct scluster *c = s->clusters[i];
        int rc;
        if (j->req.cluster ? strcmp(c->name, j->req.cluster) != 0
                           : c->pinned_only && !j->req.reservation)
            continue;
        if (c->single_account &&
            (!job_account_on(j, c->name) ||
             strcmp(c->single_account, job_account_on(j, c->name))))
            continue;
        if (strcmp(c->state, "up") != 0 || !queue_ok(c, j, why, why_len))
            continue;
        rc = place_in(c, u, j, first ? &first[i] : NULL, nodes);
        if (rc != 0) {
            *cluster = c->name;
            return rc;
        }
    }
    return 0;
}

int fcfs_nodes_fit(const struct snapshot *s, const struct usage *u,
                   const struct job *j, const char *cluster,
                   const struct strv *nodes)
{
    const struct scluster *c = snapshot_cluster(s, cluster);

    if (!c || strcmp(c->state, "up") != 0)
        return 0;
    for (size_t i = 0; i < nodes->n; i++) {
        const struct snode *n = scluster_node(c, nodes->v[i]);
        if (!n || !node_fits(n, u, cluster, j))
            return 0;
    }
    return 1;
}
