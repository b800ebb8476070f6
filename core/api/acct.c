/* acct.c - the jobs' history and their use: GET /v1/accounting and
 * GET /v1/usage, read from PostgreSQL. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/hostlist.h"
#include "core/limits.h"
#include "core/log.h"
#include "core/store_acct.h"
#include "core/strv.h"
#include "core/timeutil.h"

#define DAY_S 86400

/* The connection the handlers read through: one, opened at the first
 * request, taken by one request at a time. */
static struct {
    pthread_mutex_t lock;
    char *conninfo;
    struct store *st;
} R = {PTHREAD_MUTEX_INITIALIZER, NULL, NULL};

int api_acct_init(const char *conninfo, struct loom_error *err)
{
    if (!(R.conninfo = strdup(conninfo ? conninfo : "")))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

void api_acct_fini(void)
{
    pthread_mutex_lock(&R.lock);
    store_close(R.st);
    R.st = NULL;
    free(R.conninfo);
    R.conninfo = NULL;
    pthread_mutex_unlock(&R.lock);
}

struct store *api_reader_get(struct loom_error *err)
{
    pthread_mutex_lock(&R.lock);
    if (!R.st && R.conninfo)
        R.st = store_open(R.conninfo, err);
    else if (!R.conninfo)
        loom_error_set(err, LOOM_EUNAVAIL, "the history is not open");
    if (!R.st)
        pthread_mutex_unlock(&R.lock);
    return R.st;
}

void api_reader_put(void)
{
    pthread_mutex_unlock(&R.lock);
}

/* The window and filters of the query into f (times into start and end,
 * as the store compares them): end defaults to now, start to a day
 * before end. -1 with a 400 when the window is empty. */
static int window(const struct api_route_args *a, struct http_req *rq,
                  struct store_acct_filter *f, char start[32], char end[32],
                  struct loom_error *err)
{
    const char *s = api_param(a, "start"), *e = api_param(a, "end");
    time_t ts, te = time(NULL);

    /* checked against the route's table: each parses */
    if (e)
        time_parse_when(e, &te);
    ts = te - DAY_S;
    if (s)
        time_parse_when(s, &ts);
    if (te <= ts)
        return loom_error_field(err, LOOM_EINVAL, e ? "end" : "start",
                                "query parameter end (%s) must come after "
                                "start (%s)", e ? e : "now, when not given",
                                s ? s : "a day before end");
    time_format(ts ? ts : 1, start); /* 0 formats as "" */
    time_format(te, end);
    memset(f, 0, sizeof(*f));
    f->start = start;
    f->end = end;
    f->owner = api_param(a, "owner");
    f->account = api_param(a, "account");
    f->cluster = api_param(a, "cluster");
    f->state = api_param(a, "state");
    /* a filter narrows what the reader may see, never widens it */
    if (api_others_see(rq) == API_SEE_NOTHING)
        f->viewer = rq->who.subject;
    return 0;
}

static void answer(struct http_resp *rs, json_t *o, struct loom_error *err)
{
    char *body = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10))
                   : NULL;

    json_decref(o);
    if (!body) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, err);
        return;
    }
    rs->status = 200;
    rs->body = body;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The nodes of a row (a JSON array) as a hostlist, or null. */
static json_t *nodelist(const char *nodes)
{
    json_t *arr = nodes ? json_loads(nodes, 0, NULL) : NULL, *v, *out;
    struct strv names = {0};
    char *text;
    size_t i;

    json_array_foreach(arr, i, v)
        if (json_is_string(v))
            strv_push(&names, json_string_value(v));
    json_decref(arr);
    if (!names.n)
        return json_null();
    text = hostlist_compress(names.v, names.n);
    strv_fini(&names);
    out = text ? json_string(text) : NULL;
    free(text);
    return out;
}

struct list {
    json_t *items;
    int64_t limit, last, n; /* last: the record of the last item */
    int more, oom;          /* more: a row beyond limit came */
};

static int list_row(void *arg, const struct store_acct_row *r)
{
    struct list *l = arg;
    json_t *o;

    if (l->n == l->limit) {
        l->more = 1;
        return 0;
    }
    o = json_object();
    if (!o || json_array_append_new(l->items, o) < 0) {
        l->oom = 1;
        return 1;
    }
    json_object_set_new(o, "id", str_or_null(r->id));
    json_object_set_new(o, "name", str_or_null(r->name));
    json_object_set_new(o, "owner", str_or_null(r->owner));
    json_object_set_new(o, "account", str_or_null(r->account));
    json_object_set_new(o, "cluster", str_or_null(r->cluster));
    json_object_set_new(o, "state", str_or_null(r->state));
    json_object_set_new(o, "reason", str_or_null(r->reason));
    json_object_set_new(o, "submit_time", str_or_null(r->submit_time));
    json_object_set_new(o, "start_time", str_or_null(r->start_time));
    json_object_set_new(o, "end_time", str_or_null(r->end_time));
    json_object_set_new(o, "elapsed_s", json_integer(r->elapsed_s));
    json_object_set_new(o, "exit_code",
                        r->exit_code
                            ? json_integer(strtoll(r->exit_code, NULL, 10))
                            : json_null());
    json_object_set_new(o, "cpus", json_integer(r->cpus));
    json_object_set_new(o, "cpu_seconds",
                        json_integer(r->cpus * r->elapsed_s));
    json_object_set_new(o, "nodelist", nodelist(r->nodes));
    l->last = r->record;
    l->n++;
    return 0;
}

/* The link to the page after the last item: the same filters, and the
 * window as this page resolved it (a default end would move). */
static json_t *next_link(const struct api_route_args *a,
                         const struct list *l,
                         const struct store_acct_filter *f)
{
    static const char *const keep[] = {"account", "owner", "cluster",
                                       "state", NULL};
    char next[1024];

    snprintf(next, sizeof(next), "/v1/accounting?after=%lld&limit=%lld",
             (long long)l->last, (long long)l->limit);
    api_query_append(next, sizeof(next), "start", f->start);
    api_query_append(next, sizeof(next), "end", f->end);
    for (size_t i = 0; keep[i]; i++)
        api_query_append(next, sizeof(next), keep[i], api_param(a, keep[i]));
    return json_string(next);
}

/* GET /v1/accounting */
void api_accounting(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a)
{
    const char *al = api_param(a, "limit"), *aa = api_param(a, "after");
    struct store_acct_filter f;
    struct list l = {json_array(), LOOM_LIST_LIMIT_DEFAULT, 0, 0, 0, 0};
    struct loom_error err;
    struct store *st;
    char start[32], end[32];
    json_t *o;
    int rc;

    if (window(a, rq, &f, start, end, &err) < 0)
        goto error;
    /* checked against the route's table: a limit, a record id or 0 */
    if (al)
        domain_id_parse(al, &l.limit);
    if (aa && strcmp(aa, "0") != 0)
        domain_id_parse(aa, &f.after);
    f.limit = l.limit + 1; /* one more says whether a next page follows */
    if (!l.items) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (!(st = api_reader_get(&err)))
        goto error;
    rc = store_acct_list(st, &f, list_row, &l, &err);
    api_reader_put();
    if (l.oom)
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    if (rc < 0 || l.oom)
        goto error;
    o = json_pack("{s:o, s:s, s:s, s:o}", "items", l.items, "start", start,
                  "end", end, "next",
                  l.more ? next_link(a, &l, &f) : json_null());
    answer(rs, o, &err);
    return;
error:
    json_decref(l.items);
    http_error(rs, &err);
}

struct usage {
    json_t *items, *cur; /* cur: the account's item that owners go to */
    int oom;
};

static int usage_row(void *arg, const struct store_usage_row *r)
{
    struct usage *u = arg;
    json_t *o = json_pack("{s:I, s:f, s:f}", "jobs", (json_int_t)r->jobs,
                          "cpu_seconds", r->cpu_seconds, "cpu_hours",
                          r->cpu_seconds / 3600.0);

    if (!o)
        goto oom;
    if (!r->owner) {
        if (json_object_set_new(o, "cluster", str_or_null(r->cluster)) < 0 ||
            json_object_set_new(o, "account", str_or_null(r->account)) < 0 ||
            json_object_set_new(o, "users", json_array()) < 0 ||
            json_array_append_new(u->items, o) < 0)
            goto oom;
        u->cur = json_object_get(o, "users");
        return 0;
    }
    if (!u->cur || json_object_set_new(o, "owner", json_string(r->owner)) < 0 ||
        json_array_append_new(u->cur, o) < 0)
        goto oom;
    return 0;
oom:
    u->oom = 1;
    return 1;
}

/* GET /v1/usage */
void api_usage(struct http_req *rq, struct http_resp *rs,
               const struct api_route_args *a)
{
    struct store_acct_filter f;
    struct usage u = {json_array(), NULL, 0};
    struct loom_error err;
    struct store *st;
    char start[32], end[32];
    int rc;

    if (window(a, rq, &f, start, end, &err) < 0)
        goto error;
    if (!u.items) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (!(st = api_reader_get(&err)))
        goto error;
    rc = store_acct_usage(st, &f, usage_row, &u, &err);
    api_reader_put();
    if (u.oom)
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    if (rc < 0 || u.oom)
        goto error;
    answer(rs, json_pack("{s:o, s:s, s:s}", "items", u.items, "start",
                         start, "end", end), &err);
    return;
error:
    json_decref(u.items);
    http_error(rs, &err);
}
