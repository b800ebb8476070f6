/* waitq.c - the waiting queue kept between cycles. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/waitq.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/sched_plan.h"
#include "scheduler/sched_state.h"

/* ---- entries ------------------------------------------------------------- */

static int grow(struct waitq *q, size_t need)
{
    void **const arrays[] = {(void **)&q->ids, (void **)&q->pj,
                             (void **)&q->out, (void **)&q->key,
                             (void **)&q->shown};
    const size_t elem[] = {sizeof(*q->ids), sizeof(*q->pj), sizeof(*q->out),
                           sizeof(*q->key), sizeof(*q->shown)};

    return sched_grow_alike(arrays, elem, 5, &q->cap, need);
}

/* The owner's index in the queue's owners, or UINT32_MAX when out of
 * memory. */
static uint32_t owner_ix(struct waitq *q, const char *owner)
{
    void *v = hmap_get(&q->owners.ix, owner);
    char *copy;

    if (v)
        return (uint32_t)((intptr_t)v - 1);
    if (q->owners.n >= UINT32_MAX - 1 ||
        sched_grow((void **)&q->owners.names, &q->owners.cap, q->owners.n + 1,
                   sizeof(*q->owners.names)) < 0 ||
        !(copy = strdup(owner)))
        return UINT32_MAX;
    if (hmap_put(&q->owners.ix, owner, (void *)(intptr_t)(q->owners.n + 1)) <
        0) {
        free(copy);
        return UINT32_MAX;
    }
    q->owners.names[q->owners.n] = copy;
    return (uint32_t)q->owners.n++;
}

/* Entry i from the job's record; what it shows is not known yet. */
static void fill(struct waitq *q, size_t i, const struct job *j)
{
    q->ids[i] = j->id;
    fabric_job(j, &q->pj[i]);
    memset(&q->key[i], 0, sizeof(q->key[i]));
    q->key[i].submit = j->submit_time;
    q->key[i].owner = j->owner;
    q->key[i].owner_ix = owner_ix(q, j->owner);
    q->key[i].cpus = (long)j->req.nodes * j->req.cpus_per_node;
    q->key[i].priority = j->priority;
    memset(&q->shown[i], 0, sizeof(q->shown[i]));
}

/* Entry `from` of src to entry `to` of dst (the out entries hold nothing
 * between cycles). */
static void move(struct waitq *dst, size_t to, const struct waitq *src,
                 size_t from)
{
    dst->ids[to] = src->ids[from];
    dst->pj[to] = src->pj[from];
    dst->key[to] = src->key[from];
    dst->shown[to] = src->shown[from];
}

static void hole(struct waitq *q, size_t i)
{
    S.jf[q->ids[i] - 1] &= (uint8_t)~(JF_QUEUED | JF_CHANGED);
    q->ids[i] = 0;
    q->pj[i].id = 0;
    q->n_holes++;
}

/* Drop the entries whose job left; take the changed ones again. Reads only
 * the flags of the others. */
static void drop_left(struct waitq *q)
{
    for (size_t i = 0; i < q->n; i++) {
        int64_t id = q->ids[i];
        uint8_t f;
        if (!id)
            continue;
        f = S.jf[id - 1];
        if (!(f & JF_PENDING)) {
            hole(q, i);
        } else if (f & JF_CHANGED) {
            const struct job *j = sched_job(id);
            if (!j || !job_ready(j)) {
                hole(q, i);
                continue;
            }
            fill(q, i, j);
            S.jf[id - 1] &= (uint8_t)~JF_CHANGED;
        }
    }
    q->n_left = 0;
}

/* Does j show shown_reason, and nothing of a plan (what a job beyond the
 * planning depth shows)? */
static int shows_only(const struct job *j, const char *shown_reason)
{
    return shown_reason && j->reason && !strcmp(j->reason, shown_reason) &&
           (!j->plan || (!j->plan->planned_start && !j->plan->position &&
                         !j->plan->planned_cluster &&
                         !j->plan->has_factors));
}

/* Append the jobs pushed since the last refresh. Those that show
 * shown_reason (if not NULL) and no plan are known to show it. */
static int add_pushed(struct waitq *q, const char *shown_reason)
{
    uint64_t text = shown_reason ? waitq_text(shown_reason, NULL) : 0;

    if (grow(q, q->n + S.n_pending) < 0)
        return -1;
    for (size_t i = 0; i < S.n_pending; i++) {
        const struct job *j = sched_job(S.pending[i]);
        if (!j || !job_ready(j) || (S.jf[j->id - 1] & JF_QUEUED))
            continue; /* gone again, waits for another job, or in the
                         queue already */
        fill(q, q->n, j);
        if (shows_only(j, shown_reason))
            q->shown[q->n].text = text;
        S.jf[j->id - 1] |= JF_QUEUED | JF_PENDING;
        S.jf[j->id - 1] &= (uint8_t)~JF_CHANGED;
        q->n++;
    }
    S.n_pending = 0;
    return 0;
}

/* ---- order --------------------------------------------------------------- */

struct sortent {
    double total;
    time_t submit;
    int64_t id;
    size_t at;
};

static int by_fifo(const struct sortent *x, const struct sortent *y)
{
    if (x->submit != y->submit)
        return x->submit < y->submit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int by_priority(const void *a, const void *b)
{
    const struct sortent *x = a, *y = b;

    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return by_fifo(x, y);
}

static int by_fifo_q(const void *a, const void *b)
{
    return by_fifo(a, b);
}

static struct sortent sortent_of(const struct waitq *q, size_t i)
{
    return (struct sortent){q->key[i].pf.total, q->key[i].submit, q->ids[i],
                            i};
}

/* Is every entry from `from` on in order after the one before it? */
static int in_order(const struct waitq *q, size_t from, int prio)
{
    struct sortent last = {0}, e;
    int have = 0;

    while (from > 0 && !q->ids[from - 1])
        from--;
    if (from > 0)
        from--; /* the last entry before: the new ones follow it */
    for (size_t i = from; i < q->n; i++) {
        if (!q->ids[i])
            continue;
        e = sortent_of(q, i);
        if (have && (prio ? by_priority(&last, &e) : by_fifo(&last, &e)) > 0)
            return 0;
        last = e;
        have = 1;
    }
    return 1;
}

/* Order the entries in full, dropping the holes. */
static int reorder(struct waitq *q, int prio)
{
    struct sortent *v = malloc((q->n + 1) * sizeof(*v));
    struct waitq old = *q;
    size_t n = 0;

    if (!v)
        return -1;
    for (size_t i = 0; i < q->n; i++)
        if (q->ids[i])
            v[n++] = sortent_of(q, i);
    qsort(v, n, sizeof(*v), prio ? by_priority : by_fifo_q);
    memset(q, 0, sizeof(*q));
    if (grow(q, old.cap) < 0) {
        waitq_fini(q);
        *q = old;
        free(v);
        return -1;
    }
    q->owners = old.owners; /* moved, not copied */
    memset(&old.owners, 0, sizeof(old.owners));
    for (size_t to = 0; to < n; to++)
        move(q, to, &old, v[to].at);
    q->n = n;
    free(v);
    old.n = 0; /* its out entries hold nothing */
    waitq_fini(&old);
    return 0;
}

/* Drop the holes in place, keeping the order. */
static void compact(struct waitq *q)
{
    size_t n = 0;

    for (size_t i = 0; i < q->n; i++) {
        if (!q->ids[i])
            continue;
        if (n != i)
            move(q, n, q, i);
        n++;
    }
    q->n = n;
    q->n_holes = 0;
}

/* An owner's share at now, and whether it counts as a fresh owner (no
 * past usage) not counted yet. */
static double share_of(const char *owner, double now, struct hmap *fresh)
{
    double share = prio_usage_share(S.fs, owner, now);

    if (share == 0 && !hmap_get(fresh, owner))
        hmap_put(fresh, owner, fresh); /* any non-NULL value */
    return share;
}

/* The priority policy's factors of every entry at now. Each owner's share
 * is looked up once (share[ix] < 0: not yet). */
static void factors(struct waitq *q, double now, long fabric_cpus)
{
    struct hmap fresh; /* waiting owners with no past usage */
    double *share = malloc((q->owners.n + 1) * sizeof(*share));

    hmap_init(&fresh);
    for (size_t o = 0; share && o < q->owners.n; o++)
        share[o] = -1;
    for (size_t i = 0; i < q->n; i++) {
        struct waitq_key *k = &q->key[i];
        if (!q->ids[i])
            continue;
        if (share && k->owner_ix < q->owners.n) {
            if (share[k->owner_ix] < 0)
                share[k->owner_ix] = share_of(q->owners.names[k->owner_ix],
                                              now, &fresh);
            k->pf.fairshare = share[k->owner_ix]; /* for the pass below */
        } else {
            k->pf.fairshare = share_of(k->owner, now, &fresh);
        }
    }
    for (size_t i = 0; i < q->n; i++) {
        struct waitq_key *k = &q->key[i];
        if (q->ids[i])
            prio_compute(&S.conf.weights, now, (double)k->submit, k->priority,
                         k->cpus, fabric_cpus, k->pf.fairshare,
                         prio_usage_owners(S.fs) + fresh.n, &k->pf);
    }
    hmap_fini(&fresh);
    free(share);
}

int waitq_refresh(struct waitq *q, double now, long fabric_cpus)
{
    int prio = S.conf.policy == LOOM_ORDER_PRIORITY;
    size_t first_new;

    drop_left(q);
    first_new = q->ordered < q->n ? q->ordered : q->n;
    if (add_pushed(q, NULL) < 0)
        return -1;
    if (prio)
        factors(q, now, fabric_cpus);
    /* FIFO: the entries before the new ones stay in order (submit times
     * do not change); priority: the factors moved, look at them all */
    if (q->reorder || !in_order(q, prio ? 0 : first_new, prio)) {
        if (reorder(q, prio) < 0) /* which drops the holes */
            return -1;
        q->reorder = 0;
    } else if (q->n_holes > 64 && q->n_holes * 8 > q->n) {
        compact(q);
    }
    q->ordered = q->n;
    return 0;
}

int waitq_prefill(struct waitq *q, const char *shown_reason)
{
    return add_pushed(q, shown_reason);
}

size_t waitq_waiting(const struct waitq *q)
{
    return q->n - q->n_holes - q->n_left + S.n_pending;
}

void waitq_forget_shown(struct waitq *q)
{
    for (size_t i = 0; i < q->n; i++) {
        q->shown[i].text = 0;
        q->pj[i].estimated = 0;
    }
}

uint64_t waitq_text(const char *reason, const char *cluster)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (const char *s = reason ? reason : ""; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h = (h ^ 0x1f) * 1099511628211ULL;
    for (const char *s = cluster ? cluster : ""; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h ? h : 1; /* 0 means "not known" */
}

void waitq_fini(struct waitq *q)
{
    if (q->out)
        plan_out_fini(q->out, q->n);
    free(q->ids);
    free(q->pj);
    free(q->out);
    free(q->key);
    free(q->shown);
    for (size_t o = 0; o < q->owners.n; o++)
        free(q->owners.names[o]);
    free(q->owners.names);
    hmap_fini(&q->owners.ix);
    memset(q, 0, sizeof(*q));
}
