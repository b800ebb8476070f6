/* replay.c - replay an SWF workload on simulated clusters through the
 * planner (tests/lib/simloop.c, simulated clock) and print what the users
 * would have seen and what the planner cost each cycle.
 *
 *   replay [-b none|easy|conservative] [-d depth] [-c clusters]
 *          [-n nodes per cluster] [-C cpus per node] [-e exact|x2|max]
 *          [-p fifo|priority] [trace.swf]     (stdin when no file)
 *
 * A job of P processors asks ceil(P / C) nodes of min(P, C) cpus. Its
 * walltime is the trace's requested time; when the trace has none, -e
 * picks the estimate: the runtime itself (exact), twice it (x2) or the
 * trace's longest runtime (max). Jobs run their real runtime, killed at
 * their walltime. Output: one "key value" line per measure. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scheduler/swf.h"
#include "tests/lib/simloop.h"

#define BSLD_TAU 10.0

enum estimate { EST_EXACT, EST_X2, EST_MAX };

struct opts {
    enum plan_backfill backfill;
    size_t depth;
    int clusters, nodes, cpus;
    enum estimate est;
    enum sim_order order;
    const char *path;
};

struct fabric {
    struct plan_cluster *cl;
    struct plan_node *nodes;
    char (*names)[32];
};

static int usage(void)
{
    fprintf(stderr, "usage: replay [-b none|easy|conservative] [-d depth] "
                    "[-c clusters] [-n nodes] [-C cpus] [-e exact|x2|max] "
                    "[-p fifo|priority] [trace.swf]\n");
    return 2;
}

static int count(const char *s, long lo, long hi, long *v)
{
    char *end;

    errno = 0;
    *v = strtol(s, &end, 10);
    return end != s && *end == '\0' && errno == 0 && *v >= lo && *v <= hi ? 0
                                                                          : -1;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    long v;
    int c;

    *o = (struct opts){PLAN_BF_EASY, 0, 1, 128, 1, EST_EXACT, SIM_FIFO, NULL};
    while ((c = getopt(argc, argv, "b:d:c:n:C:e:p:")) != -1) {
        if (c == 'b' && !strcmp(optarg, "none"))
            o->backfill = PLAN_BF_NONE;
        else if (c == 'b' && !strcmp(optarg, "easy"))
            o->backfill = PLAN_BF_EASY;
        else if (c == 'b' && !strcmp(optarg, "conservative"))
            o->backfill = PLAN_BF_CONSERVATIVE;
        else if (c == 'd' && count(optarg, 0, 1000000, &v) == 0)
            o->depth = (size_t)v;
        else if (c == 'c' && count(optarg, 1, 1000, &v) == 0)
            o->clusters = (int)v;
        else if (c == 'n' && count(optarg, 1, 1000000, &v) == 0)
            o->nodes = (int)v;
        else if (c == 'C' && count(optarg, 1, 100000, &v) == 0)
            o->cpus = (int)v;
        else if (c == 'e' && !strcmp(optarg, "exact"))
            o->est = EST_EXACT;
        else if (c == 'e' && !strcmp(optarg, "x2"))
            o->est = EST_X2;
        else if (c == 'e' && !strcmp(optarg, "max"))
            o->est = EST_MAX;
        else if (c == 'p' && !strcmp(optarg, "fifo"))
            o->order = SIM_FIFO;
        else if (c == 'p' && !strcmp(optarg, "priority"))
            o->order = SIM_PRIORITY;
        else
            return -1;
    }
    if (argc - optind > 1)
        return -1;
    o->path = optind < argc ? argv[optind] : NULL;
    return 0;
}

static int fabric_init(struct fabric *f, const struct opts *o)
{
    size_t total = (size_t)o->clusters * (size_t)o->nodes;

    f->cl = calloc((size_t)o->clusters, sizeof(*f->cl));
    f->nodes = calloc(total, sizeof(*f->nodes));
    f->names = calloc(total + (size_t)o->clusters, sizeof(*f->names));
    if (!f->cl || !f->nodes || !f->names)
        return -1;
    for (int c = 0; c < o->clusters; c++) {
        char *cname = f->names[total + (size_t)c];

        snprintf(cname, sizeof(f->names[0]), "c%d", c);
        f->cl[c] =
            (struct plan_cluster){.name = cname,
                                  .nodes = f->nodes + (size_t)c * o->nodes,
                                  .n_nodes = (size_t)o->nodes};
        for (int i = 0; i < o->nodes; i++) {
            size_t k = (size_t)c * o->nodes + i;

            snprintf(f->names[k], sizeof(f->names[0]), "c%dn%d", c, i);
            f->nodes[k] = (struct plan_node){.name = f->names[k],
                                             .cpus = o->cpus,
                                             .memory_mb = 1L << 20,
                                             .usable = 1};
        }
    }
    return 0;
}

static void fabric_fini(struct fabric *f)
{
    free(f->cl);
    free(f->nodes);
    free(f->names);
}

static long walltime_of(const struct swf_job *t, const struct opts *o,
                        double max_run)
{
    double w = t->req_time;

    if (w <= 0)
        w = o->est == EST_X2    ? 2 * t->run
            : o->est == EST_MAX ? max_run
                                : t->run;
    w = ceil(w);
    return w < 1 ? 1 : (long)w;
}

/* The simulated jobs of a trace; owners point into names. */
static struct sim_job *jobs_of(const struct swf_job *t, size_t n,
                               const struct opts *o, char (**names)[16])
{
    struct sim_job *jobs = calloc(n ? n : 1, sizeof(*jobs));
    double max_run = 0;

    *names = calloc(n ? n : 1, sizeof(**names));
    if (!jobs || !*names) {
        free(jobs);
        free(*names);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        max_run = t[i].run > max_run ? t[i].run : max_run;
    for (size_t i = 0; i < n; i++) {
        int p = t[i].procs, per = p < o->cpus ? p : o->cpus;

        snprintf((*names)[i], sizeof((*names)[i]), "u%d", t[i].user);
        jobs[i] = (struct sim_job){
            .req = {.id = t[i].id,
                    .nodes = (p + o->cpus - 1) / o->cpus,
                    .per_node = {.cpus = per},
                    .walltime_s = walltime_of(&t[i], o, max_run)},
            .submit = t[i].submit,
            .run = t[i].run,
            .owner = (*names)[i]};
    }
    return jobs;
}

static void report(const struct sim_job *jobs, size_t n, size_t skipped,
                   const struct sim_stats *st, long fabric_cpus)
{
    double first = INFINITY, last = -INFINITY, wait = 0, bsld = 0, work = 0;
    size_t done = 0;

    for (size_t i = 0; i < n; i++) {
        const struct sim_job *j = &jobs[i];
        double w, r;

        if (j->state != SIM_DONE && j->state != SIM_RUNNING)
            continue;
        w = j->start - j->submit;
        r = j->end - j->start;
        first = j->submit < first ? j->submit : first;
        last = j->end > last ? j->end : last;
        wait += w;
        bsld += fmax(1, (w + r) / fmax(r, BSLD_TAU));
        work += r * (double)j->req.nodes * j->req.per_node.cpus;
        done++;
    }
    printf("jobs %zu\n", done);
    printf("skipped %zu\n", skipped);
    printf("rejected %zu\n", st->rejected);
    printf("unstarted %zu\n", st->unstarted);
    printf("utilisation %.4f\n",
           done && last > first ? work / ((double)fabric_cpus * (last - first))
                                : 0);
    printf("mean_wait_s %.1f\n", done ? wait / (double)done : 0);
    printf("mean_bsld %.3f\n", done ? bsld / (double)done : 0);
    printf("makespan_s %.0f\n", done ? last - first : 0);
    printf("cycles %zu\n", st->cycles);
    printf("cycle_ms_mean %.4f\n",
           st->cycles ? st->cycle_ms_total / (double)st->cycles : 0);
    printf("cycle_ms_max %.3f\n", st->cycle_ms_max);
}

int main(int argc, char **argv)
{
    struct opts o;
    struct fabric f = {0};
    struct swf_job *trace = NULL;
    struct sim_job *jobs = NULL;
    char(*names)[16] = NULL;
    size_t n = 0, skipped = 0;
    struct sim_stats st;
    struct loom_error err;
    FILE *in = stdin;
    int rc = 1;

    if (parse_opts(argc, argv, &o) < 0)
        return usage();
    if (o.path && !(in = fopen(o.path, "r"))) {
        fprintf(stderr, "replay: %s: %s\n", o.path, strerror(errno));
        return 1;
    }
    if (swf_read(in, &trace, &n, &skipped, &err) < 0) {
        fprintf(stderr, "replay: %s: %s\n", o.path ? o.path : "stdin",
                err.message);
        goto out;
    }
    if (fabric_init(&f, &o) < 0 || !(jobs = jobs_of(trace, n, &o, &names))) {
        fprintf(stderr, "replay: out of memory\n");
        goto out;
    }
    struct sim_config cfg = {
        .clusters = f.cl,
        .n_clusters = (size_t)o.clusters,
        .plan = {.backfill = o.backfill, .depth = o.depth, .overdue_s = 60},
        .order = o.order,
    };
    prio_weights_default(&cfg.weights);
    if (simloop_run(&cfg, jobs, n, &st, &err) < 0) {
        fprintf(stderr, "replay: %s\n", err.message);
        goto out;
    }
    report(jobs, n, skipped, &st, (long)o.clusters * o.nodes * o.cpus);
    rc = fflush(stdout) == 0 ? 0 : 1;
out:
    if (in != stdin)
        fclose(in);
    simloop_fini(jobs, n);
    free(jobs);
    free(names);
    free(trace);
    fabric_fini(&f);
    return rc;
}
