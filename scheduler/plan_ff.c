/* plan_ff.c - a cluster's usable nodes in the order they are free for ever,
 * kept in order as the plan takes nodes. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan_state.h"

/* The order is a list of short sorted blocks: a node whose time changes
 * leaves its block and joins another, moving at most a block's entries.
 * A reservation moves a node from the front of the order to far behind,
 * and a conservative cycle makes tens of thousands of them: in one sorted
 * array each move shifted most of the cluster's nodes (a third of such a
 * cycle on 1,000-node clusters). Blocks are filled half at first, so that
 * most moves split none. */

static int by_ff(const struct ffent *x, const struct ffent *y)
{
    if (x->ff != y->ff)
        return x->ff < y->ff ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

/* Sort v[0..n) by_ff, merging runs bottom-up through tmp (n entries):
 * qsort calls back for every comparison, which showed on 16 clusters of
 * 1,000 nodes sorted every cycle. */
static void ff_sort(struct ffent *v, struct ffent *tmp, size_t n)
{
    struct ffent *from = v, *to = tmp, *swap;

    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n;
            size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                to[k++] = by_ff(&from[b], &from[a]) < 0 ? from[b++]
                                                         : from[a++];
            while (a < mid)
                to[k++] = from[a++];
            while (b < hi)
                to[k++] = from[b++];
        }
        swap = from;
        from = to;
        to = swap;
    }
    if (from != v)
        memcpy(v, from, n * sizeof(*v));
}

void plan_ff_fini(struct pcl *pc)
{
    for (size_t b = 0; b < pc->n_ffb; b++)
        free(pc->ffb[b]);
    free(pc->ffb);
    free(pc->ffkey);
    pc->ffb = NULL;
    pc->ffkey = NULL;
    pc->n_ffb = pc->cap_ffb = 0;
    pc->ff_ok = 0;
}

/* Room for one more block pointer. 0, or -1 when out of memory. */
static int room_for_block(struct pcl *pc)
{
    struct ffblock **v;
    size_t cap;

    if (pc->n_ffb < pc->cap_ffb)
        return 0;
    cap = pc->cap_ffb ? 2 * pc->cap_ffb : 8;
    if (!(v = realloc(pc->ffb, cap * sizeof(*v))))
        return -1;
    pc->ffb = v;
    pc->cap_ffb = cap;
    return 0;
}

int plan_ff_build(struct plan *p, size_t c)
{
    struct pcl *pc = &p->cl[c];
    size_t n = pc->def->n_nodes, m = 0;
    struct ffent *v = NULL, *tmp = NULL;

    if (pc->ff_ok)
        return 0;
    plan_ff_fini(pc);
    if (!(pc->ffkey = malloc((n + 1) * sizeof(*pc->ffkey))) ||
        !(v = malloc((n + 1) * sizeof(*v))) ||
        !(tmp = malloc((n + 1) * sizeof(*tmp))))
        goto error;
    for (size_t i = 0; i < n; i++)
        if (pc->def->nodes[i].usable) {
            pc->ffkey[i] = prof_free_from(&pc->nodes[i]);
            v[m++] = (struct ffent){pc->ffkey[i], i};
        }
    ff_sort(v, tmp, m);
    for (size_t k = 0; k < m; k += PLAN_FF_BLOCK / 2) {
        struct ffblock *b;
        size_t len = m - k < PLAN_FF_BLOCK / 2 ? m - k : PLAN_FF_BLOCK / 2;
        if (room_for_block(pc) < 0 || !(b = malloc(sizeof(*b))))
            goto error;
        b->n = len;
        memcpy(b->e, &v[k], len * sizeof(*v));
        pc->ffb[pc->n_ffb++] = b;
    }
    free(v);
    free(tmp);
    pc->ff_ok = 1;
    return 0;
error:
    free(v);
    free(tmp);
    plan_ff_fini(pc);
    return -1;
}

/* The block that holds e, or would take it: the first whose last entry is
 * not before e (else the last block). */
static size_t block_of(const struct pcl *pc, const struct ffent *e)
{
    size_t lo = 0, hi = pc->n_ffb - 1;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct ffblock *b = pc->ffb[mid];
        if (by_ff(&b->e[b->n - 1], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The place in block b of the first entry not before e. */
static size_t place_in(const struct ffblock *b, const struct ffent *e)
{
    size_t lo = 0, hi = b->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (by_ff(&b->e[mid], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void remove_entry(struct pcl *pc, const struct ffent *e)
{
    size_t bi = block_of(pc, e);
    struct ffblock *b = pc->ffb[bi];
    size_t k = place_in(b, e);

    memmove(&b->e[k], &b->e[k + 1], (b->n - k - 1) * sizeof(b->e[0]));
    if (--b->n == 0 && pc->n_ffb > 1) { /* keep one block, even empty */
        free(b);
        memmove(&pc->ffb[bi], &pc->ffb[bi + 1],
                (pc->n_ffb - bi - 1) * sizeof(pc->ffb[0]));
        pc->n_ffb--;
    }
}

/* 0, or -1 when out of memory (e is then in no block). */
static int insert_entry(struct pcl *pc, const struct ffent *e)
{
    size_t bi = block_of(pc, e), k;
    struct ffblock *b = pc->ffb[bi], *nb;

    if (b->n == PLAN_FF_BLOCK) { /* split it in two halves */
        if (room_for_block(pc) < 0 || !(nb = malloc(sizeof(*nb))))
            return -1;
        nb->n = PLAN_FF_BLOCK / 2;
        memcpy(nb->e, &b->e[PLAN_FF_BLOCK / 2], nb->n * sizeof(b->e[0]));
        b->n = PLAN_FF_BLOCK / 2;
        memmove(&pc->ffb[bi + 2], &pc->ffb[bi + 1],
                (pc->n_ffb - bi - 1) * sizeof(pc->ffb[0]));
        pc->ffb[bi + 1] = nb;
        pc->n_ffb++;
        if (by_ff(&b->e[b->n - 1], e) < 0)
            b = nb;
    }
    k = place_in(b, e);
    memmove(&b->e[k + 1], &b->e[k], (b->n - k) * sizeof(b->e[0]));
    b->e[k] = *e;
    b->n++;
    return 0;
}

void plan_ff_update(struct pcl *pc, size_t i)
{
    struct ffent old, e;

    if (!pc->ff_ok || !pc->def->nodes[i].usable)
        return; /* no order yet, or not in it */
    old = (struct ffent){pc->ffkey[i], i};
    e = (struct ffent){prof_free_from(&pc->nodes[i]), i};
    if (e.ff == old.ff)
        return;
    remove_entry(pc, &old);
    pc->ffkey[i] = e.ff;
    if (insert_entry(pc, &e) < 0)
        plan_ff_fini(pc); /* out of memory: built again when next needed */
}
