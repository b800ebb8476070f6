/* slurmrest_start.c - the slurmrestd adaptor's start: submit, adopt, or
 * release a user's held job onto the nodes. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/script.h"
#include "adaptors/slurmrest.h"
#include "core/directives.h"
#include "core/jsonx.h"

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

struct paths {
    char *dir, *out, *err;
};

/* Where the job works and writes: as the slurm pack's (it runs as its
 * account): the request's workdir, else the account's home; output and
 * error as asked, by default loom-ID.out in it. */
static int job_paths(const struct srest *s, const struct start_req *req,
                     struct paths *p, struct loom_error *err)
{
    return script_job_paths(s->cluster, 1, req, s->workdir, &p->dir,
                            &p->out, &p->err, err);
}

static void paths_fini(struct paths *p)
{
    free(p->dir);
    free(p->out);
    free(p->err);
    *p = (struct paths){0};
}

/* A path for Slurm, which expands %-patterns in file names: a % Loom left
 * (a literal one) doubled. A new string, or NULL. */
static char *pct_doubled(const char *path)
{
    size_t n = strlen(path) * 2 + 1, k = 0;
    char *d = malloc(n);

    if (!d)
        return NULL;
    for (const char *c = path; *c; c++) {
        if (*c == '%')
            d[k++] = '%';
        d[k++] = *c;
    }
    d[k] = '\0';
    return d;
}

/* POST job/submit's body: the slurm pack's sbatch, in JSON. The script's
 * directives that Loom applied through the request are neutralised, as
 * the pack's are (slurmrestd reads none, but the script is the same). */
static char *submit_body(const struct srest *s, const struct start_req *asked,
                         const struct paths *p)
{
    struct start_req copy = *asked, *req = &copy;
    char *neutral = asked->script ? directives_neutralise(asked->script)
                                  : NULL;
    char id[32], comment[40], *script, *text = NULL;
    char *out = pct_doubled(p->out), *errp = pct_doubled(p->err);
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
    for (size_t i = 0; i < s->env.n; i++)
        if (jx_set_kv(env, s->env.v[i]) < 0)
            goto out;
    job = json_pack("{s:s, s:s, s:O?, s:[I,I], s:i, s:s, s:s, s:s, s:O}",
                    "name", req->name ? req->name : comment,
                    "comment", comment, "nodelist", nodes, "nodes",
                    (json_int_t)req->n_nodes, (json_int_t)req->n_nodes,
                    "tasks_per_node", 1, "current_working_directory",
                    p->dir, "standard_output", out, "standard_error",
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
    if (req->reservation)
        json_object_set_new(job, "reservation",
                            json_string(req->reservation));
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
        struct paths p = {0};
        struct loom_error ignored;
        if (job_paths(o->s, o->k->start, &p, &ignored) == 0) {
            r->stdout_path = p.out;
            r->stderr_path = p.err;
            p.out = p.err = NULL;
        }
        paths_fini(&p);
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
        srest_done(o, srest_fail_answer(o, a));
        return;
    }
    if (srest_parse_submit(a->doc, &id, &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: POST job/submit",
                          o->s->cluster);
        srest_done(o, -1);
        return;
    }
    tried(o->s, o->k->start->loom_id, 0);
    srest_done(o, result(o, id, 0));
    free(id);
}

/* A job that carries the Loom id is ours when it runs as the job's
 * account or as the account our requests run as (the slurm pack's jobs):
 * another user cannot make Loom take a job of theirs for its own by
 * writing loom:ID into its comment. (Under rest_auth/local starts go to
 * the pack: srest_as_pack.) */
static int ours(const struct srest *s, const struct start_req *req,
                const char *owner)
{
    const char *self = s->auth == SREST_KEY ? s->user : s->token_user;

    if (!owner) /* v0.0.36 names no owner */
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
            srest_fail_answer(o, a);
        srest_done(o, -1);
        return;
    }
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].loom_id == o->k->start->loom_id &&
            ours(o->s, o->k->start, l.v[i].owner)) {
            int rc = result(o, l.v[i].native_id, 1);
            cl_job_list_fini(&l);
            tried(o->s, o->k->start->loom_id, 0);
            srest_done(o, rc);
            return;
        }
    cl_job_list_fini(&l);
    submit(o);
}

/* Submitted as the job's account, never as ours: a job that records none
 * (a record from before accounts) is refused, as the slurm pack does. */
static void submit(struct sop *o)
{
    const struct start_req *req = o->k->start;
    struct paths p = {0};

    if (!req->account || !*req->account) {
        loom_error_set(&o->k->err, LOOM_EINVAL, "cluster %s: job %lld has "
                       "no account to run as (a record from before "
                       "accounts)", o->s->cluster, (long long)req->loom_id);
        srest_end_unsent(o);
        return;
    }
    if (job_paths(o->s, req, &p, &o->k->err) < 0) {
        paths_fini(&p);
        srest_end_unsent(o);
        return;
    }
    tried(o->s, req->loom_id, 1);
    o->method = "POST";
    snprintf(o->path, sizeof(o->path), "job/submit");
    o->as_user = req->account; /* never rest_auth/local: srest_as_pack */
    o->then = submit_then;
    free(o->body);
    o->body = submit_body(o->s, req, &p);
    paths_fini(&p);
    srest_send(o);
}

static void released_then(struct sop *o, const struct answer *a)
{
    srest_done(o, a->status == 200 ? result(o, o->native, 0) : srest_fail_answer(o, a));
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
        srest_done(o, a->status == 200 ? srest_fail(o, LOOM_ETEMP, "no job_state in the "
                                        "answer")
                                 : srest_fail_answer(o, a));
        return;
    }
    if (strcmp(st, "PENDING") || !why || strcmp(why, "JobHeldUser")) {
        srest_done(o, result(o, o->native, 0));
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
    srest_send(o);
}

int srest_is_job_id(const char *id)
{
    return id && *id && strspn(id, "0123456789_") == strlen(id) &&
           strlen(id) < 32;
}

int srest_start(struct srest *s, struct sop *o)
{
    const struct start_req *req = o->k->start;
    char key[32];

    if (req->native_id) {
        if (!srest_is_job_id(req->native_id))
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
    srest_send(o);
    return 0;
}

