/* sched_resv.c - advance reservations in the scheduler thread: create
 * (a fixed window checked, a flexible one placed at its earliest slot),
 * cancel, their life (planned -> active -> done), the published list. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/store_resv.h"
#include "core/token.h"
#include "core/timeutil.h"
#include "scheduler/sched_plan.h"
#include "scheduler/sched_state.h"

void sched_resv_op_free(void *p)
{
    struct sched_resv_op *op = p;

    if (!op)
        return;
    resv_req_fini(&op->rq);
    resv_destroy(op->stored);
    free(op->subject);
    free(op);
}

struct resv *sched_resv_find(int64_t id)
{
    for (size_t i = 0; i < S.n_resv; i++)
        if (S.resv[i]->id == id)
            return S.resv[i];
    return NULL;
}

static void count_open(void)
{
    S.n_resv_open = 0;
    for (size_t i = 0; i < S.n_resv; i++)
        S.n_resv_open += S.resv[i]->state == RESV_PLANNED ||
                         S.resv[i]->state == RESV_ACTIVE;
}

/* Its cluster's part is rendered again (from its last poll) once the list
 * is published, so that its nodes show the reservation (reserved) or no
 * longer show it. */
static void poll_later(const char *cluster)
{
    for (size_t i = 0; i < S.resv_polls.n; i++)
        if (!strcmp(S.resv_polls.v[i], cluster))
            return;
    if (strv_push(&S.resv_polls, cluster) < 0)
        log_err("cluster=%s: out of memory; its nodes show a reservation's "
                "change at the next poll", cluster);
}

/* When r ended: its end, or now when it ends before it (cancelled). */
static time_t ended_at(const struct resv *r, time_t now)
{
    return r->end < now ? r->end : now;
}

/* Write it with the next turn, show it, and plan around it. */
void sched_resv_touch(int64_t id)
{
    struct resv *r = sched_resv_find(id);

    if (r)
        poll_later(r->cluster);
    if (r && resv_state_final(r->state) && !r->ended)
        r->ended = ended_at(r, time(NULL));
    for (size_t i = 0; i < S.n_resv_dirty; i++)
        if (S.resv_dirty[i] == id)
            return;
    if (sched_grow((void **)&S.resv_dirty, &S.cap_resv_dirty,
                   S.n_resv_dirty + 1, sizeof(*S.resv_dirty)) < 0) {
        log_err("reservation=%lld: out of memory; the change stays in memory",
                (long long)id);
        return;
    }
    S.resv_dirty[S.n_resv_dirty++] = id;
    S.resv_gen++;
    S.resv_changed = 1;
    S.need_cycle = 1;
    count_open();
}

static int resv_add(struct resv *r)
{
    if (sched_grow((void **)&S.resv, &S.cap_resv, S.n_resv + 1,
                   sizeof(*S.resv)) < 0)
        return -1;
    S.resv[S.n_resv++] = r;
    if (r->id >= S.next_resv)
        S.next_resv = r->id + 1;
    count_open();
    return 0;
}

static int names_node(const struct strv *nodes, const char *name)
{
    for (size_t i = 0; i < nodes->n; i++)
        if (!strcmp(nodes->v[i], name))
            return 1;
    return 0;
}

/* A forced window: the jobs that would still run at start on the named
 * nodes are cancelled (their ids added to cancelled). 0 or -1. */
static int force_window(struct resv *r, const struct resv_req *rq,
                        double start, struct strv *cancelled,
                        struct loom_error *err)
{
    char why[160], id[24];

    if (rq->maint)
        snprintf(why, sizeof(why), "cancelled by maintenance %lld (forced "
                 "window)", (long long)rq->maint);
    else
        snprintf(why, sizeof(why), "cancelled by a forced window on cluster "
                 "%s", rq->cluster);
    for (size_t i = 0; i < S.n_live; i++) {
        struct job *j = sched_job(S.live[i]);
        double end;
        int hit = 0;
        if (!j || !job_holds_nodes(j) || !j->cluster ||
            strcmp(j->cluster, rq->cluster))
            continue;
        end = (double)(j->start_time ? j->start_time : time(NULL)) +
              (double)j->req.walltime_s + S.conf.plan.overdue_s;
        for (size_t k = 0; k < j->nodes.n && !hit; k++)
            hit = names_node(&rq->nodes, j->nodes.v[k]);
        if (!hit || end <= start)
            continue;
        snprintf(id, sizeof(id), "%lld", (long long)j->id);
        if (strv_push(cancelled, id) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        log_warn("job=%lld cancelled: in the way of a forced maintenance "
                 "window on cluster=%s", (long long)j->id, rq->cluster);
        sched_cancel_job(j, why);
    }
    for (size_t k = 0; k < rq->nodes.n; k++)
        if (strv_push(&r->nodes, rq->nodes.v[k]) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    r->start = (time_t)start;
    r->end = r->start + rq->duration_s;
    return 0;
}

/* The window: the fixed one if nothing is in its way, or the earliest
 * slot of a flexible one. 0 with r's nodes and times set, or -1. A forced
 * window on named nodes cancels what is in its way (listed in
 * cancelled). */
static int place(struct resv *r, const struct resv_req *rq,
                 struct strv *cancelled, struct loom_error *err)
{
    struct fabric f;
    struct plan *p = NULL;
    size_t c, *idx = NULL, *chosen = NULL, want;
    double now = time_real(), start, nb, latest;
    char why[440];
    int rc = -1, found;

    if (fabric_build(&f) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "no cluster has been "
                              "polled yet");
    if (fabric_cluster(&f, rq->cluster, &c) < 0) {
        loom_error_field(err, LOOM_ENOENT, "cluster", "there is no cluster "
                         "named '%s'", rq->cluster);
        goto out;
    }
    want = rq->nodes.n ? rq->nodes.n : (size_t)rq->count;
    if (!(idx = malloc((rq->nodes.n + 1) * sizeof(*idx))) ||
        !(p = fabric_plan(&f, now, 0))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (fabric_nodes(&f, c, &rq->nodes, idx) < 0) {
        loom_error_field(err, LOOM_ENOENT, "nodes", "cluster %s has no such "
                         "node", rq->cluster);
        goto out;
    }
    if (sched_resv_never(&f, c, rq, err) < 0)
        goto out;
    nb = rq->fixed ? (double)rq->start : (double)rq->not_before;
    latest = rq->fixed ? nb : (double)(rq->deadline - rq->duration_s);
    if (rq->fixed && rq->start + rq->duration_s <= (time_t)now) {
        loom_error_field(err, LOOM_EINVAL, "start", "the window is over "
                         "already");
        goto out;
    }
    if (rq->fixed && nb < now) /* begun already: from now on */
        nb = latest = now;
    found = plan_find_window(p, c, rq->nodes.n ? idx : NULL, rq->nodes.n,
                             want, (const char *const *)rq->features.v,
                             rq->features.n, nb, latest,
                             (double)rq->duration_s, &start, &chosen, why,
                             sizeof(why));
    if (found < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (!found && rq->force && rq->nodes.n) {
        rc = force_window(r, rq, nb, cancelled, err);
        goto out;
    }
    if (!found && rq->fixed)
        sched_resv_in_way(&f, c, rq, nb, nb + (double)rq->duration_s, why,
                          sizeof(why));
    if (!found) {
        loom_error_set(err, LOOM_ECONFLICT, "no window for the reservation "
                       "on cluster %s: %s", rq->cluster, why);
        goto out;
    }
    for (size_t k = 0; k < want; k++)
        if (strv_push(&r->nodes, f.cl[c].nodes[chosen[k]].name) < 0) {
            loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            goto out;
        }
    r->start = rq->fixed && rq->start < (time_t)start ? rq->start
                                                      : (time_t)start;
    r->end = (rq->fixed ? rq->start : r->start) + rq->duration_s;
    if (rq->asap)
        r->hold_from = (time_t)now;
    rc = 0;
out:
    free(idx);
    free(chosen);
    plan_destroy(p);
    fabric_fini(&f);
    return rc;
}

/* The reservation's JSON, with the jobs a forced window cancelled. */
static char *render_created(const struct resv *r, const struct strv *cancelled)
{
    char *text = resv_render(r);
    json_t *o, *a;

    if (!text || !cancelled->n)
        return text;
    o = json_loads(text, 0, NULL);
    a = json_array();
    for (size_t i = 0; o && a && i < cancelled->n; i++)
        json_array_append_new(a, json_string(cancelled->v[i]));
    if (o && a && json_object_set(o, "cancelled_jobs", a) == 0) {
        free(text);
        text = json_dumps(o, JSON_COMPACT);
    }
    json_decref(a);
    json_decref(o);
    return text;
}

void sched_resv_create(struct msg *m)
{
    struct sched_resv_op *op = m->data;
    struct resv *r = calloc(1, sizeof(*r));
    struct strv cancelled = {0};
    struct loom_error err;

    if (!r || !(r->purpose = strdup(op->rq.purpose)) ||
        !(r->owner = strdup(op->subject)) ||
        !(r->cluster = strdup(op->rq.cluster)) ||
        job_set_str(&r->reason, op->rq.reason) < 0 ||
        job_set_str(&r->account, op->rq.account) < 0) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (place(r, &op->rq, &cancelled, &err) < 0)
        goto error;
    r->maint = op->rq.maint;
    r->id = S.next_resv > 0 ? S.next_resv : 1;
    r->state = r->start <= time(NULL) ? RESV_ACTIVE : RESV_PLANNED;
    if (resv_add(r) < 0) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    sched_resv_touch(r->id);
    log_info("reservation=%lld %s on cluster=%s, %zu node(s), by %s",
             (long long)r->id, r->purpose, r->cluster, r->nodes.n, r->owner);
    sched_ack_body_later(m->reply, 201, render_created(r, &cancelled));
    strv_fini(&cancelled);
    return;
error:
    strv_fini(&cancelled);
    resv_destroy(r);
    reply_send_error(m->reply, &err);
}

/* Begin a maintenance reservation now: its window moves up to now when
 * nothing else needs its nodes before its start. */
static int start_now(struct resv *r, struct loom_error *err)
{
    struct fabric f;
    struct plan *p = NULL;
    size_t c, *idx = NULL, *chosen = NULL;
    double now = time_real(), start;
    char why[256];
    int rc = -1, found;

    if (r->start <= (time_t)now)
        return 0;
    if (fabric_build(&f) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "no cluster has been "
                              "polled yet");
    if (fabric_cluster(&f, r->cluster, &c) < 0 ||
        !(idx = malloc((r->nodes.n + 1) * sizeof(*idx))) ||
        fabric_nodes(&f, c, &r->nodes, idx) < 0 ||
        !(p = fabric_plan(&f, now, r->id))) {
        loom_error_set(err, LOOM_ECONFLICT, "reservation %lld: its cluster "
                       "or nodes are gone", (long long)r->id);
        goto out;
    }
    found = plan_find_window(p, c, idx, r->nodes.n, r->nodes.n, NULL, 0, now,
                             now, (double)(r->end - r->start), &start,
                             &chosen, why, sizeof(why));
    if (found <= 0) {
        loom_error_set(err, LOOM_ECONFLICT, "reservation %lld cannot begin "
                       "now: %s", (long long)r->id,
                       found < 0 ? "out of memory" : why);
        goto out;
    }
    r->end = (time_t)now + (r->end - r->start);
    r->start = (time_t)now;
    r->state = RESV_ACTIVE;
    rc = 0;
out:
    free(idx);
    free(chosen);
    plan_destroy(p);
    fabric_fini(&f);
    return rc;
}

/* Reservation op->id: in memory, or (ended, and gone from memory) as the
 * database holds it when the API read it; NULL otherwise. */
static struct resv *find_for(const struct sched_resv_op *op)
{
    struct resv *r = sched_resv_find(op->id);
    enum resv_state st;
    int maint;

    if (!r && op->stored && op->stored->id == op->id &&
        sched_resv_gone(op->id, &st, &maint))
        r = op->stored;
    return r;
}

/* Answer an operation on reservation op->id, gone from memory and not
 * read by the API, from what stays of it: asked by the maintenance thread
 * (a maintenance one only when maint_only), its state (a cancelled one's
 * record is not kept: that thread takes the 409 as the 200 it had from
 * memory, ended already); asked through the API, which read it just
 * before it left, to ask again (the owner and roles are not kept). 1 when
 * answered. */
static int answer_gone(struct msg *m, const struct sched_resv_op *op,
                       int maint_only)
{
    struct loom_error err;
    enum resv_state st;
    int64_t id = op->id;
    int maint;

    if (!sched_resv_gone(id, &st, &maint))
        return 0;
    if (op->roles)
        loom_error_set(&err, LOOM_EUNAVAIL, "reservation %lld left memory "
                       "as it was asked for; ask again", (long long)id);
    else if (maint_only && !maint)
        loom_error_set(&err, LOOM_ENOENT, "there is no maintenance "
                       "reservation %lld", (long long)id);
    else
        loom_error_set(&err, LOOM_ECONFLICT, "reservation %lld is %s",
                       (long long)id, resv_state_name(st));
    reply_send_error(m->reply, &err);
    return 1;
}

void sched_resv_adjust(struct msg *m)
{
    struct sched_resv_op *op = m->data;
    struct resv *r = find_for(op);
    struct loom_error err;

    if (!r && answer_gone(m, op, 1))
        return;
    if (!r || strcmp(r->purpose, "maintenance")) {
        loom_error_set(&err, LOOM_ENOENT, "there is no maintenance "
                       "reservation %lld", (long long)op->id);
        reply_send_error(m->reply, &err);
        return;
    }
    if (r->state == RESV_DONE || r->state == RESV_CANCELLED) {
        loom_error_set(&err, LOOM_ECONFLICT, "reservation %lld is %s",
                       (long long)r->id, resv_state_name(r->state));
        reply_send_error(m->reply, &err);
        return;
    }
    if (op->start_now && start_now(r, &err) < 0) {
        reply_send_error(m->reply, &err);
        return;
    }
    if (op->end_now) {
        r->end = time(NULL);
        if (r->start > r->end)
            r->start = r->end;
        r->state = RESV_DONE;
    }
    sched_resv_touch(r->id);
    log_info("reservation=%lld %s by %s", (long long)r->id,
             op->end_now ? "ended" : "begun now", op->subject);
    sched_ack_body_later(m->reply, 200, resv_render(r));
}

/* A maintenance request's reservation ends with its request; admins and
 * operators cancel any other; the scheduler role only those it made, and
 * never a maintenance one. */
static int may_cancel(const struct resv *r, const struct sched_resv_op *op,
                      struct loom_error *err)
{
    if (!op->roles) /* the maintenance thread ends its own */
        return 0;
    if (r->maint)
        return loom_error_set(err, LOOM_ECONFLICT, "reservation %lld serves "
                              "maintenance request %lld: it ends with that "
                              "request (DELETE /v1/maintenance/%lld)",
                              (long long)r->id, (long long)r->maint,
                              (long long)r->maint);
    if (op->roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR))
        return 0;
    if (!strcmp(r->purpose, "maintenance"))
        return loom_error_set(err, LOOM_EPERM, "reservation %lld is a "
                              "maintenance reservation: only an operator or "
                              "admin may cancel it", (long long)r->id);
    if (strcmp(r->owner, op->subject) != 0)
        return loom_error_set(err, LOOM_EPERM, "reservation %lld belongs to "
                              "%s: %s may cancel only its own",
                              (long long)r->id, r->owner, op->subject);
    return 0;
}

void sched_resv_cancel(struct msg *m)
{
    struct sched_resv_op *op = m->data;
    struct resv *r = find_for(op);
    struct loom_error err;

    if (!r && answer_gone(m, op, 0))
        return;
    if (!r) {
        loom_error_set(&err, LOOM_ENOENT, "there is no reservation %lld",
                       (long long)op->id);
        reply_send_error(m->reply, &err);
        return;
    }
    if (r->state == RESV_DONE) {
        loom_error_set(&err, LOOM_ECONFLICT, "reservation %lld is done",
                       (long long)r->id);
        reply_send_error(m->reply, &err);
        return;
    }
    if (may_cancel(r, op, &err) < 0) {
        reply_send_error(m->reply, &err);
        return;
    }
    if (r->state != RESV_CANCELLED) {
        r->state = RESV_CANCELLED;
        sched_resv_touch(r->id);
        log_info("reservation=%lld cancelled by %s", (long long)r->id,
                 op->subject);
    }
    sched_ack_body_later(m->reply, 200, resv_render(r));
}

void sched_resv_tick(time_t now)
{
    for (size_t i = 0; i < S.n_resv; i++) {
        struct resv *r = S.resv[i];
        enum resv_state st = r->state;
        if (st == RESV_PLANNED && r->start <= now)
            r->state = RESV_ACTIVE;
        if ((r->state == RESV_ACTIVE) && r->end <= now)
            r->state = RESV_DONE;
        if (r->state != st)
            sched_resv_touch(r->id);
    }
}

/* The list is small: published whole, as a JSON array of the records. */
void sched_resv_publish(void)
{
    char **parts;
    struct stext *t = NULL;

    if (!S.resv_changed || !(parts = calloc(S.n_resv + 1, sizeof(*parts))))
        return;
    for (size_t i = 0; i < S.n_resv; i++)
        if (!(parts[i] = resv_render(S.resv[i])))
            goto out;
    if ((t = stext_array(parts, S.n_resv))) {
        snapshot_publish_text(SNAP_RESV, t);
        S.resv_changed = 0;
        for (size_t i = 0; i < S.resv_polls.n; i++)
            server_republish(S.resv_polls.v[i], NULL);
        strv_fini(&S.resv_polls);
    }
out:
    for (size_t i = 0; i < S.n_resv; i++)
        free(parts[i]);
    free(parts);
}

static int load_row(void *arg, const struct store_resv_row *row)
{
    struct load_count *c = arg;
    struct loom_error err;
    json_t *doc;
    struct resv *r;

    if (!row->doc) { /* ended long ago: it would leave memory at once */
        c->n_light++;
        return sched_resv_evict_loaded(row);
    }
    doc = json_loads(row->doc, 0, NULL);
    r = doc ? resv_from_doc(doc, &err) : NULL;
    json_decref(doc);
    if (!r) {
        log_err("reservation=%lld: stored record unreadable; skipped",
                (long long)row->id);
        return 0;
    }
    r->stored = 1;
    if (resv_state_final(r->state))
        r->ended = ended_at(r, time(NULL));
    c->n++;
    return resv_add(r);
}

int sched_resv_load(struct loom_error *err)
{
    double t0 = time_mono();
    struct load_count c = {0};
    char upto[32];

    /* What ended resv_memory_s ago or before would leave memory at the
     * first look (sched_resv_evict_tick): only what that keeps is read. */
    if (store_resv_load(S.st,
                        time_format_before(time(NULL), S.conf.resv_memory_s,
                                           upto),
                        load_row, &c, err) < 0)
        return -1;
    log_info("loaded %zu reservation(s) in %.0f ms; %zu ended before %.0f "
             "s ago left in the database", c.n, (time_mono() - t0) * 1000,
             c.n_light, S.conf.resv_memory_s);
    S.resv_changed = 1;
    return 0;
}
