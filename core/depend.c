/* depend.c - dependencies in Slurm's syntax: read and written back. */
/* SPDX-License-Identifier: MIT */
#include "core/depend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/limits.h"

static const char *const names[DEP_N] = {
    [DEP_AFTER] = "after",           [DEP_AFTERANY] = "afterany",
    [DEP_AFTEROK] = "afterok",       [DEP_AFTERNOTOK] = "afternotok",
    [DEP_SINGLETON] = "singleton",
};

#define TAKES "Loom takes after, afterany, afterok, afternotok (each with " \
              "job ids: afterok:12:13, or an array's task: 12_7) and "      \
              "singleton"

const char *dep_type_name(enum dep_type t)
{
    return t < DEP_N ? names[t] : "?";
}

void dep_list_fini(struct dep_list *l)
{
    if (!l)
        return;
    free(l->v);
    memset(l, 0, sizeof(*l));
}

int dep_list_copy(struct dep_list *dst, const struct dep_list *src)
{
    *dst = *src;
    dst->v = NULL;
    if (!src->n)
        return 0;
    if (!(dst->v = malloc(src->n * sizeof(*dst->v)))) {
        dst->n = 0;
        return -1;
    }
    memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
    return 0;
}

/* "NAME" or "NAME:..." at p: the type, or DEP_N. */
static enum dep_type type_of(const char *p, size_t n)
{
    for (int t = 0; t < DEP_N; t++)
        if (strlen(names[t]) == n && !strncmp(p, names[t], n))
            return (enum dep_type)t;
    return DEP_N;
}

static int add(struct dep_list *l, enum dep_type t, int64_t job, long task,
               struct loom_error *err)
{
    struct dep *v;

    if (l->n == LOOM_JOB_DEPS_MAX)
        return loom_error_set(err, LOOM_EINVAL, "a dependency names at most "
                              "%d jobs", LOOM_JOB_DEPS_MAX);
    if (!(v = realloc(l->v, (l->n + 1) * sizeof(*v))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    l->v = v;
    l->v[l->n++] = (struct dep){t, job, task};
    return 0;
}

/* One part [p, end): TYPE:JOB[:JOB...] or singleton. */
static int part(struct dep_list *l, const char *p, const char *end,
                struct loom_error *err)
{
    const char *colon = memchr(p, ':', (size_t)(end - p)), *q;
    size_t n = (size_t)((colon ? colon : end) - p);
    enum dep_type t = type_of(p, n);
    char ref[48];
    int64_t job;
    long task;

    if (t == DEP_N)
        return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a dependency "
                              "type: " TAKES, (int)(n < 40 ? n : 40), p);
    if (t == DEP_SINGLETON) {
        if (colon)
            return loom_error_set(err, LOOM_EINVAL, "singleton names no "
                                  "job: it waits for the owner's other jobs "
                                  "of the same name");
        return add(l, t, 0, -1, err);
    }
    if (!colon || colon + 1 == end)
        return loom_error_set(err, LOOM_EINVAL, "%s needs the jobs it waits "
                              "for (%s:12:13)", names[t], names[t]);
    for (p = colon + 1; p < end; p = q + 1) {
        q = memchr(p, ':', (size_t)(end - p));
        if (!q)
            q = end;
        n = (size_t)(q - p);
        if (memchr(p, '+', n))
            return loom_error_set(err, LOOM_EINVAL, "'%.*s': a delay after "
                                  "a job (+MINUTES) is not supported by "
                                  "Loom", (int)(n < 40 ? n : 40), p);
        snprintf(ref, sizeof(ref), "%.*s", (int)(n < 47 ? n : 47), p);
        if (n >= sizeof(ref) || domain_job_ref_parse(ref, &job, &task) < 0)
            return loom_error_set(err, LOOM_EINVAL, "'%.*s' is not a job id "
                                  "(123) or an array's task (123_7)",
                                  (int)(n < 40 ? n : 40), p);
        if (add(l, t, job, task, err) < 0)
            return -1;
    }
    return 0;
}

static int parse(const char *text, struct dep_list *l, struct loom_error *err)
{
    const char *p = text, *end;
    int comma = strchr(text, ',') != NULL, ask = strchr(text, '?') != NULL;

    if (strlen(text) > LOOM_JOB_DEPEND_MAX)
        return loom_error_set(err, LOOM_EINVAL, "a dependency takes at most "
                              "%d characters", LOOM_JOB_DEPEND_MAX);
    if (!*text)
        return loom_error_set(err, LOOM_EINVAL, "the dependency is empty: "
                              TAKES);
    if (comma && ask)
        return loom_error_set(err, LOOM_EINVAL, "a dependency joins its "
                              "parts with ',' (all of them) or '?' (any of "
                              "them), not both");
    l->any = ask;
    for (; *p; p = *end ? end + 1 : end) {
        end = p + strcspn(p, ",?");
        if (end == p || (*end && !end[1]))
            return loom_error_set(err, LOOM_EINVAL, "the dependency '%.64s' "
                                  "has an empty part", text);
        if (part(l, p, end, err) < 0)
            return -1;
    }
    return 0;
}

int dep_parse(const char *text, struct dep_list *out, struct loom_error *err)
{
    memset(out, 0, sizeof(*out));
    if (parse(text, out, err) == 0)
        return 0;
    dep_list_fini(out);
    return -1;
}

char *dep_format(const struct dep_list *l)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    if (!f)
        return NULL;
    for (size_t i = 0; i < l->n; i++) {
        const struct dep *d = &l->v[i];
        /* one type's jobs together, when all are needed (with '?' each
         * is a part of its own: "afterok:12:13" would need both) */
        int same = i && !l->any && l->v[i - 1].type == d->type &&
                   d->type != DEP_SINGLETON;
        if (same)
            fputc(':', f);
        else
            fprintf(f, "%s%s", i ? (l->any ? "?" : ",") : "",
                    names[d->type]);
        if (d->type == DEP_SINGLETON)
            continue;
        if (!same)
            fputc(':', f);
        if (d->task >= 0)
            fprintf(f, "%lld_%ld", (long long)d->job, d->task);
        else
            fprintf(f, "%lld", (long long)d->job);
    }
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
