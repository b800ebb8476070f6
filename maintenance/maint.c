/* maint.c - the maintenance interface thread: its loop, its queue, the
 * event log. */
/* SPDX-License-Identifier: MIT */
#include "maintenance/maint.h"

#include <jansson.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "maintenance/maint_state.h"

#define PERIOD_S 1.0

struct maint M;

void maint_op_free(void *p)
{
    struct maint_op *op = p;

    if (!op)
        return;
    free(op->node);
    free(op->body);
    free(op->subject);
    free(op);
}

/* An automatic decision: in loomd's log and in the event log. */
void maint_event(const char *level, const char *subject, const char *fmt, ...)
{
    struct loom_error err;
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    log_msg(strcmp(level, "warn") ? LOG_INFO : LOG_WARNING, "%s: %s",
            subject, msg);
    if (store_event(M.st, level, "maintenance", subject, msg, &err) < 0)
        log_warn("event log: %s", err.message);
}

static void status(struct reply *r)
{
    size_t open = 0;
    json_t *o;

    for (size_t i = 0; i < M.n_req; i++)
        open += mstate_open(M.req[i]->state);
    o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:I}",
                  "requests", (json_int_t)(M.n_req + M.n_gone),
                  "in_memory", (json_int_t)M.n_req, "open", (json_int_t)open,
                  "mismatches", (json_int_t)M.mism.n,
                  "nodes", (json_int_t)M.nodes.n,
                  "compare_ms_last", M.compare_ms_last,
                  "compare_ms_max", M.compare_ms_max,
                  "compares", (json_int_t)M.compares,
                  "rules", (json_int_t)M.conf.n_rules);
    reply_send(r, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
}

/* A reload: new rules and actions; every mismatch finds its rule again. */
static void reconfigure(struct maint_conf *mc)
{
    for (size_t i = 0; i < M.mism.cap; i++) {
        struct mism *x = hmap_slot_value(&M.mism, i);
        if (x)
            x->rule = NULL; /* they point into the old rules */
    }
    maint_conf_fini(&M.conf);
    M.conf = *mc;
    memset(mc, 0, sizeof(*mc));
    M.compare_all = 1;
    diff_requests_changed();
    log_info("maintenance: %zu action(s), %zu rule(s)", M.conf.n_actions,
             M.conf.n_rules);
}

static void handle(struct msg *m)
{
    switch (m->type) {
    case MAINT_STATUS: status(m->reply); break;
    case MAINT_GOAL_PUT: goal_put(m); break;
    case MAINT_GOAL_GET: goal_get(m); break;
    case MAINT_ACTUAL_POST: actual_post(m); break;
    case MAINT_ACTUAL_GET: actual_get(m); break;
    case MAINT_REQ_POST: mreq_post(m); break;
    case MAINT_REQ_CANCEL: mreq_cancel(m); break;
    case MAINT_ACTION_DONE: mreq_action_done(m); break;
    case MAINT_CONFIG: reconfigure(m->data); break;
    case MAINT_NODE_PAUSE: pause_put(m); break;
    }
}

/* What every pass of the loop ends with: the periodic work, then what
 * changed written and shown. */
static void tick(void)
{
    double now = time_real();

    compare_tick(now);
    /* What acts (requests made and carried through their steps) waits
     * while this loomd is not the active one. */
    if (leader_may_act()) {
        rules_apply(now);
        mreq_tick(now);
    }
    mreq_evict(now);
    mreq_doubt_settle();
    pause_tick();
    if (mism_flush() == 0 && M.diff_changed)
        diff_publish();
    mreq_publish();
}

static void *maint_main(void *arg)
{
    (void)arg;
    log_thread_name("maint");
    for (;;) {
        struct msg *m = msgq_take(M.q, PERIOD_S, 64), *next;
        for (; m; m = next) {
            int type = m->type;
            next = m->next;
            if (type == 0) {
                for (; m; m = next) {
                    next = m->next;
                    msg_destroy(m);
                }
                return NULL;
            }
            log_request_set(m->request);
            handle(m);
            log_request_set(NULL);
            msg_destroy(m);
        }
        tick();
    }
}

int maint_start(struct maint_conf *mc, const char *database,
                struct loom_error *err)
{
    hmap_init(&M.nodes);
    hmap_init(&M.mism);
    M.conf = *mc;
    memset(mc, 0, sizeof(*mc));
    M.next_id = 1;
    M.compare_all = 1;
    M.mism_set = json_array();
    M.mism_gone = json_array();
    if (!M.mism_set || !M.mism_gone || !(M.q = msgq_create()))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (!(M.st = store_open(database, err)) || goal_load(err) < 0 ||
        mism_load(err) < 0 || mreq_load(err) < 0)
        return loom_error_prefix(err, "maintenance");
    M.diff_changed = M.req_changed = 1;
    diff_publish();
    mreq_publish();
    if (pthread_create(&M.thread, NULL, maint_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "maintenance thread");
    M.running = 1;
    return 0;
}

static void gnode_free(void *p)
{
    struct gnode *g = p;

    free(g->id);
    json_decref(g->goal);
    json_decref(g->reports);
    json_decref(g->mm);
    free(g);
}

void maint_stop(void)
{
    if (M.running) {
        msgq_post(M.q, msg_create(0, NULL, NULL, NULL));
        pthread_join(M.thread, NULL);
    }
    action_shutdown();
    if (M.st) {
        mism_flush();
        mreq_doubt_settle();
    }
    if (M.n_doubt)
        log_warn("maintenance: stopping with %zu request(s) whose first "
                 "write is in doubt; if stored, the next start loads them",
                 M.n_doubt);
    free(M.doubt);
    msgq_destroy(M.q);
    store_close(M.st);
    hmap_fini_values(&M.nodes, gnode_free);
    hmap_fini_values(&M.mism, mism_free);
    for (size_t i = 0; i < M.n_req; i++)
        mreq_destroy(M.req[i]);
    free(M.req);
    free(M.open);
    for (size_t i = 0; i < M.n_seen; i++)
        scluster_unref(M.seen[i]);
    free(M.seen);
    json_decref(M.mism_set);
    json_decref(M.mism_gone);
    maint_conf_fini(&M.conf);
    pause_fini();
    infra_maint_clear();
    infra_annot_clear();
    memset(&M, 0, sizeof(M));
}

struct msgq *maint_queue(void)
{
    return M.q;
}
