/* fabric.c - GET /v1/queues?view=fabric: the fabric as one partitioned
 * cluster, each cluster's queue a partition of it, answered from the
 * snapshot. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonw.h"

/* Does node n serve queue q (a node that names no queue serves every
 * queue of its cluster)? */
static int serves(const struct snode *n, const char *q)
{
    if (!n->queues.n)
        return 1;
    for (size_t i = 0; i < n->queues.n; i++)
        if (!strcmp(n->queues.v[i], q))
            return 1;
    return 0;
}

/* One partition: the queue, its nodes by id, and what they hold. */
static void partition(struct jw *w, const struct scluster *c,
                      const struct squeue *q)
{
    size_t by_state[DOMAIN_NODE_STATES_N] = {0}, count = 0;
    long long cpus = 0, cpus_alloc = 0, gpus = 0, gpus_alloc = 0;
    long long mem = 0, mem_alloc = 0;

    jw_open(w, '{');
    jw_kv_str(w, "name", q->id);
    jw_kv_str(w, "cluster", c->name);
    jw_kv_str(w, "queue", q->name);
    jw_kv_str(w, "state", q->state);
    jw_key(w, "max_walltime_s");
    if (q->max_walltime_s)
        jw_int(w, q->max_walltime_s);
    else
        jw_null(w);
    jw_key(w, "nodes");
    jw_open(w, '[');
    for (size_t i = 0; i < c->n_nodes; i++) {
        const struct snode *n = &c->nodes[i];
        int st;
        if (!serves(n, q->name))
            continue;
        jw_str(w, n->id);
        st = domain_find(&domain_node_states, n->state);
        by_state[st < 0 ? DOMAIN_NODE_STATES_N - 1 : st]++;
        count++;
        cpus += n->cpus;
        cpus_alloc += n->cpus_alloc;
        gpus += n->gpus;
        gpus_alloc += n->gpus_alloc;
        mem += n->memory_mb;
        mem_alloc += n->memory_alloc_mb;
    }
    jw_close(w, ']');
    jw_kv_int(w, "node_count", (long long)count);
    jw_key(w, "nodes_by_state");
    jw_open(w, '{');
    for (size_t s = 0; s < DOMAIN_NODE_STATES_N; s++)
        if (by_state[s])
            jw_kv_int(w, domain_node_states.names[s], (long long)by_state[s]);
    jw_close(w, '}');
    jw_kv_int(w, "cpus", cpus);
    jw_kv_int(w, "cpus_alloc", cpus_alloc);
    jw_kv_int(w, "memory_mb", mem);
    jw_kv_int(w, "memory_alloc_mb", mem_alloc);
    jw_kv_int(w, "gpus", gpus);
    jw_kv_int(w, "gpus_alloc", gpus_alloc);
    jw_close(w, '}');
}

void api_queues_fabric(struct http_req *rq, struct http_resp *rs,
                       const struct api_route_args *a)
{
    const char *fc = api_param(a, "cluster");
    struct snapshot *s = snapshot_get();
    struct loom_error err;
    struct jw w;

    (void)rq;
    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "view", "fabric");
    jw_key(&w, "items");
    jw_open(&w, '[');
    for (size_t i = 0; s && i < s->n_clusters; i++) {
        const struct scluster *c = s->clusters[i];
        if (fc && strcmp(fc, c->name))
            continue;
        for (size_t k = 0; k < c->n_queues; k++)
            partition(&w, c, &c->queues[k]);
    }
    jw_close(&w, ']');
    jw_close(&w, '}');
    snapshot_put(s);
    rs->body = jw_finish(&w);
    if (!rs->body) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    rs->status = 200;
}
