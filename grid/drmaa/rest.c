/* rest.c - one request to Loom's REST API, its answer mapped to DRMAA. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>

#include "core/ctl/client.h"
#include "grid/drmaa/dr.h"

static int code_of_status(long status)
{
    switch (status) {
    case 0:
    case 503:
        return DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE;
    case 401:
    case 403:
        return DRMAA_ERRNO_AUTH_FAILURE;
    case 404:
        return DRMAA_ERRNO_INVALID_JOB;
    case 500:
        return DRMAA_ERRNO_INTERNAL_ERROR;
    }
    return DRMAA_ERRNO_INVALID_ARGUMENT;
}

int dr_rest(const char *method, const char *path, const json_t *body,
            const char *idem_key, long *status, json_t **reply,
            struct dr_error *e)
{
    char header[300];
    const char *headers[2] = { NULL, NULL };
    struct loom_error err;
    struct client *c;
    long st = 0;
    int rc;

    *reply = NULL;
    *status = 0;
    if (idem_key) {
        snprintf(header, sizeof(header), "Idempotency-Key: %s", idem_key);
        headers[0] = header;
    }
    c = dr_client_take(e);
    if (!c)
        return -1;
    rc = client_request(c, method, path, body, headers, &st, reply, &err);
    dr_client_give(c);
    *status = st;
    if (rc < 0)
        return dr_error_set(e, code_of_status(st), "%s %s: %s", method, path,
                            err.message);
    return 0;
}
