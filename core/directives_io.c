/* directives_io.c - reading the directives that name a job's files and
 * environment: output and error names, the environment to pass. */
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
