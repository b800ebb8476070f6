/* scheduler_plan_order.c - a plan whose searches take the clusters soonest
 * bound first makes the plan of one that takes them in index order
 * (plan_config.index_order, the plain search): over thousands of random
 * fabrics (1-4 clusters of 1-40 nodes, of one size or of several, running
 * jobs ending on a coarse grid of times, so that clusters tie, pins,
 * features, a reservation now and then), two cycles on the same plan
 * (conservative or EASY, with widths that take some nodes or all), every
 * job's answer compared field by field; and the order does differ from
 * the index order.
 *
 * A failure prints its seed: LOOM_ORDER_SEED=<seed> replays that world
 * alone, LOOM_ORDER_N=<n> sets how many worlds run (default 3000). */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan.h"
#include "tests/lib/rng.h"
#include "tests/lib/tap.h"

#define MAX_CL 4
#define MAX_NODES 40
#define MAX_JOBS 120
#define MAX_ALLOCS (MAX_CL * MAX_NODES * 4)

static const char *const cl_names[MAX_CL] = {"a", "b", "c", "d"};
static const char *const fs_ib[] = {"ib"};

struct world {
    struct plan_cluster cl[MAX_CL];
    struct plan_node nodes[MAX_CL][MAX_NODES];
    size_t n_cl;
    struct plan_alloc allocs[MAX_ALLOCS];
    size_t alloc_node[MAX_ALLOCS];
    size_t n_allocs;
    struct plan_resv resv;
    size_t resv_nodes[2];
    int has_resv;
    struct plan_job jobs[MAX_JOBS];
    size_t n_jobs;
    struct plan_config cfg[2];
};

static void make_nodes(struct world *w, size_t c, size_t n)
{
    static const int cpus[] = {8, 16, 32};
    int mixed = pick(0, 4) == 0, size = cpus[pick(0, 2)];

    for (size_t i = 0; i < n; i++) {
        int ib = pick(0, 5) == 0, ncpu = mixed ? cpus[pick(0, 2)] : size;
        int used = 0;
        w->nodes[c][i] = (struct plan_node){
            .name = "n", .cpus = ncpu, .gpus = pick(0, 9) == 0 ? 2 : 0,
            .memory_mb = 64000, .features = ib ? fs_ib : NULL,
            .n_features = ib ? 1 : 0, .usable = pick(0, 19) != 0};
        /* up to four running jobs: profiles of several steps, which keep
         * floors */
        for (int k = pick(0, 4); k > 0 && used < ncpu; k--) {
            int u = pick(1, ncpu - used);
            struct plan_alloc *a = &w->allocs[w->n_allocs];
            w->alloc_node[w->n_allocs] = i;
            *a = (struct plan_alloc){c, &w->alloc_node[w->n_allocs], 1,
                                     {u, 0, 1000},
                                     (double)(pick(-1, 40) * 500)};
            w->n_allocs++;
            used += u;
        }
    }
}

static void make_world(struct world *w)
{
    memset(w, 0, sizeof(*w));
    w->n_cl = (size_t)pick(1, MAX_CL);
    for (size_t c = 0; c < w->n_cl; c++) {
        size_t n = (size_t)pick(1, MAX_NODES);
        make_nodes(w, c, n);
        w->cl[c] = (struct plan_cluster){.name = cl_names[c],
                                         .preference = pick(0, 1),
                                         .nodes = w->nodes[c],
                                         .n_nodes = n};
    }
    if ((w->has_resv = pick(0, 4) == 0)) {
        w->resv_nodes[0] = 0;
        w->resv = (struct plan_resv){7, 0, w->resv_nodes, 1,
                                     (double)pick(0, 5000), 0};
        w->resv.end = w->resv.start + pick(100, 5000);
    }
    w->n_jobs = (size_t)pick(1, MAX_JOBS);
    for (size_t i = 0; i < w->n_jobs; i++) {
        int nodes = pick(0, 3) == 0 ? pick(2, 8) : 1;
        w->jobs[i] = (struct plan_job){
            .id = (int64_t)i + 1, .nodes = nodes,
            .per_node = {pick(0, 3) ? pick(1, 8) : pick(1, 32),
                         pick(0, 9) == 0 ? 1 : 0, 1000},
            .walltime_s = pick(0, 20) == 0 ? 0 : pick(1, 50000),
            .features = pick(0, 9) == 0 ? fs_ib : NULL,
            .cluster = pick(0, 9) == 0 ? cl_names[pick(0, (int)w->n_cl - 1)]
                                       : NULL,
            .reservation = w->has_resv && pick(0, 9) == 0 ? 7 : 0,
            .count = 1};
        w->jobs[i].n_features = w->jobs[i].features ? 1 : 0;
    }
    for (int r = 0; r < 2; r++) {
        static const size_t widths[] = {0, 2, 4, 8, 1000};
        w->cfg[r] = (struct plan_config){
            .backfill = pick(0, 3) ? PLAN_BF_CONSERVATIVE : PLAN_BF_EASY,
            .depth = (size_t)pick(0, MAX_JOBS), .overdue_s = 60,
            .width = widths[pick(0, 4)]};
    }
}

/* Both cycles on a fresh plan of the world; plain: the clusters in index
 * order. How many searches took them in another order into *reordered.
 * -1 on OOM. */
static int run(const struct world *w, int plain,
               struct plan_out out[2][MAX_JOBS], size_t *reordered)
{
    struct plan *p = plan_create(w->cl, w->n_cl, 0);
    int rc = p ? 0 : -1;

    for (size_t k = 0; rc == 0 && k < w->n_allocs; k++)
        rc = plan_add_alloc(p, &w->allocs[k]);
    if (rc == 0 && w->has_resv)
        rc = plan_add_resv(p, &w->resv);
    for (int r = 0; rc == 0 && r < 2; r++) {
        struct plan_config cfg = w->cfg[r];
        cfg.index_order = plain;
        rc = plan_run(p, &cfg, w->jobs, w->n_jobs, out[r]);
    }
    *reordered = p ? plan_reordered(p) : 0;
    plan_destroy(p);
    return rc;
}

static int same_out(const struct plan_out *a, const struct plan_out *b,
                    int want)
{
    return a->id == b->id && a->start == b->start &&
           a->planned == b->planned && a->reserved == b->reserved &&
           a->planned_start == b->planned_start &&
           a->cluster == b->cluster && a->n_nodes == b->n_nodes &&
           (!a->n_nodes ||
            !memcmp(a->nodes, b->nodes, (size_t)want * sizeof(*a->nodes))) &&
           a->beyond == b->beyond && !strcmp(a->reason, b->reason);
}

int main(void)
{
    static struct world w;
    static struct plan_out ord[2][MAX_JOBS], plain[2][MAX_JOBS];
    const char *one = getenv("LOOM_ORDER_SEED"), *nv = getenv("LOOM_ORDER_N");
    uint64_t first = one ? strtoull(one, NULL, 10) : 1;
    uint64_t n = one ? 1 : nv ? strtoull(nv, NULL, 10) : 3000;
    size_t jobs = 0, reordered_all = 0, reserved = 0;
    int failed = 0, wrong = 0;

    for (uint64_t seed = first; seed < first + n && !failed; seed++) {
        size_t reordered, unused;
        rng_state = seed;
        make_world(&w);
        if (run(&w, 0, ord, &reordered) < 0 ||
            run(&w, 1, plain, &unused) < 0 || unused != 0) {
            failed = 1;
            break;
        }
        reordered_all += reordered;
        for (int r = 0; r < 2; r++)
            for (size_t i = 0; i < w.n_jobs; i++) {
                int want = w.jobs[i].nodes > 0 ? w.jobs[i].nodes : 1;
                jobs++;
                reserved += (size_t)ord[r][i].reserved;
                if (!same_out(&ord[r][i], &plain[r][i], want) &&
                    wrong++ == 0)
                    printf("# seed %llu cycle %d job %lld: planned %d at "
                           "%.0f on %zu (%s), in full %d at %.0f on %zu "
                           "(%s)\n", (unsigned long long)seed, r + 1,
                           (long long)ord[r][i].id, ord[r][i].planned,
                           ord[r][i].planned_start, ord[r][i].cluster,
                           ord[r][i].reason, plain[r][i].planned,
                           plain[r][i].planned_start, plain[r][i].cluster,
                           plain[r][i].reason);
            }
        plan_out_fini(ord[0], w.n_jobs);
        plan_out_fini(ord[1], w.n_jobs);
        plan_out_fini(plain[0], w.n_jobs);
        plan_out_fini(plain[1], w.n_jobs);
    }
    ok(!failed, "random plans: built and run, clusters in either order");
    ok(!wrong && reserved > jobs / 10, "random plans: %zu answers (%zu "
       "reservations), each the same as with the clusters in index order "
       "(%d not)", jobs, reserved, wrong);
    ok(one || reordered_all > jobs / 20, "random plans: %zu searches took "
       "the clusters in another order", reordered_all);
    return done_testing();
}
