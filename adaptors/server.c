/* server.c - the server interface thread: adaptors, polls, cluster parts. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/server.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "adaptors/local_job.h"
#include "adaptors/server_state.h"
#include "core/log.h"
#include "core/opstats.h"
#include "core/runas_call.h"
#include "core/timeutil.h"
#include "scheduler/sched.h"

#define QUEUE_POLL_EVERY 10
#define FAILS_UNREACHABLE 3

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
        .error = c->error, .last_poll = c->last_poll, .info = c->info};
    struct scluster *sc = infra_build(&d, &c->nodes, &c->queues);

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

/* Record how long the adaptor call that just returned rc took: the
 * worker's clock started in server_op_begin(). */
int server_timed(struct srv_cluster *c, const char *op, int rc)
{
    opstats_record(c->name, op, time_mono() - c->op_t0, rc == 0);
    c->op_t0 = time_mono();
    return rc;
}

/* Poll nodes, jobs (and now and then queues), publish, tell the scheduler. */
void server_poll(struct srv_cluster *c)
{
    struct cl_node_list nodes = {0};
    struct cl_queue_list queues = {0};
    struct sched_cluster_jobs *cj = calloc(1, sizeof(*cj));
    struct loom_error err;

    if (!cj)
        return;
    c->op_t0 = time_mono();
    /* Jobs first: the nodes then show what the ended jobs freed. */
    if (server_timed(c, "jobs", c->type->jobs(c->inst, &cj->list, &cj->complete,
                                        &err)) < 0) {
        poll_failed(c, "jobs", &err);
        goto out;
    }
    if (server_timed(c, "nodes", c->type->nodes(c->inst, &nodes, &err)) < 0) {
        poll_failed(c, "nodes", &err);
        goto out;
    }
    if (c->polls++ % QUEUE_POLL_EVERY == 0) {
        if (server_timed(c, "queues", c->type->queues(c->inst, &queues, &err)) < 0) {
            poll_failed(c, "queues", &err);
            goto out;
        }
        cl_queue_list_fini(&c->queues);
        c->queues = queues;
        queues = (struct cl_queue_list){0};
    }
    cl_node_list_fini(&c->nodes);
    c->nodes = nodes;
    nodes = (struct cl_node_list){0};
    if (c->fails)
        log_info("cluster=%s answers again", c->name);
    c->fails = 0;
    free(c->error);
    c->error = NULL;
    c->last_poll = time(NULL);
    server_publish(c);
    if (cj->list.n || cj->complete) {
        cj->cluster = strdup(c->name);
        msgq_post(sched_queue(), msg_create(SCHED_CLUSTER_JOBS, cj,
                                            sched_cluster_jobs_free, NULL));
        cj = NULL;
    }
out:
    if (c->fails)
        server_publish(c);
    cl_node_list_fini(&nodes);
    cl_queue_list_fini(&queues);
    sched_cluster_jobs_free(cj);
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

/* Poll soon (an operation changed something), but not in a tight loop:
 * the server thread keeps the schedule. */
void server_poll_soon(struct srv_cluster *c)
{
    msgq_post(V.q, msg_create(SERVER_POLL_SOON, (void *)(intptr_t)c->index,
                              NULL, NULL));
}

static void dispatch_polls(double now)
{
    for (size_t i = 0; i < V.n && !V.stopping; i++) {
        struct srv_cluster *c = &V.c[i];
        if (c->poll_inflight || c->next_poll > now)
            continue;
        c->poll_inflight = 1;
        c->last_poll_mono = now;
        msgq_post(c->wq, msg_create(WORK_POLL, NULL, NULL, NULL));
    }
}

static void *server_main(void *arg)
{
    log_thread_name("server");
    while (!V.stopping) {
        double now = time_mono(), next = now + 1;
        struct msg *m, *nx;

        for (size_t i = 0; i < V.n; i++)
            if (!V.c[i].poll_inflight && V.c[i].next_poll < next)
                next = V.c[i].next_poll;
        m = msgq_take(V.q, next > now ? next - now : 0, 256);
        for (; m; m = nx) {
            nx = m->next;
            server_handle(m);
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
        conf_get_bool(sec, "hold_for_loom", 0, &c->hold_for_loom, err) < 0)
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
    for (size_t i = 0; i < cf->n_sections; i++)
        n += strcmp(cf->sections[i].kind, "cluster") == 0;
    V.c = calloc(n ? n : 1, sizeof(*V.c));
    if (!V.q || !V.c || !V.state_dir || !V.libexec)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *sec = &cf->sections[i];
        struct srv_cluster *c = &V.c[V.n];
        struct adaptor_env env = {sec->name, V.state_dir, V.libexec};
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
    for (size_t i = 0; i < V.n; i++) {
        struct srv_cluster *c = &V.c[i];
        if (c->type && c->inst)
            c->type->destroy(c->inst);
        cl_node_list_fini(&c->nodes);
        cl_queue_list_fini(&c->queues);
        msgq_destroy(c->wq);
        json_decref(c->info);
        free(c->name);
        free(c->error);
    }
    free(V.c);
    msgq_destroy(V.q);
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
