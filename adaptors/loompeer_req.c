/* loompeer_req.c - the loom adaptor's requests: tokens, answers, errors. */
/* SPDX-License-Identifier: MIT */
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/curlloop.h"
#include "adaptors/loompeer.h"
#include "core/jsonx.h"
#include "core/token_file.h"

static void op_free(struct lop *o)
{
    free(o->body);
    free(o->idem);
    free(o->native);
    free(o);
}

void lpeer_ops_drop(struct lpeer *p)
{
    while (p->ops) {
        struct lop *o = p->ops;
        p->ops = o->next;
        op_free(o);
    }
}

static void op_unlink(struct lop *o)
{
    if (o->prev)
        o->prev->next = o->next;
    else
        o->p->ops = o->next;
    if (o->next)
        o->next->prev = o->prev;
}

void lpeer_done(struct lop *o, int rc)
{
    struct adaptor_call *k = o->k;

    op_unlink(o);
    op_free(o);
    k->rc = rc;
    k->done_cb(k);
}

int lpeer_fail(struct lop *o, int kind, const char *fmt, ...)
{
    char why[600];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    /* the path without its query: the same failure, the same words */
    return loom_error_set(&o->k->err, kind, "cluster %s: loomd %s: %s %.*s: "
                          "%s", o->p->cluster, o->p->socket ? o->p->socket
                                                            : o->p->url,
                          o->method, (int)strcspn(o->path, "?"), o->path,
                          why);
}

/* The kind of error an HTTP status of the inner loomd stands for. */
static int status_kind(long status)
{
    switch (status) {
    case 400:
    case 422:
        return LOOM_EINVAL;
    case 401:
    case 403:
        return LOOM_EPERM;
    case 404:
        return LOOM_ENOENT;
    case 409:
        return LOOM_ECONFLICT;
    case 501:
        return LOOM_ENOTSUP;
    default:
        return LOOM_ETEMP; /* 429, 503 (its database), 5xx */
    }
}

int lpeer_fail_answer(struct lop *o, const struct lanswer *a)
{
    json_t *e = json_object_get(a->doc, "error");
    const char *msg = jx_str(e, "message", NULL);

    if (!a->status)
        return lpeer_fail(o, LOOM_ETEMP, "%s: %s", a->timed_out
                          ? "no answer" : "cannot reach it", a->error);
    if (msg)
        return lpeer_fail(o, status_kind(a->status), "HTTP %ld: %s",
                          a->status, msg);
    return lpeer_fail(o, status_kind(a->status), "HTTP %ld: %.80s",
                      a->status, a->text);
}

static void fetched(void *arg, const struct fetch_result *r);

void lpeer_end_unsent(struct lop *o)
{
    o->local = 1;
    o->local_rc = -1;
    curlloop_fail(o->p->loop, fetched, o, o->k->err.message);
}

void lpeer_end_done(struct lop *o)
{
    o->local = 1;
    o->local_rc = 0;
    curlloop_fail(o->p->loop, fetched, o, "nothing to send");
}

/* The token of o: token_file, or its account's file in token_dir. A new
 * string (a secret), or NULL with k->err. */
static char *token_of(struct lop *o)
{
    struct lpeer *p = o->p;
    char path[4200];
    char *t;

    if (!o->as_loomd && !accounts_name_ok(o->account)) {
        lpeer_fail(o, LOOM_EPERM, "'%s' is not an account name", o->account);
        return NULL;
    }
    if (!o->as_loomd)
        snprintf(path, sizeof(path), "%s/%s", p->token_dir, o->account);
    else
        snprintf(path, sizeof(path), "%s", p->token_file);
    if (!(t = token_file_read(path, &o->k->err))) {
        if (!o->as_loomd)
            lpeer_fail(o, LOOM_EPERM, "no token to act for account %s: %s "
                       "(the inner loomd gives this one a token for each "
                       "account it may act for; token_dir)", o->account,
                       o->k->err.message);
        else
            loom_error_prefix(&o->k->err, "cluster %s", p->cluster);
    }
    return t;
}

void lpeer_send(struct lop *o)
{
    struct lpeer *p = o->p;
    char url[1200], auth[16500], idem[300], inm[120];
    const char *hdr[5] = {NULL};
    struct fetch_req f = {
        .method = o->method, .url = url, .unix_socket = p->socket,
        .ca_file = p->ca_file, .cert_file = p->cert_file,
        .key_file = p->key_file,
        .headers = hdr, .body = o->body, .timeout_s = p->timeout_s,
        .max_bytes = p->max_bytes, .retries = !strcmp(o->method, "GET"),
        .done_cb = fetched, .arg = o};
    struct loom_error err;
    char *tok = token_of(o);
    int n = 0;

    if (!tok) {
        lpeer_end_unsent(o);
        return;
    }
    snprintf(url, sizeof(url), "%s%s", p->url, o->path);
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
    OPENSSL_cleanse(tok, strlen(tok));
    free(tok);
    hdr[n++] = auth;
    if (o->body)
        hdr[n++] = "Content-Type: application/json";
    if (o->idem) {
        snprintf(idem, sizeof(idem), "Idempotency-Key: %s", o->idem);
        hdr[n++] = idem;
    }
    if (o->inm) {
        snprintf(inm, sizeof(inm), "If-None-Match: %s", o->inm);
        hdr[n++] = inm;
    }
    if (curlloop_fetch(p->loop, &f, &err) < 0) {
        loom_error_set(&o->k->err, LOOM_ETEMP, "cluster %s: %s", p->cluster,
                       err.message);
        lpeer_end_unsent(o);
    }
    OPENSSL_cleanse(auth, sizeof(auth));
}

static void fetched(void *arg, const struct fetch_result *r)
{
    struct lop *o = arg;
    struct lanswer a = {.status = r->status, .error = r->error,
                        .timed_out = r->timed_out, .text = r->body,
                        .etag = r->etag};

    if (o->local) { /* -1: k->err says why */
        lpeer_done(o, o->local_rc);
        return;
    }
    o->k->cms_requests++;
    o->k->cms_s += r->transfer_s;
    if (r->len && !r->error)
        a.doc = json_loadb(r->body, r->len, 0, NULL);
    if (r->status >= 200 && r->status < 300 && !a.doc) {
        lpeer_done(o, lpeer_fail(o, LOOM_ETEMP, "the answer is not JSON: "
                                 "'%.60s'", r->body));
        return;
    }
    o->then(o, &a);
    json_decref(a.doc);
}

struct lop *lpeer_op_new(struct lpeer *p, struct adaptor_call *k,
                         const char *method,
                         void (*then)(struct lop *, const struct lanswer *))
{
    struct lop *o = calloc(1, sizeof(*o));

    if (!o)
        return NULL;
    o->p = p;
    o->k = k;
    o->method = method;
    o->then = then;
    o->next = p->ops;
    if (p->ops)
        p->ops->prev = o;
    p->ops = o;
    return o;
}
