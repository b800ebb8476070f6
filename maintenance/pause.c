/* pause.c - paused nodes: a node its owner takes back (a desk machine),
 * the jobs running on it suspended and nothing placed there until it is
 * resumed; committed first, kept across restarts. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "adaptors/server.h"
#include "core/jsonx.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/store_maint.h"
#include "core/timeutil.h"
#include "core/token.h"
#include "core/vec.h"
#include "maintenance/maint_state.h"
#include "scheduler/sched.h"

#define SHOW_WAIT_S 30.0 /* the longest wait for the node to be shown */
#define LATE_S 60.0      /* how long a resumed node's job may take to show
                            the suspend its pause asked for */

/* A suspend or resume sent to the scheduler, its answer looked at later. */
struct pcall {
    int64_t job;
    const char *op;
    struct reply *rp;
};

struct npause {
    char *id;     /* "cluster/name" */
    size_t cl;    /* the length of its cluster's name */
    char *reason, *by;
    time_t since;
    int64_t *jobs; /* the jobs this pause suspended */
    size_t n_jobs, cap_jobs;
    size_t n_saved; /* jobs[0 .. n_saved) are committed */
};

/* A job of a resumed node that did not show suspended yet (its suspend
 * not yet seen by a poll): resumed once it does, until when. */
struct late {
    int64_t job;
    double until;
};

static struct pcall *calls;
static size_t n_calls, cap_calls;
static struct late *lates;
static size_t n_lates, cap_lates;
/* The snapshot whose job table pause_tick last looked at in full, every
 * job it found committed (referenced), or NULL. */
static struct snapshot *looked;

static void npause_free(void *p)
{
    struct npause *np = p;

    if (!np)
        return;
    free(np->id);
    free(np->reason);
    free(np->by);
    free(np->jobs);
    free(np);
}

/* A new pause of node id ("cluster/name"), or NULL when out of memory. */
static struct npause *npause_new(const char *id, const char *by,
                                 const char *reason)
{
    struct npause *np = calloc(1, sizeof(*np));
    const char *slash = strchr(id, '/');

    if (!np || !slash || !(np->id = strdup(id)) || !(np->by = strdup(by)) ||
        (reason && !(np->reason = strdup(reason)))) {
        npause_free(np);
        return NULL;
    }
    np->cl = (size_t)(slash - id);
    return np;
}

static int has_job(const struct npause *np, int64_t id)
{
    for (size_t i = 0; i < np->n_jobs; i++)
        if (np->jobs[i] == id)
            return 1;
    return 0;
}

static char *render(const struct npause *np)
{
    json_t *jobs = json_array(), *o;
    char *s;

    for (size_t i = 0; jobs && i < np->n_jobs; i++)
        json_array_append_new(jobs, json_integer(np->jobs[i]));
    o = json_pack("{s:s?, s:s, s:I, s:o}", "reason", np->reason, "by",
                  np->by, "since", (json_int_t)np->since, "jobs", jobs);
    s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static int save(const struct npause *np, struct loom_error *err)
{
    char *doc = render(np);
    int rc = doc ? store_pause_put(M.st, np->id, doc, err)
                 : loom_error_set(err, LOOM_EINTERNAL, "out of memory");

    free(doc);
    return rc;
}

static void mark(const struct npause *np)
{
    char why[512];

    snprintf(why, sizeof(why), "paused by %s%s%s", np->by,
             np->reason ? ": " : "", np->reason ? np->reason : "");
    infra_pause_mark(np->id, why);
}

/* Ask the scheduler to suspend or resume a job; the answer is looked at
 * by pause_tick (a failure is logged). */
static void job_op(int64_t job, const char *op)
{
    struct sched_job_op *o = calloc(1, sizeof(*o));
    struct reply *rp = reply_create();

    if (!o || !rp || !(o->subject = strdup("loom")) ||
        vec_grow((void **)&calls, &cap_calls, n_calls + 1, sizeof(*calls),
                 8) < 0) {
        sched_job_op_free(o);
        reply_unref(rp);
        log_err("job=%lld: out of memory asking for its %s", (long long)job,
                op);
        return;
    }
    o->id = job;
    o->task = -1;
    snprintf(o->op, sizeof(o->op), "%s", op);
    o->roles = LOOM_ROLE_ADMIN;
    calls[n_calls++] = (struct pcall){job, op, rp};
    msgq_post(sched_queue(),
              msg_create(SCHED_JOB_OP, o, sched_job_op_free, rp));
}

/* Is job held suspended by a pause other than np (a job on two paused
 * nodes runs again when both are resumed)? */
static int held_elsewhere(const struct npause *np, int64_t job)
{
    for (size_t i = 0; i < M.pauses.cap; i++) {
        const struct npause *o = hmap_slot_value(&M.pauses, i);
        if (o && o != np && has_job(o, job))
            return 1;
    }
    return 0;
}

/* Does the job of view v run on np's node? */
static int runs_on(const struct jview *v, const struct npause *np)
{
    const char *name = np->id + np->cl + 1;

    if (!v->cluster || strlen(v->cluster) != np->cl ||
        strncmp(v->cluster, np->id, np->cl) != 0)
        return 0;
    for (size_t i = 0; i < v->n_nodes; i++)
        if (!strcmp(v->nodes[i], name))
            return 1;
    return 0;
}

/* Is the job of view v (id) np's to suspend and resume: on its node,
 * running, or suspended by another pause (a job on two paused nodes runs
 * again when both are resumed), and not np's yet? */
static int takes(const struct npause *np, const struct jview *v, int64_t id)
{
    int running = !strcmp(v->state, "running");

    if (!running && strcmp(v->state, "suspended") != 0)
        return 0;
    if (!runs_on(v, np) || has_job(np, id))
        return 0;
    return running || held_elsewhere(np, id);
}

/* Add to only's jobs (NULL: every pause's) those it takes, in one pass
 * over the job table. 0, or -1 with err (nothing added). */
static int collect(struct snapshot *s, struct npause *only,
                   struct loom_error *err)
{
    int64_t top = s->jobs ? jobtab_max_id(s->jobs) : 0;
    size_t n = only ? 1 : M.pauses.cap;

    for (int64_t id = 1; id <= top; id++) {
        struct jview *v = jobtab_get(s->jobs, id);
        if (!v || (strcmp(v->state, "running") != 0 &&
                   strcmp(v->state, "suspended") != 0))
            continue;
        for (size_t i = 0; i < n; i++) {
            struct npause *np = only ? only : hmap_slot_value(&M.pauses, i);
            if (!np || !takes(np, v, id))
                continue;
            if (vec_grow((void **)&np->jobs, &np->cap_jobs, np->n_jobs + 1,
                         sizeof(*np->jobs), 8) == 0) {
                np->jobs[np->n_jobs++] = id;
                continue;
            }
            for (size_t k = 0; k < n; k++) {
                np = only ? only : hmap_slot_value(&M.pauses, k);
                if (np)
                    np->n_jobs = np->n_saved;
            }
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        }
    }
    return 0;
}

/* Commit np with the jobs collect added (always: even with none), then
 * suspend those that run (a job that touches the node is suspended
 * whole, on all its nodes). The count of jobs asked to suspend, or -1
 * with err (nothing asked, the added jobs dropped). */
static int commit_new(struct snapshot *s, struct npause *np, int always,
                      struct loom_error *err)
{
    int n = 0;

    if (np->n_jobs == np->n_saved && !always)
        return 0;
    if (save(np, err) < 0) {
        np->n_jobs = np->n_saved;
        return -1;
    }
    for (size_t i = np->n_saved; i < np->n_jobs; i++) {
        struct jview *v = jobtab_get(s->jobs, np->jobs[i]);
        if (v && !strcmp(v->state, "running")) {
            job_op(np->jobs[i], "suspend");
            n++;
        }
    }
    np->n_saved = np->n_jobs;
    return n;
}

/* Show the node as its cluster's part is rendered now and answer with
 * it, as a node-state request is answered (the scheduler plans on that
 * part: once answered, nothing new is placed there). */
static void answer_node(struct reply *r, const char *cluster, const char *id)
{
    struct reply *rp = reply_create();
    struct snapshot *s;
    const struct snode *n;
    json_t *o = NULL, *a;

    if (rp) {
        server_republish(cluster, rp);
        if (reply_wait(rp, SHOW_WAIT_S) < 0)
            log_warn("node=%s: not shown again within %.0f s", id,
                     SHOW_WAIT_S);
        reply_unref(rp);
    }
    s = snapshot_get();
    n = s ? maint_node(s, id) : NULL;
    a = n ? json_loadb(n->json, n->len, 0, NULL) : NULL;
    if (a)
        o = json_pack("{s:s, s:s, s:s, s:O?}", "cluster", cluster, "name",
                      n->name, "state", n->state, "reason",
                      json_object_get(a, "reason"));
    reply_send(r, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
    json_decref(a);
    snapshot_put(s);
}

static void do_pause(struct msg *m, struct snapshot *s, struct scluster *c,
                     const char *reason)
{
    struct maint_op *op = m->data;
    struct npause *np = npause_new(op->node, op->subject, reason);
    struct loom_error err;
    int n;

    if (!np || hmap_put(&M.pauses, np->id, np) < 0) {
        npause_free(np);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(m->reply, &err);
        return;
    }
    np->since = time(NULL);
    /* shown paused before its jobs are touched (the scheduler places
     * nothing there from its next snapshot), committed before the jobs
     * are touched or the answer given */
    mark(np);
    if (collect(s, np, &err) < 0 || (n = commit_new(s, np, 1, &err)) < 0) {
        infra_pause_mark(np->id, NULL);
        hmap_del(&M.pauses, np->id);
        npause_free(np);
        loom_error_prefix(&err, "cannot pause node %s", op->node);
        reply_send_error(m->reply, &err);
        return;
    }
    maint_event("info", op->node, "paused by %s (%s): %d running job(s) "
                "suspended", op->subject, reason ? reason : "no reason given",
                n);
    answer_node(m->reply, c->name, op->node);
}

static void do_resume(struct msg *m, struct snapshot *s, struct scluster *c,
                      struct npause *np)
{
    struct loom_error err;
    size_t n = 0;

    if (store_pause_del(M.st, np->id, &err) < 0) {
        loom_error_prefix(&err, "cannot resume node %s", np->id);
        reply_send_error(m->reply, &err);
        return;
    }
    hmap_del(&M.pauses, np->id);
    infra_pause_mark(np->id, NULL);
    /* only the jobs the pause suspended, and only while they still are:
     * a job suspended on purpose, before or since, is left alone; one
     * still shown running is resumed when it shows its suspend */
    for (size_t i = 0; i < np->n_jobs; i++) {
        struct jview *v = s->jobs ? jobtab_get(s->jobs, np->jobs[i]) : NULL;
        if (!v || held_elsewhere(np, np->jobs[i]))
            continue;
        if (!strcmp(v->state, "suspended")) {
            job_op(np->jobs[i], "resume");
            n++;
        } else if (!strcmp(v->state, "running") &&
                   vec_grow((void **)&lates, &cap_lates, n_lates + 1,
                            sizeof(*lates), 8) == 0) {
            lates[n_lates++] = (struct late){np->jobs[i],
                                             time_mono() + LATE_S};
        }
    }
    maint_event("info", np->id, "resumed by %s: %zu job(s) resumed",
                ((struct maint_op *)m->data)->subject, n);
    answer_node(m->reply, c->name, np->id);
    npause_free(np);
}

/* Why pause or resume of op's node (in cluster c) is refused: 0 with
 * err filled, or 1 when it may go on. */
static int may(const struct maint_op *op, const struct scluster *c,
               const char *cl, const char *state, struct loom_error *err)
{
    const char *name = strchr(op->node, '/') + 1;

    if (!c)
        loom_error_set(err, LOOM_ENOENT, "no cluster named %s", cl);
    else if (!scluster_node(c, name))
        loom_error_set(err, LOOM_ENOENT, "cluster %s: no node %s", cl, name);
    else if (!strcmp(state, "resume") && !hmap_get(&M.pauses, op->node))
        loom_error_set(err, LOOM_ECONFLICT, "node %s is not paused",
                       op->node);
    else if (!strcmp(state, "pause") && !(c->caps & LOOM_CAP_SUSPEND))
        loom_error_set(err, LOOM_ENOTSUP, "cannot pause node %s: cluster %s "
                       "cannot suspend jobs (its adaptor lacks the suspend "
                       "capability)", op->node, cl);
    else
        return 1;
    return 0;
}

/* PUT /v1/nodes/{cluster}/{name}/state with "pause" or "resume" (the API
 * checked the body and the node's form, cluster/name). */
void pause_put(struct msg *m)
{
    struct maint_op *op = m->data;
    json_t *body = json_loads(op->body ? op->body : "{}", 0, NULL);
    const char *state = jx_str(body, "state", "");
    struct snapshot *s = snapshot_get();
    const char *slash = strchr(op->node, '/');
    struct npause *np = hmap_get(&M.pauses, op->node);
    struct loom_error err;
    struct scluster *c;
    char cl[256];

    snprintf(cl, sizeof(cl), "%.*s", (int)(slash - op->node), op->node);
    c = s ? snapshot_cluster(s, cl) : NULL;
    if (!may(op, c, cl, state, &err))
        reply_send_error(m->reply, &err);
    else if (!strcmp(state, "resume"))
        do_resume(m, s, c, np);
    else if (np)
        answer_node(m->reply, cl, op->node); /* paused already */
    else
        do_pause(m, s, c, jx_str(body, "reason", NULL));
    snapshot_put(s);
    json_decref(body);
}

/* The answers to suspends and resumes sent: failures logged. */
static void calls_reap(void)
{
    size_t k = 0;

    for (size_t i = 0; i < n_calls; i++) {
        struct pcall *p = &calls[i];
        if (reply_wait(p->rp, 0) < 0) {
            calls[k++] = *p;
            continue;
        }
        if (p->rp->status >= 400)
            maint_event("warn", "pause", "job %lld: %s failed: %s",
                        (long long)p->job, p->op, p->rp->err.message);
        reply_unref(p->rp);
    }
    n_calls = k;
}

/* The jobs of resumed nodes that now show the suspend their pause asked
 * for: resumed. */
static void lates_resume(struct snapshot *s)
{
    double now = time_mono();
    size_t k = 0;

    for (size_t i = 0; i < n_lates; i++) {
        struct late *l = &lates[i];
        struct jview *v = s->jobs ? jobtab_get(s->jobs, l->job) : NULL;
        if (v && !strcmp(v->state, "suspended") &&
            !held_elsewhere(NULL, l->job))
            job_op(l->job, "resume");
        else if (v && !strcmp(v->state, "running") && now < l->until)
            lates[k++] = *l;
    }
    n_lates = k;
}

void pause_tick(void)
{
    struct loom_error err;
    struct snapshot *s;
    int failed;

    calls_reap();
    if (n_lates) {
        s = snapshot_get();
        if (s)
            lates_resume(s);
        snapshot_put(s);
    }
    if (!M.pauses.n || !leader_may_act()) {
        snapshot_put(looked);
        looked = NULL;
        return;
    }
    /* a job placed in the moment before the node showed paused, or
     * started by its cluster itself, is suspended too: looked for once
     * per job table (this runs on every pass of the loop) */
    s = snapshot_get();
    if (!s || (looked && looked->jobs == s->jobs)) {
        snapshot_put(s);
        return;
    }
    if ((failed = collect(s, NULL, &err) < 0))
        log_warn("paused nodes: their running jobs not looked at: %s",
                 err.message);
    for (size_t i = 0; i < M.pauses.cap; i++) {
        struct npause *np = hmap_slot_value(&M.pauses, i);
        int n = np ? commit_new(s, np, 0, &err) : 0;
        if (n < 0)
            log_warn("node=%s: paused, but its running jobs not suspended: "
                     "%s", np->id, err.message);
        else if (n > 0)
            maint_event("info", np->id, "paused: %d more running job(s) "
                        "suspended", n);
        failed |= n < 0;
    }
    /* after a failure the same table is looked at again */
    snapshot_put(failed ? s : looked);
    if (!failed)
        looked = s;
}

static int load_row(void *arg, int n, const char *const *cols)
{
    json_t *doc = n >= 2 ? json_loads(cols[1], 0, NULL) : NULL;
    struct npause *np = doc ? npause_new(cols[0], jx_str(doc, "by", "?"),
                                         jx_str(doc, "reason", NULL))
                            : NULL;
    json_t *e;
    size_t i;
    int bad = !np;

    (void)arg;
    if (!bad)
        np->since = (time_t)jx_int(doc, "since", 0);
    json_array_foreach(bad ? NULL : json_object_get(doc, "jobs"), i, e) {
        if (vec_grow((void **)&np->jobs, &np->cap_jobs, np->n_jobs + 1,
                     sizeof(*np->jobs), 8) < 0) {
            bad = 1;
            break;
        }
        np->jobs[np->n_jobs++] = json_integer_value(e);
    }
    json_decref(doc);
    if (np)
        np->n_saved = np->n_jobs;
    if (bad || hmap_put(&M.pauses, np->id, np) < 0) {
        npause_free(np);
        return -1;
    }
    mark(np);
    return 0;
}

int maint_pauses_load(struct store *st, struct loom_error *err)
{
    hmap_init(&M.pauses);
    if (store_pause_load(st, load_row, NULL, err) < 0)
        return loom_error_prefix(err, "maintenance");
    if (M.pauses.n)
        log_info("maintenance: %zu paused node(s)", M.pauses.n);
    return 0;
}

void pause_fini(void)
{
    hmap_fini_values(&M.pauses, npause_free);
    for (size_t i = 0; i < n_calls; i++)
        reply_unref(calls[i].rp);
    free(calls);
    calls = NULL;
    n_calls = cap_calls = 0;
    free(lates);
    lates = NULL;
    n_lates = cap_lates = 0;
    snapshot_put(looked);
    looked = NULL;
    infra_pause_clear();
}
