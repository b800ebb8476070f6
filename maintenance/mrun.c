/* mrun.c - maintenance requests made (by the API or a rule) and planned
 * as a reservation; ended (done, failed, cancelled); published; loaded. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/jsonx.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/store_maint.h"
#include "core/store_resv.h"
#include "core/timeutil.h"
#include "core/token.h"
#include "core/vec.h"
#include "maintenance/maint_state.h"
#include "scheduler/sched.h"

/* The reservation's answer: its id, window and nodes into r. */
static int take_resv(struct mreq *r, const char *body, struct loom_error *err)
{
    json_t *o = json_loads(body ? body : "", 0, NULL), *v;
    size_t i;
    int bad = !o;

    r->resv = strtoll(jx_str(o, "id", "0"), NULL, 10);
    bad |= r->resv <= 0;
    bad |= time_parse(jx_str(o, "start", ""), &r->planned_start) < 0;
    bad |= time_parse(jx_str(o, "end", ""), &r->planned_end) < 0;
    if (!r->nodes.n)
        json_array_foreach(json_object_get(o, "nodes"), i, v) {
            const char *id = json_string_value(v);
            bad |= !id || !strchr(id, '/') ||
                   strv_push(&r->nodes, strchr(id, '/') + 1) < 0;
        }
    json_array_foreach(json_object_get(o, "cancelled_jobs"), i, v)
        bad |= strv_push(&r->cancelled_jobs, json_string_value(v) ?
                         json_string_value(v) : "?") < 0;
    json_decref(o);
    return bad ? loom_error_set(err, LOOM_EINTERNAL, "the scheduler's "
                                "answer is unreadable")
               : 0;
}

static int plan(struct mreq *r, struct loom_error *err)
{
    struct sched_resv_op *op = calloc(1, sizeof(*op));
    struct reply *rp;
    char why[512];
    int rc;

    mreq_drain_reason(r, why, sizeof(why));
    if (!op || !(op->subject = strdup(r->owner)) ||
        !(op->rq.cluster = strdup(r->cluster)) ||
        !(op->rq.purpose = strdup("maintenance")) ||
        !(op->rq.reason = strdup(why))) {
        sched_resv_op_free(op);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < r->nodes.n; i++)
        if (strv_push(&op->rq.nodes, r->nodes.v[i]) < 0) {
            sched_resv_op_free(op);
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    op->rq.count = r->count;
    op->rq.fixed = r->fixed;
    op->rq.start = r->start;
    op->rq.not_before = r->not_before;
    op->rq.deadline = r->deadline;
    op->rq.duration_s = r->duration_s;
    op->rq.asap = r->asap;
    op->rq.force = r->force;
    op->rq.maint = r->id;
    if (mreq_call(sched_queue(), SCHED_RESV_CREATE, op, sched_resv_op_free,
                  &rp, err) < 0)
        return -1;
    rc = take_resv(r, rp->body, err);
    reply_unref(rp);
    return rc;
}

/* Check, plan and keep a new request (r: parsed; owner set). */
int mreq_submit(struct mreq *r, struct loom_error *err)
{
    struct snapshot *s = snapshot_get();
    struct scluster *c = snapshot_cluster(s, r->cluster);
    char id[512];
    int rc = -1;

    if (!c) {
        loom_error_field(err, LOOM_ENOENT, "cluster", "there is no cluster "
                         "named '%s'", r->cluster);
        goto out;
    }
    for (size_t i = 0; i < r->nodes.n; i++) {
        snprintf(id, sizeof(id), "%s/%s", r->cluster, r->nodes.v[i]);
        if (!scluster_node(c, r->nodes.v[i])) {
            loom_error_field(err, LOOM_ENOENT, "nodes", "there is no node "
                             "%s", id);
            goto out;
        }
        if (mreq_open_on(id, r->action)) {
            loom_error_set(err, LOOM_ECONFLICT, "node %s has an open %s "
                           "request already (maintenance %lld)", id,
                           r->action,
                           (long long)mreq_open_on(id, r->action)->id);
            goto out;
        }
    }
    if (vec_grow((void **)&M.req, &M.cap_req, M.n_req + 1,
                 sizeof(*M.req), 16) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    r->id = M.next_id++;
    if (plan(r, err) < 0)
        goto out;
    mreq_set_state(r, MS_PLANNED, time(NULL));
    if (mreq_save(r) < 0) {
        struct loom_error e2;
        mreq_doubt_note(r);
        mreq_resv_op(SCHED_RESV_CANCEL, r->resv, 0, 0, &e2);
        loom_error_set(err, LOOM_EUNAVAIL, "database unavailable: the "
                       "maintenance request was not accepted; retry later");
        goto out;
    }
    M.req[M.n_req++] = r;
    maint_event("info", r->cluster, "maintenance %lld planned: %s on %zu "
                "node(s) from %s, reservation %lld, asked by %s%s%s",
                (long long)r->id, r->action, r->nodes.n,
                r->asap ? "now (draining)" : "its window",
                (long long)r->resv, r->owner, r->rule ? ", rule " : "",
                r->rule ? r->rule : "");
    rc = 0;
out:
    snapshot_put(s);
    return rc;
}

void mreq_post(struct msg *m)
{
    struct maint_op *op = m->data;
    struct mreq *r = calloc(1, sizeof(*r));
    struct loom_error err;
    json_t *body = jx_parse_object(op->body, op->body ? strlen(op->body) : 0,
                                   &err);

    if (!r) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (!body || mreq_parse(body, time(NULL), &M.conf, r, &err) < 0)
        goto error;
    if (r->force && !(op->roles & LOOM_ROLE_ADMIN)) {
        loom_error_field(&err, LOOM_EPERM, "force", "force needs the admin "
                         "role");
        goto error;
    }
    if (!(r->owner = strdup(op->subject))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (mreq_submit(r, &err) < 0)
        goto error;
    json_decref(body);
    reply_send(m->reply, 201, mreq_render(r));
    return;
error:
    json_decref(body);
    mreq_destroy(r);
    reply_send_error(m->reply, &err);
}

void mreq_finish_ok(struct mreq *r, time_t now)
{
    if (mreq_step_to(r, MS_DONE, now) < 0)
        return;
    mreq_publish(); /* shown done before its nodes are shown back */
    mreq_set_nodes(r, "up", NULL);
    mreq_mark_nodes(r, 0, 0);
    mreq_end_resv(r, 0);
    M.compare_all = 1;
    maint_event("info", r->cluster, "maintenance %lld done: %s on %zu "
                "node(s); the nodes are back", (long long)r->id, r->action,
                r->nodes.n);
}

void mreq_fail(struct mreq *r, time_t now, const char *why)
{
    char reason[768];

    free(r->error);
    r->error = strdup(why);
    if (mreq_step_to(r, MS_FAILED, now) < 0)
        return;
    mreq_publish(); /* shown failed before its nodes are shown drained */
    snprintf(reason, sizeof(reason), "loom maintenance %lld failed: %s",
             (long long)r->id, why);
    mreq_set_nodes(r, "drain", reason);
    mreq_mark_nodes(r, 0, 0);
    mreq_end_resv(r, 0);
    M.compare_all = 1;
    maint_event("warn", r->cluster, "maintenance %lld failed: %s; the "
                "node(s) stay out of service", (long long)r->id, why);
}

/* DELETE of a request not in memory: an ended one left it (mevict.c), and
 * is read from PostgreSQL. An id above the highest that left (any id
 * while none has, and every id not given yet) was never there: no query. */
static void not_in_memory(struct reply *reply, int64_t id)
{
    struct loom_error err;
    char *state = NULL, *doc = NULL;
    int rc = id > maint_evicted_max()
                 ? 0
                 : store_maint_doc(M.st, id, &state, &doc, &err);

    if (rc == 0)
        loom_error_set(&err, LOOM_ENOENT, "there is no maintenance request "
                       "%lld", (long long)id);
    else if (rc > 0)
        loom_error_set(&err, LOOM_ECONFLICT, "maintenance request %lld is "
                       "%s", (long long)id, state);
    else
        loom_error_prefix(&err, "maintenance request");
    free(state);
    free(doc);
    reply_send_error(reply, &err);
}

void mreq_cancel(struct msg *m)
{
    struct maint_op *op = m->data;
    struct mreq *r = mreq_find(op->id);
    struct loom_error err;
    enum mstate was;

    if (!r) {
        not_in_memory(m->reply, op->id);
        return;
    }
    was = r->state;
    if (!mstate_open(was) ||
        ((was == MS_IN_PROGRESS || was == MS_VERIFYING) &&
         strcmp(r->action, "node-off"))) {
        loom_error_set(&err, LOOM_ECONFLICT, "maintenance request %lld is "
                       "%s%s", (long long)r->id, mstate_name(was),
                       mstate_open(was) ? ": its action cannot be stopped"
                                        : "");
        reply_send_error(m->reply, &err);
        return;
    }
    if (mreq_step_to(r, MS_CANCELLED, time(NULL)) < 0) {
        loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable: the "
                       "request was not cancelled; retry later");
        reply_send_error(m->reply, &err);
        return;
    }
    mreq_publish(); /* shown cancelled before its nodes are shown back */
    mreq_end_resv(r, 1);
    if (was >= MS_DRAINING)
        mreq_set_nodes(r, "up", NULL);
    mreq_mark_nodes(r, 0, 0);
    M.compare_all = 1;
    maint_event("info", r->cluster, "maintenance %lld cancelled by %s (it "
                "was %s)", (long long)r->id, op->subject, mstate_name(was));
    reply_send(m->reply, 200, mreq_render(r));
}

/* loom_maintenance_requests of GET /metrics: the requests by state. */
static void count_states(void)
{
    double n[DOMAIN_MAINT_STATES_N] = {0};

    for (size_t i = 0; i < M.n_req; i++)
        n[M.req[i]->state]++;
    for (size_t s = 0; s < DOMAIN_MAINT_STATES_N; s++)
        n[s] += (double)M.gone_by_state[s];
    metrics_replace(METRICS_MAINT_REQUESTS, domain_maint_states.names, n,
                    DOMAIN_MAINT_STATES_N);
}

void mreq_publish(void)
{
    char **parts;
    struct stext *t;

    if (!M.req_changed || !(parts = calloc(M.n_req + 1, sizeof(*parts))))
        return;
    for (size_t i = 0; i < M.n_req; i++)
        if (!(parts[i] = mreq_render(M.req[i])))
            goto out;
    if ((t = stext_array(parts, M.n_req))) {
        snapshot_publish_text(SNAP_MAINT, t);
        M.req_changed = 0;
        count_states();
    }
out:
    for (size_t i = 0; i < M.n_req; i++)
        free(parts[i]);
    free(parts);
}

static int req_row(void *arg, int n, const char *const *cols)
{
    size_t *n_light = arg;
    struct loom_error err;
    json_t *doc;
    struct mreq *r;

    if (n >= 3 && !cols[2]) { /* ended long ago: it would go at once */
        (*n_light)++;
        mreq_evict_loaded(strtoll(cols[0], NULL, 10), cols[1]);
        return 0;
    }
    doc = n >= 3 ? json_loads(cols[2], 0, NULL) : NULL;
    r = doc ? mreq_from_doc(doc, &err) : NULL;
    json_decref(doc);
    if (!r) {
        log_err("maintenance=%s: stored request unreadable; skipped",
                cols[0]);
        return 0;
    }
    if (vec_grow((void **)&M.req, &M.cap_req, M.n_req + 1,
                 sizeof(*M.req), 16) < 0) {
        mreq_destroy(r);
        return -1;
    }
    M.req[M.n_req++] = r;
    M.open_stale = 1;
    if (r->id >= M.next_id)
        M.next_id = r->id + 1;
    if (r->state == MS_IN_PROGRESS || r->state == MS_VERIFYING)
        mreq_mark_nodes(r, 1, 1);
    return 0;
}

/* At start-up, before the API listens: the clusters of the requests in
 * progress have shown their nodes "maint" (marked by req_row), so that no
 * reader sees such a request beside its nodes shown otherwise. */
static void wait_marked(void)
{
    double until = time_mono() + MARK_WAIT_S;

    for (size_t i = 0; i < M.n_req; i++) {
        struct mreq *r = M.req[i];
        double left = until - time_mono();
        if (!r->pending)
            continue;
        if (reply_wait(r->pending, left > 0 ? left : 0) < 0)
            log_warn("maintenance=%lld: cluster %s has not shown its nodes "
                     "in maintenance after %d s (its worker is busy); going "
                     "on", (long long)r->id, r->cluster, MARK_WAIT_S);
        reply_unref(r->pending);
        r->pending = NULL;
        r->pending_until = 0;
    }
}

int mreq_load(struct loom_error *err)
{
    size_t open = 0, n_light = 0;
    int64_t named;
    char upto[32];

    /* What ended request_memory_s ago or before, and that the rules'
     * back-off does not count, would go at the first look (mreq_evict,
     * below): only what that keeps is read in full. Request ids go on
     * after those reservations name too (a request whose reservation was
     * committed but not itself). */
    if (store_maint_load(M.st,
                         time_format_before(time(NULL),
                                            M.conf.request_memory_s, upto),
                         req_row, &n_light, err) < 0 ||
        store_resv_maint_max(M.st, &named, err) < 0)
        return -1;
    if (named >= M.next_id)
        M.next_id = named + 1;
    wait_marked();
    mreq_evict(time_real());
    for (size_t i = 0; i < M.n_req; i++)
        open += mstate_open(M.req[i]->state);
    log_info("maintenance: %zu request(s), %zu open, %zu in memory; %zu "
             "ended before %.0f s ago left in the database",
             M.n_req + M.n_gone, open, M.n_req, n_light,
             M.conf.request_memory_s);
    return 0;
}
