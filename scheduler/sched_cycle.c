/* sched_cycle.c - a scheduling cycle: the queue in policy order through
 * the planner; what it decides is committed, then carried out. */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hmap.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/planner.h"
#include "scheduler/sched_plan.h"
#include "scheduler/sched_state.h"

struct entry {
    struct job *j;
    double total;
};

static int by_fifo(const void *a, const void *b)
{
    const struct job *x = ((const struct entry *)a)->j;
    const struct job *y = ((const struct entry *)b)->j;

    if (x->submit_time != y->submit_time)
        return x->submit_time < y->submit_time ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int by_priority(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;

    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return by_fifo(a, b);
}

/* The waiting jobs, each once, in policy order; S.pending is compacted to
 * them. Under the priority policy each gets its factors. */
static struct entry *queue_order(const struct fabric *f, double now,
                                 size_t *n_out)
{
    struct entry *q = malloc((S.n_pending + 1) * sizeof(*q));
    struct hmap fresh; /* waiting owners with no past usage */
    size_t n = 0;
    int prio = S.conf.policy == LOOM_ORDER_PRIORITY;

    if (!q)
        return NULL;
    hmap_init(&fresh);
    for (size_t i = 0; i < S.n_pending; i++) {
        struct job *j = sched_job(S.pending[i]);
        if (!j || j->state != JOB_PENDING || j->seen_queue)
            continue;
        j->seen_queue = 1;
        q[n++] = (struct entry){j, 0};
        if (prio && prio_usage_share(S.fs, j->owner, now) == 0 &&
            !hmap_get(&fresh, j->owner))
            hmap_put(&fresh, j->owner, j);
    }
    for (size_t i = 0; i < n; i++) {
        struct job *j = q[i].j;
        j->seen_queue = 0;
        S.pending[i] = j->id;
        if (prio) {
            struct prio_factors pf;
            prio_compute(&S.conf.weights, now, (double)j->submit_time,
                         j->priority,
                         (long)j->req.nodes * j->req.cpus_per_node, f->cpus,
                         prio_usage_share(S.fs, j->owner, now),
                         prio_usage_owners(S.fs) + fresh.n, &pf);
            j->plan.age = pf.age;
            j->plan.fairshare = pf.fairshare;
            j->plan.size = pf.size;
            j->plan.priority = pf.priority;
            q[i].total = j->plan.total = pf.total;
        }
    }
    hmap_fini(&fresh);
    S.n_pending = n;
    for (size_t i = 1; i < n; i++) /* mostly in order already */
        if ((prio ? by_priority : by_fifo)(&q[i - 1], &q[i]) > 0) {
            qsort(q, n, sizeof(*q), prio ? by_priority : by_fifo);
            break;
        }
    *n_out = n;
    return q;
}

void sched_assign(struct job *j, const char *cluster, struct strv *nodes)
{
    j->state = JOB_STARTING;
    job_set_str(&j->cluster, cluster);
    strv_fini(&j->nodes);
    j->nodes = *nodes;
    memset(nodes, 0, sizeof(*nodes));
    job_set_str(&j->reason, NULL);
    free(j->plan.planned_cluster);
    memset(&j->plan, 0, sizeof(j->plan));
    usage_apply(&S.usage, j, 1);
    sched_touch(j);
    sched_start_later(j, 0);
}

static int differs(double a, double b)
{
    return fabs(a - b) > 5e-4;
}

/* Show what the cycle said of a waiting job; re-render only on a change. */
static void show_wait(const struct fabric *f, struct job *j,
                      const struct plan_out *o, int position, int factors)
{
    time_t planned = o->planned ? (time_t)o->planned_start : 0;
    const char *cl = o->planned ? f->cl[o->cluster].name : NULL;
    struct job_plan *p = &j->plan;
    int changed = 0;

    if (p->planned_start != planned || p->position != position ||
        (cl == NULL) != (p->planned_cluster == NULL) ||
        (cl && strcmp(cl, p->planned_cluster)) ||
        !j->reason || strcmp(j->reason, o->reason) ||
        p->has_factors != factors) {
        changed = 1;
        p->planned_start = planned;
        p->position = position;
        job_set_str(&p->planned_cluster, cl);
        job_set_str(&j->reason, o->reason);
    }
    if (factors && (differs(p->total, p->shown_total) || changed)) {
        p->shown_total = p->total;
        changed = 1;
    }
    p->has_factors = factors;
    if (changed)
        sched_view(j);
}

/* Begin a cycle: the queue in policy order and the plan of the fabric,
 * handed to the planner thread. 1 when a cycle is under way, 0 when there
 * was nothing to plan. */
int sched_cycle(void)
{
    struct plan_work *w = calloc(1, sizeof(*w));
    struct entry *q = NULL;
    double now = time_real(), t0 = time_mono();
    size_t n = 0;

    S.need_cycle = 0;
    sched_resv_tick((time_t)now);
    if (!w || fabric_build(&w->f) < 0)
        goto out;
    if (!(q = queue_order(&w->f, now, &n)) || n == 0)
        goto out;
    w->n = n;
    w->cfg = S.conf.plan;
    w->resv_gen = S.resv_gen;
    w->pj = malloc(n * sizeof(*w->pj));
    w->ids = malloc(n * sizeof(*w->ids));
    w->out = calloc(n, sizeof(*w->out));
    if (!w->pj || !w->ids || !w->out ||
        !(w->p = fabric_plan(&w->f, now, 0))) {
        log_err("scheduling cycle: out of memory; the next one tries again");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        fabric_job(q[i].j, &w->pj[i]);
        w->ids[i] = q[i].j->id;
    }
    free(q);
    w->build_ms = (time_mono() - t0) * 1000;
    planner_post(w);
    return 1;
out:
    free(q);
    plan_work_free(w);
    return 0;
}

/* Is job j (as planned) still free to start on these nodes? Between the
 * plan and now, other starts (by an external scheduler) may have taken
 * them. */
static int still_fits(const struct plan_work *w, const struct job *j,
                      const struct plan_out *o, struct strv *nodes)
{
    const struct plan_cluster *c = &w->f.cl[o->cluster];
    struct snapshot *s = snapshot_get();
    int ok;

    for (size_t k = 0; k < o->n_nodes; k++)
        if (strv_push(nodes, c->nodes[o->nodes[k]].name) < 0) {
            snapshot_put(s);
            return 0;
        }
    ok = fcfs_nodes_fit(s, &S.usage, j, c->name, nodes);
    snapshot_put(s);
    return ok;
}

/* The planner's answer: start what it says (if still so), show the rest
 * what it waits for. A reservation made meanwhile voids the plan. */
void sched_cycle_done(struct plan_work *w)
{
    double t0 = time_mono(), ms;

    if (w->resv_gen != S.resv_gen) {
        S.need_cycle = 1;
        return;
    }
    for (size_t i = 0; i < w->n; i++) {
        struct job *j = sched_job(w->ids[i]);
        int within = i < w->cfg.depth;
        if (!j || j->state != JOB_PENDING)
            continue; /* it changed meanwhile */
        if (w->out[i].start) {
            struct strv nodes = {0};
            if (still_fits(w, j, &w->out[i], &nodes))
                sched_assign(j, w->f.cl[w->out[i].cluster].name, &nodes);
            else
                S.need_cycle = 1;
            strv_fini(&nodes);
        } else {
            show_wait(&w->f, j, &w->out[i], within ? (int)i + 1 : 0,
                      within && S.conf.policy == LOOM_ORDER_PRIORITY);
        }
    }
    S.cycle_build_ms = w->build_ms;
    S.cycle_plan_ms = w->plan_ms;
    S.cycle_apply_ms = (time_mono() - t0) * 1000;
    ms = w->build_ms + w->plan_ms + S.cycle_apply_ms;
    S.cycles++;
    S.cycle_last_ms = ms;
    S.cycle_sum_ms += ms;
    if (ms > S.cycle_max_ms)
        S.cycle_max_ms = ms;
}

int sched_feasible(const struct job *j, struct loom_error *err)
{
    struct fabric f;
    struct plan_job pj;
    char why[256];
    size_t c;
    int ok;

    if (j->req.reservation) {
        const struct resv *r = sched_resv_find(j->req.reservation);
        if (!r || (r->state != RESV_PLANNED && r->state != RESV_ACTIVE))
            return loom_error_field(err, LOOM_EIMPOSSIBLE,
                                    "request.reservation", "reservation %lld "
                                    "does not exist or has ended",
                                    (long long)j->req.reservation);
        if (strcmp(r->owner, j->owner))
            return loom_error_field(err, LOOM_EPERM,
                                    "request.reservation", "reservation %lld "
                                    "belongs to %s", (long long)r->id,
                                    r->owner);
        if (r->end - r->start < j->req.walltime_s)
            return loom_error_field(err, LOOM_EIMPOSSIBLE,
                                    "request.walltime_s", "walltime %ld s "
                                    "does not fit in reservation %lld",
                                    j->req.walltime_s, (long long)r->id);
    }
    if (fabric_build(&f) < 0)
        return 0; /* no snapshot yet: the cycle will say */
    if (j->req.cluster && fabric_cluster(&f, j->req.cluster, &c) < 0) {
        fabric_fini(&f);
        return loom_error_field(err, LOOM_EIMPOSSIBLE, "request.cluster",
                                "there is no cluster named '%s'",
                                j->req.cluster);
    }
    fabric_job(j, &pj);
    pj.reservation = 0; /* any cluster: the reservation was checked above */
    ok = plan_feasible(f.cl, f.n, &pj, why, sizeof(why));
    fabric_fini(&f);
    if (!ok)
        return loom_error_set(err, LOOM_EIMPOSSIBLE, "no cluster could ever "
                              "run this job: %s", why);
    return 0;
}

int sched_check_start(const struct job *j, const char *cluster,
                      const struct strv *nodes, struct loom_error *err)
{
    struct fabric f;
    struct plan *p = NULL;
    struct plan_job pj;
    size_t c, *idx = NULL;
    char why[256];
    int rc = -1;

    if (fabric_build(&f) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "no cluster has been "
                              "polled yet");
    if (fabric_cluster(&f, cluster, &c) < 0) {
        loom_error_field(err, LOOM_ENOENT, "cluster", "there is no cluster "
                         "named '%s'", cluster);
        goto out;
    }
    if (!(idx = malloc((nodes->n + 1) * sizeof(*idx))) ||
        !(p = fabric_plan(&f, time_real(), 0))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (fabric_nodes(&f, c, nodes, idx) < 0) {
        loom_error_field(err, LOOM_ENOENT, "nodes", "cluster %s has no such "
                         "node", cluster);
        goto out;
    }
    fabric_job(j, &pj);
    if (!plan_fits_nodes(p, &pj, c, idx, nodes->n, why, sizeof(why))) {
        loom_error_set(err, LOOM_ECONFLICT, "cannot start job %lld on "
                       "cluster %s: %s", (long long)j->id, cluster, why);
        goto out;
    }
    rc = 0;
out:
    free(idx);
    plan_destroy(p);
    fabric_fini(&f);
    return rc;
}

void sched_charge(const struct job *j)
{
    if (j->start_time && j->end_time > j->start_time &&
        prio_usage_add(S.fs, j->owner,
                       (double)(j->end_time - j->start_time) * j->req.nodes *
                           j->req.cpus_per_node,
                       (double)j->end_time) < 0)
        log_err("job=%lld: out of memory charging its use",
                (long long)j->id);
}
