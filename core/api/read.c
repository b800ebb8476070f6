/* read.c - GET handlers, answered from the snapshot. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/accounts.h"
#include "core/api/api.h"
#include "core/domain.h"
#include "core/limits.h"
#include "core/store_jobs_read.h"
#include "scheduler/job.h"
#include "scheduler/sched.h"

#define STORED_PAGE 256 /* ended jobs read from the database at a time */

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
static _Thread_local char list_etag[HTTP_ETAG_SIZE];

/* finish, with the body's ETag; 304 and no body when If-None-Match names
 * it. */
static void finish_tagged(struct buf *b, struct http_req *rq,
                          struct http_resp *rs)
{
    if (b->oom) {
        finish(b, rs);
        return;
    }
    http_etag_of(b->p, b->len, list_etag);
    if (http_etag_answer(rq, rs, list_etag)) {
        free(b->p);
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
    struct jview *v, *stored = NULL;
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
    if (!v && s && id <= jobtab_max_id(s->jobs)) {
        /* ended and gone from memory: as it was stored */
        struct loom_error err;
        if (api_stored_view(id, &stored, &err) < 0) {
            snapshot_put(s);
            http_error(rs, &err);
            return;
        }
        v = stored;
    }
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
    jview_unref(stored);
    snapshot_put(s);
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
                                       "fields", "id", "queue", "user"};
    size_t size = 64;
    char *next;
    json_t *js;
    char *enc;

    /* each value percent-encoded: at most three bytes a byte */
    for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
        if (api_param(a, keys[k]))
            size += strlen(keys[k]) + 2 + 3 * strlen(api_param(a, keys[k]));
    if (!(next = malloc(size))) {
        b->oom = 1;
        return;
    }
    snprintf(next, size, "/v1/jobs?after=%lld&limit=%lld", (long long)last,
             (long long)limit);
    for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++)
        api_query_append(next, size, keys[k], api_param(a, keys[k]));
    js = json_string(next);
    enc = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    puts_(b, ",\"next\":");
    puts_(b, enc ? enc : "null");
    free(enc);
    free(next);
    json_decref(js);
}

/* v as an item of the list, when it is listed, f lets it through and the
 * reader may see it: 1 when it was added. */
static int list_one(struct http_req *rq, struct buf *b, int *first,
                    const struct api_job_filter *f, const struct jview *v,
                    const char *ff, uint64_t bits)
{
    enum api_see see;

    if (v->unlisted || !api_job_filter_matches(f, v))
        return 0;
    /* a filter narrows what the reader may see, never widens it */
    see = api_job_see(rq, v);
    if (see == API_SEE_NOTHING)
        return 0;
    if (ff) {
        narrowed(b, first, v, see, bits);
    } else if (see == API_SEE_ALL) {
        item(b, first, v->json, v->len);
    } else { /* the text around the private span */
        item(b, first, v->json, v->priv_off);
        put(b, v->json + v->priv_off + v->priv_len,
            v->len - v->priv_off - v->priv_len);
    }
    return 1;
}

/* names as a JSON array's text, or NULL when out of memory. */
static char *names_json(const struct strv *names)
{
    json_t *a = json_array();
    char *text;

    for (size_t i = 0; a && i < names->n; i++)
        if (json_array_append_new(a, json_string(names->v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    text = a ? json_dumps(a, JSON_COMPACT) : NULL;
    json_decref(a);
    return text;
}

static void ended_filter_fini(struct store_ended_filter *sf)
{
    free(sf->ids);
    free(sf->users);
    free(sf->queues);
    sf->ids = sf->users = sf->queues = NULL;
}

/* Does the list ask for ended jobs (any state, or an ended one among
 * them)? 1 with what narrows them in the database in sf (states: a
 * PostgreSQL array in buf, of 64 bytes; finished with ended_filter_fini),
 * else 0; -1 when out of memory. */
static int ended_filter(const struct http_req *rq, const struct api_job_filter *f,
                        char *buf, struct store_ended_filter *sf)
{
    static const enum job_state ended[] = {JOB_COMPLETED, JOB_FAILED,
                                           JOB_CANCELLED};
    size_t len = 0;

    memset(sf, 0, sizeof(*sf));
    if (f->states) {
        buf[len++] = '{';
        for (size_t i = 0; i < 3; i++)
            if (f->states & (1u << ended[i]))
                len += (size_t)snprintf(buf + len, 64 - len, "%s%s",
                                        len > 1 ? "," : "",
                                        job_state_name(ended[i]));
        if (len == 1)
            return 0;
        snprintf(buf + len, 64 - len, "}");
        sf->states = buf;
    }
    sf->owner = f->owner;
    sf->account = f->account;
    sf->name = f->name;
    sf->cluster = f->cluster;
    if (api_others_see(rq) == API_SEE_NOTHING)
        sf->seen_by = rq->who.subject;
    /* jobs that left memory are neither arrays nor tasks: their ids are
     * the numbers asked for; the table's match decides the rest */
    if (f->n_ids) {
        json_t *ids = json_array();
        for (size_t i = 0; ids && i < f->n_ids; i++)
            json_array_append_new(ids, json_integer(f->ids[i].id));
        sf->ids = ids ? json_dumps(ids, JSON_COMPACT) : NULL;
        json_decref(ids);
    }
    if (f->users.n)
        sf->users = names_json(&f->users);
    if (f->queues.n)
        sf->queues = names_json(&f->queues);
    if ((f->n_ids && !sf->ids) || (f->users.n && !sf->users) ||
        (f->queues.n && !sf->queues)) {
        ended_filter_fini(sf);
        return -1;
    }
    return 1;
}

void api_jobs_get(struct http_req *rq, struct http_resp *rs,
                  const struct api_route_args *a)
{
    const char *al = api_param(a, "limit"), *aa = api_param(a, "after"),
               *ff = api_param(a, "fields");
    int64_t limit = LOOM_LIST_LIMIT_DEFAULT, after = 0, last = 0, n = 0, max;
    struct store_ended_filter sf;
    struct jview **stored = NULL;
    char states[64];
    struct api_job_filter f;
    struct loom_error err;
    struct snapshot *s;
    int rc;
    struct buf b = {0};
    uint64_t bits = 0;
    int first = 1;

    if (a->n == 2) {
        jobs_one(rq, rs, a->seg[1]);
        return;
    }
    /* checked against the route's table */
    if (api_job_filter_init(&f, a, &err) < 0 ||
        (ff && api_fields_parse(ff, &bits, &err) < 0)) {
        api_job_filter_fini(&f);
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
    rc = ended_filter(rq, &f, states, &sf);
    if (rc < 0 || (rc > 0 && !(stored = calloc(STORED_PAGE,
                                               sizeof(*stored))))) {
        ended_filter_fini(&sf);
        free(b.p);
        snapshot_put(s);
        api_job_filter_fini(&f);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    /* ended jobs that left memory come from the database, a page at a
     * time, merged by id with the table's */
    for (int64_t from = after; n < limit && from < max;) {
        int64_t upto = max, pg_last = 0;
        long want = limit - n < STORED_PAGE ? (long)(limit - n) : STORED_PAGE,
             rows = 0;
        size_t n_v = 0, k = 0;
        /* the database only where jobs left memory: a list of the jobs
         * in memory needs none, and works while it is down */
        if (stored && jobtab_count(s->jobs) < (size_t)max &&
            from < jobs_evicted_max() &&
            (rows = api_stored_page(s->jobs, from, want, &sf, stored, &n_v,
                                    &pg_last, &err)) < 0) {
            free(stored);
            ended_filter_fini(&sf);
            free(b.p);
            snapshot_put(s);
            api_job_filter_fini(&f);
            http_error(rs, &err);
            return;
        }
        if (rows == want && pg_last < upto)
            upto = pg_last;
        for (int64_t id = from + 1; id <= upto && n < limit; id++) {
            struct jview *v = jobtab_get(s->jobs, id);
            if (!v && k < n_v && stored[k]->id == id)
                v = stored[k++];
            if (v && list_one(rq, &b, &first, &f, v, ff, bits)) {
                last = id;
                n++;
            }
        }
        for (size_t i = 0; i < n_v; i++)
            jview_unref(stored[i]);
        from = upto;
    }
    free(stored);
    ended_filter_fini(&sf);
    puts_(&b, "]");
    if (n == limit && last < max)
        next_page(&b, a, last, limit);
    puts_(&b, "}");
    snapshot_put(s);
    api_job_filter_fini(&f);
    finish_tagged(&b, rq, rs);
}
