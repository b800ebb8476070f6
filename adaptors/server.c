/* server.c - the server interface thread: adaptors, polls, cluster parts. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/server.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "adaptors/local_job.h"
#include "adaptors/server_state.h"
#include "core/leader.h"
#include "core/log.h"
#include "core/opstats.h"
#include "core/runas_call.h"
#include "core/timeutil.h"
#include "scheduler/sched.h"

#define FAILS_UNREACHABLE 3
/* At start-up, how long an asynchronous call may take (each request has
 * its own, shorter, timeout too). */
#define STARTUP_CALL_S 60.0

struct server V;

static const char *model_name(enum adaptor_model m)
{
    return m == LOOM_MODEL_EXECUTION_QUEUE ? "execution-queue"
                                           : "disabled-scheduler";
}

struct srv_cluster *server_cluster(const char *name)
{
    for (size_t i = 0; i < V.n; i++)
        if (strcmp(V.c[i].name, name) == 0)
            return &V.c[i];
    return NULL;
}

void server_publish(struct srv_cluster *c)
{
    struct infra_desc d = {
        .name = c->name, .adaptor = c->type->name,
        .model = model_name(c->model), .caps = c->caps,
        .preference = c->preference, .hold_for_loom = c->hold_for_loom,
        .pinned_only = c->pinned_only, .runs_as_user = c->runs_as_user,
        .single_account = c->single_account,
        .state = c->fails == 0 ? "up"
                 : c->fails < FAILS_UNREACHABLE ? "degraded" : "unreachable",
        .error = c->error, .last_poll = c->last_poll, .info = c->info,
        .annot = &c->annot};
    const char *via[LOOM_N_OPS];
    struct scluster *sc;

    if (c->type->via) {
        for (int op = 0; op < LOOM_N_OPS; op++)
            via[op] = c->type->via(c->inst, op);
        d.via = via;
    }
    sc = infra_build(&d, &c->nodes, &c->queues);

    if (sc)
        snapshot_publish_cluster(sc);
    else
        log_err("cluster=%s: out of memory publishing the cluster", c->name);
}

int server_error_prefix(struct loom_error *err, const char *cluster,
                        const char *what)
{
    char own[96];

    snprintf(own, sizeof(own), "cluster %s:", cluster);
    if (strncmp(err->message, own, strlen(own)) == 0)
        return -1;
    if (what)
        return loom_error_prefix(err, "cluster %s: %s", cluster, what);
    return loom_error_prefix(err, "cluster %s", cluster);
}

void server_republish(const char *cluster, struct reply *reply)
{
    char *name = strdup(cluster);
    struct loom_error err;

    if (name) {
        msgq_post(V.q, msg_create(SERVER_REPUBLISH, name, free, reply));
    } else if (reply) {
        loom_error_set(&err, LOOM_EINTERNAL, "cluster %s: out of memory "
                       "asking for its nodes to be shown again", cluster);
        reply_send_error(reply, &err);
    }
}

/* ---- calls ------------------------------------------------------------- */

struct srv_call *server_call_new(struct srv_cluster *c, enum adaptor_op op,
                                 void (*then)(struct srv_call *sc),
                                 struct msg *m)
{
    struct srv_call *sc = calloc(1, sizeof(*sc));

    if (!sc) {
        msg_destroy(m);
        return NULL;
    }
    sc->k.op = op;
    sc->c = c;
    sc->then = then;
    sc->m = m;
    sc->next = V.calls;
    if (V.calls)
        V.calls->prev = sc;
    V.calls = sc;
    return sc;
}

void server_call_free(struct srv_call *sc)
{
    if (!sc)
        return;
    if (sc->prev)
        sc->prev->next = sc->next;
    else
        V.calls = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
    adaptor_call_fini(&sc->k);
    msg_destroy(sc->m);
    free(sc);
}

/* The op ended: its time, then what the asker wanted done, its lines
 * naming the request the op serves (if any). */
static void call_end(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;
    char was[LOG_REQUEST_ID_MAX + 1];

    snprintf(was, sizeof(was), "%s", log_request());
    if (sc->m)
        log_request_set(sc->m->request);
    opstats_record(c->name, adaptor_op_name(sc->k.op), sc->t1 - sc->t0,
                   sc->k.rc == 0);
    if (sc->k.cms_requests) /* it went to the cluster over HTTP */
        opstats_record_own(c->name, adaptor_op_name(sc->k.op),
                           sc->t1 - sc->t0 - sc->k.cms_s);
    if (sc->then)
        sc->then(sc);
    server_call_free(sc);
    log_request_set(was[0] ? was : NULL);
}

static void to_worker(struct srv_call *sc)
{
    msgq_post(sc->c->wq, msg_create(WORK_CALL, sc, NULL, NULL));
}

/* The adaptor's done_cb of an asynchronous call. */
static void call_done(struct adaptor_call *k)
{
    struct srv_call *sc = (struct srv_call *)k;

    if (k->blocking) { /* handed back: its blocking op, on the worker */
        to_worker(sc);
        return;
    }
    sc->t1 = time_mono();
    call_end(sc);
}

/* An op that changes something is done by the active loomd only
 * (docs/internals/standby.md): checked where it is handed to the adaptor,
 * on the server thread and again on the worker. 1: fenced (k.err says
 * why). */
static int call_fenced(struct srv_call *sc)
{
    switch (sc->k.op) {
    case LOOM_OP_NODES:
    case LOOM_OP_JOBS:
    case LOOM_OP_QUEUES:
        return 0; /* polls only observe */
    default:
        break;
    }
    if (leader_check(adaptor_op_name(sc->k.op), &sc->k.err) == 0)
        return 0;
    sc->k.rc = -1;
    return 1;
}

/* An op the cluster cannot do (its capability bits, from its adaptor's
 * describe) is refused here, before the adaptor sees it. 1: refused. */
static int call_incapable(struct srv_call *sc)
{
    unsigned cap = adaptor_op_cap(sc->k.op);

    if (!cap || (sc->c->caps & cap))
        return 0;
    loom_error_set(&sc->k.err, LOOM_ENOTSUP, "cluster %s: cannot %s: its "
                   "adaptor (%s) lacks the '%s' capability (GET /v1/clusters "
                   "lists its capabilities)", sc->c->name,
                   adaptor_op_name(sc->k.op), sc->c->type->name,
                   adaptor_cap_name(cap));
    sc->k.rc = -1;
    return 1;
}

void server_call_start(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;

    sc->k.done_cb = call_done;
    sc->t0 = time_mono();
    if (call_incapable(sc) || call_fenced(sc)) {
        sc->t1 = sc->t0;
        call_end(sc);
        return;
    }
    if (c->type->call && c->type->call(c->inst, &sc->k) == 0)
        return;
    to_worker(sc);
}

static void call_done_now(struct adaptor_call *k)
{
    struct srv_call *sc = (struct srv_call *)k;

    sc->t1 = time_mono();
}

int server_call_now(struct srv_call *sc, struct loom_error *err)
{
    struct srv_cluster *c = sc->c;
    double end = time_mono() + STARTUP_CALL_S;

    sc->k.done_cb = call_done_now;
    sc->t0 = time_mono();
    sc->t1 = 0;
    if (call_incapable(sc) || call_fenced(sc)) /* k.rc and k.err say why */
        return 0;
    if (c->type->call && c->type->call(c->inst, &sc->k) == 0) {
        while (!sc->t1 && time_mono() < end)
            curlloop_run(V.loop, 0.1);
        if (!sc->t1) { /* still under way: it ends with the loop */
            sc->k.done_cb = call_done;
            sc->then = NULL;
            return loom_error_set(err, LOOM_ETEMP, "%s: no answer within "
                                  "%g s", adaptor_op_name(sc->k.op),
                                  STARTUP_CALL_S);
        }
        if (!sc->k.blocking)
            return 0;
    }
    adaptor_call_run(c->type, c->inst, &sc->k);
    return 0;
}

/* The worker of one cluster: runs the blocking ops it is handed, one at a
 * time, so a slow cluster system holds up no other. */
static void *server_worker(void *arg)
{
    struct srv_cluster *c = arg;
    char name[16];

    snprintf(name, sizeof(name), "w-%.13s", c->name);
    log_thread_name(name);
    for (;;) {
        struct msg *m = msgq_take(c->wq, -1, 1);
        struct srv_call *sc = m ? m->data : NULL;
        if (!m || m->type == 0) {
            msg_destroy(m);
            return NULL;
        }
        log_request_set(sc->m ? sc->m->request : NULL);
        sc->t0 = time_mono();
        /* a blocking op sends no request of the adaptor's own (one handed
         * back may have sent some first): its time is all the op's */
        sc->k.cms_requests = 0;
        sc->k.cms_s = 0;
        if (!call_fenced(sc))
            adaptor_call_run(c->type, c->inst, &sc->k);
        sc->t1 = time_mono();
        msgq_post(V.q, msg_create(SERVER_CALL_DONE, sc, NULL, NULL));
        msg_destroy(m);
        log_request_set(NULL);
    }
}

static void dispatch_polls(double now)
{
    for (size_t i = 0; i < V.n && !V.stopping; i++) {
        struct srv_cluster *c = &V.c[i];
        if (c->poll_inflight || c->next_poll > now)
            continue;
        server_poll_begin(c);
    }
}

/* One loop: messages, transfers, polls that are due. It waits in
 * curlloop_run: a post to V.q wakes it (msgq_set_waker). */
static void *server_main(void *arg)
{
    log_thread_name("server");
    while (!V.stopping) {
        double now = time_mono(), next = now + 1;
        struct msg *m, *nx;

        for (size_t i = 0; i < V.n; i++)
            if (!V.c[i].poll_inflight && V.c[i].next_poll < next)
                next = V.c[i].next_poll;
        m = msgq_take_now(V.q, 256);
        if (!m) {
            curlloop_run(V.loop, next > now ? next - now : 0);
            m = msgq_take_now(V.q, 256);
        }
        for (; m; m = nx) {
            nx = m->next;
            log_request_set(m->request);
            if (m->type == SERVER_CALL_DONE) {
                call_end(m->data);
                msg_destroy(m);
            } else {
                server_handle(m);
            }
            log_request_set(NULL);
        }
        dispatch_polls(time_mono());
    }
    return NULL;
}

static int cluster_create(struct srv_cluster *c, struct conf_section *sec,
                          int index, const struct adaptor_env *env,
                          struct loom_error *err)
{
    struct adaptor_desc d;
    const char *kind;
    long pref;

    if (conf_get_str(sec, "adaptor", NULL, &kind, err) < 0)
        return -1;
    if (!kind)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] needs "
                              "'adaptor = ...'", sec->file, sec->line,
                              sec->name);
    c->type = adaptor_type_find(kind);
    if (!c->type)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: unknown "
                              "adaptor '%s'", sec->file, sec->line, sec->name,
                              kind);
    c->name = strdup(sec->name);
    if (conf_get_double(sec, "poll_s", c->type->poll_s > 0 ? c->type->poll_s
                                                          : 1.0,
                        0.05, 3600, &c->poll_s, err) < 0 ||
        conf_get_long(sec, "preference", index, 0, 1000000, &pref, err) < 0 ||
        conf_get_bool(sec, "hold_for_loom", 0, &c->hold_for_loom, err) < 0 ||
        annot_conf_read(sec, &c->annot, err) < 0)
        return -1;
    c->preference = (int)pref;
    if (c->type->create(sec, env, &c->inst, err) < 0)
        return server_error_prefix(err, sec->name, NULL);
    d = (struct adaptor_desc){.caps = c->type->caps, .model = c->type->model};
    if (c->type->describe)
        c->type->describe(c->inst, &d);
    c->caps = d.caps;
    c->model = d.model;
    c->pinned_only = d.pinned_only;
    c->runs_as_user = d.runs_as_user;
    c->single_account = d.single_account;
    c->info = d.info;
    c->wq = msgq_create();
    if (!c->wq)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return conf_check_unused(sec, err);
}

int server_start(struct conf *cf, const char *state_dir,
                 struct loom_error *err)
{
    const char *libexec = getenv("LOOM_LIBEXECDIR");
    size_t n = 0;

    V.state_dir = strdup(state_dir);
    V.libexec = strdup(libexec && *libexec ? libexec : LOOM_LIBEXECDIR);
    if (V.libexec)
        runas_call_set_dir(V.libexec); /* the output endpoint's reads */
    V.q = msgq_create();
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot initialise "
                              "libcurl");
    V.loop = curlloop_create(err);
    if (!V.loop)
        return -1;
    if (V.q)
        msgq_set_waker(V.q, curlloop_wakeup, V.loop);
    for (size_t i = 0; i < cf->n_sections; i++)
        n += strcmp(cf->sections[i].kind, "cluster") == 0;
    V.c = calloc(n ? n : 1, sizeof(*V.c));
    if (!V.q || !V.c || !V.state_dir || !V.libexec)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *sec = &cf->sections[i];
        struct srv_cluster *c = &V.c[V.n];
        struct adaptor_env env = {sec->name, V.state_dir, V.libexec,
                                  V.loop};
        if (strcmp(sec->kind, "cluster") != 0)
            continue;
        c->index = (int)V.n++;
        if (cluster_create(c, sec, (int)V.n, &env, err) < 0)
            return -1;
        server_poll_nodes_only(c);
        log_info("cluster=%s adaptor=%s nodes=%zu ready", c->name,
                 c->type->name, c->nodes.n);
    }
    return 0;
}

int server_run(struct loom_error *err)
{
    for (size_t i = 0; i < V.n; i++) {
        if (pthread_create(&V.c[i].worker, NULL, server_worker, &V.c[i]) != 0)
            return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                                  "worker of cluster %s", V.c[i].name);
        V.c[i].worker_running = 1;
    }
    if (pthread_create(&V.thread, NULL, server_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the server "
                              "thread");
    V.running = 1;
    return 0;
}

void server_stop(void)
{
    if (V.running) {
        msgq_post(V.q, msg_create(0, NULL, NULL, NULL));
        pthread_join(V.thread, NULL);
        V.running = 0;
    }
    /* A worker in the middle of a slow operation finishes it (each run of a
     * pack has its time limit) before it sees the stop. */
    for (size_t i = 0; i < V.n; i++)
        if (V.c[i].worker_running) {
            msgq_post(V.c[i].wq, msg_create(0, NULL, NULL, NULL));
            pthread_join(V.c[i].worker, NULL);
            V.c[i].worker_running = 0;
        }
}

void server_fini(void)
{
    server_stop();
    /* Transfers end first (no callback), then the instances free what
     * their calls held, then the calls themselves. */
    curlloop_destroy(V.loop);
    for (size_t i = 0; i < V.n; i++) {
        struct srv_cluster *c = &V.c[i];
        if (c->type && c->inst)
            c->type->destroy(c->inst);
        cl_node_list_fini(&c->nodes);
        cl_queue_list_fini(&c->queues);
        msgq_destroy(c->wq);
        server_poll_drop(c);
        json_decref(c->info);
        annot_conf_fini(&c->annot);
        free(c->name);
        free(c->error);
    }
    while (V.calls)
        server_call_free(V.calls);
    free(V.c);
    msgq_destroy(V.q);
    if (V.loop)
        curl_global_cleanup();
    free(V.state_dir);
    free(V.libexec);
    memset(&V, 0, sizeof(V));
}

struct msgq *server_queue(void)
{
    return V.q;
}

int server_run_dir(const char *cluster, int64_t id, char *buf, size_t size)
{
    return V.state_dir ? local_run_dir(V.state_dir, cluster, id, buf, size)
                       : -1;
}
