/* jobs.c - cancel, job control, start, node state. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/server.h"
#include "core/accounts.h"
#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "core/token.h"
#include "grid/grid.h"
#include "maintenance/maint.h"
#include "scheduler/sched.h"

static const struct jx_field start_fields[] = {
    {"cluster", JX_STRING, 0},
    {"nodes", JX_ARRAY, 1},
    {NULL, 0, 0},
};

/* {"cluster", "nodes"}: node ids, or with the cluster their names. */
static int start_body(struct http_req *rq, struct sched_job_op *op,
                      struct loom_error *err)
{
    json_t *body = jx_parse_object(rq->body, rq->len, err), *v;
    size_t i;
    int rc = -1;

    if (!body || jx_check(body, "", start_fields, err) < 0)
        goto out;
    if (jx_str(body, "cluster", NULL) &&
        !(op->cluster = strdup(jx_str(body, "cluster", "")))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    json_array_foreach(json_object_get(body, "nodes"), i, v) {
        if (!json_is_string(v)) {
            loom_error_field(err, LOOM_EINVAL, "nodes", "field 'nodes' must "
                             "be an array of node ids (or, with cluster, "
                             "names)");
            goto out;
        }
        if (domain_node_add(json_string_value(v), &op->cluster, &op->nodes,
                            "nodes", err) < 0)
            goto out;
    }
    if (!op->cluster) {
        loom_error_field(err, LOOM_EINVAL, "nodes", "give the nodes to start "
                         "the job on");
        goto out;
    }
    rc = 0;
out:
    json_decref(body);
    return rc;
}

/* Audit the cancel of a grid job, or a cancel by a grid token: the job
 * as the answer shows it. Denials are audited where they are made. */
static void audit_cancel(const struct http_req *rq, const struct http_resp *rs)
{
    json_t *job = rs->status < 300 && rs->body
                      ? json_loads(rs->body, 0, NULL) : NULL;
    struct grid_audit a = {.kind = "cancel", .verified = 1};
    const char *source = jx_str(job, "source", "");

    if (rs->status >= 300) {
        struct loom_error err;
        json_t *e = rs->body ? json_loads(rs->body, 0, NULL) : NULL;
        if (rs->status == 403) {
            loom_error_set(&err, LOOM_EPERM, "%s",
                           jx_str(json_object_get(e, "error"), "message",
                                  "refused"));
            api_audit_denial(rq, NULL, &err);
        }
        json_decref(e);
        return;
    }
    if (rq->grid || !strcmp(source, "grid")) {
        a.identity = rq->who.subject;
        a.iss = rq->grid ? rq->grid->iss : NULL;
        a.sub = rq->grid ? rq->grid->sub : NULL;
        a.vo = jx_str(job, "vo", NULL);
        a.account = jx_str(job, "account", NULL);
        a.gateway = strcmp(jx_str(job, "submitted_by", ""),
                           jx_str(job, "owner", "")) != 0
                        ? jx_str(job, "submitted_by", NULL) : NULL;
        a.job = strtoll(jx_str(job, "id", "0"), NULL, 10);
        a.method = rq->method;
        a.path = rq->path;
        grid_audit(&a);
    }
    json_decref(job);
}

/* A job that ended may have left the scheduler's memory by the time it
 * gets op: the handler reads it from the database for the scheduler to
 * answer from. 0, or -1 with err when the database cannot be read. */
static int stored_for(struct sched_job_op *op, struct loom_error *err)
{
    struct snapshot *s;
    struct jview *v;
    int ended;

    if (op->task >= 0)
        return 0; /* an array's task: arrays stay in memory */
    s = snapshot_get();
    v = s ? jobtab_get(s->jobs, op->id) : NULL;
    ended = s && op->id <= jobtab_max_id(s->jobs) &&
            (!v || !strcmp(v->state, "completed") ||
             !strcmp(v->state, "failed") || !strcmp(v->state, "cancelled"));
    snapshot_put(s);
    return ended && api_stored_job(op->id, &op->stored, err) < 0 ? -1 : 0;
}

/* DELETE /v1/jobs/{id} and POST /v1/jobs/{id}/{op}. */
void api_jobs_op(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a)
{
    static const char *const ops[] = {"suspend", "resume", "hold", "release",
                                      "start", NULL};
    struct sched_job_op *op = calloc(1, sizeof(*op));
    const char *name = a->n == 2 ? "cancel" : a->seg[2];
    struct loom_error err;
    size_t i;

    for (i = 0; a->n == 3 && ops[i] && strcmp(ops[i], name) != 0; i++)
        ;
    if (!op || (a->n == 3 && !ops[i])) {
        free(op);
        loom_error_set(&err, LOOM_ENOENT, "no such resource: %s", rq->path);
        http_error(rs, &err);
        return;
    }
    snprintf(op->op, sizeof(op->op), "%s", name);
    op->subject = strdup(rq->who.subject);
    op->roles = rq->who.roles;
    if (domain_job_ref_parse(a->seg[1], &op->id, &op->task) < 0) {
        loom_error_set(&err, LOOM_ENOENT, "no job '%s'", a->seg[1]);
        goto error;
    }
    if (!strcmp(name, "start")) {
        if (!(rq->who.roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_SCHEDULER))) {
            loom_error_set(&err, LOOM_EPERM, "starting a job needs the "
                           "scheduler or admin role");
            goto error;
        }
        if (start_body(rq, op, &err) < 0)
            goto error;
    }
    if (stored_for(op, &err) < 0)
        goto error;
    api_call(sched_queue(), SCHED_JOB_OP, op, sched_job_op_free, rs);
    if (!strcmp(name, "cancel"))
        audit_cancel(rq, rs);
    return;
error:
    sched_job_op_free(op);
    http_error(rs, &err);
}

/* PATCH /v1/jobs/{id}: the scheduler checks each field against the job
 * (a waiting job's name, request, dependency, a lower priority). */
void api_jobs_patch(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a)
{
    struct sched_job_op *op = calloc(1, sizeof(*op));
    struct loom_error err;

    if (!op || !(op->subject = strdup(rq->who.subject))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    snprintf(op->op, sizeof(op->op), "patch");
    op->roles = rq->who.roles;
    if (domain_job_ref_parse(a->seg[1], &op->id, &op->task) < 0) {
        loom_error_set(&err, LOOM_ENOENT, "no job '%s'", a->seg[1]);
        goto error;
    }
    if (!(op->body = jx_parse_object(rq->body, rq->len, &err)) ||
        stored_for(op, &err) < 0)
        goto error;
    api_call(sched_queue(), SCHED_JOB_OP, op, sched_job_op_free, rs);
    return;
error:
    sched_job_op_free(op);
    http_error(rs, &err);
}

static const struct jx_field state_fields[] = {
    {"state", JX_STRING, 1},
    {"reason", JX_STRING | JX_NULLABLE, 0},
    {NULL, 0, 0},
};

/* Pause or resume: the maintenance thread keeps paused nodes. */
static void pause_call(struct http_req *rq, struct http_resp *rs,
                       const struct api_route_args *a)
{
    struct maint_op *op = calloc(1, sizeof(*op));
    struct loom_error err;
    char node[512];

    snprintf(node, sizeof(node), "%s/%s", a->seg[1], a->seg[2]);
    if (!op || !(op->node = strdup(node)) ||
        !(op->subject = strdup(rq->who.subject)) ||
        !(op->body = strndup(rq->body, rq->len))) {
        maint_op_free(op);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    op->roles = rq->who.roles;
    api_call(maint_queue(), MAINT_NODE_PAUSE, op, maint_op_free, rs);
}

/* PUT /v1/nodes/{cluster}/{name}/state */
void api_node_state(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a)
{
    struct server_node_state *ns;
    struct loom_error err;
    const char *st;
    json_t *body;

    if (strcmp(a->seg[3], "state") != 0) {
        loom_error_set(&err, LOOM_ENOENT, "no such resource: %s", rq->path);
        http_error(rs, &err);
        return;
    }
    body = jx_parse_object(rq->body, rq->len, &err);
    if (!body || jx_check(body, "", state_fields, &err) < 0) {
        json_decref(body);
        http_error(rs, &err);
        return;
    }
    st = jx_str(body, "state", "");
    if (domain_check(&domain_node_state_set, st, "state", &err) < 0) {
        json_decref(body);
        loom_error_prefix(&err, "field 'state'");
        http_error(rs, &err);
        return;
    }
    if (!strcmp(st, "resume") && jx_str(body, "reason", NULL)) {
        json_decref(body);
        loom_error_field(&err, LOOM_EINVAL, "reason", "field 'reason': "
                         "resume takes no reason (pause, drain and down "
                         "do)");
        http_error(rs, &err);
        return;
    }
    if (!strcmp(st, "pause") || !strcmp(st, "resume")) {
        json_decref(body);
        pause_call(rq, rs, a);
        return;
    }
    ns = calloc(1, sizeof(*ns));
    if (ns) {
        ns->cluster = strdup(a->seg[1]);
        ns->node = strdup(a->seg[2]);
        ns->state = strdup(st);
        ns->reason = jx_str(body, "reason", NULL)
                         ? strdup(jx_str(body, "reason", NULL)) : NULL;
    }
    json_decref(body);
    api_call(server_queue(), SERVER_NODE_STATE, ns, server_node_state_free,
             rs);
}
