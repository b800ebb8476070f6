/* directives_pbs.c - #PBS: the qsub options of PBS Pro, OpenPBS and
 * Torque that Loom reads. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/directives_table.h"
#include "core/limits.h"
#include "core/timefmt.h"

/* PBS sizes: bytes, or b, w (8 bytes), kb, kw, mb, mw, gb, gw, tb, tw
 * (1024s). */
static const struct dir_unit size_units[] = {
    {"", 1.0},           {"b", 1.0},           {"w", 8.0},
    {"kb", 1024.0},      {"kw", 8192.0},       {"mb", 1048576.0},
    {"mw", 8388608.0},   {"gb", 1073741824.0}, {"gw", 8589934592.0},
    {"tb", 1099511627776.0}, {"tw", 8796093022208.0}, {NULL, 0},
};
#define SIZE_FORMS "bytes, or a number with b, kb, mb, gb, tb or w, kw, mw, " \
                   "gw, tw"

static int size_in(enum dir_slot slot, const char *what, const char *val,
                   struct dir_ctx *ctx, struct loom_error *err)
{
    long mb;

    if (dir_size_mb(val, size_units, what, SIZE_FORMS, &mb, err) < 0)
        return -1;
    return dir_put_num(ctx, slot, mb, err);
}

/* A count of a chunk or node spec (name: "ncpus"). */
static int count_in(enum dir_slot slot, const char *name, const char *val,
                    long min, long max, struct dir_ctx *ctx,
                    struct loom_error *err)
{
    long v;

    if (dir_count(val, name, min, max, &v, err) < 0)
        return -1;
    return dir_put_num(ctx, slot, v, err);
}

/* One part of a select chunk or a nodes spec: NAME=VALUE (ppn and gpus
 * of Torque, ncpus, mem and ngpus of PBS Pro), or a feature (Torque's
 * bare property, PBS Pro's NAME=true). */
static int read_part(struct dir_ctx *ctx, char *part, int torque,
                     struct loom_error *err)
{
    char *eq = strchr(part, '=');
    const char *val = eq ? eq + 1 : NULL;

    if (eq)
        *eq = '\0';
    if (!eq && torque && dir_name_ok(part))
        return dir_put_feature(ctx, part, 0, err);
    if (eq && torque && !strcmp(part, "ppn"))
        return count_in(DS_CPUS_PER_NODE, "ppn", val, 1, LOOM_JOB_CPUS_MAX,
                        ctx, err);
    if (eq && !strcmp(part, torque ? "gpus" : "ngpus"))
        return count_in(DS_GPUS, part, val, 0, LOOM_JOB_GPUS_MAX, ctx, err);
    if (eq && !torque && !strcmp(part, "ncpus"))
        return count_in(DS_CPUS_PER_NODE, "ncpus", val, 1, LOOM_JOB_CPUS_MAX,
                        ctx, err);
    if (eq && !torque && !strcmp(part, "mem"))
        return size_in(DS_MEM_PER_NODE, "mem", val, ctx, err);
    if (eq && !torque && dir_name_ok(part) && !strcasecmp(val, "true"))
        return dir_put_feature(ctx, part, 0, err);
    return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not supported by "
                          "Loom in %s (it takes %s)", part,
                          torque ? "nodes=" : "select=",
                          torque ? "N:ppn=C:gpus=G and features"
                                 : "N:ncpus=C:mem=M:ngpus=G and NAME=true");
}

/* select=[N:]chunk (PBS Pro) or nodes=N[:part...] (Torque): one kind of
 * chunk, N nodes of it. */
static int read_chunks(struct dir_ctx *ctx, const char *spec, int torque,
                       struct loom_error *err)
{
    char *copy, *p, *next = NULL;
    long n = 1;
    int rc = 0;

    if (strchr(spec, '+'))
        return loom_error_set(err, LOOM_EINVAL, "chunks of several kinds "
                              "(+) are not supported by Loom: give one");
    if (!(p = copy = strdup(spec)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (*p >= '0' && *p <= '9') {
        if ((next = strchr(p, ':')))
            *next++ = '\0';
        rc = dir_count(p, torque ? "the node count" : "the chunk count", 1,
                       LOOM_JOB_NODES_MAX, &n, err);
        p = next;
    } else if (torque) {
        rc = loom_error_set(err, LOOM_EINVAL, "naming hosts is not supported "
                            "by Loom: give a node count, not '%.64s'", spec);
    }
    if (rc == 0)
        rc = dir_put_num(ctx, DS_NODES, n, err);
    for (; p && rc == 0; p = next) {
        if ((next = strchr(p, ':')))
            *next++ = '\0';
        rc = read_part(ctx, p, torque, err);
    }
    free(copy);
    return rc;
}

/* One resource of -l. */
static int read_resource(struct dir_ctx *ctx, const char *name,
                         const char *val, struct loom_error *err)
{
    long v;

    if (!strcmp(name, "select") || !strcmp(name, "nodes"))
        return read_chunks(ctx, val, name[0] == 'n', err);
    if (!strcmp(name, "walltime")) {
        if (timefmt_hms(val, &v, err) < 0)
            return loom_error_prefix(err, "walltime");
        return dir_put_num(ctx, DS_TIME, v, err);
    }
    if (!strcmp(name, "mem"))
        return size_in(DS_MEM_TOTAL, "mem", val, ctx, err);
    if (!strcmp(name, "pmem"))
        return size_in(DS_MEM_PER_CPU, "pmem", val, ctx, err);
    if (!strcmp(name, "ncpus"))
        return count_in(DS_CPUS_PER_NODE, "ncpus", val, 1, LOOM_JOB_CPUS_MAX,
                        ctx, err);
    if (!strcmp(name, "place") && strstr(val, "excl"))
        return dir_put_num(ctx, DS_EXCLUSIVE, 1, err);
    return loom_error_set(err, LOOM_EINVAL, "the resource %.64s is not "
                          "supported by Loom (it takes select, nodes, "
                          "walltime, mem, pmem and ncpus)", name);
}

/* -l NAME=VALUE[,NAME=VALUE...] */
static int read_resources(struct dir_ctx *ctx, const char *arg,
                          const char *arg2, struct loom_error *err)
{
    return dir_each_kv(ctx, arg, read_resource, err);
}

/* A PBS job id as Loom's: 123.server -> 123, 123[].server (an array) ->
 * 123, 123[7].server (its task) -> 123_7; appended to out (at most
 * size). 0, or -1 when it is not one. */
static int pbs_id(const char *p, size_t n, char *out, size_t size)
{
    size_t digits = 0, len = strlen(out);
    const char *end = p + n;

    while (p + digits < end && p[digits] >= '0' && p[digits] <= '9')
        digits++;
    if (!digits || len + digits + 24 > size)
        return -1;
    memcpy(out + len, p, digits);
    out[len + digits] = '\0';
    p += digits;
    if (p < end && *p == '[') {
        const char *close = memchr(p, ']', (size_t)(end - p));
        if (!close)
            return -1;
        if (close > p + 1) {
            if ((size_t)(close - p) > 12)
                return -1;
            snprintf(out + len + digits, size - len - digits, "_%.*s",
                     (int)(close - p - 1), p + 1);
        }
        p = close + 1;
    }
    return p == end || *p == '.' ? 0 : -1;
}

/* depend=TYPE:ID[:ID...][,TYPE:...] in PBS's terms, into Slurm's. */
static int read_depend(struct dir_ctx *ctx, const char *val,
                       struct loom_error *err)
{
    char out[2048] = "";
    const char *p = val, *end, *colon;

    for (; *p; p = *end ? end + 1 : end) {
        end = p + strcspn(p, ",");
        colon = memchr(p, ':', (size_t)(end - p));
        if (!colon || (size_t)(colon - p) > 12 ||
            strlen(out) + (size_t)(colon - p) + 2 >= sizeof(out))
            return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a "
                                  "dependency (TYPE:JOBID[:JOBID...])",
                                  (int)(end - p < 64 ? end - p : 64), p);
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%.*s",
                 *out ? "," : "", (int)(colon - p), p);
        for (const char *q = colon + 1, *e; q <= end; q = e + 1) {
            e = memchr(q, ':', (size_t)(end - q));
            if (!e)
                e = end;
            snprintf(out + strlen(out), sizeof(out) - strlen(out), ":");
            if (pbs_id(q, (size_t)(e - q), out, sizeof(out)) < 0)
                return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a job "
                                      "id (123, 123.server, 123[].server or "
                                      "123[7].server)",
                                      (int)(e - q < 64 ? e - q : 64), q);
        }
    }
    return dir_put_depend(ctx, out, err);
}

static int read_attr(struct dir_ctx *ctx, const char *name, const char *val,
                     struct loom_error *err)
{
    if (!strcmp(name, "depend"))
        return read_depend(ctx, val, err);
    return loom_error_set(err, LOOM_EINVAL, "the attribute %.64s is not "
                          "supported by Loom", name);
}

/* -W NAME=VALUE[,NAME=VALUE...]: a dependency's own commas (depend=
 * afterok:1,afterany:2) join the parts without '=' to it. */
static int read_attrs(struct dir_ctx *ctx, const char *arg, const char *arg2,
                      struct loom_error *err)
{
    char *copy = strdup(arg), *p, *next, *eq;
    int rc = 0;

    if (!copy)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (p = copy; p && rc == 0; p = next) {
        eq = strchr(p, '=');
        next = strchr(p, ',');
        if (eq && next && eq < next && !strncmp(p, "depend=", 7))
            while (next && (!strchr(next + 1, '=') ||
                            strcspn(next + 1, ",") <
                                strcspn(next + 1, "=")))
                next = strchr(next + 1, ','); /* its own comma */
        if (next)
            *next++ = '\0';
        if (!eq || eq == p || !eq[1]) {
            rc = loom_error_set(err, LOOM_EINVAL, "'%.64s' is not "
                                "NAME=VALUE", p);
        } else {
            *eq = '\0';
            rc = read_attr(ctx, p, eq + 1, err);
        }
    }
    free(copy);
    return rc;
}

static int read_queue(struct dir_ctx *ctx, const char *arg, const char *arg2,
                      struct loom_error *err)
{
    if (!dir_name_ok(arg))
        return loom_error_set(err, LOOM_EINVAL, "Loom takes a queue by its "
                              "name (letters, digits, '.', '_', '-'), not "
                              "'%.64s'", arg);
    return dir_put_text(ctx, DS_QUEUE, arg, err);
}

/* -j oe|eo|n: both streams into the output file (oe) or the error file
 * (eo), or each into its own (n). */
static int read_join(struct dir_ctx *ctx, const char *arg, const char *arg2,
                     struct loom_error *err)
{
    if (!strcmp(arg, "n"))
        return dir_put_num(ctx, DS_JOIN, 0, err);
    if (!strcmp(arg, "oe") || !strcmp(arg, "eo"))
        return dir_put_num(ctx, DS_JOIN, arg[0] == 'o' ? 1 : 2, err);
    return loom_error_set(err, LOOM_EINVAL, "-j takes oe, eo or n, not "
                          "'%.64s'", arg);
}

/* -o, -e: [host:]path, without patterns ('%' and '$' are themselves);
 * a relative path is the submit directory's (directives_req.c). */
static int read_output(struct dir_ctx *ctx, const char *arg,
                       const char *arg2, struct loom_error *err)
{
    return dir_put_qsub_path(ctx, DS_OUTPUT, arg, 0, err);
}

static int read_error(struct dir_ctx *ctx, const char *arg,
                      const char *arg2, struct loom_error *err)
{
    return dir_put_qsub_path(ctx, DS_ERROR, arg, 0, err);
}

/* -p N: the job's priority, -1024 to 1023 as PBS takes it. */
static int read_priority(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    return dir_put_priority(ctx, arg, -1024, 1023, err);
}

static const struct dir_opt pbs_opts[] = {
    {'N', NULL, DA_ONE, DS_NAME, dir_read_name},
    {'l', NULL, DA_ONE, DS_N, read_resources},
    {'q', NULL, DA_ONE, DS_QUEUE, read_queue},
    {'o', NULL, DA_ONE, DS_OUTPUT, read_output},
    {'e', NULL, DA_ONE, DS_ERROR, read_error},
    {'j', NULL, DA_ONE, DS_JOIN, read_join},
    {'d', NULL, DA_ONE, DS_WORKDIR, NULL}, /* Torque's; PBS Pro has none */
    {'V', NULL, DA_NONE, DS_EXPORT, dir_read_export_all},
    {'v', NULL, DA_ONE, DS_EXPORT, dir_read_export_list},
    {'J', NULL, DA_ONE, DS_ARRAY, dir_read_array},
    {'t', NULL, DA_ONE, DS_ARRAY, dir_read_array},
    {'W', NULL, DA_ONE, DS_N, read_attrs},
    {'h', NULL, DA_NONE, DS_HOLD, NULL},
    {'p', NULL, DA_ONE, DS_PRIORITY, read_priority},
    {'r', NULL, DA_ONE, DS_NO_REQUEUE, dir_read_rerun},
    {0, NULL, DA_NONE, DS_N, NULL},
};

const struct dir_system dir_pbs = {
    .prefix = "#PBS",
    .name = "PBS",
    .style = DIR_GETOPT_SHORT,
    .opts = pbs_opts,
};
