/* directives_slots.c - the slots a directive fills, the request field
 * each feeds, and what the system tables read values with. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/arrayspec.h"
#include "core/depend.h"
#include "core/directives_table.h"
#include "core/limits.h"

/* A field that joins the request is one line here. */
const struct dir_slot_def dir_slot_defs[DS_N] = {
    [DS_NAME] = {"name", SK_TEXT, "name"},
    [DS_NODES] = {"request.nodes", SK_NUM, "node count"},
    [DS_NTASKS] = {"request.cpus_per_node", SK_NUM, "task count"},
    [DS_TASKS_PER_NODE] = {"request.cpus_per_node", SK_NUM, "tasks"},
    [DS_CPUS_PER_TASK] = {"request.cpus_per_node", SK_NUM, "cpus"},
    [DS_CPUS_PER_NODE] = {"request.cpus_per_node", SK_NUM, "cpus"},
    [DS_MEM_PER_NODE] = {"request.memory_mb", SK_NUM, "memory"},
    [DS_MEM_PER_CPU] = {"request.memory_mb", SK_NUM, "memory"},
    [DS_MEM_TOTAL] = {"request.memory_mb", SK_NUM, "memory"},
    [DS_TIME] = {"request.walltime_s", SK_NUM, "walltime"},
    [DS_QUEUE] = {"request.queue", SK_TEXT, "queue"},
    [DS_FEATURES] = {"request.features", SK_NUM, "features"},
    [DS_GPUS] = {"request.gpus", SK_NUM, "GPUs"},
    [DS_GPUS_PER_CPU] = {"request.gpus", SK_NUM, "GPUs"},
    [DS_GPUS_TOTAL] = {"request.gpus", SK_NUM, "GPUs"},
    [DS_OUTPUT] = {"output", SK_OWN, "output file"},
    [DS_ERROR] = {"error", SK_OWN, "error file"},
    [DS_JOIN] = {"error", SK_OWN, "joining of error and output"},
    [DS_WORKDIR] = {"workdir", SK_OWN, "working directory"},
    [DS_CWD] = {"workdir", SK_OWN, "working directory"},
    [DS_EXPORT] = {"env", SK_OWN, "environment"},
    [DS_ARRAY] = {"array", SK_TEXT, "array"},
    [DS_ARRAY_LIMIT] = {"array", SK_NUM, "limit of tasks at once"},
    [DS_DEPEND] = {"dependency", SK_TEXT, "dependency"},
    [DS_HOLD] = {"hold", SK_FLAG, "hold"},
    [DS_EXCLUSIVE] = {NULL, SK_FLAG, "exclusive use of nodes"},
    [DS_PRIORITY] = {"priority", SK_NUM, "priority"},
    [DS_NO_REQUEUE] = {"requeue", SK_FLAG, "requeue"},
    [DS_COMMENT] = {"comment", SK_TEXT, "comment"},
};

/* ---- filling slots ------------------------------------------------------- */

int dir_slot_check(enum dir_slot slot, struct loom_error *err)
{
    if (!dir_slot_defs[slot].field)
        return loom_error_set(err, LOOM_EINVAL, "not supported by Loom: the "
                              "job request has no %s",
                              dir_slot_defs[slot].what);
    return 0;
}

int dir_put_num(struct dir_ctx *ctx, enum dir_slot slot, long v,
                struct loom_error *err)
{
    if (dir_slot_check(slot, err) < 0)
        return -1;
    ctx->num[slot] = v;
    ctx->put |= DIR_BIT(slot);
    return 0;
}

int dir_put_text(struct dir_ctx *ctx, enum dir_slot slot, const char *text,
                 struct loom_error *err)
{
    char *copy;

    if (dir_slot_check(slot, err) < 0)
        return -1;
    if (!(copy = strdup(text)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    free(ctx->text[slot]);
    ctx->text[slot] = copy;
    ctx->put |= DIR_BIT(slot);
    return 0;
}

int dir_put_feature(struct dir_ctx *ctx, const char *name, int add,
                    struct loom_error *err)
{
    if (!add && !(ctx->put & DIR_BIT(DS_FEATURES)))
        ctx->features_reset = 1;
    if (strv_push(&ctx->features, name) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    ctx->put |= DIR_BIT(DS_FEATURES);
    return 0;
}

void dir_ctx_fini(struct dir_ctx *ctx)
{
    for (int s = 0; s < DS_N; s++)
        free(ctx->text[s]);
    strv_fini(&ctx->features);
}

int dir_commit(struct dir_set *set, int line, char *text_take,
               struct dir_ctx *ctx, const char *ignored)
{
    struct dir_one *d;

    if (set->n == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 8;
        if (!(d = realloc(set->d, cap * sizeof(*d))))
            goto oom;
        set->d = d;
        set->cap = cap;
    }
    d = &set->d[set->n];
    *d = (struct dir_one){line, text_take, ctx->put, NULL};
    if (!ignored && !ctx->put)
        ignored = ctx->note;
    if (ignored && !(d->ignored = strdup(ignored)))
        goto oom;
    set->n++;
    text_take = NULL;
    if (ctx->features_reset) {
        strv_fini(&set->features);
        set->features_from = set->n - 1;
    }
    for (size_t i = 0; i < ctx->features.n; i++)
        if (strv_push(&set->features, ctx->features.v[i]) < 0)
            goto oom;
    if (ctx->put & DIR_BIT(DS_EXPORT)) {
        if (ctx->export_add && set->last[DS_EXPORT]) {
            const char *a = set->text[DS_EXPORT], *b = ctx->text[DS_EXPORT];
            size_t n = strlen(a) + strlen(b) + 2;
            char *both = malloc(n);
            if (!both)
                goto oom;
            snprintf(both, n, "%s,%s", a, b);
            free(ctx->text[DS_EXPORT]);
            ctx->text[DS_EXPORT] = both;
        } else {
            set->export_from = set->n - 1;
        }
    }
    for (int s = 0; s < DS_N; s++) {
        if (!(ctx->put & DIR_BIT(s)))
            continue;
        set->num[s] = ctx->num[s];
        free(set->text[s]);
        set->text[s] = ctx->text[s];
        ctx->text[s] = NULL;
        set->last[s] = (int)set->n;
    }
    dir_ctx_fini(ctx);
    memset(ctx, 0, sizeof(*ctx));
    return 0;
oom:
    free(text_take);
    dir_ctx_fini(ctx);
    memset(ctx, 0, sizeof(*ctx));
    return -1;
}

void dir_set_fini(struct dir_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->d[i].text);
        free(set->d[i].ignored);
    }
    for (int s = 0; s < DS_N; s++)
        free(set->text[s]);
    strv_fini(&set->features);
    free(set->d);
    memset(set, 0, sizeof(*set));
}

/* ---- reading values ------------------------------------------------------ */

int dir_count(const char *text, const char *what, long min, long max,
              long *out, struct loom_error *err)
{
    long v = 0;
    const char *p = text;

    for (; *p >= '0' && *p <= '9' && v <= max; p++)
        v = v * 10 + (*p - '0');
    if (p == text || *p || v < min || v > max)
        return loom_error_set(err, LOOM_EINVAL, "%s must be a whole number "
                              "from %ld to %ld, not '%.64s'", what, min, max,
                              text);
    *out = v;
    return 0;
}

int dir_size_mb(const char *text, const struct dir_unit *units,
                const char *what, const char *forms, long *mb,
                struct loom_error *err)
{
    const char *p = text;
    double v = 0, m;

    for (; *p >= '0' && *p <= '9' && v < 1e15; p++)
        v = v * 10 + (*p - '0');
    for (; p > text && units->suffix; units++)
        if (!strcasecmp(p, units->suffix))
            break;
    if (p == text || !units->suffix)
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is not a size (%s)",
                              text, forms);
    m = v * units->bytes / 1048576.0;
    if (m > (double)LOOM_JOB_MEMORY_MB_MAX)
        return loom_error_set(err, LOOM_EINVAL, "'%.64s' is more than Loom's "
                              "limit of %ld MiB", text,
                              (long)LOOM_JOB_MEMORY_MB_MAX);
    *mb = (long)m + (m > (double)(long)m); /* rounded up */
    if (*mb < 1)
        return loom_error_set(err, LOOM_EINVAL, "%s must be at least 1 MiB, "
                              "not '%.64s'", what, text);
    return 0;
}

int dir_name_ok(const char *text)
{
    size_t n = strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "abcdefghijklmnopqrstuvwxyz0123456789._-");

    return n > 0 && n <= 64 && !text[n];
}

int dir_each_kv(struct dir_ctx *ctx, const char *list,
                int (*fn)(struct dir_ctx *ctx, const char *name,
                          const char *val, struct loom_error *err),
                struct loom_error *err)
{
    char *copy = strdup(list), *p, *next, *eq;
    int rc = 0;

    if (!copy)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (p = copy; p && rc == 0; p = next) {
        if ((next = strchr(p, ',')))
            *next++ = '\0';
        eq = strchr(p, '=');
        if (eq == p || !eq || !eq[1]) {
            rc = loom_error_set(err, LOOM_EINVAL, "'%.64s' is not "
                                "NAME=VALUE", p);
        } else {
            *eq = '\0';
            rc = fn(ctx, p, eq + 1, err);
        }
    }
    free(copy);
    return rc;
}

int dir_read_name(struct dir_ctx *ctx, const char *arg, const char *arg2,
                  struct loom_error *err)
{
    if (!*arg || strlen(arg) > LOOM_JOB_NAME_MAX)
        return loom_error_set(err, LOOM_EINVAL, "a name has 1 to %d "
                              "characters", LOOM_JOB_NAME_MAX);
    return dir_put_text(ctx, DS_NAME, arg, err);
}

int dir_read_array(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err)
{
    struct array_spec spec;

    if (array_spec_parse(arg, &spec, err) < 0)
        return -1;
    array_spec_fini(&spec);
    return dir_put_text(ctx, DS_ARRAY, arg, err);
}

int dir_put_depend(struct dir_ctx *ctx, const char *text,
                   struct loom_error *err)
{
    struct dep_list l;

    if (dep_parse(text, &l, err) < 0)
        return -1;
    dep_list_fini(&l);
    return dir_put_text(ctx, DS_DEPEND, text, err);
}

int dir_put_priority(struct dir_ctx *ctx, const char *text, long min,
                     long max, struct loom_error *err)
{
    const char *p = text + (*text == '-');
    long v;

    if (dir_count(p, "the priority", 0, max > -min ? max : -min, &v,
                  err) < 0 || (v = p > text ? -v : v) < min || v > max)
        return loom_error_set(err, LOOM_EINVAL, "the priority must be a "
                              "whole number from %ld to %ld, not '%.64s'",
                              min, max, text);
    return dir_put_num(ctx, DS_PRIORITY, v, err);
}

int dir_read_rerun(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err)
{
    if (!strcasecmp(arg, "n") || !strcasecmp(arg, "no"))
        return dir_put_num(ctx, DS_NO_REQUEUE, 1, err);
    if (!strcasecmp(arg, "y") || !strcasecmp(arg, "yes"))
        return loom_error_set(err, LOOM_EINVAL, "not supported by Loom: "
                              "Loom submits a job again only when its "
                              "cluster loses it, not when its node fails; "
                              "n (never) is taken");
    return loom_error_set(err, LOOM_EINVAL, "takes y or n, not '%.64s'",
                          arg);
}

int dir_read_depend(struct dir_ctx *ctx, const char *arg, const char *arg2,
                    struct loom_error *err)
{
    return dir_put_depend(ctx, arg, err);
}
