/* simloop.c - the discrete-event loop of the replay and the property test:
 * events, one planner cycle per event time, starts and ends. */
/* SPDX-License-Identifier: MIT */
#include "tests/lib/simloop.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/hmap.h"

#define NEVER 1e300

struct sim {
    const struct sim_config *cfg;
    struct sim_job *jobs;
    size_t n;
    size_t *arrivals; /* indices by submit time */
    size_t next_arrival;
    size_t *heap; /* running jobs, a min-heap on end */
    size_t n_heap;
    size_t *queue; /* waiting jobs in arrival order */
    size_t n_queue;
    size_t *order; /* this cycle's planning order */
    struct plan_job *pj;
    struct plan_out *out;
    double *rtimes; /* reservation boundaries, sorted */
    size_t n_rtimes, next_rtime;
    struct prio_usage *usage;
    long fabric_cpus;
    struct sim_stats *st;
};

struct ranked {
    double total;
    size_t pos, idx;
};

static double ms_since(const struct timespec *a)
{
    struct timespec b;

    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) * 1e3 +
           (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

static const struct sim_job *cmp_jobs; /* for the sort by submit time */

static int cmp_submit(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    double sx = cmp_jobs[x].submit, sy = cmp_jobs[y].submit;

    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* ---- the heap of running jobs -------------------------------------------- */

static int heap_less(const struct sim *s, size_t a, size_t b)
{
    double ea = s->jobs[s->heap[a]].end, eb = s->jobs[s->heap[b]].end;

    return ea < eb || (ea == eb && s->heap[a] < s->heap[b]);
}

static void heap_swap(struct sim *s, size_t a, size_t b)
{
    size_t t = s->heap[a];

    s->heap[a] = s->heap[b];
    s->heap[b] = t;
}

static void heap_push(struct sim *s, size_t idx)
{
    size_t i = s->n_heap++;

    s->heap[i] = idx;
    while (i > 0 && heap_less(s, i, (i - 1) / 2)) {
        heap_swap(s, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static size_t heap_pop(struct sim *s)
{
    size_t top = s->heap[0], i = 0;

    s->heap[0] = s->heap[--s->n_heap];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;

        if (l < s->n_heap && heap_less(s, l, m))
            m = l;
        if (r < s->n_heap && heap_less(s, r, m))
            m = r;
        if (m == i)
            return top;
        heap_swap(s, i, m);
        i = m;
    }
}

/* ---- events -------------------------------------------------------------- */

static double next_event(const struct sim *s)
{
    double t = NEVER;

    if (s->next_arrival < s->n)
        t = s->jobs[s->arrivals[s->next_arrival]].submit;
    if (s->n_heap && s->jobs[s->heap[0]].end < t)
        t = s->jobs[s->heap[0]].end;
    if (s->next_rtime < s->n_rtimes && s->rtimes[s->next_rtime] < t)
        t = s->rtimes[s->next_rtime];
    return t;
}

static long job_cpus(const struct sim_job *j)
{
    return (long)(j->req.nodes > 0 ? j->req.nodes : 1) * j->req.per_node.cpus;
}

static const char *owner_of(const struct sim_job *j)
{
    return j->owner ? j->owner : "";
}

static int end_jobs(struct sim *s, double now, struct loom_error *err)
{
    while (s->n_heap && s->jobs[s->heap[0]].end <= now) {
        struct sim_job *j = &s->jobs[heap_pop(s)];

        j->state = SIM_DONE;
        if (s->usage &&
            prio_usage_add(s->usage, owner_of(j),
                           (double)job_cpus(j) * (j->end - j->start),
                           j->end) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

static void arrive_jobs(struct sim *s, double now)
{
    char why[256];

    while (s->next_arrival < s->n &&
           s->jobs[s->arrivals[s->next_arrival]].submit <= now) {
        size_t idx = s->arrivals[s->next_arrival++];
        struct sim_job *j = &s->jobs[idx];

        if (!plan_feasible(s->cfg->clusters, s->cfg->n_clusters, &j->req, why,
                           sizeof(why))) {
            j->state = SIM_REJECTED;
            s->st->rejected++;
            continue;
        }
        j->state = SIM_WAITING;
        s->queue[s->n_queue++] = idx;
    }
    while (s->next_rtime < s->n_rtimes && s->rtimes[s->next_rtime] <= now)
        s->next_rtime++;
}

/* ---- one cycle ----------------------------------------------------------- */

/* Owners with usage or waiting jobs (at least 1). */
static size_t owners_count(struct sim *s, double now, int *oom)
{
    struct hmap fresh;
    size_t n = prio_usage_owners(s->usage);

    hmap_init(&fresh);
    for (size_t k = 0; k < s->n_queue; k++) {
        const char *o = owner_of(&s->jobs[s->queue[k]]);

        if (prio_usage_share(s->usage, o, now) > 0 || hmap_get(&fresh, o))
            continue;
        if (hmap_put(&fresh, o, (void *)o) < 0)
            *oom = 1;
        n++;
    }
    hmap_fini(&fresh);
    return n ? n : 1;
}

static int order_queue(struct sim *s, double now)
{
    struct ranked *rk;
    size_t n_owners;
    int oom = 0;

    memcpy(s->order, s->queue, s->n_queue * sizeof(*s->order));
    if (s->cfg->order != SIM_PRIORITY || s->n_queue < 2)
        return 0;
    if (!(rk = malloc(s->n_queue * sizeof(*rk))))
        return -1;
    n_owners = owners_count(s, now, &oom);
    for (size_t k = 0; k < s->n_queue; k++) {
        const struct sim_job *j = &s->jobs[s->queue[k]];
        struct prio_factors f;

        prio_compute(&s->cfg->weights, now, j->submit, j->priority, job_cpus(j),
                     s->fabric_cpus,
                     prio_usage_share(s->usage, owner_of(j), now), n_owners,
                     &f);
        rk[k] = (struct ranked){f.total, k, s->queue[k]};
    }
    qsort(rk, s->n_queue, sizeof(*rk), cmp_ranked);
    for (size_t k = 0; k < s->n_queue; k++)
        s->order[k] = rk[k].idx;
    free(rk);
    return oom ? -1 : 0;
}

static struct plan *build_plan(struct sim *s, double now)
{
    const struct sim_config *cfg = s->cfg;
    struct plan *p = plan_create(cfg->clusters, cfg->n_clusters, now);

    if (!p)
        return NULL;
    for (size_t h = 0; h < s->n_heap; h++) {
        const struct sim_job *j = &s->jobs[s->heap[h]];
        struct plan_alloc a = {
            .cluster = j->cluster,
            .nodes = j->nodes,
            .n_nodes = j->n_nodes,
            .per_node = j->req.per_node,
            .end = j->start + (double)j->req.walltime_s,
        };

        if (plan_add_alloc(p, &a) < 0)
            goto error;
    }
    for (size_t r = 0; r < cfg->n_resv; r++)
        if (plan_add_resv(p, &cfg->resv[r]) < 0)
            goto error;
    return p;
error:
    plan_destroy(p);
    return NULL;
}

static void start_job(struct sim *s, size_t idx, struct plan_out *o, double now)
{
    struct sim_job *j = &s->jobs[idx];
    double wall = (double)j->req.walltime_s;

    j->state = SIM_RUNNING;
    j->start = now;
    j->end = j->run >= wall ? now + wall : now + j->run;
    j->cluster = o->cluster;
    j->nodes = o->nodes; /* taken from the plan's answer */
    j->n_nodes = o->n_nodes;
    o->nodes = NULL;
    heap_push(s, idx);
    s->st->started++;
}

static int cycle(struct sim *s, double now, struct loom_error *err)
{
    struct timespec t0, t2;
    struct plan *p;
    double ms;
    size_t n = s->n_queue, kept = 0;
    int stop = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!(p = build_plan(s, now)) || order_queue(s, now) < 0)
        goto oom;
    for (size_t k = 0; k < n; k++)
        s->pj[k] = s->jobs[s->order[k]].req;
    if (plan_run(p, &s->cfg->plan, s->pj, n, s->out) < 0)
        goto oom;
    ms = ms_since(&t0);
    if (s->cfg->cycle_cb) {
        struct sim_cycle c = {now, s->jobs, s->n, s->order, s->out, n};

        stop = s->cfg->cycle_cb(s->cfg->cb_arg, &c);
    }
    for (size_t k = 0; k < n && !stop; k++)
        if (s->out[k].start)
            start_job(s, s->order[k], &s->out[k], now);
    for (size_t k = 0; k < n; k++) /* the rest, in arrival order */
        if (s->jobs[s->queue[k]].state == SIM_WAITING)
            s->queue[kept++] = s->queue[k];
    s->n_queue = kept;
    clock_gettime(CLOCK_MONOTONIC, &t2);
    plan_out_fini(s->out, n);
    plan_destroy(p);
    ms += ms_since(&t2);
    s->st->cycles++;
    s->st->cycle_ms_total += ms;
    if (ms > s->st->cycle_ms_max)
        s->st->cycle_ms_max = ms;
    if (stop)
        return loom_error_set(err, LOOM_EINTERNAL,
                              "stopped by the cycle hook at t=%.0f", now);
    return 0;
oom:
    plan_out_fini(s->out, n);
    plan_destroy(p);
    return loom_error_set(err, LOOM_EINTERNAL,
                          "planner: out of memory at t=%.0f", now);
}

/* ---- the run ------------------------------------------------------------- */

static void sim_fini(struct sim *s)
{
    free(s->arrivals);
    free(s->heap);
    free(s->queue);
    free(s->order);
    free(s->pj);
    free(s->out);
    free(s->rtimes);
    prio_usage_destroy(s->usage);
}

static int sim_init(struct sim *s, const struct sim_config *cfg,
                    struct sim_job *jobs, size_t n, struct sim_stats *st)
{
    size_t m = n ? n : 1;

    memset(s, 0, sizeof(*s));
    s->cfg = cfg;
    s->jobs = jobs;
    s->n = n;
    s->st = st;
    s->arrivals = malloc(m * sizeof(*s->arrivals));
    s->heap = malloc(m * sizeof(*s->heap));
    s->queue = malloc(m * sizeof(*s->queue));
    s->order = malloc(m * sizeof(*s->order));
    s->pj = malloc(m * sizeof(*s->pj));
    s->out = calloc(m, sizeof(*s->out));
    s->rtimes = malloc((2 * cfg->n_resv + 1) * sizeof(*s->rtimes));
    if (cfg->order == SIM_PRIORITY)
        s->usage = prio_usage_create(cfg->weights.half_life_s);
    if (!s->arrivals || !s->heap || !s->queue || !s->order || !s->pj ||
        !s->out || !s->rtimes || (cfg->order == SIM_PRIORITY && !s->usage))
        return -1;
    for (size_t i = 0; i < n; i++) {
        s->arrivals[i] = i;
        jobs[i].state = SIM_FUTURE;
        jobs[i].start = jobs[i].end = -1;
        jobs[i].nodes = NULL;
        jobs[i].n_nodes = 0;
    }
    cmp_jobs = jobs;
    qsort(s->arrivals, n, sizeof(*s->arrivals), cmp_submit);
    for (size_t r = 0; r < cfg->n_resv; r++) {
        s->rtimes[s->n_rtimes++] = cfg->resv[r].start;
        s->rtimes[s->n_rtimes++] = cfg->resv[r].end;
    }
    qsort(s->rtimes, s->n_rtimes, sizeof(*s->rtimes), cmp_double);
    for (size_t c = 0; c < cfg->n_clusters; c++)
        for (size_t i = 0; i < cfg->clusters[c].n_nodes; i++)
            if (cfg->clusters[c].nodes[i].usable)
                s->fabric_cpus += cfg->clusters[c].nodes[i].cpus;
    return 0;
}

int simloop_run(const struct sim_config *cfg, struct sim_job *jobs, size_t n,
                struct sim_stats *st, struct loom_error *err)
{
    struct sim s;
    double now;
    int r = 0;

    memset(st, 0, sizeof(*st));
    if (sim_init(&s, cfg, jobs, n, st) < 0) {
        sim_fini(&s);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    while ((now = next_event(&s)) < NEVER) {
        if ((r = end_jobs(&s, now, err)) < 0)
            break;
        arrive_jobs(&s, now);
        if (s.n_queue && (r = cycle(&s, now, err)) < 0)
            break;
    }
    st->unstarted = s.n_queue;
    sim_fini(&s);
    return r;
}

void simloop_fini(struct sim_job *jobs, size_t n)
{
    for (size_t i = 0; jobs && i < n; i++) {
        free(jobs[i].nodes);
        jobs[i].nodes = NULL;
        jobs[i].n_nodes = 0;
    }
}
