/* directives_slurm.c - #SBATCH: sbatch's options Loom reads. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/directives_table.h"
#include "core/limits.h"
#include "core/timefmt.h"

#define TASKS_MAX 100000000L

static const struct dir_unit mem_units[] = {
    {"", 1048576.0},        {"K", 1024.0},           {"M", 1048576.0},
    {"G", 1073741824.0},    {"T", 1099511627776.0},  {NULL, 0},
};

/* -N, --nodes: a count, or MIN-MAX with both the same. */
static int read_nodes(struct dir_ctx *ctx, const char *arg, const char *arg2,
                      struct loom_error *err)
{
    const char *dash = strchr(arg, '-');
    long lo, hi;
    char min[32];

    if (dash && (size_t)(dash - arg) < sizeof(min)) {
        snprintf(min, sizeof(min), "%.*s", (int)(dash - arg), arg);
        if (dir_count(min, "the node count", 1, LOOM_JOB_NODES_MAX, &lo,
                      err) < 0 ||
            dir_count(dash + 1, "the node count", 1, LOOM_JOB_NODES_MAX, &hi,
                      err) < 0)
            return -1;
        if (lo != hi)
            return loom_error_set(err, LOOM_EINVAL, "a range of node counts "
                                  "is not supported by Loom: give one count");
    } else if (dir_count(arg, "the node count", 1, LOOM_JOB_NODES_MAX, &lo,
                         err) < 0) {
        return -1;
    }
    return dir_put_num(ctx, DS_NODES, lo, err);
}

static int read_ntasks(struct dir_ctx *ctx, const char *arg,
                       const char *arg2, struct loom_error *err)
{
    long v;

    if (dir_count(arg, "the task count", 1, TASKS_MAX, &v, err) < 0)
        return -1;
    return dir_put_num(ctx, DS_NTASKS, v, err);
}

static int read_tpn(struct dir_ctx *ctx, const char *arg, const char *arg2,
                    struct loom_error *err)
{
    long v;

    if (dir_count(arg, "the tasks per node", 1, LOOM_JOB_CPUS_MAX, &v,
                  err) < 0)
        return -1;
    return dir_put_num(ctx, DS_TASKS_PER_NODE, v, err);
}

static int read_cpt(struct dir_ctx *ctx, const char *arg, const char *arg2,
                    struct loom_error *err)
{
    long v;

    if (dir_count(arg, "the cpus per task", 1, LOOM_JOB_CPUS_MAX, &v,
                  err) < 0)
        return -1;
    return dir_put_num(ctx, DS_CPUS_PER_TASK, v, err);
}

/* --mem and --mem-per-cpu: MiB by default, or with K, M, G or T. */
static int read_mem(struct dir_ctx *ctx, enum dir_slot slot, const char *arg,
                    struct loom_error *err)
{
    long mb;

    if (arg[0] == '0' && (!arg[1] || strchr("KMGTkmgt", arg[1])))
        return loom_error_set(err, LOOM_EINVAL, "0 asks for all the memory "
                              "of each node, which Loom does not take: give "
                              "the MiB");
    if (dir_size_mb(arg, mem_units, "the memory", "MiB, or a number with K, "
                    "M, G or T", &mb, err) < 0)
        return -1;
    return dir_put_num(ctx, slot, mb, err);
}

static int read_mem_node(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    return read_mem(ctx, DS_MEM_PER_NODE, arg, err);
}

static int read_mem_cpu(struct dir_ctx *ctx, const char *arg,
                        const char *arg2, struct loom_error *err)
{
    return read_mem(ctx, DS_MEM_PER_CPU, arg, err);
}

static int read_time(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    long s;

    if (timefmt_slurm(arg, &s, err) < 0)
        return -1;
    return dir_put_num(ctx, DS_TIME, s, err);
}

static int read_partition(struct dir_ctx *ctx, const char *arg,
                          const char *arg2, struct loom_error *err)
{
    if (strchr(arg, ','))
        return loom_error_set(err, LOOM_EINVAL, "several partitions are not "
                              "supported by Loom: give one");
    if (!dir_name_ok(arg))
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not a partition "
                              "name (letters, digits, '.', '_', '-')", arg);
    return dir_put_text(ctx, DS_QUEUE, arg, err);
}

/* -C, --constraint: features joined by '&' (all of them needed). */
static int read_constraint(struct dir_ctx *ctx, const char *arg,
                           const char *arg2, struct loom_error *err)
{
    const char *p = arg, *end;
    char name[65];
    size_t n;

    for (;;) {
        end = strchr(p, '&');
        n = end ? (size_t)(end - p) : strlen(p);
        snprintf(name, sizeof(name), "%.*s", (int)(n < 64 ? n : 64), p);
        if (n > 64 || !dir_name_ok(name))
            return loom_error_set(err, LOOM_EINVAL, "Loom takes features "
                                  "joined by & (every one needed), each of "
                                  "letters, digits, '.', '_', '-'; not "
                                  "'%.64s'", arg);
        if (dir_put_feature(ctx, name, p != arg, err) < 0)
            return -1;
        if (!end) /* the last feature */
            return 0;
        p = end + 1;
    }
}

/* A GPU count: "N" or "gpu:N" (what = "--gres"); a type is refused. */
static int gpu_count(const char *arg, const char *what, long max, long *v,
                     struct loom_error *err)
{
    const char *colon = strrchr(arg, ':');

    if (colon && (colon != arg + 3 || strncmp(arg, "gpu", 3)))
        return loom_error_set(err, LOOM_EINVAL, "%s: Loom takes a number of "
                              "GPUs without a type, not '%.64s'", what, arg);
    return dir_count(colon ? colon + 1 : arg, "the GPU count", 0, max, v,
                     err);
}

/* --gres=gpu[:N] (one GPU when N is left out). */
static int read_gres(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    long v = 1;

    if (strncmp(arg, "gpu", 3) || (arg[3] && arg[3] != ':') ||
        strchr(arg, ','))
        return loom_error_set(err, LOOM_EINVAL, "Loom takes gpu or gpu:N "
                              "only, not '%.64s'", arg);
    if (arg[3] && gpu_count(arg, "--gres", LOOM_JOB_GPUS_MAX, &v, err) < 0)
        return -1;
    return dir_put_num(ctx, DS_GPUS, v, err);
}

static int read_gpn(struct dir_ctx *ctx, const char *arg, const char *arg2,
                    struct loom_error *err)
{
    long v;

    if (gpu_count(arg, "--gpus-per-node", LOOM_JOB_GPUS_MAX, &v, err) < 0)
        return -1;
    return dir_put_num(ctx, DS_GPUS, v, err);
}

static int read_gpus(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    long v;

    if (gpu_count(arg, "--gpus", LOOM_JOB_GPUS_MAX * LOOM_JOB_NODES_MAX, &v,
                  err) < 0)
        return -1;
    return dir_put_num(ctx, DS_GPUS_TOTAL, v, err);
}

/* -o, -e: Slurm's patterns that Loom has too (%j %u %x %A %a %N %%). */
static int read_output(struct dir_ctx *ctx, const char *arg,
                       const char *arg2, struct loom_error *err)
{
    return dir_put_outpath(ctx, DS_OUTPUT, arg, err);
}

static int read_error(struct dir_ctx *ctx, const char *arg,
                      const char *arg2, struct loom_error *err)
{
    return dir_put_outpath(ctx, DS_ERROR, arg, err);
}

/* --export=NONE|ALL|[ALL,]NAME[=value][,...]: replaces what an --export
 * before it said. */
static int read_export(struct dir_ctx *ctx, const char *arg,
                       const char *arg2, struct loom_error *err)
{
    return dir_put_export(ctx, arg, 1, err);
}

/* --nice[=N]: N (default 100) lowers the job's priority by N: Loom's
 * priority -N. A negative N raises it, which Loom lets only an operator or
 * admin do, as Slurm does. */
static int read_nice(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    char *end;
    long n = 100;

    if (arg) {
        errno = 0;
        n = strtol(arg, &end, 10);
        if (!*arg || *end || errno || n < -LOOM_JOB_PRIORITY_MAX ||
            n > LOOM_JOB_PRIORITY_MAX)
            return loom_error_set(err, LOOM_EINVAL, "the adjustment must be "
                                  "a whole number from -%ld to %ld",
                                  LOOM_JOB_PRIORITY_MAX,
                                  LOOM_JOB_PRIORITY_MAX);
    }
    return dir_put_num(ctx, DS_PRIORITY, -n, err);
}

/* --get-user-env[=T[S|L]]: Slurm loads the login environment of --uid's
 * user when root submits, and does nothing otherwise. Loom's submitter is
 * always the job's own account, never root: nothing to do. */
static int read_user_env(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    size_t n = arg ? strspn(arg, "0123456789") : 0;

    if (arg && (arg[n] && (strchr("SL", arg[n]) == NULL || arg[n + 1])))
        return loom_error_set(err, LOOM_EINVAL, "the value must be seconds, "
                              "S or L, or seconds followed by S or L");
    ctx->note = "the job is submitted as its own account, never by root: "
                "it has its account's environment as --export gives it "
                "(Slurm applies --get-user-env only for root)";
    return 0;
}

/* --comment=TEXT: kept with the job, at most LOOM_JOB_COMMENT_MAX bytes. */
static int read_comment(struct dir_ctx *ctx, const char *arg,
                        const char *arg2, struct loom_error *err)
{
    if (strlen(arg) > LOOM_JOB_COMMENT_MAX)
        return loom_error_set(err, LOOM_EINVAL, "a comment has at most %d "
                              "bytes", LOOM_JOB_COMMENT_MAX);
    return dir_put_text(ctx, DS_COMMENT, arg, err);
}

static const struct dir_opt slurm_opts[] = {
    {'J', "job-name", DA_ONE, DS_NAME, dir_read_name},
    {'N', "nodes", DA_ONE, DS_NODES, read_nodes},
    {'n', "ntasks", DA_ONE, DS_NTASKS, read_ntasks},
    {0, "ntasks-per-node", DA_ONE, DS_TASKS_PER_NODE, read_tpn},
    {'c', "cpus-per-task", DA_ONE, DS_CPUS_PER_TASK, read_cpt},
    {0, "mem", DA_ONE, DS_MEM_PER_NODE, read_mem_node},
    {0, "mem-per-cpu", DA_ONE, DS_MEM_PER_CPU, read_mem_cpu},
    {'t', "time", DA_ONE, DS_TIME, read_time},
    {'p', "partition", DA_ONE, DS_QUEUE, read_partition},
    {'C', "constraint", DA_ONE, DS_FEATURES, read_constraint},
    {0, "gres", DA_ONE, DS_GPUS, read_gres},
    {0, "gpus-per-node", DA_ONE, DS_GPUS, read_gpn},
    {'G', "gpus", DA_ONE, DS_GPUS_TOTAL, read_gpus},
    {'o', "output", DA_ONE, DS_OUTPUT, read_output},
    {'e', "error", DA_ONE, DS_ERROR, read_error},
    {'D', "chdir", DA_ONE, DS_WORKDIR, NULL},
    {0, "export", DA_ONE, DS_EXPORT, read_export},
    {'a', "array", DA_ONE, DS_ARRAY, dir_read_array},
    {'d', "dependency", DA_ONE, DS_DEPEND, dir_read_depend},
    {'H', "hold", DA_NONE, DS_HOLD, NULL},
    {0, "exclusive", DA_NONE, DS_EXCLUSIVE, NULL},
    {0, "nice", DA_OPT, DS_PRIORITY, read_nice},
    {0, "no-requeue", DA_NONE, DS_NO_REQUEUE, NULL},
    {0, "get-user-env", DA_OPT, DS_N, read_user_env},
    {0, "comment", DA_ONE, DS_COMMENT, read_comment},
    {0, NULL, DA_NONE, DS_N, NULL},
};

const struct dir_system dir_slurm = {
    .prefix = "#SBATCH",
    .name = "Slurm",
    .style = DIR_GETOPT_LONG,
    .opts = slurm_opts,
};
