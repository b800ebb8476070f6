/* scheduler_plan.c - the planner on hand-made fabrics whose right answer is
 * known: backfill under each policy, cross-cluster placement, reservations,
 * windows, feasibility. */
/* SPDX-License-Identifier: MIT */
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

int main(void)
{
    fabric_init();
    t_policies();
    t_cross_cluster();
    t_reservations();
    t_checks();
    return done_testing();
}
