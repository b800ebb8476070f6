/* maint.c - /v1/maintenance, /v1/state/diff, /v1/goal/nodes and
 * /v1/actual/nodes: lists from the snapshot, the rest through the
 * maintenance thread. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/snapshot.h"
#include "core/store_maint.h"
#include "core/token.h"
#include "maintenance/maint.h"

static const char *const maint_gone[] = {"done", "failed", "cancelled",
                                         NULL};
static const struct api_stored_src maint_src = {
    SNAP_MAINT, "maintenance request", maint_evicted_max, store_maint_doc,
    store_maint_ended, maint_gone,
};

/* GET /v1/maintenance[/{id}]: the requests in the snapshot, and the ended
 * ones that left memory ([maintenance] request_memory_s) read from
 * PostgreSQL. */
void api_maint_get(struct http_req *rq, struct http_resp *rs,
                   const struct api_route_args *a)
{
    (void)rq;
    api_list_stored(a, rs, &maint_src, NULL);
}

/* The thread's op for this request: node "c/n" from seg[from], seg[from+1]
 * (when n allows), the body, the caller. NULL when out of memory. */
static struct maint_op *op_of(const struct http_req *rq,
                              const struct api_route_args *a, int from)
{
    struct maint_op *op = calloc(1, sizeof(*op));
    char node[512];
    int bad;

    if (!op)
        return NULL;
    bad = !(op->subject = strdup(rq->who.subject));
    op->roles = rq->who.roles;
    if (a->n >= from + 2) {
        snprintf(node, sizeof(node), "%s/%s", a->seg[from], a->seg[from + 1]);
        bad |= !(op->node = strdup(node));
    }
    if (rq->body && rq->len)
        bad |= !(op->body = strndup(rq->body, rq->len));
    if (bad) {
        maint_op_free(op);
        return NULL;
    }
    return op;
}

static void call_maint(struct http_req *rq, struct http_resp *rs,
                       const struct api_route_args *a, int from, int type)
{
    struct maint_op *op = op_of(rq, a, from);
    struct loom_error err;

    if (!op) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    if (type == MAINT_REQ_CANCEL) {
        if (domain_id_parse(a->seg[1], &op->id) < 0) {
            maint_op_free(op);
            loom_error_set(&err, LOOM_ENOENT, "there is no maintenance "
                           "request '%s'", a->seg[1]);
            http_error(rs, &err);
            return;
        }
    }
    api_call(maint_queue(), type, op, maint_op_free, rs);
}

void api_maint_post(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a)
{
    call_maint(rq, rs, a, 99, MAINT_REQ_POST);
}

void api_maint_cancel(struct http_req *rq, struct http_resp *rs,
                      const struct api_route_args *a)
{
    call_maint(rq, rs, a, 99, MAINT_REQ_CANCEL);
}

static int not_found(struct http_req *rq, struct http_resp *rs)
{
    struct loom_error err;

    loom_error_set(&err, LOOM_ENOENT, "no such endpoint: %s %s", rq->method,
                   rq->path);
    http_error(rs, &err);
    return -1;
}

/* GET /v1/state/diff */
void api_diff(struct http_req *rq, struct http_resp *rs,
              const struct api_route_args *a)
{
    if (strcmp(a->seg[1], "diff")) {
        not_found(rq, rs);
        return;
    }
    api_list_text(a, rs, SNAP_DIFF, NULL, "mismatch");
}

/* /v1/goal/nodes[/{cluster}/{name}]: GET, PUT. */
void api_goal(struct http_req *rq, struct http_resp *rs,
              const struct api_route_args *a)
{
    int put = !strcmp(rq->method, "PUT");

    if (strcmp(a->seg[1], "nodes") || a->n == 3) {
        not_found(rq, rs);
        return;
    }
    if (put && !(rq->who.roles & LOOM_ROLE_ADMIN)) {
        struct loom_error err;
        loom_error_set(&err, LOOM_EPERM, "setting goal state needs the admin "
                       "role");
        http_error(rs, &err);
        return;
    }
    call_maint(rq, rs, a, 2, put ? MAINT_GOAL_PUT : MAINT_GOAL_GET);
}

/* /v1/actual/nodes/{cluster}/{name}: GET, POST. */
void api_actual(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a)
{
    int post = !strcmp(rq->method, "POST");

    if (strcmp(a->seg[1], "nodes")) {
        not_found(rq, rs);
        return;
    }
    if (post && !(rq->who.roles & (LOOM_ROLE_ADMIN | LOOM_ROLE_MONITOR))) {
        struct loom_error err;
        loom_error_set(&err, LOOM_EPERM, "a monitoring report needs the "
                       "monitor or admin role");
        http_error(rs, &err);
        return;
    }
    call_maint(rq, rs, a, 2, post ? MAINT_ACTUAL_POST : MAINT_ACTUAL_GET);
}
