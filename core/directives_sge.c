/* directives_sge.c - #$: Grid Engine's qsub options Loom reads. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/directives_table.h"
#include "core/limits.h"
#include "core/timefmt.h"

/* Grid Engine's memory_specifier: bytes, or k/m/g (1000s) or K/M/G
 * (1024s). */
static const struct dir_unit mem_units[] = {
    {"", 1.0},      {"k", 1e3},        {"m", 1e6},        {"g", 1e9},
    {"K", 1024.0},  {"M", 1048576.0},  {"G", 1073741824.0}, {NULL, 0},
};

/* dir_size_mb matches suffixes without regard to case; Grid Engine's
 * differ by case: the table of the suffix's own case. */
static int ge_size(const char *arg, long *mb, struct loom_error *err)
{
    size_t n = strlen(arg);
    char last = n ? arg[n - 1] : 0;
    const struct dir_unit *u = mem_units;
    struct dir_unit one[2] = {{"", 1.0}, {NULL, 0}};

    for (; u->suffix; u++)
        if (*u->suffix && *u->suffix == last)
            break;
    if (u->suffix) {
        one[0] = *u;
    } else if (last < '0' || last > '9') {
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not a size "
                              "(bytes, or a number with k, m, g, K, M or G)",
                              arg);
    }
    return dir_size_mb(arg, one, "the memory", "bytes, or a number with k, "
                       "m, g, K, M or G", mb, err);
}

/* -pe NAME SLOTS: Loom takes the smp environment, SLOTS cpus on one node. */
static int read_pe(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err)
{
    long v;

    if (strcmp(arg, "smp") != 0)
        return loom_error_set(err, LOOM_EINVAL, "Loom takes the parallel "
                              "environment smp (slots on one node), not "
                              "'%.64s', whose slots Grid Engine's "
                              "configuration places", arg);
    if (dir_count(arg2, "the slot count", 1, LOOM_JOB_CPUS_MAX, &v, err) < 0)
        return -1;
    return dir_put_num(ctx, DS_CPUS_PER_NODE, v, err);
}

/* One resource of -l: h_rt, h_vmem and gpu (per slot, as Grid Engine
 * counts consumables), or a boolean NAME=true: a feature. */
static int read_resource(struct dir_ctx *ctx, const char *name,
                         const char *val, struct loom_error *err)
{
    long v;

    if (!strcmp(name, "h_rt")) {
        if (timefmt_hms(val, &v, err) < 0)
            return loom_error_prefix(err, "h_rt");
        return dir_put_num(ctx, DS_TIME, v, err);
    }
    if (!strcmp(name, "h_vmem")) {
        if (ge_size(val, &v, err) < 0)
            return loom_error_prefix(err, "h_vmem");
        return dir_put_num(ctx, DS_MEM_PER_CPU, v, err);
    }
    if (!strcmp(name, "gpu")) {
        if (dir_count(val, "gpu", 0, LOOM_JOB_GPUS_MAX, &v, err) < 0)
            return -1;
        return dir_put_num(ctx, DS_GPUS_PER_CPU, v, err);
    }
    if (dir_name_ok(name) && (!strcasecmp(val, "true")))
        return dir_put_feature(ctx, name, 1, err);
    return loom_error_set(err, LOOM_EINVAL, "the resource %.64s is not "
                          "supported by Loom (it takes h_rt, h_vmem, gpu and "
                          "features as NAME=true)", name);
}

/* -l NAME=VALUE[,NAME=VALUE...] */
static int read_resources(struct dir_ctx *ctx, const char *arg,
                          const char *arg2, struct loom_error *err)
{
    return dir_each_kv(ctx, arg, read_resource, err);
}

static int read_queue(struct dir_ctx *ctx, const char *arg, const char *arg2,
                      struct loom_error *err)
{
    if (!dir_name_ok(arg))
        return loom_error_set(err, LOOM_EINVAL, "Loom takes one queue by its "
                              "name (letters, digits, '.', '_', '-'), not "
                              "'%.64s'", arg);
    return dir_put_text(ctx, DS_QUEUE, arg, err);
}

/* -j y|n: the error stream into the output file, or into its own. */
static int read_join(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    if (!strcasecmp(arg, "n") || !strcasecmp(arg, "no"))
        return dir_put_num(ctx, DS_JOIN, 0, err);
    if (!strcasecmp(arg, "y") || !strcasecmp(arg, "yes"))
        return dir_put_num(ctx, DS_JOIN, 1, err);
    return loom_error_set(err, LOOM_EINVAL, "-j takes y or n, not '%.64s'",
                          arg);
}

/* -tc N: tasks of the array at once. */
static int read_tc(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err)
{
    long v;

    if (dir_count(arg, "the tasks at once", 1, LOOM_ARRAY_TASKS_MAX, &v,
                  err) < 0)
        return -1;
    return dir_put_num(ctx, DS_ARRAY_LIMIT, v, err);
}

/* -p N: the job's priority, -1023 to 1024 as Grid Engine takes it. */
static int read_priority(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    return dir_put_priority(ctx, arg, -1023, 1024, err);
}

/* -hold_jid ID[,ID...]: the job waits until those have ended, however
 * (afterany). */
static int read_hold_jid(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    size_t n = strlen(arg);
    char *dep = malloc(n + 16), *p;
    int rc;

    if (!dep)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    snprintf(dep, n + 16, "afterany:%s", arg);
    for (p = dep + 9; *p; p++) {
        if (*p == ',') {
            *p = ':';
        } else if (*p < '0' || *p > '9') {
            free(dep);
            return loom_error_set(err, LOOM_EINVAL, "Loom takes job ids "
                                  "(12,13) in -hold_jid, not names or "
                                  "patterns: '%.64s'", arg);
        }
    }
    rc = dir_put_depend(ctx, dep, err);
    free(dep);
    return rc;
}

/* -o, -e: [[host]:]path[,...] with the pseudo variables
 * (dir_put_qsub_path); one path, for every host. */
static int ge_path(struct dir_ctx *ctx, enum dir_slot slot, const char *arg,
                   struct loom_error *err)
{
    if (strchr(arg, ','))
        return loom_error_set(err, LOOM_EINVAL, "a path for each host is "
                              "not supported by Loom: give one path");
    return dir_put_qsub_path(ctx, slot, arg, 1, err);
}

static int read_output(struct dir_ctx *ctx, const char *arg,
                       const char *arg2, struct loom_error *err)
{
    return ge_path(ctx, DS_OUTPUT, arg, err);
}

static int read_error(struct dir_ctx *ctx, const char *arg,
                      const char *arg2, struct loom_error *err)
{
    return ge_path(ctx, DS_ERROR, arg, err);
}

static const struct dir_opt sge_opts[] = {
    {0, "N", DA_ONE, DS_NAME, dir_read_name},
    {0, "pe", DA_TWO, DS_CPUS_PER_NODE, read_pe},
    {0, "l", DA_ONE, DS_N, read_resources},
    {0, "q", DA_ONE, DS_QUEUE, read_queue},
    {0, "o", DA_ONE, DS_OUTPUT, read_output},
    {0, "e", DA_ONE, DS_ERROR, read_error},
    {0, "j", DA_ONE, DS_JOIN, read_join},
    {0, "cwd", DA_NONE, DS_CWD, NULL},
    {0, "wd", DA_ONE, DS_WORKDIR, NULL},
    {0, "V", DA_NONE, DS_EXPORT, dir_read_export_all},
    {0, "v", DA_ONE, DS_EXPORT, dir_read_export_list},
    {0, "t", DA_ONE, DS_ARRAY, dir_read_array},
    {0, "tc", DA_ONE, DS_ARRAY_LIMIT, read_tc},
    {0, "hold_jid", DA_ONE, DS_DEPEND, read_hold_jid},
    {0, "h", DA_NONE, DS_HOLD, NULL},
    {0, "p", DA_ONE, DS_PRIORITY, read_priority},
    {0, "r", DA_ONE, DS_NO_REQUEUE, dir_read_rerun},
    {0, NULL, DA_NONE, DS_N, NULL},
};

const struct dir_system dir_sge = {
    .prefix = "#$",
    .name = "Grid Engine",
    .style = DIR_DASH_WORD,
    .opts = sge_opts,
};
