/* slurmrest_ops.c - the slurmrestd adaptor's operations: call() and the
 * lists (nodes, jobs, partitions), cancel, hold and release. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/slurmrest.h"

/* A full list of jobs, nodes and partitions at least this often, even when
 * slurmrestd says nothing changed (a clock that differs from slurmctld's
 * cannot hide a change for longer). */
#define FULL_EVERY_S 60

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
    srest_done(o, 0);
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
        srest_send(o);
        return;
    } else if (a->status != 200) {
        cl_node_list_fini(&s->nodes);
        s->nodes_at = 0;
        srest_done(o, srest_fail_answer(o, a));
        return;
    } else if (srest_parse_nodes(a->doc, s->partition, &l, &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET nodes", s->cluster);
        srest_done(o, -1);
        return;
    } else {
        cl_node_list_fini(&s->nodes);
        s->nodes = l;
        s->nodes_at = o->asked;
    }
    if (copy_nodes(&o->k->nodes, &s->nodes) < 0) {
        cl_node_list_fini(&o->k->nodes);
        srest_done(o, loom_error_set(&o->k->err, LOOM_EINTERNAL, "no memory"));
        return;
    }
    srest_done(o, 0);
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
        srest_done(o, srest_fail_answer(o, a));
        return;
    } else if (srest_parse_partitions(a->doc, s->partition, &l,
                                      &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET partitions",
                          s->cluster);
        srest_done(o, -1);
        return;
    } else {
        cl_queue_list_fini(&s->parts);
        s->parts = l;
        s->parts_at = o->asked;
    }
    if (copy_queues(&o->k->queues, &s->parts) < 0) {
        cl_queue_list_fini(&o->k->queues);
        srest_done(o, loom_error_set(&o->k->err, LOOM_EINTERNAL, "no memory"));
        return;
    }
    srest_done(o, 0);
}

static void jobs_then(struct sop *o, const struct answer *a)
{
    struct srest *s = o->s;

    if (a->status == 304 && s->jobs_at) {
        o->k->complete = 0; /* nothing changed: nothing to say */
        srest_done(o, 0);
        return;
    }
    if (a->status != 200) {
        s->jobs_at = 0;
        srest_done(o, srest_fail_answer(o, a));
        return;
    }
    if (srest_scan_jobs(a->text, a->len, &o->k->jobs, &s->max_job_id,
                        &o->k->err) < 0) {
        loom_error_prefix(&o->k->err, "cluster %s: GET jobs", s->cluster);
        s->jobs_at = 0;
        srest_done(o, -1);
        return;
    }
    o->k->complete = 1;
    s->jobs_at = o->asked;
    if (srest_usage_ask(o))
        return; /* the usage's last answer ends the op */
    srest_usage_apply(o);
    srest_done(o, 0);
}

/* ---- cancel, hold, release ------------------------------------------------ */

static void cancel_then(struct sop *o, const struct answer *a)
{
    char slurm[320];
    unsigned long id = strtoul(o->k->native_id, NULL, 10);

    if (a->status == 200) {
        srest_done(o, 0);
        return;
    }
    /* Unknown: purged after MinJobAge if Slurm gave that id before. */
    if (srest_first_error(a->doc, slurm, sizeof(slurm)) == 2017) {
        srest_done(o, id <= o->s->max_job_id ? 0
                : srest_fail(o, LOOM_EINVAL, "Slurm has no job %s",
                       o->k->native_id));
        return;
    }
    srest_done(o, srest_fail_answer(o, a));
}

static void hold_then(struct sop *o, const struct answer *a)
{
    srest_done(o, a->status == 200 ? 0 : srest_fail_answer(o, a));
}

int srest_call(void *self, struct adaptor_call *k)
{
    struct srest *s = self;
    struct sop *o;
    int op = k->op;

    if (op == LOOM_OP_SUSPEND || op == LOOM_OP_RESUME ||
        op == LOOM_OP_SET_NODE_STATE || op == LOOM_OP_RESERVE ||
        op == LOOM_OP_UNRESERVE ||
        (s->settled && s->vi == 2 &&
         (op == LOOM_OP_NODES || op == LOOM_OP_QUEUES)))
        return 1; /* slurmrestd cannot: the fallback pack */
    if (srest_as_pack(s, op))
        return 1; /* rest_auth/local: the pack acts as the job's account */
    if ((op == LOOM_OP_CANCEL || op == LOOM_OP_HOLD ||
         op == LOOM_OP_RELEASE) && !srest_is_job_id(k->native_id))
        return 1; /* the pack says why it is no Slurm job */
    if (!(o = srest_sop_new(s, k, op == LOOM_OP_CANCEL ? "DELETE" : "GET", NULL)))
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
        /* in full while a job waits for its usage: its end is news */
        list_path(o, "jobs", s->usage_waiting ? 0 : s->jobs_at);
        o->then = jobs_then;
        o->raw = 1; /* srest_scan_jobs reads the text */
        break;
    case LOOM_OP_START:
        if (srest_start(s, o) == 0)
            return 0;
        srest_sop_free(o); /* handed back: the pack says why */
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
    srest_send(o);
    return 0;
}
