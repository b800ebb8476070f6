/* plan_run.c - a cycle: the jobs in policy order under FIFO, EASY or
 * conservative backfill. */
/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan_state.h"

#define SHAPES 32 /* shapes that could not start now, remembered a cycle */

/* A shape that found no room now: a job at least as large, as long and as
 * constrained finds none either (the plan only fills up within a run). */
struct shape {
    int nodes;
    struct plan_use use;
    long walltime_s;
    const char *pin;
};

static int commit_place(struct plan *p, const struct plan_job *j, size_t c,
                        const size_t *nodes, double start)
{
    size_t want = j->nodes > 0 ? (size_t)j->nodes : 1;

    for (size_t k = 0; k < want; k++)
        if (plan_take(p, c, nodes[k], start, start + (double)j->walltime_s,
                 &j->per_node) < 0)
            return -1;
    return 0;
}

static int covered(const struct shape *f, size_t n, const struct plan_job *j)
{
    if (j->n_features || j->queue || j->reservation)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (j->nodes >= f[i].nodes && j->per_node.cpus >= f[i].use.cpus &&
            j->per_node.memory_mb >= f[i].use.memory_mb &&
            j->per_node.gpus >= f[i].use.gpus &&
            j->walltime_s >= f[i].walltime_s &&
            ((!f[i].pin && !j->cluster) ||
             (f[i].pin && j->cluster && !strcmp(f[i].pin, j->cluster))))
            return 1;
    return 0;
}

/* ---- a cycle ------------------------------------------------------------- */

/* An entry that says nothing yet. Field by field: a long queue's entries
 * are mostly the reason's unused bytes, not worth writing. */
/* The first of j's groups without room for one more start, or 0. */
static uint32_t full_group(const struct plan_config *cfg,
                           const struct plan_job *j)
{
    for (int g = 0; g < PLAN_GROUPS; g++)
        if (j->group[g] && j->group[g] <= cfg->n_room &&
            cfg->room[j->group[g] - 1] <= 0)
            return j->group[g];
    return 0;
}

static void out_init(struct plan_out *o, int64_t id)
{
    o->id = id;
    o->start = o->planned = o->reserved = 0;
    o->planned_start = 0;
    o->cluster = 0;
    o->nodes = NULL;
    o->n_nodes = 0;
    o->limited = 0;
    o->beyond = 0;
    o->kept = 0;
    o->reason[0] = '\0';
    o->starts = NULL;
    o->n_starts = 0;
}

static void take_room(const struct plan_config *cfg, const struct plan_job *j)
{
    for (int g = 0; g < PLAN_GROUPS; g++)
        if (j->group[g] && j->group[g] <= cfg->n_room)
            cfg->room[j->group[g] - 1]--;
}

/* An entry of several tasks: start as many as have room now, in o->starts.
 * 1 when all of them start, 0 when some are left (o->limited set when a
 * running limit stopped them; else the next found no room now: its shape
 * is remembered in failed), -1 when out of memory. */
static int start_many(struct plan *p, const struct plan_config *cfg,
                      const struct plan_job *j, struct plan_out *o,
                      struct shape *failed, size_t *n_failed)
{
    size_t c, *nodes;
    struct plan_start *v;
    double t;

    while ((long)o->n_starts < j->count) {
        if ((o->limited = full_group(cfg, j)))
            return 0;
        if ((t = plan_place(p, j, p->now, &c, &nodes)) < 0)
            return -1;
        if (t > p->now) {
            free(nodes);
            if (*n_failed < SHAPES && !j->n_features && !j->queue &&
                !j->reservation)
                failed[(*n_failed)++] = (struct shape){
                    j->nodes, j->per_node, j->walltime_s, j->cluster};
            return 0;
        }
        v = realloc(o->starts, (o->n_starts + 1) * sizeof(*v));
        if (!v || commit_place(p, j, c, nodes, p->now) < 0) {
            if (v)
                o->starts = v;
            free(nodes);
            return -1;
        }
        o->starts = v;
        o->starts[o->n_starts++] = (struct plan_start){c, nodes};
        take_room(cfg, j);
    }
    return 1;
}

int plan_run(struct plan *p, const struct plan_config *cfg,
             const struct plan_job *jobs, size_t n, struct plan_out *out)
{
    struct shape failed[SHAPES];
    size_t n_failed = 0, reserved = 0, planned = 0;
    size_t depth = cfg->depth ? cfg->depth : (size_t)-1;
    int64_t blocker = 0;
    size_t i;

    p->overdue_s = cfg->overdue_s > 0 ? cfg->overdue_s : 60;
    p->width = cfg->width;
    p->index_order = cfg->index_order;
    for (i = 0; i < n; i++) {
        const struct plan_job *j = &jobs[i];
        struct plan_out *o = &out[i];
        size_t c, *nodes = NULL;
        double t;
        int reserve;

        out_init(o, j->id);
        if (!j->id)
            continue; /* a hole */
        if ((o->limited = full_group(cfg, j)))
            continue; /* its account (VO, gateway) runs all it may: it
                         waits, and holds nothing up */
        if (j->count > 1 && !(cfg->backfill == PLAN_BF_NONE && blocker) &&
            !covered(failed, n_failed, j)) {
            int all = start_many(p, cfg, j, o, failed, &n_failed);
            if (all < 0)
                goto oom;
            if (all || o->limited)
                continue; /* every task started, or its limits hold the
                             rest: they wait, and hold nothing up */
        } else if (!(cfg->backfill == PLAN_BF_NONE && blocker) &&
                   !covered(failed, n_failed, j)) {
            t = plan_place(p, j, p->now, &c, &nodes);
            if (t < 0)
                goto oom;
            if (t <= p->now) {
                if (commit_place(p, j, c, nodes, p->now) < 0) {
                    free(nodes);
                    goto oom;
                }
                take_room(cfg, j);
                *o = (struct plan_out){.id = j->id, .start = 1, .planned = 1,
                                       .planned_start = p->now,
                                       .cluster = c, .nodes = nodes,
                                       .n_nodes = j->nodes > 0 ?
                                           (size_t)j->nodes : 1};
                continue;
            }
            if (n_failed < SHAPES && !j->n_features && !j->queue &&
                !j->reservation)
                failed[n_failed++] = (struct shape){j->nodes, j->per_node,
                                                    j->walltime_s, j->cluster};
        }
        if (!blocker)
            blocker = j->id; /* the first job that waits */
        /* It waits. Does it get a reservation in the plan, or only an
         * estimate, or nothing (beyond the depth)? */
        reserve = (cfg->backfill == PLAN_BF_EASY && reserved == 0) ||
                  (cfg->backfill != PLAN_BF_EASY && reserved < depth);
        if (!reserve && planned >= depth) {
            o->beyond = 1;
            continue;
        }
        if (!reserve && cfg->keep_estimates && j->estimated) {
            planned++; /* it shows the estimate it had */
            o->kept = 1;
            continue;
        }
        t = plan_place(p, j, PLAN_FOREVER, &c, &nodes);
        if (t < 0)
            goto oom;
        planned++;
        if (t >= PLAN_FOREVER) {
            snprintf(o->reason, sizeof(o->reason), "waiting: no usable "
                     "nodes can run it now%s", j->reservation ?
                     " (inside its reservation)" : "");
            free(nodes);
            continue;
        }
        if (reserve && commit_place(p, j, c, nodes, t) < 0) {
            free(nodes);
            goto oom;
        }
        reserved += reserve;
        free(nodes);
        o->reserved = reserve;
        o->planned = 1;
        o->planned_start = t;
        o->cluster = c;
        if (cfg->backfill == PLAN_BF_NONE && blocker != j->id)
            snprintf(o->reason, sizeof(o->reason), "waiting: behind job "
                     "%lld (strict order)", (long long)blocker);
        else
            snprintf(o->reason, sizeof(o->reason), "waiting for resources");
    }
    return 0;
oom: /* the entries not reached yet must still be safe to finish */
    while (++i < n)
        out_init(&out[i], jobs[i].id);
    return -1;
}

void plan_out_fini(struct plan_out *out, size_t n)
{
    for (size_t i = 0; out && i < n; i++) {
        free(out[i].nodes);
        out[i].nodes = NULL;
        for (size_t k = 0; k < out[i].n_starts; k++)
            free(out[i].starts[k].nodes);
        free(out[i].starts);
        out[i].starts = NULL;
        out[i].n_starts = 0;
    }
}

