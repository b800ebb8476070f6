/* sched_plan.c - the scheduler's view of the fabric for the planner: the
 * nodes from the snapshot, what holds them (jobs, what the clusters report
 * beyond Loom's jobs, reservations), and the checks that need it. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched_state.h"

int fabric_build(struct fabric *f)
{
    size_t total = 0, total_q = 0, k = 0, q = 0;

    memset(f, 0, sizeof(*f));
    f->snap = snapshot_get();
    if (!f->snap)
        return -1;
    for (size_t c = 0; c < f->snap->n_clusters; c++) {
        total += f->snap->clusters[c]->n_nodes;
        total_q += f->snap->clusters[c]->n_queues;
    }
    f->n = f->snap->n_clusters;
    f->cl = calloc(f->n + 1, sizeof(*f->cl));
    f->nodes = calloc(total + 1, sizeof(*f->nodes));
    f->queues = calloc(total_q + 1, sizeof(*f->queues));
    if (!f->cl || !f->nodes || !f->queues) {
        fabric_fini(f);
        return -1;
    }
    for (size_t c = 0; c < f->n; c++) {
        const struct scluster *sc = f->snap->clusters[c];
        int up = !strcmp(sc->state, "up");
        f->cl[c] = (struct plan_cluster){sc->name, sc->preference,
                                         &f->nodes[k], sc->n_nodes,
                                         &f->queues[q], sc->n_queues};
        for (size_t i = 0; i < sc->n_nodes; i++, k++) {
            const struct snode *n = &sc->nodes[i];
            f->nodes[k] = (struct plan_node){
                .name = n->name, .cpus = n->cpus, .gpus = n->gpus,
                .memory_mb = n->memory_mb,
                .features = (const char *const *)n->features.v,
                .n_features = n->features.n,
                .usable = up && snode_usable(n)};
            if (f->nodes[k].usable)
                f->cpus += n->cpus;
        }
        for (size_t i = 0; i < sc->n_queues; i++, q++)
            f->queues[q] = (struct plan_queue){
                sc->queues[i].name, sc->queues[i].max_walltime_s,
                !strcmp(sc->queues[i].state, "open")};
    }
    return 0;
}

void fabric_fini(struct fabric *f)
{
    free(f->cl);
    free(f->nodes);
    free(f->queues);
    snapshot_put(f->snap);
    memset(f, 0, sizeof(*f));
}

int fabric_cluster(const struct fabric *f, const char *name, size_t *out)
{
    for (size_t c = 0; name && c < f->n; c++)
        if (!strcmp(f->cl[c].name, name)) {
            *out = c;
            return 0;
        }
    return -1;
}

/* Node indices of names in cluster c; -1 when one is unknown. */
int fabric_nodes(const struct fabric *f, size_t c, const struct strv *names,
                 size_t *out)
{
    const struct scluster *sc = f->snap->clusters[c];

    for (size_t i = 0; i < names->n; i++) {
        const struct snode *n = scluster_node(sc, names->v[i]);
        if (!n)
            return -1;
        out[i] = (size_t)(n - sc->nodes);
    }
    return 0;
}

void fabric_job(const struct job *j, struct plan_job *out)
{
    *out = (struct plan_job){
        .id = j->id, .nodes = j->req.nodes,
        .per_node = {j->req.cpus_per_node, j->req.gpus, j->req.memory_mb},
        .walltime_s = j->req.walltime_s,
        .features = (const char *const *)j->req.features.v,
        .n_features = j->req.features.n, .cluster = j->req.cluster,
        .queue = j->req.queue, .reservation = j->req.reservation};
}

/* What a job holds: on its nodes until start + walltime. */
static int add_job(struct plan *p, const struct fabric *f, const struct job *j,
                   double now, long *held)
{
    size_t c, *idx;
    struct plan_alloc a;
    int rc = 0;

    if (fabric_cluster(f, j->cluster, &c) < 0)
        return 0; /* a cluster no longer configured */
    if (!(idx = malloc((j->nodes.n + 1) * sizeof(*idx))))
        return -1;
    if (fabric_nodes(f, c, &j->nodes, idx) == 0) {
        a = (struct plan_alloc){c, idx, j->nodes.n,
                                {j->req.cpus_per_node, j->req.gpus,
                                 j->req.memory_mb},
                                (double)(j->start_time ? j->start_time
                                                        : (time_t)now) +
                                    (double)j->req.walltime_s};
        rc = plan_add_alloc(p, &a);
        for (size_t k = 0; k < j->nodes.n; k++)
            held[f->cl[c].nodes - f->nodes + (long)idx[k]] +=
                j->req.cpus_per_node;
    }
    free(idx);
    return rc;
}

/* What a cluster reports allocated beyond the jobs Loom knows (another
 * user's work, a job not yet listed): held until the next poll says. */
static int add_foreign(struct plan *p, const struct fabric *f, double now,
                       const long *held, double overdue_s)
{
    size_t k = 0;

    for (size_t c = 0; c < f->n; c++) {
        const struct scluster *sc = f->snap->clusters[c];
        for (size_t i = 0; i < sc->n_nodes; i++, k++) {
            long extra = sc->nodes[i].cpus_alloc - held[k];
            struct plan_alloc a = {c, &i, 1, {(int)extra, 0, 0},
                                   now + overdue_s};
            if (extra > 0 && plan_add_alloc(p, &a) < 0)
                return -1;
        }
    }
    return 0;
}

static int add_resv(struct plan *p, const struct fabric *f,
                    const struct resv *r)
{
    size_t c, *idx;
    struct plan_resv pr;
    int rc = 0;

    if (fabric_cluster(f, r->cluster, &c) < 0)
        return 0;
    if (!(idx = malloc((r->nodes.n + 1) * sizeof(*idx))))
        return -1;
    if (fabric_nodes(f, c, &r->nodes, idx) == 0) {
        time_t from = r->hold_from && r->hold_from < r->start ? r->hold_from
                                                              : r->start;
        pr = (struct plan_resv){r->id, c, idx, r->nodes.n, (double)from,
                                (double)r->end};
        rc = plan_add_resv(p, &pr);
    }
    free(idx);
    return rc;
}

struct plan *fabric_plan(const struct fabric *f, double now, int64_t skip_resv)
{
    struct plan *p = plan_create(f->cl, f->n, now);
    long *held = calloc(f->cl && f->n ? (size_t)(f->cl[f->n - 1].nodes -
                                                 f->nodes) +
                                            f->cl[f->n - 1].n_nodes + 1
                                      : 1,
                        sizeof(*held));
    int rc = p && held ? 0 : -1;

    for (size_t i = 0; rc == 0 && i < S.n_live; i++) {
        const struct job *j = sched_job(S.live[i]);
        if (j && job_holds_nodes(j))
            rc = add_job(p, f, j, now, held);
    }
    if (rc == 0)
        rc = add_foreign(p, f, now, held, S.conf.plan.overdue_s);
    for (size_t i = 0; rc == 0 && i < S.n_resv; i++)
        if (S.resv[i]->id != skip_resv &&
            (S.resv[i]->state == RESV_PLANNED ||
             S.resv[i]->state == RESV_ACTIVE))
            rc = add_resv(p, f, S.resv[i]);
    free(held);
    if (rc < 0) {
        plan_destroy(p);
        return NULL;
    }
    return p;
}
