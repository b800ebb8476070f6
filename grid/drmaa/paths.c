/* paths.c - a job template's paths: drmaa_wd, drmaa_output_path and
 * drmaa_error_path with DRMAA's placeholders, checked when set and made
 * into the request's workdir, output and error at submit. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grid/drmaa/template.h"

#define PH_HD DRMAA_PLACEHOLDER_HD
#define PH_WD DRMAA_PLACEHOLDER_WD
#define PH_INCR DRMAA_PLACEHOLDER_INCR
#define PATH_BYTES 4096 /* Loom's limit is 4095 bytes */

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* A placeholder that may stand at the beginning only, found later. */
static int misplaced(const char *name, const char *path, const char *ph,
                     struct dr_error *e)
{
    const char *p = strstr(path, ph);

    if (p && (p != path || strstr(p + 1, ph)))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s '%.200s': %s may stand at the beginning "
                            "only", name, path, ph);
    return 0;
}

/* The path of an input, output or error path: [hostname]:path, the
 * hostname ignored (the job's cluster decides where its files are). */
static const char *path_part(const char *value)
{
    const char *colon = strchr(value, ':');

    return colon ? colon + 1 : value;
}

int dr_wd_check(const char *name, const char *value, struct dr_error *e)
{
    if (!*value)
        return 0; /* "" unsets */
    if (strstr(value, PH_WD))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s '%.200s': %s stands for %s itself and "
                            "cannot be in it", name, value, PH_WD, name);
    if (misplaced(name, value, PH_HD, e) < 0)
        return -1;
    if (starts(value, PH_HD) && strcmp(value + strlen(PH_HD), "") &&
        strcmp(value + strlen(PH_HD), "/"))
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                            "%s '%.200s' cannot be honoured: Loom's workdir "
                            "is an absolute path, and the account's home on "
                            "the job's cluster is not known here; %s alone "
                            "(the home, where Loom's jobs run by default) or "
                            "an absolute directory can be", name, value,
                            PH_HD);
    return 0;
}

int dr_iopath_check(const char *name, const char *value, struct dr_error *e)
{
    const char *path = path_part(value);

    if (!*value)
        return 0;
    if (!*path)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_FORMAT,
                            "%s '%.200s' has no path ([hostname]:path)",
                            name, value);
    /* each at the beginning only, so never both */
    if (misplaced(name, path, PH_HD, e) < 0 ||
        misplaced(name, path, PH_WD, e) < 0)
        return -1;
    return 0;
}

/* Append n bytes of s to out (size bytes, *len used); '%' doubled when
 * pct, so that Loom does not read it as a pattern. -1 when too long. */
static int put(char *out, size_t size, size_t *len, const char *s, size_t n,
               int pct)
{
    for (size_t i = 0; i < n; i++) {
        int two = pct && s[i] == '%';

        if (*len + 1 + two >= size)
            return -1;
        if (two)
            out[(*len)++] = '%';
        out[(*len)++] = s[i];
    }
    out[*len] = '\0';
    return 0;
}

/* text with each $drmaa_incr_ph$ replaced by the bulk index (index 0: a
 * single job, which has none), appended to out. */
static int expand(const char *name, const char *text, int index, int pct,
                  char *out, size_t size, size_t *len, struct dr_error *e)
{
    const char *p;
    char num[16];

    while ((p = strstr(text, PH_INCR))) {
        if (!index)
            return dr_error_set(e, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                                "%s has %s, which stands for a bulk job's "
                                "index: submit it with drmaa_run_bulk_jobs",
                                name, PH_INCR);
        snprintf(num, sizeof(num), "%d", index);
        if (put(out, size, len, text, (size_t)(p - text), pct) < 0 ||
            put(out, size, len, num, strlen(num), 0) < 0)
            goto long_;
        text = p + strlen(PH_INCR);
    }
    if (put(out, size, len, text, strlen(text), pct) == 0)
        return 0;
long_:
    return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                        "%s is longer than Loom's %d bytes once its "
                        "placeholders are replaced", name, PATH_BYTES - 1);
}

/* drmaa_wd as the request's workdir into wd ("" for none: the account's
 * home); a relative one is the submitting process's working directory's. */
static int workdir_of(const char *value, int index, char *wd, size_t size,
                      struct dr_error *e)
{
    size_t len = 0;

    wd[0] = '\0';
    if (!value || starts(value, PH_HD))
        return 0; /* dr_wd_check: $drmaa_hd_ph$ alone, the home */
    if (value[0] != '/') {
        if (!getcwd(wd, size - 1))
            return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                                "%s '%.200s' is relative, and the working "
                                "directory it is relative to cannot be "
                                "read", DRMAA_WD, value);
        len = strlen(wd);
        if (len > 1 && put(wd, size, &len, "/", 1, 0) < 0)
            return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                                "%s is too long", DRMAA_WD);
    }
    return expand(DRMAA_WD, value, index, 0, wd, size, &len, e);
}

/* Is path (absolute, or relative to wd when wd is known) a directory on
 * this host? */
static int is_dir_here(const char *wd, const char *path)
{
    char full[PATH_BYTES * 2];
    struct stat st;

    if (path[0] == '/')
        snprintf(full, sizeof(full), "%s", path);
    else if (*wd)
        snprintf(full, sizeof(full), "%s/%s", wd, path);
    else
        return 0;
    return stat(full, &st) == 0 && S_ISDIR(st.st_mode);
}

/* An output or error path as Loom's name into out: relative to the
 * workdir unless absolute, '%' doubled, a directory given the file name
 * Grid Engine gives (job name, .o or .e, job id). home: the job works in
 * its account's home (no workdir). */
static int name_of(const char *attr, const char *value, int index,
                   const char *wd, int home, char kind, char *out,
                   size_t size, struct dr_error *e)
{
    const char *path = path_part(value);
    char file[8] = "%x.o%j";
    size_t len = 0, n;
    int dir = 0;

    out[0] = '\0';
    if (starts(path, PH_HD)) {
        if (!home)
            return dr_error_set(e, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                                "%s '%.200s' is in the account's home, which "
                                "is not known here; with %s set to a "
                                "directory, give an absolute path or one "
                                "relative to it", attr, value, DRMAA_WD);
        path += strlen(PH_HD);
    } else if (starts(path, PH_WD)) {
        path += strlen(PH_WD);
    }
    if (path != path_part(value)) { /* a placeholder: relative to wd */
        while (*path == '/')
            path++;
        dir = !*path;
    }
    if (expand(attr, path, index, 1, out, size, &len, e) < 0)
        return -1;
    n = strlen(out);
    dir = dir || (n && out[n - 1] == '/') || is_dir_here(wd, out);
    if (!dir)
        return 0;
    file[3] = kind;
    if ((n && out[n - 1] != '/' && put(out, size, &len, "/", 1, 0) < 0) ||
        put(out, size, &len, file, strlen(file), 0) < 0)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ATTRIBUTE_VALUE,
                            "%s is too long", attr);
    return 0;
}

static int set_str(json_t *body, const char *key, const char *v,
                   struct dr_error *e)
{
    if (json_object_set_new(body, key, json_string(v)) < 0)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return 0;
}

int dr_paths_apply(const drmaa_job_template_t *jt, int index, json_t *body,
                   struct dr_error *e)
{
    const char *wd_value = jt->scalar[DR_WD];
    const char *out_value = jt->scalar[DR_OUTPUT_PATH];
    const char *err_value = jt->scalar[DR_ERROR_PATH];
    int join = jt->scalar[DR_JOIN_FILES] &&
               !strcmp(jt->scalar[DR_JOIN_FILES], "y");
    char wd[PATH_BYTES], name[PATH_BYTES];

    if (workdir_of(wd_value, index, wd, sizeof(wd), e) < 0)
        return -1;
    if (*wd && set_str(body, "workdir", wd, e) < 0)
        return -1;
    if (out_value &&
        (name_of(DRMAA_OUTPUT_PATH, out_value, index, wd, !*wd, 'o', name,
                 sizeof(name), e) < 0 ||
         set_str(body, "output", name, e) < 0))
        return -1;
    /* drmaa_join_files y: the errors go to the output file (Loom's
     * default), and drmaa_error_path is not used */
    if (join)
        return 0;
    if (!err_value)
        return set_str(body, "error", DR_ERROR_FILE, e);
    if (name_of(DRMAA_ERROR_PATH, err_value, index, wd, !*wd, 'e', name,
                sizeof(name), e) < 0)
        return -1;
    return set_str(body, "error", name, e);
}
