/* server_ops.c - the server thread's commands: starts, job ops, node state. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "adaptors/server_state.h"
#include "core/conf.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched.h"

static void start_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;
    struct sched_started *st = calloc(1, sizeof(*st));

    if (!st)
        return;
    st->id = sc->req.loom_id;
    if (sc->k.rc == 0) {
        st->ok = 1;
        st->res = sc->k.started;
        sc->k.started = (struct start_result){0};
        c->starts_done++;
    } else {
        st->err = sc->k.err;
    }
    log_info("job=%lld cluster=%s %s%s", (long long)st->id, c->name,
             st->ok ? (st->res.adopted ? "re-attached" : "started")
                    : "start failed: ",
             st->ok ? "" : st->err.message);
    server_poll_soon(c);
    /* the start decision is committed, the result may wait a little */
    msgq_post_quiet(sched_queue(), msg_create(SCHED_STARTED, st,
                                              sched_started_free, NULL));
}

static void do_start(struct srv_cluster *c, struct msg *m)
{
    static const char *const no_env[] = {NULL};
    struct server_start *s = m->data;
    struct srv_call *sc = server_call_new(c, LOOM_OP_START, start_then, m);
    struct sched_started *st;

    if (!sc) {
        st = calloc(1, sizeof(*st));
        if (!st)
            return;
        st->id = s->loom_id;
        loom_error_set(&st->err, LOOM_ETEMP, "cluster %s: out of memory "
                       "starting the job", c->name);
        msgq_post(sched_queue(), msg_create(SCHED_STARTED, st,
                                            sched_started_free, NULL));
        return;
    }
    sc->req = (struct start_req){
        .loom_id = s->loom_id, .name = s->name, .owner = s->owner,
        .account = s->account,
        .command = s->command.n ? (const char *const *)s->command.v : NULL,
        .script = s->script, .workdir = s->workdir, .output = s->output,
        .error = s->error, .nodes = (const char *const *)s->nodes.v,
        .n_nodes = s->nodes.n, .cpus_per_node = s->cpus_per_node,
        .memory_mb = s->memory_mb, .gpus = s->gpus,
        .walltime_s = s->walltime_s, .queue = s->queue, .adopt = s->adopt,
        .start_time = s->start_time, .native_id = s->native_id,
        .reservation = s->reservation,
        .array_id = s->array_id, .array_task = s->array_task,
        .priority = s->priority, .no_requeue = s->no_requeue};
    sc->req.env = s->env.n ? (const char *const *)s->env.v : no_env;
    sc->k.start = &sc->req;
    server_call_start(sc);
}

static void job_op_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;
    struct server_job_op *op = sc->m->data;
    int rc = sc->k.rc;

    log_info("job=%lld cluster=%s %s%s%s", (long long)op->id, c->name,
             op->op, rc ? " failed: " : " sent", rc ? sc->k.err.message : "");
    server_poll_soon(c);
    if (!sc->m->reply)
        return;
    if (rc < 0)
        reply_send_error(sc->m->reply, &sc->k.err);
    else
        reply_send(sc->m->reply, 202, op->view ? strdup(op->view) : NULL);
}

static void do_job_op(struct srv_cluster *c, struct msg *m)
{
    static const struct {
        const char *name;
        enum adaptor_op op;
    } ops[] = {
        {"cancel", LOOM_OP_CANCEL}, {"suspend", LOOM_OP_SUSPEND},
        {"resume", LOOM_OP_RESUME}, {"hold", LOOM_OP_HOLD},
        {"release", LOOM_OP_RELEASE},
    };
    struct server_job_op *op = m->data;
    struct srv_call *sc;
    struct loom_error err;

    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (!strcmp(op->op, ops[i].name)) {
            sc = server_call_new(c, ops[i].op, job_op_then, m);
            if (!sc)
                return; /* the reply slot times out: 503 */
            sc->k.native_id = op->native_id;
            server_call_start(sc);
            return;
        }
    loom_error_set(&err, LOOM_EINVAL, "unknown operation %s", op->op);
    if (m->reply)
        reply_send_error(m->reply, &err);
    msg_destroy(m);
}

static void node_state_then(struct srv_call *sc)
{
    struct srv_cluster *c = sc->c;
    struct server_node_state *ns = sc->m->data;
    char what[96];

    if (sc->k.rc < 0) {
        snprintf(what, sizeof(what), "node %s", ns->node);
        server_error_prefix(&sc->k.err, c->name, what);
        reply_send_error(sc->m->reply, &sc->k.err);
        return;
    }
    log_info("cluster=%s node=%s state set to %s (%s)", c->name, ns->node,
             ns->state, ns->reason ? ns->reason : "no reason given");
    /* Answered with the node as the next poll shows it. */
    server_poll_wait(c, sc->m);
    sc->m = NULL;
}

static void do_node_state(struct srv_cluster *c, struct msg *m)
{
    struct server_node_state *ns = m->data;
    struct srv_call *sc = server_call_new(c, LOOM_OP_SET_NODE_STATE,
                                          node_state_then, m);

    if (!sc)
        return;
    sc->k.node = ns->node;
    sc->k.state = ns->state;
    sc->k.reason = ns->reason;
    server_call_start(sc);
}

/* Check a reloaded file's cluster sections without changing anything. */
static int reload_check(struct conf *cf, struct loom_error *err)
{
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *sec = &cf->sections[i];
        const struct adaptor_type *t;
        const char *kind = conf_get(sec, "adaptor");
        struct annot_conf annot = {0};
        double poll_s;
        if (strcmp(sec->kind, "cluster") != 0)
            continue;
        t = kind ? adaptor_type_find(kind) : NULL;
        if (!t)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: "
                                  "unknown or missing adaptor", sec->file,
                                  sec->line, sec->name);
        if (adaptor_conf_check(t, sec, err) < 0 ||
            conf_get_double(sec, "poll_s", 1.0, 0.05, 3600, &poll_s, err) < 0 ||
            annot_conf_read(sec, &annot, err) < 0)
            return -1;
        annot_conf_fini(&annot);
    }
    return 0;
}

/* Are sec's annotate keys those c runs with? (reload_check read them.) */
static int annot_same(const struct srv_cluster *c, struct conf_section *sec)
{
    struct annot_conf now = {0};
    struct loom_error err;
    int same = annot_conf_read(sec, &now, &err) == 0 &&
               annot_conf_same(&c->annot, &now);

    annot_conf_fini(&now);
    return same;
}

/* Reload: poll intervals change at once; clusters added, removed, given
 * another adaptor or other annotate keys need a restart, and the answer
 * says so. A file with an error changes nothing. */
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
        if (!annot_same(c, sec))
            json_array_append_new(restart, json_string(c->name));
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
    else if (m->type == SERVER_REPUBLISH || m->type == SERVER_REFRESH_NODES)
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

void server_handle(struct msg *m)
{
    struct srv_cluster *c;

    switch (m->type) {
    case 0:
        V.stopping = 1;
        break;
    case SERVER_START_JOB:
    case SERVER_JOB_OP:
    case SERVER_NODE_STATE:
    case SERVER_REPUBLISH:
    case SERVER_REFRESH_NODES:
        if (!(c = target(m)))
            break;
        /* The message is the call's now: a call refused at once (a
         * capability the cluster lacks, a standby loomd) has freed it. */
        if (m->type == SERVER_START_JOB) {
            do_start(c, m);
            return;
        }
        if (m->type == SERVER_JOB_OP) {
            do_job_op(c, m);
            return;
        }
        if (m->type == SERVER_NODE_STATE) {
            do_node_state(c, m);
            return;
        }
        if (m->type == SERVER_REFRESH_NODES) {
            server_refresh_nodes(c, m);
            return;
        }
        server_publish(c);
        if (m->reply)
            reply_send(m->reply, 200, NULL);
        break;
    case SERVER_RELOAD:
        do_reload(m);
        break;
    case SERVER_RESV:
        server_resv(m);
        return; /* the message is the call's now */
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
    free(s->reservation);
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
