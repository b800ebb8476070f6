/* read.c - GET handlers, answered from the snapshot. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/accounts.h"
#include "core/api/api.h"
#include "core/domain.h"
#include "core/hmap.h"
#include "core/limits.h"
#include "scheduler/sched.h"

/* A growable output buffer for list bodies. */
struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 65536;
        char *p;
        while (cap < b->len + n + 1)
            cap *= 2;
        p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void item(struct buf *b, int *first, const char *json, size_t len)
{
    if (!*first)
        put(b, ",", 1);
    *first = 0;
    put(b, json, len);
}

static void finish(struct buf *b, struct http_resp *rs)
{
    struct loom_error err;

    if (b->oom) {
        free(b->p);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    rs->status = 200;
    rs->body = b->p;
}

/* The ETag of a list: a hash of its body as this reader gets it, so that a
 * client polling one list learns from a 304 without a body that nothing in
 * it changed. Written here, sent by http.c on this thread right after the
 * handler returns. */
static _Thread_local char list_etag[24];

/* finish, with the body's ETag; 304 and no body when If-None-Match names
 * it. */
static void finish_tagged(struct buf *b, struct http_req *rq,
                          struct http_resp *rs)
{
    const char *inm = http_header(rq, "If-None-Match");
    int i;

    if (b->oom) {
        finish(b, rs);
        return;
    }
    snprintf(list_etag, sizeof(list_etag), "\"%016llx\"",
             (unsigned long long)hmap_hash(b->p, b->len));
    for (i = 0; i < HTTP_HEADERS_MAX - 1 && rs->header[i].name; i++)
        ;
    rs->header[i] = (struct http_header){"ETag", list_etag};
    if (inm && strstr(inm, list_etag)) {
        free(b->p);
        rs->status = 304;
        return;
    }
    finish(b, rs);
}

static void not_found(struct http_resp *rs, const char *what, const char *id)
{
    struct loom_error err;

    loom_error_set(&err, LOOM_ENOENT, "no %s '%s'", what, id);
    http_error(rs, &err);
}

void api_clusters(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a)
{
    struct snapshot *s = snapshot_get();
    struct buf b = {0};
    int first = 1;

    if (a->n == 2) {
        struct scluster *c = snapshot_cluster(s, a->seg[1]);
        if (c) {
            rs->status = 200;
            rs->body = strdup(c->json);
        } else {
            not_found(rs, "cluster", a->seg[1]);
        }
        snapshot_put(s);
        return;
    }
    puts_(&b, "{\"items\":[");
    for (size_t i = 0; s && i < s->n_clusters; i++)
        item(&b, &first, s->clusters[i]->json, strlen(s->clusters[i]->json));
    puts_(&b, "]}");
    snapshot_put(s);
    finish(&b, rs);
}

void api_nodes(struct http_req *rq, struct http_resp *rs,
               const struct api_route_args *a)
{
    const char *fc = api_param(a, "cluster"), *fs = api_param(a, "state");
    struct snapshot *s;
    struct buf b = {0};
    int first = 1;

    if (api_fresh_nodes(rq, rs, a->n >= 2 ? a->seg[1] : fc) < 0)
        return;
    s = snapshot_get();
    if (a->n == 2 || a->n == 3) {
        struct scluster *c = snapshot_cluster(s, a->seg[1]);
        struct snode *n = c && a->n == 3 ? scluster_node(c, a->seg[2]) : NULL;
        char id[256];
        snprintf(id, sizeof(id), "%s%s%s", a->seg[1], a->n == 3 ? "/" : "",
                 a->n == 3 ? a->seg[2] : "");
        if (n) {
            rs->status = 200;
            rs->body = strdup(n->json);
        } else {
            not_found(rs, "node", id);
        }
        snapshot_put(s);
        return;
    }
    puts_(&b, "{\"items\":[");
    for (size_t i = 0; s && i < s->n_clusters; i++) {
        struct scluster *c = s->clusters[i];
        if (fc && strcmp(fc, c->name) != 0)
            continue;
        if (!fs) { /* the whole cluster's nodes, rendered once per poll */
            if (c->nodes_len)
                item(&b, &first, c->nodes_json, c->nodes_len);
            continue;
        }
        for (size_t k = 0; k < c->n_nodes; k++)
            if (!strcmp(c->nodes[k].state, fs))
                item(&b, &first, c->nodes[k].json, c->nodes[k].len);
    }
    puts_(&b, "]}");
    snapshot_put(s);
    finish(&b, rs);
}

void api_queues(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a)
{
    const char *fc = api_param(a, "cluster");
    struct snapshot *s = snapshot_get();
    struct buf b = {0};
    int first = 1;

    if (a->n == 1 && api_param(a, "view") &&
        !strcmp(api_param(a, "view"), "fabric")) {
        snapshot_put(s);
        api_queues_fabric(rq, rs, a);
        return;
    }
    if (a->n >= 2 && !(s && snapshot_cluster(s, a->seg[1]))) {
        snapshot_put(s);
        not_found(rs, "cluster", a->seg[1]);
        return;
    }
    puts_(&b, "{\"items\":[");
    for (size_t i = 0; s && i < s->n_clusters; i++) {
        struct scluster *c = s->clusters[i];
        if ((fc && strcmp(fc, c->name) != 0) ||
            (a->n >= 2 && strcmp(a->seg[1], c->name) != 0))
            continue;
        for (size_t k = 0; k < c->n_queues; k++) {
            if (a->n == 3 && strcmp(a->seg[2], c->queues[k].name) != 0)
                continue;
            if (a->n == 3) {
                free(b.p);
                rs->status = 200;
                rs->body = strdup(c->queues[k].json);
                snapshot_put(s);
                return;
            }
            item(&b, &first, c->queues[k].json, c->queues[k].len);
        }
    }
    snapshot_put(s);
    if (a->n == 3) {
        free(b.p);
        not_found(rs, "queue", rq->path + strlen("/v1/queues/"));
        return;
    }
    puts_(&b, "]}");
    finish(&b, rs);
}

enum api_see api_others_see(const struct http_req *rq)
{
    unsigned r = rq->who.roles;

    if (r & (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR))
        return API_SEE_ALL;
    if (r & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY))
        return accounts_policy().private_data ? API_SEE_NOTHING
                                              : API_SEE_PUBLIC;
    return API_SEE_PUBLIC; /* scheduler, monitor, reader */
}

enum api_see api_job_see(const struct http_req *rq, const struct jview *v)
{
    unsigned r = rq->who.roles;

    /* its owner's, and the gateway's that submitted it */
    if ((r & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)) &&
        (!strcmp(v->owner, rq->who.subject) ||
         !strcmp(v->submitted_by, rq->who.subject)))
        return API_SEE_ALL;
    return api_others_see(rq);
}

/* An array's task ("123_7"): the scheduler knows which record it has, or
 * shows the array's job as the task while it has none. */
static void task_one(struct http_req *rq, struct http_resp *rs, int64_t id,
                     long task)
{
    struct sched_job_op *op = calloc(1, sizeof(*op));
    struct loom_error err;

    if (!op || !(op->subject = strdup(rq->who.subject))) {
        free(op);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    snprintf(op->op, sizeof(op->op), "get");
    op->id = id;
    op->task = task;
    op->roles = rq->who.roles;
    api_call(sched_queue(), SCHED_JOB_OP, op, sched_job_op_free, rs);
}

static void jobs_one(struct http_req *rq, struct http_resp *rs,
                     const char *idstr)
{
    struct snapshot *s;
    struct jview *v;
    enum api_see see;
    size_t len;
    int64_t id;
    long task;

    if (domain_job_ref_parse(idstr, &id, &task) < 0) {
        not_found(rs, "job", idstr);
        return;
    }
    if (task >= 0) {
        task_one(rq, rs, id, task);
        return;
    }
    s = snapshot_get();
    v = s ? jobtab_get(s->jobs, id) : NULL;
    see = v ? api_job_see(rq, v) : API_SEE_NOTHING;
    if (see == API_SEE_ALL) {
        rs->status = 200;
        rs->view = jview_ref(v); /* sent without a copy */
    } else if (see == API_SEE_PUBLIC) {
        if ((rs->body = jview_redacted(v, &len)))
            rs->status = 200;
        else
            not_found(rs, "job", idstr); /* out of memory */
    } else { /* another's, to a user: as if there were none */
        not_found(rs, "job", idstr);
    }
    snapshot_put(s);
}

/* The filters of GET /v1/jobs, checked by the route's table. */
struct job_filter {
    const char *cluster, *owner, *account, *name;
    unsigned states; /* bits of the states asked for; 0: any */
    struct strv nodes; /* ids, sorted; with nodelist */
    int by_nodes;
};

/* The states of ?state= as bits (checked by the route's table); 0: any. */
static unsigned states_of(const char *list)
{
    struct loom_error err;
    unsigned bits = 0;

    if (list && domain_list_parse(&domain_job_states, list, &bits, "state",
                                  &err) < 0)
        return 0;
    return bits;
}

static int job_matches(const struct job_filter *f, const struct jview *v)
{
    int k;

    /* v->cluster: where it runs or ran, else the one it asked for */
    if (f->states && ((k = domain_find(&domain_job_states, v->state)) < 0 ||
                      !(f->states & (1u << k))))
        return 0;
    if ((f->owner && strcmp(f->owner, v->owner) != 0) ||
        (f->account && strcmp(f->account, v->account) != 0) ||
        (f->name && (!v->name || strcmp(f->name, v->name) != 0)) ||
        (f->cluster && (!v->cluster || strcmp(f->cluster, v->cluster) != 0)))
        return 0;
    if (!f->by_nodes)
        return 1;
    for (size_t i = 0; v->cluster && i < v->n_nodes; i++)
        if (api_nodelist_has(&f->nodes, v->cluster, v->nodes[i]))
            return 1;
    return 0;
}

/* The members of v that fields (bits) names, as an object; without the
 * private span when see is not API_SEE_ALL. */
static void narrowed(struct buf *b, int *first, const struct jview *v,
                     enum api_see see, uint64_t bits)
{
    struct api_span spans[API_FIELDS_MAX];
    size_t n = api_fields_cut(v->json, v->len,
                              see == API_SEE_ALL ? 0 : v->priv_off,
                              see == API_SEE_ALL ? 0 : v->priv_len, bits,
                              spans, API_FIELDS_MAX);

    item(b, first, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(b, ",", 1);
        put(b, spans[i].p, spans[i].len);
    }
    put(b, "}", 1);
}

/* "next": the path of the page after last, with the same filters. */
static void next_page(struct buf *b, const struct api_route_args *a,
                      int64_t last, int64_t limit)
{
    static const char *const keys[] = {"cluster", "state", "owner",
                                       "account", "name", "nodelist",
                                       "fields"};
    char next[2048];
    json_t *js;
    char *enc;

    snprintf(next, sizeof(next), "/v1/jobs?after=%lld&limit=%lld",
             (long long)last, (long long)limit);
    for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
        api_query_append(next, sizeof(next), keys[k], api_param(a, keys[k]));
    js = json_string(next);
    enc = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    puts_(b, ",\"next\":");
    puts_(b, enc ? enc : "null");
    free(enc);
    json_decref(js);
}

void api_jobs_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a)
{
    const char *al = api_param(a, "limit"), *aa = api_param(a, "after"),
               *fn = api_param(a, "nodelist"), *ff = api_param(a, "fields");
    int64_t limit = LOOM_LIST_LIMIT_DEFAULT, after = 0, last = 0, n = 0, max;
    struct job_filter f = {
        .cluster = api_param(a, "cluster"), .owner = api_param(a, "owner"),
        .account = api_param(a, "account"), .name = api_param(a, "name"),
        .states = states_of(api_param(a, "state")), .by_nodes = fn != NULL};
    struct loom_error err;
    struct snapshot *s;
    struct buf b = {0};
    uint64_t bits = 0;
    int first = 1;

    if (a->n == 2) {
        jobs_one(rq, rs, a->seg[1]);
        return;
    }
    /* checked against the route's table; the nodes again, as they are
     * now */
    if (fn && api_nodelist_ids(fn, f.cluster, &f.nodes, &err) < 0) {
        strv_fini(&f.nodes);
        http_error(rs, &err);
        return;
    }
    /* checked against the route's table too */
    if (ff && api_fields_parse(ff, &bits, &err) < 0) {
        strv_fini(&f.nodes);
        http_error(rs, &err);
        return;
    }
    /* a limit, a job id or 0 */
    if (al)
        domain_id_parse(al, &limit);
    if (aa && strcmp(aa, "0") != 0)
        domain_id_parse(aa, &after);
    s = snapshot_get();
    max = s ? jobtab_max_id(s->jobs) : 0;
    puts_(&b, "{\"items\":[");
    for (int64_t id = after + 1; id <= max && n < limit; id++) {
        struct jview *v = jobtab_get(s->jobs, id);
        enum api_see see;
        if (!v || v->unlisted || !job_matches(&f, v))
            continue;
        /* a filter narrows what the reader may see, never widens it */
        see = api_job_see(rq, v);
        if (see == API_SEE_NOTHING)
            continue;
        if (ff) {
            narrowed(&b, &first, v, see, bits);
        } else if (see == API_SEE_ALL) {
            item(&b, &first, v->json, v->len);
        } else { /* the text around the private span */
            item(&b, &first, v->json, v->priv_off);
            put(&b, v->json + v->priv_off + v->priv_len,
                v->len - v->priv_off - v->priv_len);
        }
        last = id;
        n++;
    }
    puts_(&b, "]");
    if (n == limit && last < max)
        next_page(&b, a, last, limit);
    puts_(&b, "}");
    snapshot_put(s);
    strv_fini(&f.nodes);
    finish_tagged(&b, rq, rs);
}
