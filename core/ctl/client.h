/* client.h - the HTTP client of loomctl: requests to loomd's REST API. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_CLIENT_H
#define LOOM_CORE_CTL_CLIENT_H

#include <stddef.h>

#include <jansson.h>

#include "core/error.h"

#define CLIENT_TIMEOUT_S 30              /* default for a whole request */
#define CLIENT_REPLY_MAX (32L << 20)     /* ceiling of one answer, bytes */
#define CLIENT_PAGES_MAX 100000          /* ceiling of pages in a list */

struct client;

/* Process-wide libcurl set-up; call once from main() before any thread
 * starts, and client_global_cleanup() at exit. Returns 0 or -1 with err. */
int client_global_init(struct loom_error *err);
void client_global_cleanup(void);

/* A client for the daemon at url: "http://host:port", "https://host:port"
 * (an optional path prefix is kept) or "unix:/path/to/socket". token is
 * the bearer token (copied; the copy is wiped on destroy) or NULL to send
 * none. timeout_s bounds each request (<= 0: CLIENT_TIMEOUT_S). Returns a
 * new client (destroy with client_destroy) or NULL with err (LOOM_EINVAL
 * for a bad URL). A client is used by one thread at a time. */
struct client *client_create(const char *url, const char *token,
                             long timeout_s, struct loom_error *err);
void client_destroy(struct client *c); /* NULL-safe */

/* The URL the client was created with, for messages. Borrowed from c. */
const char *client_url(const struct client *c);

/* TLS for an https:// URL. The server's certificate is always verified
 * (its chain and its name), against ca_file and ca_dir when given, else
 * against the system's CAs; TLS 1.2 at least. */
struct client_tls {
    const char *ca_file;   /* PEM file of CAs, or NULL */
    const char *ca_dir;    /* hashed CA directory (openssl rehash), or NULL */
    const char *cert_file; /* a client certificate (PEM; a chain or a proxy
                              file may follow it), or NULL */
    const char *key_file;  /* its key (PEM), or NULL: in cert_file */
};
/* t from the environment: LOOM_CA_FILE, LOOM_CA_DIR, LOOM_CERT_FILE,
 * LOOM_KEY_FILE (unset or empty: NULL). The strings are borrowed. */
void client_tls_from_env(struct client_tls *t);
/* Whether t names anything. */
int client_tls_given(const struct client_tls *t);
/* Use t (copied) for c's requests. -1 with err (LOOM_EINVAL) when c's URL
 * is not https://, a file cannot be read, or the key file (cert_file when
 * it holds the key) may be read by group or others. */
int client_set_tls(struct client *c, const struct client_tls *t,
                   struct loom_error *err);

/*
 * Send method ("GET", "POST", "PUT", "DELETE") to path (starting with '/',
 * query included, already percent-encoded: see client_path below) with
 * body (borrowed; NULL for none; sent compact as application/json) and
 * extra header lines (NULL-terminated array of "Name: value", or NULL).
 *
 * *status (may be NULL) gets the HTTP status, or 0 when there was no
 * answer. On a 2xx answer returns 0 and *reply is a new reference to the
 * parsed JSON (NULL for an empty body); the caller decrefs it. Otherwise
 * returns -1, *reply is NULL, and err holds one sentence, ready to print
 * after "loomctl: ":
 *   cannot connect to http://127.0.0.1:8470: Connection refused (is loomd
 *   running?)                                        (LOOM_EUNAVAIL)
 *   no answer from URL within 30 s                   (LOOM_EUNAVAIL)
 *   not authorised: <server's message>               (401, 403)
 *   <server's message> [(field F)] [; retry after N s]   (other statuses)
 * and err->kind mapped back from the status (404 -> LOOM_ENOENT, ...).
 * A 307 or 308 to an http:// or https:// URL (a standby loomd names the
 * active one) is followed, at most 3 times: the same method, body and
 * headers, the token too, go there; messages then name that URL.
 */
int client_request(struct client *c, const char *method, const char *path,
                   const json_t *body, const char *const *headers,
                   long *status, json_t **reply, struct loom_error *err);

/* GET a list endpoint and follow its "next" paths until a page has none.
 * Returns 0 with *items a new array of every page's items (the caller
 * decrefs it), or -1 with err as for client_request (also when an answer
 * has no "items" array, a "next" does not start with '/', or more than
 * CLIENT_PAGES_MAX pages come). */
int client_get_all(struct client *c, const char *path, json_t **items,
                   struct loom_error *err);

/* Turn loom.conf's listen value ("host:port" or "unix:/path") into a URL
 * for a client on the same host: a wildcard host (empty, "*", "0.0.0.0",
 * "[::]") becomes the loopback address. Writes into buf (size bytes).
 * Returns 0, or -1 with err (LOOM_EINVAL) for a bad value. Thread-safe. */
int client_url_from_listen(const char *listen, char *buf, size_t size,
                           struct loom_error *err);

/* A request path under construction, percent-encoding what is added:
 *     struct client_path p;
 *     client_path_init(&p, "/v1/nodes");
 *     client_path_segment(&p, cluster);    -> /v1/nodes/slurm-a
 *     client_path_query(&p, "state", s);   -> ...?state=idle (skipped
 *                                             when s is NULL)
 * A path that outgrows buf sets overflow, and client_path_get then
 * refuses it. Embedded; no clean-up needed. Not shared between threads. */
struct client_path {
    char buf[2048];
    size_t len;
    int has_query;
    int overflow;
};
void client_path_init(struct client_path *p, const char *base);
void client_path_segment(struct client_path *p, const char *segment);
void client_path_query(struct client_path *p, const char *key,
                       const char *value);
/* The path, or NULL (with err, LOOM_EINVAL) when it overflowed. */
const char *client_path_get(const struct client_path *p,
                            struct loom_error *err);

#endif
