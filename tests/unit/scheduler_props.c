/* scheduler_props.c - property tests of the planner: thousands of random
 * small fabrics and workloads (2-3 clusters of 2-16 nodes with random cpus,
 * memory, gpus, features and queues; 10-60 jobs of random shapes with
 * exact walltimes; a few reservations with member jobs) replayed through
 * tests/lib/simloop.c under strict FIFO, EASY and conservative backfill.
 * Checked after every cycle and over the whole run: no node over-committed,
 * every start honours the job's nodes, features, queue and pin, jobs keep
 * out of reservations they are not in and inside the one they are in,
 * EASY's head reservation and conservative's reservations never move later,
 * strict FIFO starts in queue order, and every job that could run does.
 *
 * A failure prints its seed: LOOM_PROPS_SEED=<seed> replays that workload
 * alone, LOOM_PROPS_N=<n> sets how many workloads run (default 3000). */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/simloop.h"
#include "tests/lib/rng.h"
#include "tests/lib/tap.h"

#define MAX_CL 3
#define MAX_NODES 16
#define MAX_JOBS 60
#define MAX_RESV 2
#define EPS 1e-6

static const char *const cl_names[MAX_CL] = {"a", "b", "c"};
static const char *const fs_none[] = {NULL};
static const char *const fs_ssd[] = {"ssd"};
static const char *const fs_ib[] = {"ib"};
static const char *const fs_big[] = {"bigmem"};
static const char *const fs_ssd_ib[] = {"ssd", "ib"};
static const char *const fs_ib_big[] = {"ib", "bigmem"};
static const struct {
    const char *const *v;
    size_t n;
} node_fsets[] = {{fs_none, 0}, {fs_ssd, 1},    {fs_ib, 1},
                  {fs_big, 1},  {fs_ssd_ib, 2}, {fs_ib_big, 2}},
  job_fsets[] = {{fs_none, 0}, {fs_ssd, 1}, {fs_ib, 1}, {fs_big, 1}};
static const char *const qs_batch[] = {"batch"};
static const char *const qs_debug[] = {"batch", "debug"};
static const char *const qs_all[] = {"batch", "debug", "closed"};
static const struct plan_queue queues[] = {
    {"batch", 0, 1}, {"debug", 600, 1}, {"closed", 0, 0}};

struct world {
    struct plan_cluster cl[MAX_CL];
    struct plan_node nodes[MAX_CL][MAX_NODES];
    size_t n_cl;
    struct plan_resv resv[MAX_RESV];
    size_t resv_nodes[MAX_RESV][3];
    size_t n_resv;
    struct sim_job jobs[MAX_JOBS];
    size_t n_jobs;
    int busy;   /* arrivals ten times as dense */
    int closed; /* some jobs go to a closed queue */
    int round;  /* times are multiples of 100 s */
};

/* ---- a small deterministic generator ------------------------------------- */

static int chance(int percent)
{
    return pick(1, 100) <= percent;
}

/* ---- the world ----------------------------------------------------------- */

/* Random nodes; in a quarter of the worlds every node alike and every
 * cluster as preferred, so that clusters often tie. */
static void make_fabric(struct world *w)
{
    static const int cpus[] = {4, 8, 16, 32};
    static const long mem[] = {8000, 16000, 64000};
    int alike = chance(25), same_pref = alike || chance(50);

    w->n_cl = (size_t)pick(2, 3);
    for (size_t c = 0; c < w->n_cl; c++) {
        size_t n = (size_t)pick(2, alike ? 6 : MAX_NODES);

        for (size_t i = 0; i < n; i++) {
            struct plan_node *nd = &w->nodes[c][i];
            int fs = alike ? 0 : pick(0, 5), qs = alike ? 9 : pick(0, 9);

            *nd = (struct plan_node){
                .name = "n",
                .cpus = alike ? 16 : cpus[pick(0, 3)],
                .gpus = !alike && chance(25) ? pick(1, 4) : 0,
                .memory_mb = alike ? 64000 : mem[pick(0, 2)],
                .features = node_fsets[fs].v,
                .n_features = node_fsets[fs].n,
                .queues = qs < 5   ? qs_batch
                          : qs < 9 ? qs_debug
                                   : qs_all,
                .n_queues = qs < 5   ? 1
                            : qs < 9 ? 2
                                     : 3,
                .usable = alike || !chance(5)};
        }
        w->cl[c] =
            (struct plan_cluster){.name = cl_names[c],
                                  .preference = same_pref ? 0 : pick(0, 1),
                                  .nodes = w->nodes[c],
                                  .n_nodes = n,
                                  .queues = queues,
                                  .n_queues = 3};
    }
}

/* Up to two reservations on usable nodes, on different nodes. */
static void make_resv(struct world *w, double horizon)
{
    size_t want = (size_t)pick(0, MAX_RESV);

    for (size_t r = 0; r < want; r++) {
        size_t c = (size_t)pick(0, (int)w->n_cl - 1), n = 0;
        size_t count = (size_t)pick(1, 3);
        struct plan_resv *rv = &w->resv[w->n_resv];

        for (size_t i = 0; i < w->cl[c].n_nodes && n < count; i++) {
            int taken = !w->nodes[c][i].usable || chance(40);

            for (size_t o = 0; o < w->n_resv && !taken; o++)
                for (size_t k = 0; k < w->resv[o].n_nodes; k++)
                    taken |=
                        w->resv[o].cluster == c && w->resv_nodes[o][k] == i;
            if (!taken)
                w->resv_nodes[w->n_resv][n++] = i;
        }
        if (n == 0)
            continue;
        *rv = (struct plan_resv){.id = 101 + (int64_t)w->n_resv,
                                 .cluster = c,
                                 .nodes = w->resv_nodes[w->n_resv],
                                 .n_nodes = n,
                                 .start = (double)pick(0, (int)horizon)};
        rv->end = rv->start + pick(600, 5000);
        w->n_resv++;
    }
}

/* A job inside reservation rv: small enough for its nodes and window. */
static void member_job(const struct world *w, const struct plan_resv *rv,
                       struct sim_job *j)
{
    int cpus = 1 << 30, gpus = 1 << 30;
    long mem = 1L << 40;

    for (size_t k = 0; k < rv->n_nodes; k++) {
        const struct plan_node *nd = &w->nodes[rv->cluster][rv->nodes[k]];

        cpus = nd->cpus < cpus ? nd->cpus : cpus;
        gpus = nd->gpus < gpus ? nd->gpus : gpus;
        mem = nd->memory_mb < mem ? nd->memory_mb : mem;
    }
    j->req.reservation = rv->id;
    j->req.nodes = pick(1, (int)rv->n_nodes);
    j->req.per_node =
        (struct plan_use){pick(1, cpus), pick(0, gpus), pick(0, (int)mem)};
    j->req.cluster = chance(50) ? w->cl[rv->cluster].name : NULL;
    j->req.features = NULL;
    j->req.n_features = 0;
    j->req.queue = NULL;
    j->run = pick(1, (int)(rv->end - rv->start));
    j->req.walltime_s = (long)j->run;
}

/* A duration in (0, most]: any second, or in round worlds a multiple of
 * 100 s (as users ask), so that ends coincide and clusters tie. */
static double time_s(const struct world *w, int most)
{
    return w->round ? 100.0 * pick(1, most < 100 ? 1 : most / 100)
                    : pick(1, most);
}

static void make_jobs(struct world *w)
{
    double t = 0;

    w->n_jobs = (size_t)pick(10, MAX_JOBS);
    for (size_t i = 0; i < w->n_jobs; i++) {
        struct sim_job *j = &w->jobs[i];
        int fs = chance(70) ? 0 : pick(1, 3), q = pick(0, 99);

        t += chance(30) ? 0 : time_s(w, w->busy ? 60 : 600);
        *j = (struct sim_job){
            .req = {.id = (int64_t)i + 1,
                    .nodes = chance(60) ? 1 : pick(1, 4),
                    .per_node = {pick(1, 16), chance(20) ? pick(1, 2) : 0,
                                 pick(0, 16000)},
                    .features = job_fsets[fs].v,
                    .n_features = job_fsets[fs].n,
                    .cluster =
                        chance(20) ? cl_names[pick(0, (int)w->n_cl - 1)] : NULL,
                    .queue = q < 50                 ? NULL
                             : q < 80               ? "batch"
                             : q < 95 || !w->closed ? "debug"
                                                    : "closed"},
            .submit = t,
            .run = time_s(w, 3000)};
        if (j->req.queue && !strcmp(j->req.queue, "debug") && j->run > 600)
            j->run = time_s(w, 600);
        j->req.walltime_s = (long)j->run; /* exact estimates */
    }
    make_resv(w, t + 3000);
    for (size_t i = 0; i < w->n_jobs && w->n_resv; i++)
        if (chance(10))
            member_job(w, &w->resv[pick(0, (int)w->n_resv - 1)], &w->jobs[i]);
}

static void make_world(struct world *w, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    rng_state = seed * 0x2545f4914f6cdd1dULL + 1;
    w->busy = chance(50);
    w->closed = chance(10);
    w->round = chance(30);
    make_fabric(w);
    make_jobs(w);
}

/* ---- the checks ---------------------------------------------------------- */

struct check {
    const struct world *w;
    enum plan_backfill bf;
    double first_head[MAX_JOBS + 1]; /* EASY: start when first the head */
    double last_resv[MAX_JOBS + 1];  /* conservative: last reserved start */
    size_t backfilled;               /* starts while an earlier job waits */
    const char *kind;                /* of the failure, or NULL */
    char fail[512];
};

/* Record the first failure of a run: its kind and what happened. */
#define FAIL(ck, what, ...)                                                    \
    ((ck)->kind = (what),                                                      \
     snprintf((ck)->fail, sizeof((ck)->fail), __VA_ARGS__), 1)

static int has(const char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

static const struct plan_resv *resv_of(const struct world *w, int64_t id)
{
    for (size_t r = 0; r < w->n_resv; r++)
        if (w->resv[r].id == id)
            return &w->resv[r];
    return NULL;
}

static int in_resv(const struct plan_resv *rv, size_t cluster, size_t node)
{
    for (size_t k = 0; rv->cluster == cluster && k < rv->n_nodes; k++)
        if (rv->nodes[k] == node)
            return 1;
    return 0;
}

/* Does a job that starts at now on cluster c, nodes v, honour its request
 * and the reservations? */
static int check_place(struct check *ck, const struct sim_job *j, double now,
                       size_t c, const size_t *v, size_t n)
{
    const struct world *w = ck->w;
    const struct plan_job *q = &j->req;
    double end = now + (double)q->walltime_s;

    if (c >= w->n_cl || n != (size_t)q->nodes)
        return FAIL(ck, "placement", "job %lld: cluster %zu, %zu nodes for %d",
                    (long long)q->id, c, n, q->nodes);
    if (q->cluster && strcmp(q->cluster, w->cl[c].name))
        return FAIL(ck, "pin", "job %lld pinned to %s started on %s",
                    (long long)q->id, q->cluster, w->cl[c].name);
    if (q->queue) {
        const struct plan_queue *pq = NULL;

        for (size_t i = 0; i < w->cl[c].n_queues; i++)
            if (!strcmp(w->cl[c].queues[i].name, q->queue))
                pq = &w->cl[c].queues[i];
        if (!pq || !pq->open ||
            (pq->max_walltime_s && q->walltime_s > pq->max_walltime_s))
            return FAIL(ck, "queue", "job %lld started in queue %s (%s)",
                        (long long)q->id, q->queue,
                        !pq         ? "missing"
                        : !pq->open ? "closed"
                                    : "walltime over");
    }
    for (size_t k = 0; k < n; k++) {
        const struct plan_node *nd;

        if (v[k] >= w->cl[c].n_nodes)
            return FAIL(ck, "placement", "job %lld: node index %zu",
                        (long long)q->id, v[k]);
        for (size_t m = 0; m < k; m++)
            if (v[m] == v[k])
                return FAIL(ck, "placement", "job %lld: node %zu twice",
                            (long long)q->id, v[k]);
        nd = &w->nodes[c][v[k]];
        if (!nd->usable)
            return FAIL(ck, "unusable node", "job %lld on unusable node %s/%zu",
                        (long long)q->id, w->cl[c].name, v[k]);
        for (size_t f = 0; f < q->n_features; f++)
            if (!has(nd->features, nd->n_features, q->features[f]))
                return FAIL(
                    ck, "features", "job %lld on %s/%zu without feature %s",
                    (long long)q->id, w->cl[c].name, v[k], q->features[f]);
        if (q->queue && !has(nd->queues, nd->n_queues, q->queue))
            return FAIL(ck, "queue",
                        "job %lld on %s/%zu that does not serve %s",
                        (long long)q->id, w->cl[c].name, v[k], q->queue);
        for (size_t r = 0; r < w->n_resv; r++) {
            const struct plan_resv *rv = &w->resv[r];

            if (rv->id != q->reservation && in_resv(rv, c, v[k]) &&
                now < rv->end && end > rv->start)
                return FAIL(ck, "reservation",
                            "job %lld [%.0f, %.0f) on %s/%zu inside "
                            "reservation %lld [%.0f, %.0f)",
                            (long long)q->id, now, end, w->cl[c].name, v[k],
                            (long long)rv->id, rv->start, rv->end);
        }
        if (q->reservation) {
            const struct plan_resv *rv = resv_of(w, q->reservation);

            if (!rv || !in_resv(rv, c, v[k]) || now < rv->start ||
                end > rv->end)
                return FAIL(ck, "reservation",
                            "job %lld of reservation %lld runs [%.0f, "
                            "%.0f) on %s/%zu, outside it",
                            (long long)q->id, (long long)q->reservation, now,
                            end, w->cl[c].name, v[k]);
        }
    }
    return 0;
}

/* What the running jobs and the starting ones hold on every node. */
static int check_capacity(struct check *ck, const struct sim_cycle *cy)
{
    const struct world *w = ck->w;
    struct plan_use used[MAX_CL][MAX_NODES];

    memset(used, 0, sizeof(used));
    for (size_t i = 0; i < cy->n_jobs; i++) {
        const struct sim_job *j = &cy->jobs[i];

        for (size_t k = 0; j->state == SIM_RUNNING && k < j->n_nodes; k++) {
            struct plan_use *u = &used[j->cluster][j->nodes[k]];

            u->cpus += j->req.per_node.cpus;
            u->gpus += j->req.per_node.gpus;
            u->memory_mb += j->req.per_node.memory_mb;
        }
    }
    for (size_t q = 0; q < cy->n_queue; q++) {
        const struct plan_out *o = &cy->out[q];
        const struct sim_job *j = &cy->jobs[cy->queue[q]];

        if (!o->start)
            continue;
        if (check_place(ck, j, cy->now, o->cluster, o->nodes, o->n_nodes))
            return 1;
        for (size_t k = 0; k < o->n_nodes; k++) {
            struct plan_use *u = &used[o->cluster][o->nodes[k]];

            u->cpus += j->req.per_node.cpus;
            u->gpus += j->req.per_node.gpus;
            u->memory_mb += j->req.per_node.memory_mb;
        }
    }
    for (size_t c = 0; c < w->n_cl; c++)
        for (size_t i = 0; i < w->cl[c].n_nodes; i++) {
            const struct plan_node *nd = &w->nodes[c][i];
            const struct plan_use *u = &used[c][i];

            if (u->cpus > nd->cpus || u->gpus > nd->gpus ||
                u->memory_mb > nd->memory_mb)
                return FAIL(ck, "capacity",
                            "t=%.0f node %s/%zu over-committed: %d/%d "
                            "cpus, %d/%d gpus, %ld/%ld MiB",
                            cy->now, w->cl[c].name, i, u->cpus, nd->cpus,
                            u->gpus, nd->gpus, u->memory_mb, nd->memory_mb);
        }
    return 0;
}

/* The policy's promise about order and reserved starts. */
static int check_policy(struct check *ck, const struct sim_cycle *cy)
{
    int waiting = 0, head_seen = 0;

    for (size_t q = 0; q < cy->n_queue; q++) {
        const struct plan_out *o = &cy->out[q];
        int64_t id = cy->jobs[cy->queue[q]].req.id;

        if (o->id != id)
            return FAIL(ck, "placement", "out %zu is job %lld, not %lld", q,
                        (long long)o->id, (long long)id);
        if (o->start) {
            if (waiting && ck->bf == PLAN_BF_NONE)
                return FAIL(ck, "FIFO order",
                            "t=%.0f strict FIFO started job %lld behind "
                            "a waiting job",
                            cy->now, (long long)id);
            ck->backfilled += waiting;
            if (ck->first_head[id] >= 0 && cy->now > ck->first_head[id] + EPS)
                return FAIL(ck, "EASY head",
                            "t=%.0f EASY head job %lld starts after its "
                            "reserved start %.0f",
                            cy->now, (long long)id, ck->first_head[id]);
            if (ck->last_resv[id] >= 0 && cy->now > ck->last_resv[id] + EPS)
                return FAIL(ck, "conservative",
                            "t=%.0f job %lld starts after its reserved "
                            "start %.0f",
                            cy->now, (long long)id, ck->last_resv[id]);
            continue;
        }
        waiting = 1;
        if (!o->planned)
            continue;
        if (ck->bf == PLAN_BF_EASY && !head_seen) {
            head_seen = 1;
            if (ck->first_head[id] < 0)
                ck->first_head[id] = o->planned_start;
            else if (o->planned_start > ck->first_head[id] + EPS)
                return FAIL(ck, "EASY head",
                            "t=%.0f EASY head job %lld reserved at %.0f, "
                            "first at %.0f",
                            cy->now, (long long)id, o->planned_start,
                            ck->first_head[id]);
        }
        if (ck->bf == PLAN_BF_CONSERVATIVE) {
            if (ck->last_resv[id] >= 0 &&
                o->planned_start > ck->last_resv[id] + EPS)
                return FAIL(ck, "conservative",
                            "t=%.0f job %lld reserved at %.0f, before "
                            "at %.0f",
                            cy->now, (long long)id, o->planned_start,
                            ck->last_resv[id]);
            ck->last_resv[id] = o->planned_start;
        }
    }
    return 0;
}

static int verbose; /* LOOM_PROPS_SEED: print the world and each cycle */

static void print_world(const struct world *w)
{
    for (size_t c = 0; c < w->n_cl; c++)
        for (size_t i = 0; i < w->cl[c].n_nodes; i++) {
            const struct plan_node *nd = &w->nodes[c][i];

            printf("# node %s/%zu: %d cpus %d gpus %ld MiB, %zu features "
                   "%s, %zu queues%s\n",
                   w->cl[c].name, i, nd->cpus, nd->gpus, nd->memory_mb,
                   nd->n_features, nd->n_features ? nd->features[0] : "",
                   nd->n_queues, nd->usable ? "" : ", unusable");
        }
    for (size_t r = 0; r < w->n_resv; r++)
        printf("# reservation %lld on %s, %zu nodes from %zu, [%.0f, %.0f)\n",
               (long long)w->resv[r].id, w->cl[w->resv[r].cluster].name,
               w->resv[r].n_nodes, w->resv[r].nodes[0], w->resv[r].start,
               w->resv[r].end);
    for (size_t i = 0; i < w->n_jobs; i++) {
        const struct sim_job *j = &w->jobs[i];

        printf(
            "# job %lld at %.0f: %d x (%d cpus %d gpus %ld MiB) for %ld "
            "s, %s%s pin %s queue %s resv %lld\n",
            (long long)j->req.id, j->submit, j->req.nodes, j->req.per_node.cpus,
            j->req.per_node.gpus, j->req.per_node.memory_mb, j->req.walltime_s,
            j->req.n_features ? "feature " : "",
            j->req.n_features ? j->req.features[0] : "",
            j->req.cluster ? j->req.cluster : "-",
            j->req.queue ? j->req.queue : "-", (long long)j->req.reservation);
    }
}

static void print_cycle(const struct sim_cycle *cy)
{
    printf("# t=%.0f\n", cy->now);
    for (size_t q = 0; q < cy->n_queue; q++) {
        const struct plan_out *o = &cy->out[q];

        printf("#   job %lld: ", (long long)o->id);
        if (o->start) {
            printf("starts on %zu:", o->cluster);
            for (size_t k = 0; k < o->n_nodes; k++)
                printf(" %zu", o->nodes[k]);
            printf("\n");
        } else if (o->planned) {
            printf("planned at %.0f on %zu\n", o->planned_start, o->cluster);
        } else {
            printf("%s\n", o->reason);
        }
    }
}

static int on_cycle(void *arg, const struct sim_cycle *cy)
{
    struct check *ck = arg;

    if (verbose)
        print_cycle(cy);
    return check_capacity(ck, cy) || check_policy(ck, cy);
}

/* ---- over the whole run ------------------------------------------------- */

/* At every start on a node, what all the jobs there hold together. */
static int check_timeline(struct check *ck, const struct sim_job *jobs,
                          size_t n)
{
    for (size_t a = 0; a < n; a++) {
        const struct sim_job *ja = &jobs[a];

        for (size_t k = 0; ja->start >= 0 && k < ja->n_nodes; k++) {
            const struct plan_node *nd =
                &ck->w->nodes[ja->cluster][ja->nodes[k]];
            struct plan_use u = {0, 0, 0};

            for (size_t b = 0; b < n; b++) {
                const struct sim_job *jb = &jobs[b];

                if (jb->start < 0 || jb->cluster != ja->cluster ||
                    jb->start > ja->start || jb->end <= ja->start)
                    continue;
                for (size_t m = 0; m < jb->n_nodes; m++)
                    if (jb->nodes[m] == ja->nodes[k]) {
                        u.cpus += jb->req.per_node.cpus;
                        u.gpus += jb->req.per_node.gpus;
                        u.memory_mb += jb->req.per_node.memory_mb;
                    }
            }
            if (u.cpus > nd->cpus || u.gpus > nd->gpus ||
                u.memory_mb > nd->memory_mb)
                return FAIL(ck, "capacity",
                            "over the run: node %s/%zu over-committed "
                            "at t=%.0f",
                            ck->w->cl[ja->cluster].name, ja->nodes[k],
                            ja->start);
        }
    }
    return 0;
}

/* Could the job ever run on the usable nodes (outside any reservation)? */
static int could_run(const struct world *w, const struct sim_job *j)
{
    const struct plan_job *q = &j->req;

    if (q->reservation || (q->queue && !strcmp(q->queue, "closed")))
        return 0;
    for (size_t c = 0; c < w->n_cl; c++) {
        size_t fit = 0;

        if (q->cluster && strcmp(q->cluster, w->cl[c].name))
            continue;
        if (q->queue && !strcmp(q->queue, "debug") && q->walltime_s > 600)
            continue;
        for (size_t i = 0; i < w->cl[c].n_nodes; i++) {
            const struct plan_node *nd = &w->nodes[c][i];
            int ok_ = nd->usable && nd->cpus >= q->per_node.cpus &&
                      nd->gpus >= q->per_node.gpus &&
                      nd->memory_mb >= q->per_node.memory_mb &&
                      (!q->queue || has(nd->queues, nd->n_queues, q->queue));

            for (size_t f = 0; ok_ && f < q->n_features; f++)
                ok_ = has(nd->features, nd->n_features, q->features[f]);
            fit += ok_;
        }
        if (fit >= (size_t)q->nodes)
            return 1;
    }
    return 0;
}

static int check_run(struct check *ck, const struct sim_job *jobs, size_t n)
{
    int all_live = 1;

    if (check_timeline(ck, jobs, n))
        return 1;
    for (size_t i = 0; i < n; i++)
        if (jobs[i].state != SIM_REJECTED && !could_run(ck->w, &jobs[i]))
            all_live = 0;
    for (size_t i = 0; i < n; i++) {
        const struct sim_job *j = &jobs[i];

        if (j->state == SIM_WAITING && could_run(ck->w, j) &&
            (ck->bf != PLAN_BF_NONE || all_live))
            return FAIL(ck, "liveness", "job %lld could run but never started",
                        (long long)j->req.id);
        if (ck->bf != PLAN_BF_NONE || j->state != SIM_DONE)
            continue;
        for (size_t e = 0; e < i; e++) /* jobs come in submit order */
            if ((jobs[e].state == SIM_DONE && jobs[e].start > j->start) ||
                jobs[e].state == SIM_WAITING)
                return FAIL(ck, "FIFO order",
                            "strict FIFO: job %lld started at %.0f "
                            "before job %lld",
                            (long long)j->req.id, j->start,
                            (long long)jobs[e].req.id);
    }
    return 0;
}

/* ---- the runs ------------------------------------------------------------ */

#define KINDS 16

/* What one policy did over all workloads, and its failures by kind: how
 * many and the first seed of each. */
struct tally {
    size_t runs, failed, started, backfilled, cycles, members;
    struct {
        const char *kind;
        size_t count;
        uint64_t seed;
        char first[512];
    } by[KINDS];
};

static const char *bf_name(enum plan_backfill bf)
{
    return bf == PLAN_BF_NONE   ? "FIFO"
           : bf == PLAN_BF_EASY ? "EASY"
                                : "conservative";
}

static void tally_fail(struct tally *t, const struct check *ck, uint64_t seed)
{
    const char *kind = ck->kind ? ck->kind : "loop";
    size_t k = 0;

    while (k < KINDS - 1 && t->by[k].kind && strcmp(t->by[k].kind, kind))
        k++;
    if (!t->by[k].kind) {
        t->by[k].kind = kind;
        t->by[k].seed = seed;
        memcpy(t->by[k].first, ck->fail, sizeof(ck->fail));
    }
    t->by[k].count++;
    t->failed++;
}

/* Replay one world under one policy, checking it; 1 when it failed. */
static int run_one(const struct world *w0, enum plan_backfill bf, uint64_t seed,
                   struct tally *t)
{
    struct world w = *w0;
    struct check ck = {.w = &w, .bf = bf};
    struct sim_config cfg = {.clusters = w.cl,
                             .n_clusters = w.n_cl,
                             .resv = w.resv,
                             .n_resv = w.n_resv,
                             .plan = {.backfill = bf, .overdue_s = 60},
                             .order = SIM_FIFO,
                             .cycle_cb = on_cycle,
                             .cb_arg = &ck};
    struct sim_stats st;
    struct loom_error err;
    int bad;

    for (size_t i = 0; i <= MAX_JOBS; i++)
        ck.first_head[i] = ck.last_resv[i] = -1;
    bad = simloop_run(&cfg, w.jobs, w.n_jobs, &st, &err) < 0;
    if (bad && !ck.kind)
        memcpy(ck.fail, err.message, sizeof(ck.fail));
    if (!bad)
        bad = check_run(&ck, w.jobs, w.n_jobs);
    t->runs++;
    t->started += st.started;
    t->cycles += st.cycles;
    t->backfilled += ck.backfilled;
    for (size_t i = 0; i < w.n_jobs; i++)
        t->members += w.jobs[i].req.reservation && w.jobs[i].start >= 0;
    simloop_fini(w.jobs, w.n_jobs);
    if (bad)
        tally_fail(t, &ck, seed);
    if (bad && verbose)
        printf("# %s: %s\n", bf_name(bf), ck.fail);
    return bad;
}

static uint64_t env_u64(const char *name, uint64_t dflt)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;

    if (!s || !*s)
        return dflt;
    v = strtoull(s, &end, 10);
    return *end ? dflt : (uint64_t)v;
}

int main(void)
{
    static const enum plan_backfill pols[] = {PLAN_BF_NONE, PLAN_BF_EASY,
                                              PLAN_BF_CONSERVATIVE};
    static struct tally t[3];
    uint64_t one = env_u64("LOOM_PROPS_SEED", 0);
    uint64_t n = one ? 1 : env_u64("LOOM_PROPS_N", 3000);

    verbose = one != 0;
    for (uint64_t s = 0; s < n; s++) {
        uint64_t seed = one ? one : s + 1;
        struct world w;

        make_world(&w, seed);
        if (verbose)
            print_world(&w);
        for (size_t p = 0; p < 3; p++) {
            if (verbose)
                printf("# ---- %s\n", bf_name(pols[p]));
            run_one(&w, pols[p], seed, &t[p]);
        }
    }
    for (size_t p = 0; p < 3; p++) {
        ok(t[p].failed == 0,
           "%s: %zu workloads, %zu failed (%zu jobs "
           "started in %zu cycles)",
           bf_name(pols[p]), t[p].runs, t[p].failed, t[p].started, t[p].cycles);
        for (size_t k = 0; k < KINDS && t[p].by[k].kind; k++)
            printf("#   %s: %zu workloads; first, seed %llu: %s\n"
                   "#     replay: LOOM_PROPS_SEED=%llu\n",
                   t[p].by[k].kind, t[p].by[k].count,
                   (unsigned long long)t[p].by[k].seed, t[p].by[k].first,
                   (unsigned long long)t[p].by[k].seed);
    }
    ok(one || (t[1].backfilled > 0 && t[2].backfilled > 0),
       "backfill happened: EASY %zu, conservative %zu starts past a "
       "waiting job",
       t[1].backfilled, t[2].backfilled);
    ok(one || t[1].members > 0, "reservation members ran: %zu under EASY",
       t[1].members);
    return done_testing();
}
