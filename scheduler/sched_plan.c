/* sched_plan.c - the scheduler's view of the fabric for the planner: the
 * nodes from the snapshot, what holds them (jobs, what the clusters report
 * beyond Loom's jobs, reservations), and the checks that need it. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/sched_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "core/vec.h"
#include "scheduler/held.h"
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
                                         &f->queues[q], sc->n_queues,
                                         sc->pinned_only, sc->single_account};
        for (size_t i = 0; i < sc->n_nodes; i++, k++) {
            const struct snode *n = &sc->nodes[i];
            f->nodes[k] = (struct plan_node){
                .name = n->name, .cpus = n->cpus, .gpus = n->gpus,
                .memory_mb = n->memory_mb,
                .features = (const char *const *)n->match.v,
                .n_features = n->match.n,
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

/* The fabric fabric_current gave last, and when it was built. Its
 * snapshot keeps its clusters alive, so the same pointers in a later
 * snapshot are the same clusters, as they were polled. That snapshot also
 * holds the job table of its day: it is let go after CURRENT_MAX_S. */
#define CURRENT_MAX_S 2.0
static struct fabric current;
static double current_at;

const struct fabric *fabric_current(void)
{
    struct snapshot *s = snapshot_get();
    double now = time_mono();
    int same = s && current.snap &&
               s->n_clusters == current.snap->n_clusters &&
               now - current_at < CURRENT_MAX_S;

    for (size_t c = 0; same && c < s->n_clusters; c++)
        same = s->clusters[c] == current.snap->clusters[c];
    snapshot_put(s);
    if (same)
        return &current;
    fabric_fini(&current);
    current_at = now;
    return fabric_build(&current) < 0 ? NULL : &current;
}

void fabric_current_fini(void)
{
    fabric_fini(&current);
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
        .queue = j->req.queue, .reservation = j->req.reservation,
        .group = {j->acct_ix, j->vo_ix, j->gw_ix,
                  j->array ? j->array->limit_ix : j->arr_ix},
        .count = j->array ? j->array->spec.tasks - j->array->n_split : 1,
        .account = j->account,
        .cluster_accounts = (const char *const *)j->cluster_accounts.v,
        .n_cluster_accounts = j->cluster_accounts.n};
}

/* What a job holds (h) on its nodes, until start + walltime. */
static int add_held(struct plan *p, const struct fabric *f,
                    const struct held *h, size_t c, const size_t *idx,
                    size_t n, double now, long *held)
{
    struct plan_alloc a = {c, idx, n, h->use,
                           (double)(h->start ? h->start : (time_t)now) +
                               (double)h->walltime_s};

    for (size_t k = 0; k < n; k++)
        held[f->cl[c].nodes - f->nodes + (long)idx[k]] += h->use.cpus;
    return plan_add_alloc(p, &a);
}

/* A job's nodes found by name (idx: room for them); a one-node job's are
 * remembered for the next cycles. *c: a guess at its cluster (jobs of one
 * cluster follow each other), set to the one found. */
static int add_job(struct plan *p, const struct fabric *f, const struct job *j,
                   const unsigned *layouts, double now, long *held,
                   size_t *idx, size_t *c)
{
    struct held tmp, *h = held_of(j->id);

    if ((*c >= f->n || strcmp(f->cl[*c].name, j->cluster)) &&
        fabric_cluster(f, j->cluster, c) < 0)
        return 0; /* a cluster no longer configured */
    if (fabric_nodes(f, *c, &j->nodes, idx) < 0)
        return 0;
    if (!h) { /* no slot (out of memory): its record stands in */
        held_fill(&tmp, j);
        h = &tmp;
    } else if (j->nodes.n == 1) {
        held_remember(h, layouts, *c, idx[0]);
    }
    return add_held(p, f, h, *c, idx, j->nodes.n, now, held);
}

/* Every job that holds nodes: from what is kept beside the flags where its
 * nodes are known in the clusters' layouts, else from its record. */
static int add_jobs(struct plan *p, const struct fabric *f, double now,
                    long *held)
{
    unsigned *layouts = calloc(f->n + 1, sizeof(*layouts));
    size_t *idx = NULL, cap_idx = 0, c = 0;
    int rc = layouts ? 0 : -1;

    if (layouts)
        held_layouts(f, layouts);
    for (size_t i = 0; rc == 0 && i < S.n_live; i++) {
        int64_t id = S.live[i];
        const struct held *h;
        const struct job *j;
        size_t one;
        if (!(S.jf[id - 1] & JF_HOLDS))
            continue;
        if ((h = held_of(id)) && held_known(h, layouts, f->n)) {
            one = h->idx;
            rc = add_held(p, f, h, h->cl, &one, 1, now, held);
        } else if ((j = sched_job(id))) {
            if (vec_grow((void **)&idx, &cap_idx, j->nodes.n, sizeof(*idx),
                         16) < 0)
                rc = -1;
            else
                rc = add_job(p, f, j, layouts, now, held, idx, &c);
        }
    }
    free(idx);
    free(layouts);
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
    int rc = p && held ? add_jobs(p, f, now, held) : -1;

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
