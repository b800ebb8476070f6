/* sched_resv_why.c - why a reservation cannot be had: a count or feature
 * no cluster could ever give, or what holds the nodes of a fixed window. */
/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"
#include "scheduler/sched_plan.h"
#include "scheduler/sched_state.h"

#define WHY_MAX_ITEMS 3 /* what is in the way, named; the rest counted */

/* Has nd the n features of fs? */
static int has_features(const struct plan_node *nd, const char *const *fs,
                        size_t n)
{
    return plan_has_all(nd->features, nd->n_features, fs, n);
}

int sched_resv_never(const struct fabric *f, size_t c,
                     const struct resv_req *rq, struct loom_error *err)
{
    const struct plan_cluster *cl = &f->cl[c];
    const char *const *want = (const char *const *)rq->features.v;
    size_t matching = 0;

    if (rq->nodes.n)
        return 0; /* named nodes that exist: they are free some day */
    for (size_t k = 0; k < rq->features.n; k++) {
        const char *feature = rq->features.v[k];
        size_t i = 0;
        while (i < cl->n_nodes && !has_features(&cl->nodes[i], &feature, 1))
            i++;
        if (i == cl->n_nodes)
            return loom_error_field(err, LOOM_EIMPOSSIBLE, "features", "no "
                                    "node of cluster %s has the feature "
                                    "'%s'", cl->name, feature);
    }
    for (size_t i = 0; i < cl->n_nodes; i++)
        matching += has_features(&cl->nodes[i], want, rq->features.n);
    if ((size_t)rq->count <= matching)
        return 0;
    if (rq->features.n)
        return loom_error_field(err, LOOM_EIMPOSSIBLE, "count", "the "
                                "reservation asks for %ld nodes; cluster %s "
                                "has %zu with the features asked for",
                                rq->count, cl->name, matching);
    return loom_error_field(err, LOOM_EIMPOSSIBLE, "count", "the reservation "
                            "asks for %ld nodes; cluster %s has %zu",
                            rq->count, cl->name, cl->n_nodes);
}

/* A growing line of text, cut (never overrun) at its size. */
struct line {
    char *buf;
    size_t size, len;
};

static void add(struct line *l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (l->len + 1 >= l->size)
        return;
    va_start(ap, fmt);
    n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        l->len += (size_t)n < l->size - l->len ? (size_t)n
                                               : l->size - l->len - 1;
}

/* Is node name one the window wants: named, or (a count) a node with
 * the features asked for? */
static int wanted(const struct fabric *f, size_t c, const struct resv_req *rq,
                  const char *name)
{
    const struct snode *sn = scluster_node(f->snap->clusters[c], name);

    if (!sn)
        return 0;
    if (rq->nodes.n) {
        for (size_t i = 0; i < rq->nodes.n; i++)
            if (!strcmp(rq->nodes.v[i], name))
                return 1;
        return 0;
    }
    return has_features(&f->cl[c].nodes[sn - f->snap->clusters[c]->nodes],
                        (const char *const *)rq->features.v,
                        rq->features.n);
}

/* The nodes of list that the window wants, joined by ','; 0 when none. */
static int wanted_of(const struct fabric *f, size_t c,
                     const struct resv_req *rq, const struct strv *list,
                     char *out, size_t size, unsigned char *seen)
{
    struct line l = {out, size, 0};
    int n = 0;

    out[0] = '\0';
    for (size_t i = 0; i < list->n; i++) {
        const struct snode *sn = scluster_node(f->snap->clusters[c],
                                               list->v[i]);
        if (!sn || !wanted(f, c, rq, list->v[i]))
            continue;
        seen[sn - f->snap->clusters[c]->nodes] = 1;
        add(&l, "%s%s", n++ ? "," : "", list->v[i]);
    }
    return n;
}

/* What holds the nodes a window wants, as it is being told. */
struct way {
    const struct fabric *f;
    size_t c;
    const struct resv_req *rq;
    double start, end, now;
    unsigned char *seen; /* per node: named as held already */
    long *loom_cpus;     /* per node: what Loom's jobs hold */
    struct line l;
    int items;
};

static void item(struct way *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* One thing in the way: named while there is room, else counted. */
static void item(struct way *w, const char *fmt, ...)
{
    char text[320];
    va_list ap;

    if (w->items++ >= WHY_MAX_ITEMS)
        return;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    add(&w->l, "%s%s", w->items > 1 ? "; " : "", text);
}

/* Jobs that hold wanted nodes past the window's start. */
static void jobs_in_way(struct way *w)
{
    const struct scluster *sc = w->f->snap->clusters[w->c];
    char nodes[64], until[32];

    for (size_t i = 0; i < S.n_live; i++) {
        const struct job *j = sched_job(S.live[i]);
        double end;
        if (!j || !job_holds_nodes(j) || !j->cluster ||
            strcmp(j->cluster, sc->name))
            continue;
        for (size_t k = 0; k < j->nodes.n; k++) {
            const struct snode *sn = scluster_node(sc, j->nodes.v[k]);
            if (sn)
                w->loom_cpus[sn - sc->nodes] += j->req.cpus_per_node;
        }
        end = (double)(j->start_time ? j->start_time : (time_t)w->now) +
              (double)j->req.walltime_s;
        if ((end > w->now && end <= w->start) ||
            !wanted_of(w->f, w->c, w->rq, &j->nodes, nodes, sizeof(nodes),
                       w->seen))
            continue;
        time_format((time_t)end, until);
        if (end > w->now)
            item(w, "job %lld holds %s until %s", (long long)j->id, nodes,
                 until);
        else
            item(w, "job %lld holds %s (past its walltime)",
                 (long long)j->id, nodes);
    }
}

/* Open reservations on wanted nodes that overlap the window. */
static void resvs_in_way(struct way *w)
{
    char nodes[64], from[32], until[32];

    for (size_t i = 0; i < S.n_resv; i++) {
        const struct resv *r = S.resv[i];
        time_t rs = r->hold_from && r->hold_from < r->start ? r->hold_from
                                                           : r->start;
        if ((r->state != RESV_PLANNED && r->state != RESV_ACTIVE) ||
            strcmp(r->cluster, w->f->cl[w->c].name) || (double)rs >= w->end ||
            (double)r->end <= w->start ||
            !wanted_of(w->f, w->c, w->rq, &r->nodes, nodes, sizeof(nodes),
                       w->seen))
            continue;
        time_format(rs, from);
        time_format(r->end, until);
        item(w, "reservation %lld holds %s from %s until %s",
             (long long)r->id, nodes, from, until);
    }
}

/* Wanted nodes that no job or reservation of Loom's holds but that take
 * nothing: down, drained, in maintenance, or busy with work the cluster
 * runs beside Loom. */
static void nodes_in_way(struct way *w)
{
    const struct scluster *sc = w->f->snap->clusters[w->c];

    for (size_t i = 0; i < sc->n_nodes; i++) {
        const struct snode *n = &sc->nodes[i];
        if (w->seen[i] || !wanted(w->f, w->c, w->rq, n->name))
            continue;
        if (!snode_usable(n))
            item(w, "%s is %s", n->name, n->state);
        else if (n->cpus_alloc > w->loom_cpus[i])
            item(w, "%s runs work that the cluster started beside Loom",
                 n->name);
    }
}

void sched_resv_in_way(const struct fabric *f, size_t c,
                       const struct resv_req *rq, double start, double end,
                       char *why, size_t size)
{
    struct way w = {f, c, rq, start, end, time_real(),
                    calloc(f->cl[c].n_nodes + 1, 1),
                    calloc(f->cl[c].n_nodes + 1, sizeof(long)),
                    {why, size, 0}, 0};
    char from[32], until[32];

    why[0] = '\0';
    time_format((time_t)start, from);
    time_format((time_t)end, until);
    add(&w.l, "from %s to %s, ", from, until);
    if (w.seen && w.loom_cpus) {
        jobs_in_way(&w);
        resvs_in_way(&w);
        nodes_in_way(&w);
    }
    if (!w.items)
        add(&w.l, "its nodes are not all free");
    else if (w.items > WHY_MAX_ITEMS)
        add(&w.l, "; and %d more", w.items - WHY_MAX_ITEMS);
    if (rq->nodes.n)
        add(&w.l, "; %s", rq->maint ? "\"force\": true (admin) takes the "
                                      "window anyway, cancelling the jobs in "
                                      "the way"
                                    : "a maintenance request with \"force\": "
                                      "true (admin) takes the window anyway, "
                                      "cancelling the jobs in the way");
    free(w.seen);
    free(w.loom_cpus);
}
