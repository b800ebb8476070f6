/* http.h - the HTTP server (libmicrohttpd): bodies, limits, replies. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HTTP_H
#define LOOM_CORE_HTTP_H

#include <stddef.h>

#include "core/error.h"
#include "core/snapshot.h"
#include "core/token.h"

/* One request as the API layer sees it. Borrowed for the handler's call. */
struct http_req {
    void *conn;         /* struct MHD_Connection */
    const char *method;
    const char *path;   /* without the query */
    const char *body;
    size_t len;
    int authed;
    struct token_claims who;
};

/* The answer a handler fills. */
struct http_resp {
    int status;
    char *body;            /* owned JSON text, or NULL */
    const char *ctype;     /* default application/json */
    struct jview *view;    /* or: a shared job view sent without copying */
    int retry_after;       /* seconds, for 503 */
    char *location;        /* owned, or NULL */
};

/* A query parameter of the request, or NULL. Borrowed. */
const char *http_query(const struct http_req *rq, const char *name);
/* A request header, or NULL. Borrowed. */
const char *http_header(const struct http_req *rq, const char *name);
/* Fill rs with the API error body for err. */
void http_error(struct http_resp *rs, const struct loom_error *err);

/* Answers one request (on a libmicrohttpd connection thread). */
typedef void (*http_handler_f)(struct http_req *rq, struct http_resp *rs,
                               const unsigned char *key, size_t key_len);

struct http_config {
    const char *listen;   /* host:port or unix:/path */
    http_handler_f handle;
    size_t max_body;      /* bytes */
    const unsigned char *key; /* token key, borrowed for the server's life */
    size_t key_len;
};

/* Start serving. Start-up errors (address in use, bad listen value) end
 * the daemon: -1 with err. */
int http_start(const struct http_config *cfg, struct loom_error *err);
/* Stop accepting, finish in-flight requests, close. */
void http_stop(void);
/* The bound port (for listen = host:0), or 0. */
int http_port(void);

#endif
