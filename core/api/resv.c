/* resv.c - /v1/reservations: list and get from the snapshot (and the
 * ended ones that left memory from PostgreSQL); create and cancel through
 * the scheduler thread. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/accounts.h"
#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/snapshot.h"
#include "core/store_resv.h"
#include "core/token.h"
#include "scheduler/sched.h"

static const char *const resv_gone[] = {"done", "cancelled", NULL};
static const struct api_stored_src resv_src = {
    SNAP_RESV, "reservation", resv_evicted_max, store_resv_doc,
    store_resv_ended, resv_gone,
};

/* GET /v1/reservations[?cluster=&state=&owner=&purpose=] and /{id}: the
 * ended ones that left memory ([scheduler] resv_memory_s) read from
 * PostgreSQL. */
void api_resv_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a)
{
    unsigned r = rq->who.roles;
    int own_only = !(r & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)) &&
                   (r & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)) &&
                   accounts_policy().private_data;

    api_list_stored(a, rs, &resv_src, own_only ? rq->who.subject : NULL);
}

/* A reservation that ended may have left the scheduler's memory by the
 * time it gets op: read from the database for it to answer from (only
 * up to the highest id that left). 0, or -1 with err. */
static int stored_for(struct sched_resv_op *op, struct loom_error *err)
{
    struct store *st;
    char *state = NULL, *doc = NULL;
    json_t *o;
    int rc;

    if (op->id > resv_evicted_max())
        return 0;
    if (!(st = api_reader_get(err)))
        return -1;
    rc = store_resv_doc(st, op->id, &state, &doc, err);
    api_reader_put();
    if (rc > 0) {
        o = json_loads(doc, 0, NULL);
        op->stored = o ? resv_from_doc(o, err) : NULL;
        json_decref(o);
        if (!op->stored)
            rc = loom_error_set(err, LOOM_EINTERNAL, "reservation %lld: "
                                "its stored record is unreadable",
                                (long long)op->id);
    }
    free(state);
    free(doc);
    return rc < 0 ? -1 : 0;
}

/* A user's reservation made in its cluster's system too is for the
 * owner's account there (the jobs it may run); a maintenance window is
 * nobody's. None when the owner has no account on that cluster. */
static int owner_account(const struct http_req *rq, struct resv_req *r,
                         struct loom_error *err)
{
    const char *acc = NULL;

    if (strcmp(r->purpose, "user") != 0)
        return 0;
    if (rq->map)
        acc = accounts_on(rq->map, r->cluster);
    else if (rq->account[0])
        acc = rq->account;
    if (acc && *acc && !(r->account = strdup(acc)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* POST /v1/reservations. */
void api_resv_create(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    struct sched_resv_op *op = calloc(1, sizeof(*op));
    json_t *body = NULL;
    struct loom_error err;

    (void)a;
    if (!op || !(op->subject = strdup(rq->who.subject))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (!(body = jx_parse_object(rq->body, rq->len, &err)) ||
        resv_req_parse(body, time(NULL), &op->rq, &err) < 0)
        goto error;
    if (!strcmp(op->rq.purpose, "maintenance") &&
        !(rq->who.roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR))) {
        loom_error_set(&err, LOOM_EPERM, "a maintenance reservation needs "
                       "the operator or admin role");
        goto error;
    }
    if (owner_account(rq, &op->rq, &err) < 0)
        goto error;
    json_decref(body);
    api_call(sched_queue(), SCHED_RESV_CREATE, op, sched_resv_op_free, rs);
    return;
error:
    json_decref(body);
    sched_resv_op_free(op);
    http_error(rs, &err);
}

/* DELETE /v1/reservations/{id}. */
void api_resv_cancel(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    struct sched_resv_op *op = calloc(1, sizeof(*op));
    struct loom_error err;

    if (!op || !(op->subject = strdup(rq->who.subject))) {
        sched_resv_op_free(op);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    op->roles = rq->who.roles;
    if (domain_id_parse(a->seg[1], &op->id) < 0) {
        sched_resv_op_free(op);
        loom_error_set(&err, LOOM_ENOENT, "there is no reservation '%s'",
                       a->seg[1]);
        http_error(rs, &err);
        return;
    }
    if (stored_for(op, &err) < 0) {
        sched_resv_op_free(op);
        http_error(rs, &err);
        return;
    }
    api_call(sched_queue(), SCHED_RESV_CANCEL, op, sched_resv_op_free, rs);
}
