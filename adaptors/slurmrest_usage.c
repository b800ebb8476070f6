/* slurmrest_usage.c - what an ended job used, from slurmdbd's record
 * through slurmrestd's openapi/dbv0.0.38 (GET /slurmdb/v0.0.38/job/ID):
 * the figures the slurm pack reads from sacct. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "adaptors/slurmrest.h"
#include "core/log.h"

/* A cluster whose slurmrestd has no accounting is asked again after this
 * long (as the slurm pack asks sacct again). */
#define NO_ACCT_S 600
/* At most this many records asked for in one poll; the others wait for
 * the next (within the grace time). */
#define MAX_ASK 32

/* What Loom knows of one ended job's usage. */
struct use {
    int known;          /* u holds slurmdbd's figures */
    time_t since;       /* else: when Loom first asked */
    struct cl_usage u;
    unsigned long gen;  /* the last list that had the job */
};

static int ended(const struct cl_job *j)
{
    return !strcmp(j->state, "completed") || !strcmp(j->state, "failed") ||
           !strcmp(j->state, "cancelled");
}

static int no_acct(const struct srest *s)
{
    return s->noacct_at && time(NULL) - s->noacct_at < NO_ACCT_S;
}

int srest_usage_ask(struct sop *o)
{
    struct srest *s = o->s;
    time_t now = time(NULL);

    if (no_acct(s))
        return 0;
    for (size_t i = 0; i < o->k->jobs.n; i++) {
        const struct cl_job *j = &o->k->jobs.v[i];
        struct use *e;
        if (!ended(j) || !j->native_id)
            continue;
        e = hmap_get(&s->usage, j->native_id);
        if (e && (e->known || now - e->since >= s->acct_grace_s))
            continue;
        if (!e) {
            if (!(e = calloc(1, sizeof(*e))) ||
                hmap_put(&s->usage, j->native_id, e) < 0) {
                free(e);
                continue; /* out of memory: no usage */
            }
            e->since = now;
        }
        if (o->ask.n < MAX_ASK && strv_push(&o->ask, j->native_id) < 0)
            break;
    }
    if (!o->ask.n)
        return 0;
    o->db = 1;
    o->raw = 0;
    o->method = "GET";
    o->then = srest_usage_then;
    o->ask_i = 0;
    snprintf(o->path, sizeof(o->path), "job/%s", o->ask.v[0]);
    srest_send(o);
    return 1;
}

/* The sum of the steps' time.WHICH (seconds and microseconds) into *us:
 * 0, or -1 when one is not a pair of non-negative integers. */
static int cpu_us(const json_t *steps, const char *which, long long *us)
{
    const json_t *st;
    size_t i;

    *us = 0;
    json_array_foreach(steps, i, st) {
        json_t *t = json_object_get(json_object_get(st, "time"), which);
        json_t *sec = json_object_get(t, "seconds");
        json_t *usec = json_object_get(t, "microseconds");
        if (!json_is_integer(sec) || !json_is_integer(usec) ||
            json_integer_value(sec) < 0 || json_integer_value(usec) < 0)
            return -1;
        *us += json_integer_value(sec) * 1000000LL + json_integer_value(usec);
    }
    return 0;
}

/* The largest "mem" of the steps' tres.requested.max (bytes, as sacct's
 * MaxRSS) in KiB, rounded; 0 for none. */
static long long rss_kb(const json_t *steps)
{
    const json_t *st, *t;
    long long max = 0;
    size_t i, k;

    json_array_foreach(steps, i, st) {
        json_t *l = json_object_get(json_object_get(json_object_get(st,
                                     "tres"), "requested"), "max");
        json_array_foreach(l, k, t) {
            const char *type = json_string_value(json_object_get(t, "type"));
            json_t *c = json_object_get(t, "count");
            if (type && !strcmp(type, "mem") && json_is_integer(c) &&
                json_integer_value(c) > max)
                max = json_integer_value(c);
        }
    }
    return (max + 512) / 1024;
}

int srest_parse_usage(const json_t *doc, const char *id, struct cl_usage *u)
{
    static const char *const active[] = {
        "RUNNING", "PENDING", "REQUEUED", "SUSPENDED", "RESIZING",
    };
    long long want = strtoll(id, NULL, 10), user, sys;
    const json_t *j;
    size_t i;

    json_array_foreach(json_object_get(doc, "jobs"), i, j) {
        const char *st = json_string_value(json_object_get(
            json_object_get(j, "state"), "current"));
        json_t *steps = json_object_get(j, "steps");
        if (json_integer_value(json_object_get(j, "job_id")) != want)
            continue;
        if (!st || !json_is_array(steps))
            return 0;
        for (size_t k = 0; k < sizeof(active) / sizeof(*active); k++)
            if (!strncmp(st, active[k], strlen(active[k])))
                return 0;
        if (cpu_us(steps, "user", &user) < 0 ||
            cpu_us(steps, "system", &sys) < 0)
            return 0;
        *u = (struct cl_usage){1, user / 1000, sys / 1000, rss_kb(steps)};
        return 1;
    }
    return 0;
}

void srest_usage_then(struct sop *o, const struct answer *a)
{
    struct srest *s = o->s;
    const char *id = o->ask.v[o->ask_i];
    struct use *e = hmap_get(&s->usage, id);
    char why[320];

    if (o->local) { /* not sent: as good as not answered */
        o->local = 0;
        o->k->err = (struct loom_error){0};
    }
    /* no path: slurmrestd runs without openapi/dbv0.0.38 (it loads it
     * only where slurmdbd is) */
    if (srest_no_path(a->status, a->text)) {
        s->noacct_at = time(NULL);
        log_info("thread=server cluster=%s slurmrestd has no accounting "
                 "(no /slurmdb/v0.0.38/: openapi/dbv0.0.38 is not loaded): "
                 "ended jobs have no usage; asking again in %d s",
                 s->cluster, NO_ACCT_S);
    } else if (a->status == 200 && a->doc && e) {
        e->known = srest_parse_usage(a->doc, id, &e->u);
    } else if (a->status) {
        srest_first_error(a->doc, why, sizeof(why));
        log_debug("thread=server cluster=%s job=%s slurmdbd's record: HTTP "
                  "%ld %s", s->cluster, id, a->status, why);
    }
    /* no answer, or a failing server: the rest wait for the next poll,
     * so that a hung slurmrestd holds up one request's timeout, not 32 */
    if (!no_acct(s) && a->status && a->status < 500 &&
        ++o->ask_i < o->ask.n) {
        snprintf(o->path, sizeof(o->path), "job/%s", o->ask.v[o->ask_i]);
        srest_send(o);
        return;
    }
    srest_usage_apply(o);
    srest_done(o, 0);
}

/* j as it was before it ended: running on its nodes, or pending. */
static int as_before_end(struct cl_job *j)
{
    int ran = j->start_time && j->nodes.n;
    char *st = strdup(ran ? "running" : "pending");

    if (!st)
        return -1;
    free(j->state);
    j->state = st;
    free(j->reason);
    j->reason = NULL;
    if (!ran)
        j->start_time = 0;
    j->end_time = 0;
    j->has_exit_code = 0;
    j->exit_code = 0;
    j->node_failure = 0;
    return 0;
}

/* Forget the jobs the last list did not have (Slurm forgot them). */
static void prune(struct srest *s)
{
    struct strv gone = {0};

    for (size_t i = 0; i < s->usage.cap; i++) {
        struct use *e = hmap_slot_value(&s->usage, i);
        if (e && e->gen != s->usage_gen &&
            strv_push(&gone, hmap_slot_key(&s->usage, i)) < 0)
            break;
    }
    for (size_t i = 0; i < gone.n; i++)
        free(hmap_del(&s->usage, gone.v[i]));
    strv_fini(&gone);
}

void srest_usage_apply(struct sop *o)
{
    struct srest *s = o->s;
    time_t now = time(NULL);
    int noacct = no_acct(s);

    s->usage_gen++;
    s->usage_waiting = 0;
    for (size_t i = 0; i < o->k->jobs.n; i++) {
        struct cl_job *j = &o->k->jobs.v[i];
        struct use *e;
        if (!ended(j) || !j->native_id ||
            !(e = hmap_get(&s->usage, j->native_id)))
            continue;
        e->gen = s->usage_gen;
        if (e->known)
            j->usage = e->u;
        else if (!noacct && now - e->since < s->acct_grace_s &&
                 as_before_end(j) == 0)
            s->usage_waiting++;
    }
    prune(s);
}

static void use_free(void *e)
{
    free(e);
}

void srest_usage_drop(struct srest *s)
{
    hmap_fini_values(&s->usage, use_free);
}
