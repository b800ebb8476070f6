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
    free(pn->floor);
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
    pn->floor_fits = 0;
    if ((i = split_at(pn, start)) == (size_t)-1)
        return -1;
    k = pn->n;
    if (end < PLAN_FOREVER && (k = split_at(pn, end)) == (size_t)-1)
        return -1;
    if (pn->floor && (u->cpus < 0 || u->gpus < 0 || u->memory_mb < 0)) {
        free(pn->floor); /* given back: a class may fit earlier */
        pn->floor = NULL;
    }
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
    pn->floor_fits = 0;
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

/* The earliest t in [t0, limit] at which the node gives need for dur, or
 * PLAN_FOREVER; *ruled gets how far the search ruled out every start from
 * t0 on (the start found, the first past limit, or PLAN_FOREVER). */
static double scan(const struct prof_node *pn, double t0, double dur,
                   const struct prof_need *need, double limit, double *ruled)
{
    const struct prof_resv *own = NULL, *r;
    double t = t0 < pn->st[0].t ? pn->st[0].t : t0;
    /* the cpus a step must have to begin a window (a window of no time
     * holds no step: any may begin it) */
    int cpus = dur <= 0     ? INT_MIN :
               need->whole ? pn->def->cpus : need->use.cpus;
    size_t j, k;

    *ruled = PLAN_FOREVER;
    if (need->member) {
        if (!(own = resv_find(pn, need->member)))
            return PLAN_FOREVER;
        if (t < own->start)
            t = own->start;
    }
    j = step_at(pn, t);
    for (;;) {
        if (t >= PLAN_FOREVER || (own && t + dur > own->end))
            return PLAN_FOREVER;
        if (t > limit) {
            *ruled = t;
            return PLAN_FOREVER;
        }
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
        if (k == pn->n || pn->st[k].t >= t + dur) {
            *ruled = t;
            return t;
        }
        for (k++; k < pn->n && pn->st[k].cpus < cpus; k = pn->st[k].up)
            ;
        if (k == pn->n)
            return PLAN_FOREVER; /* short for ever after */
        t = pn->st[k].t;
        j = k;
    }
}

double prof_earliest(const struct prof_node *pn, double t0, double dur,
                     const struct prof_need *need, double limit)
{
    double ruled;

    return scan(pn, t0, dur, need, limit, &ruled);
}

_Static_assert(PROF_CPU_CLASSES * PROF_DUR_CLASSES <= 32,
               "a class's bit in floor_fits");

/* The time classes' least time, in seconds. */
static const double dur_class[PROF_DUR_CLASSES] = {1, 900, 3600, 14400,
                                                   43200};

/* The least cpus of cpu class k on a node of node_cpus (at least 1). */
static int cpu_class(int node_cpus, int k)
{
    static const int shift[PROF_CPU_CLASSES] = {31, 3, 1, 0};
    int c = k == 0 ? 1 : node_cpus >> shift[k];

    return c < 1 ? 1 : c;
}

int prof_class(int node_cpus, const struct prof_need *need, double dur)
{
    int k = PROF_CPU_CLASSES - 1, d = PROF_DUR_CLASSES - 1;
    int cpus = need->whole ? node_cpus : need->use.cpus;

    /* inside a reservation a node gives what it gives no one else: not a
     * larger need's case */
    if (need->member || cpus < 1 || dur < dur_class[0])
        return -1;
    while (cpu_class(node_cpus, k) > cpus)
        k--;
    while (dur_class[d] > dur)
        d--;
    return k * PROF_DUR_CLASSES + d;
}

double prof_earliest_floor(struct prof_node *pn, int cls, double t0,
                           double dur, const struct prof_need *need,
                           double limit)
{
    size_t n = PROF_CPU_CLASSES * PROF_DUR_CLASSES;
    struct prof_need in = {{0, 0, 0}, 0, 0};
    double *f, ruled;

    if (!pn->floor) {
        if (!(pn->floor = malloc(n * sizeof(*pn->floor))))
            return scan(pn, t0, dur, need, limit, &ruled);
        for (size_t i = 0; i < n; i++)
            pn->floor[i] = pn->st[0].t; /* nothing ruled out yet */
    }
    f = &pn->floor[cls];
    /* move the class's floor on, up to limit (unless it is a start that
     * fits, and nothing was taken since) */
    if (*f <= limit && !(pn->floor_fits >> cls & 1)) {
        in.use.cpus = cpu_class(pn->def->cpus, cls / PROF_DUR_CLASSES);
        if (scan(pn, *f, dur_class[cls % PROF_DUR_CLASSES], &in, limit,
                 &ruled) < PLAN_FOREVER)
            pn->floor_fits |= (uint32_t)1 << cls;
        *f = ruled;
        if (ruled > limit)
            return PLAN_FOREVER;
    }
    return scan(pn, t0 < *f ? *f : t0, dur, need, limit, &ruled);
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
