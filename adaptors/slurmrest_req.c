/* slurmrest_req.c - the slurmrestd adaptor's requests: auth, errors. */
/* SPDX-License-Identifier: MIT */
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adaptors/curlloop.h"
#include "adaptors/slurmrest.h"
#include "core/timeutil.h"

/* Tokens Loom signs live this long and are renewed at half of it. */
#define TOKEN_LIFE_S 1800

static void sop_free(struct sop *o)
{
    strv_fini(&o->ask);
    free(o->body);
    free(o->native);
    free(o);
}

void srest_ops_drop(struct srest *s)
{
    while (s->ops) {
        struct sop *o = s->ops;
        s->ops = o->next;
        sop_free(o);
    }
}

void srest_sop_free(struct sop *o)
{
    struct srest *s = o->s;

    if (o->prev)
        o->prev->next = o->next;
    else
        s->ops = o->next;
    if (o->next)
        o->next->prev = o->prev;
    sop_free(o);
}

/* The op ended: tell the caller (rc -1: k->err is set). */
void srest_done(struct sop *o, int rc)
{
    struct adaptor_call *k = o->k;

    srest_sop_free(o);
    k->rc = rc;
    k->done_cb(k);
}

/* -1 with err "cluster C: slurmrestd VERSION: METHOD PATH: why". */
int srest_fail(struct sop *o, int kind, const char *fmt, ...)
{
    char why[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    /* the path without its query: the same failure, the same words */
    return loom_error_set(&o->k->err, kind, "cluster %s: slurmrestd %s: %s "
                          "%.*s: %s", o->s->cluster, srest_versions[o->s->vi],
                          o->method, (int)strcspn(o->path, "?"), o->path,
                          why);
}

/* An answer that is not what the op wanted: the error it stands for. */
int srest_fail_answer(struct sop *o, const struct answer *a)
{
    char slurm[320];
    int code;

    if (!a->status)
        return srest_fail(o, LOOM_ETEMP, "%s %s: %s", a->timed_out ? "no answer "
                    "from" : "cannot reach", o->s->socket ? o->s->socket
                                                          : o->s->url,
                    a->error);
    if ((a->status == 401 || a->status == 403) &&
        o->s->auth == SREST_LOCAL)
        return srest_fail(o, LOOM_ETEMP, "slurmrestd refused loomd's "
                    "account on its socket (HTTP %ld: %.80s): rest_auth/local "
                    "takes only root and the account slurmrestd runs as, "
                    "which may not be the SlurmUser; give jwt_key_file",
                    a->status, a->text);
    if (a->status == 401 || a->status == 403)
        return srest_fail(o, LOOM_ETEMP, "slurmrestd refused the credentials "
                    "(HTTP %ld: %.80s)", a->status, a->text);
    code = srest_first_error(a->doc, slurm, sizeof(slurm));
    if (code >= 2000)
        return srest_fail(o, LOOM_EINVAL, "Slurm refused it: %s", slurm);
    if (*slurm)
        return srest_fail(o, LOOM_ETEMP, "HTTP %ld: %s", a->status, slurm);
    return srest_fail(o, LOOM_ETEMP, "HTTP %ld%s%.80s", a->status,
                a->doc || !*a->text ? "" : ": ", a->doc ? "" : a->text);
}

/* ---- authentication ---------------------------------------------------- */

/* Read token_file again when it changed (at most once a second). */
static int token_from_file(struct srest *s, struct loom_error *err)
{
    struct stat st;
    char buf[8192], *t = buf, *user = NULL;
    FILE *f;
    size_t n;
    time_t exp;

    if (s->token && time_mono() - s->token_checked < 1)
        return 0;
    s->token_checked = time_mono();
    if (stat(s->token_file, &st) < 0 || !(f = fopen(s->token_file, "re")))
        return s->token ? 0 : loom_error_set(err, LOOM_ETEMP, "cannot read "
                                             "token_file %s", s->token_file);
    if (s->token && st.st_mtime == s->token_mtime) {
        fclose(f);
        return 0;
    }
    if (st.st_mode & 077) {
        fclose(f);
        return loom_error_set(err, LOOM_ETEMP, "token_file %s is readable by "
                              "others (mode %03o); chmod 600 it",
                              s->token_file, (unsigned)(st.st_mode & 0777));
    }
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n && strchr(" \t\r\n", buf[n - 1]))
        buf[--n] = '\0';
    if (!strncmp(t, "SLURM_JWT=", 10)) /* as scontrol token prints it */
        t += 10;
    if (srest_jwt_claims(t, &user, &exp, err) < 0)
        return loom_error_prefix(err, "token_file %s", s->token_file);
    free(s->token);
    free(s->token_user);
    s->token = strdup(t);
    s->token_user = user;
    s->token_exp = exp;
    s->token_mtime = st.st_mtime;
    return s->token ? 0 : loom_error_set(err, LOOM_EINTERNAL, "no memory");
}

/* A token signed with the key, renewed at half its life. */
static int token_signed(struct srest *s, struct loom_error *err)
{
    time_t now = time(NULL);

    if (s->token && now < s->token_exp - TOKEN_LIFE_S / 2)
        return 0;
    free(s->token);
    s->token = srest_jwt_sign(s->key, s->key_len, s->user, now,
                              now + TOKEN_LIFE_S);
    s->token_exp = now + TOKEN_LIFE_S;
    return s->token ? 0 : loom_error_set(err, LOOM_EINTERNAL, "cannot sign "
                                         "a token (out of memory)");
}

/* ---- requests ---------------------------------------------------------- */

static void fetched(void *arg, const struct fetch_result *r);

void srest_end_unsent(struct sop *o)
{
    o->local = 1;
    curlloop_fail(o->s->loop, fetched, o, o->k->err.message);
}

/* o could not be sent, for why: a passing failure. */
static void unsent(struct sop *o, const char *why)
{
    loom_error_set(&o->k->err, LOOM_ETEMP, "cluster %s: %s", o->s->cluster,
                   why);
    srest_end_unsent(o);
}

void srest_send(struct sop *o)
{
    struct srest *s = o->s;
    char url[512], name[300], tok[8300];
    const char *hdr[4] = {NULL};
    struct fetch_req f = {
        .method = o->method, .url = url, .unix_socket = s->socket,
        .headers = hdr, .body = o->body, .timeout_s = s->timeout_s,
        .max_bytes = s->max_bytes, .retries = !strcmp(o->method, "GET"),
        .done_cb = fetched, .arg = o};
    struct loom_error err;
    char *own = NULL;
    int n = 0, rc = 0;

    snprintf(url, sizeof(url), "%s/%s/%s/%s", s->url,
             o->db ? "slurmdb" : "slurm",
             o->db ? "v0.0.38" : srest_versions[s->vi], o->path);
    if (strcmp(o->method, "GET") && strcmp(o->method, "DELETE") && !o->body)
        rc = loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    else if (s->auth == SREST_KEY)
        rc = token_signed(s, &err);
    else if (s->auth == SREST_TOKEN_FILE)
        rc = token_from_file(s, &err);
    if (rc < 0) {
        unsent(o, err.message);
        return;
    }
    if (s->auth == SREST_KEY && o->as_user) {
        /* A token of the job's account itself, not one to act for it */
        time_t now = time(NULL);
        own = srest_jwt_sign(s->key, s->key_len, o->as_user, now,
                             now + TOKEN_LIFE_S);
        if (!own) {
            unsent(o, "cannot sign a token (out of memory)");
            return;
        }
    }
    if (s->auth != SREST_LOCAL) {
        snprintf(name, sizeof(name), "X-SLURM-USER-NAME: %s",
                 o->as_user ? o->as_user
                 : s->auth == SREST_KEY ? s->user : s->token_user);
        snprintf(tok, sizeof(tok), "X-SLURM-USER-TOKEN: %s",
                 own ? own : s->token);
        hdr[n++] = name;
        hdr[n++] = tok;
    }
    if (o->body)
        hdr[n++] = "Content-Type: application/json";
    o->asked = time(NULL);
    if (curlloop_fetch(s->loop, &f, &err) < 0)
        unsent(o, err.message);
    OPENSSL_cleanse(tok, sizeof(tok));
    if (own)
        OPENSSL_cleanse(own, strlen(own));
    free(own);
}

int srest_no_path(long status, const char *body)
{
    return status == 404 && body &&
           !strncmp(body, "Unable find requested URL", 25);
}

static void fetched(void *arg, const struct fetch_result *r)
{
    struct sop *o = arg;
    struct srest *s = o->s;
    struct answer a = {.status = r->status, .error = r->error,
                       .timed_out = r->timed_out, .text = r->body};

    if (o->local && !o->db) { /* k->err says why */
        srest_done(o, -1);
        return;
    }
    o->k->cms_requests++;
    o->k->cms_s += r->transfer_s;
    if (!r->error && !o->db && srest_no_path(r->status, r->body)) {
        if (!s->fixed && s->vi + 1 < SREST_N_VERSIONS) {
            s->vi++; /* the newest it offers is older: try the next */
            s->settled = 0;
            srest_send(o);
            return;
        }
        if (!s->fixed)
            s->vi = 0; /* none: from the newest again next time */
        srest_fail(o, LOOM_ETEMP, "slurmrestd offers %s (HTTP 404: no such "
             "path)", s->fixed ? "not this API version (api_version)"
                               : "none of v0.0.38, v0.0.37, v0.0.36");
        srest_done(o, -1);
        return;
    }
    if (!r->error && !o->db)
        s->settled = 1;
    if (r->len && !r->error && !(o->raw && r->status == 200))
        a.doc = json_loadb(r->body, r->len, 0, NULL);
    a.len = r->len;
    if (r->status == 200 && !a.doc && !o->raw) {
        srest_fail(o, LOOM_ETEMP, "the answer is not JSON: '%.60s'", r->body);
        srest_done(o, -1);
        return;
    }
    o->then(o, &a);
    json_decref(a.doc);
}

struct sop *srest_sop_new(struct srest *s, struct adaptor_call *k,
                           const char *method,
                           void (*then)(struct sop *, const struct answer *))
{
    struct sop *o = calloc(1, sizeof(*o));

    if (!o)
        return NULL;
    o->s = s;
    o->k = k;
    o->method = method;
    o->then = then;
    o->next = s->ops;
    if (s->ops)
        s->ops->prev = o;
    s->ops = o;
    return o;
}

