/* outpath.c - a job's working directory and output file names. */
/* SPDX-License-Identifier: MIT */
#include "core/outpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char known[] = "juxAaN%";

int outpath_check(const char *text, const char *field, int absolute,
                  struct loom_error *err)
{
    size_t n = strlen(text);

    if (!n)
        return loom_error_field(err, LOOM_EINVAL, field, "field '%s' must "
                                "not be empty", field);
    if (n > LOOM_PATH_MAX)
        return loom_error_field(err, LOOM_EINVAL, field, "field '%s' is "
                                "longer than %d bytes", field, LOOM_PATH_MAX);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
            return loom_error_field(err, LOOM_EINVAL, field, "field '%s' "
                                    "has a control character", field);
    if (absolute) {
        if (text[0] != '/')
            return loom_error_field(err, LOOM_EINVAL, field, "field '%s' "
                                    "must be an absolute path, not '%.200s'",
                                    field, text);
        return 0;
    }
    for (const char *p = strchr(text, '%'); p; p = strchr(p + 2, '%'))
        if (!p[1] || !strchr(known, p[1]))
            return loom_error_field(err, LOOM_EINVAL, field, "field '%s': "
                                    "unknown pattern '%%%.1s' in '%.200s' "
                                    "(the patterns are %s; %%%% is a %%)",
                                    field, p + 1, text,
                                    LOOM_OUTPUT_PATTERNS);
    return 0;
}

char *outpath_expand(const char *pattern, const struct outpath_vars *v)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    if (!f)
        return NULL;
    for (const char *p = pattern; *p; p++) {
        if (*p != '%' || !p[1] || !strchr(known, p[1])) {
            fputc(*p, f);
            continue;
        }
        switch (*++p) {
        case 'j':
            fprintf(f, "%lld", (long long)v->job_id);
            break;
        case 'A':
            fprintf(f, "%lld",
                    (long long)(v->array_id ? v->array_id : v->job_id));
            break;
        case 'a':
            fprintf(f, "%lld", (long long)v->task_id);
            break;
        case 'u':
            fputs(v->account ? v->account : "", f);
            break;
        case 'x':
            fputs(v->name ? v->name : "", f);
            break;
        case 'N':
            fputs(v->node ? v->node : "", f);
            break;
        default: /* %% */
            fputc('%', f);
        }
    }
    if (fclose(f) == 0)
        return out;
    free(out);
    return NULL;
}
