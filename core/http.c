/* http.c - libmicrohttpd glue: body limits, content type, replies; a pool
 * of threads on epoll (an idle connection costs no thread), limits on
 * connections in all and per address; plain HTTP on one listener, HTTPS
 * (tls.c's credentials, the client certificate's verdict) on another,
 * and plain HTTP on a unix socket whose clients' uids (SO_PEERCRED) go
 * with their requests (listen_peer). */
/* SPDX-License-Identifier: MIT */
#include "core/http.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/http_accept.h"
#include "core/http_conn.h"
#include "core/http_stream.h"
#include "core/log.h"
#include "core/tls.h"

/* Threads that serve connections. A handler may wait up to 30 s for a
 * busy thread's answer, holding its pool thread and the connections on
 * it: enough threads that a few slow calls leave most clients served. */
#define POOL_THREADS 16

struct ctx {
    char *target; /* the request target as sent */
    int begun;    /* the headers were looked at */
    char *body;
    size_t len, cap;
    int too_big;
    int bad_type;
    int bad_length; /* Content-Length headers that disagree */
    const char *length; /* the first Content-Length seen (borrowed) */
};

#define DRAIN_S 10

/* A listener: plain HTTP, HTTPS, or plain HTTP on a unix socket whose
 * clients are known by their uid (listen_peer). */
struct server {
    struct MHD_Daemon *daemon;
    struct http_accept *accept; /* hands it the connections */
    const char *listen;
    int port;
    int tls;
    int peer;
};

/* A connection (libmicrohttpd's socket context of it). */
struct conn {
    struct http_conn *watch;  /* its deadline */
    gnutls_session_t session; /* HTTPS: pinned to its credentials */
    struct tls_peer peer;     /* HTTPS: its client certificate's verdict */
    int has_uid;              /* listen_peer: the peer's uid is known */
    uid_t uid;
    char *name;               /* ... and its account name, looked up once
                                 as the connection opened; NULL: none */
};

#define N_SERVERS 3
static struct server servers_[N_SERVERS]; /* plain, HTTPS, peer */
static struct http_config cfg_;
static atomic_int inflight; /* requests begun and not yet completed */
static unsigned boot_id;   /* random: request ids differ between starts */
static atomic_uint next_id;

const char *http_query(const struct http_req *rq, const char *name)
{
    for (size_t i = 0; i < rq->n_query; i++)
        if (!strcmp(rq->query[i].key, name))
            return rq->query[i].value;
    return NULL;
}

const char *http_header(const struct http_req *rq, const char *name)
{
    return MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, name);
}

int http_header_add(struct http_resp *rs, const char *name,
                    const char *value)
{
    for (int i = 0; i < HTTP_HEADERS_MAX; i++)
        if (!rs->header[i].name) {
            rs->header[i] = (struct http_header){name, value};
            return 0;
        }
    return -1;
}

/* A hash of n bytes at p, 8 bytes a step (a multiply and an xorshift
 * each, bijective in the word), the length in its seed. */
static uint64_t etag_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

    for (; n >= 8; b += 8, n -= 8) {
        memcpy(&w, b, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    w = 0;
    if (n)
        memcpy(&w, b, n); /* the last n < 8 bytes */
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

void http_etag_of(const void *p, size_t n, char etag[HTTP_ETAG_SIZE])
{
    snprintf(etag, HTTP_ETAG_SIZE, "\"%016llx\"",
             (unsigned long long)etag_hash(p, n));
}

int http_etag_answer(const struct http_req *rq, struct http_resp *rs,
                     const char *etag)
{
    const char *inm = http_header(rq, "If-None-Match");

    http_header_add(rs, "ETag", etag);
    /* "*": any current form of the resource (RFC 9110, 13.1.2) */
    if (!inm || (strcmp(inm, "*") && !strstr(inm, etag)))
        return 0;
    rs->status = 304;
    return 1;
}

void http_error(struct http_resp *rs, const struct loom_error *err)
{
    json_t *o = json_pack("{s:{s:s, s:s}}", "error", "code",
                          loom_error_code(err->kind), "message", err->message);

    if (o && err->field[0])
        json_object_set_new(json_object_get(o, "error"), "field",
                            json_string(err->field));
    free(rs->body);
    rs->status = loom_error_status(err->kind);
    rs->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (err->retry_after > 0)
        rs->retry_after = err->retry_after;
    if (rs->status == 503 && !rs->retry_after)
        rs->retry_after = 1;
    json_decref(o);
}

static void view_free(void *cls)
{
    jview_unref(cls);
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, struct http_resp *rs)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    char num[16];

    if (rs->stream.next) {
        r = http_stream_response(conn, &rs->stream);
    } else if (rs->view) {
        r = MHD_create_response_from_buffer_with_free_callback_cls(
            rs->view->len, rs->view->json, view_free, rs->view);
    } else if (rs->data) {
        r = MHD_create_response_from_buffer(rs->data_len, (void *)rs->data,
                                            MHD_RESPMEM_PERSISTENT);
    } else {
        const char *b = rs->body ? rs->body : "";
        r = MHD_create_response_from_buffer(strlen(b), (void *)b,
                                            MHD_RESPMEM_MUST_COPY);
    }
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type",
                            rs->ctype ? rs->ctype : "application/json");
    if (rs->retry_after) {
        snprintf(num, sizeof(num), "%d", rs->retry_after);
        MHD_add_response_header(r, "Retry-After", num);
    }
    if (rs->location)
        MHD_add_response_header(r, "Location", rs->location);
    if (rs->request_id)
        MHD_add_response_header(r, "X-Request-Id", rs->request_id);
    for (int i = 0; i < HTTP_HEADERS_MAX && rs->header[i].name; i++)
        MHD_add_response_header(r, rs->header[i].name, rs->header[i].value);
    ret = MHD_queue_response(conn, (unsigned)rs->status, r);
    MHD_destroy_response(r);
    return ret;
}

static int is_json_type(const char *ct)
{
    size_t n = strlen("application/json");

    return ct && strncasecmp(ct, "application/json", n) == 0 &&
           (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* A request begins: its target as sent, before libmicrohttpd decodes it
 * (a decoded %00 would cut it short, a %2F split a segment). */
static void *target_seen(void *cls, const char *uri,
                         struct MHD_Connection *conn)
{
    struct ctx *c = calloc(1, sizeof(*c));

    (void)cls;
    (void)conn;
    if (!c)
        return NULL;
    atomic_fetch_add(&inflight, 1);
    c->target = strdup(uri ? uri : "");
    return c;
}

/* Every Content-Length header: do they all say the same? */
static enum MHD_Result same_length(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value)
{
    struct ctx *c = cls;

    (void)kind;
    if (strcasecmp(key, "Content-Length") != 0)
        return MHD_YES;
    if (c->length && strcmp(c->length, value ? value : "") != 0)
        c->bad_length = 1;
    c->length = value ? value : "";
    return MHD_YES;
}

/* First call of a request: look at its headers before any body. */
static void begin(struct MHD_Connection *conn, struct ctx *c)
{
    const char *cl, *ct;

    c->begun = 1;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, same_length, c);
    cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > cfg_.max_body)
        c->too_big = 1;
    ct = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Type");
    if (((cl && strcmp(cl, "0") != 0) ||
         MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                     "Transfer-Encoding")) && !is_json_type(ct))
        c->bad_type = 1;
}

static void take_body(struct ctx *c, const char *data, size_t n)
{
    if (c->too_big || c->bad_type)
        return;
    if (c->len + n > cfg_.max_body) {
        c->too_big = 1;
        return;
    }
    if (c->len + n + 1 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        char *b;
        while (cap < c->len + n + 1)
            cap *= 2;
        if (cap > cfg_.max_body + 1)
            cap = cfg_.max_body + 1;
        b = realloc(c->body, cap);
        if (!b) {
            c->too_big = 1;
            return;
        }
        c->body = b;
        c->cap = cap;
    }
    memcpy(c->body + c->len, data, n);
    c->len += n;
    c->body[c->len] = '\0';
}

/* A connection's own state (its socket context), or NULL. */
static struct conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *i =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

    return i ? i->socket_context : NULL;
}

/* A request is answered: its id (this start's, then a count), which its
 * log lines name and its answer carries; the pool thread's name. */
static void request_begin(char *id, size_t size)
{
    static _Thread_local int named;

    if (!named) {
        log_thread_name("http");
        named = 1;
    }
    snprintf(id, size, "%08x-%u", boot_id, atomic_fetch_add(&next_id, 1) + 1);
    log_request_set(id);
}

static struct http_conn *watch_of(struct MHD_Connection *conn)
{
    struct conn *k = conn_of(conn);

    return k ? k->watch : NULL;
}

/* What the client certificate of an HTTPS request's connection proves. */
static void peer_of(struct MHD_Connection *conn, struct http_req *rq)
{
    struct conn *k = conn_of(conn);

    rq->tls = 1;
    if (!k || !k->session) {
        rq->cert_error = "the connection's client certificate cannot be "
                         "checked (out of memory)";
        return;
    }
    tls_peer_check(k->session, &k->peer);
    rq->cert_asked = k->peer.mode != TLS_CLIENT_OFF;
    rq->cert_required = k->peer.mode == TLS_CLIENT_REQUIRE;
    if (k->peer.ok)
        rq->cert_dn = k->peer.dn;
    else if (k->peer.presented)
        rq->cert_error = k->peer.why;
}

/* The uid of a listen_peer connection's client, as the kernel gave it
 * when the connection opened. */
static void uid_of(struct MHD_Connection *conn, struct http_req *rq)
{
    struct conn *k = conn_of(conn);

    rq->peer = 1;
    rq->peer_root_roles = cfg_.peer_root_roles;
    if (k && k->has_uid) {
        rq->peer_known = 1;
        rq->peer_uid = k->uid;
        rq->peer_name = k->name;
    }
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn,
                               const char *url, const char *method,
                               const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    struct server *srv = cls;
    struct ctx *c = *con_cls;
    struct http_resp rs = {0};
    struct http_req rq = {0};
    struct http_target t = {0};
    struct loom_error err;
    enum MHD_Result ret;
    char rid[LOG_REQUEST_ID_MAX + 1];

    if (!c || !c->target)
        return MHD_NO; /* out of memory: the connection is closed */
    if (!c->begun) {
        begin(conn, c);
        if (!c->bad_length)
            return MHD_YES;
        /* which length holds is not known: answer now, read no body */
        loom_error_set(&err, LOOM_EINVAL, "the request has Content-Length "
                       "headers that differ");
        http_error(&rs, &err);
        ret = send_resp(conn, &rs);
        free(rs.body);
        return ret;
    }
    if (*upload_size) {
        take_body(c, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    http_conn_handling(watch_of(conn));
    request_begin(rid, sizeof(rid));
    rs.request_id = rid;
    if (c->too_big) {
        loom_error_set(&err, LOOM_ETOOBIG, "the request body is larger than "
                       "%zu bytes", cfg_.max_body);
        http_error(&rs, &err);
    } else if (c->bad_type) {
        loom_error_set(&err, LOOM_EMEDIA, "the request body must be "
                       "application/json");
        http_error(&rs, &err);
    } else if (http_target_parse(c->target, &t) < 0) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(&rs, &err);
    } else {
        rq.conn = conn;
        rq.method = method;
        rq.target = t.printable;
        rq.path = t.path;
        rq.query = t.query;
        rq.n_query = t.n_query;
        rq.query_over = t.over;
        rq.body = c->body ? c->body : "";
        rq.len = c->len;
        if (srv->tls)
            peer_of(conn, &rq);
        if (srv->peer)
            uid_of(conn, &rq);
        cfg_.handle(&rq, &rs, cfg_.key, cfg_.key_len);
    }
    http_target_fini(&t);
    ret = send_resp(conn, &rs);
    free(rs.body);
    free(rs.location);
    log_request_set(NULL);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct ctx *c = *con_cls;

    http_conn_answered(watch_of(conn));
    if (c) {
        free(c->target);
        free(c->body);
        free(c);
        *con_cls = NULL;
        atomic_fetch_sub(&inflight, 1);
    }
}

/* SO_PEERCRED: who connected to the listen_peer socket, and the account
 * name of that uid, once for every request the connection carries (a
 * kept-alive client sends many; the name service may be slow). */
static void peer_uid(int fd, struct conn *k)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    struct passwd pw, *res = NULL;
    char buf[4096];

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        len != sizeof(cred))
        return;
    k->uid = cred.uid;
    k->has_uid = 1;
    if (getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &res) == 0 && res)
        k->name = strdup(pw.pw_name); /* NULL: none, as for no account */
}

/* A connection opens or closes: watch it, or stop (before its socket is
 * closed, so that the watchdog never shuts down a reused fd). */
static void notify(void *cls, struct MHD_Connection *conn, void **sc,
                   enum MHD_ConnectionNotificationCode code)
{
    struct server *srv = cls;
    const union MHD_ConnectionInfo *i;
    struct conn *k;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        *sc = k = calloc(1, sizeof(*k));
        if (!k)
            return; /* not watched; an HTTPS handshake then fails */
        i = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        k->watch = i ? http_conn_open(i->connect_fd) : NULL;
        if (i && srv->peer)
            peer_uid(i->connect_fd, k);
        /* the TLS session exists; its handshake has not begun */
        i = srv->tls ? MHD_get_connection_info(
                           conn, MHD_CONNECTION_INFO_GNUTLS_SESSION)
                     : NULL;
        if (i && i->tls_session && tls_conn_open(i->tls_session) == 0)
            k->session = i->tls_session;
    } else if ((k = *sc)) {
        http_conn_close(k->watch);
        tls_conn_close(k->session);
        free(k->name);
        free(k);
        *sc = NULL;
    }
}

static int listen_unix(const char *path, long mode, struct loom_error *err)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    int fd;

    if (strlen(path) >= sizeof(sa.sun_path))
        return loom_error_set(err, LOOM_EINVAL, "listen: socket path too "
                              "long: %s", path);
    memcpy(sa.sun_path, path, strlen(path) + 1);
    unlink(path);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (mode >= 0 && chmod(path, (mode_t)mode) < 0) ||
        listen(fd, 128) < 0) {
        loom_error_set(err, LOOM_EINVAL, "listen on unix:%s: %s", path,
                       strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static int listen_tcp(const char *spec, struct loom_error *err)
{
    char host[256];
    const char *colon = strrchr(spec, ':');
    struct addrinfo hints = {.ai_family = AF_UNSPEC,
                             .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    int fd = -1, one = 1, rc;

    if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(host))
        return loom_error_set(err, LOOM_EINVAL, "listen = %s: expected "
                              "host:port or unix:/path", spec);
    memcpy(host, spec, (size_t)(colon - spec));
    host[colon - spec] = '\0';
    rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0)
        return loom_error_set(err, LOOM_EINVAL, "listen = %s: %s", spec,
                              gai_strerror(rc));
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        listen(fd, 256) < 0) {
        loom_error_set(err, LOOM_EINVAL, "listen on %s: %s", spec,
                       strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    return fd;
}

/* Start one listener's libmicrohttpd daemon on listen. */
static int serve(struct server *srv, const char *listen, int tls, int peer,
                 struct loom_error *err)
{
    struct sockaddr_storage sa;
    socklen_t sa_len = sizeof(sa);
    int unix_ = strncmp(listen, "unix:", 5) == 0;
    int fd = unix_ ? listen_unix(listen + 5, peer ? cfg_.peer_mode : -1, err)
                   : listen_tcp(listen, err);
    /* The connections come from an accept thread of ours (http_accept.c),
     * which spreads them over the pool. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                     MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_NO_LISTEN_SOCKET | (tls ? MHD_USE_TLS : 0);

    if (fd < 0)
        return -1;
    srv->listen = listen;
    srv->tls = tls;
    srv->peer = peer;
    /* A unix socket has no address to limit per: the total limit holds.
     * HTTPS: GnuTLS asks tls.c for the certificate in each handshake, so
     * that a reload can replace it without closing the listener. */
    srv->daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, handler, srv,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)POOL_THREADS,
        MHD_OPTION_URI_LOG_CALLBACK, target_seen, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_NOTIFY_CONNECTION, notify, srv,
        MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)(cfg_.max_conns ? cfg_.max_conns : 4096),
        MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        (unsigned)(unix_ ? 0 : cfg_.max_per_address ? cfg_.max_per_address
                                                    : 64),
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
        /* plain HTTP: the list ends here */
        tls ? MHD_OPTION_HTTPS_CERT_CALLBACK : MHD_OPTION_END, &tls_retrieve,
        MHD_OPTION_HTTPS_PRIORITIES, tls_priorities(), MHD_OPTION_END);
    if (!srv->daemon) {
        close(fd);
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the %s "
                              "server on %s", tls ? "HTTPS" : "HTTP",
                              listen);
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &sa_len) == 0)
        srv->port = sa.ss_family == AF_INET
                        ? ntohs(((struct sockaddr_in *)&sa)->sin_port)
                    : sa.ss_family == AF_INET6
                        ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                        : 0;
    if (!(srv->accept = http_accept_start(fd, srv->daemon, err))) {
        MHD_stop_daemon(srv->daemon);
        srv->daemon = NULL;
        return -1;
    }
    log_info("serving the API on %s%s (%u threads; at most %u connections, "
             "%u from one address; a request must arrive within %u s)",
             tls ? "https://" : "", listen, POOL_THREADS, cfg_.max_conns,
             cfg_.max_per_address, cfg_.request_timeout_s);
    return 0;
}

static void unserve(struct server *srv)
{
    http_accept_stop(srv->accept); /* none new from now on */
    if (srv->daemon)
        MHD_stop_daemon(srv->daemon);
    memset(srv, 0, sizeof(*srv));
}

int http_start(const struct http_config *cfg, struct loom_error *err)
{
    cfg_ = *cfg;
    if (getrandom(&boot_id, sizeof(boot_id), 0) != sizeof(boot_id))
        boot_id = (unsigned)time(NULL) ^ (unsigned)getpid();
    http_stream_reset();
    if (http_conn_start(cfg->request_timeout_s ? cfg->request_timeout_s : 10,
                        err) < 0)
        return -1;
    if (serve(&servers_[0], cfg->listen, 0, 0, err) < 0 ||
        (cfg->listen_tls && serve(&servers_[1], cfg->listen_tls, 1, 0,
                                  err) < 0) ||
        (cfg->listen_peer && serve(&servers_[2], cfg->listen_peer, 0, 1,
                                   err) < 0)) {
        unserve(&servers_[1]);
        unserve(&servers_[0]);
        http_conn_stop();
        return -1;
    }
    return 0;
}

/* End the streams, stop accepting, let the requests in flight finish (at
 * most DRAIN_S), then close every connection. */
void http_stop(void)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    int waited = 0;

    if (!servers_[0].daemon)
        return;
    http_stream_end_all();
    for (int i = 0; i < N_SERVERS; i++) {
        http_accept_stop(servers_[i].accept);
        servers_[i].accept = NULL;
    }
    while (atomic_load(&inflight) > 0 && waited++ < DRAIN_S * 100)
        nanosleep(&tick, NULL);
    if (atomic_load(&inflight) > 0)
        log_warn("%d request(s) still in flight after %d s; closing",
                 atomic_load(&inflight), DRAIN_S);
    unserve(&servers_[2]);
    unserve(&servers_[1]);
    unserve(&servers_[0]);
    http_conn_stop();
}

int http_port(void)
{
    return servers_[0].port;
}

int http_tls_port(void)
{
    return servers_[1].port;
}
