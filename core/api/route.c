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
#include "core/metrics.h"
#include "core/timeutil.h"
#include "grid/grid.h"

#define MAX_SEGS 8
#define CALL_TIMEOUT_S 30.0

/* The query parameters of each route and what their values may be; the
 * lists filter on the field of the parameter's name. */
static const struct api_param q_none[] = {{NULL, 0}};
static const struct api_param q_nodes[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_NODE_STATE}, {NULL, 0}};
static const struct api_param q_queues[] = {
    {"cluster", API_Q_CLUSTER}, {"view", API_Q_QUEUE_VIEW}, {NULL, 0}};
static const struct api_param q_jobs[] = {
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_JOB_STATES},
    {"owner", API_Q_TEXT},      {"account", API_Q_TEXT},
    {"name", API_Q_TEXT},       {"nodelist", API_Q_NODELIST},
    {"limit", API_Q_LIMIT},     {"after", API_Q_AFTER},
    {"fields", API_Q_JOB_FIELDS}, {"id", API_Q_JOB_IDS},
    {"queue", API_Q_NAMES},       {"user", API_Q_NAMES},
    {NULL, 0}};
static const struct api_param q_accounting[] = {
    {"start", API_Q_TIME},      {"end", API_Q_TIME},
    {"account", API_Q_TEXT},    {"owner", API_Q_TEXT},
    {"cluster", API_Q_CLUSTER}, {"state", API_Q_JOB_STATE},
    {"limit", API_Q_LIMIT},     {"after", API_Q_AFTER},
    {NULL, 0}};
static const struct api_param q_usage[] = {
    {"start", API_Q_TIME},      {"end", API_Q_TIME},
    {"account", API_Q_TEXT},    {"cluster", API_Q_CLUSTER},
    {NULL, 0}};
static const struct api_param q_output[] = {
    {"stream", API_Q_STREAM}, {"offset", API_Q_OFFSET}, {NULL, 0}};
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

static void healthz(struct http_req *rq, struct http_resp *rs,
                    const struct api_route_args *a)
{
    (void)rq;
    (void)a;
    api_healthz(rs);
}

#define ANY API_ROLES_ANY
#define OPS (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR)
#define SUBMITTERS (LOOM_ROLE_ADMIN | LOOM_ROLE_USER | LOOM_ROLE_GATEWAY)
#define RESERVERS (LOOM_ROLE_ADMIN | LOOM_ROLE_OPERATOR | LOOM_ROLE_SCHEDULER)
#define ADMIN LOOM_ROLE_ADMIN
#define MONITORS (LOOM_ROLE_ADMIN | LOOM_ROLE_MONITOR)

/* The API: what docs/openapi.json describes, route for route (the unit
 * test api_openapi holds the two together). */
static const struct api_route routes[] = {
    {NULL, "/healthz", API_ROLES_NONE, q_none, healthz},
    {NULL, "/", API_ROLES_NONE, q_none, api_web},
    {NULL, "/ui/{name}", API_ROLES_NONE, q_none, api_web},
    {"GET", "/metrics", API_ROLES_NONE, q_none, api_metrics},
    {"GET", "/openapi.json", API_ROLES_NONE, q_none, api_openapi},
    {"GET", "/v1/clusters", ANY, q_none, api_clusters},
    {"GET", "/v1/clusters/{name}", ANY, q_none, api_clusters},
    {"GET", "/v1/nodes", ANY, q_nodes, api_nodes},
    {"GET", "/v1/nodes/{cluster}/{name}", ANY, q_none, api_nodes},
    {"PUT", "/v1/nodes/{cluster}/{name}/state", OPS, q_none, api_node_state},
    {"GET", "/v1/queues", ANY, q_queues, api_queues},
    {"GET", "/v1/queues/{cluster}", ANY, q_none, api_queues},
    {"GET", "/v1/queues/{cluster}/{name}", ANY, q_none, api_queues},
    {"GET", "/v1/jobs", ANY, q_jobs, api_jobs_get},
    {"POST", "/v1/jobs", SUBMITTERS, q_none, api_jobs_submit},
    {"GET", "/v1/jobs/{id}", ANY, q_none, api_jobs_get},
    {"DELETE", "/v1/jobs/{id}", ANY, q_none, api_jobs_op},
    {"PATCH", "/v1/jobs/{id}", ANY, q_none, api_jobs_patch},
    {"GET", "/v1/jobs/{id}/output", ANY, q_output, api_jobs_output},
    {"POST", "/v1/jobs/{id}/suspend", ANY, q_none, api_jobs_op},
    {"POST", "/v1/jobs/{id}/resume", ANY, q_none, api_jobs_op},
    {"POST", "/v1/jobs/{id}/hold", ANY, q_none, api_jobs_op},
    {"POST", "/v1/jobs/{id}/release", ANY, q_none, api_jobs_op},
    {"POST", "/v1/jobs/{id}/start", ANY, q_none, api_jobs_op},
    {"GET", "/v1/accounting", ANY, q_accounting, api_accounting},
    {"GET", "/v1/usage", ANY, q_usage, api_usage},
    {"GET", "/v1/reservations", ANY, q_resv, api_resv_get},
    {"POST", "/v1/reservations", RESERVERS, q_none, api_resv_create},
    {"GET", "/v1/reservations/{id}", ANY, q_none, api_resv_get},
    {"DELETE", "/v1/reservations/{id}", RESERVERS, q_none, api_resv_cancel},
    {"GET", "/v1/maintenance", ANY, q_maint, api_maint_get},
    {"POST", "/v1/maintenance", OPS, q_none, api_maint_post},
    {"GET", "/v1/maintenance/{id}", ANY, q_none, api_maint_get},
    {"DELETE", "/v1/maintenance/{id}", OPS, q_none, api_maint_cancel},
    {"GET", "/v1/state/diff", ANY, q_diff, api_diff},
    {"GET", "/v1/goal/nodes", ANY, q_none, api_goal},
    {"PUT", "/v1/goal/nodes", ADMIN, q_none, api_goal},
    {"GET", "/v1/goal/nodes/{cluster}/{name}", ANY, q_none, api_goal},
    {"PUT", "/v1/goal/nodes/{cluster}/{name}", ADMIN, q_none, api_goal},
    {"GET", "/v1/actual/nodes/{cluster}/{name}", ANY, q_none, api_actual},
    {"POST", "/v1/actual/nodes/{cluster}/{name}", MONITORS, q_none,
     api_actual},
    {"GET", "/v1/events", ANY, q_none, api_events},
    {"GET", "/v1/runtime", ANY, q_none, api_runtime_get},
    {"POST", "/v1/runtime/reload", ADMIN, q_none, api_runtime_post},
    {"POST", "/v1/runtime/scheduler", ADMIN, q_none, api_runtime_post},
    {"POST", "/v1/runtime/shutdown", ADMIN, q_none, api_runtime_post},
};

const struct api_route *api_routes(size_t *n)
{
    *n = sizeof(routes) / sizeof(*routes);
    return routes;
}

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
 * ACCOUNT_CACHE_S (an account created or removed meanwhile). A grid
 * token's verification is cached by grid/ itself; its mapping is kept here
 * the same way, for the verified identity last seen. */
#define ACCOUNT_CACHE_S 10
static _Thread_local struct {
    char token[1024]; /* a Loom token, and its claims */
    struct token_claims claims;
    /* the last mapping: of subject (a Loom token's, or a grid token's
     * ISSUER,SUBJECT with its groups, one a line) */
    char subject[LOOM_IDENTITY_MAX + 1];
    char groups[4200];
    unsigned gen;     /* the accounts map the account came from */
    time_t mapped_at;
    int mapped;       /* map holds an answer */
    struct accounts_map map;
    char no_account[sizeof(((struct http_req *)0)->no_account)];
} last;

/* Claims that verify may still be refused: issued in the future, or
 * living longer than the policy allows. */
static int claims_ok(const struct token_claims *c, time_t now,
                     struct loom_error *err)
{
    struct accounts_policy pol = accounts_policy();

    if (c->issued > now + LOOM_TOKEN_SKEW_S)
        return loom_error_set(err, LOOM_EAUTH, "the token was issued in the "
                              "future (iat is %lld s ahead of this server's "
                              "clock; at most %d s are allowed)",
                              (long long)(c->issued - now), LOOM_TOKEN_SKEW_S);
    if (c->expires - c->issued > pol.max_token_ttl_s)
        return loom_error_set(err, LOOM_EAUTH, "the token's lifetime of "
                              "%lld s (exp - iat) exceeds max_token_ttl_s "
                              "%ld", (long long)(c->expires - c->issued),
                              pol.max_token_ttl_s);
    return 0;
}

/* rq->account (and rq->map) from who the request is, cached per thread:
 * the same subject, grid identity or certificate DN (by_cert), the same
 * accounts file, recently. */
static void map_account(struct http_req *rq, int by_cert, time_t now)
{
    unsigned gen = accounts_generation();
    struct accounts_who who = {0};
    struct loom_error err;
    char groups[sizeof(last.groups)] = "";
    size_t o = 0;

    /* never the same key as a Loom subject's */
    if (by_cert)
        snprintf(groups, sizeof(groups), "dn\n");
    else if (rq->grid)
        o = (size_t)snprintf(groups, sizeof(groups), "grid\n");
    for (size_t i = 0; rq->grid && i < rq->grid->n_groups; i++)
        o += (size_t)snprintf(groups + o, o < sizeof(groups)
                                              ? sizeof(groups) - o : 0,
                              "%s\n", rq->grid->groups[i]);
    if (!last.mapped || last.gen != gen ||
        now - last.mapped_at >= ACCOUNT_CACHE_S ||
        strcmp(last.subject, rq->who.subject) != 0 ||
        strcmp(last.groups, groups) != 0) {
        snprintf(last.subject, sizeof(last.subject), "%s", rq->who.subject);
        memcpy(last.groups, groups, sizeof(groups));
        last.gen = gen;
        last.mapped_at = now;
        last.mapped = 1;
        last.no_account[0] = '\0';
        if (by_cert) {
            who.method = "DN";
            who.identity = rq->who.subject;
        } else if (rq->grid) {
            who.iss = rq->grid->iss;
            who.sub = rq->grid->sub;
            who.groups = rq->grid->groups;
            who.n_groups = rq->grid->n_groups;
        } else {
            who.subject = rq->who.subject;
        }
        if (accounts_map_who(&who, &last.map, &err) < 0) {
            memset(&last.map, 0, sizeof(last.map));
            snprintf(last.no_account, sizeof(last.no_account), "%s",
                     err.message);
        } else if (!last.map.account[0]) {
            snprintf(last.no_account, sizeof(last.no_account), "identity "
                     "'%.300s' has an account only on %zu cluster%s (cluster= "
                     "lines of the accounts file): name one in "
                     "request.cluster", rq->who.subject,
                     last.map.n_clusters,
                     last.map.n_clusters == 1 ? "" : "s");
        }
    }
    memcpy(rq->account, last.map.account, sizeof(rq->account));
    memcpy(rq->no_account, last.no_account, sizeof(rq->no_account));
    rq->map = last.no_account[0] && !last.map.n_clusters ? NULL : &last.map;
}

const char *api_vo(const struct http_req *rq)
{
    if (rq->map && rq->map->group[0])
        return rq->map->group; /* the group whose line mapped */
    if (rq->grid && rq->grid->n_groups)
        return rq->grid->groups[0];
    return NULL;
}

void api_audit_denial(const struct http_req *rq,
                      const struct grid_claimed *claimed,
                      const struct loom_error *err)
{
    struct grid_audit a = {0};
    char claimed_id[LOOM_GRID_IDENTITY_MAX + 1];
    int gateway = !rq->grid && !claimed &&
                  (rq->who.roles & LOOM_ROLE_GATEWAY);

    if (!rq->grid && !claimed && !gateway)
        return; /* not a grid request */
    a.kind = "denied";
    a.verified = rq->grid != NULL;
    if (rq->grid) {
        a.identity = rq->grid->identity;
        a.iss = rq->grid->iss;
        a.sub = rq->grid->sub;
    } else if (claimed) {
        snprintf(claimed_id, sizeof(claimed_id), "%s,%s", claimed->iss,
                 claimed->sub);
        a.identity = claimed_id;
        a.iss = claimed->iss;
        a.sub = claimed->sub;
    } else {
        a.identity = rq->who.subject;
        a.gateway = rq->who.subject;
    }
    a.vo = api_vo(rq);
    a.account = rq->account;
    a.status = loom_error_status(err->kind);
    a.reason = err->message;
    a.method = rq->method;
    a.path = rq->path ? rq->path : rq->target;
    grid_audit(&a);
}

/* A token of an outside issuer: verified (grid/), then it acts as a
 * gateway of identity ISSUER,SUBJECT, limited by its scopes. */
static int auth_grid(struct http_req *rq, const char *tok, time_t now,
                     struct loom_error *err)
{
    struct grid_claimed claimed;
    struct grid_who *w;

    if (grid_verify(tok, now, &w, &claimed, err) < 0) {
        if (!grid_enabled())
            loom_error_set(err, LOOM_EAUTH, "token refused: this Loom takes "
                           "no tokens of outside issuers (loom.conf has no "
                           "[issuer])");
        api_audit_denial(rq, &claimed, err);
        return -1;
    }
    rq->grid = w; /* released when the request is answered */
    snprintf(rq->who.subject, sizeof(rq->who.subject), "%s", w->identity);
    rq->who.roles = LOOM_ROLE_GATEWAY;
    rq->who.issued = w->iat;
    rq->who.expires = w->exp;
    return 0;
}

/* Why a token was refused, for loom_auth_denials_total: a word from the
 * start of the message of token_verify, grid_verify or claims_ok. */
static const char *reason_of(const struct loom_error *err)
{
    static const struct {
        const char *prefix, *reason;
    } reasons[] = {
        {"malformed token", "malformed"},
        {"bad token signature", "signature"},
        {"token expired", "expired"},
        {"token not valid yet", "not_yet_valid"},
        {"the token was issued in the future", "issued_in_future"},
        {"the token's lifetime", "lifetime"},
        {"token refused: unknown issuer", "unknown_issuer"},
        {"token refused: this Loom takes no tokens", "no_issuers"},
    };

    for (size_t i = 0; i < sizeof(reasons) / sizeof(*reasons); i++)
        if (!strncmp(err->message, reasons[i].prefix,
                     strlen(reasons[i].prefix)))
            return reasons[i].reason;
    return "invalid";
}

/* The kind of credential of an authenticated request: a certificate is
 * the identity only of a request without a token (api_cert_auth). */
static const char *kind_of(const struct http_req *rq)
{
    if (rq->grid)
        return "issuer";
    if (rq->peer && !http_header(rq, "Authorization"))
        return "peer";
    return rq->cert_dn && !http_header(rq, "Authorization") ? "certificate"
                                                             : "loom";
}

static void count_denial(const char *kind, const char *reason)
{
    const char *v[2] = {kind, reason};

    metrics_add(METRICS_AUTH_DENIALS, v, 1);
}

/* An authenticated request refused (403): counted and audited. */
static void denied(const struct http_req *rq, const char *reason,
                   const struct loom_error *err)
{
    count_denial(kind_of(rq), reason);
    api_audit_denial(rq, NULL, err);
}

/* One credential checked: ok, or refused with err. Returns -1 when
 * refused. */
static int verified(const char *kind, int ok, const struct loom_error *err)
{
    const char *v[2] = {kind, ok ? "ok" : "denied"};

    metrics_add(METRICS_AUTH_VERIFICATIONS, v, 1);
    if (!ok)
        count_denial(kind, reason_of(err));
    return ok ? 0 : -1;
}

/* The bearer token h (the Authorization header, or NULL) into rq->who: a
 * JWT of an outside issuer, or a Loom token. 0, or -1 with a 401. */
static int auth_token(struct http_req *rq, const char *h,
                      const unsigned char *key, size_t key_len, time_t now,
                      struct loom_error *err)
{
    int ok;

    if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
        count_denial("none", "missing");
        return loom_error_set(err, LOOM_EAUTH, "a bearer token is required "
                              "(Authorization: Bearer <token>)");
    }
    if (grid_token_is_jwt(h + 7)) {
        if (verified("issuer", auth_grid(rq, h + 7, now, err) == 0,
                     err) < 0)
            return -1;
    } else if (last.token[0] && !strcmp(h + 7, last.token) &&
               now < last.claims.expires) {
        rq->who = last.claims;
    } else {
        ok = token_verify(key, key_len, h + 7, now, &rq->who, err) == 0;
        if (!ok)
            return verified("loom", 0, err);
        last.token[0] = '\0';
        if (strlen(h + 7) < sizeof(last.token)) {
            snprintf(last.token, sizeof(last.token), "%s", h + 7);
            last.claims = rq->who;
        }
    }
    if (claims_ok(&rq->who, now, err) < 0) {
        verified(kind_of(rq), 0, err);
        api_audit_denial(rq, NULL, err);
        return -1;
    }
    verified(kind_of(rq), 1, NULL);
    return 0;
}

/* Who the request is, in the order of api.h: its client certificate
 * checked, then a token (which wins), else the certificate's DN. A
 * certificate presented is counted as checked, ok or not. */
static int authenticate(struct http_req *rq, const unsigned char *key,
                        size_t key_len, struct loom_error *err)
{
    const char *h = http_header(rq, "Authorization");
    time_t now = time(NULL);
    int presented = rq->cert_dn || rq->cert_error;
    int by_cert = api_cert_auth(rq, h != NULL, err), by_peer = 0;

    if (presented)
        verified("certificate", !rq->cert_error, err);
    if (by_cert < 0) {
        if (!rq->cert_error) /* none where one is needed, or a DN too long */
            count_denial(presented ? "certificate" : "none",
                         presented ? "invalid" : "missing");
        return -1;
    }
    if (!by_cert && (by_peer = api_peer_auth(rq, h != NULL, err)) < 0) {
        /* root without listen_peer_root_role lacks a role; another uid
         * cannot be told */
        count_denial("peer", rq->peer_known && rq->peer_uid == 0
                                 ? "role" : "unknown_uid");
        return -1;
    }
    if (by_peer)
        verified("peer", 1, NULL);
    else if (!by_cert && auth_token(rq, h, key, key_len, now, err) < 0)
        return -1;
    map_account(rq, by_cert, now);
    /* users and gateways act as their account: without one, nothing */
    if (!rq->map && (rq->who.roles & (LOOM_ROLE_USER | LOOM_ROLE_GATEWAY))) {
        loom_error_set(err, LOOM_EPERM, "%s", rq->no_account);
        denied(rq, "no_account", err);
        return -1;
    }
    rq->authed = 1;
    return 0;
}

/* A grid token does what its scopes grant: 0, or -1 with a 403 naming the
 * scope it lacks. */
static int scope_ok(const struct http_req *rq, const struct api_route_args *a,
                    struct loom_error *err)
{
    unsigned need = grid_scope_needed(rq->method, a->seg[0], a->n,
                                      a->n == 3 ? a->seg[2] : NULL);

    if (!need)
        return loom_error_set(err, LOOM_EPERM, "a grid token may not %s %s: "
                              "no compute scope grants it", rq->method,
                              rq->path);
    if (!(rq->grid->scopes & need))
        return loom_error_set(err, LOOM_EPERM, "the token lacks the scope "
                              "%s, which %s %s needs", grid_scope_name(need),
                              rq->method, rq->path);
    return 0;
}

/* Split "/a/b/c" into segments in buf: their number, or -1 when the path
 * names nothing (no path, not from "/", an empty segment, too many). "/"
 * itself has none. */
static int split(const char *path, char *buf, size_t len, char **seg)
{
    size_t plen = path ? strlen(path) : 0;
    int n = 0;
    char *p;

    if (!path || path[0] != '/' || plen >= len)
        return -1;
    memcpy(buf, path + 1, plen);
    for (p = buf; p && *p && n < MAX_SEGS; n++) {
        seg[n] = p;
        p = strchr(p, '/');
        if (p)
            *p++ = '\0';
        if (!*seg[n] || (p && !*p))
            return -1; /* an empty segment: "//" or a trailing "/" */
    }
    return p && *p ? -1 : n;
}

/* Does pattern ("/v1/jobs/{id}") take the n segments seg? */
static int matches(const char *pattern, char *const *seg, int n)
{
    const char *p = pattern + 1;
    int i = 0;

    for (; *p && i < n; i++) {
        size_t len = strcspn(p, "/");
        if (*p != '{' && (strlen(seg[i]) != len || strncmp(p, seg[i], len)))
            return 0;
        p += len;
        if (*p == '/')
            p++;
    }
    return !*p && i == n;
}

/* Answer rq; returns the route that took it, or NULL for none. */
static const struct api_route *handle(struct http_req *rq,
                                      struct http_resp *rs,
                                      const unsigned char *key,
                                      size_t key_len)
{
    struct api_route_args a = {0};
    struct loom_error err;
    char buf[1024], *seg[MAX_SEGS];
    int method_seen = 0, plen, n = split(rq->path, buf, sizeof(buf), seg);
    int v1 = n > 0 && !strcmp(seg[0], "v1");

    /* handlers see the segments after "/v1/" */
    a.seg = v1 ? seg + 1 : seg;
    a.n = v1 ? n - 1 : n;
    for (size_t i = 0; n >= 0 && i < sizeof(routes) / sizeof(*routes); i++) {
        const struct api_route *r = &routes[i];
        if (!matches(r->pattern, seg, n))
            continue;
        method_seen = 1;
        if (r->method && strcmp(r->method, rq->method) != 0)
            continue;
        if (api_not_active(rq, rs))
            return r;
        if (r->roles != API_ROLES_NONE) {
            if (authenticate(rq, key, key_len, &err) < 0)
                goto error;
            if (!(rq->who.roles & r->roles)) {
                loom_error_set(&err, LOOM_EPERM, "%s may not %s %s: a role "
                               "it lacks is needed", rq->who.subject,
                               rq->method, rq->path);
                denied(rq, "role", &err);
                goto error;
            }
            if (rq->grid && scope_ok(rq, &a, &err) < 0) {
                denied(rq, "scope", &err);
                goto error;
            }
        }
        if (api_query_check(rq, r->params, &a, &err) < 0)
            goto error;
        r->fn(rq, rs, &a);
        return r;
    error:
        http_error(rs, &err);
        return r;
    }
    if (api_not_active(rq, rs))
        return NULL;
    plen = (int)strcspn(rq->target, "?");
    if (method_seen)
        loom_error_set(&err, LOOM_EINVAL, "%s is not allowed on %s",
                       rq->method, rq->path);
    else /* as sent: a path that names nothing is not decoded */
        loom_error_set(&err, LOOM_ENOENT, "no such resource: %.*s",
                       plen < 400 ? plen : 400, rq->target);
    http_error(rs, &err);
    return NULL;
}

void api_handle(struct http_req *rq, struct http_resp *rs,
                const unsigned char *key, size_t key_len)
{
    static const char *const classes[] = {"1xx", "2xx", "3xx", "4xx",
                                          "5xx"};
    double t0 = time_mono();
    const struct api_route *r = handle(rq, rs, key, key_len);
    double took = time_mono() - t0;
    int c = rs->status / 100;
    const char *v[3] = {rq->method, r ? r->pattern : "unmatched",
                        c >= 1 && c <= 5 ? classes[c - 1] : "other"};

    metrics_observe(METRICS_HTTP_SECONDS, v, took);
    log_debug("%s %s: %d in %.3f ms", rq->method, v[1], rs->status,
              took * 1000);
    grid_who_unref(rq->grid);
    rq->grid = NULL;
}
