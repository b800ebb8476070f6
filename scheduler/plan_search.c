/* plan_search.c - where a job can start earliest: on one cluster (the
 * want-th earliest fit of its nodes), and across the fabric. */
/* SPDX-License-Identifier: MIT */
#include <stddef.h>
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
 * (p->cand) of cluster c give need for dur; PLAN_FOREVER when none. The
 * chosen nodes go to p->pick. */
double plan_search(struct plan *p, size_t c, size_t n, size_t want,
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
    if (!width || width >= cl->n_nodes || plan_ff_build(p, c) < 0) {
        for (size_t i = 0; i < cl->n_nodes; i++)
            if (cl->nodes[i].usable && plan_node_matches(&cl->nodes[i], j))
                p->cand[n++] = i;
        return n;
    }
    for (size_t k = 0; k < pc->n_ff && n < width; k++)
        if (plan_node_matches(&cl->nodes[pc->ff[k].node], j))
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
double plan_place(struct plan *p, const struct plan_job *j, double limit,
                    size_t *cluster, size_t **nodes)
{
    struct prof_need need = plan_need_of(j);
    double best = PLAN_FOREVER, dur = (double)j->walltime_s;
    size_t want = j->nodes > 0 ? (size_t)j->nodes : 1;

    *nodes = NULL;
    for (size_t c = 0; c < p->n_cl; c++) {
        double t;
        if (!plan_cluster_matches(p, c, j))
            continue;
        t = plan_search(p, c,
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

