/* profile.c - one node's availability over time. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/profile.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
    return vec_grow(v, cap, need, elem, 4);
}

int prof_node_init(struct prof_node *pn, const struct plan_node *def,
                   double now)
{
    memset(pn, 0, sizeof(*pn));
    pn->def = def;
    if (grow((void **)&pn->st, &pn->cap, 1, sizeof(*pn->st)) < 0)
        return -1;
    pn->st[0] = (struct prof_step){now, def->cpus, def->gpus, def->memory_mb,
                                   1, 1};
    pn->n = 1;
    return 0;
}

void prof_node_fini(struct prof_node *pn)
{
    if (!pn)
        return;
    free(pn->st);
    free(pn->rv);
    memset(pn, 0, sizeof(*pn));
}

/* Index of the step holding t (the last with st.t <= t); t >= st[0].t. */
static size_t step_at(const struct prof_node *pn, double t)
{
    size_t lo = 0, hi = pn->n; /* st[lo].t <= t < st[hi].t */

    if (hi == 1 || t < pn->st[1].t) /* most searches begin at now */
        return 0;

    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (pn->st[mid].t <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Make a step begin exactly at t; its index, or (size_t)-1 when OOM. */
static size_t split_at(struct prof_node *pn, double t)
{
    size_t i = step_at(pn, t);

    if (pn->st[i].t == t)
        return i;
    if (grow((void **)&pn->st, &pn->cap, pn->n + 1, sizeof(*pn->st)) < 0)
        return (size_t)-1;
    memmove(pn->st + i + 2, pn->st + i + 1,
            (pn->n - i - 1) * sizeof(*pn->st));
    pn->st[i + 1] = pn->st[i];
    pn->st[i + 1].t = t;
    pn->n++;
    return i + 1;
}

/* Each step's up and down, from the last step back: a step's chains are
 * followed past the later steps they pass over. */
static void link_chains(struct prof_node *pn)
{
    for (size_t i = pn->n; i-- > 0;) {
        const struct prof_step *s = &pn->st[i];
        size_t m = i + 1;
        while (m < pn->n && pn->st[m].cpus <= s->cpus)
            m = pn->st[m].up;
        pn->st[i].up = m;
        m = i + 1;
        while (m < pn->n && pn->st[m].cpus >= s->cpus &&
               pn->st[m].gpus >= s->gpus &&
               pn->st[m].memory_mb >= s->memory_mb)
            m = pn->st[m].down;
        pn->st[i].down = m;
    }
}

int prof_take(struct prof_node *pn, double start, double end,
              const struct plan_use *u)
{
    size_t i, k;

    if (start < pn->st[0].t)
        start = pn->st[0].t;
    if (end <= start)
        return 0;
    if ((i = split_at(pn, start)) == (size_t)-1)
        return -1;
    k = pn->n;
    if (end < PLAN_FOREVER && (k = split_at(pn, end)) == (size_t)-1)
        return -1;
    for (size_t j = i; j < k; j++) {
        pn->st[j].cpus -= u->cpus;
        pn->st[j].gpus -= u->gpus;
        pn->st[j].memory_mb -= u->memory_mb;
    }
    link_chains(pn);
    return 0;
}

int prof_add_resv(struct prof_node *pn, int64_t id, double start,
                  double end)
{
    if (grow((void **)&pn->rv, &pn->cap_rv, pn->n_rv + 1, sizeof(*pn->rv)) < 0)
        return -1;
    pn->rv[pn->n_rv++] = (struct prof_resv){id, start, end};
    return 0;
}

static int step_ok(const struct prof_node *pn, const struct prof_step *s,
                   const struct prof_need *need)
{
    if (need->whole)
        return s->cpus >= pn->def->cpus && s->gpus >= pn->def->gpus &&
               s->memory_mb >= pn->def->memory_mb;
    return s->cpus >= need->use.cpus && s->gpus >= need->use.gpus &&
           s->memory_mb >= need->use.memory_mb;
}

/* The reservation a window [t, t + dur) runs into, or NULL. A member's
 * own reservation does not count. */
static const struct prof_resv *resv_clash(const struct prof_node *pn,
                                          double t, double dur,
                                          int64_t member)
{
    for (size_t i = 0; i < pn->n_rv; i++)
        if (pn->rv[i].id != member && pn->rv[i].start < t + dur &&
            pn->rv[i].end > t)
            return &pn->rv[i];
    return NULL;
}

static const struct prof_resv *resv_find(const struct prof_node *pn,
                                         int64_t id)
{
    for (size_t i = 0; i < pn->n_rv; i++)
        if (pn->rv[i].id == id)
            return &pn->rv[i];
    return NULL;
}

/* The first step in [t, t + dur) that lacks what need asks, or n. */
static size_t short_step(const struct prof_node *pn, double t, double dur,
                         const struct prof_need *need)
{
    for (size_t j = step_at(pn, t); j < pn->n && pn->st[j].t < t + dur; j++)
        if (!step_ok(pn, &pn->st[j], need))
            return j;
    return pn->n;
}

int prof_fits(const struct prof_node *pn, double t, double dur,
              const struct prof_need *need)
{
    if (t < pn->st[0].t)
        return 0;
    if (need->member) {
        const struct prof_resv *r = resv_find(pn, need->member);
        if (!r || t < r->start || t + dur > r->end)
            return 0;
    }
    return !resv_clash(pn, t, dur, need->member) &&
           short_step(pn, t, dur, need) == pn->n;
}

double prof_earliest(const struct prof_node *pn, double t0, double dur,
                     const struct prof_need *need, double limit)
{
    const struct prof_resv *own = NULL, *r;
    double t = t0 < pn->st[0].t ? pn->st[0].t : t0;
    /* the cpus a step must have to begin a window (a window of no time
     * holds no step: any may begin it) */
    int cpus = dur <= 0     ? INT_MIN :
               need->whole ? pn->def->cpus : need->use.cpus;
    size_t j, k;

    if (need->member) {
        if (!(own = resv_find(pn, need->member)))
            return PLAN_FOREVER;
        if (t < own->start)
            t = own->start;
    }
    j = step_at(pn, t);
    for (;;) {
        if (t >= PLAN_FOREVER || t > limit || (own && t + dur > own->end))
            return PLAN_FOREVER;
        if ((r = resv_clash(pn, t, dur, need->member))) {
            t = r->end;
            j = step_at(pn, t);
            continue;
        }
        /* from the step holding t on, down the chain (the steps it passes
         * have room when the one before them has): the first one short
         * moves t past it, to the first later step with those cpus (up the
         * chain), and the scan goes on from there (nothing before is
         * looked at again) */
        for (k = j; k < pn->n && pn->st[k].t < t + dur; k = pn->st[k].down)
            if (!step_ok(pn, &pn->st[k], need))
                break;
        if (k == pn->n || pn->st[k].t >= t + dur)
            return t;
        for (k++; k < pn->n && pn->st[k].cpus < cpus; k = pn->st[k].up)
            ;
        if (k == pn->n)
            return PLAN_FOREVER; /* short for ever after */
        t = pn->st[k].t;
        j = k;
    }
}

int prof_free_now(const struct prof_node *pn)
{
    return pn->st[0].cpus;
}

double prof_free_from(const struct prof_node *pn)
{
    const struct prof_step *last = &pn->st[pn->n - 1];
    double t = last->t;

    if (last->cpus < pn->def->cpus || last->gpus < pn->def->gpus ||
        last->memory_mb < pn->def->memory_mb)
        return PLAN_FOREVER;
    for (size_t i = 0; i < pn->n_rv; i++)
        if (pn->rv[i].end > t)
            t = pn->rv[i].end;
    return t;
}
