/* api_resv.c - /v1/reservations: list and get from the snapshot; create
 * and cancel through the scheduler thread. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api.h"
#include "core/jsonx.h"
#include "core/snapshot.h"
#include "core/token.h"
#include "scheduler/sched.h"

static int matches(json_t *r, const char *key, const char *want)
{
    return !want || !strcmp(jx_str(r, key, ""), want);
}

/* GET /v1/reservations[?cluster=&state=&owner=&purpose=] and /{id}. */
void api_resv_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a)
{
    struct snapshot *s = snapshot_get();
    json_t *all = s && s->text[SNAP_RESV]
                      ? json_loads(s->text[SNAP_RESV]->text, 0, NULL)
                      : NULL;
    json_t *items = json_array(), *r;
    struct loom_error err;
    size_t i;

    snapshot_put(s);
    if (!items) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        json_decref(all);
        return;
    }
    json_array_foreach(all, i, r) {
        if (a->n == 2 ? !strcmp(jx_str(r, "id", ""), a->seg[1])
                      : matches(r, "cluster", http_query(rq, "cluster")) &&
                            matches(r, "state", http_query(rq, "state")) &&
                            matches(r, "owner", http_query(rq, "owner")) &&
                            matches(r, "purpose", http_query(rq, "purpose")))
            json_array_append(items, r);
    }
    if (a->n == 2) {
        if (json_array_size(items)) {
            rs->status = 200;
            rs->body = json_dumps(json_array_get(items, 0), JSON_COMPACT);
        } else {
            loom_error_set(&err, LOOM_ENOENT, "there is no reservation '%s'",
                           a->seg[1]);
            http_error(rs, &err);
        }
    } else {
        json_t *o = json_pack("{s:O}", "items", items);
        rs->status = 200;
        rs->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
    }
    json_decref(items);
    json_decref(all);
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
    char *end;

    if (!op || !(op->subject = strdup(rq->who.subject))) {
        sched_resv_op_free(op);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    op->id = strtoll(a->seg[1], &end, 10);
    if (*end || op->id <= 0) {
        sched_resv_op_free(op);
        loom_error_set(&err, LOOM_ENOENT, "there is no reservation '%s'",
                       a->seg[1]);
        http_error(rs, &err);
        return;
    }
    api_call(sched_queue(), SCHED_RESV_CANCEL, op, sched_resv_op_free, rs);
}
