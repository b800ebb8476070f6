/* standby.c - what a loomd that is not the active one answers: redirects
 * to the active one, 503 while there is none, its own health and role. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/api/api.h"
#include "core/leader.h"
#include "core/runtime.h"
#include "core/timeutil.h"

/* What every loomd answers itself: its health, its metrics, the API's
 * description, its runtime (GET), and its own reload and shutdown. */
static int own(const struct http_req *rq)
{
    const char *p = rq->path;

    if (!p)
        return 0;
    if (!strcmp(p, "/healthz") || !strcmp(p, "/metrics") ||
        !strcmp(p, "/openapi.json"))
        return 1;
    if (!strcmp(p, "/v1/runtime"))
        return 1; /* GET; the route table refuses other methods */
    return !strcmp(rq->method, "POST") &&
           (!strcmp(p, "/v1/runtime/reload") ||
            !strcmp(p, "/v1/runtime/shutdown"));
}

int api_not_active(struct http_req *rq, struct http_resp *rs)
{
    const char *role = leader_role_name();
    struct loom_error err;
    char url[512], *loc;
    size_t n;
    json_t *o;
    int known = -1;

    if (!strcmp(role, "active") || own(rq))
        return 0;
    /* A fenced loomd still holds what it last saw: reads come from it. */
    if (leader_threads_up() && !strcmp(rq->method, "GET"))
        return 0;
    if (strcmp(role, "taking-over") != 0 &&
        (known = leader_active_url(url, sizeof(url))) == 0) {
        n = strlen(url) + strlen(rq->target) + 1;
        if ((loc = malloc(n))) {
            snprintf(loc, n, "%s%s", url, rq->target);
            o = json_pack("{s:s, s:s, s:s}", "role", role, "active", url,
                          "message", "this loomd is not the active one: "
                          "the request goes to the active loomd");
            rs->status = 307;
            rs->location = loc;
            rs->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
            json_decref(o);
            return 1;
        }
    }
    if (!strcmp(role, "taking-over"))
        loom_error_set(&err, LOOM_EUNAVAIL, "this loomd is taking over: it "
                       "loads the state; retry in a moment");
    else if (known == 1)
        loom_error_set(&err, LOOM_EUNAVAIL, "this loomd is %s, and the active "
                       "loomd (%s) has given no URL to send the request to "
                       "yet ([loomd] advertise_url); retry in a moment",
                       role, url);
    else if (!strcmp(role, "standby"))
        loom_error_set(&err, LOOM_EUNAVAIL, "this loomd is a standby and no "
                       "active loomd is known to send the request to; "
                       "retry in a moment");
    else
        leader_check("the request", &err);
    err.retry_after = 1;
    http_error(rs, &err);
    return 1;
}

json_t *api_leader_json(void)
{
    json_t *o = leader_status_json();

    return o ? o : json_null();
}

void api_healthz(struct http_resp *rs)
{
    json_t *o = json_pack("{s:s}", "status", "ok"), *leader;

    leader = api_leader_json();
    if (o && json_is_object(leader))
        json_object_update(o, leader);
    json_decref(leader);
    rs->status = 200;
    rs->body = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4))
                 : strdup("{\"status\":\"ok\"}");
    json_decref(o);
}

void api_runtime_standby(struct http_resp *rs)
{
    json_t *o = json_pack("{s:s, s:I, s:o}", "version", PACKAGE_VERSION,
                          "uptime_s", (json_int_t)(time_real() -
                                                   runtime_started_at()),
                          "leader", api_leader_json());

    rs->status = 200;
    rs->body = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(4))
                 : NULL;
    json_decref(o);
}
