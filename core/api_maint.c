/* api_maint.c - /v1/maintenance, /v1/state/diff, /v1/goal/nodes and
 * /v1/actual/nodes: lists from the snapshot, the rest through the
 * maintenance thread. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api.h"
#include "core/jsonx.h"
#include "core/snapshot.h"
#include "core/token.h"
#include "maintenance/maint.h"

/* A list published whole (SNAP_*): every item, or those whose fields
 * equal the query's filters, or (id non-NULL) the one with that id. */
void api_list_text(struct http_req *rq, struct http_resp *rs,
                   enum snap_text which, const char *const *filters,
                   const char *id, const char *what)
{
    struct snapshot *s = snapshot_get();
    struct stext *t = s ? s->text[which] : NULL;
    json_t *all = NULL, *items = NULL, *o = NULL, *it;
    struct loom_error err;
    int filtered = 0;
    size_t i;

    for (int k = 0; filters && filters[k]; k++)
        filtered |= http_query(rq, filters[k]) != NULL;
    if (!id && !filtered) { /* the common case: no parse */
        size_t n = t ? t->len : 2;
        if ((rs->body = malloc(n + 12))) {
            snprintf(rs->body, n + 12, "{\"items\":%s}", t ? t->text : "[]");
            rs->status = 200;
        }
        snapshot_put(s);
        return;
    }
    all = t ? json_loads(t->text, 0, NULL) : json_array();
    snapshot_put(s);
    if (!all || !(items = json_array())) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        goto out;
    }
    json_array_foreach(all, i, it) {
        int ok = id ? !strcmp(jx_str(it, "id", ""), id) : 1;
        for (int k = 0; ok && !id && filters[k]; k++) {
            const char *want = http_query(rq, filters[k]);
            ok = !want || !strcmp(jx_str(it, filters[k], ""), want);
        }
        if (ok)
            json_array_append(items, it);
    }
    if (id && !json_array_size(items)) {
        loom_error_set(&err, LOOM_ENOENT, "there is no %s '%s'", what, id);
        http_error(rs, &err);
        goto out;
    }
    o = id ? json_incref(json_array_get(items, 0))
           : json_pack("{s:O}", "items", items);
    rs->status = 200;
    rs->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
out:
    json_decref(o);
    json_decref(items);
    json_decref(all);
}

static const char *const maint_filters[] = {"cluster", "state", "action",
                                            "rule", NULL};
static const char *const diff_filters[] = {"cluster", "attribute", "node",
                                           "action", NULL};

void api_maint_get(struct http_req *rq, struct http_resp *rs,
                   const struct api_route_args *a)
{
    api_list_text(rq, rs, SNAP_MAINT, maint_filters,
                  a->n == 2 ? a->seg[1] : NULL, "maintenance request");
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
    char *end;

    if (!op) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    if (type == MAINT_REQ_CANCEL) {
        op->id = strtoll(a->seg[1], &end, 10);
        if (*end || op->id <= 0) {
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
    api_list_text(rq, rs, SNAP_DIFF, diff_filters, NULL, "mismatch");
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
