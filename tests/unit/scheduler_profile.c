/* scheduler_profile.c - one node's profile (scheduler/profile.c): after
 * random takes, each step's up is the first later step with more free
 * cpus and its down the first with less of something, and prof_earliest
 * gives what a check of every start it could give (the search's start and
 * every later step) gives: the first that fits, not after the limit. The
 * planner's search with the node's floors (prof_earliest_kept) gives what
 * prof_earliest gives, on profiles that fill between the searches (the
 * floors kept from one search to the next) and after capacity is given
 * back. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "scheduler/profile.h"
#include "tests/lib/tap.h"

static unsigned long long rng = 88172645463325252ULL;

static unsigned next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* Has step m at least what step i has, of everything? */
static int has_all_of(const struct prof_step *m, const struct prof_step *i)
{
    return m->cpus >= i->cpus && m->gpus >= i->gpus &&
           m->memory_mb >= i->memory_mb;
}

/* Is every step's up the first later step with more cpus, and its down
 * the first later step with less of something? */
static int chains_ok(const struct prof_node *pn)
{
    for (size_t i = 0; i < pn->n; i++) {
        size_t m = i + 1;
        while (m < pn->n && pn->st[m].cpus <= pn->st[i].cpus)
            m++;
        if (pn->st[i].up != m)
            return 0;
        m = i + 1;
        while (m < pn->n && has_all_of(&pn->st[m], &pn->st[i]))
            m++;
        if (pn->st[i].down != m)
            return 0;
    }
    return 1;
}

/* Could t start the job, and is it earlier than best? */
static void try_at(const struct prof_node *pn, double t, double t0,
                   double dur, const struct prof_need *need, double limit,
                   double *best)
{
    if (t >= t0 && t <= limit && t < *best && prof_fits(pn, t, dur, need))
        *best = t;
}

/* The earliest start by checking each one it could be: the search's
 * start, a step's, a reservation's start or end. */
static double earliest_by_check(const struct prof_node *pn, double t0,
                                double dur, const struct prof_need *need,
                                double limit)
{
    double best = PLAN_FOREVER;

    if (t0 < pn->st[0].t)
        t0 = pn->st[0].t;
    try_at(pn, t0, t0, dur, need, limit, &best);
    for (size_t i = 0; i < pn->n; i++)
        try_at(pn, pn->st[i].t, t0, dur, need, limit, &best);
    for (size_t i = 0; i < pn->n_rv; i++) {
        try_at(pn, pn->rv[i].start, t0, dur, need, limit, &best);
        try_at(pn, pn->rv[i].end, t0, dur, need, limit, &best);
    }
    return best;
}

/* A random need: cpus, gpus, memory, sometimes a whole node, sometimes
 * inside reservation 1 to 3. */
static struct prof_need random_need(void)
{
    int whole = next() % 16 == 0;
    int64_t member = next() % 2 ? (int64_t)(next() % 4) : 0;

    return (struct prof_need){{(int)(next() % 25), (int)(next() % 3),
                               (long)(next() % 40000)},
                              whole, member};
}

/* The searches with floors against the plain one: on each of 300 seeded
 * profiles, 60 takes (a few of them given back) with 30 searches after
 * each; the same node throughout, so its floors are those the earlier
 * searches left. Counts disagreements, searches, and those a floor
 * answered or began. */
static void t_floors(int *bad, int *checked, int *by_floor, int *found)
{
    struct plan_node def = {.name = "n", .cpus = 32, .gpus = 4,
                            .memory_mb = 64000, .usable = 1};

    for (int round = 0; round < 300; round++) {
        struct prof_node pn;
        struct plan_use last = {0, 0, 0};
        double last_start = 0, last_end = 0;
        if (prof_node_init(&pn, &def, 0) < 0)
            exit(1);
        for (int r = 0; r < round % 3; r++) {
            double start = next() % 4000;
            if (prof_add_resv(&pn, r + 1, start, start + 50 + next() % 900) < 0)
                exit(1);
        }
        for (int take = 0; take < 60; take++) {
            double start = next() % 3000, end = start + 1 + next() % 2000;
            struct plan_use u = {(int)(next() % 9), (int)(next() % 2),
                                 (long)(next() % 9000)};
            if (next() % 8 == 0)
                end = PLAN_FOREVER;
            if (take % 20 == 19) { /* give the last take back */
                start = last_start;
                end = last_end;
                u = (struct plan_use){-last.cpus, -last.gpus,
                                      -last.memory_mb};
            }
            if (prof_take(&pn, start, end, &u) < 0)
                exit(1);
            last = u;
            last_start = start;
            last_end = end;
            for (int q = 0; q < 30; q++) {
                struct prof_need need = random_need();
                /* mostly the planner's searches: from now, up to a limit
                 * that grows; some from later, some for long */
                double t0 = next() % 4 ? 0 : next() % 3000;
                double dur = next() % 3 ? 1 + next() % 1200
                                        : (double)(next() % 50000);
                double limit = t0 + next() % 6000;
                int cls = prof_class(def.cpus, &need, dur);
                double want = prof_earliest(&pn, t0, dur, &need, limit);
                double got;
                if (prof_floor_past(&pn, cls, limit)) {
                    got = PLAN_FOREVER;
                    (*by_floor)++;
                } else {
                    if (cls >= 0 && pn.floor && pn.floor[cls] > t0)
                        (*by_floor)++;
                    got = prof_earliest_kept(&pn, cls, t0, dur, &need, limit);
                }
                if (got != want && !(*bad)++)
                    printf("# kept %g, plain %g (round %d, take %d)\n", got,
                           want, round, take);
                (*checked)++;
                *found += want < PLAN_FOREVER;
            }
        }
        prof_node_fini(&pn);
    }
}

int main(void)
{
    struct plan_node def = {.name = "n", .cpus = 32, .gpus = 4,
                            .memory_mb = 64000, .usable = 1};
    int bad_chain = 0, bad_when = 0, checked = 0, found = 0;

    for (int round = 0; round < 200; round++) {
        struct prof_node pn;
        if (prof_node_init(&pn, &def, 0) < 0)
            return 1;
        for (int r = 0; r < round % 3; r++) { /* none, one or two */
            double start = next() % 1200;
            if (prof_add_resv(&pn, r + 1, start, start + 50 + next() % 400) < 0)
                return 1;
        }
        for (int take = 0; take < 40; take++) {
            double start = next() % 1000, end = start + 1 + next() % 300;
            struct plan_use u = {(int)(next() % 7), (int)(next() % 2),
                                 (long)(next() % 9000)};
            if (next() % 8 == 0)
                end = PLAN_FOREVER;
            if (prof_take(&pn, start, end, &u) < 0)
                return 1;
            bad_chain += !chains_ok(&pn);
            for (int q = 0; q < 20; q++) {
                struct prof_need need = {
                    {(int)(next() % 33), (int)(next() % 5),
                     (long)(next() % 64000)},
                    next() % 16 == 0, (int64_t)(next() % 4)};
                double t0 = next() % 1200, dur = next() % 400,
                       limit = t0 + next() % 1500;
                double got = prof_earliest(&pn, t0, dur, &need, limit),
                       want = earliest_by_check(&pn, t0, dur, &need, limit);
                if (got != want && !bad_when++)
                    printf("# earliest %g, by check %g (round %d, take %d)\n",
                           got, want, round, take);
                checked++;
                found += want < PLAN_FOREVER;
            }
        }
        prof_node_fini(&pn);
    }
    is_int(bad_chain, 0, "every step's up and down chains are right");
    is_int(bad_when, 0, "prof_earliest agrees with a check of every start");
    ok(checked == 200 * 40 * 20, "%d searches checked", checked);
    ok(found > checked / 10 && found < checked - checked / 10,
       "the searches both find starts and find none (%d of %d found)",
       found, checked);
    {
        int bad = 0, n = 0, by_floor = 0, fit = 0;
        t_floors(&bad, &n, &by_floor, &fit);
        is_int(bad, 0, "the search with floors agrees with the plain one "
               "(%d searches)", n);
        ok(by_floor > n / 10, "floors answered or began %d of them",
           by_floor);
        ok(fit > n / 10 && fit < n - n / 10,
           "those searches both find starts and find none (%d of %d found)",
           fit, n);
    }
    return done_testing();
}
