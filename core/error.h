/* error.h - the error model: a kind that maps to an API code and status. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_ERROR_H
#define LOOM_CORE_ERROR_H

enum loom_err_kind {
    LOOM_OK = 0,
    LOOM_EINVAL,       /* 400 invalid_request: malformed or invalid input */
    LOOM_EAUTH,        /* 401 unauthenticated */
    LOOM_EPERM,        /* 403 forbidden */
    LOOM_ENOENT,       /* 404 not_found */
    LOOM_ECONFLICT,    /* 409 conflict */
    LOOM_ETOOBIG,      /* 413 too_large */
    LOOM_EMEDIA,       /* 415 unsupported_media_type */
    LOOM_EIMPOSSIBLE,  /* 422 unprocessable */
    LOOM_EUNAVAIL,     /* 503 unavailable: a dependency is down, retry later */
    LOOM_ENOTSUP,      /* 501 not_supported by this cluster system */
    LOOM_EINTERNAL,    /* 500 internal */
    LOOM_ETEMP,        /* 503 temporary failure of a cluster operation */
    LOOM_ELIMIT,       /* 429 too_many_requests: over a limit for now;
                          retry_after says when to try again */
};

struct loom_error {
    enum loom_err_kind kind;
    char message[512];
    char field[96]; /* JSON path of the field at fault, or "" */
    int retry_after; /* seconds (LOOM_ELIMIT), or 0 */
};

/* Fill err (may be NULL) and return -1, so an error path is one line. */
int loom_error_set(struct loom_error *err, enum loom_err_kind kind,
                   const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* As loom_error_set, naming the field at fault. */
int loom_error_field(struct loom_error *err, enum loom_err_kind kind,
                     const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prefix the message already in err with "prefix: ". Returns -1. */
int loom_error_prefix(struct loom_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void loom_error_clear(struct loom_error *err);

int loom_error_status(enum loom_err_kind kind);       /* HTTP status */
const char *loom_error_code(enum loom_err_kind kind); /* snake_case code */

#endif
