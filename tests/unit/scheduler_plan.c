/* scheduler_plan.c - the planner on hand-made fabrics whose right answer is
 * known: backfill under each policy, cross-cluster placement, reservations,
 * windows, feasibility; and, on random plans, that a job starts (now or
 * later) when and where a check of every node says. */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan.h"
#include "tests/lib/tap.h"

#define NOW 1000.0

static const char *const ib[] = {"ib"};

/* Two clusters: "a" with 2 nodes of 4 cpus, "b" with 4 nodes of 4 cpus
 * (the last one with feature ib). */
static struct plan_node a_nodes[2], b_nodes[4];
static struct plan_cluster fabric[2];

static void fabric_init(void)
{
    for (int i = 0; i < 2; i++)
        a_nodes[i] = (struct plan_node){.name = i ? "a1" : "a0", .cpus = 4,
                                        .memory_mb = 1000, .usable = 1};
    for (int i = 0; i < 4; i++)
        b_nodes[i] = (struct plan_node){.name = "b", .cpus = 4,
                                        .memory_mb = 1000, .usable = 1};
    b_nodes[3].features = ib;
    b_nodes[3].n_features = 1;
    fabric[0] = (struct plan_cluster){.name = "a", .nodes = a_nodes,
                                      .n_nodes = 2};
    fabric[1] = (struct plan_cluster){.name = "b", .preference = 1,
                                      .nodes = b_nodes, .n_nodes = 4};
}

static struct plan_job job(int64_t id, int nodes, int cpus, long wall,
                           const char *pin)
{
    return (struct plan_job){.id = id, .nodes = nodes,
                             .per_node = {.cpus = cpus, .memory_mb = 10},
                             .walltime_s = wall, .cluster = pin};
}

/* Cluster a only; node a0 busy (all 4 cpus) until NOW + 100. */
static struct plan *busy_a(void)
{
    static const size_t n0[] = {0};
    struct plan *p = plan_create(fabric, 1, NOW);
    struct plan_alloc al = {0, n0, 1, {4, 0, 100}, NOW + 100};

    if (p && plan_add_alloc(p, &al) < 0) {
        plan_destroy(p);
        return NULL;
    }
    return p;
}

static void t_policies(void)
{
    struct plan_job jobs[3] = {
        job(1, 2, 4, 50, NULL),  /* needs both nodes: waits for a0 */
        job(2, 1, 4, 50, NULL),  /* fits a1 and ends before NOW + 100 */
        job(3, 1, 4, 200, NULL), /* fits a1 now but would delay job 1 */
    };
    struct plan_out out[3];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    struct plan *p = busy_a();

    ok(p && plan_run(p, &cfg, jobs, 3, out) == 0, "EASY: the plan runs");
    ok(!out[0].start && out[0].planned && out[0].planned_start == NOW + 100,
       "EASY: the head job is reserved when a0 frees up");
    ok(out[1].start && out[1].n_nodes == 1 && out[1].nodes[0] == 1,
       "EASY: a short job is backfilled on a1");
    ok(!out[2].start, "EASY: a long job that would delay the head waits");
    plan_out_fini(out, 3);
    plan_destroy(p);

    cfg.backfill = PLAN_BF_CONSERVATIVE;
    p = busy_a();
    ok(p && plan_run(p, &cfg, jobs, 3, out) == 0, "conservative: runs");
    ok(out[1].start && !out[2].start, "conservative: backfills only the "
       "job that delays nobody");
    ok(out[2].planned && out[2].planned_start == NOW + 150,
       "conservative: the long job is planned after the head job");
    plan_out_fini(out, 3);
    plan_destroy(p);

    cfg.backfill = PLAN_BF_NONE;
    p = busy_a();
    ok(p && plan_run(p, &cfg, jobs, 3, out) == 0, "FIFO: runs");
    ok(!out[0].start && !out[1].start && !out[2].start,
       "FIFO without backfill: nothing passes the first waiting job");
    ok(strstr(out[1].reason, "behind job 1") != NULL,
       "FIFO: the reason names the job in front (%s)", out[1].reason);
    plan_out_fini(out, 3);
    plan_destroy(p);
}

static void t_cross_cluster(void)
{
    struct plan_job jobs[3] = {
        job(1, 2, 4, 50, NULL), /* a is half busy: b can start it now */
        job(2, 1, 1, 50, "a"),  /* pinned */
        job(3, 1, 1, 50, NULL),
    };
    struct plan_out out[3];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    struct plan *p = plan_create(fabric, 2, NOW);
    static const size_t n0[] = {0};
    struct plan_alloc al = {0, n0, 1, {4, 0, 100}, NOW + 100};

    jobs[2].features = ib;
    jobs[2].n_features = 1;
    ok(p && plan_add_alloc(p, &al) == 0 && plan_run(p, &cfg, jobs, 3, out) == 0,
       "cross-cluster: the plan runs");
    ok(out[0].start && out[0].cluster == 1,
       "a job goes to the cluster where it starts earliest (b)");
    ok(out[1].start && out[1].cluster == 0, "a pinned job stays on its "
       "cluster");
    ok(out[2].start && out[2].cluster == 1 && out[2].nodes[0] == 3,
       "features pick the node that has them");
    plan_out_fini(out, 3);
    plan_destroy(p);

    /* Ties: both clusters free, a is preferred (lower preference). */
    p = plan_create(fabric, 2, NOW);
    jobs[0] = job(4, 1, 1, 10, NULL);
    ok(p && plan_run(p, &cfg, jobs, 1, out) == 0 && out[0].start &&
       out[0].cluster == 0, "a tie goes to the preferred cluster");
    plan_out_fini(out, 1);
    plan_destroy(p);
}

static void t_reservations(void)
{
    static const size_t n1[] = {1};
    struct plan_resv r = {7, 0, n1, 1, NOW + 10, NOW + 100};
    struct plan_job jobs[2] = {job(1, 1, 1, 20, NULL), job(2, 1, 1, 20, NULL)};
    struct plan_out out[2];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    struct plan *p = busy_a();
    size_t *chosen = NULL;
    double start = 0;
    char why[200];

    jobs[1].reservation = 7;
    ok(p && plan_add_resv(p, &r) == 0 && plan_run(p, &cfg, jobs, 2, out) == 0,
       "reservations: the plan runs");
    ok(!out[0].start && out[0].planned_start == NOW + 100,
       "a job that would still run when the reservation begins waits");
    ok(!out[1].start && out[1].planned && out[1].planned_start == NOW + 10,
       "a job of the reservation is planned at its start, on its node");
    plan_out_fini(out, 2);
    plan_destroy(p);

    p = busy_a();
    ok(p && plan_find_window(p, 0, NULL, 0, 2, NULL, 0, NOW, NOW + 1000, 60,
                             &start, &chosen, why, sizeof(why)) == 1 &&
       start == NOW + 100, "a flexible 2-node window starts when the "
       "running job ends");
    free(chosen);
    chosen = NULL;
    ok(p && plan_find_window(p, 0, n1, 1, 0, NULL, 0, NOW, NOW, 60, &start,
                             &chosen, why, sizeof(why)) == 1 && start == NOW,
       "a fixed window on the free node is granted");
    free(chosen);
    chosen = NULL;
    ok(p && plan_find_window(p, 0, NULL, 0, 2, NULL, 0, NOW, NOW + 50, 60,
                             &start, &chosen, why, sizeof(why)) == 0,
       "no window before the deadline: refused (%s)", why);
    plan_destroy(p);
}

static void t_checks(void)
{
    struct plan_job j = job(1, 5, 4, 10, NULL);
    char why[200];
    static const size_t n0[] = {0}, n1[] = {1};
    struct plan *p = busy_a();

    ok(!plan_feasible(fabric, 2, &j, why, sizeof(why)) &&
       strstr(why, "has 4") != NULL, "5 nodes: no cluster can (%s)", why);
    j.nodes = 4;
    ok(plan_feasible(fabric, 2, &j, why, sizeof(why)),
       "4 nodes: cluster b can, even if busy");
    j = job(1, 1, 1, 10, "nope");
    ok(!plan_feasible(fabric, 2, &j, why, sizeof(why)) &&
       strstr(why, "nope") != NULL, "an unknown pin is named (%s)", why);
    j = job(1, 1, 1, 10, NULL);
    ok(p && !plan_fits_nodes(p, &j, 0, n0, 1, why, sizeof(why)),
       "a busy node does not fit now (%s)", why);
    ok(p && plan_fits_nodes(p, &j, 0, n1, 1, why, sizeof(why)),
       "a free node fits");
    plan_destroy(p);
}

/* A cluster that runs every job as one account takes only its jobs. */
static void t_single_account(void)
{
    struct plan_job j = job(1, 4, 4, 10, NULL);
    char why[200];
    static const size_t n0[] = {0};
    struct plan *p;

    fabric[1].single_account = "alice";
    j.account = "bob";
    ok(!plan_cluster_runs_as(&fabric[1], &j) &&
       plan_cluster_runs_as(&fabric[0], &j),
       "cluster b (single_account alice) does not take bob's job; a does");
    ok(!plan_feasible(fabric, 2, &j, why, sizeof(why)), "4 nodes of bob's: "
       "only b could, so no cluster can");
    is_str(why, "cluster b runs every job as alice (single_account); this "
           "job is bob's", "... and why says whose cluster it is");
    j.account = "alice";
    ok(plan_feasible(fabric, 2, &j, why, sizeof(why)),
       "the same job of alice's: b can");
    j = job(2, 1, 1, 10, "b");
    j.account = "bob";
    p = plan_create(fabric, 2, NOW);
    ok(p && !plan_fits_nodes(p, &j, 1, n0, 1, why, sizeof(why)),
       "a start of bob's job on b by hand does not fit");
    is_str(why, "cluster b runs every job as alice (single_account); this "
           "job is bob's", "... saying why");
    plan_destroy(p);
    fabric[1].single_account = NULL;
}

/* ---- starts against a check of every node -------------------------------- */

#define RN 150 /* nodes of a large cluster: several words of the plan's index
                  of the nodes with free cpus now */

static uint64_t rs;

static int rnd(int lo, int hi) /* uniform in [lo, hi] */
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return lo + (int)(rs % (uint64_t)(hi - lo + 1));
}

static void random_fabric(struct plan_node nodes[3][RN],
                          struct plan_cluster *cl, uint64_t seed)
{
    static const char *const names[] = {"a", "b", "c"};

    for (size_t c = 0; c < 3; c++) {
        size_t n = (size_t)(rnd(0, 1) ? rnd(1, RN) : rnd(1, 8));
        for (size_t i = 0; i < n; i++) {
            int f = rnd(0, 2) == 0;
            nodes[c][i] = (struct plan_node){
                .name = "n", .cpus = rnd(0, 9) ? 8 : 0,
                .gpus = rnd(0, 3) ? 0 : 2, .memory_mb = 1000,
                .features = f ? ib : NULL, .n_features = (size_t)f,
                .usable = rnd(0, 9) != 0};
        }
        /* preferences all different: the cluster a start goes to is known */
        cl[c] = (struct plan_cluster){.name = names[c],
                                      .preference = (int)((c + seed) % 3),
                                      .nodes = nodes[c], .n_nodes = n};
    }
}

/* What holds the nodes: running jobs on most nodes (some past their
 * walltime) and a reservation (id 7) on a few nodes of cluster a. */
struct load {
    struct plan_alloc al[6 * RN];
    size_t node[6 * RN], n;
    struct plan_resv r;
    size_t rn[3];
};

static void random_load(struct load *l, const struct plan_cluster *cl)
{
    l->n = (size_t)rnd(0, 6 * RN);
    for (size_t k = 0; k < l->n; k++) {
        size_t c = (size_t)rnd(0, 2);
        l->node[k] = (size_t)rnd(0, (int)cl[c].n_nodes - 1);
        l->al[k] = (struct plan_alloc){c, &l->node[k], 1,
                                       {rnd(1, 8), rnd(0, 1), 10},
                                       NOW + rnd(-20, 300)};
    }
    for (size_t k = 0; k < 3; k++)
        l->rn[k] = (size_t)rnd(0, (int)cl[0].n_nodes - 1);
    l->r = (struct plan_resv){7, 0, l->rn, 3, NOW + rnd(-50, 500), 0};
    l->r.end = l->r.start + rnd(1, 400);
}

/* When a running job ends in a plan at NOW (past its walltime: NOW + 60,
 * the plan's default overdue time). */
static double load_end(const struct plan_alloc *a)
{
    return a->end <= NOW ? NOW + 60 : a->end;
}

/* The load as a plan at time t sees it: the jobs ended by then gone. */
static int apply_load(struct plan *p, const struct load *l, double t)
{
    for (size_t k = 0; k < l->n; k++) {
        struct plan_alloc a = l->al[k];
        a.end = load_end(&l->al[k]);
        if (a.end > t && plan_add_alloc(p, &a) < 0)
            return -1;
    }
    return plan_add_resv(p, &l->r);
}

static struct plan_job random_job(int64_t id, const struct plan_cluster *cl)
{
    struct plan_job j = job(id, rnd(0, 4) ? 1 : rnd(0, 4),
                            rnd(0, 9) ? rnd(1, 8) : 0,
                            rnd(0, 9) ? rnd(1, 400) : 0,
                            rnd(0, 4) ? NULL : cl[rnd(0, 2)].name);

    j.per_node.gpus = rnd(0, 4) ? 0 : 1;
    if (!rnd(0, 4)) {
        j.features = ib;
        j.n_features = 1;
    }
    if (!rnd(0, 6))
        j.reservation = 7;
    return j;
}

/* Where a check of every node says j can start now: the preferred cluster
 * with enough nodes that fit, on the first of them in node order. */
struct expect {
    int cluster; /* -1: nowhere */
    size_t want, nodes[RN];
};

static void expect_now(const struct plan *p, const struct plan_cluster *cl,
                       const struct plan_job *j, struct expect *e)
{
    struct plan_job one = *j;
    size_t fit[RN], n;
    char why[200];

    e->cluster = -1;
    e->want = j->nodes > 0 ? (size_t)j->nodes : 1;
    one.nodes = 1;
    for (size_t c = 0; c < 3; c++) {
        n = 0;
        for (size_t i = 0; i < cl[c].n_nodes; i++)
            if (plan_fits_nodes(p, &one, c, &i, 1, why, sizeof(why)))
                fit[n++] = i;
        if (n >= e->want && (e->cluster < 0 ||
                             cl[c].preference < cl[e->cluster].preference)) {
            e->cluster = (int)c;
            memcpy(e->nodes, fit, e->want * sizeof(*fit));
        }
    }
}

static int as_expected(const struct expect *e, const struct plan_out *o)
{
    if (e->cluster < 0)
        return !o->start;
    return o->start && o->cluster == (size_t)e->cluster &&
           o->n_nodes == e->want &&
           !memcmp(o->nodes, e->nodes, e->want * sizeof(*o->nodes));
}

/* Jobs through plan_run one at a time on the same plan, which fills up
 * with their starts and with the reservations of those that wait; each
 * starts now exactly where a check of every node said before it ran. */
static void t_start_now(void)
{
    static struct plan_node nodes[3][RN];
    static struct load l;
    struct plan_cluster cl[3];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    int checked = 0, started = 0, wrong = 0, failed = 0;

    for (uint64_t seed = 1; seed <= 200 && !failed; seed++) {
        struct plan *p;
        rs = seed * 0x9e3779b97f4a7c15ULL;
        random_fabric(nodes, cl, seed);
        random_load(&l, cl);
        if (!(p = plan_create(cl, 3, NOW)) || apply_load(p, &l, NOW) < 0) {
            plan_destroy(p);
            failed = 1;
            break;
        }
        for (int64_t id = 1; id <= 40; id++) {
            struct plan_job j = random_job(id, cl);
            struct plan_out o;
            struct expect e;
            expect_now(p, cl, &j, &e);
            cfg.width = rnd(0, 1) ? 0 : 4;
            if (plan_run(p, &cfg, &j, 1, &o) < 0) {
                failed = 1;
                break;
            }
            checked++;
            started += o.start;
            if (!as_expected(&e, &o) && wrong++ == 0)
                printf("# seed %llu job %lld: started %d on cluster %zu, "
                       "expected cluster %d\n", (unsigned long long)seed,
                       (long long)id, o.start, o.cluster, e.cluster);
            plan_out_fini(&o, 1);
        }
        plan_destroy(p);
    }
    ok(!failed, "random plans: built and run");
    ok(!wrong && started > checked / 10 && started < checked - checked / 10,
       "random plans: %d jobs, %d started now, each where a check of every "
       "node says (%d not)", checked, started, wrong);
}

static int by_time(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The earliest start of j, worked out without the planner's search: a
 * start is at now, when something ends (a running job, the reservation)
 * or when the reservation begins; at each such time t in turn, a plan
 * made at t checks every node. 1 with *t and *cluster (the preferred
 * one), 0 when none, -1 when out of memory. */
static int earliest_checked(const struct plan_cluster *cl,
                            const struct load *l, const struct plan_job *j,
                            double *t, int *cluster)
{
    static double times[6 * RN + 3];
    size_t n = 0, want = j->nodes > 0 ? (size_t)j->nodes : 1;
    struct plan_job one = *j;
    char why[200];

    one.nodes = 1;
    times[n++] = NOW;
    times[n++] = l->r.start; /* for its members */
    times[n++] = l->r.end;
    for (size_t k = 0; k < l->n; k++)
        times[n++] = load_end(&l->al[k]);
    qsort(times, n, sizeof(*times), by_time);
    for (size_t k = 0; k < n; k++) {
        struct plan *p;
        if (times[k] < NOW || (k > 0 && times[k] == times[k - 1]))
            continue;
        if (!(p = plan_create(cl, 3, times[k])) ||
            apply_load(p, l, times[k]) < 0) {
            plan_destroy(p);
            return -1;
        }
        *cluster = -1;
        for (size_t c = 0; c < 3; c++) {
            size_t fit = 0;
            for (size_t i = 0; i < cl[c].n_nodes; i++)
                fit += plan_fits_nodes(p, &one, c, &i, 1, why, sizeof(why));
            if (fit >= want && (*cluster < 0 || cl[c].preference <
                                                    cl[*cluster].preference))
                *cluster = (int)c;
        }
        plan_destroy(p);
        if (*cluster >= 0) {
            *t = times[k];
            return 1;
        }
    }
    return 0;
}

/* A job's planned start is the earliest one a check of every node finds,
 * on the preferred cluster: searched on every node, or on the nodes in
 * the order they are free for ever, with a width that takes them all. */
static void t_start_later(void)
{
    static struct plan_node nodes[3][RN];
    static struct load l;
    struct plan_cluster cl[3];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    int checked = 0, later = 0, wrong = 0, failed = 0;

    for (uint64_t seed = 1; seed <= 60 && !failed; seed++) {
        size_t most = 0;
        rs = seed * 0x9e3779b97f4a7c15ULL + 1;
        random_fabric(nodes, cl, seed);
        random_load(&l, cl);
        for (size_t c = 0; c < 3; c++) {
            size_t usable = 0;
            for (size_t i = 0; i < cl[c].n_nodes; i++)
                usable += (size_t)cl[c].nodes[i].usable;
            if (usable > most)
                most = usable;
        }
        for (int64_t id = 1; id <= 8; id++) {
            struct plan_job j = random_job(id, cl);
            struct plan *p = plan_create(cl, 3, NOW);
            struct plan_out o;
            double t = 0;
            int c = -1, found;
            if (j.walltime_s == 0) /* fits a short step that begins at t,
                                      not one that began before */
                j.walltime_s = 1;
            cfg.width = rnd(0, 1) ? 0 : most;
            if (!p || apply_load(p, &l, NOW) < 0 ||
                plan_run(p, &cfg, &j, 1, &o) < 0 ||
                (found = earliest_checked(cl, &l, &j, &t, &c)) < 0) {
                plan_destroy(p);
                failed = 1;
                break;
            }
            checked++;
            later += found && t > NOW;
            if ((found ? !o.planned || o.planned_start != t ||
                             o.cluster != (size_t)c || o.start != (t == NOW)
                       : o.planned || o.start) &&
                wrong++ == 0)
                printf("# seed %llu job %lld: planned %d at %.0f on %zu, "
                       "expected %d at %.0f on %d\n",
                       (unsigned long long)seed, (long long)id, o.planned,
                       o.planned_start, o.cluster, found, t, c);
            plan_out_fini(&o, 1);
            plan_destroy(p);
        }
    }
    ok(!failed, "random plans, later starts: built and run");
    ok(!wrong && later > checked / 4, "random plans: %d jobs, %d to start "
       "later, each when and where a check of every node says (%d not)",
       checked, later, wrong);
}

/* An entry that stands for an array's tasks: as many start as fit now,
 * spread over both clusters; the next then waits as one job would (the
 * EASY head), and a running limit holds the rest back. */
static void t_tasks(void)
{
    struct plan_job jobs[2] = {job(1, 1, 4, 50, NULL), job(2, 1, 4, 10,
                                                           NULL)};
    struct plan_out out[2];
    struct plan_config cfg = {.backfill = PLAN_BF_EASY};
    struct plan *p = busy_a(); /* a0 busy until NOW + 100: a1 is free */
    int room[1] = {2};
    size_t on_b = 0;

    jobs[0].count = 10;
    ok(p && plan_run(p, &cfg, jobs, 2, out) == 0, "tasks: the plan runs");
    ok(!out[0].start && out[0].n_starts == 1 && out[0].starts[0].cluster == 0
       && out[0].starts[0].nodes[0] == 1, "tasks: one starts on a1, the "
       "only free node of cluster a");
    ok(out[0].planned && out[0].planned_start == NOW + 50 &&
       out[0].reserved, "tasks: the next is the EASY head, planned when "
       "the first ends");
    ok(!out[1].start, "tasks: a later job does not pass them (%s)",
       out[1].reason);
    plan_out_fini(out, 2);
    plan_destroy(p);

    p = plan_create(fabric, 2, NOW);
    jobs[0].count = 4;
    ok(p && plan_run(p, &cfg, jobs, 1, out) == 0 && out[0].n_starts == 4,
       "tasks: 4 tasks of 4 cpus start on a free fabric of 6 nodes");
    for (size_t k = 0; k < out[0].n_starts; k++)
        on_b += out[0].starts[k].cluster == 1;
    ok(on_b == 2 && !out[0].planned, "tasks: 2 on a, 2 on b; none is left "
       "to wait");
    plan_out_fini(out, 1);
    plan_destroy(p);

    p = plan_create(fabric, 2, NOW);
    jobs[0].count = 5;
    jobs[0].group[3] = 1;
    cfg.room = room;
    cfg.n_room = 1;
    ok(p && plan_run(p, &cfg, jobs, 1, out) == 0 && out[0].n_starts == 2 &&
       out[0].limited == 1 && room[0] == 0, "tasks: a limit of 2 at once "
       "starts 2 and holds the rest (limited by group 1)");
    plan_out_fini(out, 1);
    plan_destroy(p);
}

int main(void)
{
    fabric_init();
    t_tasks();
    t_policies();
    t_cross_cluster();
    t_reservations();
    t_checks();
    t_single_account();
    t_start_now();
    t_start_later();
    return done_testing();
}
