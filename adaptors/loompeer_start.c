/* loompeer_start.c - the loom adaptor's start: the job submitted held to the
 * inner loomd as its account, then started there on the chosen nodes. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/loompeer.h"
#include "core/directives.h"
#include "core/jsonx.h"
#include "core/log.h"
#include "core/outpath.h"

/* The inner loomd's upper bound on a walltime: a job of none gets it. */
#define WALLTIME_MAX_S 31622400L

/* An output name of this loomd's patterns, expanded for this job, with the
 * % it leaves doubled (the inner loomd expands its own). A new string. */
static char *out_name(const struct start_req *req, const char *pattern)
{
    struct outpath_vars v = {
        .job_id = req->array_id ? req->array_id : req->loom_id,
        .account = req->account, .name = req->name,
        .array_id = req->array_id,
        .task_id = req->array_id ? req->array_task : 0,
        .node = req->n_nodes ? req->nodes[0] : NULL};
    char *x = outpath_expand(pattern, &v), *d;
    size_t k = 0;

    if (!x || !(d = malloc(strlen(x) * 2 + 1))) {
        free(x);
        return NULL;
    }
    for (const char *c = x; *c; c++) {
        if (*c == '%')
            d[k++] = '%';
        d[k++] = *c;
    }
    d[k] = '\0';
    free(x);
    return d;
}

/* POST /v1/jobs's body: the job as asked, held, for the inner cluster,
 * with priority and its requeue, its marker (its id here) in
 * LOOM_OUTER_JOB_ID. The script's directives were applied here:
 * neutralised, as a pack's are. A new string, or NULL. */
static char *submit_body(const struct lpeer *p, const struct start_req *req,
                         const char *marker, int priority)
{
    json_t *env = json_object(), *rq, *job = NULL;
    char *out = out_name(req, req->output ? req->output
                                                  : LOOM_OUTPUT_DEFAULT);
    char *errf = req->error ? out_name(req, req->error) : NULL;
    char *script = req->script ? directives_neutralise(req->script) : NULL;
    char *text = NULL;

    if (!env || !out || (req->error && !errf) || (req->script && !script))
        goto out;
    for (size_t i = 0; req->env && req->env[i]; i++)
        if (jx_set_kv(env, req->env[i]) < 0)
            goto out;
    json_object_set_new(env, LPEER_ID_VAR, json_string(marker));
    rq = json_pack("{s:I, s:I, s:I, s:I, s:s}",
                   "nodes", (json_int_t)req->n_nodes,
                   "cpus_per_node", (json_int_t)(req->cpus_per_node > 0
                                                 ? req->cpus_per_node : 1),
                   "gpus", (json_int_t)req->gpus,
                   "walltime_s", (json_int_t)(req->walltime_s > 0
                                              ? req->walltime_s
                                              : WALLTIME_MAX_S),
                   "cluster", p->inner);
    if (!rq)
        goto out;
    if (req->memory_mb > 0)
        json_object_set_new(rq, "memory_mb", json_integer(req->memory_mb));
    if (req->queue)
        json_object_set_new(rq, "queue", json_string(req->queue));
    job = json_pack("{s:s?, s:O, s:s, s:s?, s:s?, s:o, s:b, s:i, s:b}",
                    "name", req->name, "env", env, "output", out, "error",
                    errf, "workdir", req->workdir, "request", rq, "hold", 1,
                    "priority", priority, "requeue", !req->no_requeue);
    if (!job)
        goto out;
    if (script) {
        json_object_set_new(job, "script", json_string(script));
    } else {
        json_t *argv = json_array();
        for (size_t i = 0; argv && req->command && req->command[i]; i++)
            json_array_append_new(argv, json_string(req->command[i]));
        json_object_set_new(job, "command", argv);
    }
    text = json_dumps(job, JSON_COMPACT);
out:
    json_decref(env);
    json_decref(job);
    free(out);
    free(errf);
    free(script);
    return text;
}

/* POST /v1/jobs/ID/start's body: the chosen nodes, by name. */
static char *start_body(const struct lpeer *p, const struct start_req *req)
{
    json_t *nodes = json_array(), *b;
    char *text;

    for (size_t i = 0; nodes && i < req->n_nodes; i++)
        json_array_append_new(nodes, json_string(req->nodes[i]));
    b = nodes ? json_pack("{s:s, s:o}", "cluster", p->inner, "nodes", nodes)
              : NULL;
    text = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    return text;
}

static int set_result(struct lop *o, const struct lanswer *a, int adopted)
{
    struct start_result *r = &o->k->started;
    const char *out = jx_str(a->doc, "stdout", NULL);
    const char *errf = jx_str(a->doc, "stderr", NULL);

    r->adopted = adopted;
    r->queued = 1; /* the next jobs poll says when it runs */
    if (!(r->native_id = strdup(o->native)) ||
        (out && !(r->stdout_path = strdup(out))) ||
        (errf && !(r->stderr_path = strdup(errf)))) {
        start_result_fini(r);
        return lpeer_fail(o, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

static void started(struct lop *o, const struct lanswer *a)
{
    if (a->status == 202) {
        lpeer_done(o, set_result(o, a, 0));
        return;
    }
    /* a second start of the same job, which started meanwhile; any other
     * 409 (the nodes cannot take it now) puts the job back in the queue */
    if (a->status == 409 &&
        strstr(jx_str(json_object_get(a->doc, "error"), "message", ""),
               "only a pending or held job can be started")) {
        lpeer_done(o, set_result(o, a, 1));
        return;
    }
    lpeer_done(o, lpeer_fail_answer(o, a));
}

/* POST /v1/jobs/ID/start: the inner job on the nodes chosen, with this
 * loomd's own token (scheduler may start any waiting job). */
static void start_on_nodes(struct lop *o)
{
    free(o->body);
    free(o->idem);
    o->idem = NULL;
    o->as_loomd = 1;
    o->method = "POST";
    o->body = start_body(o->p, o->k->start);
    snprintf(o->path, sizeof(o->path), "/v1/jobs/%s/start", o->native);
    o->then = started;
    if (!o->body) {
        lpeer_fail(o, LOOM_EINTERNAL, "out of memory");
        lpeer_end_unsent(o);
        return;
    }
    lpeer_send(o);
}

/* The inner loomd refused the priority (above its max_user_priority, and
 * the job is submitted as its account, a user there): submit it once more
 * with 0, the priority any user may give. 1 when sent again. */
static int lower_priority(struct lop *o, const struct lanswer *a)
{
    const struct start_req *req = o->k->start;
    json_t *e = json_object_get(a->doc, "error");
    char marker[LPEER_MARKER_MAX];
    char *body;

    if (a->status != 403 || o->priority <= 0 ||
        strcmp(jx_str(e, "field", ""), "priority") != 0 ||
        lpeer_marker(o->p, (long long)req->loom_id, marker) < 0 ||
        !(body = submit_body(o->p, req, marker, 0)))
        return 0;
    log_info("job=%lld: the inner loomd refused its priority %d (%s): "
             "submitted there with priority 0", (long long)req->loom_id,
             o->priority, jx_str(e, "message", "403"));
    free(o->body);
    o->body = body;
    o->priority = 0;
    lpeer_send(o);
    return 1;
}

static void submitted(struct lop *o, const struct lanswer *a)
{
    const struct start_req *req = o->k->start;
    const char *id = jx_str(a->doc, "id", NULL);
    const char *acc = jx_str(a->doc, "account", "");
    const char *st = jx_str(a->doc, "state", "");

    if (lower_priority(o, a))
        return;
    if (a->status != 201 && a->status != 200) {
        lpeer_done(o, lpeer_fail_answer(o, a));
        return;
    }
    if (!id || !lpeer_is_job_id(id) || !(o->native = strdup(id))) {
        lpeer_done(o, lpeer_fail(o, LOOM_ETEMP, "the answer has no job id"));
        return;
    }
    if (strcmp(acc, req->account) != 0) {
        /* the token of token_dir/ACCOUNT is another identity's there */
        lpeer_done(o, lpeer_fail(o, LOOM_EPERM, "the inner loomd took job "
                                 "%s as account '%s', not %s: the token "
                                 "for %s is not that account's there (the "
                                 "job is left held)", id, acc,
                                 req->account, req->account));
        return;
    }
    if (!hmap_get(&o->p->account, id) &&
        !lpeer_note_account(o->p, id, strtoll(id, NULL, 10), acc, 0)) {
        lpeer_done(o, lpeer_fail(o, LOOM_EINTERNAL, "out of memory"));
        return;
    }
    if (strcmp(st, "held") != 0 && strcmp(st, "pending") != 0) {
        lpeer_done(o, set_result(o, a, 1)); /* started before */
        return;
    }
    start_on_nodes(o);
}

void lpeer_start(struct lop *o)
{
    const struct start_req *req = o->k->start;
    char marker[LPEER_MARKER_MAX], key[LPEER_MARKER_MAX + 8];

    o->method = "POST";
    o->then = submitted;
    snprintf(o->path, sizeof(o->path), "/v1/jobs");
    /* a job of the inner cluster held there for this loomd (hold_for_loom):
     * started as it is, never submitted again */
    if (req->native_id) {
        if (!lpeer_is_job_id(req->native_id))
            lpeer_fail(o, LOOM_EINVAL, "'%s' is not a job id of the inner "
                       "loomd", req->native_id);
        else if (!(o->native = strdup(req->native_id)))
            lpeer_fail(o, LOOM_EINTERNAL, "out of memory");
        if (o->native)
            start_on_nodes(o);
        else
            lpeer_end_unsent(o);
        return;
    }
    if (!req->account || !*req->account) {
        lpeer_fail(o, LOOM_EPERM, "job %lld has no account to run as",
                   (long long)req->loom_id);
        lpeer_end_unsent(o);
        return;
    }
    snprintf(o->account, sizeof(o->account), "%s", req->account);
    /* the same job, the same key: a second start finds the first's job
     * (the marker's MAC keeps another loomd's or an earlier one's apart) */
    if (lpeer_marker(o->p, (long long)req->loom_id, marker) < 0) {
        lpeer_fail(o, LOOM_EINTERNAL, "cannot sign the job's marker "
                   "(OpenSSL HMAC failed)");
        lpeer_end_unsent(o);
        return;
    }
    snprintf(key, sizeof(key), "loom-%s", marker);
    o->priority = req->priority;
    if (!(o->idem = strdup(key)) ||
        !(o->body = submit_body(o->p, req, marker, req->priority))) {
        lpeer_fail(o, LOOM_EINTERNAL, "out of memory");
        lpeer_end_unsent(o);
        return;
    }
    lpeer_send(o);
}
