/* plan.c - the planner: where each job can start earliest, under FIFO,
 * EASY or conservative backfill, across every cluster of the fabric. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/plan.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/profile.h"

#define SHAPES 32 /* shapes that could not start now, remembered a cycle */

/* A usable node and when it is free for ever after. */
struct ffent {
    double ff;
    size_t node;
};

struct pcl {
    const struct plan_cluster *def;
    struct prof_node *nodes;
    long cpus_total, cpus_used_now;
    /* usable nodes by the time they are free for ever (built on first
     * use, kept in order as the plan takes nodes) */
    struct ffent *ff;
    size_t *ffpos; /* node -> its place in ff, or (size_t)-1 */
    size_t n_ff;
    int ff_ok;
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
};

/* A shape that found no room now: a job at least as large, as long and as
 * constrained finds none either (the plan only fills up within a run). */
struct shape {
    int nodes;
    struct plan_use use;
    long walltime_s;
    const char *pin;
};

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
        if (!(pc->nodes = calloc(clusters[c].n_nodes + 1, sizeof(*pc->nodes))))
            goto error;
        for (size_t i = 0; i < clusters[c].n_nodes; i++) {
            if (prof_node_init(&pc->nodes[i], &clusters[c].nodes[i], now) < 0)
                goto error;
            if (clusters[c].nodes[i].usable)
                pc->cpus_total += clusters[c].nodes[i].cpus;
        }
        if (clusters[c].n_nodes > most)
            most = clusters[c].n_nodes;
    }
    p->cand = malloc(most * sizeof(*p->cand));
    p->pick = malloc(most * sizeof(*p->pick));
    p->when = malloc(most * sizeof(*p->when));
    p->sel = malloc(most * sizeof(*p->sel));
    if (!p->cand || !p->pick || !p->when || !p->sel)
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
        free(p->cl[c].ff);
        free(p->cl[c].ffpos);
    }
    free(p->cl);
    free(p->rv);
    free(p->cand);
    free(p->pick);
    free(p->when);
    free(p->sel);
    free(p);
}

static int by_ff(const void *a, const void *b)
{
    const struct ffent *x = a, *y = b;

    if (x->ff != y->ff)
        return x->ff < y->ff ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Order the usable nodes of c by the time they are free for ever. */
static int ff_build(struct plan *p, size_t c)
{
    struct pcl *pc = &p->cl[c];
    size_t n = pc->def->n_nodes;

    if (pc->ff_ok)
        return 0;
    if ((!pc->ff && !(pc->ff = malloc((n + 1) * sizeof(*pc->ff)))) ||
        (!pc->ffpos && !(pc->ffpos = malloc((n + 1) * sizeof(*pc->ffpos)))))
        return -1;
    pc->n_ff = 0;
    for (size_t i = 0; i < n; i++)
        if (pc->def->nodes[i].usable)
            pc->ff[pc->n_ff++] = (struct ffent){
                prof_free_from(&pc->nodes[i]), i};
    qsort(pc->ff, pc->n_ff, sizeof(*pc->ff), by_ff);
    for (size_t i = 0; i < n; i++)
        pc->ffpos[i] = (size_t)-1;
    for (size_t k = 0; k < pc->n_ff; k++)
        pc->ffpos[pc->ff[k].node] = k;
    pc->ff_ok = 1;
    return 0;
}

/* Node i of c changed: move it to its new place in the order. */
static void ff_update(struct pcl *pc, size_t i)
{
    size_t k = pc->ffpos[i];
    struct ffent e;

    if (k == (size_t)-1)
        return;
    e = (struct ffent){prof_free_from(&pc->nodes[i]), i};
    while (k + 1 < pc->n_ff && by_ff(&pc->ff[k + 1], &e) < 0) {
        pc->ff[k] = pc->ff[k + 1];
        pc->ffpos[pc->ff[k].node] = k;
        k++;
    }
    while (k > 0 && by_ff(&pc->ff[k - 1], &e) > 0) {
        pc->ff[k] = pc->ff[k - 1];
        pc->ffpos[pc->ff[k].node] = k;
        k--;
    }
    pc->ff[k] = e;
    pc->ffpos[i] = k;
}

/* Take use on a node over [start, end), keeping the cluster's load and
 * order. */
static int take(struct plan *p, size_t c, size_t i, double start, double end,
                const struct plan_use *u)
{
    struct pcl *pc = &p->cl[c];

    if (start <= p->now && end > p->now && pc->def->nodes[i].usable)
        pc->cpus_used_now += u->cpus;
    if (prof_take(&pc->nodes[i], start, end, u) < 0)
        return -1;
    if (pc->ff_ok)
        ff_update(pc, i);
    return 0;
}

int plan_add_alloc(struct plan *p, const struct plan_alloc *a)
{
    double end = a->end <= p->now ? p->now + p->overdue_s : a->end;

    if (a->cluster >= p->n_cl)
        return -1;
    for (size_t k = 0; k < a->n_nodes; k++) {
        if (a->nodes[k] >= p->cl[a->cluster].def->n_nodes ||
            take(p, a->cluster, a->nodes[k], p->now, end, &a->per_node) < 0)
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

/* Could this node ever give j what it asks (whatever holds it now)? */
static int node_matches(const struct plan_node *nd, const struct plan_job *j)
{
    if (nd->cpus < j->per_node.cpus || nd->gpus < j->per_node.gpus ||
        nd->memory_mb < j->per_node.memory_mb)
        return 0;
    for (size_t f = 0; f < j->n_features; f++)
        if (!has(nd->features, nd->n_features, j->features[f]))
            return 0;
    return !j->queue || !nd->queues || has(nd->queues, nd->n_queues, j->queue);
}

static const struct plan_queue *queue_of(const struct plan_cluster *c,
                                         const char *name)
{
    for (size_t q = 0; q < c->n_queues; q++)
        if (!strcmp(c->queues[q].name, name))
            return &c->queues[q];
    return NULL;
}

/* Cluster-wide checks: pin, queue and its walltime limit, reservation. */
static int cluster_matches(const struct plan *p, size_t c,
                           const struct plan_job *j)
{
    const struct plan_cluster *cl = p->cl[c].def;
    const struct plan_queue *q;

    if (j->cluster && strcmp(j->cluster, cl->name))
        return 0;
    if (j->queue && (!(q = queue_of(cl, j->queue)) || !q->open ||
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

static struct prof_need need_of(const struct plan_job *j)
{
    return (struct prof_need){j->per_node, 0, j->reservation};
}

/* ---- the search ---------------------------------------------------------- */

/* The k-th smallest (1-based) of v[0..n), by selection; v is reordered. */
static double select_kth(double *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k - 1;

    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        ptrdiff_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                double t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break;
    }
    return v[want];
}

/* The earliest t in [t0, limit] at which want of the n candidate nodes
 * (p->cand) of cluster c give need for dur; PLAN_FOREVER when none. The
 * chosen nodes go to p->pick. */
static double search(struct plan *p, size_t c, size_t n, size_t want,
                     double dur, const struct prof_need *need, double t0,
                     double limit)
{
    struct prof_node *nodes = p->cl[c].nodes;
    size_t alive = 0, got;
    double t;

    if (want == 0 || n < want)
        return PLAN_FOREVER;
    if (limit <= t0) { /* only t0 itself: no need for the whole timeline */
        got = 0;
        for (size_t k = 0; k < n && got < want; k++)
            if (prof_fits(&nodes[p->cand[k]], t0, dur, need))
                p->pick[got++] = p->cand[k];
        return got == want ? t0 : PLAN_FOREVER;
    }
    if (!need->member) { /* want nodes are free for ever from ub on */
        double ub;
        for (size_t k = 0; k < n; k++) {
            double f = prof_free_from(&nodes[p->cand[k]]);
            p->sel[k] = f < t0 ? t0 : f;
        }
        ub = select_kth(p->sel, n, want);
        if (ub < limit)
            limit = ub;
    }
    for (size_t k = 0; k < n; k++) {
        p->when[k] = prof_earliest(&nodes[p->cand[k]], t0, dur, need, limit);
        alive += p->when[k] <= limit;
    }
    if (alive < want)
        return PLAN_FOREVER;
    for (;;) {
        memcpy(p->sel, p->when, n * sizeof(*p->sel));
        t = select_kth(p->sel, n, want);
        if (t > limit)
            return PLAN_FOREVER;
        got = 0;
        for (size_t k = 0; k < n; k++) {
            if (p->when[k] > t)
                continue;
            if (p->when[k] == t ||
                prof_fits(&nodes[p->cand[k]], t, dur, need)) {
                if (got < want)
                    p->pick[got] = p->cand[k];
                got++;
            } else { /* fit earlier, not now: its next chance */
                p->when[k] = prof_earliest(&nodes[p->cand[k]], t, dur, need,
                                           limit);
            }
        }
        if (got >= want)
            return t;
    }
}

/* Fill p->cand with the nodes of c that match j; their count. With a
 * width, only the first that many (and at least 2 x the nodes it asks
 * for), in the order they are free for ever: a future start is then
 * searched among the nodes most likely to give it, not on every node. */
static size_t candidates(struct plan *p, size_t c, const struct plan_job *j,
                         size_t width)
{
    struct pcl *pc = &p->cl[c];
    const struct plan_cluster *cl = pc->def;
    size_t n = 0, want = j->nodes > 0 ? (size_t)j->nodes : 1;

    if (width && width < 2 * want)
        width = 2 * want;
    if (!width || width >= cl->n_nodes || ff_build(p, c) < 0) {
        for (size_t i = 0; i < cl->n_nodes; i++)
            if (cl->nodes[i].usable && node_matches(&cl->nodes[i], j))
                p->cand[n++] = i;
        return n;
    }
    for (size_t k = 0; k < pc->n_ff && n < width; k++)
        if (node_matches(&cl->nodes[pc->ff[k].node], j))
            p->cand[n++] = pc->ff[k].node;
    return n;
}

static double load(const struct pcl *pc)
{
    return pc->cpus_total ? (double)pc->cpus_used_now / pc->cpus_total : 1;
}

/* The share of c's usable cpus taken at time t. */
static double load_at(const struct plan *p, size_t c, double t)
{
    const struct pcl *pc = &p->cl[c];
    long used = 0;

    if (t <= p->now)
        return load(pc);
    for (size_t i = 0; i < pc->def->n_nodes; i++) {
        const struct prof_node *pn = &pc->nodes[i];
        size_t lo = 0, hi = pn->n;
        if (!pc->def->nodes[i].usable)
            continue;
        while (hi - lo > 1) { /* the step holding t */
            size_t mid = lo + (hi - lo) / 2;
            if (pn->st[mid].t <= t)
                lo = mid;
            else
                hi = mid;
        }
        used += pc->def->nodes[i].cpus - pn->st[lo].cpus;
    }
    return pc->cpus_total ? (double)used / pc->cpus_total : 1;
}

/* Is cluster a a better place than b for a start at time t? The lower
 * preference, then the less loaded at t (what the plan holds then does not
 * change from one cycle to the next unless jobs end early), then the
 * configuration order. */
static int better(const struct plan *p, size_t a, size_t b, double t)
{
    double la, lb;

    if (p->cl[a].def->preference != p->cl[b].def->preference)
        return p->cl[a].def->preference < p->cl[b].def->preference;
    la = load_at(p, a, t);
    lb = load_at(p, b, t);
    if (la != lb)
        return la < lb;
    return a < b;
}

/* Where j can start earliest, not later than limit: *cluster and nodes
 * (malloc'd into *nodes). PLAN_FOREVER when nowhere; -1 when OOM. The
 * best start so far bounds the search of the clusters after it. */
static double place(struct plan *p, const struct plan_job *j, double limit,
                    size_t *cluster, size_t **nodes)
{
    struct prof_need need = need_of(j);
    double best = PLAN_FOREVER, dur = (double)j->walltime_s;
    size_t want = j->nodes > 0 ? (size_t)j->nodes : 1;

    *nodes = NULL;
    for (size_t c = 0; c < p->n_cl; c++) {
        double t;
        if (!cluster_matches(p, c, j))
            continue;
        t = search(p, c,
                   candidates(p, c, j, limit > p->now && !j->reservation ?
                                           p->width : 0),
                   want, dur, &need, p->now, best < limit ? best : limit);
        if (t >= PLAN_FOREVER)
            continue;
        if (*nodes && (t > best || (t == best && !better(p, c, *cluster, t))))
            continue;
        free(*nodes);
        if (!(*nodes = malloc(want * sizeof(**nodes))))
            return -1;
        memcpy(*nodes, p->pick, want * sizeof(**nodes));
        *cluster = c;
        best = t;
    }
    return best;
}

static int commit_place(struct plan *p, const struct plan_job *j, size_t c,
                        const size_t *nodes, double start)
{
    size_t want = j->nodes > 0 ? (size_t)j->nodes : 1;

    for (size_t k = 0; k < want; k++)
        if (take(p, c, nodes[k], start, start + (double)j->walltime_s,
                 &j->per_node) < 0)
            return -1;
    return 0;
}

static int covered(const struct shape *f, size_t n, const struct plan_job *j)
{
    if (j->n_features || j->queue || j->reservation)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (j->nodes >= f[i].nodes && j->per_node.cpus >= f[i].use.cpus &&
            j->per_node.memory_mb >= f[i].use.memory_mb &&
            j->per_node.gpus >= f[i].use.gpus &&
            j->walltime_s >= f[i].walltime_s &&
            ((!f[i].pin && !j->cluster) ||
             (f[i].pin && j->cluster && !strcmp(f[i].pin, j->cluster))))
            return 1;
    return 0;
}

/* ---- a cycle ------------------------------------------------------------- */

int plan_run(struct plan *p, const struct plan_config *cfg,
             const struct plan_job *jobs, size_t n, struct plan_out *out)
{
    struct shape failed[SHAPES];
    size_t n_failed = 0, reserved = 0, planned = 0;
    size_t depth = cfg->depth ? cfg->depth : (size_t)-1;
    int64_t blocker = 0;

    p->overdue_s = cfg->overdue_s > 0 ? cfg->overdue_s : 60;
    p->width = cfg->width;
    memset(out, 0, n * sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        const struct plan_job *j = &jobs[i];
        struct plan_out *o = &out[i];
        size_t c, *nodes = NULL;
        double t;
        int reserve;

        o->id = j->id;
        if (!(cfg->backfill == PLAN_BF_NONE && blocker) &&
            !covered(failed, n_failed, j)) {
            t = place(p, j, p->now, &c, &nodes);
            if (t < 0)
                return -1;
            if (t <= p->now) {
                if (commit_place(p, j, c, nodes, p->now) < 0) {
                    free(nodes);
                    return -1;
                }
                *o = (struct plan_out){.id = j->id, .start = 1, .planned = 1,
                                       .planned_start = p->now,
                                       .cluster = c, .nodes = nodes,
                                       .n_nodes = j->nodes > 0 ?
                                           (size_t)j->nodes : 1};
                continue;
            }
            if (n_failed < SHAPES && !j->n_features && !j->queue &&
                !j->reservation)
                failed[n_failed++] = (struct shape){j->nodes, j->per_node,
                                                    j->walltime_s, j->cluster};
        }
        if (!blocker)
            blocker = j->id; /* the first job that waits */
        /* It waits. Does it get a reservation in the plan, or only an
         * estimate, or nothing (beyond the depth)? */
        reserve = (cfg->backfill == PLAN_BF_EASY && reserved == 0) ||
                  (cfg->backfill != PLAN_BF_EASY && reserved < depth);
        if (!reserve && planned >= depth) {
            snprintf(o->reason, sizeof(o->reason), "waiting: beyond the "
                     "planning depth of %zu jobs", depth);
            continue;
        }
        t = place(p, j, PLAN_FOREVER, &c, &nodes);
        if (t < 0)
            return -1;
        planned++;
        if (t >= PLAN_FOREVER) {
            snprintf(o->reason, sizeof(o->reason), "waiting: no usable "
                     "nodes can run it now%s", j->reservation ?
                     " (inside its reservation)" : "");
            free(nodes);
            continue;
        }
        if (reserve && commit_place(p, j, c, nodes, t) < 0) {
            free(nodes);
            return -1;
        }
        reserved += reserve;
        free(nodes);
        o->reserved = reserve;
        o->planned = 1;
        o->planned_start = t;
        o->cluster = c;
        if (cfg->backfill == PLAN_BF_NONE && blocker != j->id)
            snprintf(o->reason, sizeof(o->reason), "waiting: behind job "
                     "%lld (strict order)", (long long)blocker);
        else
            snprintf(o->reason, sizeof(o->reason), "waiting for resources");
    }
    return 0;
}

void plan_out_fini(struct plan_out *out, size_t n)
{
    for (size_t i = 0; out && i < n; i++) {
        free(out[i].nodes);
        out[i].nodes = NULL;
    }
}

/* ---- checks for the API ------------------------------------------------- */

int plan_feasible(const struct plan_cluster *clusters, size_t n,
                  const struct plan_job *j, char *why, size_t why_len)
{
    size_t best = 0, want = j->nodes > 0 ? (size_t)j->nodes : 1;
    int pinned_seen = 0, queue_seen = 0, walltime_over = 0;

    for (size_t c = 0; c < n; c++) {
        const struct plan_queue *q = j->queue ? queue_of(&clusters[c],
                                                          j->queue) : NULL;
        size_t count = 0;
        if (j->cluster && strcmp(j->cluster, clusters[c].name))
            continue;
        pinned_seen = 1;
        if (j->queue && !q)
            continue;
        queue_seen = 1;
        if (q && q->max_walltime_s && j->walltime_s > q->max_walltime_s) {
            walltime_over = 1;
            continue;
        }
        for (size_t i = 0; i < clusters[c].n_nodes; i++)
            count += node_matches(&clusters[c].nodes[i], j);
        if (count >= want)
            return 1;
        if (count > best)
            best = count;
    }
    if (j->cluster && !pinned_seen)
        snprintf(why, why_len, "no cluster is named %s", j->cluster);
    else if (j->queue && !queue_seen)
        snprintf(why, why_len, "no cluster%s%s has a queue named %s",
                 j->cluster ? " " : "", j->cluster ? j->cluster : "",
                 j->queue);
    else if (walltime_over && best == 0)
        snprintf(why, why_len, "walltime %ld s exceeds the limit of queue "
                 "%s", j->walltime_s, j->queue);
    else
        snprintf(why, why_len, "needs %zu node(s) with %d cpus, %ld MiB "
                 "and %d gpus%s; the largest matching set has %zu",
                 want, j->per_node.cpus, j->per_node.memory_mb,
                 j->per_node.gpus, j->n_features ? " and its features" : "",
                 best);
    return 0;
}

int plan_fits_nodes(const struct plan *p, const struct plan_job *j,
                    size_t c, const size_t *nodes, size_t n_nodes,
                    char *why, size_t why_len)
{
    struct prof_need need = need_of(j);

    if (c >= p->n_cl || !cluster_matches(p, c, j)) {
        snprintf(why, why_len, "the job cannot run on this cluster (pin, "
                 "queue or reservation)");
        return 0;
    }
    if (n_nodes != (size_t)(j->nodes > 0 ? j->nodes : 1)) {
        snprintf(why, why_len, "the job asks for %d node(s), %zu given",
                 j->nodes, n_nodes);
        return 0;
    }
    for (size_t k = 0; k < n_nodes; k++) {
        const struct plan_node *nd;
        if (nodes[k] >= p->cl[c].def->n_nodes) {
            snprintf(why, why_len, "no such node");
            return 0;
        }
        nd = &p->cl[c].def->nodes[nodes[k]];
        if (!nd->usable || !node_matches(nd, j) ||
            !prof_fits(&p->cl[c].nodes[nodes[k]], p->now,
                       (double)j->walltime_s, &need)) {
            snprintf(why, why_len, "node %s cannot take the job now (state, "
                     "size, features, what runs there or a reservation)",
                     nd->name);
            return 0;
        }
        for (size_t m = 0; m < k; m++)
            if (nodes[m] == nodes[k]) {
                snprintf(why, why_len, "node %s is named twice", nd->name);
                return 0;
            }
    }
    return 1;
}

int plan_find_window(const struct plan *cp, size_t c, const size_t *nodes,
                     size_t n_nodes, size_t count,
                     const char *const *features, size_t n_features,
                     double not_before, double latest_start,
                     double duration_s, double *start, size_t **chosen,
                     char *why, size_t why_len)
{
    struct plan *p = (struct plan *)cp; /* scratch only */
    struct prof_need need = {.whole = 1};
    size_t n = 0, want = n_nodes ? n_nodes : count;
    double t;

    *chosen = NULL;
    if (c >= p->n_cl || want == 0) {
        snprintf(why, why_len, "no nodes asked for");
        return 0;
    }
    if (not_before < p->now)
        not_before = p->now;
    if (n_nodes) {
        for (size_t k = 0; k < n_nodes; k++)
            p->cand[n++] = nodes[k];
    } else {
        const struct plan_cluster *cl = p->cl[c].def;
        struct plan_job j = {.features = features, .n_features = n_features};
        for (size_t i = 0; i < cl->n_nodes; i++)
            if (cl->nodes[i].usable && node_matches(&cl->nodes[i], &j))
                p->cand[n++] = i;
    }
    t = search(p, c, n, want, duration_s, &need, not_before,
               latest_start < not_before ? not_before : latest_start);
    if (t >= PLAN_FOREVER || t > latest_start) {
        snprintf(why, why_len, "no window of %.0f s on %zu node(s) starts "
                 "by the deadline without running into a running job or "
                 "another reservation", duration_s, want);
        return 0;
    }
    if (!(*chosen = malloc(want * sizeof(**chosen))))
        return -1;
    memcpy(*chosen, p->pick, want * sizeof(**chosen));
    *start = t;
    return 1;
}
