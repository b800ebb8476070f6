/* scheduler_plan_ff.c - the planner's order of nodes by the time they are
 * free for ever (scheduler/plan_ff.c): on clusters large enough to hold
 * many blocks, after thousands of random takes (which move nodes across
 * blocks and split them), every usable node is in the order once, under
 * its current time, and the order is sorted; a reservation rebuilds it. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "scheduler/plan_state.h"
#include "tests/lib/tap.h"

#define NODES 700 /* about 22 blocks half full, more after splits */

static unsigned long long rng = 2463534242ULL;

static unsigned next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* Is the order of cluster c sound? Fills why on the first fault. */
static int order_ok(struct plan *p, size_t c, const char **why)
{
    const struct pcl *pc = &p->cl[c];
    static int seen[NODES];
    size_t count = 0, usable = 0;
    const struct ffent *last = NULL;

    for (size_t i = 0; i < pc->def->n_nodes; i++) {
        seen[i] = 0;
        usable += pc->def->nodes[i].usable != 0;
    }
    for (size_t b = 0; b < pc->n_ffb; b++) {
        const struct ffblock *fb = pc->ffb[b];
        if (fb->n > PLAN_FF_BLOCK || (fb->n == 0 && pc->n_ffb > 1)) {
            *why = "a block is empty or over-full";
            return 0;
        }
        for (size_t k = 0; k < fb->n; k++) {
            const struct ffent *e = &fb->e[k];
            if (e->node >= pc->def->n_nodes ||
                !pc->def->nodes[e->node].usable || seen[e->node]++) {
                *why = "a node is in the order twice, or is not usable";
                return 0;
            }
            if (e->ff != prof_free_from(&pc->nodes[e->node]) ||
                e->ff != pc->ffkey[e->node]) {
                *why = "a node is kept under a time not its own";
                return 0;
            }
            if (last && (last->ff > e->ff ||
                         (last->ff == e->ff && last->node >= e->node))) {
                *why = "the order is not sorted";
                return 0;
            }
            last = e;
            count++;
        }
    }
    if (count != usable) {
        *why = "a usable node is missing from the order";
        return 0;
    }
    return 1;
}

int main(void)
{
    static struct plan_node nodes[NODES];
    struct plan_cluster cl = {.name = "a", .nodes = nodes, .n_nodes = NODES};
    struct plan_use u = {4, 0, 100};
    struct plan *p;
    const char *why = "";
    size_t blocks_most = 0;
    int ok_all = 1;

    for (size_t i = 0; i < NODES; i++)
        nodes[i] = (struct plan_node){.name = "n", .cpus = 32,
                                      .memory_mb = 64000,
                                      .usable = i % 17 != 5};
    p = plan_create(&cl, 1, 0);
    ok(p != NULL, "a plan of %d nodes", NODES);
    if (!p)
        return done_testing();
    /* running jobs end at random times: the order is built from them */
    for (size_t i = 0; i < NODES; i++)
        plan_take(p, 0, i, 0, 60 + next() % 7200, &u);
    ok(plan_ff_build(p, 0) == 0, "the order is built");
    ok(order_ok(p, 0, &why), "it is sound after the build");
    ok(p->cl[0].n_ffb > 2, "it spans %zu blocks", p->cl[0].n_ffb);
    /* reservations of the plan: nodes move far behind, and back within */
    for (int r = 0; r < 20000 && ok_all; r++) {
        size_t i = next() % NODES;
        double start = (double)(next() % 90000);
        double end = start + 300 + next() % 86000;
        if (plan_take(p, 0, i, start, end, &u) < 0 ||
            !order_ok(p, 0, &why))
            ok_all = 0;
        if (p->cl[0].n_ffb > blocks_most)
            blocks_most = p->cl[0].n_ffb;
    }
    ok(ok_all, "it stays sound over 20,000 takes");
    ok(blocks_most > (NODES / (PLAN_FF_BLOCK / 2)),
       "blocks were split (%zu at most)", blocks_most);
    /* a reservation drops the order; the next search builds it anew */
    {
        size_t on[] = {3, 4};
        struct plan_resv rv = {7, 0, on, 2, 100000, 200000};
        ok(plan_add_resv(p, &rv) == 0 && !p->cl[0].ff_ok,
           "a reservation drops the order");
        ok(plan_ff_build(p, 0) == 0 && order_ok(p, 0, &why),
           "it is built again, sound");
        ok(p->cl[0].ffkey[3] >= 200000,
           "a reserved node is free for ever after its reservation");
    }
    if (*why)
        printf("# the first fault: %s\n", why);
    plan_destroy(p);
    return done_testing();
}
