/* curlloop.c - HTTP requests of the server thread: one libcurl multi. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/curlloop.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "core/timeutil.h"

/* Connections to one host (a slurmrestd) at once; more requests wait in
 * libcurl's queue for one of them. */
#define MAX_HOST_CONNECTIONS 8
/* Connections kept open for reuse, all hosts together. */
#define MAX_CACHED_CONNECTIONS 32
/* The largest answer buffer kept for the next transfer: a poll's answer is
 * about the size of the last one, which a new buffer would reach again by
 * doubling from 16 KiB, a reallocation at each step. */
#define SPARE_MAX (8 << 20)

struct xfer {
    struct xfer *prev, *next; /* the loop's transfers */
    CURL *e;
    struct curl_slist *headers;
    char *buf;
    size_t len, cap, max;
    int too_big;
    int retries;
    double t0;
    double spent;      /* libcurl's time of the tries before this one */
    char etag[80];     /* the answer's ETag, or "" */
    char errbuf[CURL_ERROR_SIZE];
    void (*done_cb)(void *arg, const struct fetch_result *r);
    void *arg;
};

/* A failure to report from the next run. */
struct failed {
    struct failed *next;
    void (*done_cb)(void *arg, const struct fetch_result *r);
    void *arg;
    char why[256];
};

struct curlloop {
    CURLM *m;
    size_t active;
    struct xfer *all;
    struct failed *failed, **failed_tail;
    char *spare;       /* an answer buffer of spare_cap bytes, or NULL */
    size_t spare_cap;
};

struct curlloop *curlloop_create(struct loom_error *err)
{
    struct curlloop *l = calloc(1, sizeof(*l));

    if (!l || !(l->m = curl_multi_init())) {
        free(l);
        loom_error_set(err, LOOM_EINTERNAL, "cannot create libcurl's multi "
                       "handle (out of memory)");
        return NULL;
    }
    l->failed_tail = &l->failed;
    curl_multi_setopt(l->m, CURLMOPT_MAX_HOST_CONNECTIONS,
                      (long)MAX_HOST_CONNECTIONS);
    curl_multi_setopt(l->m, CURLMOPT_MAXCONNECTS,
                      (long)MAX_CACHED_CONNECTIONS);
    return l;
}

static void xfer_free(struct xfer *x)
{
    if (!x)
        return;
    if (x->e)
        curl_easy_cleanup(x->e);
    curl_slist_free_all(x->headers);
    free(x->buf);
    free(x);
}

/* x ended: its buffer becomes the loop's spare when it is the larger. */
static void xfer_end(struct curlloop *l, struct xfer *x)
{
    if (x->buf && x->cap > l->spare_cap && x->cap <= SPARE_MAX) {
        free(l->spare);
        l->spare = x->buf;
        l->spare_cap = x->cap;
        x->buf = NULL;
    }
    xfer_free(x);
}

void curlloop_destroy(struct curlloop *l)
{
    if (!l)
        return;
    while (l->failed) {
        struct failed *f = l->failed;
        l->failed = f->next;
        free(f);
    }
    while (l->all) {
        struct xfer *x = l->all;
        l->all = x->next;
        curl_multi_remove_handle(l->m, x->e);
        xfer_free(x);
    }
    curl_multi_cleanup(l->m);
    free(l->spare);
    free(l);
}

void curlloop_wakeup(void *l)
{
    curl_multi_wakeup(((struct curlloop *)l)->m);
}

size_t curlloop_active(const struct curlloop *l)
{
    return l->active;
}

/* The answer, kept up to x->max bytes: past it the transfer fails. */
static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t add = size * n;

    if (x->len + add > x->max) {
        x->too_big = 1;
        return 0;
    }
    if (x->len + add + 1 > x->cap) {
        size_t cap = x->cap ? x->cap : 16384;
        char *b;
        while (cap < x->len + add + 1)
            cap *= 2;
        if (!(b = realloc(x->buf, cap)))
            return 0;
        x->buf = b;
        x->cap = cap;
    }
    memcpy(x->buf + x->len, p, add);
    x->len += add;
    x->buf[x->len] = '\0';
    return add;
}

/* An ETag header of the answer, kept (the last one: after a redirect or a
 * 100 Continue, the final answer's). */
static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t len = size * n, v;

    if (len > 5 && !strncasecmp(p, "ETag:", 5)) {
        v = 5 + strspn(p + 5, " \t");
        while (len > v && strchr(" \t\r\n", p[len - 1]))
            len--;
        if (len - v < sizeof(x->etag)) {
            memcpy(x->etag, p + v, len - v);
            x->etag[len - v] = '\0';
        }
    }
    return size * n;
}

/* Every socket close-on-exec: libcurl's are not, and a connection kept
 * open would otherwise pass to what loomd's threads start meanwhile (a
 * pack, and through loom-runas an account's sbatch); on slurmrestd's Unix
 * socket under rest_auth/local the connection itself is the credential. */
static curl_socket_t open_socket(void *arg, curlsocktype purpose,
                                 struct curl_sockaddr *a)
{
    (void)arg;
    (void)purpose;
    return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static int setup(struct xfer *x, const struct fetch_req *r)
{
    long ms = (long)(r->timeout_s * 1000);
    int rc = 0;

    /* "Expect:" off: slurmrestd never says 100 Continue, and libcurl
     * would wait a second for it before a body past 1 KiB. */
    x->headers = curl_slist_append(NULL, "Expect:");
    for (size_t i = 0; x->headers && r->headers && r->headers[i]; i++) {
        struct curl_slist *h = curl_slist_append(x->headers, r->headers[i]);
        if (!h)
            return -1;
        x->headers = h;
    }
    if (!x->headers)
        return -1;
    rc |= curl_easy_setopt(x->e, CURLOPT_URL, r->url);
    if (r->unix_socket)
        rc |= curl_easy_setopt(x->e, CURLOPT_UNIX_SOCKET_PATH, r->unix_socket);
#if LIBCURL_VERSION_NUM >= 0x075500
    rc |= curl_easy_setopt(x->e, CURLOPT_PROTOCOLS_STR, "http,https");
#endif
    rc |= curl_easy_setopt(x->e, CURLOPT_NOSIGNAL, 1L);
    rc |= curl_easy_setopt(x->e, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    rc |= curl_easy_setopt(x->e, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
    rc |= curl_easy_setopt(x->e, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 ? ms : 1L);
    rc |= curl_easy_setopt(x->e, CURLOPT_HTTPHEADER, x->headers);
    rc |= curl_easy_setopt(x->e, CURLOPT_WRITEFUNCTION, on_data);
    rc |= curl_easy_setopt(x->e, CURLOPT_WRITEDATA, x);
    rc |= curl_easy_setopt(x->e, CURLOPT_HEADERFUNCTION, on_header);
    rc |= curl_easy_setopt(x->e, CURLOPT_HEADERDATA, x);
    rc |= curl_easy_setopt(x->e, CURLOPT_PRIVATE, x);
    rc |= curl_easy_setopt(x->e, CURLOPT_ERRORBUFFER, x->errbuf);
    if (r->ca_file)
        rc |= curl_easy_setopt(x->e, CURLOPT_CAINFO, r->ca_file);
    if (r->cert_file)
        rc |= curl_easy_setopt(x->e, CURLOPT_SSLCERT, r->cert_file);
    if (r->key_file)
        rc |= curl_easy_setopt(x->e, CURLOPT_SSLKEY, r->key_file);
    if (r->body)
        rc |= curl_easy_setopt(x->e, CURLOPT_COPYPOSTFIELDS, r->body);
    if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "POST") != 0)
        rc |= curl_easy_setopt(x->e, CURLOPT_CUSTOMREQUEST, r->method);
    else if (!strcmp(r->method, "POST") && !r->body)
        rc |= curl_easy_setopt(x->e, CURLOPT_COPYPOSTFIELDS, "");
    return rc ? -1 : 0;
}

int curlloop_fetch(struct curlloop *l, const struct fetch_req *r,
                   struct loom_error *err)
{
    struct xfer *x = calloc(1, sizeof(*x));

    if (!x || !(x->e = curl_easy_init()) || setup(x, r) < 0 ||
        curl_multi_add_handle(l->m, x->e) != CURLM_OK) {
        xfer_free(x);
        return loom_error_set(err, LOOM_EINTERNAL, "%s %s: cannot start the "
                              "request (out of memory)", r->method, r->url);
    }
    x->max = r->max_bytes;
    x->buf = l->spare;
    x->cap = l->spare_cap;
    if (x->buf)
        x->buf[0] = '\0'; /* no answer yet: "" */
    l->spare = NULL;
    l->spare_cap = 0;
    x->retries = r->retries;
    x->done_cb = r->done_cb;
    x->arg = r->arg;
    x->t0 = time_mono();
    x->next = l->all;
    if (l->all)
        l->all->prev = x;
    l->all = x;
    l->active++;
    return 0;
}

void curlloop_fail(struct curlloop *l,
                   void (*done_cb)(void *arg, const struct fetch_result *r),
                   void *arg, const char *why)
{
    struct failed *f = calloc(1, sizeof(*f));
    struct fetch_result r = {.body = "", .error = why};

    if (!f) { /* out of memory: the one case told at once */
        done_cb(arg, &r);
        return;
    }
    f->done_cb = done_cb;
    f->arg = arg;
    snprintf(f->why, sizeof(f->why), "%s", why);
    *l->failed_tail = f;
    l->failed_tail = &f->next;
    curl_multi_wakeup(l->m);
}

/* A broken connection (a reused one the server had closed, a server that
 * restarted) and nothing answered: a read may go again. */
static int broken(CURLcode rc)
{
    return rc == CURLE_GOT_NOTHING || rc == CURLE_SEND_ERROR ||
           rc == CURLE_RECV_ERROR;
}

/* libcurl's own time of x's transfer so far, in seconds. */
static double curl_time(struct xfer *x)
{
    curl_off_t us = 0;

    if (curl_easy_getinfo(x->e, CURLINFO_TOTAL_TIME_T, &us) != CURLE_OK)
        return 0;
    return (double)us / 1e6;
}

static void finish(struct curlloop *l, struct xfer *x, CURLcode rc)
{
    struct fetch_result r = {.body = x->buf ? x->buf : "", .len = x->len};
    char why[CURL_ERROR_SIZE + 64];

    curl_multi_remove_handle(l->m, x->e);
    if (rc != CURLE_OK && broken(rc) && x->retries > 0 && !x->too_big) {
        x->spent += curl_time(x);
        x->retries--;
        x->len = 0;
        if (x->buf)
            x->buf[0] = '\0';
        x->etag[0] = '\0';
        x->errbuf[0] = '\0';
        if (curl_multi_add_handle(l->m, x->e) == CURLM_OK)
            return;
    }
    l->active--;
    if (x->prev)
        x->prev->next = x->next;
    else
        l->all = x->next;
    if (x->next)
        x->next->prev = x->prev;
    r.seconds = time_mono() - x->t0;
    r.transfer_s = x->spent + curl_time(x);
    if (x->too_big) {
        snprintf(why, sizeof(why), "the answer is larger than %zu bytes",
                 x->max);
        r.error = why;
    } else if (rc != CURLE_OK) {
        r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        snprintf(why, sizeof(why), "%s", x->errbuf[0] ? x->errbuf
                                                       : curl_easy_strerror(rc));
        r.error = why;
    } else {
        curl_easy_getinfo(x->e, CURLINFO_RESPONSE_CODE, &r.status);
        r.etag = x->etag[0] ? x->etag : NULL;
    }
    x->done_cb(x->arg, &r);
    xfer_end(l, x);
}

/* Carry the transfers on; finish those that ended. How many did. */
static int drive(struct curlloop *l)
{
    struct CURLMsg *msg;
    struct failed *f;
    int running, left, n = 0;

    while ((f = l->failed)) {
        struct fetch_result r = {.body = "", .error = f->why};
        l->failed = f->next;
        if (!l->failed)
            l->failed_tail = &l->failed;
        f->done_cb(f->arg, &r);
        free(f);
        n++;
    }
    curl_multi_perform(l->m, &running);
    while ((msg = curl_multi_info_read(l->m, &left))) {
        struct xfer *x = NULL;
        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        finish(l, x, msg->data.result);
        n++;
    }
    return n;
}

void curlloop_run(struct curlloop *l, double timeout_s)
{
    int ms = timeout_s > 0 ? (int)(timeout_s * 1000 + 0.999) : 0;

    if (drive(l) > 0)
        return;
    curl_multi_poll(l->m, NULL, 0, ms, NULL);
    drive(l);
}

int curlloop_url_parse(const struct conf_section *sec, const char *url,
                       int https, char **base, char **socket,
                       struct loom_error *err)
{
    size_t scheme = !strncmp(url, "http://", 7) ? 7
                    : https && !strncmp(url, "https://", 8) ? 8 : 0;
    const char *hostport = url + scheme, *slash;
    int unix_socket = !strncmp(url, "unix:/", 6);

    *base = *socket = NULL;
    if (unix_socket) {
        *socket = strdup(url + 5);
        *base = strdup("http://localhost");
    } else if (scheme && *hostport &&
               (!(slash = strchr(hostport, '/')) || !slash[1])) {
        *base = strndup(url, slash ? (size_t)(slash - url) : strlen(url));
    } else {
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] url: "
                              "expected unix:/PATH%s or http://HOST:PORT "
                              "(got '%s')", sec->file, sec->line, sec->name,
                              https ? ", https://HOST:PORT" : "", url);
    }
    if (*base && (*socket || !unix_socket))
        return 0;
    free(*base);
    free(*socket);
    *base = *socket = NULL;
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}
