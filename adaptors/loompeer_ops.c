/* loompeer_ops.c - the loom adaptor's operations: call(), the lists (nodes,
 * jobs, queues), job control and node states. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/loompeer.h"
#include "core/jsonx.h"

/* ---- nodes, jobs, queues ------------------------------------------------ */

static void nodes_then(struct lop *o, const struct lanswer *a)
{
    if (a->status != 200) {
        lpeer_done(o, lpeer_fail_answer(o, a));
        return;
    }
    if (lpeer_parse_nodes(a->doc, &o->k->nodes, &o->k->err) < 0) {
        cl_node_list_fini(&o->k->nodes);
        loom_error_prefix(&o->k->err, "cluster %s: GET nodes", o->p->cluster);
        lpeer_done(o, -1);
        return;
    }
    lpeer_done(o, 0);
}

static void queues_then(struct lop *o, const struct lanswer *a)
{
    if (a->status != 200) {
        lpeer_done(o, lpeer_fail_answer(o, a));
        return;
    }
    if (lpeer_parse_queues(a->doc, &o->k->queues, &o->k->err) < 0) {
        cl_queue_list_fini(&o->k->queues);
        loom_error_prefix(&o->k->err, "cluster %s: GET queues",
                          o->p->cluster);
        lpeer_done(o, -1);
        return;
    }
    lpeer_done(o, 0);
}

/* Ask for page i of the last complete list again, with its ETag. */
static void ask_again(struct lop *o, size_t i)
{
    snprintf(o->path, sizeof(o->path), "%s", o->p->jobs_pages[i].path);
    o->inm = o->p->jobs_pages[i].etag;
    lpeer_send(o);
}

/* Note the page at o->path with its ETag among those of the list read. */
static void note_page(struct lop *o, const char *etag)
{
    struct lpeer *p = o->p;
    struct lpage *v;

    if (!etag || strlen(etag) >= sizeof(v->etag)) {
        o->no_etag = 1;
        return;
    }
    if (p->n_jobs_pages == p->cap_jobs_pages) {
        size_t cap = p->cap_jobs_pages ? 2 * p->cap_jobs_pages : 4;
        if (!(v = realloc(p->jobs_pages, cap * sizeof(*v)))) {
            o->no_etag = 1; /* the list is read whole next time */
            return;
        }
        p->jobs_pages = v;
        p->cap_jobs_pages = cap;
    }
    v = &p->jobs_pages[p->n_jobs_pages++];
    snprintf(v->path, sizeof(v->path), "%s", o->path);
    snprintf(v->etag, sizeof(v->etag), "%s", etag);
}

/* A page of jobs; the next is asked for while the answer names one. The
 * list is complete from p->after on: every job below it was listed in a
 * final state before, which this loomd took (a job missing from it would
 * be one the inner loomd lost). The pages of the last complete list are
 * asked for again, in order, with their ETags: a 304 says nothing in that
 * page changed; when every page is a 304 nothing did, which is an empty
 * list that is not complete (nothing to say), parsed from nothing. A page
 * that changed after pages that did not: those were not read, and the
 * list is read whole from its first page. */
static void jobs_then(struct lop *o, const struct lanswer *a)
{
    struct lpeer *p = o->p;
    const char *next;

    if (a->status == 304 && o->inm) {
        if (++o->quiet < p->n_jobs_pages) {
            ask_again(o, o->quiet);
            return;
        }
        o->k->complete = 0;
        lpeer_done(o, 0);
        return;
    }
    if (a->status != 200) {
        p->n_jobs_pages = 0;
        cl_job_list_fini(&o->k->jobs);
        lpeer_done(o, lpeer_fail_answer(o, a));
        return;
    }
    if (o->quiet) {
        o->quiet = 0;
        snprintf(o->path, sizeof(o->path), "%s", p->jobs_pages[0].path);
        p->n_jobs_pages = 0;
        o->inm = NULL;
        lpeer_send(o);
        return;
    }
    if (!o->pages)
        p->n_jobs_pages = 0; /* this list's pages replace the last one's */
    if (lpeer_parse_jobs(p, a->doc, &o->k->jobs, &o->low, &o->high,
                         &o->k->err) < 0) {
        p->n_jobs_pages = 0;
        cl_job_list_fini(&o->k->jobs);
        loom_error_prefix(&o->k->err, "cluster %s: GET jobs", p->cluster);
        lpeer_done(o, -1);
        return;
    }
    note_page(o, a->etag);
    next = jx_str(a->doc, "next", NULL);
    if (next && !strncmp(next, "/v1/jobs?", 9) &&
        strlen(next) < sizeof(o->path)) {
        snprintf(o->path, sizeof(o->path), "%s", next);
        o->inm = NULL;
        o->pages++;
        lpeer_send(o);
        return;
    }
    if (o->no_etag)
        p->n_jobs_pages = 0;
    o->k->complete = 1;
    if (o->low)
        p->after = o->low - 1;
    else if (o->high > p->after)
        p->after = o->high;
    lpeer_prune_accounts(p);
    lpeer_done(o, 0);
}

/* ---- job control, node states ------------------------------------------- */

/* Cancel: done when the inner loomd says so, or says the job has ended. */
static void cancel_then(struct lop *o, const struct lanswer *a)
{
    const char *msg = jx_str(json_object_get(a->doc, "error"), "message", "");

    if (a->status == 200 || a->status == 202 ||
        (a->status == 409 && strstr(msg, " already"))) {
        lpeer_done(o, 0);
        return;
    }
    lpeer_done(o, lpeer_fail_answer(o, a));
}

static void plain_then(struct lop *o, const struct lanswer *a)
{
    lpeer_done(o, a->status == 200 || a->status == 202
                      ? 0 : lpeer_fail_answer(o, a));
}

static int node_state_op(struct lop *o)
{
    struct adaptor_call *k = o->k;
    json_t *b;

    if (!lpeer_name_ok(k->node))
        return lpeer_fail(o, LOOM_ENOENT, "no node '%s'", k->node);
    snprintf(o->path, sizeof(o->path), "/v1/nodes/%s/%s/state", o->p->inner,
             k->node);
    o->method = "PUT";
    b = json_pack("{s:s, s:s?}", "state", k->state, "reason", k->reason);
    o->body = b ? json_dumps(b, JSON_COMPACT) : NULL;
    json_decref(b);
    o->then = plain_then;
    return o->body ? 0 : lpeer_fail(o, LOOM_EINTERNAL, "out of memory");
}

/* Cancel, suspend, resume, hold, release: as the job's account (the owner
 * may, this loomd's own token may not). */
static int job_op(struct lop *o)
{
    struct adaptor_call *k = o->k;
    const struct lacct *acc;
    const char *verb;

    if (!k->native_id || !lpeer_is_job_id(k->native_id))
        return lpeer_fail(o, LOOM_EINVAL, "'%s' is not a job id of the "
                          "inner loomd", k->native_id ? k->native_id : "");
    if (!(acc = hmap_get(&o->p->account, k->native_id)) &&
        k->op == LOOM_OP_CANCEL &&
        strtoll(k->native_id, NULL, 10) <= o->p->after)
        return 1; /* it ended, was listed so, and forgotten: done */
    if (!acc)
        return lpeer_fail(o, LOOM_ETEMP, "job %s: its account is not known "
                          "yet (the next poll lists it)", k->native_id);
    snprintf(o->account, sizeof(o->account), "%s", acc->account);
    switch (k->op) {
    case LOOM_OP_CANCEL:
        o->method = "DELETE";
        snprintf(o->path, sizeof(o->path), "/v1/jobs/%s", k->native_id);
        o->then = cancel_then;
        return 0;
    case LOOM_OP_SUSPEND:
        verb = "suspend";
        break;
    case LOOM_OP_RESUME:
        verb = "resume";
        break;
    case LOOM_OP_HOLD:
        verb = "hold";
        break;
    default:
        verb = "release";
        break;
    }
    o->method = "POST";
    snprintf(o->path, sizeof(o->path), "/v1/jobs/%s/%s", k->native_id, verb);
    o->then = plain_then;
    return 0;
}

int lpeer_call(void *self, struct adaptor_call *k)
{
    struct lpeer *p = self;
    struct lop *o = lpeer_op_new(p, k, "GET", NULL);
    int rc = 0;

    if (!o)
        return 1; /* the blocking op says it cannot */
    /* the lists and node states with this loomd's own token; a start and
     * job control as the job's account */
    o->as_loomd = k->op == LOOM_OP_NODES || k->op == LOOM_OP_QUEUES ||
                  k->op == LOOM_OP_JOBS || k->op == LOOM_OP_SET_NODE_STATE;
    switch (k->op) {
    case LOOM_OP_NODES:
        snprintf(o->path, sizeof(o->path), "/v1/nodes?cluster=%s", p->inner);
        o->then = nodes_then;
        break;
    case LOOM_OP_QUEUES:
        snprintf(o->path, sizeof(o->path), "/v1/queues/%s", p->inner);
        o->then = queues_then;
        break;
    case LOOM_OP_JOBS:
        snprintf(o->path, sizeof(o->path), "/v1/jobs?cluster=%s&after=%lld"
                 "&limit=%ld&fields=" LPEER_JOB_FIELDS, p->inner, p->after,
                 p->page);
        if (p->n_jobs_pages && !strcmp(o->path, p->jobs_pages[0].path))
            o->inm = p->jobs_pages[0].etag;
        o->then = jobs_then;
        break;
    case LOOM_OP_START:
        lpeer_start(o);
        return 0;
    case LOOM_OP_SET_NODE_STATE:
        rc = node_state_op(o);
        break;
    default:
        rc = job_op(o);
        break;
    }
    if (rc < 0)
        lpeer_end_unsent(o);
    else if (rc > 0)
        lpeer_end_done(o);
    else
        lpeer_send(o);
    return 0;
}
