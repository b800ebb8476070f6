/* openapi.c - GET /openapi.json: docs/openapi.json, compiled in. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"

/* core/api/openapi_json.c, made from docs/openapi.json by the build */
extern const char api_openapi_json[];

const char *api_openapi_text(void)
{
    return api_openapi_json;
}

void api_openapi(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a)
{
    struct loom_error err;

    rs->body = strdup(api_openapi_json);
    if (!rs->body) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    rs->status = 200;
}
