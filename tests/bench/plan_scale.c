/* plan_scale.c - the planner at fabric scale: 16 clusters x 1,000 nodes of
 * 32 cores, busy with running jobs, and 100,000 waiting jobs of mixed
 * sizes. Times a full EASY cycle, a conservative cycle over the first
 * `depth` jobs, and the cycle after one job ends (searching every
 * estimate again, and keeping those the jobs show, as loomd's cycle after
 * an event does), each as loomd runs it: a plan built afresh, then the
 * whole queue; EASY at loomd's default depth, the jobs given a planned
 * start (as sched-scale.sh runs loomd). Prints one table: wall and CPU
 * time of each cycle, a digest of what it planned and one of its starts
 * and reservations alone (two builds that print the same digests made the
 * same plans; the two cycles after one job ended decide the same).
 * sched-scale.sh runs it beside loomd, on loomd's fabric (-r 1: one
 * whole-node job on every node), so that loomd's share of a cycle shows as
 * a ratio whatever else the machine runs.
 *   plan_scale [-c clusters] [-n nodes] [-j jobs] [-d conservative depth]
 *              [-e EASY depth] [-s seed] [-w search width, 0: every node]
 *              [-r most running jobs per node, 1 to 4] */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scheduler/plan.h"

static unsigned long long rng = 88172645463325252ULL;

static unsigned long long next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static double clock_ms(clockid_t id)
{
    struct timespec ts;

    clock_gettime(id, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct fabric {
    struct plan_cluster *cl;
    struct plan_node *nodes;
    size_t n_cl, n_nodes;
    struct plan_alloc *allocs;
    size_t *alloc_nodes;
    size_t n_allocs;
    struct plan_job *jobs;
    size_t n_jobs;
};

/* Every node busy: 1 to `most` running jobs filling its 32 cores, each
 * ending within the next 2 hours. */
static void build(struct fabric *f, size_t n_cl, size_t per, size_t n_jobs,
                  int most)
{
    static char names[16][16];
    size_t a = 0;

    f->n_cl = n_cl;
    f->n_nodes = n_cl * per;
    f->cl = calloc(n_cl, sizeof(*f->cl));
    f->nodes = calloc(f->n_nodes, sizeof(*f->nodes));
    f->allocs = calloc(f->n_nodes * 4, sizeof(*f->allocs));
    f->alloc_nodes = calloc(f->n_nodes * 4, sizeof(*f->alloc_nodes));
    for (size_t c = 0; c < n_cl; c++) {
        snprintf(names[c % 16], sizeof(names[0]), "c%zu", c);
        f->cl[c] = (struct plan_cluster){.name = names[c % 16],
                                         .preference = (int)c,
                                         .nodes = &f->nodes[c * per],
                                         .n_nodes = per};
        for (size_t i = 0; i < per; i++) {
            size_t k = c * per + i;
            int used = 0, parts = 1 + (int)(next() % (unsigned)most);
            f->nodes[k] = (struct plan_node){.name = "n", .cpus = 32,
                                             .memory_mb = 128000,
                                             .usable = 1};
            for (int p = 0; p < parts && used < 32; p++) {
                int cpus = p == parts - 1 ? 32 - used
                                          : 1 + (int)(next() % (32 - used));
                f->alloc_nodes[a] = i;
                f->allocs[a] = (struct plan_alloc){
                    c, &f->alloc_nodes[a], 1, {cpus, 0, 1000},
                    60.0 + (double)(next() % 7200)};
                used += cpus;
                a++;
            }
        }
    }
    f->n_allocs = a;
    f->n_jobs = n_jobs;
    f->jobs = calloc(n_jobs, sizeof(*f->jobs));
    for (size_t i = 0; i < n_jobs; i++) {
        unsigned r = (unsigned)(next() % 100);
        int nodes = r < 60 ? 1 : r < 85 ? 1 + (int)(next() % 4)
                                        : r < 97 ? 4 + (int)(next() % 28)
                                                 : 32 + (int)(next() % 224);
        int cpus = nodes > 1 ? 32 : 1 + (int)(next() % 32);
        f->jobs[i] = (struct plan_job){
            .id = (int64_t)i + 1, .nodes = nodes,
            .per_node = {cpus, 0, 1000},
            .walltime_s = 300 + (long)(next() % 86100)};
    }
}

static struct plan *fresh(const struct fabric *f, double now)
{
    struct plan *p = plan_create(f->cl, f->n_cl, now);

    for (size_t i = 0; p && i < f->n_allocs; i++)
        if (plan_add_alloc(p, &f->allocs[i]) < 0)
            exit(1);
    return p;
}

/* The bits of a time: a digest tells apart starts that differ by less
 * than a second. */
static unsigned long long bits(double t)
{
    unsigned long long b;

    memcpy(&b, &t, sizeof(b));
    return b;
}

/* A digest of what the plan says of jobs (starts, planned starts,
 * clusters, nodes, reasons, the tasks of an array that start, who is
 * beyond the depth or held by a limit): two builds of the planner that
 * print the same digest made the same plan, whatever their speed. FNV-1a
 * over the fields; decided: of the starts and reservations alone (what a
 * cycle that keeps estimates decides as one that does not). */
static unsigned long long digest(const struct plan_job *jobs,
                                 const struct plan_out *out, size_t n,
                                 int decided)
{
    unsigned long long h = 14695981039346656037ULL;

#define MIX(v)                                                              \
    do {                                                                    \
        unsigned long long x_ = (unsigned long long)(v);                    \
        for (int b_ = 0; b_ < 8; b_++, x_ >>= 8)                            \
            h = (h ^ (x_ & 0xff)) * 1099511628211ULL;                       \
    } while (0)
    for (size_t i = 0; i < n; i++) {
        if (decided && !out[i].start && !out[i].reserved)
            continue;
        MIX(out[i].start);
        MIX(out[i].planned);
        MIX(out[i].reserved);
        MIX(bits(out[i].planned_start));
        MIX(out[i].cluster);
        MIX(out[i].n_nodes);
        for (size_t k = 0; k < out[i].n_nodes; k++)
            MIX(out[i].nodes[k]);
        if (!decided) {
            MIX(out[i].beyond);
            MIX(out[i].limited);
            for (const char *c = out[i].reason; *c; c++)
                MIX(*c);
        }
        MIX(out[i].n_starts);
        for (size_t s = 0; s < out[i].n_starts; s++) {
            MIX(out[i].starts[s].cluster);
            for (int k = 0; k < (jobs[i].nodes > 0 ? jobs[i].nodes : 1); k++)
                MIX(out[i].starts[s].nodes[k]);
        }
    }
#undef MIX
    return h;
}

/* What a cycle gave: its wall and CPU time (plan building included), the
 * jobs it started, the digest of its plan. */
struct result {
    double ms, cpu_ms;
    size_t started;
    unsigned long long sum, decided;
};

/* One cycle on a fresh plan; mark: each job then knows whether it shows
 * an estimate (planned, not started), as loomd's queue does after it. */
static struct result cycle(struct fabric *f, const struct plan_config *cfg,
                           size_t n_jobs, double now, int mark)
{
    struct plan_out *out = calloc(n_jobs, sizeof(*out));
    double t0 = clock_ms(CLOCK_MONOTONIC);
    double c0 = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    struct plan *p = fresh(f, now);
    struct result r = {0};

    if (!p || !out || plan_run(p, cfg, f->jobs, n_jobs, out) < 0) {
        fprintf(stderr, "plan_scale: out of memory\n");
        exit(1);
    }
    r.ms = clock_ms(CLOCK_MONOTONIC) - t0;
    r.cpu_ms = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    for (size_t i = 0; i < n_jobs; i++) {
        r.started += out[i].start;
        if (mark)
            f->jobs[i].estimated = out[i].planned && !out[i].start;
    }
    r.sum = digest(f->jobs, out, n_jobs, 0);
    r.decided = digest(f->jobs, out, n_jobs, 1);
    plan_out_fini(out, n_jobs);
    free(out);
    plan_destroy(p);
    return r;
}

static void report(const char *what, struct result r)
{
    printf("%-46s %9.1f ms %9.1f ms %8zu %016llx %016llx\n", what, r.ms,
           r.cpu_ms, r.started, r.sum, r.decided);
}

int main(int argc, char **argv)
{
    size_t n_cl = 16, per = 1000, n_jobs = 100000, depth = 10000;
    struct fabric f = {0};
    struct plan_config easy = {.backfill = PLAN_BF_EASY, .depth = 1000,
                               .overdue_s = 60, .width = 32};
    struct plan_config cons = {.backfill = PLAN_BF_CONSERVATIVE,
                               .overdue_s = 60, .width = 32};
    int o, most = 4;

    while ((o = getopt(argc, argv, "c:n:j:d:e:s:w:r:")) != -1) {
        switch (o) {
        case 'c': n_cl = strtoul(optarg, NULL, 10); break;
        case 'n': per = strtoul(optarg, NULL, 10); break;
        case 'j': n_jobs = strtoul(optarg, NULL, 10); break;
        case 'd': depth = strtoul(optarg, NULL, 10); break;
        case 'e': easy.depth = strtoul(optarg, NULL, 10); break;
        case 's': rng = strtoull(optarg, NULL, 10) | 1; break;
        case 'w': easy.width = cons.width = strtoul(optarg, NULL, 10); break;
        case 'r': most = (int)strtol(optarg, NULL, 10); break;
        default:
            fprintf(stderr, "usage: plan_scale [-c clusters] [-n nodes] "
                    "[-j jobs] [-d depth] [-e easy depth] [-s seed] "
                    "[-w width] [-r running jobs per node]\n");
            return 2;
        }
    }
    if (n_cl == 0 || n_cl > 16 || per == 0 || n_jobs == 0 || most < 1 ||
        most > 4) {
        fprintf(stderr, "plan_scale: -c is 1 to 16, -n and -j at least 1, "
                "-r 1 to 4\n");
        return 2;
    }
    cons.depth = depth;
    build(&f, n_cl, per, n_jobs, most);
    printf("%-46s %12s %12s %8s %16s %16s\n", "planner benchmark", "time",
           "CPU", "started", "plan digest", "starts, reserv.");
    printf("fabric: %zu clusters x %zu nodes x 32 cores, %zu running jobs, "
           "%zu waiting; depth %zu (EASY %zu), search width %zu\n", n_cl,
           per, f.n_allocs, n_jobs, depth, easy.depth, cons.width);
    report("full EASY cycle (all waiting jobs)",
           cycle(&f, &easy, n_jobs, 0, 1));
    report("conservative cycle over the first depth jobs",
           cycle(&f, &cons, depth < n_jobs ? depth : n_jobs, 0, 0));
    /* One job ends: the cycle after it, on the same queue; then the same
     * keeping the estimates the jobs show (as loomd's cycle after an event
     * does): its starts and its head's reservation are the same. */
    f.allocs[0].n_nodes = 0;
    report("EASY cycle after one job ended", cycle(&f, &easy, n_jobs, 1, 0));
    easy.keep_estimates = 1;
    report("  the same, estimates kept", cycle(&f, &easy, n_jobs, 1, 0));
    return 0;
}
