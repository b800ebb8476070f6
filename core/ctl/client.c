/* client.c - loomctl's requests to loomd, over TCP or a Unix socket. */
/* SPDX-License-Identifier: MIT */
#include "core/ctl/client.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define CONNECT_TIMEOUT_S 10L
#define REDIRECTS_MAX 3 /* a standby's 307 to the active loomd, and more */
#define SOCKET_PATH_MAX sizeof(((struct sockaddr_un *)0)->sun_path)

struct client {
    CURL *curl;
    char *url;    /* as given, for messages */
    char *base;   /* what paths are appended to */
    char *socket; /* Unix socket path, or NULL */
    char *auth;   /* "Authorization: Bearer ..." or NULL; a secret */
    char *ca_file, *ca_dir, *cert_file, *key_file; /* TLS, or NULL */
    char *via;    /* the URL a redirect sent the request to, or NULL */
    long timeout_s;
    char errbuf[CURL_ERROR_SIZE];
};

/* An answer being received, with a ceiling. */
struct reply_buf {
    char *data;
    size_t len, cap;
    int too_big;
};

int client_global_init(struct loom_error *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return loom_error_set(err, LOOM_EINTERNAL,
                              "cannot initialise libcurl");
    return 0;
}

void client_global_cleanup(void)
{
    curl_global_cleanup();
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);

    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int has_blank_or_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s <= 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int parse_url(struct client *c, const char *url,
                     struct loom_error *err)
{
    size_t n;

    if (!url || !*url || has_blank_or_control(url))
        return loom_error_set(err, LOOM_EINVAL,
                              "bad URL '%s': it is empty or contains "
                              "spaces or control characters",
                              url ? url : "");
    c->url = strdup(url);
    if (strncmp(url, "unix:", 5) == 0) {
        if (!url[5] || strlen(url + 5) >= SOCKET_PATH_MAX)
            return loom_error_set(err, LOOM_EINVAL,
                                  "bad URL '%s': the socket path is empty "
                                  "or too long", url);
        c->socket = strdup(url + 5);
        c->base = strdup("http://localhost");
    } else if ((strncmp(url, "http://", 7) == 0 && url[7] && url[7] != '/') ||
               (strncmp(url, "https://", 8) == 0 && url[8] && url[8] != '/')) {
        n = strlen(url);
        while (n > 0 && url[n - 1] == '/')
            n--;
        c->base = dup_n(url, n);
    } else {
        return loom_error_set(err, LOOM_EINVAL,
                              "bad URL '%s': expected http://HOST:PORT, "
                              "https://HOST:PORT or unix:/PATH", url);
    }
    if (!c->url || !c->base || (strncmp(url, "unix:", 5) == 0 && !c->socket))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

static int set_token(struct client *c, const char *token,
                     struct loom_error *err)
{
    static const char prefix[] = "Authorization: Bearer ";
    size_t n = strlen(token);

    if (!n || has_blank_or_control(token))
        return loom_error_set(err, LOOM_EINVAL,
                              "the token is empty or contains spaces or "
                              "control characters");
    c->auth = malloc(sizeof(prefix) + n);
    if (!c->auth)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    memcpy(c->auth, prefix, sizeof(prefix) - 1);
    memcpy(c->auth + sizeof(prefix) - 1, token, n + 1);
    return 0;
}

struct client *client_create(const char *url, const char *token,
                             long timeout_s, struct loom_error *err)
{
    struct client *c = calloc(1, sizeof(*c));

    if (!c) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    c->timeout_s = timeout_s > 0 ? timeout_s : CLIENT_TIMEOUT_S;
    if (parse_url(c, url, err) < 0)
        goto error;
    if (token && set_token(c, token, err) < 0)
        goto error;
    c->curl = curl_easy_init();
    if (!c->curl) {
        loom_error_set(err, LOOM_EINTERNAL, "cannot create a libcurl handle");
        goto error;
    }
    return c;
error:
    client_destroy(c);
    return NULL;
}

void client_destroy(struct client *c)
{
    if (!c)
        return;
    if (c->auth) {
        OPENSSL_cleanse(c->auth, strlen(c->auth));
        free(c->auth);
    }
    if (c->curl)
        curl_easy_cleanup(c->curl);
    free(c->url);
    free(c->via);
    free(c->base);
    free(c->socket);
    free(c->ca_file);
    free(c->ca_dir);
    free(c->cert_file);
    free(c->key_file);
    free(c);
}

const char *client_url(const struct client *c)
{
    return c->url;
}

/* TLS ----------------------------------------------------------------- */

static const char *env_or_null(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void client_tls_from_env(struct client_tls *t)
{
    t->ca_file = env_or_null("LOOM_CA_FILE");
    t->ca_dir = env_or_null("LOOM_CA_DIR");
    t->cert_file = env_or_null("LOOM_CERT_FILE");
    t->key_file = env_or_null("LOOM_KEY_FILE");
}

int client_tls_given(const struct client_tls *t)
{
    return t->ca_file || t->ca_dir || t->cert_file || t->key_file;
}

/* path can be read (dir: is a directory); key: may hold a private key,
 * so group and others may not read it (as ssh with its keys). */
static int tls_file_check(const char *what, const char *path, int dir,
                          int key, struct loom_error *err)
{
    struct stat st;

    if (stat(path, &st) < 0 || access(path, R_OK) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s %s: %s", what, path,
                              strerror(errno));
    if (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return loom_error_set(err, LOOM_EINVAL, "%s %s is not a %s", what,
                              path, dir ? "directory" : "regular file");
    if (key && (st.st_mode & 077))
        return loom_error_set(err, LOOM_EINVAL, "%s %s may be read by group "
                              "or others (mode %04o); chmod 600 it", what,
                              path, (unsigned)(st.st_mode & 07777));
    return 0;
}

/* Whether the PEM file at path holds a private key. */
static int holds_key(const char *path)
{
    char line[256];
    int found = 0;
    FILE *f = fopen(path, "re");

    while (f && !found && fgets(line, sizeof(line), f))
        found = strncmp(line, "-----BEGIN ", 11) == 0 &&
                strstr(line, "PRIVATE KEY-----") != NULL;
    if (f)
        fclose(f);
    return found;
}

static int set_copy(char **dst, const char *src)
{
    free(*dst);
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

int client_set_tls(struct client *c, const struct client_tls *t,
                   struct loom_error *err)
{
    if (!client_tls_given(t))
        return 0;
    if (strncmp(c->url, "https://", 8) != 0)
        return loom_error_set(err, LOOM_EINVAL, "a CA, certificate or key "
                              "is given, but %s is not an https:// URL",
                              c->url);
    if (t->key_file && !t->cert_file)
        return loom_error_set(err, LOOM_EINVAL, "a key file is given "
                              "without its certificate");
    if ((t->ca_file && tls_file_check("CA file", t->ca_file, 0, 0,
                                      err) < 0) ||
        (t->ca_dir && tls_file_check("CA directory", t->ca_dir, 1, 0,
                                     err) < 0) ||
        (t->cert_file && tls_file_check("certificate file", t->cert_file, 0,
                                        0, err) < 0) ||
        (t->key_file && tls_file_check("key file", t->key_file, 0, 1,
                                       err) < 0))
        return -1;
    if (t->cert_file && !t->key_file &&
        (!holds_key(t->cert_file)
             ? loom_error_set(err, LOOM_EINVAL, "certificate file %s holds "
                              "no private key: give its key file too",
                              t->cert_file)
             : tls_file_check("certificate file", t->cert_file, 0, 1,
                              err)) < 0)
        return -1;
    if (set_copy(&c->ca_file, t->ca_file) < 0 ||
        set_copy(&c->ca_dir, t->ca_dir) < 0 ||
        set_copy(&c->cert_file, t->cert_file) < 0 ||
        set_copy(&c->key_file, t->key_file ? t->key_file : t->cert_file) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* Sending ------------------------------------------------------------- */

static size_t on_data(char *ptr, size_t size, size_t n, void *arg)
{
    struct reply_buf *b = arg;
    size_t add = size * n, cap;
    char *data;

    if (add > (size_t)CLIENT_REPLY_MAX - b->len) {
        b->too_big = 1;
        return 0; /* makes libcurl stop with CURLE_WRITE_ERROR */
    }
    if (b->len + add + 1 > b->cap) {
        cap = b->cap ? b->cap : 16384;
        while (cap < b->len + add + 1)
            cap *= 2;
        data = realloc(b->data, cap);
        if (!data)
            return 0;
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, ptr, add);
    b->len += add;
    b->data[b->len] = '\0';
    return add;
}

/* Free a header list, wiping the Authorization line in it first. */
static void headers_free(struct curl_slist *h)
{
    for (struct curl_slist *p = h; p; p = p->next)
        if (strncmp(p->data, "Authorization:", 14) == 0)
            OPENSSL_cleanse(p->data, strlen(p->data));
    curl_slist_free_all(h);
}

static int headers_build(struct client *c, int has_body,
                         const char *const *extra, struct curl_slist **out,
                         struct loom_error *err)
{
    struct curl_slist *h = NULL, *t;
    const char *fixed[] = {
        "Accept: application/json",
        has_body ? "Content-Type: application/json" : NULL,
        "Expect:", /* no 100-continue round trip for large bodies */
        c->auth,
    };

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        if (!fixed[i])
            continue;
        if (!(t = curl_slist_append(h, fixed[i])))
            goto nomem;
        h = t;
    }
    for (size_t i = 0; extra && extra[i]; i++) {
        if (strpbrk(extra[i], "\r\n")) {
            headers_free(h);
            return loom_error_set(err, LOOM_EINVAL,
                                  "a header line contains a line break");
        }
        if (!(t = curl_slist_append(h, extra[i])))
            goto nomem;
        h = t;
    }
    *out = h;
    return 0;
nomem:
    headers_free(h);
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

static int known_method(const char *m)
{
    return !strcmp(m, "GET") || !strcmp(m, "POST") || !strcmp(m, "PUT") ||
           !strcmp(m, "PATCH") || !strcmp(m, "DELETE");
}

/* Set the handle up for method to path on the daemon, or to the
 * absolute URL via (a redirect's) when it is not NULL. */
static int setup(struct client *c, const char *method, const char *path,
                 const char *via, const char *body, struct curl_slist *hdrs,
                 struct reply_buf *out, struct loom_error *err)
{
    size_t nb = strlen(c->base), np = strlen(path);
    char *url = malloc(nb + np + 1);
    CURL *h = c->curl;

    if (!url)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    memcpy(url, c->base, nb);
    memcpy(url + nb, path, np + 1);
    curl_easy_reset(h); /* keeps the open connection */
    c->errbuf[0] = '\0';
    curl_easy_setopt(h, CURLOPT_URL, via ? via : url);
    free(url); /* libcurl keeps a copy */
    if (c->socket && !via)
        curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket);
    if (strcmp(method, "GET") != 0)
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body || !strcmp(method, "POST") || !strcmp(method, "PUT")) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         (curl_off_t)(body ? strlen(body) : 0));
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, c->timeout_s);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT,
                     c->timeout_s < CONNECT_TIMEOUT_S ? c->timeout_s
                                                      : CONNECT_TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "loomctl/" PACKAGE_VERSION);
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    /* https: the server is always verified, chain and name */
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (c->ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
    if (c->ca_dir)
        curl_easy_setopt(h, CURLOPT_CAPATH, c->ca_dir);
    if (c->cert_file) {
        curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
        curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
    }
    /* A bearer token must not detour through a proxy to the local host. */
    if (!getenv("no_proxy") && !getenv("NO_PROXY"))
        curl_easy_setopt(h, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    return 0;
}

/* Answers ------------------------------------------------------------- */

/* The daemon that answered, for messages: the one a redirect sent the
 * request to, else the client's. */
static const char *where(const struct client *c)
{
    return c->via ? c->via : c->url;
}

static int transfer_error(struct client *c, CURLcode cc,
                          const struct reply_buf *out,
                          struct loom_error *err)
{
    const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
    curl_off_t connected = 0;
    long oserr = 0;

    curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &oserr);
    curl_easy_getinfo(c->curl, CURLINFO_CONNECT_TIME_T, &connected);
    switch (cc) {
    case CURLE_COULDNT_CONNECT:
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "cannot connect to %s: %s (is loomd running?)",
                              where(c), oserr ? strerror((int)oserr) : why);
    case CURLE_COULDNT_RESOLVE_HOST:
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "cannot connect to %s: unknown host name",
                              where(c));
    case CURLE_OPERATION_TIMEDOUT:
        if (!connected)
            return loom_error_set(err, LOOM_EUNAVAIL,
                                  "cannot connect to %s: no answer within "
                                  "%ld s (is loomd running?)",
                                  where(c),
                                  c->timeout_s < CONNECT_TIMEOUT_S
                                      ? c->timeout_s
                                      : CONNECT_TIMEOUT_S);
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "no answer from %s within %ld s", where(c),
                              c->timeout_s);
    case CURLE_GOT_NOTHING:
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "%s closed the connection without answering",
                              where(c));
    case CURLE_PEER_FAILED_VERIFICATION:
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "cannot verify the server at %s: %s (give the "
                              "CA that signed its certificate with "
                              "--cacert or LOOM_CA_FILE)", where(c), why);
    case CURLE_SSL_CERTPROBLEM:
        return loom_error_set(err, LOOM_EINVAL,
                              "the client certificate %s cannot be used: %s",
                              c->cert_file ? c->cert_file : "", why);
    case CURLE_SSL_CACERT_BADFILE:
        return loom_error_set(err, LOOM_EINVAL, "the CAs cannot be read: %s",
                              why);
    case CURLE_SSL_CONNECT_ERROR:
        return loom_error_set(err, LOOM_EUNAVAIL,
                              "TLS with %s failed: %s", where(c), why);
    case CURLE_WRITE_ERROR:
        if (out->too_big)
            return loom_error_set(err, LOOM_ETOOBIG,
                                  "the answer from %s is larger than %ld MiB",
                                  where(c), CLIENT_REPLY_MAX >> 20);
        return loom_error_set(err, LOOM_EINTERNAL,
                              "out of memory reading the answer from %s",
                              where(c));
    default:
        return loom_error_set(err, LOOM_EUNAVAIL, "request to %s failed: %s",
                              where(c), why);
    }
}

static enum loom_err_kind kind_of_status(long code)
{
    switch (code) {
    case 400: return LOOM_EINVAL;
    case 401: return LOOM_EAUTH;
    case 403: return LOOM_EPERM;
    case 404: return LOOM_ENOENT;
    case 409: return LOOM_ECONFLICT;
    case 413: return LOOM_ETOOBIG;
    case 415: return LOOM_EMEDIA;
    case 422: return LOOM_EIMPOSSIBLE;
    case 501: return LOOM_ENOTSUP;
    case 503: return LOOM_EUNAVAIL;
    }
    return code >= 400 && code < 500 ? LOOM_EINVAL : LOOM_EINTERNAL;
}

/* Copy at most one line of src into dst, control characters made spaces. */
static void clean_line(char *dst, size_t size, const char *src, size_t n)
{
    size_t o = 0;

    for (size_t i = 0; i < n && src[i] && src[i] != '\n' && o + 1 < size;
         i++)
        dst[o++] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? ' '
                                                                  : src[i];
    while (o > 0 && dst[o - 1] == ' ')
        o--;
    dst[o] = '\0';
}

static int http_error(struct client *c, long code,
                      const struct reply_buf *out, struct loom_error *err)
{
    json_t *j = out->len ? json_loadb(out->data, out->len, 0, NULL) : NULL;
    json_t *e = json_object_get(j, "error");
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *field = json_string_value(json_object_get(e, "field"));
    char text[400], tail[160] = "";
    curl_off_t retry = 0;
    size_t n;

    if (msg && *msg) {
        clean_line(text, sizeof(text), msg, strlen(msg));
    } else {
        n = (size_t)snprintf(text, sizeof(text), "%s answered HTTP %ld",
                             where(c), code);
        if (out->len && out->data[0] != '<' && !j && n + 3 < sizeof(text)) {
            memcpy(text + n, ": ", 3);
            clean_line(text + n + 2, sizeof(text) - n - 2, out->data,
                       out->len);
        }
    }
    n = 0;
    if (field && *field && !strstr(text, field))
        n = (size_t)snprintf(tail, sizeof(tail), " (field %s)", field);
    curl_easy_getinfo(c->curl, CURLINFO_RETRY_AFTER, &retry);
    if (code == 503 && retry > 0 && n < sizeof(tail))
        snprintf(tail + n, sizeof(tail) - n, "; retry after %lld s",
                 (long long)retry);
    if (code == 401 || code == 403)
        loom_error_field(err, kind_of_status(code), field,
                         "not authorised: %s%s", text, tail);
    else
        loom_error_field(err, kind_of_status(code), field, "%s%s", text,
                         tail);
    json_decref(j);
    return -1;
}

static int parse_reply(struct client *c, const struct reply_buf *out,
                       json_t **reply, struct loom_error *err)
{
    json_error_t je;
    size_t i = 0;

    while (i < out->len && strchr(" \t\r\n", out->data[i]))
        i++;
    if (i == out->len)
        return 0; /* an empty answer, as for 204 */
    /* a job's output may hold NUL bytes (\u0000) */
    *reply = json_loadb(out->data, out->len, JSON_DECODE_ANY | JSON_ALLOW_NUL,
                        &je);
    if (!*reply)
        return loom_error_set(err, LOOM_EINTERNAL,
                              "the answer from %s is not JSON: %s", where(c),
                              je.text);
    return 0;
}

/* A redirect to follow: 307 or 308 (a standby sends the request to the
 * active loomd) to an http:// or https:// URL; a new copy of it, or NULL. */
static char *redirect_of(struct client *c, long code)
{
    char *loc = NULL;

    if (code != 307 && code != 308)
        return NULL;
    curl_easy_getinfo(c->curl, CURLINFO_REDIRECT_URL, &loc);
    if (!loc || (strncmp(loc, "http://", 7) != 0 &&
                 strncmp(loc, "https://", 8) != 0) ||
        has_blank_or_control(loc))
        return NULL;
    return strdup(loc);
}

int client_request(struct client *c, const char *method, const char *path,
                   const json_t *body, const char *const *headers,
                   long *status, json_t **reply, struct loom_error *err)
{
    struct reply_buf out = { 0 };
    struct curl_slist *hdrs = NULL;
    char *text = NULL, *next;
    long code = 0;
    CURLcode cc;
    int rc = -1;

    *reply = NULL;
    if (status)
        *status = 0;
    free(c->via);
    c->via = NULL;
    if (!method || !known_method(method) || !path || path[0] != '/')
        return loom_error_set(err, LOOM_EINVAL,
                              "bad request: method %s, path %s",
                              method ? method : "(none)",
                              path ? path : "(none)");
    if (body && !(text = json_dumps(body, JSON_COMPACT))) {
        loom_error_set(err, LOOM_EINTERNAL, "cannot encode the request");
        goto out;
    }
    if (headers_build(c, text != NULL, headers, &hdrs, err) < 0)
        goto out;
    /* The same request again where a redirect says, token and body too:
     * a standby sends it to the active loomd (docs/api.md). */
    for (int hop = 0;; hop++) {
        if (setup(c, method, path, c->via, text, hdrs, &out, err) < 0)
            goto out;
        cc = curl_easy_perform(c->curl);
        if (cc != CURLE_OK) {
            transfer_error(c, cc, &out, err);
            goto out;
        }
        curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &code);
        if (hop == REDIRECTS_MAX || !(next = redirect_of(c, code)))
            break;
        free(c->via);
        c->via = next;
        out.len = 0;
    }
    if (status)
        *status = code;
    if (code >= 200 && code < 300)
        rc = parse_reply(c, &out, reply, err);
    else
        http_error(c, code, &out, err);
out:
    headers_free(hdrs);
    free(text);
    free(out.data);
    return rc;
}

/* Lists --------------------------------------------------------------- */

/* Take page's items into all and return its next path (new string), or
 * NULL with *done set when there is none. */
static char *take_page(json_t *page, json_t *all, const char *path,
                       int *done, struct loom_error *err)
{
    json_t *items = json_object_get(page, "items");
    const char *next = json_string_value(json_object_get(page, "next"));
    char *copy;

    *done = 0;
    if (!json_is_array(items)) {
        loom_error_set(err, LOOM_EINTERNAL,
                       "the answer to GET %s has no \"items\" list", path);
        return NULL;
    }
    if (json_array_extend(all, items) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    if (!next || !*next) {
        *done = 1;
        return NULL;
    }
    if (next[0] != '/' || strcmp(next, path) == 0) {
        loom_error_set(err, LOOM_EINTERNAL,
                       "the answer to GET %s has a bad \"next\": %.100s",
                       path, next);
        return NULL;
    }
    copy = strdup(next);
    if (!copy)
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return copy;
}

int client_get_all(struct client *c, const char *path, json_t **items,
                   struct loom_error *err)
{
    json_t *all = json_array(), *page = NULL;
    char *cur = strdup(path), *next;
    int done = 0;

    *items = NULL;
    if (!all || !cur) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    for (long pages = 0; !done; pages++) {
        if (pages >= CLIENT_PAGES_MAX) {
            loom_error_set(err, LOOM_ETOOBIG,
                           "GET %s: more than %d pages", path,
                           CLIENT_PAGES_MAX);
            goto error;
        }
        if (client_request(c, "GET", cur, NULL, NULL, NULL, &page, err) < 0)
            goto error;
        next = take_page(page, all, cur, &done, err);
        json_decref(page);
        page = NULL;
        if (!next && !done)
            goto error;
        free(cur);
        cur = next;
    }
    *items = all;
    return 0;
error:
    free(cur);
    json_decref(all);
    return -1;
}

/* Addresses and paths ------------------------------------------------- */

int client_url_from_listen(const char *listen, char *buf, size_t size,
                           struct loom_error *err)
{
    const char *colon, *host;
    char *end;
    size_t hlen;
    long port;
    int n;

    if (listen && strncmp(listen, "unix:", 5) == 0) {
        n = listen[5] ? snprintf(buf, size, "%s", listen) : -1;
        return n < 0 || (size_t)n >= size
                   ? loom_error_set(err, LOOM_EINVAL, "bad listen address "
                                                      "'%s'", listen)
                   : 0;
    }
    colon = listen ? strrchr(listen, ':') : NULL;
    if (!colon || has_blank_or_control(listen))
        return loom_error_set(err, LOOM_EINVAL,
                              "bad listen address '%s': expected HOST:PORT "
                              "or unix:/PATH", listen ? listen : "");
    errno = 0;
    port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || port < 1 || port > 65535)
        return loom_error_set(err, LOOM_EINVAL,
                              "bad listen address '%s': the port must be "
                              "1 to 65535", listen);
    host = listen;
    hlen = (size_t)(colon - listen);
    if (hlen == 0 || (hlen == 1 && *host == '*') ||
        (hlen == 7 && !strncmp(host, "0.0.0.0", 7))) {
        host = "127.0.0.1";
        hlen = 9;
    } else if (hlen == 4 && !strncmp(host, "[::]", 4)) {
        host = "[::1]";
        hlen = 5;
    }
    n = snprintf(buf, size, "http://%.*s:%ld", (int)hlen, host, port);
    if (n < 0 || (size_t)n >= size)
        return loom_error_set(err, LOOM_EINVAL, "listen address too long: %s",
                              listen);
    return 0;
}

static void path_put(struct client_path *p, const char *s, size_t n)
{
    if (p->overflow || n >= sizeof(p->buf) - p->len) {
        p->overflow = 1;
        return;
    }
    memcpy(p->buf + p->len, s, n);
    p->len += n;
    p->buf[p->len] = '\0';
}

static void path_escaped(struct client_path *p, const char *s, int dots)
{
    static const char hex[] = "0123456789ABCDEF";

    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char enc[3] = { '%', hex[ch >> 4], hex[ch & 15] };

        if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
            (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
            ch == '~' || (ch == '.' && !dots))
            path_put(p, s, 1);
        else
            path_put(p, enc, 3);
    }
}

void client_path_init(struct client_path *p, const char *base)
{
    p->len = 0;
    p->has_query = 0;
    p->overflow = 0;
    p->buf[0] = '\0';
    path_put(p, base, strlen(base));
}

void client_path_segment(struct client_path *p, const char *segment)
{
    /* "." and ".." would otherwise be a different path. */
    int dots = strspn(segment, ".") == strlen(segment);

    if (p->has_query) {
        p->overflow = 1;
        return;
    }
    path_put(p, "/", 1);
    path_escaped(p, segment, dots);
}

void client_path_query(struct client_path *p, const char *key,
                       const char *value)
{
    if (!value)
        return;
    path_put(p, p->has_query ? "&" : "?", 1);
    p->has_query = 1;
    path_escaped(p, key, 0);
    path_put(p, "=", 1);
    path_escaped(p, value, 0);
}

const char *client_path_get(const struct client_path *p,
                            struct loom_error *err)
{
    if (p->overflow) {
        loom_error_set(err, LOOM_EINVAL, "the request path is too long");
        return NULL;
    }
    return p->buf;
}
