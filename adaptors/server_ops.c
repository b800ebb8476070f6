/* server_ops.c - the server thread's commands: starts, job ops, node state. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "adaptors/server_state.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/timeutil.h"

#define POLL_MIN_GAP_S 0.2
#include "scheduler/sched.h"

void server_poll_nodes_only(struct srv_cluster *c)
{
    struct loom_error err;

    if (c->type->nodes(c->inst, &c->nodes, &err) < 0 ||
        c->type->queues(c->inst, &c->queues, &err) < 0) {
        cl_node_list_fini(&c->nodes);
        c->fails = 1;
        free(c->error);
        c->error = strdup(err.message);
        log_warn("cluster=%s: first poll failed: %s", c->name, err.message);
    }
    c->polls = 1;
    c->last_poll = time(NULL);
    c->last_poll_mono = time_mono();
    c->next_poll = c->last_poll_mono; /* jobs on the first turn */
    server_publish(c);
}

static void do_start(struct server_start *s)
{
    struct srv_cluster *c = server_cluster(s->cluster);
    struct sched_started *st = calloc(1, sizeof(*st));
    struct start_req req = {
        .loom_id = s->loom_id, .name = s->name, .owner = s->owner,
        .account = s->account,
        .command = s->command.n ? (const char *const *)s->command.v : NULL,
        .script = s->script, .workdir = s->workdir, .output = s->output,
        .error = s->error, .nodes = (const char *const *)s->nodes.v,
        .n_nodes = s->nodes.n, .cpus_per_node = s->cpus_per_node,
        .memory_mb = s->memory_mb, .gpus = s->gpus,
        .walltime_s = s->walltime_s, .queue = s->queue, .adopt = s->adopt,
        .start_time = s->start_time, .native_id = s->native_id,
        .array_id = s->array_id, .array_task = s->array_task};
    static const char *const no_env[] = {NULL};

    if (!st)
        return;
    req.env = s->env.n ? (const char *const *)s->env.v : no_env;
    st->id = s->loom_id;
    if (!c)
        loom_error_set(&st->err, LOOM_EINVAL, "no cluster named %s",
                       s->cluster);
    else if (server_timed(c, "start", c->type->start(c->inst, &req, &st->res,
                                                     &st->err)) == 0)
        st->ok = 1;
    if (c) {
        log_info("job=%lld cluster=%s %s%s", (long long)s->loom_id, c->name,
                 st->ok ? (st->res.adopted ? "re-attached" : "started")
                        : "start failed: ",
                 st->ok ? "" : st->err.message);
        server_poll_soon(c);
    }
    msgq_post(sched_queue(), msg_create(SCHED_STARTED, st,
                                        sched_started_free, NULL));
}

static void do_job_op(struct msg *m)
{
    struct server_job_op *op = m->data;
    struct srv_cluster *c = op ? server_cluster(op->cluster) : NULL;
    struct loom_error err;
    int rc;

    if (!op || !c) {
        loom_error_set(&err, LOOM_EINTERNAL, "job operation lost its cluster");
        rc = -1;
    } else if (!strcmp(op->op, "cancel")) {
        rc = server_timed(c, "cancel", c->type->cancel(c->inst, op->native_id,
                                                       &err));
    } else if (!strcmp(op->op, "suspend")) {
        rc = server_timed(c, "suspend", c->type->suspend(c->inst,
                                                         op->native_id, &err));
    } else if (!strcmp(op->op, "resume")) {
        rc = server_timed(c, "resume", c->type->resume(c->inst, op->native_id,
                                                       &err));
    } else if (!strcmp(op->op, "hold")) {
        rc = server_timed(c, "hold", c->type->hold(c->inst, op->native_id,
                                                   &err));
    } else if (!strcmp(op->op, "release")) {
        rc = server_timed(c, "release", c->type->release(c->inst,
                                                         op->native_id, &err));
    } else {
        rc = loom_error_set(&err, LOOM_EINVAL, "unknown operation %s", op->op);
    }
    if (c) {
        log_info("job=%lld cluster=%s %s%s%s", (long long)op->id, c->name,
                 op->op, rc ? " failed: " : " sent", rc ? err.message : "");
        server_poll_soon(c);
    }
    if (!m->reply)
        return;
    if (rc < 0)
        reply_send_error(m->reply, &err);
    else
        reply_send(m->reply, 202, op->view ? strdup(op->view) : NULL);
}

static void do_node_state(struct msg *m)
{
    struct server_node_state *ns = m->data;
    struct srv_cluster *c = server_cluster(ns->cluster);
    struct loom_error err;

    if (!c) {
        loom_error_set(&err, LOOM_ENOENT, "no cluster named %s", ns->cluster);
        reply_send_error(m->reply, &err);
        return;
    }
    if (c->type->set_node_state(c->inst, ns->node, ns->state, ns->reason,
                                &err) < 0) {
        char what[96];
        snprintf(what, sizeof(what), "node %s", ns->node);
        server_error_prefix(&err, c->name, what);
        reply_send_error(m->reply, &err);
        return;
    }
    log_info("cluster=%s node=%s state set to %s (%s)", c->name, ns->node,
             ns->state, ns->reason ? ns->reason : "no reason given");
    server_poll(c); /* answer with the node as the cluster now shows it */
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

/* Check a reloaded file's cluster sections without changing anything. */
static int reload_check(struct conf *cf, struct loom_error *err)
{
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *sec = &cf->sections[i];
        const struct adaptor_type *t;
        const char *kind = conf_get(sec, "adaptor");
        double poll_s;
        if (strcmp(sec->kind, "cluster") != 0)
            continue;
        t = kind ? adaptor_type_find(kind) : NULL;
        if (!t)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: "
                                  "unknown or missing adaptor", sec->file,
                                  sec->line, sec->name);
        if (adaptor_conf_check(t, sec, err) < 0 ||
            conf_get_double(sec, "poll_s", 1.0, 0.05, 3600, &poll_s, err) < 0)
            return -1;
    }
    return 0;
}

/* Reload: poll intervals change at once; clusters added, removed or given
 * another adaptor need a restart, and the answer says so. A file with an
 * error changes nothing. */
static void do_reload(struct msg *m)
{
    struct conf *cf = m->data;
    json_t *changed = json_array(), *restart = json_array(), *o;
    struct loom_error err;

    if (reload_check(cf, &err) < 0) {
        log_err("reload refused: %s", err.message);
        json_decref(changed);
        json_decref(restart);
        if (m->reply)
            reply_send_error(m->reply, &err);
        return;
    }
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *sec = &cf->sections[i];
        struct srv_cluster *c = server_cluster(sec->name);
        double poll_s;
        if (strcmp(sec->kind, "cluster") != 0)
            continue;
        if (!c || strcmp(conf_get(sec, "adaptor"), c->type->name) != 0) {
            json_array_append_new(restart, json_string(sec->name));
            continue;
        }
        conf_get_double(sec, "poll_s", c->type->poll_s > 0 ? c->type->poll_s
                                                          : 1.0,
                        0.05, 3600, &poll_s, &err);
        if (poll_s != c->poll_s) {
            c->poll_s = poll_s;
            c->next_poll = c->last_poll_mono + poll_s;
            json_array_append_new(changed, json_sprintf("%s.poll_s", c->name));
        }
    }
    for (size_t i = 0; i < V.n; i++)
        if (!conf_section(cf, "cluster", V.c[i].name))
            json_array_append_new(restart, json_string(V.c[i].name));
    o = json_pack("{s:o, s:o}", "changed", changed, "restart_needed", restart);
    log_info("reload applied: %zu change(s), %zu cluster(s) need a restart",
             json_array_size(changed), json_array_size(restart));
    if (m->reply)
        reply_send(m->reply, 200, json_dumps(o, JSON_COMPACT));
    json_decref(o);
}

/* The worker of one cluster: runs its adaptor's operations one at a time,
 * so polls of a cluster never overlap and a slow cluster holds up no other. */
void *server_worker(void *arg)
{
    struct srv_cluster *c = arg;
    char name[16];

    snprintf(name, sizeof(name), "w-%.13s", c->name);
    log_thread_name(name);
    for (;;) {
        struct msg *m = msgq_take(c->wq, -1, 1);
        int type = m ? m->type : -1;
        c->op_t0 = time_mono(); /* the adaptor call's clock (opstats) */
        switch (type) {
        case WORK_POLL:
            server_poll(c);
            msgq_post(V.q, msg_create(SERVER_POLL_DONE,
                                      (void *)(intptr_t)c->index, NULL, NULL));
            break;
        case SERVER_START_JOB:
            do_start(m->data);
            break;
        case SERVER_JOB_OP:
            do_job_op(m);
            break;
        case SERVER_NODE_STATE:
            do_node_state(m);
            break;
        case SERVER_REPUBLISH:
            server_publish(c);
            if (m->reply)
                reply_send(m->reply, 200, NULL);
            break;
        }
        msg_destroy(m);
        if (type == 0)
            return NULL;
    }
}

/* The cluster a command is for, or NULL (answered). */
static struct srv_cluster *target(struct msg *m)
{
    const char *name = NULL;
    struct loom_error err;

    if (m->type == SERVER_START_JOB)
        name = ((struct server_start *)m->data)->cluster;
    else if (m->type == SERVER_JOB_OP && m->data)
        name = ((struct server_job_op *)m->data)->cluster;
    else if (m->type == SERVER_NODE_STATE && m->data)
        name = ((struct server_node_state *)m->data)->cluster;
    else if (m->type == SERVER_REPUBLISH)
        name = m->data;
    if (name && server_cluster(name))
        return server_cluster(name);
    loom_error_set(&err, LOOM_ENOENT, "no cluster named %s",
                   name ? name : "?");
    if (m->reply)
        reply_send_error(m->reply, &err);
    else
        log_err("%s", err.message);
    return NULL;
}

/* Poll c soon, but not sooner than POLL_MIN_GAP_S after its last poll. */
static void poll_soon(struct srv_cluster *c)
{
    if (c->last_poll_mono + POLL_MIN_GAP_S < c->next_poll)
        c->next_poll = c->last_poll_mono + POLL_MIN_GAP_S;
}

void server_handle(struct msg *m)
{
    struct srv_cluster *c;
    int i;

    switch (m->type) {
    case 0:
        V.stopping = 1;
        break;
    case SERVER_START_JOB:
    case SERVER_JOB_OP:
    case SERVER_NODE_STATE:
    case SERVER_REPUBLISH:
        c = target(m);
        if (c) { /* the cluster's worker carries it out */
            msgq_post(c->wq, m);
            return;
        }
        break;
    case SERVER_RELOAD:
        do_reload(m);
        break;
    case SERVER_POLL_DONE:
        i = (int)(intptr_t)m->data;
        V.c[i].poll_inflight = 0;
        V.c[i].next_poll = V.c[i].last_poll_mono + V.c[i].poll_s;
        break;
    case SERVER_POLL_SOON:
        poll_soon(&V.c[(int)(intptr_t)m->data]);
        break;
    }
    msg_destroy(m);
}

void server_start_free(void *p)
{
    struct server_start *s = p;

    if (!s)
        return;
    free(s->cluster);
    free(s->name);
    free(s->owner);
    free(s->account);
    free(s->script);
    free(s->queue);
    free(s->workdir);
    free(s->output);
    free(s->error);
    free(s->native_id);
    strv_fini(&s->command);
    strv_fini(&s->env);
    strv_fini(&s->nodes);
    free(s);
}

void server_job_op_free(void *p)
{
    struct server_job_op *op = p;

    if (!op)
        return;
    free(op->cluster);
    free(op->native_id);
    free(op->view);
    free(op);
}

void server_node_state_free(void *p)
{
    struct server_node_state *ns = p;

    if (!ns)
        return;
    free(ns->cluster);
    free(ns->node);
    free(ns->state);
    free(ns->reason);
    free(ns);
}
