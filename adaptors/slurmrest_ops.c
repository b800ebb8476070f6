/* slurmrest_ops.c - the slurmrestd adaptor's operations, as requests. */
/* SPDX-License-Identifier: MIT */
#include <openssl/crypto.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "adaptors/curlloop.h"
#include "adaptors/script.h"
#include "adaptors/slurmrest.h"
#include "core/directives.h"
#include "core/timeutil.h"

/* Tokens Loom signs live this long and are renewed at half of it. */
#define TOKEN_LIFE_S 1800
/* A full list of jobs, nodes and partitions at least this often, even when
 * slurmrestd says nothing changed (a clock that differs from slurmctld's
 * cannot hide a change for longer). */
#define FULL_EVERY_S 60

/* What a request came to. */
struct answer {
    long status;       /* 0: no answer (error says why) */
    json_t *doc;       /* the JSON body, or NULL */
    const char *error; /* no answer: why */
    int timed_out;
    const char *text;  /* the body as sent */
};

/* One operation under way: one or more requests in turn. */
struct sop {
    struct sop *prev, *next;
    struct srest *s;
    struct adaptor_call *k;
    const char *method;
    char path[160];    /* after /slurm/VERSION/ */
    char *body;
    const char *as_user; /* X-SLURM-USER-NAME of a submit, or NULL */
    int local;         /* it failed before it was sent (error says why) */
    time_t asked;
    char *native;
    void (*then)(struct sop *o, const struct answer *a);
};

static void sop_free(struct sop *o)
{
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

static void sop_unlink_free(struct sop *o)
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
static void done(struct sop *o, int rc)
{
    struct adaptor_call *k = o->k;

    sop_unlink_free(o);
    k->rc = rc;
    k->done_cb(k);
}

/* -1 with err "cluster C: slurmrestd VERSION: METHOD PATH: why". */
static int fail(struct sop *o, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct sop *o, int kind, const char *fmt, ...)
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
static int fail_answer(struct sop *o, const struct answer *a)
{
    char slurm[320];
    int code;

    if (!a->status)
        return fail(o, LOOM_ETEMP, "%s %s: %s", a->timed_out ? "no answer "
                    "from" : "cannot reach", o->s->socket ? o->s->socket
                                                          : o->s->url,
                    a->error);
    if (a->status == 401 || a->status == 403)
        return fail(o, LOOM_ETEMP, "slurmrestd refused the credentials "
                    "(HTTP %ld: %.80s)", a->status, a->text);
    code = srest_first_error(a->doc, slurm, sizeof(slurm));
    if (code >= 2000)
        return fail(o, LOOM_EINVAL, "Slurm refused it: %s", slurm);
    if (*slurm)
        return fail(o, LOOM_ETEMP, "HTTP %ld: %s", a->status, slurm);
    return fail(o, LOOM_ETEMP, "HTTP %ld%s%.80s", a->status,
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
    if (stat(s->token_file, &st) < 0 || !(f = fopen(s->token_file, "r")))
        return s->token ? 0 : loom_error_set(err, LOOM_ETEMP, "cannot read "
                                             "token_file %s", s->token_file);
    if (s->token && st.st_mtime == s->token_mtime) {
        fclose(f);
        return 0;
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

static void send_req(struct sop *o)
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
    int n = 0, rc = 0;

    snprintf(url, sizeof(url), "%s/slurm/%s/%s", s->url,
             srest_versions[s->vi], o->path);
    if (strcmp(o->method, "GET") && strcmp(o->method, "DELETE") && !o->body)
        rc = loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
    else if (s->auth == SREST_KEY)
        rc = token_signed(s, &err);
    else if (s->auth == SREST_TOKEN_FILE)
        rc = token_from_file(s, &err);
    if (rc < 0) {
        o->local = 1;
        curlloop_fail(s->loop, fetched, o, err.message);
        return;
    }
    if (s->auth != SREST_LOCAL) {
        snprintf(name, sizeof(name), "X-SLURM-USER-NAME: %s",
                 o->as_user ? o->as_user
                 : s->auth == SREST_KEY ? s->user : s->token_user);
        snprintf(tok, sizeof(tok), "X-SLURM-USER-TOKEN: %s", s->token);
        hdr[n++] = name;
        hdr[n++] = tok;
    }
    if (o->body)
        hdr[n++] = "Content-Type: application/json";
    o->asked = time(NULL);
    if (curlloop_fetch(s->loop, &f, &err) < 0) {
        o->local = 1;
        curlloop_fail(s->loop, fetched, o, err.message);
    }
    OPENSSL_cleanse(tok, sizeof(tok));
}

/* A 404 of a path slurmrestd lacks: its OpenAPI plugin is not loaded. */
static int no_such_version(const struct fetch_result *r)
{
    return r->status == 404 &&
           !strncmp(r->body, "Unable find requested URL", 25);
}

static void fetched(void *arg, const struct fetch_result *r)
{
    struct sop *o = arg;
    struct srest *s = o->s;
    struct answer a = {.status = r->status, .error = r->error,
                       .timed_out = r->timed_out, .text = r->body};

    if (o->local) {
        loom_error_set(&o->k->err, LOOM_ETEMP, "cluster %s: %s", s->cluster,
                       r->error);
        done(o, -1);
        return;
    }
    if (!r->error && no_such_version(r)) {
        if (!s->fixed && s->vi + 1 < SREST_N_VERSIONS) {
            s->vi++; /* the newest it offers is older: try the next */
            s->settled = 0;
            send_req(o);
            return;
        }
        if (!s->fixed)
            s->vi = 0; /* none: from the newest again next time */
        fail(o, LOOM_ETEMP, "slurmrestd offers %s (HTTP 404: no such "
             "path)", s->fixed ? "not this API version (api_version)"
                               : "none of v0.0.38, v0.0.37, v0.0.36");
        done(o, -1);
        return;
    }
    if (!r->error)
        s->settled = 1;
    if (r->len && !r->error)
        a.doc = json_loadb(r->body, r->len, 0, NULL);
    if (r->status == 200 && !a.doc) {
        fail(o, LOOM_ETEMP, "the answer is not JSON: '%.60s'", r->body);
        done(o, -1);
        return;
    }
    o->then(o, &a);
    json_decref(a.doc);
}

static struct sop *sop_new(struct srest *s, struct adaptor_call *k,
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

/* ---- nodes, jobs, partitions ---------------------------------------------- */

static int copy_str(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? -1 : 0;
}

static int copy_strv(struct strv *dst, const struct strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        if (strv_push(dst, src->v[i]) < 0)
            return -1;
    return 0;
}

static int copy_nodes(struct cl_node_list *dst, const struct cl_node_list *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const struct cl_node *a = &src->v[i];
        struct cl_node *b = cl_node_list_add(dst);
        if (!b)
            return -1;
        *b = *a;
        b->name = b->state = b->reason = NULL;
        b->features = b->queues = (struct strv){0};
        if (copy_str(&b->name, a->name) || copy_str(&b->state, a->state) ||
            copy_str(&b->reason, a->reason) ||
            copy_strv(&b->features, &a->features) ||
            copy_strv(&b->queues, &a->queues))
            return -1;
    }
    return 0;
}

static int copy_queues(struct cl_queue_list *dst,
                       const struct cl_queue_list *src)
{
    for (size_t i = 0; i < src->n; i++) {
        struct cl_queue *b = cl_queue_list_add(dst);
        if (!b)
            return -1;
        *b = src->v[i];
        b->name = b->state = NULL;
        if (copy_str(&b->name, src->v[i].name) ||
            copy_str(&b->state, src->v[i].state))
            return -1;
    }
    return 0;
}

/* "PATH" or "PATH?update_time=T" when a full answer came since. */
static void list_path(struct sop *o, const char *what, time_t at)
{
    if (at && o->s->conditional && time(NULL) - at < FULL_EVERY_S)
        snprintf(o->path, sizeof(o->path), "%s?update_time=%lld", what,
                 (long long)at - 1);
    else
        snprintf(o->path, sizeof(o->path), "%s", what);
}

/* v0.0.36 lacks what nodes and queues need: the fallback pack does them. */
static int hand_back(struct sop *o)
{
    if (o->s->vi != 2)
        return 0;
    o->k->blocking = 1;
    done(o, 0);
    return 1;
}

static void nodes_then(struct sop *o, const struct answer *a)
{
    struct srest *s = o->s;
    struct cl_node_list l = {0};

    if (hand_back(o))
        return;
    if (a->status == 304 && s->nodes_at) {
        /* unchanged since the last full answer */
    } else if (a->status >= 500 && strchr(o->path, '?')) {
        /* 22.05 asks for the partitions with the same update_time once
         * the nodes changed, and fails when they did not: ask in full. */
        list_path(o, "nodes", 0);
        send_req(o);
        return;
    } else if (a->status != 200) {
        cl_node_list_fini(&s->nodes);
        s->nodes_at = 0;
        done(o, fail_answer(o, a));
        return;
    } else if (srest_parse_nodes(a->doc, s->partition, &l, &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET nodes", s->cluster);
        done(o, -1);
        return;
    } else {
        cl_node_list_fini(&s->nodes);
        s->nodes = l;
        s->nodes_at = o->asked;
    }
    if (copy_nodes(&o->k->nodes, &s->nodes) < 0) {
        cl_node_list_fini(&o->k->nodes);
        done(o, loom_error_set(&o->k->err, LOOM_EINTERNAL, "no memory"));
        return;
    }
    done(o, 0);
}

static void parts_then(struct sop *o, const struct answer *a)
{
    struct srest *s = o->s;
    struct cl_queue_list l = {0};

    if (hand_back(o))
        return;
    if (a->status == 304 && s->parts_at) {
        /* unchanged */
    } else if (a->status != 200) {
        s->parts_at = 0;
        done(o, fail_answer(o, a));
        return;
    } else if (srest_parse_partitions(a->doc, s->partition, &l,
                                      &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET partitions",
                          s->cluster);
        done(o, -1);
        return;
    } else {
        cl_queue_list_fini(&s->parts);
        s->parts = l;
        s->parts_at = o->asked;
    }
    if (copy_queues(&o->k->queues, &s->parts) < 0) {
        cl_queue_list_fini(&o->k->queues);
        done(o, loom_error_set(&o->k->err, LOOM_EINTERNAL, "no memory"));
        return;
    }
    done(o, 0);
}

static void jobs_then(struct sop *o, const struct answer *a)
{
    struct srest *s = o->s;

    if (a->status == 304 && s->jobs_at) {
        o->k->complete = 0; /* nothing changed: nothing to say */
        done(o, 0);
        return;
    }
    if (a->status != 200) {
        s->jobs_at = 0;
        done(o, fail_answer(o, a));
        return;
    }
    if (srest_parse_jobs(a->doc, &o->k->jobs, &s->max_job_id,
                         &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET jobs", s->cluster);
        s->jobs_at = 0;
        done(o, -1);
        return;
    }
    o->k->complete = 1;
    s->jobs_at = o->asked;
    done(o, 0);
}

/* ---- start --------------------------------------------------------------- */

/* The request's nodes as Slurm's comma list. A new string, or NULL. */
static char *node_list(const struct start_req *req)
{
    size_t n = 1, k = 0;
    char *list;

    for (size_t i = 0; i < req->n_nodes; i++)
        n += strlen(req->nodes[i]) + 1;
    if (!(list = malloc(n)))
        return NULL;
    for (size_t i = 0; i < req->n_nodes; i++)
        k += (size_t)snprintf(list + k, n - k, "%s%s", i ? "," : "",
                              req->nodes[i]);
    list[k] = '\0';
    return list;
}

static void submit(struct sop *o);

/* The job's output file: WORKDIR/loom-ID.SUFFIX (with % doubled for
 * Slurm, when escaped). A new string. */
static char *out_path(const struct srest *s, int64_t id, const char *suffix,
                      int escaped)
{
    size_t n = strlen(s->workdir) * 2 + 64, k = 0;
    char *p = malloc(n), tail[48];

    if (!p)
        return NULL;
    for (const char *c = s->workdir; *c; c++) {
        if (*c == '%' && escaped)
            p[k++] = '%';
        p[k++] = *c;
    }
    snprintf(tail, sizeof(tail), "/loom-%lld.%s", (long long)id, suffix);
    snprintf(p + k, n - k, "%s", tail);
    return p;
}

/* POST job/submit's body: the slurm pack's sbatch, in JSON. The script's
 * directives that Loom applied through the request are neutralised, as
 * the pack's are (slurmrestd reads none, but the script is the same). */
static char *submit_body(const struct srest *s, const struct start_req *asked)
{
    struct start_req copy = *asked, *req = &copy;
    char *neutral = asked->script ? directives_neutralise(asked->script)
                                  : NULL;
    char id[32], comment[40], *script, *text = NULL;
    char *out = out_path(s, req->loom_id, "out", 1);
    char *errp = out_path(s, req->loom_id, "err", 1);
    json_t *env = json_object(), *job = NULL, *doc = NULL, *nodes;
    char *list;

    copy.script = neutral;
    script = !asked->script || neutral ? script_job_file(req) : NULL;
    free(neutral);
    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    snprintf(comment, sizeof(comment), "loom:%s", id);
    list = node_list(req);
    nodes = list ? json_string(list) : NULL;
    free(list);
    if (!script || !out || !errp || !env || !nodes)
        goto out;
    json_object_set_new(env, "PATH", json_string("/usr/local/bin:/usr/bin:"
                                                 "/bin"));
    json_object_set_new(env, "LOOM_JOB_ID", json_string(id));
    for (size_t i = 0; i < s->env.n; i++) {
        const char *eq = strchr(s->env.v[i], '=');
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - s->env.v[i]),
                 s->env.v[i]);
        json_object_set_new(env, name, json_string(eq + 1));
    }
    job = json_pack("{s:s, s:s, s:O?, s:[I,I], s:i, s:s, s:s, s:s, s:O}",
                    "name", req->name ? req->name : comment,
                    "comment", comment, "nodelist", nodes, "nodes",
                    (json_int_t)req->n_nodes, (json_int_t)req->n_nodes,
                    "tasks_per_node", 1, "current_working_directory",
                    s->workdir, "standard_output", out, "standard_error",
                    errp, "environment", env);
    if (!job)
        goto out;
    if (req->cpus_per_node > 0)
        json_object_set_new(job, "cpus_per_task",
                            json_integer(req->cpus_per_node));
    if (req->memory_mb > 0) /* never 0: "all of the node's memory" */
        json_object_set_new(job, "memory_per_node",
                            json_integer(req->memory_mb));
    if (req->gpus > 0)
        json_object_set_new(job, "gpus_per_node",
                            json_sprintf("%d", req->gpus));
    if (req->walltime_s > 0)
        json_object_set_new(job, "time_limit",
                            json_integer((req->walltime_s + 59) / 60));
    if ((req->queue && *req->queue) || s->partition)
        json_object_set_new(job, "partition",
                            json_string(req->queue && *req->queue
                                            ? req->queue : s->partition));
    doc = json_pack("{s:O, s:s}", "job", job, "script", script);
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
out:
    json_decref(doc);
    json_decref(job);
    json_decref(env);
    json_decref(nodes);
    free(script);
    free(out);
    free(errp);
    return text;
}

static int result(struct sop *o, const char *native, int adopted)
{
    struct start_result *r = &o->k->started;

    r->native_id = strdup(native);
    r->queued = 1; /* Slurm runs it: the next jobs poll says when */
    r->adopted = adopted;
    if (!o->k->start->native_id) {
        r->stdout_path = out_path(o->s, o->k->start->loom_id, "out", 0);
        r->stderr_path = out_path(o->s, o->k->start->loom_id, "err", 0);
    }
    if (!r->native_id)
        return loom_error_set(&o->k->err, LOOM_EINTERNAL, "no memory");
    return 0;
}

static void tried(struct srest *s, int64_t id, int yes)
{
    char key[32];

    snprintf(key, sizeof(key), "%lld", (long long)id);
    if (yes && !hmap_get(&s->tried, key))
        hmap_put(&s->tried, key, s);
    else if (!yes)
        hmap_del(&s->tried, key);
}

static void submit_then(struct sop *o, const struct answer *a)
{
    char *id = NULL;

    if (a->status != 200) {
        /* Refused: it is not in Slurm. No answer: it may be (a retry
         * looks first). */
        if (a->status)
            tried(o->s, o->k->start->loom_id, 0);
        done(o, fail_answer(o, a));
        return;
    }
    if (srest_parse_submit(a->doc, &id, &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: POST job/submit",
                          o->s->cluster);
        done(o, -1);
        return;
    }
    tried(o->s, o->k->start->loom_id, 0);
    done(o, result(o, id, 0));
    free(id);
}

/* A job that carries the Loom id is ours when it runs as the job's
 * account or as the account our requests run as (the slurm pack's jobs):
 * another user cannot make Loom take a job of theirs for its own by
 * writing loom:ID into its comment. With rest_auth/local slurmrestd does
 * not say whom it runs as: any. */
static int ours(const struct srest *s, const struct start_req *req,
                const char *owner)
{
    const char *self = s->auth == SREST_KEY ? s->user : s->token_user;

    if (s->auth == SREST_LOCAL || !owner) /* v0.0.36 names no owner */
        return 1;
    return (req->account && !strcmp(owner, req->account)) ||
           (self && !strcmp(owner, self));
}

/* A start of a Loom id seen before: is a job of ours there already? */
static void adopt_then(struct sop *o, const struct answer *a)
{
    struct cl_job_list l = {0};

    if (a->status != 200 ||
        srest_parse_jobs(a->doc, &l, &o->s->max_job_id, &o->k->err) < 0) {
        if (a->status != 200)
            fail_answer(o, a);
        done(o, -1);
        return;
    }
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].loom_id == o->k->start->loom_id &&
            ours(o->s, o->k->start, l.v[i].owner)) {
            int rc = result(o, l.v[i].native_id, 1);
            cl_job_list_fini(&l);
            tried(o->s, o->k->start->loom_id, 0);
            done(o, rc);
            return;
        }
    cl_job_list_fini(&l);
    submit(o);
}

static void submit(struct sop *o)
{
    const struct start_req *req = o->k->start;

    tried(o->s, req->loom_id, 1);
    o->method = "POST";
    snprintf(o->path, sizeof(o->path), "job/submit");
    o->as_user = o->s->auth != SREST_LOCAL ? req->account : NULL;
    o->then = submit_then;
    free(o->body);
    o->body = submit_body(o->s, req);
    send_req(o);
}

static void released_then(struct sop *o, const struct answer *a)
{
    done(o, a->status == 200 ? result(o, o->native, 0) : fail_answer(o, a));
}

/* A job its user submitted held: put it on the nodes and release it,
 * unless it is no longer held (a start that died half-way). */
static void held_then(struct sop *o, const struct answer *a)
{
    json_t *j = json_array_get(json_object_get(a->doc, "jobs"), 0);
    const char *st = json_string_value(json_object_get(j, "job_state"));
    const char *why = json_string_value(json_object_get(j, "state_reason"));
    const struct start_req *req = o->k->start;
    json_t *b;
    char *list;

    if (a->status != 200 || !st) {
        done(o, a->status == 200 ? fail(o, LOOM_ETEMP, "no job_state in the "
                                        "answer")
                                 : fail_answer(o, a));
        return;
    }
    if (strcmp(st, "PENDING") || !why || strcmp(why, "JobHeldUser")) {
        done(o, result(o, o->native, 0));
        return;
    }
    list = node_list(req);
    b = list ? json_pack("{s:s, s:[I,I], s:b}", "nodelist", list, "nodes",
                         (json_int_t)req->n_nodes, (json_int_t)req->n_nodes,
                         "hold", 0)
             : NULL;
    free(list);
    free(o->body);
    o->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    o->method = "POST";
    o->then = released_then;
    send_req(o);
}

static int is_job_id(const char *id)
{
    return id && *id && strspn(id, "0123456789_") == strlen(id) &&
           strlen(id) < 32;
}

static int start(struct srest *s, struct sop *o)
{
    const struct start_req *req = o->k->start;
    char key[32];

    if (req->native_id) {
        if (!is_job_id(req->native_id))
            return 1;
        o->native = strdup(req->native_id);
        snprintf(o->path, sizeof(o->path), "job/%s", req->native_id);
        o->then = held_then;
    } else {
        snprintf(key, sizeof(key), "%lld", (long long)req->loom_id);
        if (!req->adopt && !hmap_get(&s->tried, key)) {
            submit(o);
            return 0;
        }
        snprintf(o->path, sizeof(o->path), "jobs");
        o->then = adopt_then;
    }
    send_req(o);
    return 0;
}

/* ---- cancel, hold, release ------------------------------------------------ */

static void cancel_then(struct sop *o, const struct answer *a)
{
    char slurm[320];
    unsigned long id = strtoul(o->k->native_id, NULL, 10);

    if (a->status == 200) {
        done(o, 0);
        return;
    }
    /* Unknown: purged after MinJobAge if Slurm gave that id before. */
    if (srest_first_error(a->doc, slurm, sizeof(slurm)) == 2017) {
        done(o, id <= o->s->max_job_id ? 0
                : fail(o, LOOM_EINVAL, "Slurm has no job %s",
                       o->k->native_id));
        return;
    }
    done(o, fail_answer(o, a));
}

static void hold_then(struct sop *o, const struct answer *a)
{
    done(o, a->status == 200 ? 0 : fail_answer(o, a));
}

int srest_call(void *self, struct adaptor_call *k)
{
    struct srest *s = self;
    struct sop *o;
    int op = k->op;

    if (op == LOOM_OP_SUSPEND || op == LOOM_OP_RESUME ||
        op == LOOM_OP_SET_NODE_STATE ||
        (s->settled && s->vi == 2 &&
         (op == LOOM_OP_NODES || op == LOOM_OP_QUEUES)))
        return 1; /* slurmrestd cannot: the fallback pack */
    if ((op == LOOM_OP_CANCEL || op == LOOM_OP_HOLD ||
         op == LOOM_OP_RELEASE) && !is_job_id(k->native_id))
        return 1; /* the pack says why it is no Slurm job */
    if (!(o = sop_new(s, k, op == LOOM_OP_CANCEL ? "DELETE" : "GET", NULL)))
        return 1;
    switch (op) {
    case LOOM_OP_NODES:
        list_path(o, "nodes", s->nodes_at);
        o->then = nodes_then;
        break;
    case LOOM_OP_QUEUES:
        list_path(o, "partitions", s->parts_at);
        o->then = parts_then;
        break;
    case LOOM_OP_JOBS:
        list_path(o, "jobs", s->jobs_at);
        o->then = jobs_then;
        break;
    case LOOM_OP_START:
        if (start(s, o) == 0)
            return 0;
        sop_unlink_free(o); /* handed back: the pack says why */
        return 1;
    case LOOM_OP_CANCEL:
        snprintf(o->path, sizeof(o->path), "job/%s", k->native_id);
        o->then = cancel_then;
        break;
    default: /* hold, release */
        snprintf(o->path, sizeof(o->path), "job/%s", k->native_id);
        o->method = "POST";
        o->body = strdup(op == LOOM_OP_HOLD ? "{\"hold\":true}"
                                            : "{\"hold\":false}");
        o->then = hold_then;
    }
    send_req(o);
    return 0;
}
