/* http.h - the HTTP server (libmicrohttpd): bodies, limits, replies. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HTTP_H
#define LOOM_CORE_HTTP_H

#include <stddef.h>
#include <sys/types.h>

#include "core/error.h"
#include "core/snapshot.h"
#include "core/token.h"

struct accounts_map;
struct grid_who;

#define HTTP_QUERY_MAX 32 /* query parameters kept of one request */

/* One query parameter as sent, %-decoded ('+' is a space). A %00 in it
 * shows as a len longer than the string's. */
struct http_param {
    const char *key, *value; /* value "" when the parameter has no '=' */
    size_t key_len, value_len;
    int has_value;           /* there was a '=' */
    int bad_escape;          /* a '%' without two hex digits after it */
    int value_text;          /* the value is UTF-8 without any control
                                character (no %00 either) */
};

/* One request as the API layer sees it. Borrowed for the handler's call. */
struct http_req {
    void *conn;         /* struct MHD_Connection */
    const char *method;
    const char *target; /* the request target as sent (path and query),
                           for messages: printable ASCII, other bytes
                           %-encoded */
    const char *path;   /* %-decoded, without the query; NULL when the path
                           is malformed or has an escaped '/' or control
                           character, or is not UTF-8 (names nothing) */
    const struct http_param *query; /* in the order sent */
    size_t n_query;
    int query_over;     /* more than HTTP_QUERY_MAX parameters came */
    const char *body;
    size_t len;
    int tls;            /* it came over HTTPS (listen_tls) */
    const char *cert_dn;    /* the identity of the client certificate of its
                               connection, verified; NULL when none */
    const char *cert_error; /* why the client certificate presented was
                               refused; NULL when none was, or it verified */
    int cert_asked;     /* its connection asked for a client certificate */
    int cert_required;  /* ... and needs one (tls_client_cert = require) */
    int peer;           /* it came on the listen_peer socket */
    int peer_known;     /* ... and the kernel told its client's uid */
    uid_t peer_uid;
    const char *peer_name; /* ... the account name of that uid, looked up
                              when the connection opened (borrowed for the
                              request), or NULL: it has none */
    unsigned peer_root_roles; /* the roles uid 0 acts with there, or 0 */
    int authed;
    struct token_claims who;
    char account[33];   /* the local account who maps to, or "" */
    char no_account[512]; /* why there is none (when account is "") */
    const struct accounts_map *map; /* all that who maps to (accounts of
                                       clusters, a group), or NULL */
    struct grid_who *grid; /* a grid token's verified identity (who's
                              subject is then "ISSUER,SUBJECT", its role
                              gateway), or NULL */
};

/* A header of an answer: both borrowed until the answer is sent. */
struct http_header {
    const char *name, *value;
};

/* A streamed answer of unknown length (Server-Sent Events). http.c asks
 * next for bytes whenever the connection can take more; between them the
 * connection holds no thread. */
struct http_stream {
    /* Up to max bytes into buf: how many; 0 when none are ready (the
     * connection waits until http_stream_wake); -1 to end the answer.
     * Called on one pool thread at a time. */
    long (*next)(void *cls, char *buf, size_t max);
    /* The answer ended or its connection closed: free cls. */
    void (*done)(void *cls);
    void *cls;
};

#define HTTP_HEADERS_MAX 8

/* The answer a handler fills. */
struct http_resp {
    int status;
    char *body;            /* owned JSON text, or NULL */
    const char *ctype;     /* default application/json */
    struct jview *view;    /* or: a shared job view sent without copying */
    const char *data;      /* or: data_len bytes that live as long as the
                              server (a file of the dashboard) */
    size_t data_len;
    struct http_stream stream; /* or (stream.next set): a streamed answer,
                                  whose cls the server owns from then on */
    int retry_after;       /* seconds, for 503 */
    char *location;        /* owned, or NULL */
    const char *request_id; /* sent as X-Request-Id (set by http.c) */
    struct http_header header[HTTP_HEADERS_MAX]; /* more headers, up to the
                                                   first without a name */
};

/* A request target taken apart (http_target.c): what struct http_req
 * shows of it. */
struct http_target {
    char *printable; /* the target, bytes other than printable ASCII %XX */
    char *path;      /* as http_req's path: NULL when it names nothing */
    struct http_param query[HTTP_QUERY_MAX];
    size_t n_query;
    int over;        /* more parameters than HTTP_QUERY_MAX */
    char *buf;       /* the decoded keys and values */
};
/* Take raw (the target as sent) apart into t; what is wrong in it is
 * marked, not refused. 0, or -1 when out of memory. t is then finished
 * with http_target_fini (NULL-safe on a zeroed t). */
int http_target_parse(const char *raw, struct http_target *t);
void http_target_fini(struct http_target *t);

/* The value of the first query parameter called name, or NULL. Borrowed. */
const char *http_query(const struct http_req *rq, const char *name);
/* A request header, or NULL. Borrowed. */
const char *http_header(const struct http_req *rq, const char *name);
/* Add the header name: value (both borrowed until the answer is sent) in
 * rs's first free slot. 0, or -1 when all HTTP_HEADERS_MAX are taken. */
int http_header_add(struct http_resp *rs, const char *name,
                    const char *value);
/* The ETag of n bytes at p (a quoted hash, "\"%016llx\"") into etag. */
#define HTTP_ETAG_SIZE 24
void http_etag_of(const void *p, size_t n, char etag[HTTP_ETAG_SIZE]);
/* Send etag (borrowed until the answer is sent) as rs's ETag: 1 when rq's
 * If-None-Match names it or is "*" (rs is then a 304, to send without a
 * body), else 0. */
int http_etag_answer(const struct http_req *rq, struct http_resp *rs,
                     const char *etag);
/* Fill rs with the API error body for err. */
void http_error(struct http_resp *rs, const struct loom_error *err);

/* Answers one request (on a libmicrohttpd connection thread). */
typedef void (*http_handler_f)(struct http_req *rq, struct http_resp *rs,
                               const unsigned char *key, size_t key_len);

struct http_config {
    const char *listen;   /* host:port or unix:/path */
    const char *listen_tls; /* HTTPS on host:port, or NULL; the credentials
                               are tls.c's (tls_install before) */
    const char *listen_peer; /* unix:/path whose clients are known by their
                                uid (SO_PEERCRED), or NULL */
    long peer_mode;       /* that socket's mode */
    unsigned peer_root_roles; /* the roles uid 0 acts with on it (0: root
                                 is refused there) */
    http_handler_f handle;
    size_t max_body;      /* bytes */
    const unsigned char *key; /* token key, borrowed for the server's life */
    size_t key_len;
    unsigned max_conns;       /* connections at once, in all */
    unsigned max_per_address; /* connections at once from one address */
    unsigned request_timeout_s; /* a request's headers and body must have
                                   come within this */
};

/* Start serving: plain HTTP on listen, HTTPS on listen_tls. Start-up
 * errors (address in use, bad listen value) end the daemon: -1 with err.
 * The connection limits hold for each listener on its own. */
int http_start(const struct http_config *cfg, struct loom_error *err);
/* Every stream whose next had nothing to give is asked again. Any
 * thread. */
void http_stream_wake(void);
/* Streams being answered now. */
unsigned http_streams(void);
/* End the streams, stop accepting, finish in-flight requests, close. */
void http_stop(void);
/* The bound port (for listen = host:0), or 0. */
int http_port(void);
/* The bound port of listen_tls, or 0. */
int http_tls_port(void);

#endif
