/* plan_search.c - where a job can start earliest: on one cluster (the
 * want-th earliest fit of its nodes), and across the fabric. */
/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan_state.h"

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
 * (p->cand, used as scratch) of cluster c give need for dur; PLAN_FOREVER
 * when none. The chosen nodes go to p->pick. by_ff: the candidates are in
 * the order they are free for ever, the time of the want-th in
 * p->sel[want - 1] (the bound, without a selection). */
double plan_search(struct plan *p, size_t c, size_t n, size_t want,
                     double dur, const struct prof_need *need, double t0,
                     double limit, int by_ff)
{
    struct prof_node *nodes = p->cl[c].nodes;
    size_t alive = 0, got;
    int cls = -1, cls_cpus = -1;
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
        if (by_ff) {
            ub = p->sel[want - 1] < t0 ? t0 : p->sel[want - 1];
        } else {
            for (size_t k = 0; k < n; k++) {
                double f = prof_free_from(&nodes[p->cand[k]]);
                p->sel[k] = f < t0 ? t0 : f;
            }
            ub = select_kth(p->sel, n, want);
        }
        if (ub < limit)
            limit = ub;
    }
    /* each candidate's earliest fit; those with none by limit are dropped
     * (the order of the others kept: it decides which nodes are picked).
     * Most are dropped by a look at the node's floor for the need's class,
     * or at its first steps. */
    for (size_t k = 0; k < n; k++) {
        struct prof_node *pn = &nodes[p->cand[k]];
        double w = PLAN_FOREVER;
        if (pn->floor && pn->def->cpus != cls_cpus) /* a size shares one */
            cls = prof_class(cls_cpus = pn->def->cpus, need, dur);
        if (!prof_floor_past(pn, cls, limit) &&
            !prof_short_past(pn, t0, dur, need, limit)) {
            if (pn->def->cpus != cls_cpus)
                cls = prof_class(cls_cpus = pn->def->cpus, need, dur);
            w = prof_earliest_kept(pn, cls, t0, dur, need, limit);
        }
        if (w <= limit) {
            p->cand[alive] = p->cand[k];
            p->when[alive++] = w;
        }
    }
    if (alive < want)
        return PLAN_FOREVER;
    n = alive;
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
                struct prof_node *pn = &nodes[p->cand[k]];
                p->when[k] = prof_earliest_kept(
                    pn, prof_class(pn->def->cpus, need, dur), t, dur, need,
                    limit);
            }
        }
        if (got >= want)
            return t;
    }
}

/* Does every node of cluster c match j (no features, no queue, and no
 * more per node than the smallest node has)? */
static int matches_every_node(const struct pcl *pc, const struct plan_job *j)
{
    return !j->n_features && !j->queue &&
           j->per_node.cpus <= pc->min_cpus &&
           j->per_node.gpus <= pc->min_gpus &&
           j->per_node.memory_mb <= pc->min_memory_mb;
}

/* The width of a search of want nodes on c in the order the nodes are
 * free for ever (at least 2 x want), the order built; 0 when that order is
 * not taken: no width, one that takes every node, or out of memory. */
static size_t ff_width(struct plan *p, size_t c, size_t width, size_t want)
{
    if (width && width < 2 * want)
        width = 2 * want;
    if (!width || width >= p->cl[c].def->n_nodes || plan_ff_build(p, c) < 0)
        return 0;
    return width;
}

/* The time the want-th node in the order of c's nodes free for ever is
 * free from (the order built); PLAN_FOREVER when there are fewer. */
static double ff_nth(const struct pcl *pc, size_t want)
{
    for (size_t b = 0; b < pc->n_ffb; b++) {
        if (pc->ffb[b]->n >= want)
            return pc->ffb[b]->e[want - 1].ff;
        want -= pc->ffb[b]->n;
    }
    return PLAN_FOREVER;
}

/* Fill p->cand with the nodes of c that match j; their count. With a
 * width, only the first that many (and at least 2 x the nodes it asks
 * for), in the order they are free for ever (*by_ff set, the time of the
 * want-th in p->sel[want - 1]): a future start is then searched among the
 * nodes most likely to give it, not on every node. A job that matches
 * every node takes the order's first nodes as they come, a block at a
 * time. */
static size_t candidates(struct plan *p, size_t c, const struct plan_job *j,
                         size_t width, int *by_ff)
{
    struct pcl *pc = &p->cl[c];
    const struct plan_cluster *cl = pc->def;
    size_t n = 0, want = j->nodes > 0 ? (size_t)j->nodes : 1;
    int all = matches_every_node(pc, j);

    *by_ff = 0;
    if (!(width = ff_width(p, c, width, want))) {
        for (size_t i = 0; i < cl->n_nodes; i++)
            if (cl->nodes[i].usable && plan_node_matches(&cl->nodes[i], j))
                p->cand[n++] = i;
        return n;
    }
    if (all) /* want <= width / 2: the want-th is among the candidates */
        p->sel[want - 1] = ff_nth(pc, want);
    for (size_t b = 0; b < pc->n_ffb && n < width; b++) {
        const struct ffblock *fb = pc->ffb[b];
        size_t m = fb->n < width - n ? fb->n : width - n;
        if (all) {
            for (size_t k = 0; k < m; k++)
                p->cand[n + k] = fb->e[k].node;
            n += m;
            continue;
        }
        for (size_t k = 0; k < fb->n && n < width; k++)
            if (plan_node_matches(&cl->nodes[fb->e[k].node], j)) {
                p->sel[n] = fb->e[k].ff;
                p->cand[n++] = fb->e[k].node;
            }
    }
    *by_ff = 1;
    return n;
}

/* A start now of j (asking for cpus, over a walltime) on cluster c: the
 * first want nodes in index order that fit, into p->pick; now, or
 * PLAN_FOREVER. Only nodes with free cpus now can fit (the step at now is
 * short on the others), so only they are looked at: the nodes picked are
 * those a check of every node would pick. */
static double search_now(struct plan *p, size_t c, const struct plan_job *j,
                         const struct prof_need *need, size_t want)
{
    const struct pcl *pc = &p->cl[c];
    size_t got = 0;

    if (pc->n_open < want)
        return PLAN_FOREVER;
    for (size_t w = 0; w * 64 < pc->def->n_nodes; w++) {
        uint64_t m = pc->open[w];
        for (size_t b = 0; b < 64 && m >> b; b++) {
            size_t i = w * 64 + b;
            if (!(m >> b & 1) ||
                prof_free_now(&pc->nodes[i]) < need->use.cpus ||
                !plan_node_matches(&pc->def->nodes[i], j) ||
                !prof_fits(&pc->nodes[i], p->now, (double)j->walltime_s,
                           need))
                continue;
            p->pick[got++] = i;
            if (got == want)
                return p->now;
        }
    }
    return PLAN_FOREVER;
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

/* When want of j's candidates on cluster c are surely free (the want-th
 * in the order the nodes are free for ever, which bounds the search
 * there), or PLAN_FOREVER when that is not known at a glance: the
 * candidates are not the first of that order (no width, or one that takes
 * every node), or not every node matches j. */
static double cluster_bound(struct plan *p, size_t c,
                            const struct plan_job *j, size_t want,
                            size_t width)
{
    if (!matches_every_node(&p->cl[c], j) || !ff_width(p, c, width, want))
        return PLAN_FOREVER;
    return ff_nth(&p->cl[c], want);
}

/* The clusters in the order a search of a future start takes them, into
 * p->order: the soonest bound first (ties and unknown bounds in index
 * order), so that the start found first is early and bounds the searches
 * of the others, which then drop most candidates at a glance. The start
 * chosen does not depend on the order (the earliest; of equal ones, the
 * better cluster), only the work. The clusters that cannot take j are not
 * searched: they are given no bound (which would cost their order of the
 * nodes free for ever); nor is a single cluster. */
static void cluster_order(struct plan *p, const struct plan_job *j,
                          size_t want, size_t width)
{
    int moved = 0, plain = p->index_order || p->n_cl < 2;

    for (size_t c = 0; c < p->n_cl; c++) {
        double b = plain || !plan_cluster_matches(p, c, j)
                       ? PLAN_FOREVER
                       : cluster_bound(p, c, j, want, width);
        size_t k = c;
        for (; k > 0 && p->order_key[k - 1] > b; k--) {
            p->order_key[k] = p->order_key[k - 1];
            p->order[k] = p->order[k - 1];
            moved = 1;
        }
        p->order_key[k] = b;
        p->order[k] = c;
    }
    p->reordered += (size_t)moved;
}

size_t plan_reordered(const struct plan *p)
{
    return p->reordered;
}

/* Where j can start earliest, not later than limit: *cluster and nodes
 * (malloc'd into *nodes). PLAN_FOREVER when nowhere; -1 when OOM. The
 * best start so far bounds the search of the clusters after it. */
double plan_place(struct plan *p, const struct plan_job *j, double limit,
                    size_t *cluster, size_t **nodes)
{
    struct prof_need need = plan_need_of(j);
    double best = PLAN_FOREVER, dur = (double)j->walltime_s;
    size_t want = j->nodes > 0 ? (size_t)j->nodes : 1;
    /* a start now only, of a job a full node cannot take: searched on the
     * nodes with free cpus now (a job that asks for no cpus, or for no
     * time, fits full nodes too: searched on every node) */
    int now_only = limit <= p->now && need.use.cpus > 0 && dur > 0;

    size_t width = limit > p->now && !j->reservation ? p->width : 0;

    *nodes = NULL;
    if (!now_only)
        cluster_order(p, j, want, width);
    for (size_t k = 0; k < p->n_cl; k++) {
        size_t c = now_only ? k : p->order[k], n;
        double t;
        int by_ff;
        if (!plan_cluster_matches(p, c, j))
            continue;
        if (now_only) {
            t = search_now(p, c, j, &need, want);
        } else {
            n = candidates(p, c, j, width, &by_ff);
            t = plan_search(p, c, n, want, dur, &need, p->now,
                            best < limit ? best : limit, by_ff);
        }
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

