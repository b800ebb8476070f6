/* swf.c - the Standard Workload Format reader: comments, 18 numeric fields
 * a job, -1 for unknown. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/swf.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define SWF_FIELDS 18
#define SWF_LINE_MAX 65536 /* a job line is ~100 bytes; a ceiling anyway */

static const char *const field_names[SWF_FIELDS] = {"job number",
                                                    "submit time",
                                                    "wait time",
                                                    "run time",
                                                    "allocated processors",
                                                    "average cpu time",
                                                    "used memory",
                                                    "requested processors",
                                                    "requested time",
                                                    "requested memory",
                                                    "status",
                                                    "user id",
                                                    "group id",
                                                    "executable",
                                                    "queue",
                                                    "partition",
                                                    "preceding job",
                                                    "think time"};

struct swf_buf {
    struct swf_job *v;
    size_t n, cap;
};

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' ||
           c == '\f';
}

/* Split one line into its 18 numbers. 1 for a job line, 0 for a blank or
 * comment line, -1 with err naming the line and field. */
static int parse_line(char *line, size_t lineno, double *f,
                      struct loom_error *err)
{
    char *p = line;
    size_t k = 0;

    while (is_space(*p))
        p++;
    if (*p == '\0' || *p == ';')
        return 0;
    while (*p) {
        char *tok = p, *end;

        while (*p && !is_space(*p))
            p++;
        if (*p)
            *p++ = '\0';
        while (is_space(*p))
            p++;
        if (k == SWF_FIELDS)
            return loom_error_set(err, LOOM_EINVAL,
                                  "line %zu: more than %d fields", lineno,
                                  SWF_FIELDS);
        errno = 0;
        f[k] = strtod(tok, &end);
        if (end == tok || *end != '\0' || errno == ERANGE || !isfinite(f[k]))
            return loom_error_set(err, LOOM_EINVAL,
                                  "line %zu: field %zu (%s): '%.40s' is not "
                                  "a number",
                                  lineno, k + 1, field_names[k], tok);
        k++;
    }
    if (k != SWF_FIELDS)
        return loom_error_set(err, LOOM_EINVAL,
                              "line %zu: %zu fields, SWF has %d", lineno, k,
                              SWF_FIELDS);
    return 1;
}

/* Check that field k holds a whole number that fits an int (or is -1). */
static int whole(const double *f, size_t k, size_t lineno,
                 struct loom_error *err)
{
    if (f[k] != floor(f[k]) || f[k] < -1 || f[k] > INT_MAX)
        return loom_error_set(err, LOOM_EINVAL,
                              "line %zu: field %zu (%s): %g is not a count",
                              lineno, k + 1, field_names[k], f[k]);
    return 0;
}

static int push(struct swf_buf *b, const struct swf_job *j,
                struct loom_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1024;
        struct swf_job *v = realloc(b->v, cap * sizeof(*v));

        if (!v)
            return loom_error_set(err, LOOM_EINTERNAL,
                                  "swf: out of memory at %zu jobs", b->n);
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = *j;
    return 0;
}

/* Turn the 18 fields into a job; 1 to keep it, 0 to skip it, -1 bad. */
static int to_job(const double *f, size_t lineno, struct swf_job *j,
                  struct loom_error *err)
{
    if (whole(f, 0, lineno, err) < 0 || whole(f, 4, lineno, err) < 0 ||
        whole(f, 7, lineno, err) < 0 || whole(f, 11, lineno, err) < 0)
        return -1;
    j->id = (long)f[0];
    j->submit = f[1];
    j->run = f[3];
    j->procs = f[7] > 0 ? (int)f[7] : (int)f[4];
    j->req_time = f[8] > 0 ? f[8] : -1;
    j->user = (int)f[11];
    return j->run >= 0 && j->procs > 0 && j->submit >= 0;
}

int swf_read(FILE *fp, struct swf_job **out, size_t *n, size_t *skipped,
             struct loom_error *err)
{
    struct swf_buf b = {0};
    char *line = NULL;
    size_t cap = 0, lineno = 0, skip = 0;
    ssize_t len;
    double f[SWF_FIELDS];

    while ((len = getline(&line, &cap, fp)) >= 0) {
        struct swf_job j;
        int r;

        lineno++;
        if (len > SWF_LINE_MAX) {
            loom_error_set(err, LOOM_ETOOBIG,
                           "line %zu: longer than %d "
                           "bytes",
                           lineno, SWF_LINE_MAX);
            goto error;
        }
        if ((size_t)len != strlen(line)) {
            loom_error_set(err, LOOM_EINVAL, "line %zu: holds a NUL byte",
                           lineno);
            goto error;
        }
        r = parse_line(line, lineno, f, err);
        if (r < 0)
            goto error;
        if (r == 0)
            continue;
        r = to_job(f, lineno, &j, err);
        if (r < 0)
            goto error;
        if (r == 0)
            skip++;
        else if (push(&b, &j, err) < 0)
            goto error;
    }
    if (ferror(fp)) {
        loom_error_set(err, LOOM_EINTERNAL, "line %zu: read error: %s",
                       lineno + 1, strerror(errno));
        goto error;
    }
    free(line);
    *out = b.v;
    *n = b.n;
    if (skipped)
        *skipped = skip;
    return 0;
error:
    free(line);
    free(b.v);
    return -1;
}
