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

/* Needs in classes, by cpus (at least 1, an eighth, half, all of the
 * node's) and by time (at least 1 s, 15 min, 1 h, 4 h, 12 h): for each,
 * a node keeps how far from the plan's now no window of that class starts
 * (a floor). Within a plan the profile only fills (capacity is taken,
 * reservations added, nothing given back), so a floor only moves on, and
 * a search of a larger need begins at the floor of the largest class it
 * is in, without stepping again over the gaps before it. */
#define PROF_CPU_CLASSES 4
#define PROF_DUR_CLASSES 5
#define PROF_FLOOR_STEPS 4 /* the fewest steps of a node that keeps floors:
                              one of fewer is scanned as fast */

struct prof_node {
    const struct plan_node *def;
    struct prof_step *st; /* sorted by t; st[0].t is the plan's now */
    size_t n, cap;
    struct prof_resv *rv;
    size_t n_rv, cap_rv;
    double *floor; /* [cpu class][time class], allocated on first use;
                      NULL until then */
    uint32_t floor_fits; /* the classes whose floor is a start that fits,
                            a bit each: none after a take */
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
/* Take u from the node over [start, end). 0, or -1 when out of memory. A
 * u with less than nothing of something gives capacity back: the node's
 * floors are forgotten. */
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
/* The largest class need for dur is in, on a node of node_cpus; -1 when
 * in none (it asks no cpus, less than the least time, or runs inside a
 * reservation). Nodes of a size share it: a search asks it once. */
int prof_class(int node_cpus, const struct prof_need *need, double dur);
/* prof_earliest, with the node's floor of class cls (need's, or -1): the
 * floor is moved on, up to limit at most or to the start it finds for the
 * class, and need is searched from there. The planner's search (it writes
 * the floors); prof_earliest is the plain one. A node of few steps is
 * searched plainly: that is faster than keeping its floors. Without memory
 * for the floors, the plain search too. */
double prof_earliest_floor(struct prof_node *pn, int cls, double t0,
                           double dur, const struct prof_need *need,
                           double limit);
static inline double prof_earliest_kept(struct prof_node *pn, int cls,
                                        double t0, double dur,
                                        const struct prof_need *need,
                                        double limit)
{
    if (cls < 0 || pn->n < PROF_FLOOR_STEPS)
        return prof_earliest(pn, t0, dur, need, limit);
    return prof_earliest_floor(pn, cls, t0, dur, need, limit);
}
/* Does the node's floor of class cls say that nothing of the class starts
 * on it by limit? Inline: the test a search makes of most nodes. */
static inline int prof_floor_past(const struct prof_node *pn, int cls,
                                  double limit)
{
    return cls >= 0 && pn->floor && pn->floor[cls] > limit;
}
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
