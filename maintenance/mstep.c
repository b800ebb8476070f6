/* mstep.c - a maintenance request carried through its steps: drain, the
 * nodes idle, the action, verification; each step committed before it is
 * carried out. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "maintenance/maint_state.h"
#include "scheduler/sched.h"

#define RETRY_S 10.0 /* a failed node-state change is tried again */
#define SWEEP_S 60.0 /* how often reservations without a request are sought */

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

/* A node-state change or a showing of the nodes in flight: 1 while it
 * runs; its failure is logged (a drain that failed is sent again after
 * RETRY_S). A showing is waited for until pending_until only. */
static int pending(struct mreq *r, time_t now)
{
    if (!r->pending)
        return 0;
    if (reply_wait(r->pending, 0) < 0) {
        if (!r->pending_until || now < r->pending_until)
            return 1;
        log_warn("maintenance=%lld: cluster %s has not shown its nodes in "
                 "maintenance after %d s (its worker is busy); going on",
                 (long long)r->id, r->cluster, MARK_WAIT_S);
    } else if (r->pending->status >= 400) {
        log_warn("maintenance=%lld: %s: %s", (long long)r->id,
                 r->pending_until ? "showing its nodes" : "node state",
                 r->pending->err.message);
        if (r->state == MS_DRAINING && !r->pending_until) {
            r->drain_sent = 0;
            r->retry_at = now + (time_t)RETRY_S;
        }
    }
    reply_unref(r->pending);
    r->pending = NULL;
    r->pending_until = 0;
    return 0;
}

static void begin_action(struct mreq *r, time_t now)
{
    const struct maint_action *a = maint_conf_action(&M.conf, r->action);
    struct loom_error err;

    if (!a) /* node-off: the nodes stay out until the window ends */
        return;
    if (action_start(r, a, &err) < 0) {
        mreq_fail(r, now, err.message);
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
            mreq_step_to(r, MS_DRAINING, now) < 0)
            return;
        __attribute__((fallthrough)); /* drain at once */
    case MS_DRAINING:
        if (!r->drain_sent) {
            if (now < r->retry_at)
                return;
            mreq_drain_reason(r, why, sizeof(why));
            mreq_set_nodes(r, "drain", why);
            r->drain_sent = 1;
            return;
        }
        if (now < r->retry_at || !nodes_idle(r))
            return;
        if (r->planned_start > now) {
            struct loom_error err;
            if (mreq_resv_op(SCHED_RESV_ADJUST, r->resv, 1, 0, &err) < 0) {
                r->retry_at = now + (time_t)RETRY_S;
                return; /* it waits for its window */
            }
            r->planned_end = now + (r->planned_end - r->planned_start);
            r->planned_start = now;
        }
        if (!r->marked) {
            /* Whoever sees the request in progress sees its nodes
             * "maint": they are shown so first, and it goes on once
             * their cluster has published them (a later tick). */
            mreq_mark_nodes(r, 1, 1);
            r->marked = 1;
            return;
        }
        r->action_began = now;
        if (mreq_step_to(r, MS_IN_PROGRESS, now) < 0)
            return;
        maint_event("info", r->cluster, "maintenance %lld in progress: %s "
                    "on %zu node(s)", (long long)r->id, r->action,
                    r->nodes.n);
        begin_action(r, now);
        return;
    case MS_IN_PROGRESS:
        if (!strcmp(r->action, "node-off")) {
            if (now >= r->planned_end)
                mreq_finish_ok(r, now);
        } else if (!r->running) { /* after a restart */
            if (verified(r, why, sizeof(why)))
                mreq_step_to(r, MS_VERIFYING, now);
            else
                begin_action(r, now);
        }
        return;
    case MS_VERIFYING:
        if (verified(r, why, sizeof(why)))
            mreq_finish_ok(r, now);
        else if (now - r->since > (time_t)M.conf.verify_s)
            mreq_fail(r, now, why);
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
        struct mreq *r = mreq_find(maint);
        if (!maint || (strcmp(st, "planned") && strcmp(st, "active")) ||
            (r && mstate_open(r->state) && r->resv == id))
            continue;
        if (mreq_resv_op(SCHED_RESV_CANCEL, id, 0, 0, &err) < 0)
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
    struct mreq *r = mreq_find(d->id);
    time_t now = time(NULL);

    if (!r || r->state != MS_IN_PROGRESS)
        return;
    r->running = 0;
    free(r->output);
    r->output = d->output;
    d->output = NULL;
    if (!d->ok) {
        mreq_fail(r, now, d->error ? d->error : "the action failed");
        return;
    }
    if (mreq_step_to(r, MS_VERIFYING, now) == 0)
        maint_event("info", r->cluster, "maintenance %lld: %s ended well; "
                    "verifying", (long long)r->id, r->action);
}
