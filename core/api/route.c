/* route.c - routing and authentication of the REST API: the route table,
 * with the query parameters each route takes (checked by query.c). */
/* SPDX-License-Identifier: MIT */
#include "core/api/api.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/accounts.h"
#include "core/log.h"

#define MAX_SEGS 8
#define CALL_TIMEOUT_S 30.0
#define ANY_ROLE 0xffffu

struct route {
    const char *method;
    const char *first;   /* first segment after /v1/ */
    int min_n, max_n;    /* segment counts it takes */
    unsigned roles;      /* any of these */
    const struct api_param *params; /* the query parameters it takes */
    void (*fn)(struct http_req *, struct http_resp *,
               const struct api_route_args *);
};

/* The query parameters of each route and what their values may be; the
 * lists filter on the field of the parameter's name. */
static const struct api_param q_none[] = {{NULL, 0}};
static const struct api_param q_nodes[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_NODE_STATE}, {NULL, 0}};
static const struct api_param q_queues[] = {
    {"cluster", API_Q_CLUSTER}, {NULL, 0}};
static const struct api_param q_jobs[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_JOB_STATE},
    {"owner", API_Q_TEXT},      {"account", API_Q_TEXT},
    {"limit", API_Q_LIMIT},     {"after", API_Q_AFTER},
    {NULL, 0}};
static const struct api_param q_resv[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_RESV_STATE},
    {"owner", API_Q_TEXT},      {"purpose", API_Q_PURPOSE},
    {NULL, 0}};
static const struct api_param q_maint[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_MAINT_STATE},
    {"action", API_Q_TEXT},     {"rule", API_Q_TEXT},
    {NULL, 0}};
static const struct api_param q_diff[] = {
    {"cluster", API_Q_CLUSTER}, {"attribute", API_Q_TEXT},
    {"node", API_Q_NODE},       {"action", API_Q_TEXT},
    {NULL, 0}};

#define OPS (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)
#define SUBMITTERS (LOOM_ROLE_ADMIN | LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)
#define RESERVERS (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR | LOOM_ROLE_SCHEDULER)

static const struct route routes[] = {
    {"GET", "clusters", 1, 2, ANY_ROLE, q_none, api_clusters},
    {"GET", "nodes", 1, 1, ANY_ROLE, q_nodes, api_nodes},
    {"GET", "nodes", 2, 3, ANY_ROLE, q_none, api_nodes},
    {"PUT", "nodes", 4, 4, OPS, q_none, api_node_state},
    {"GET", "queues", 1, 1, ANY_ROLE, q_queues, api_queues},
    {"GET", "queues", 2, 3, ANY_ROLE, q_none, api_queues},
    {"GET", "jobs", 1, 1, ANY_ROLE, q_jobs, api_jobs_get},
    {"GET", "jobs", 2, 2, ANY_ROLE, q_none, api_jobs_get},
    {"POST", "jobs", 1, 1, SUBMITTERS, q_none, api_jobs_submit},
    {"DELETE", "jobs", 2, 2, ANY_ROLE, q_none, api_jobs_op},
    {"POST", "jobs", 3, 3, ANY_ROLE, q_none, api_jobs_op},
    {"GET", "reservations", 1, 1, ANY_ROLE, q_resv, api_resv_get},
    {"GET", "reservations", 2, 2, ANY_ROLE, q_none, api_resv_get},
    {"POST", "reservations", 1, 1, RESERVERS, q_none, api_resv_create},
    {"DELETE", "reservations", 2, 2, RESERVERS, q_none, api_resv_cancel},
    {"GET", "maintenance", 1, 1, ANY_ROLE, q_maint, api_maint_get},
    {"GET", "maintenance", 2, 2, ANY_ROLE, q_none, api_maint_get},
    {"POST", "maintenance", 1, 1, OPS, q_none, api_maint_post},
    {"DELETE", "maintenance", 2, 2, OPS, q_none, api_maint_cancel},
    {"GET", "state", 2, 2, ANY_ROLE, q_diff, api_diff},
    {"GET", "goal", 2, 4, ANY_ROLE, q_none, api_goal},
    {"PUT", "goal", 2, 4, LOOM_ROLE_ADMIN, q_none, api_goal},
    {"GET", "actual", 4, 4, ANY_ROLE, q_none, api_actual},
    {"POST", "actual", 4, 4, LOOM_ROLE_ADMIN | LOOM_ROLE_MONITOR, q_none,
     api_actual},
    {"GET", "runtime", 1, 1, ANY_ROLE, q_none, api_runtime_get},
    {"POST", "runtime", 2, 2, LOOM_ROLE_ADMIN, q_none, api_runtime_post},
};

void api_call(struct msgq *q, int type, void *data, void (*data_free)(void *),
              struct http_resp *rs)
{
    struct reply *r = reply_create();
    struct loom_error err;

    if (!r) {
        if (data_free)
            data_free(data);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    msgq_post(q, msg_create(type, data, data_free, r));
    if (reply_wait(r, CALL_TIMEOUT_S) < 0) {
        loom_error_set(&err, LOOM_EUNAVAIL, "no answer within %.0f s; the "
                       "daemon is busy", CALL_TIMEOUT_S);
        http_error(rs, &err);
    } else if (r->status >= 400) {
        http_error(rs, &r->err);
    } else {
        rs->status = r->status;
        rs->body = r->body;
        rs->location = r->location;
        r->body = NULL;
        r->location = NULL;
    }
    reply_unref(r);
}

/* The last token each connection thread verified: a keep-alive client
 * sends the same one with every request, and the key never changes while
 * loomd runs, so only its expiry needs checking again. Its account is
 * looked up again when the accounts file was reloaded, or after
 * ACCOUNT_CACHE_S (an account created or removed meanwhile). */
#define ACCOUNT_CACHE_S 10
#define IAT_SKEW_S 60 /* a token issued this far ahead of our clock is
                         still taken (clocks differ a little) */
static _Thread_local struct {
    char token[1024];
    struct token_claims claims;
    unsigned gen;     /* the accounts map the account came from */
    time_t mapped_at;
    char account[sizeof(((struct http_req *)0)->account)];
    char no_account[sizeof(((struct http_req *)0)->no_account)];
} last;

/* Claims that verify may still be refused: issued in the future, or
 * living longer than the policy allows. */
static int claims_ok(const struct token_claims *c, time_t now,
                     struct loom_error *err)
{
    struct accounts_policy pol = accounts_policy();

    if (c->issued > now + IAT_SKEW_S)
        return loom_error_set(err, LOOM_EAUTH, "the token was issued in the "
                              "future (iat is %lld s ahead of this server's "
                              "clock; at most %d s are allowed)",
                              (long long)(c->issued - now), IAT_SKEW_S);
    if (c->expires - c->issued > pol.max_token_ttl_s)
        return loom_error_set(err, LOOM_EAUTH, "the token's lifetime of "
                              "%lld s (exp - iat) exceeds max_token_ttl_s "
                              "%ld", (long long)(c->expires - c->issued),
                              pol.max_token_ttl_s);
    return 0;
}

/* rq->account from the token's subject (cached per thread). */
static void map_account(struct http_req *rq, time_t now)
{
    unsigned gen = accounts_generation();
    struct loom_error err;

    if (last.gen != gen || now - last.mapped_at >= ACCOUNT_CACHE_S ||
        strcmp(last.claims.subject, rq->who.subject) != 0) {
        last.gen = gen;
        last.mapped_at = now;
        last.account[0] = last.no_account[0] = '\0';
        if (accounts_map("LOOM", rq->who.subject, last.account,
                         sizeof(last.account), &err) < 0)
            snprintf(last.no_account, sizeof(last.no_account), "%s",
                     err.message);
    }
    memcpy(rq->account, last.account, sizeof(rq->account));
    memcpy(rq->no_account, last.no_account, sizeof(rq->no_account));
}

static int authenticate(struct http_req *rq, const unsigned char *key,
                        size_t key_len, struct loom_error *err)
{
    const char *h = http_header(rq, "Authorization");
    time_t now = time(NULL);
    int by_cert = api_cert_auth(rq, h != NULL, err); /* HTTPS */

    if (by_cert) {
        rq->authed = by_cert > 0;
        return by_cert > 0 ? 0 : -1;
    }
    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return loom_error_set(err, LOOM_EAUTH, "a bearer token is required "
                              "(Authorization: Bearer <token>)");
    if (last.token[0] && !strcmp(h + 7, last.token) &&
        now < last.claims.expires) {
        rq->who = last.claims;
    } else {
        if (token_verify(key, key_len, h + 7, now, &rq->who, err) < 0)
            return -1;
        last.token[0] = '\0';
        last.gen = 0; /* map the new subject */
        if (strlen(h + 7) < sizeof(last.token)) {
            snprintf(last.token, sizeof(last.token), "%s", h + 7);
            last.claims = rq->who;
        }
    }
    if (claims_ok(&rq->who, now, err) < 0)
        return -1;
    if (last.token[0])
        map_account(rq, now);
    else if (accounts_map("LOOM", rq->who.subject, rq->account,
                          sizeof(rq->account), err) < 0)
        snprintf(rq->no_account, sizeof(rq->no_account), "%s", err->message);
    /* users and gateways act as their account: without one, nothing */
    if (!rq->account[0] && (rq->who.roles & (LOOM_ROLE_USER |
                                             LOOM_ROLE_GATEWAY)))
        return loom_error_set(err, LOOM_EPERM, "%s", rq->no_account);
    rq->authed = 1;
    return 0;
}

/* Split "/v1/a/b/c" into segments in buf; -1 when not under /v1/. */
static int split(const char *path, char *buf, size_t len, char **seg)
{
    size_t plen = path ? strlen(path) : 0;
    int n = 0;
    char *p;

    if (!path || strncmp(path, "/v1/", 4) != 0 || plen - 4 >= len ||
        path[plen - 1] == '/')
        return -1;
    memcpy(buf, path + 4, strlen(path + 4) + 1);
    for (p = buf; p && *p && n < MAX_SEGS; n++) {
        seg[n] = p;
        p = strchr(p, '/');
        if (p)
            *p++ = '\0';
        if (!*seg[n])
            return -1; /* empty segment: "//" or a trailing "/" */
    }
    return p && *p ? -1 : n;
}

/* /healthz and /metrics: no token, no query parameters. */
static int unversioned(struct http_req *rq, struct http_resp *rs,
                       struct api_route_args *a)
{
    struct loom_error err;
    int health = rq->path && !strcmp(rq->path, "/healthz");

    if (!health && !(rq->path && !strcmp(rq->path, "/metrics") &&
                     !strcmp(rq->method, "GET")))
        return -1;
    if (api_query_check(rq, q_none, a, &err) < 0) {
        http_error(rs, &err);
    } else if (!health) {
        api_metrics(rq, rs, a);
    } else {
        rs->status = 200;
        rs->body = strdup("{\"status\":\"ok\"}");
    }
    return 0;
}

void api_handle(struct http_req *rq, struct http_resp *rs,
                const unsigned char *key, size_t key_len)
{
    struct api_route_args a = {0};
    struct loom_error err;
    char buf[1024], *seg[MAX_SEGS];
    int method_seen = 0, plen;

    if (unversioned(rq, rs, &a) == 0)
        return;
    a.seg = seg;
    a.n = split(rq->path, buf, sizeof(buf), seg);
    for (size_t i = 0; a.n > 0 && i < sizeof(routes) / sizeof(*routes); i++) {
        const struct route *r = &routes[i];
        if (strcmp(r->first, seg[0]) != 0 || a.n < r->min_n || a.n > r->max_n)
            continue;
        method_seen = 1;
        if (strcmp(r->method, rq->method) != 0)
            continue;
        if (authenticate(rq, key, key_len, &err) < 0)
            goto error;
        if (!(rq->who.roles & r->roles)) {
            loom_error_set(&err, LOOM_EPERM, "%s may not %s %s: a role it "
                           "lacks is needed", rq->who.subject, rq->method,
                           rq->path);
            goto error;
        }
        if (api_query_check(rq, r->params, &a, &err) < 0)
            goto error;
        r->fn(rq, rs, &a);
        return;
    }
    plen = (int)strcspn(rq->target, "?");
    if (method_seen)
        loom_error_set(&err, LOOM_EINVAL, "%s is not allowed on %s",
                       rq->method, rq->path);
    else /* as sent: a path that names nothing is not decoded */
        loom_error_set(&err, LOOM_ENOENT, "no such resource: %.*s",
                       plen < 400 ? plen : 400, rq->target);
error:
    http_error(rs, &err);
}
