/* directives_io.c - reading the directives that name a job's files and
 * environment: output and error names (Slurm's, and qsub's paths of Grid
 * Engine and PBS), the environment to pass. */
/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/directives_table.h"
#include "core/outpath.h"

/* A variable name: letters, digits and '_', not first a digit. */
static int var_name_ok(const char *p, size_t n)
{
    if (!n || isdigit((unsigned char)*p))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && p[i] != '_')
            return 0;
    return 1;
}

int dir_put_export(struct dir_ctx *ctx, const char *text, int none_ok,
                   struct loom_error *err)
{
    const char *p = text, *end;
    size_t n, name;

    if (none_ok && (!strcmp(text, "NONE") || !strcmp(text, "NIL")))
        return dir_put_text(ctx, DS_EXPORT, "NONE", err);
    for (;; p = end + 1) {
        end = p + strcspn(p, ",");
        n = (size_t)(end - p);
        name = strcspn(p, "=,");
        if ((name == 3 && !memcmp(p, "ALL", 3)) ||
            (name == 4 && !memcmp(p, "NONE", 4)) ||
            (name == 3 && !memcmp(p, "NIL", 3))) {
            if (!none_ok)
                return loom_error_set(err, LOOM_EINVAL, "Loom does not pass "
                                      "a variable named %.*s (-V passes the "
                                      "whole environment)", (int)name, p);
            if (n != 3 || memcmp(p, "ALL", 3))
                return loom_error_set(err, LOOM_EINVAL, "%.*s stands alone: "
                                      "Loom takes NONE, or ALL, NAME and "
                                      "NAME=value joined by ','", (int)n, p);
        } else if (!var_name_ok(p, name)) {
            return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a "
                                  "variable name (letters, digits and '_', "
                                  "not first a digit); Loom takes %s "
                                  "NAME=value, joined by ','",
                                  (int)(name < 64 ? name : 64), p,
                                  none_ok ? "NONE, or ALL, NAME and"
                                          : "NAME and");
        }
        if (!*end)
            break;
    }
    return dir_put_text(ctx, DS_EXPORT, text, err);
}

int dir_read_export_all(struct dir_ctx *ctx, const char *arg,
                        const char *arg2, struct loom_error *err)
{
    ctx->export_add = 1;
    return dir_put_text(ctx, DS_EXPORT, "ALL", err);
}

int dir_read_export_list(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err)
{
    ctx->export_add = 1;
    return dir_put_export(ctx, arg, 0, err);
}

int dir_put_outpath(struct dir_ctx *ctx, enum dir_slot slot,
                    const char *text, struct loom_error *err)
{
    if (outpath_check(text, slot == DS_ERROR ? "error" : "output", 0,
                      err) < 0)
        return -1;
    return dir_put_text(ctx, slot, text, err);
}

int dir_put_qsub_path(struct dir_ctx *ctx, enum dir_slot slot,
                      const char *arg, int pseudo_vars,
                      struct loom_error *err)
{
    static const char *const vars[][2] = {
        {"JOB_ID", "%j"}, {"TASK_ID", "%a"}, {"USER", "%u"},
        {"JOB_NAME", "%x"}, {"HOSTNAME", "%N"},
    };
    size_t n = strlen(arg), o = 0, k, i;
    char *out;
    int rc;

    if (strchr(arg, ':'))
        return loom_error_set(err, LOOM_EINVAL, "the host '%.*s:' is not "
                              "supported by Loom (the file is written where "
                              "the job runs): give the path alone",
                              (int)strcspn(arg, ":"), arg);
    if (!(out = malloc(2 * n + 16)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (const char *p = arg; *p; p++) {
        if (*p != '$' || !pseudo_vars) {
            if (*p == '%')
                out[o++] = '%';
            out[o++] = *p;
            continue;
        }
        k = strspn(p + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                          "0123456789_");
        for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            if (strlen(vars[i][0]) == k && !memcmp(p + 1, vars[i][0], k))
                break;
        if (i == sizeof(vars) / sizeof(vars[0])) {
            free(out);
            if (k == 4 && !memcmp(p + 1, "HOME", 4))
                return loom_error_set(err, LOOM_EINVAL, "$HOME is not "
                                      "supported by Loom (it does not know "
                                      "the account's home where it takes "
                                      "the job): give the path relative to "
                                      "the working directory, or absolute");
            return loom_error_set(err, LOOM_EINVAL, "'$%.*s' is not one of "
                                  "the pseudo variables Loom takes ($JOB_ID, "
                                  "$TASK_ID, $USER, $JOB_NAME, $HOSTNAME)",
                                  (int)(k < 64 ? k : 64), p + 1);
        }
        memcpy(out + o, vars[i][1], 2);
        o += 2;
        p += k;
    }
    if (o && out[o - 1] == '/')
        o += (size_t)snprintf(out + o, 16, "%%x.%c%%j",
                              slot == DS_ERROR ? 'e' : 'o');
    out[o] = '\0';
    rc = dir_put_outpath(ctx, slot, out, err);
    free(out);
    return rc;
}
