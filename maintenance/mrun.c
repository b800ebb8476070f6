/* mrun.c - maintenance requests: made (by the API or a rule), planned as
 * a reservation, carried through drain, action and verification, each
 * step committed before it is carried out. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infra.h"
#include "core/jsonx.h"
#include "core/log.h"
#include "core/server.h"
#include "core/store_maint.h"
#include "core/store_resv.h"
#include "core/timeutil.h"
#include "core/token.h"
#include "core/vec.h"
#include "maintenance/maint_state.h"
#include "scheduler/sched.h"

#define CALL_S 30.0   /* the longest wait for the scheduler's answer */
#define RETRY_S 10.0  /* a failed node-state change is tried again */

#define SWEEP_S 60.0 /* how often reservations without a request are sought */

struct mreq *mreq_open_on(const char *node, const char *action)
{
    size_t cl = strcspn(node, "/");

    for (size_t i = 0; i < M.n_req; i++) {
        struct mreq *r = M.req[i];
        if (!mstate_open(r->state) || strlen(r->cluster) != cl ||
            strncmp(r->cluster, node, cl) || (action && strcmp(r->action,
                                                               action)))
            continue;
        for (size_t k = 0; k < r->nodes.n; k++)
            if (!strcmp(r->nodes.v[k], node + cl + 1))
                return r;
    }
    return NULL;
}

size_t mreq_nodes_open(const char *cluster)
{
    size_t n = 0;

    for (size_t i = 0; i < M.n_req; i++)
        if (mstate_open(M.req[i]->state) && !strcmp(M.req[i]->cluster,
                                                    cluster))
            n += M.req[i]->nodes.n;
    return n;
}

static struct mreq *find(int64_t id)
{
    for (size_t i = 0; i < M.n_req; i++)
        if (M.req[i]->id == id)
            return M.req[i];
    return NULL;
}

/* Commit the request as it is now. 0, or -1 (logged; the caller keeps
 * the step for the next tick). */
static int save(struct mreq *r)
{
    struct loom_error err;
    char *doc = mreq_render(r);
    int rc = doc ? store_maint_put(M.st, r->id, mstate_name(r->state), doc,
                                   &err)
                 : loom_error_set(&err, LOOM_EINTERNAL, "out of memory");

    free(doc);
    if (rc < 0)
        log_warn("maintenance=%lld: not written (%s); tried again",
                 (long long)r->id, err.message);
    M.req_changed = 1;
    diff_requests_changed();
    return rc;
}

/* Move to state s and commit it; on failure nothing changes. */
static int step_to(struct mreq *r, enum mstate s, time_t now)
{
    enum mstate old = r->state;
    time_t since = r->since;
    size_t h = json_array_size(r->history);

    mreq_set_state(r, s, now);
    if (save(r) == 0)
        return 0;
    r->state = old;
    r->since = since;
    while (json_array_size(r->history) > h)
        json_array_remove(r->history, json_array_size(r->history) - 1);
    return -1;
}

/* Ask a thread and wait for its answer: 0 with the reply (the caller
 * unrefs it), or -1 with err. */
static int call(struct msgq *q, int type, void *data, void (*data_free)(void *),
                struct reply **out, struct loom_error *err)
{
    struct reply *rp = reply_create();

    *out = NULL;
    if (!rp) {
        data_free(data);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    msgq_post(q, msg_create(type, data, data_free, rp));
    if (reply_wait(rp, CALL_S) < 0) {
        reply_unref(rp);
        return loom_error_set(err, LOOM_EUNAVAIL, "the scheduler did not "
                              "answer within %.0f s", CALL_S);
    }
    if (rp->status >= 400) {
        *err = rp->err;
        reply_unref(rp);
        return -1;
    }
    *out = rp;
    return 0;
}

static int resv_op(int type, int64_t id, int start_now, int end_now,
                   struct loom_error *err)
{
    struct sched_resv_op *op = calloc(1, sizeof(*op));
    struct reply *rp;

    if (!op || !(op->subject = strdup("maintenance"))) {
        free(op);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    op->id = id;
    op->start_now = start_now;
    op->end_now = end_now;
    if (call(sched_queue(), type, op, sched_resv_op_free, &rp, err) < 0)
        return -1;
    reply_unref(rp);
    return 0;
}

/* Set every node of r to state through its cluster's adaptor; the
 * answers are looked at by the next ticks (r->pending: the last one). */
static void set_nodes(struct mreq *r, const char *state, const char *reason)
{
    for (size_t i = 0; i < r->nodes.n; i++) {
        struct server_node_state *ns = calloc(1, sizeof(*ns));
        struct reply *rp = reply_create();
        if (!ns || !rp || !(ns->cluster = strdup(r->cluster)) ||
            !(ns->node = strdup(r->nodes.v[i])) ||
            !(ns->state = strdup(state)) ||
            (reason && !(ns->reason = strdup(reason)))) {
            server_node_state_free(ns);
            reply_unref(rp);
            log_err("maintenance=%lld: out of memory setting node state",
                    (long long)r->id);
            continue;
        }
        msgq_post(server_queue(), msg_create(SERVER_NODE_STATE, ns,
                                             server_node_state_free, rp));
        reply_unref(r->pending);
        r->pending = rp;
    }
}

static void mark_nodes(struct mreq *r, int on)
{
    char id[512], why[512];

    snprintf(why, sizeof(why), "loom maintenance %lld: %s", (long long)r->id,
             r->reason);
    for (size_t i = 0; i < r->nodes.n; i++) {
        snprintf(id, sizeof(id), "%s/%s", r->cluster, r->nodes.v[i]);
        infra_maint_mark(id, on ? why : NULL);
    }
    server_poll_named(r->cluster); /* shown at once, not at the next poll */
}

static void drain_reason(const struct mreq *r, char *buf, size_t len)
{
    snprintf(buf, len, "loom maintenance %lld: %s", (long long)r->id,
             r->reason);
}

/* ---- made ---------------------------------------------------------------- */

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

    drain_reason(r, why, sizeof(why));
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
    if (call(sched_queue(), SCHED_RESV_CREATE, op, sched_resv_op_free, &rp,
             err) < 0)
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
    if (save(r) < 0) {
        struct loom_error e2;
        resv_op(SCHED_RESV_CANCEL, r->resv, 0, 0, &e2);
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

/* ---- ended --------------------------------------------------------------- */

static void end_resv(struct mreq *r, int cancel)
{
    struct loom_error err;

    if (r->resv &&
        resv_op(cancel ? SCHED_RESV_CANCEL : SCHED_RESV_ADJUST, r->resv, 0,
                !cancel, &err) < 0 &&
        err.kind != LOOM_ECONFLICT)
        log_warn("maintenance=%lld: reservation %lld: %s", (long long)r->id,
                 (long long)r->resv, err.message);
}

static void finish_ok(struct mreq *r, time_t now)
{
    if (step_to(r, MS_DONE, now) < 0)
        return;
    set_nodes(r, "up", NULL);
    mark_nodes(r, 0);
    end_resv(r, 0);
    M.compare_all = 1;
    maint_event("info", r->cluster, "maintenance %lld done: %s on %zu "
                "node(s); the nodes are back", (long long)r->id, r->action,
                r->nodes.n);
}

static void fail(struct mreq *r, time_t now, const char *why)
{
    char reason[768];

    free(r->error);
    r->error = strdup(why);
    if (step_to(r, MS_FAILED, now) < 0)
        return;
    snprintf(reason, sizeof(reason), "loom maintenance %lld failed: %s",
             (long long)r->id, why);
    set_nodes(r, "drain", reason);
    mark_nodes(r, 0);
    end_resv(r, 0);
    M.compare_all = 1;
    maint_event("warn", r->cluster, "maintenance %lld failed: %s; the "
                "node(s) stay out of service", (long long)r->id, why);
}

void mreq_cancel(struct msg *m)
{
    struct maint_op *op = m->data;
    struct mreq *r = find(op->id);
    struct loom_error err;
    enum mstate was;

    if (!r) {
        loom_error_set(&err, LOOM_ENOENT, "there is no maintenance request "
                       "%lld", (long long)op->id);
        reply_send_error(m->reply, &err);
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
    if (step_to(r, MS_CANCELLED, time(NULL)) < 0) {
        loom_error_set(&err, LOOM_EUNAVAIL, "database unavailable: the "
                       "request was not cancelled; retry later");
        reply_send_error(m->reply, &err);
        return;
    }
    end_resv(r, 1);
    if (was >= MS_DRAINING)
        set_nodes(r, "up", NULL);
    mark_nodes(r, 0);
    M.compare_all = 1;
    maint_event("info", r->cluster, "maintenance %lld cancelled by %s (it "
                "was %s)", (long long)r->id, op->subject, mstate_name(was));
    reply_send(m->reply, 200, mreq_render(r));
}

/* ---- carried out ----------------------------------------------------------- */

/* Are r's nodes out of service and free of jobs? */
static int nodes_idle(const struct mreq *r)
{
    struct snapshot *s = snapshot_get();
    struct scluster *c = snapshot_cluster(s, r->cluster);
    int idle = c != NULL;

    for (size_t i = 0; idle && i < r->nodes.n; i++) {
        struct snode *n = scluster_node(c, r->nodes.v[i]);
        idle = n && n->cpus_alloc == 0 && strcmp(n->state, "draining") &&
               !snode_usable(n);
    }
    snapshot_put(s);
    return idle;
}

/* The actual value of attr on node (n of cluster c, entry g) known since
 * t (a poll or a report after it), or NULL. A new reference. */
static json_t *actual_since(const struct scluster *c, const char *node,
                            struct gnode *g, const char *attr, time_t t)
{
    json_t *rep;

    if (attr_from_cluster(attr))
        return c && c->last_poll >= t
                   ? actual_from_cluster(scluster_node(c, node), attr)
                   : NULL;
    rep = g ? json_object_get(g->reports, attr) : NULL;
    return rep && jx_int(rep, "time", 0) >= (long long)t
               ? json_incref(json_object_get(rep, "value"))
               : NULL;
}

/* The attributes verification checks: the action's fixes and the rule's
 * attribute. */
static void checked_attrs(const struct mreq *r, struct strv *out)
{
    const struct maint_action *a = maint_conf_action(&M.conf, r->action);

    for (size_t k = 0; a && k < a->fixes.n; k++)
        strv_push(out, a->fixes.v[k]);
    for (size_t i = 0; i < M.conf.n_rules && r->rule; i++)
        if (!strcmp(M.conf.rules[i].name, r->rule))
            strv_push(out, M.conf.rules[i].attribute);
}

/* Does every attribute checked equal the goal, known since the action
 * began? 1 yes, 0 not yet (why says what differs). */
static int verified(const struct mreq *r, char *why, size_t len)
{
    struct snapshot *s = snapshot_get();
    struct scluster *c = snapshot_cluster(s, r->cluster);
    struct strv attrs = {0};
    int ok = 1;

    checked_attrs(r, &attrs);
    for (size_t i = 0; ok && i < r->nodes.n; i++) {
        char id[512];
        struct gnode *g;
        snprintf(id, sizeof(id), "%s/%s", r->cluster, r->nodes.v[i]);
        g = gnode_get(id, 0);
        for (size_t k = 0; ok && k < attrs.n; k++) {
            json_t *goal = g && g->goal ? json_object_get(g->goal, attrs.v[k])
                                        : NULL;
            json_t *av;
            char *gt, *at;
            if (!goal)
                continue; /* the goal does not say: nothing to check */
            av = actual_since(c, r->nodes.v[i], g, attrs.v[k],
                              r->action_began);
            if (!(ok = maint_same_value(goal, av))) {
                gt = json_dumps(goal, JSON_ENCODE_ANY);
                at = av ? json_dumps(av, JSON_ENCODE_ANY) : NULL;
                snprintf(why, len, "node %s: %s is %s, the goal is %s", id,
                         attrs.v[k], at ? at : "not reported since the "
                         "action began", gt ? gt : "?");
                free(gt);
                free(at);
            }
            json_decref(av);
        }
    }
    strv_fini(&attrs);
    snapshot_put(s);
    return ok;
}

/* A node-state change in flight: 1 while it runs; its failure is logged
 * (a drain that failed is sent again after RETRY_S). */
static int pending(struct mreq *r, time_t now)
{
    if (!r->pending)
        return 0;
    if (reply_wait(r->pending, 0) < 0)
        return 1;
    if (r->pending->status >= 400) {
        log_warn("maintenance=%lld: node state: %s", (long long)r->id,
                 r->pending->err.message);
        if (r->state == MS_DRAINING) {
            r->drain_sent = 0;
            r->retry_at = now + (time_t)RETRY_S;
        }
    }
    reply_unref(r->pending);
    r->pending = NULL;
    return 0;
}

static void begin_action(struct mreq *r, time_t now)
{
    const struct maint_action *a = maint_conf_action(&M.conf, r->action);
    struct loom_error err;

    if (!a) /* node-off: the nodes stay out until the window ends */
        return;
    if (action_start(r, a, &err) < 0) {
        fail(r, now, err.message);
        return;
    }
    r->running = 1;
}

static void step(struct mreq *r, time_t now)
{
    char why[768];

    if (pending(r, now))
        return;
    switch (r->state) {
    case MS_PLANNED:
        if (now < (r->asap ? r->since : r->planned_start) ||
            step_to(r, MS_DRAINING, now) < 0)
            return;
        __attribute__((fallthrough)); /* drain at once */
    case MS_DRAINING:
        if (!r->drain_sent) {
            if (now < r->retry_at)
                return;
            drain_reason(r, why, sizeof(why));
            set_nodes(r, "drain", why);
            r->drain_sent = 1;
            return;
        }
        if (now < r->retry_at || !nodes_idle(r))
            return;
        if (r->planned_start > now) {
            struct loom_error err;
            if (resv_op(SCHED_RESV_ADJUST, r->resv, 1, 0, &err) < 0) {
                r->retry_at = now + (time_t)RETRY_S;
                return; /* it waits for its window */
            }
            r->planned_end = now + (r->planned_end - r->planned_start);
            r->planned_start = now;
        }
        r->action_began = now;
        if (step_to(r, MS_IN_PROGRESS, now) < 0)
            return;
        mark_nodes(r, 1);
        maint_event("info", r->cluster, "maintenance %lld in progress: %s "
                    "on %zu node(s)", (long long)r->id, r->action,
                    r->nodes.n);
        begin_action(r, now);
        return;
    case MS_IN_PROGRESS:
        if (!strcmp(r->action, "node-off")) {
            if (now >= r->planned_end)
                finish_ok(r, now);
        } else if (!r->running) { /* after a restart */
            if (verified(r, why, sizeof(why)))
                step_to(r, MS_VERIFYING, now);
            else
                begin_action(r, now);
        }
        return;
    case MS_VERIFYING:
        if (verified(r, why, sizeof(why)))
            finish_ok(r, now);
        else if (now - r->since > (time_t)M.conf.verify_s)
            fail(r, now, why);
        return;
    default:
        return;
    }
}

/* A maintenance reservation whose request is gone or closed (a crash, or
 * an answer that came too late, between the two commits): cancelled. */
static void sweep_orphans(double now)
{
    static double next;
    struct snapshot *snap;
    struct loom_error err;
    json_t *all = NULL, *it;
    size_t i;

    if (now < next)
        return;
    snap = snapshot_get();
    if (snap && snap->text[SNAP_RESV])
        all = json_loads(snap->text[SNAP_RESV]->text, 0, NULL);
    snapshot_put(snap);
    if (!all)
        return; /* not published yet: at the next tick */
    next = now + SWEEP_S;
    json_array_foreach(all, i, it) {
        int64_t id = strtoll(jx_str(it, "id", "0"), NULL, 10);
        int64_t maint = strtoll(jx_str(it, "maintenance", "0"), NULL, 10);
        const char *st = jx_str(it, "state", "");
        struct mreq *r = find(maint);
        if (!maint || (strcmp(st, "planned") && strcmp(st, "active")) ||
            (r && mstate_open(r->state) && r->resv == id))
            continue;
        if (resv_op(SCHED_RESV_CANCEL, id, 0, 0, &err) < 0)
            log_warn("reservation=%lld of no open maintenance request: %s",
                     (long long)id, err.message);
        else
            maint_event("info", "maintenance", "reservation %lld belonged "
                        "to no open maintenance request: cancelled",
                        (long long)id);
    }
    json_decref(all);
}

void mreq_tick(double now)
{
    sweep_orphans(now);
    for (size_t i = 0; i < M.n_req; i++) {
        struct mreq *r = M.req[i];
        if (mstate_open(r->state) || r->pending)
            step(r, (time_t)now);
    }
}

void mreq_action_done(struct msg *m)
{
    struct action_done *d = m->data;
    struct mreq *r = find(d->id);
    time_t now = time(NULL);

    if (!r || r->state != MS_IN_PROGRESS)
        return;
    r->running = 0;
    free(r->output);
    r->output = d->output;
    d->output = NULL;
    if (!d->ok) {
        fail(r, now, d->error ? d->error : "the action failed");
        return;
    }
    if (step_to(r, MS_VERIFYING, now) == 0)
        maint_event("info", r->cluster, "maintenance %lld: %s ended well; "
                    "verifying", (long long)r->id, r->action);
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
    }
out:
    for (size_t i = 0; i < M.n_req; i++)
        free(parts[i]);
    free(parts);
}

static int req_row(void *arg, int n, const char *const *cols)
{
    struct loom_error err;
    json_t *doc = n >= 3 ? json_loads(cols[2], 0, NULL) : NULL;
    struct mreq *r = doc ? mreq_from_doc(doc, &err) : NULL;

    (void)arg;
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
    if (r->id >= M.next_id)
        M.next_id = r->id + 1;
    if (r->state == MS_IN_PROGRESS || r->state == MS_VERIFYING)
        mark_nodes(r, 1);
    return 0;
}

/* Request ids go on after those reservations name too (a request whose
 * reservation was committed but not itself). */
static int resv_row(void *arg, const struct store_resv_row *row)
{
    json_t *doc = json_loads(row->doc, 0, NULL);
    int64_t maint = strtoll(jx_str(doc, "maintenance", "0"), NULL, 10);

    (void)arg;
    json_decref(doc);
    if (maint >= M.next_id)
        M.next_id = maint + 1;
    return 0;
}

int mreq_load(struct loom_error *err)
{
    size_t open = 0;

    if (store_maint_load(M.st, req_row, NULL, err) < 0 ||
        store_resv_load(M.st, resv_row, NULL, err) < 0)
        return -1;
    for (size_t i = 0; i < M.n_req; i++)
        open += mstate_open(M.req[i]->state);
    log_info("maintenance: %zu request(s), %zu open", M.n_req, open);
    return 0;
}
