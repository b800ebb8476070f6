/* profile.h - one node's availability over time: the capacity left by
 * what holds it (a step function) and the reservations on it. The
 * planner's building block. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_PROFILE_H
#define LOOM_SCHEDULER_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "scheduler/plan.h"

/* Free capacity from t until the next step. up: the first later step
 * with more free cpus; down: the first later step with less of anything
 * (n when none). A search for a job asking for more cpus than a step has
 * goes up the chain, past every step between, which has no more; a window
 * that a step has room for goes down it, past every step between, which
 * has at least as much of everything. */
struct prof_step {
    double t;
    int cpus, gpus;
    long memory_mb;
    size_t up, down;
};

struct prof_resv {
    int64_t id;
    double start, end;
};

struct prof_node {
    const struct plan_node *def;
    struct prof_step *st; /* sorted by t; st[0].t is the plan's now */
    size_t n, cap;
    struct prof_resv *rv;
    size_t n_rv, cap_rv;
};

/* What a placement asks of one node. */
struct prof_need {
    struct plan_use use;
    int whole;      /* the node wholly free (a reservation) */
    int64_t member; /* inside this reservation only (0: outside all) */
};

int prof_node_init(struct prof_node *pn, const struct plan_node *def,
                   double now);
void prof_node_fini(struct prof_node *pn);
/* Take u from the node over [start, end). 0, or -1 when out of memory. */
int prof_take(struct prof_node *pn, double start, double end,
              const struct plan_use *u);
int prof_add_resv(struct prof_node *pn, int64_t id, double start,
                  double end);
/* Does the node give need over [t, t + dur)? */
int prof_fits(const struct prof_node *pn, double t, double dur,
              const struct prof_need *need);
/* The earliest t in [t0, limit] at which it does, or PLAN_FOREVER. */
double prof_earliest(const struct prof_node *pn, double t0, double dur,
                     const struct prof_need *need, double limit);
/* Is the node short of need from t0 (not after the plan's now) until past
 * limit? Then nothing starts on it by limit (any window from before the
 * next step overlaps the short one): a quick test before prof_earliest,
 * which spares the call on most nodes of a busy fabric. */
static inline int prof_short_past(const struct prof_node *pn, double t0,
                                  double dur, const struct prof_need *need,
                                  double limit)
{
    const struct prof_step *s = pn->st;

    if (need->whole || need->member || dur <= 0 || t0 > s[0].t ||
        pn->n < 2 || s[1].t <= limit)
        return 0;
    return s[0].cpus < need->use.cpus || s[0].gpus < need->use.gpus ||
           s[0].memory_mb < need->use.memory_mb;
}
/* Free cpus at the plan's now. */
int prof_free_now(const struct prof_node *pn);
/* From when on the node is wholly free for ever (nothing holds it, no
 * reservation), or PLAN_FOREVER. */
double prof_free_from(const struct prof_node *pn);

#endif
