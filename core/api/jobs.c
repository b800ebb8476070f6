/* jobs.c - submit, cancel, job control, start, node state. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/server.h"
#include "core/accounts.h"
#include "core/api/api.h"
#include "core/directives.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "scheduler/sched.h"

static void bad(struct http_resp *rs, enum loom_err_kind kind,
                const char *field, const char *msg)
{
    struct loom_error err;

    loom_error_field(&err, kind, field, "%s", msg);
    http_error(rs, &err);
}

/* The 201 answer with "warnings": [...] added (the directives Loom
 * ignored under directives = warn). */
static void add_warnings(struct http_resp *rs, json_t *warnings)
{
    char *w = json_dumps(warnings, JSON_COMPACT), *body;
    size_t n = rs->body ? strlen(rs->body) : 0;

    if (!w || n < 2 || rs->body[n - 1] != '}' ||
        !(body = malloc(n + strlen(w) + 16))) {
        free(w);
        return;
    }
    snprintf(body, n + strlen(w) + 16, "%.*s,\"warnings\":%s}", (int)(n - 1),
             rs->body, w);
    free(rs->body);
    rs->body = body;
    free(w);
}

/* The script's directives into body (see core/directives.h); what they
 * did into the job's record. 0, or -1 with err. */
static int directives_in(json_t *body, char **record, json_t **warnings,
                         struct loom_error *err)
{
    json_t *rec = NULL;

    *record = NULL;
    if (directives_apply(body, directives_mode(), &rec, warnings, err) < 0)
        return -1;
    if (rec && !(*record = json_dumps(rec, JSON_COMPACT))) {
        json_decref(rec);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    json_decref(rec);
    return 0;
}

void api_jobs_submit(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    const char *key = http_header(rq, "Idempotency-Key");
    const char *source = (rq->who.roles & LOOM_ROLE_GATEWAY) &&
                                 !(rq->who.roles & LOOM_ROLE_USER)
                             ? "grid" : "local";
    struct loom_error err;
    struct job *j = NULL;
    json_t *body, *warnings = NULL;
    char hash[65], *record = NULL;

    if (key && (!*key || strlen(key) > LOOM_IDEM_KEY_MAX)) {
        bad(rs, LOOM_EINVAL, "Idempotency-Key", "Idempotency-Key must be 1 "
            "to 255 characters");
        return;
    }
    if (!rq->account[0]) {
        loom_error_set(&err, LOOM_EPERM, "%s may not submit jobs: %s",
                       rq->who.subject, rq->no_account);
        http_error(rs, &err);
        return;
    }
    if (accounts_may_run(rq->account, &err) < 0) {
        http_error(rs, &err);
        return;
    }
    body = jx_parse_object(rq->body, rq->len, &err);
    if (body) /* of the request as sent, before its directives */
        job_body_hash(body, hash);
    if (body && directives_in(body, &record, &warnings, &err) == 0)
        j = job_from_request(body, rq->who.subject, rq->account, source,
                             &err);
    json_decref(body);
    if (!j) {
        free(record);
        json_decref(warnings);
        http_error(rs, &err);
        return;
    }
    j->directives = record;
    /* admins and operators may raise a priority past max_user_priority */
    j->staff = (rq->who.roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)) != 0;
    if (key) {
        job_set_str(&j->idem_key, key);
        memcpy(j->idem_hash, hash, sizeof(hash));
    }
    /* a 201 comes with its Location from the committer */
    api_call(sched_queue(), SCHED_SUBMIT, j, (void (*)(void *))job_destroy,
             rs);
    if (rs->status == 201 && warnings)
        add_warnings(rs, warnings);
    json_decref(warnings);
}

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
    if (domain_id_parse(a->seg[1], &op->id) < 0) {
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
