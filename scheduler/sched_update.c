/* sched_update.c - what clusters report, start results, the cycle, reload. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/store_jobs.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

void sched_set_final(struct job *j, const struct cl_job *c,
                     enum job_state st)
{
    if (job_holds_nodes(j))
        sched_release(j);
    j->state = st;
    if (!j->start_time && c && c->start_time)
        j->start_time = c->start_time; /* it ran between two polls */
    j->end_time = c && c->end_time ? c->end_time : time(NULL);
    sched_charge(j);
    if (c && c->has_exit_code) {
        j->has_exit_code = 1;
        j->exit_code = c->exit_code;
    }
    if (c && c->usage.known) {
        j->usage.known = 1;
        j->usage.user_cpu_ms = c->usage.user_cpu_ms;
        j->usage.system_cpu_ms = c->usage.system_cpu_ms;
        j->usage.max_rss_kb = c->usage.max_rss_kb;
    }
    if (c && c->reason && !(st == JOB_CANCELLED && j->own_reason))
        job_set_str(&j->reason, c->reason);
    log_info("job=%lld cluster=%s %s%s%s", (long long)j->id, j->cluster,
             job_state_name(st), j->reason ? ": " : "",
             j->reason ? j->reason : "");
}

int sched_old_submission(const struct job *j, const struct cl_job *c)
{
    enum job_state st;

    if (!j->requeues || !c->native_id)
        return 0;
    if (j->native_id)
        return strcmp(j->native_id, c->native_id) != 0;
    return job_state_parse(c->state, &st) == 0 && job_state_final(st);
}

/* Fold one reported Loom job into the record. */
static void update_one(const char *cluster, const struct cl_job *c)
{
    struct job *j = sched_job(c->loom_id);
    enum job_state st;
    char how[320];

    if (!j || !j->cluster || strcmp(j->cluster, cluster) != 0 ||
        job_state_final(j->state) || job_state_parse(c->state, &st) < 0)
        return;
    if (st == JOB_PENDING)
        st = JOB_STARTING; /* queued in the cluster: starting for Loom */
    if (sched_old_submission(j, c))
        return; /* the start in flight gives the new one's id */
    if (!j->native_id && c->native_id)
        job_set_str(&j->native_id, c->native_id);
    if (!j->stdout_path && c->stdout_path)
        job_set_str(&j->stdout_path, c->stdout_path);
    if (!j->stderr_path && c->stderr_path)
        job_set_str(&j->stderr_path, c->stderr_path);
    if (st == JOB_FAILED && c->node_failure) {
        snprintf(how, sizeof(how), "ended job %s by a node failure (%s)",
                 j->native_id ? j->native_id : "?",
                 c->reason ? c->reason : "no reason given");
        if (!sched_requeue_lost(j, how))
            sched_set_final(j, c, st);
    } else if (job_state_final(st)) {
        sched_set_final(j, c, st);
    } else if (st != j->state) {
        if (st == JOB_STARTING && j->state == JOB_RUNNING) {
            /* the cluster queued it again by itself */
            snprintf(how, sizeof(how), "requeued by cluster %s (job %s): "
                     "%s", cluster, j->native_id ? j->native_id : "?",
                     c->reason ? c->reason : "no reason given");
            log_warn("job=%lld %s", (long long)j->id, how);
            job_set_str(&j->reason, how);
        }
        j->state = st;
        if (!j->start_time && st != JOB_STARTING)
            j->start_time = c->start_time ? c->start_time : time(NULL);
        if (st == JOB_RUNNING)
            job_set_str(&j->reason, NULL);
        /* Nobody waits on this write, and after a crash the cluster says
         * it again: it may go with the job's next change. */
        sched_touch_lazy(j);
        return;
    } else {
        return;
    }
    sched_touch(j);
}

int sched_cluster_jobs(struct sched_cluster_jobs *cj, size_t max)
{
    /* The jobs a complete list lacks are known at once; the entries it
     * holds only touch the jobs they name, so they may follow in slices. */
    if (cj->complete && cj->done == 0)
        sched_missing_jobs(cj->cluster, &cj->list);
    for (; cj->done < cj->list.n && max > 0; cj->done++, max--) {
        const struct cl_job *c = &cj->list.v[cj->done];
        if (c->loom_id > 0)
            update_one(cj->cluster, c);
        else
            sched_native_job(cj->cluster, c);
    }
    return cj->done == cj->list.n;
}

static void to_pending(struct job *j, const char *why)
{
    if (job_holds_nodes(j))
        sched_release(j);
    j->state = JOB_PENDING;
    job_set_str(&j->cluster, NULL);
    strv_fini(&j->nodes);
    job_set_str(&j->reason, why);
    sched_acct_move(j, job_account_on(j, NULL)); /* every cluster's again */
}

void sched_to_pending(struct job *j, const char *why)
{
    to_pending(j, why);
    sched_pending_push(j->id);
}

void sched_to_pending_later(struct job *j, const char *why)
{
    to_pending(j, why);
    j->start_wait = 1; /* the caller's sched_touch takes it out of the queue */
    if (S.later_head > 1024 && S.later_head * 2 > S.n_later) {
        /* failures that never stop (a disk full for hours): the taken
         * entries are dropped, so that the list does not grow for ever */
        memmove(S.later, S.later + S.later_head,
                (S.n_later - S.later_head) * sizeof(*S.later));
        S.n_later -= S.later_head;
        S.later_head = 0;
    } else if (S.later_head && S.later_head == S.n_later) {
        S.later_head = S.n_later = 0; /* all taken: start over */
    }
    if (sched_grow((void **)&S.later, &S.cap_later, S.n_later + 1,
                   sizeof(*S.later)) < 0) {
        j->start_wait = 0;
        sched_pending_push(j->id); /* out of memory: at once, then */
        return;
    }
    S.later[S.n_later++] = (struct lazy){j->id, time_mono()};
}

double sched_later_due(double now)
{
    for (; S.later_head < S.n_later; S.later_head++) {
        const struct lazy *l = &S.later[S.later_head];
        struct job *j;
        if (l->since + START_RETRY_S > now)
            return l->since + START_RETRY_S - now;
        if (!(j = sched_job(l->id)) || !j->start_wait)
            continue;
        /* held or cancelled meanwhile: the queue (add_pushed) looks at
         * it as it is then */
        j->start_wait = 0;
        sched_view(j);
        sched_pending_push(l->id);
    }
    return 1e9;
}

void sched_started(struct sched_started *st)
{
    struct job *j = sched_job(st->id);

    if (!j || j->state != JOB_STARTING)
        return;
    if (!st->ok) {
        log_warn("job=%lld cluster=%s start failed: %s", (long long)j->id,
                 j->cluster, st->err.message);
        if (st->err.kind == LOOM_ECONFLICT || st->err.kind == LOOM_ETEMP ||
            st->err.kind == LOOM_EUNAVAIL) {
            sched_to_pending_later(j, st->err.message);
        } else {
            job_set_str(&j->reason, st->err.message);
            sched_set_final(j, NULL, JOB_FAILED);
        }
        sched_touch(j);
        return;
    }
    if (st->res.queued) { /* in the cluster's queue: running when it says */
        char why[160];
        snprintf(why, sizeof(why), "queued in cluster %s", j->cluster);
        job_set_str(&j->reason, why);
    } else {
        j->state = JOB_RUNNING;
        if (!j->start_time)
            j->start_time = time(NULL);
    }
    job_set_str(&j->native_id, st->res.native_id);
    job_set_str(&j->stdout_path, st->res.stdout_path);
    job_set_str(&j->stderr_path, st->res.stderr_path);
    /* The start decision is committed; a restart re-attaches the job by its
     * Loom id, so what the start returned may wait for the next write. */
    sched_touch_lazy(j);
    if (j->cancel_requested) {
        struct server_job_op *op = calloc(1, sizeof(*op));
        j->cancel_requested = 0;
        if (op) {
            op->id = j->id;
            snprintf(op->op, sizeof(op->op), "cancel");
            op->cluster = strdup(j->cluster);
            op->native_id = strdup(j->native_id ? j->native_id : "");
        }
        msgq_post(server_queue(), msg_create(SERVER_JOB_OP, op,
                                             server_job_op_free, NULL));
    }
}

/* A submit when nothing waits and no reservation is open: first fit at
 * once, without a whole cycle (the common case under load). Otherwise the
 * next cycle places it in policy order. */
void sched_place_now(struct job *j)
{
    struct snapshot *snap;
    const char *cluster = NULL;
    struct strv nodes = {0};
    char why[256];

    if (!S.enabled || waitq_waiting(&S.wq) || S.n_resv_open ||
        j->req.reservation || j->array || !job_ready(j) ||
        !sched_acct_may_start(j, why, sizeof(why)) ||
        !sched_depend_may_start(j)) {
        S.need_cycle = 1;
        return;
    }
    snap = snapshot_get();
    if (fcfs_place(snap, &S.usage, j,
                   snap && snap->n_clusters <= 64 ? S.place_first : NULL,
                   &cluster, &nodes, why, sizeof(why)) > 0)
        sched_assign(j, cluster, &nodes);
    else
        job_set_str(&j->reason, why);
    strv_fini(&nodes);
    snapshot_put(snap);
}

/* ---- start-up: load the jobs and re-attach the active ones ----------- */

struct job *sched_job_of_row(const struct store_job_row *row)
{
    struct loom_error err;
    json_error_t jerr;
    json_t *doc = json_loads(row->doc, 0, &jerr);
    struct job *j = doc ? job_from_doc(doc, &err) : NULL;

    json_decref(doc);
    if (j && row->idem_key &&
        (job_set_str(&j->idem_key, row->idem_key) < 0 ||
         job_set_str(&j->idem_hash, row->idem_hash ? row->idem_hash : "") <
             0)) {
        job_destroy(j);
        j = NULL;
    }
    return j;
}

static int load_row(void *arg, const struct store_job_row *row)
{
    struct load_count *c = arg;
    struct job *j;

    if (!row->doc) { /* ended long ago: it would leave memory at once */
        c->n_light++;
        return sched_evict_loaded(row);
    }
    if (!(j = sched_job_of_row(row))) {
        log_err("job=%lld: stored record unreadable; skipped",
                (long long)row->id);
        return 0;
    }
    if (j->state == JOB_PENDING && S.enabled && S.conf.plan.depth &&
        !j->deps.n && !j->array) {
        /* What a cycle says of most of a long queue: shown from the start,
         * the first cycle renders again only the jobs it says more of
         * (those within the depth), not every waiting job. A stored reason
         * is that of a cycle long gone. */
        job_set_str(&j->reason, SCHED_BEYOND_REASON);
    }
    if (sched_job_add(j) < 0) {
        job_destroy(j);
        return -1;
    }
    if (j->array_id) /* its array was loaded before it (a lower id) */
        sched_array_link(j);
    c->n++;
    if (job_state_final(j->state))
        sched_charge(j);
    if (j->state == JOB_PENDING)
        sched_pending_push(j->id);
    /* Loom re-attaches the jobs it started (its own, and native ones it
     * was handed); a native job its cluster started is the cluster's, and
     * the next poll reports it as it is. */
    if (job_holds_nodes(j) &&
        (strcmp(j->source, "cluster") != 0 || j->held_for_loom)) {
        usage_apply(&S.usage, j, 1);
        sched_start_later(j, 1);
    }
    return 0;
}

int sched_load(struct loom_error *err)
{
    double t0 = time_mono();
    struct load_count c = {0};
    char upto[32];

    /* What ended job_memory_s ago or before would leave memory at the
     * first look (sched_evict_tick): only what that keeps is read. */
    if (store_jobs_load(S.st,
                        time_format_before(time(NULL), S.conf.job_memory_s,
                                           upto),
                        load_row, &c, err) < 0)
        return loom_error_prefix(err, "loading jobs");
    log_info("loaded %zu job(s) in %.0f ms; %zu ended before %.0f s ago "
             "left in the database; %zu pending, %zu to re-attach",
             c.n, (time_mono() - t0) * 1000, c.n_light,
             (double)S.conf.job_memory_s, S.n_pending, S.n_to_start);
    /* The re-attachments were decided before: carry them out now. */
    for (size_t i = 0; i < S.n_to_start; i++)
        msgq_post(server_queue(), msg_create(SERVER_START_JOB, S.to_start[i],
                                             server_start_free, NULL));
    S.n_to_start = 0;
    return 0;
}
