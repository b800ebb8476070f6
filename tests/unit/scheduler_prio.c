/* scheduler_prio.c - the multifactor priority against hand-made answers:
 * age, fair share, decay by half-life, size, explicit priority, the
 * weighted total and the order it gives. */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "scheduler/prio.h"
#include "tests/lib/tap.h"

#define DAY 86400.0

static int near(double got, double want)
{
    return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

#define is_near(got, want, ...)                                                \
    do {                                                                       \
        double gn_ = (got), wn_ = (want);                                      \
        ok(near(gn_, wn_), __VA_ARGS__);                                       \
        if (!near(gn_, wn_))                                                   \
            printf("#   got %.12g, want %.12g\n", gn_, wn_);                   \
    } while (0)

static void t_defaults(void)
{
    struct prio_weights w;

    prio_weights_default(&w);
    ok(w.age == 1000 && w.fairshare == 1000 && w.size == 100 &&
           w.priority == 1000,
       "default weights 1000/1000/100/1000");
    is_near(w.age_max_s, 7 * DAY, "age reaches 1 after 7 days");
    is_near(w.half_life_s, 7 * DAY, "usage halves in 7 days");
}

static void t_age(void)
{
    struct prio_weights w;
    struct prio_factors f;

    prio_weights_default(&w);
    prio_compute(&w, 1000, 1000, 0, 1, 100, 0, 1, &f);
    is_near(f.age, 0, "age 0 at submission");
    prio_compute(&w, 3.5 * DAY, 0, 0, 1, 100, 0, 1, &f);
    is_near(f.age, 0.5, "age 0.5 after half of age_max_s");
    prio_compute(&w, 30 * DAY, 0, 0, 1, 100, 0, 1, &f);
    is_near(f.age, 1, "age capped at 1");
    prio_compute(&w, 0, 100, 0, 1, 100, 0, 1, &f);
    is_near(f.age, 0, "a submission in the future is age 0");
}

struct walk {
    int n;
    double usage, share;
};

static void walked(void *arg, const char *owner, double usage, double share)
{
    struct walk *w = arg;

    (void)owner;
    w->n++;
    w->usage += usage;
    w->share += share;
}

static void t_fairshare(void)
{
    struct walk walk = {0};
    struct prio_weights w;
    struct prio_factors f;
    struct prio_usage *u = prio_usage_create(7 * DAY);

    prio_weights_default(&w);
    ok(u != NULL, "usage created");
    if (!u)
        return;
    is_near(prio_usage_share(u, "alice", 0), 0, "no usage: share 0");
    is_int(prio_usage_owners(u), 0, "no owners yet");
    prio_compute(&w, 0, 0, 0, 1, 100, prio_usage_share(u, "alice", 0), 1, &f);
    is_near(f.fairshare, 1, "fairshare 1 for an owner with no usage");

    ok(prio_usage_add(u, "alice", 500, 100) == 0, "charge alice");
    ok(prio_usage_add(u, "bob", 300, 100) == 0, "charge bob");
    ok(prio_usage_add(u, "bob", 200, 100) == 0, "charge bob again");
    ok(prio_usage_add(u, "carol", 0, 100) == 0, "a zero charge is no-op");
    is_int(prio_usage_owners(u), 2, "two owners with usage");
    is_near(prio_usage_share(u, "alice", 100), 0.5, "alice has half");
    is_near(prio_usage_share(u, "bob", 100), 0.5, "bob has half");
    is_near(prio_usage_share(u, "carol", 100), 0, "carol has none");
    prio_usage_each(u, 100, walked, &walk);
    is_int(walk.n, 2, "the walk meets the two owners with usage");
    is_near(walk.usage, 1000, "... their usage: 1000 cpu-seconds in all");
    is_near(walk.share, 1, "... their shares: 1 in all");
    prio_compute(&w, 100, 0, 0, 1, 100, prio_usage_share(u, "alice", 100), 2,
                 &f);
    is_near(f.fairshare, 0.5, "fairshare 0.5 for exactly an equal share");
    prio_compute(&w, 100, 0, 0, 1, 100, 1.0, 2, &f);
    is_near(f.fairshare, 0.25, "all the usage of two owners: 2^-2");
    prio_compute(&w, 100, 0, 0, 1, 100, 0.25, 0, &f);
    is_near(f.fairshare, exp2(-0.25), "n_owners 0 counts as 1");
    prio_usage_destroy(u);
    prio_usage_destroy(NULL);
}

static void t_decay(void)
{
    struct prio_usage *u = prio_usage_create(10 * DAY);

    if (!u)
        return;
    /* alice used 1000 at day 0; bob uses 1000 one half-life later: at day
     * 10 alice's counts 500, so she holds 500 / 1500 = 1/3. */
    prio_usage_add(u, "alice", 1000, 0);
    prio_usage_add(u, "bob", 1000, 10 * DAY);
    is_near(prio_usage_share(u, "alice", 10 * DAY), 1.0 / 3,
            "usage halves after one half-life");
    is_near(prio_usage_share(u, "bob", 10 * DAY), 2.0 / 3,
            "the fresh usage counts whole");
    is_near(prio_usage_share(u, "alice", 50 * DAY), 1.0 / 3,
            "shares do not change when nothing new is charged");
    /* A charge from the past (a slice reported late) decays by its age:
     * carol 1000 at day 0 is worth 500 at day 10, as alice's. */
    prio_usage_add(u, "carol", 1000, 0);
    is_near(prio_usage_share(u, "carol", 10 * DAY), 0.25,
            "a late charge decays from its own time");
    is_near(prio_usage_share(u, "bob", 10 * DAY), 0.5,
            "and the total includes it");
    prio_usage_destroy(u);

    u = prio_usage_create(DAY);
    if (!u)
        return;
    prio_usage_add(u, "a", 1024, 0);
    prio_usage_add(u, "b", 1, 10 * DAY); /* a's is now 1024 / 2^10 = 1 */
    is_near(prio_usage_share(u, "a", 10 * DAY), 0.5,
            "ten half-lives: 1024 decays to 1");
    prio_usage_destroy(u);
}

static void t_size_priority(void)
{
    struct prio_weights w;
    struct prio_factors f;

    prio_weights_default(&w);
    prio_compute(&w, 0, 0, 0, 16, 64, 0, 1, &f);
    is_near(f.size, 0.25, "size 16 of 64 cpus is 0.25");
    prio_compute(&w, 0, 0, 0, 128, 64, 0, 1, &f);
    is_near(f.size, 1, "size capped at 1");
    prio_compute(&w, 0, 0, 0, 1, 0, 0, 1, &f);
    is_near(f.size, 0, "size 0 on an empty fabric");
    prio_compute(&w, 0, 0, 2500, 1, 64, 0, 1, &f);
    is_near(f.priority, 0.25, "priority 2500 is 0.25");
    prio_compute(&w, 0, 0, 50000, 1, 64, 0, 1, &f);
    is_near(f.priority, 1, "priority clamped at 10000");
    prio_compute(&w, 0, 0, -50000, 1, 64, 0, 1, &f);
    is_near(f.priority, -1, "priority clamped at -10000");
}

static void t_total(void)
{
    struct prio_weights w = {
        .age = 2,
        .fairshare = 3,
        .size = 5,
        .priority = 7,
        .age_max_s = 100,
        .half_life_s = 100,
    };
    struct prio_factors f;

    /* age 0.5, fairshare 2^(-0.5 * 2) = 0.5, size 0.5, priority -0.5 */
    prio_compute(&w, 50, 0, -5000, 32, 64, 0.5, 2, &f);
    is_near(f.total, 2 * 0.5 + 3 * 0.5 + 5 * 0.5 + 7 * -0.5,
            "total is the weighted sum (%g)", f.total);
}

/* Three jobs of three owners: an old one of a heavy user, a fresh one of a
 * new user, and a fresh big one with an explicit priority. */
static void t_order(void)
{
    struct prio_weights w;
    struct prio_usage *u = prio_usage_create(7 * DAY);
    struct prio_factors a, b, c;
    double now = 2 * DAY;

    prio_weights_default(&w);
    if (!u)
        return;
    prio_usage_add(u, "heavy", 9000, DAY);
    prio_usage_add(u, "light", 1000, DAY);
    /* heavy: age 1 day (1000/7), share 0.9 of 3 owners -> 2^-2.7 */
    prio_compute(&w, now, DAY, 0, 4, 1000, prio_usage_share(u, "heavy", now), 3,
                 &a);
    /* new: age 0, share 0 -> 1000 */
    prio_compute(&w, now, now, 0, 4, 1000, prio_usage_share(u, "new", now), 3,
                 &b);
    /* light: age 0, share 0.1 -> 2^-0.3, size 0.5, priority 0.2 */
    prio_compute(&w, now, now, 2000, 500, 1000,
                 prio_usage_share(u, "light", now), 3, &c);
    is_near(a.total, 1000.0 / 7 + 1000 * exp2(-2.7) + 100 * 0.004,
            "heavy user's old job: %g", a.total);
    is_near(b.total, 1000 + 100 * 0.004, "new user's job: %g", b.total);
    is_near(c.total, 1000 * exp2(-0.3) + 100 * 0.5 + 1000 * 0.2,
            "light user's big prioritised job: %g", c.total);
    ok(c.total > b.total && b.total > a.total,
       "ordered: prioritised, new user, heavy user");
    prio_usage_destroy(u);
}

int main(void)
{
    t_defaults();
    t_age();
    t_fairshare();
    t_decay();
    t_size_priority();
    t_total();
    t_order();
    return done_testing();
}
