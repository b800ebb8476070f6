/* maint.c - /v1/maintenance, /v1/state/diff, /v1/goal/nodes and
 * /v1/actual/nodes: lists from the snapshot, the rest through the
 * maintenance thread. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/snapshot.h"
#include "core/token.h"
#include "maintenance/maint.h"

#define MAX_FILTERS 8

/* What a list request asks for: an id, or fields' values; each also as
 * the text "key":value its items would hold, for a cheap test before a
 * parse. */
struct want {
    const char *key[MAX_FILTERS], *value[MAX_FILTERS];
    char *needle[MAX_FILTERS];
    int n;
};

static int want_add(struct want *w, const char *key, const char *value)
{
    json_t *v = json_string(value);
    char *enc = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;
    size_t len = enc ? strlen(key) + strlen(enc) + 4 : 0;

    json_decref(v);
    if (!enc || w->n == MAX_FILTERS || !(w->needle[w->n] = malloc(len))) {
        free(enc);
        return -1;
    }
    snprintf(w->needle[w->n], len, "\"%s\":%s", key, enc);
    free(enc);
    w->key[w->n] = key;
    w->value[w->n++] = value;
    return 0;
}

static void want_fini(struct want *w)
{
    for (int k = 0; k < w->n; k++)
        free(w->needle[k]);
}

/* Is the item (text row) one asked for? */
static int wanted(const struct want *w, const char *row, size_t len)
{
    json_t *it;
    int ok = 1;

    for (int k = 0; k < w->n; k++)
        if (!memmem(row, len, w->needle[k], strlen(w->needle[k])))
            return 0;
    if (!(it = json_loadb(row, len, 0, NULL)))
        return 0;
    for (int k = 0; ok && k < w->n; k++)
        ok = !strcmp(jx_str(it, w->key[k], ""), w->value[k]);
    json_decref(it);
    return ok;
}

static void no_such(struct http_resp *rs, const char *what, const char *id)
{
    struct loom_error err;

    loom_error_set(&err, LOOM_ENOENT, "there is no %s '%.100s'", what, id);
    http_error(rs, &err);
}

/* A list published whole (SNAP_*): every item, or those whose fields
 * equal the query's filters, or (id non-NULL) the one with that id. Items
 * are looked at in their text first, and only the likely ones parsed. */
void api_list_text(const struct api_route_args *a, struct http_resp *rs,
                   enum snap_text which, const char *id, const char *what)
{
    api_list_text_of(a, rs, which, id, what, NULL);
}

void api_list_text_of(const struct api_route_args *a, struct http_resp *rs,
                      enum snap_text which, const char *id, const char *what,
                      const char *owner)
{
    struct snapshot *s = snapshot_get();
    struct stext *t = s ? s->text[which] : NULL;
    struct loom_error err;
    struct want w = {0};
    size_t cap = 64, len = 0;
    char *out = NULL;
    int64_t n_id;
    int found = 0, bad = id && want_add(&w, "id", id) < 0;

    if (id && domain_id_parse(id, &n_id) < 0) { /* "013" is not 13 */
        snapshot_put(s);
        want_fini(&w);
        no_such(rs, what, id);
        return;
    }
    for (int k = 0; !id && a->params[k].name; k++)
        if (a->value[k])
            bad |= want_add(&w, a->params[k].name, a->value[k]) < 0;
    /* the reader's own only: added to (never replacing) its filters */
    if (owner)
        bad |= want_add(&w, "owner", owner) < 0;
    if (bad)
        goto nomem;
    if (!w.n) { /* the common case: the text as it is */
        size_t n = t ? t->len : 2;
        if ((rs->body = malloc(n + 12))) {
            snprintf(rs->body, n + 12, "{\"items\":%s}", t ? t->text : "[]");
            rs->status = 200;
        }
        snapshot_put(s);
        return;
    }
    if (!(out = malloc(cap)))
        goto nomem;
    len = (size_t)snprintf(out, cap, "%s", id ? "" : "{\"items\":[");
    for (size_t i = 0; t && t->row && i < t->n_rows && !(id && found); i++) {
        const char *row = t->text + t->row[i];
        size_t n = t->row[i + 1] - 1 - t->row[i];
        char *grown;
        if (!wanted(&w, row, n))
            continue;
        if (len + n + 4 > cap) {
            cap = (len + n + 4) * 2;
            if (!(grown = realloc(out, cap)))
                goto nomem;
            out = grown;
        }
        if (found++ && !id)
            out[len++] = ',';
        memcpy(out + len, row, n);
        len += n;
    }
    snapshot_put(s);
    s = NULL;
    want_fini(&w);
    if (id && !found) {
        free(out);
        no_such(rs, what, id);
        return;
    }
    if (!id) {
        memcpy(out + len, "]}", 2);
        len += 2;
    }
    out[len] = '\0';
    rs->status = 200;
    rs->body = out;
    return;
nomem:
    snapshot_put(s);
    want_fini(&w);
    free(out);
    loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    http_error(rs, &err);
}

void api_maint_get(struct http_req *rq, struct http_resp *rs,
                   const struct api_route_args *a)
{
    api_list_text(a, rs, SNAP_MAINT, a->n == 2 ? a->seg[1] : NULL,
                  "maintenance request");
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
