/* export_files.c - loomctl export: a directive's value, and the job's
 * working directory, output and error names and env as each system's
 * directives write them. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/export.h"
#include "core/ctl/loomctl.h"

int export_value_ok(const char *v)
{
    return *v && !strpbrk(v, "\n\r") && (!strchr(v, '"') || !strchr(v, '\''));
}

void export_put_value(const char *v)
{
    if (!strpbrk(v, " \t#\"'")) {
        fputs(v, stdout);
        return;
    }
    printf(strchr(v, '"') ? "'%s'" : "\"%s\"", v);
}

/* The env as one directive value: NAME=value joined by ','. NULL when
 * out of memory or (*bad: the name) when a value holds a ',', which
 * splits the list in every system's reader. */
static char *env_list(const struct exp *e, const char **bad)
{
    size_t n = 1, o = 0;
    const char *k;
    json_t *v;
    char *s;

    json_object_foreach(e->env, k, v) {
        if (!json_is_string(v) || strchr(json_string_value(v), ',')) {
            *bad = k;
            return NULL;
        }
        n += strlen(k) + strlen(json_string_value(v)) + 2;
    }
    if (!(s = malloc(n)))
        return NULL;
    s[0] = '\0';
    json_object_foreach(e->env, k, v)
        o += (size_t)snprintf(s + o, n - o, "%s%s=%s", o ? "," : "", k,
                              json_string_value(v));
    return s;
}

/* Loom's pattern c (after '%') in a qsub path: Grid Engine's pseudo
 * variable (ge), or, for PBS, which has none, only "%" itself. NULL when
 * there is none. */
static const char *qsub_pattern(char c, int ge)
{
    static const char *const vars[][2] = {
        {"j", "$JOB_ID"}, {"a", "$TASK_ID"}, {"u", "$USER"},
        {"x", "$JOB_NAME"}, {"N", "$HOSTNAME"}, {"%", "%"},
    };

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        if (vars[i][0][0] == c && (ge || c == '%'))
            return vars[i][1];
    return NULL;
}

/* A name of Loom's (output or error: patterns, relative to the working
 * directory) as qsub's -o or -e: Grid Engine's pseudo variables (ge), or
 * a plain name, made absolute in the working directory, for PBS (whose
 * relative paths are the submit directory's). A new string, or NULL with
 * *why when it cannot be written. */
static char *qsub_path(const struct exp *e, const char *name, int ge,
                       const char **why)
{
    const char *dir = !ge && name[0] != '/' ? e->workdir : NULL;
    size_t n = (dir ? strlen(dir) + 1 : 0) + 9 * strlen(name) + 1, o = 0;
    const char *sub;
    char *s;

    *why = NULL;
    if (!*name)
        *why = "it is empty";
    else if (strchr(name, ':'))
        *why = "a ':' would be read as a host";
    else if (ge && strchr(name, ','))
        *why = "a ',' would be read as a list of paths";
    else if (ge && strchr(name, '$'))
        *why = "a '$' would be read as a pseudo variable";
    else if (name[strlen(name) - 1] == '/')
        *why = "a name ending in '/' would be read as a directory";
    if (*why || !(s = malloc(n)))
        return NULL;
    if (dir)
        o = (size_t)snprintf(s, n, "%s%s", dir,
                             dir[strlen(dir) - 1] == '/' ? "" : "/");
    for (const char *p = name; *p; p++) {
        if (*p != '%') {
            s[o++] = *p;
            continue;
        }
        if (!(sub = qsub_pattern(*++p, ge))) {
            free(s);
            *why = ge ? "%A (an array task's array id) has no pseudo "
                        "variable there"
                      : "PBS names have no patterns (%j, %x, ...)";
            return NULL;
        }
        o += (size_t)snprintf(s + o, n - o, "%s", sub);
    }
    s[o] = '\0';
    return s;
}

int export_files_in(struct exp *e, const char *format)
{
    int ge = !strcmp(format, "gridengine"), slurm = !strcmp(format, "slurm");
    const char *sys = ge ? "Grid Engine's" : "PBS's", *why = NULL;
    const char *const names[2] = {e->output, e->error};
    char **w[2] = {&e->out_w, &e->err_w};

    for (int k = 0; k < 2; k++) {
        if (!names[k])
            continue;
        *w[k] = slurm ? strdup(names[k]) : qsub_path(e, names[k], ge, &why);
        if (why)
            return ctl_fail("job %s: its %s name '%s' cannot be written as "
                            "%s -%c: %s", e->id, k ? "error" : "output",
                            names[k], sys, k ? 'e' : 'o', why);
        if (!*w[k])
            return ctl_fail("out of memory");
        if (!export_value_ok(*w[k]))
            return ctl_fail("job %s: its %s name cannot be written as a "
                            "directive (both kinds of quotes)", e->id,
                            k ? "error" : "output");
    }
    if (!ge && !e->workdir) /* a #$ script without -wd works there */
        fprintf(stderr, "loomctl: export: job %s works in its account's "
                "home, which a %s script cannot say: it works in the "
                "directory it is submitted from\n", e->id,
                slurm ? "Slurm" : "PBS");
    if (e->workdir && !export_value_ok(e->workdir))
        return ctl_fail("job %s: its working directory cannot be written "
                        "as a directive (both kinds of quotes)", e->id);
    if (!json_object_size(e->env))
        return -1;
    if (!(e->env_w = env_list(e, &why)))
        return why ? ctl_fail("job %s: its variable %s cannot be written as "
                              "a directive: its value has a ',', which "
                              "splits the list", e->id, why)
                   : ctl_fail("out of memory");
    if (!export_value_ok(e->env_w))
        return ctl_fail("job %s: its env cannot be written as a directive "
                        "(a newline, or both kinds of quotes)", e->id);
    return -1;
}

void export_put_opt(const char *prefix, const char *opt, const char *sep,
                    const char *value)
{
    if (!value)
        return;
    printf("%s %s%s", prefix, opt, sep);
    export_put_value(value);
    putchar('\n');
}
