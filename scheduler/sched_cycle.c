/* sched_cycle.c - a scheduling cycle: the queue in policy order through
 * the planner; what it decides is committed, then carried out. */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/metrics.h"
#include "core/timeutil.h"
#include "scheduler/planner.h"
#include "scheduler/sched_plan.h"
#include "scheduler/sched_state.h"

void sched_assign(struct job *j, const char *cluster, struct strv *nodes)
{
    /* its identity's account on that cluster, where it has one of its own */
    sched_acct_move(j, job_account_on(j, cluster));
    j->state = JOB_STARTING;
    job_set_str(&j->cluster, cluster);
    strv_fini(&j->nodes);
    j->nodes = *nodes;
    memset(nodes, 0, sizeof(*nodes));
    job_set_str(&j->reason, NULL);
    job_plan_drop(j);
    usage_apply(&S.usage, j, 1);
    sched_touch(j);
    sched_start_later(j, 0);
}

static int differs(double a, double b)
{
    return fabs(a - b) > 5e-4;
}

/* Show what the cycle said of a waiting job (factors: its priority
 * factors, or NULL); re-render only on a change. */
static void show_wait(struct job *j, const char *reason, const char *cl,
                      time_t planned, int position,
                      const struct prio_factors *factors)
{
    static const struct job_plan none;
    const struct job_plan *was = j->plan ? j->plan : &none;
    struct job_plan *p;
    int changed = 0;

    if (was->planned_start != planned || was->position != position ||
        (cl == NULL) != (was->planned_cluster == NULL) ||
        (cl && strcmp(cl, was->planned_cluster)) ||
        !j->reason || strcmp(j->reason, reason) ||
        was->has_factors != (factors != NULL))
        changed = 1;
    if (!planned && !position && !cl && !factors) {
        /* nothing of a plan (beyond the depth, held by a limit): most of
         * a long queue, which then holds no job_plan */
        job_plan_drop(j);
        if (changed) {
            job_set_str(&j->reason, reason);
            sched_view(j);
        }
        return;
    }
    if (!j->plan && !(j->plan = calloc(1, sizeof(*j->plan))))
        return; /* out of memory: it shows what it showed */
    p = j->plan;
    if (changed) {
        p->planned_start = planned;
        p->position = position;
        job_set_str(&p->planned_cluster, cl);
        job_set_str(&j->reason, reason);
    }
    if (factors) {
        p->age = factors->age;
        p->fairshare = factors->fairshare;
        p->size = factors->size;
        p->priority = factors->priority;
        p->total = factors->total;
        if (differs(p->total, p->shown_total) || changed) {
            p->shown_total = p->total;
            changed = 1;
        }
    }
    p->has_factors = factors != NULL;
    if (changed)
        sched_view(j);
}

/* Begin a cycle: the waiting queue brought up to date and the plan of the
 * fabric, handed to the planner thread. 1 when a cycle is under way, 0
 * when there was nothing to plan. */
int sched_cycle(int event)
{
    struct plan_work *w = calloc(1, sizeof(*w));
    double now = time_real(), t0 = time_mono(), c0 = time_thread_cpu();

    S.need_cycle = 0;
    sched_resv_tick((time_t)now);
    if (!w || fabric_build(&w->f) < 0)
        goto out;
    if (waitq_refresh(&S.wq, now, w->f.cpus) < 0 ||
        !(w->p = fabric_plan(&w->f, now, 0))) {
        log_err("scheduling cycle: out of memory; the next one tries again");
        goto out;
    }
    sched_patch_graveyard_free(); /* the queue's entries are filled anew */
    if (waitq_waiting(&S.wq) == 0)
        goto out;
    w->n = S.wq.n;
    w->cfg = S.conf.plan;
    w->cfg.room = sched_acct_room(&w->cfg.n_room);
    /* An event's cycle (a job ended, one was submitted) decides its starts
     * and the head's reservation as any cycle, but leaves the estimates
     * of the jobs behind the head as the last periodic cycle found them:
     * searching them again was most of its time, and an estimate takes
     * nothing from the plan. */
    w->cfg.keep_estimates = event && S.estimates_fresh &&
                            S.estimates_gen == S.resv_gen;
    if (!w->cfg.keep_estimates) {
        S.estimates_fresh = 1;
        S.estimates_gen = S.resv_gen;
    }
    w->resv_gen = S.resv_gen;
    w->pj = S.wq.pj;
    w->ids = S.wq.ids;
    w->out = S.wq.out;
    w->build_ms = (time_mono() - t0) * 1000;
    w->build_cpu_ms = (time_thread_cpu() - c0) * 1000;
    planner_post(w);
    return 1;
out:
    plan_work_free(w);
    return 0;
}

/* Is job j (as planned) still free to start on these nodes? Between the
 * plan and now, other starts (by an external scheduler) may have taken
 * them. */
static int still_fits(const struct plan_work *w, const struct job *j,
                      size_t cluster, const size_t *idx, size_t n,
                      struct strv *nodes)
{
    const struct plan_cluster *c = &w->f.cl[cluster];
    struct snapshot *s = snapshot_get();
    int ok;

    for (size_t k = 0; k < n; k++)
        if (strv_push(nodes, c->nodes[idx[k]].name) < 0) {
            snapshot_put(s);
            return 0;
        }
    ok = fcfs_nodes_fit(s, &S.usage, j, c->name, nodes);
    snapshot_put(s);
    return ok;
}

/* Does an entry show an estimate, which the next event's cycle may keep? */
static int shows_estimate(const struct waitq_shown *sh)
{
    return sh->text && sh->planned_start;
}

/* Show waiting entry i what the cycle said of it, unless it shows that
 * already (then its record is not read: 0). An estimate the cycle kept
 * (o->kept) stands; only its place in the queue may move. */
static int show_entry(const struct plan_work *w, size_t i, int position,
                       uint64_t beyond_text)
{
    const struct plan_out *o = &w->out[i];
    struct waitq_shown *sh = &S.wq.shown[i];
    const struct prio_factors *pf =
        position && S.conf.policy == LOOM_ORDER_PRIORITY ? &S.wq.key[i].pf
                                                         : NULL;
    const char *cl = o->planned ? w->f.cl[o->cluster].name : NULL;
    const char *reason = o->beyond ? SCHED_BEYOND_REASON : o->reason;
    char limited[160];
    struct waitq_shown now;
    struct job *j;
    int was_changed;

    if (o->limited) { /* a running limit: its account's, VO's, gateway's */
        sched_acct_why(o->limited, limited, sizeof(limited));
        reason = limited;
    }
    if (o->kept)
        now = (struct waitq_shown){sh->text, sh->planned_start, position,
                                  pf != NULL, pf ? pf->total : 0};
    else
        now = (struct waitq_shown){o->beyond ? beyond_text
                                             : waitq_text(reason, cl),
                                  o->planned ? (time_t)o->planned_start : 0,
                                  position, pf != NULL, pf ? pf->total : 0};

    if (sh->text == now.text && sh->planned_start == now.planned_start &&
        sh->position == now.position && sh->has_factors == now.has_factors &&
        (!pf || !differs(sh->total, now.total))) {
        S.wq.pj[i].estimated = shows_estimate(sh);
        return 0;
    }
    j = sched_job(w->ids[i]);
    if (!j || !job_ready(j))
        return 1; /* it changed meanwhile */
    was_changed = S.jf[j->id - 1] & JF_CHANGED;
    if (o->kept) /* what it shows, at its place now */
        show_wait(j, j->reason, j->plan ? j->plan->planned_cluster : NULL,
                  now.planned_start, position, pf);
    else
        show_wait(j, reason, cl, now.planned_start, position, pf);
    if (!was_changed) /* what it shows is no change of its entry */
        S.jf[j->id - 1] &= (uint8_t)~JF_CHANGED;
    now.total = j->plan ? j->plan->shown_total : 0;
    *sh = now;
    S.wq.pj[i].estimated = shows_estimate(sh);
    return 1;
}

/* The cycle is over: count it. */
static void account(const struct plan_work *w)
{
    double ms = w->build_ms + w->plan_ms + S.apply.ms;

    S.cycle_build_ms = w->build_ms;
    S.cycle_plan_ms = w->plan_ms;
    S.cycle_apply_ms = S.apply.ms;
    S.cycles++;
    S.cycle_last_ms = ms;
    S.cycle_sum_ms += ms;
    if (ms > S.cycle_max_ms) {
        /* the longest so far, with its parts: what made it long is in the
         * log (a few lines a run, as the maximum only grows) */
        S.cycle_max_ms = ms;
        log_info("longest scheduling cycle so far: %.1f ms (build %.1f, "
                 "plan %.1f, apply %.1f; CPU %.1f, %.1f, %.1f), cycle %lu, "
                 "%zu jobs considered, %zu started%s", ms, w->build_ms,
                 w->plan_ms, S.apply.ms, w->build_cpu_ms, w->plan_cpu_ms,
                 S.apply.cpu_ms, S.cycles, S.apply.considered,
                 S.apply.started, w->cfg.keep_estimates ? ", estimates kept"
                                                        : "");
    }
    metrics_observe(METRICS_SCHED_CYCLE_SECONDS, NULL, ms / 1000);
    metrics_set(METRICS_SCHED_CYCLE_LAST, NULL, ms / 1000);
    metrics_observe(METRICS_SCHED_CYCLE_CONSIDERED, NULL,
                    (double)S.apply.considered);
    metrics_observe(METRICS_SCHED_CYCLE_STARTED, NULL,
                    (double)S.apply.started);
}

/* Start j on the nodes the plan gave it, if they are still free; an
 * array's next task, with a record of its own. */
static void start_one(const struct plan_work *w, struct job *j, size_t c,
                      const size_t *idx, size_t n)
{
    struct strv nodes = {0};
    long ord;

    if (!still_fits(w, j, c, idx, n, &nodes)) {
        S.need_cycle = 1;
    } else if (j->array) {
        if ((ord = sched_array_next(j)) >= 0 && (j = sched_array_split(j,
                                                                      ord))) {
            sched_assign(j, w->f.cl[c].name, &nodes);
            S.apply.started++;
        }
    } else if (sched_depend_may_start(j)) {
        sched_assign(j, w->f.cl[c].name, &nodes);
        S.apply.started++;
    }
    strv_fini(&nodes);
}

/* The tasks of entry i that start, from S.apply_sub on. 1 when all are
 * done, 0 when `most` ran out first. */
static int start_tasks(const struct plan_work *w, size_t i, size_t most,
                       size_t *done)
{
    const struct plan_out *o = &w->out[i];
    struct job *a = sched_job(w->ids[i]);

    for (; S.apply_sub < o->n_starts; S.apply_sub++) {
        const struct plan_start *st = &o->starts[S.apply_sub];
        if (*done >= most)
            return 0;
        (*done)++;
        if (!a || !job_ready(a))
            continue; /* it changed meanwhile */
        start_one(w, a, st->cluster, st->nodes,
                  a->req.nodes > 0 ? (size_t)a->req.nodes : 1);
    }
    S.apply_sub = 0;
    return 1;
}

int sched_cycle_apply(struct plan_work *w, size_t most)
{
    double t0 = time_mono(), c0 = time_thread_cpu();
    /* the text most of a long queue shows, hashed once a slice */
    uint64_t beyond_text = waitq_text(SCHED_BEYOND_REASON, NULL);
    size_t i, done = 0;

    if (w->resv_gen != S.resv_gen) {
        S.need_cycle = 1;
        return 1;
    }
    for (i = S.apply.at; i < w->n && done < most; i++) {
        const struct plan_out *o = &w->out[i];
        int within;
        if (!w->ids[i])
            continue; /* a hole */
        if (!S.apply_sub) { /* counted once, not again when resumed */
            S.apply.position++;
            S.apply.considered++;
        }
        within = (size_t)S.apply.position <= w->cfg.depth;
        if (o->n_starts && !start_tasks(w, i, most, &done))
            break; /* resumed at this entry's next task */
        if (o->start) {
            struct job *j = sched_job(w->ids[i]);
            done++;
            if (!j || !job_ready(j))
                continue; /* it changed meanwhile */
            start_one(w, j, o->cluster, o->nodes, o->n_nodes);
        } else if (o->n_starts && !o->planned && !o->beyond &&
                   !o->limited) {
            continue; /* every task started */
        } else {
            done += (size_t)show_entry(w, i, within ? S.apply.position : 0,
                                       beyond_text);
        }
    }
    S.apply.at = i;
    S.apply.ms += (time_mono() - t0) * 1000;
    S.apply.cpu_ms += (time_thread_cpu() - c0) * 1000;
    if (i < w->n)
        return 0;
    account(w);
    return 1;
}

int sched_feasible(const struct job *j, struct loom_error *err)
{
    const struct fabric *f;
    const char *resv_cluster = NULL;
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
        if (j->req.cluster && strcmp(j->req.cluster, r->cluster))
            return loom_error_field(err, LOOM_EIMPOSSIBLE,
                                    "request.cluster", "reservation %lld is "
                                    "on cluster %s, not %s",
                                    (long long)r->id, r->cluster,
                                    j->req.cluster);
        resv_cluster = r->cluster;
    }
    if (!(f = fabric_current()))
        return 0; /* no snapshot yet: the cycle will say */
    if (j->req.cluster && fabric_cluster(f, j->req.cluster, &c) < 0)
        return loom_error_field(err, LOOM_EIMPOSSIBLE, "request.cluster",
                                "there is no cluster named '%s'",
                                j->req.cluster);
    fabric_job(j, &pj);
    if (resv_cluster) { /* checked above; its cluster is the job's */
        pj.reservation = 0;
        pj.cluster = resv_cluster;
    }
    if (pj.cluster && fabric_cluster(f, pj.cluster, &c) == 0 &&
        !plan_cluster_runs_as(&f->cl[c], &pj)) {
        plan_why_account(&f->cl[c], &pj, why, sizeof(why));
        return loom_error_field(err, LOOM_EIMPOSSIBLE, "request.cluster",
                                "%s", why);
    }
    ok = plan_feasible(f->cl, f->n, &pj, why, sizeof(why));
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
        size_t k = 0;
        while (k + 1 < nodes->n &&
               scluster_node(f.snap->clusters[c], nodes->v[k]))
            k++;
        loom_error_field(err, LOOM_ENOENT, "nodes", "cluster %s has no node "
                         "'%.200s'", cluster, nodes->n ? nodes->v[k] : "");
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
    if (j->array)
        return; /* its tasks are charged, each for its own use */
    if (j->start_time && j->end_time > j->start_time &&
        prio_usage_add(S.fs, j->owner,
                       (double)(j->end_time - j->start_time) * j->req.nodes *
                           j->req.cpus_per_node,
                       (double)j->end_time) < 0)
        log_err("job=%lld: out of memory charging its use",
                (long long)j->id);
}
