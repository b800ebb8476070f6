/* server_poll.c - a cluster's poll: jobs, nodes, queues, then publish. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "adaptors/server_state.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched.h"

#define QUEUE_POLL_EVERY 10
#define POLL_MIN_GAP_S 0.2

static void msgs_free(struct msg *m)
{
    while (m) {
        struct msg *nx = m->next;
        msg_destroy(m);
        m = nx;
    }
}

static void poll_free(struct srv_poll *p)
{
    if (!p)
        return;
    sched_cluster_jobs_free(p->cj);
    cl_node_list_fini(&p->nodes);
    msgs_free(p->waiters);
    free(p);
}

void server_poll_drop(struct srv_cluster *c)
{
    poll_free(c->poll);
    c->poll = NULL;
    msgs_free(c->waiting);
    c->waiting = NULL;
    msgs_free(c->refreshing);
    c->refreshing = NULL;
    msgs_free(c->refresh_batch);
    c->refresh_batch = NULL;
}

static void poll_failed(struct srv_cluster *c, const char *op,
                        const struct loom_error *err_in)
{
    struct loom_error err = *err_in;
    char msg[640];

    server_error_prefix(&err, c->name, op);
    snprintf(msg, sizeof(msg), "%s", err.message);
    if (!c->error || strcmp(c->error, msg) != 0)
        log_warn("%s", msg);
    free(c->error);
    c->error = strdup(msg);
    c->fails++;
}

/* Answer a node-state request with the node as the cluster shows it. */
static void answer_node(struct srv_cluster *c, struct msg *m)
{
    struct server_node_state *ns = m->data;

    for (size_t i = 0; i < c->nodes.n; i++)
        if (!strcmp(c->nodes.v[i].name, ns->node)) {
            json_t *o = json_pack("{s:s, s:s, s:s, s:s?}", "cluster", c->name,
                                  "name", ns->node, "state",
                                  c->nodes.v[i].state, "reason",
                                  c->nodes.v[i].reason);
            reply_send(m->reply, 200, json_dumps(o, JSON_COMPACT));
            json_decref(o);
            return;
        }
    reply_send(m->reply, 200, NULL);
}

/* The poll ended (op failed with err, or op is NULL): publish, tell the
 * scheduler, answer those who waited, and set the next one. */
static void poll_end(struct srv_cluster *c, const char *op,
                     const struct loom_error *err)
{
    struct srv_poll *p = c->poll;
    struct sched_cluster_jobs *cj = p->cj;

    if (op) {
        poll_failed(c, op, err);
    } else {
        /* an uncached read may have got newer ones meanwhile */
        if (p->nodes_asked >= c->nodes_asked) {
            cl_node_list_fini(&c->nodes);
            c->nodes = p->nodes;
            p->nodes = (struct cl_node_list){0};
            c->nodes_asked = p->nodes_asked;
        }
        if (c->fails)
            log_info("cluster=%s answers again", c->name);
        c->fails = 0;
        free(c->error);
        c->error = NULL;
        c->last_poll = time(NULL);
    }
    server_publish(c);
    /* A start that ended while the jobs were asked may be missing from
     * them: the list is then not known to be complete. */
    if (!op && (cj->list.n || cj->complete)) {
        if (p->starts_at != c->starts_done)
            cj->complete = 0;
        cj->cluster = strdup(c->name);
        msgq_post(sched_queue(), msg_create(SCHED_CLUSTER_JOBS, cj,
                                            sched_cluster_jobs_free, NULL));
        p->cj = NULL;
    }
    for (struct msg *m = p->waiters; m; m = m->next)
        if (m->reply)
            answer_node(c, m);
    poll_free(p);
    c->poll = NULL;
    c->poll_inflight = 0;
    c->next_poll = c->waiting ? 0 : c->last_poll_mono + c->poll_s;
}

static void queues_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;

    if (sc->k.rc < 0) {
        poll_end(c, "queues", &sc->k.err);
        return;
    }
    cl_queue_list_fini(&c->queues);
    c->queues = sc->k.queues;
    sc->k.queues = (struct cl_queue_list){0};
    poll_end(c, NULL, NULL);
}

static void start_call(struct srv_cluster *c, enum adaptor_op op,
                       void (*then)(struct srv_call *sc))
{
    struct srv_call *sc = server_call_new(c, op, then, NULL);
    struct loom_error err;

    if (!sc) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        poll_end(c, adaptor_op_name(op), &err);
        return;
    }
    server_call_start(sc);
}

static void nodes_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;

    if (sc->k.rc < 0) {
        poll_end(c, "nodes", &sc->k.err);
        return;
    }
    c->poll->nodes = sc->k.nodes;
    sc->k.nodes = (struct cl_node_list){0};
    if (c->poll->queues)
        start_call(c, LOOM_OP_QUEUES, queues_then);
    else
        poll_end(c, NULL, NULL);
}

static void jobs_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;

    if (sc->k.rc < 0) {
        poll_end(c, "jobs", &sc->k.err);
        return;
    }
    c->poll->cj->list = sc->k.jobs;
    c->poll->cj->complete = sc->k.complete;
    sc->k.jobs = (struct cl_job_list){0};
    c->poll->nodes_asked = time_mono();
    start_call(c, LOOM_OP_NODES, nodes_then);
}

/* Jobs first: the nodes then show what the ended jobs freed. */
void server_poll_begin(struct srv_cluster *c)
{
    struct srv_poll *p = calloc(1, sizeof(*p));

    if (!p || !(p->cj = calloc(1, sizeof(*p->cj)))) {
        free(p);
        log_err("cluster=%s: out of memory starting a poll", c->name);
        c->next_poll = time_mono() + c->poll_s;
        return;
    }
    c->poll = p;
    c->poll_inflight = 1;
    c->last_poll_mono = time_mono();
    p->queues = c->polls++ % QUEUE_POLL_EVERY == 0;
    p->starts_at = c->starts_done;
    p->waiters = c->waiting;
    c->waiting = NULL;
    start_call(c, LOOM_OP_JOBS, jobs_then);
}

void server_poll_nodes_only(struct srv_cluster *c)
{
    struct srv_call *nodes = server_call_new(c, LOOM_OP_NODES, NULL, NULL);
    struct srv_call *queues = server_call_new(c, LOOM_OP_QUEUES, NULL, NULL);
    struct loom_error err;
    int rc = -1;

    loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    if (nodes && queues) {
        if (server_call_now(nodes, &err) < 0) {
            nodes = NULL; /* the loop's now */
        } else if (nodes->k.rc < 0) {
            err = nodes->k.err;
        } else if (server_call_now(queues, &err) < 0) {
            queues = NULL;
        } else if (queues->k.rc < 0) {
            err = queues->k.err;
        } else {
            rc = 0;
        }
    }
    if (rc < 0) {
        c->fails = 1;
        free(c->error);
        c->error = strdup(err.message);
        log_warn("cluster=%s: first poll failed: %s", c->name, err.message);
    } else {
        c->nodes = nodes->k.nodes;
        nodes->k.nodes = (struct cl_node_list){0};
        c->nodes_asked = nodes->t0;
        c->queues = queues->k.queues;
        queues->k.queues = (struct cl_queue_list){0};
    }
    server_call_free(nodes);
    server_call_free(queues);
    c->polls = 1;
    c->last_poll = time(NULL);
    c->last_poll_mono = time_mono();
    c->next_poll = c->last_poll_mono; /* jobs on the first turn */
    server_publish(c);
}

void server_poll_soon(struct srv_cluster *c)
{
    if (c->last_poll_mono + POLL_MIN_GAP_S < c->next_poll)
        c->next_poll = c->last_poll_mono + POLL_MIN_GAP_S;
}

void server_poll_wait(struct srv_cluster *c, struct msg *m)
{
    struct msg **tail = &c->waiting;

    while (*tail)
        tail = &(*tail)->next;
    m->next = NULL;
    *tail = m;
    c->next_poll = 0; /* at once, or as soon as the one under way ended */
}

/* ---- uncached reads: the nodes asked for now ------------------------- */

static void refresh_begin(struct srv_cluster *c);

/* The call's time, and for one that went over HTTP its split: what
 * libcurl took (the cluster system's answer) and what Loom did. */
static char *refresh_timing(const struct srv_call *sc)
{
    double all = sc->t1 - sc->t0, own = all - sc->k.cms_s;
    json_t *o = json_pack("{s:f}", "seconds", all);
    char *text;

    if (o && sc->k.cms_requests) {
        json_object_set_new(o, "cms_s", json_real(sc->k.cms_s));
        json_object_set_new(o, "loom_s", json_real(own > 0 ? own : 0));
    }
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

static void refresh_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;
    struct loom_error err = sc->k.err;

    if (sc->k.rc == 0 && sc->t0 >= c->nodes_asked) {
        cl_node_list_fini(&c->nodes);
        c->nodes = sc->k.nodes;
        sc->k.nodes = (struct cl_node_list){0};
        c->nodes_asked = sc->t0;
        server_publish(c);
    } else if (sc->k.rc < 0) {
        server_error_prefix(&err, c->name, "nodes");
    }
    for (struct msg *m = c->refresh_batch; m; m = m->next) {
        if (!m->reply)
            continue;
        if (sc->k.rc == 0)
            reply_send(m->reply, 200, refresh_timing(sc));
        else
            reply_send_error(m->reply, &err);
    }
    msgs_free(c->refresh_batch);
    c->refresh_batch = NULL;
    c->refresh_inflight = 0;
    if (c->refreshing)
        refresh_begin(c);
}

static void refresh_begin(struct srv_cluster *c)
{
    struct srv_call *sc = server_call_new(c, LOOM_OP_NODES, refresh_then,
                                          NULL);
    struct loom_error err;

    c->refresh_batch = c->refreshing;
    c->refreshing = NULL;
    if (!sc) {
        loom_error_set(&err, LOOM_EINTERNAL, "cluster %s: nodes: out of "
                       "memory", c->name);
        for (struct msg *m = c->refresh_batch; m; m = m->next)
            if (m->reply)
                reply_send_error(m->reply, &err);
        msgs_free(c->refresh_batch);
        c->refresh_batch = NULL;
        return;
    }
    c->refresh_inflight = 1;
    server_call_start(sc);
}

void server_refresh_nodes(struct srv_cluster *c, struct msg *m)
{
    struct msg **tail = &c->refreshing;

    while (*tail)
        tail = &(*tail)->next;
    m->next = NULL;
    *tail = m;
    if (!c->refresh_inflight)
        refresh_begin(c);
}
