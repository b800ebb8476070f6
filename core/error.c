/* error.c - filling and mapping struct loom_error. */
/* SPDX-License-Identifier: MIT */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void vfill(struct loom_error *err, enum loom_err_kind kind,
                  const char *field, const char *fmt, va_list ap)
{
    if (!err)
        return;
    err->kind = kind;
    err->retry_after = 0;
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    snprintf(err->field, sizeof(err->field), "%s", field ? field : "");
}

int loom_error_set(struct loom_error *err, enum loom_err_kind kind,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfill(err, kind, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int loom_error_field(struct loom_error *err, enum loom_err_kind kind,
                     const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfill(err, kind, field, fmt, ap);
    va_end(ap);
    return -1;
}

int loom_error_prefix(struct loom_error *err, const char *fmt, ...)
{
    char prefix[256], old[sizeof(err->message)];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof(old));
    /* Truncation of an over-long message is acceptable here. */
    if (snprintf(err->message, sizeof(err->message), "%s: %.*s", prefix,
                 (int)(sizeof(err->message) - 1), old) < 0)
        err->message[0] = '\0';
    return -1;
}

void loom_error_clear(struct loom_error *err)
{
    if (err)
        memset(err, 0, sizeof(*err));
}

int loom_error_status(enum loom_err_kind kind)
{
    switch (kind) {
    case LOOM_OK: return 200;
    case LOOM_EINVAL: return 400;
    case LOOM_EAUTH: return 401;
    case LOOM_EPERM: return 403;
    case LOOM_ENOENT: return 404;
    case LOOM_ECONFLICT: return 409;
    case LOOM_ETOOBIG: return 413;
    case LOOM_EMEDIA: return 415;
    case LOOM_EIMPOSSIBLE: return 422;
    case LOOM_ELIMIT: return 429;
    case LOOM_ENOTSUP: return 501;
    case LOOM_EUNAVAIL:
    case LOOM_ETEMP: return 503;
    case LOOM_EINTERNAL: break;
    }
    return 500;
}

const char *loom_error_code(enum loom_err_kind kind)
{
    switch (kind) {
    case LOOM_OK: return "ok";
    case LOOM_EINVAL: return "invalid_request";
    case LOOM_EAUTH: return "unauthenticated";
    case LOOM_EPERM: return "forbidden";
    case LOOM_ENOENT: return "not_found";
    case LOOM_ECONFLICT: return "conflict";
    case LOOM_ETOOBIG: return "too_large";
    case LOOM_EMEDIA: return "unsupported_media_type";
    case LOOM_EIMPOSSIBLE: return "unprocessable";
    case LOOM_ELIMIT: return "too_many_requests";
    case LOOM_ENOTSUP: return "not_supported";
    case LOOM_EUNAVAIL: return "unavailable";
    case LOOM_ETEMP: return "temporary_failure";
    case LOOM_EINTERNAL: break;
    }
    return "internal";
}
