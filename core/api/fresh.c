/* fresh.c - uncached reads: a cluster asked now, the time split told in
 * Server-Timing. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "adaptors/server.h"
#include "core/api/api.h"

/* Cache-Control: no-cache among the request's directives (a comma list,
 * any case, spaces around). Other directives mean nothing to a read
 * that is never cached, and are left alone as HTTP wants. */
static int no_cache(const struct http_req *rq)
{
    const char *v = http_header(rq, "Cache-Control");

    while (v && *v) {
        size_t n;
        v += strspn(v, " \t,");
        n = strcspn(v, " \t,=");
        if (n == 8 && !strncasecmp(v, "no-cache", 8))
            return 1;
        v += strcspn(v, ",");
    }
    return 0;
}

/* The Server-Timing value: written here, sent by http.c on this thread
 * right after the handler returns. */
static _Thread_local char timing[96];

int api_fresh_nodes(struct http_req *rq, struct http_resp *rs,
                    const char *cluster)
{
    struct loom_error err;
    json_t *t;
    double all, cms, own;

    if (!no_cache(rq))
        return 1;
    if (!cluster) {
        loom_error_field(&err, LOOM_EINVAL, "Cache-Control", "Cache-Control: "
                         "no-cache asks one cluster for its nodes: give "
                         "?cluster=NAME (or GET /v1/nodes/{cluster}/{name})");
        http_error(rs, &err);
        return -1;
    }
    api_call(server_queue(), SERVER_REFRESH_NODES, strdup(cluster), free, rs);
    if (rs->status >= 400)
        return -1;
    t = rs->body ? json_loads(rs->body, 0, NULL) : NULL;
    free(rs->body);
    free(rs->location);
    rs->body = rs->location = NULL;
    rs->status = 0;
    all = json_real_value(json_object_get(t, "seconds"));
    cms = json_real_value(json_object_get(t, "cms_s"));
    own = json_real_value(json_object_get(t, "loom_s"));
    if (json_object_get(t, "cms_s"))
        snprintf(timing, sizeof(timing), "cms;dur=%.3f, loom;dur=%.3f",
                 cms * 1000, own * 1000);
    else
        snprintf(timing, sizeof(timing), "adaptor;dur=%.3f", all * 1000);
    json_decref(t);
    http_header_add(rs, "Server-Timing", timing);
    return 0;
}
