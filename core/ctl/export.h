/* export.h - what loomctl export's files share: the job as it reads it,
 * and how a directive's value is written. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_EXPORT_H
#define LOOM_CORE_CTL_EXPORT_H

#include <jansson.h>

/* The job as export reads it (borrowed from its JSON), and what its
 * files and environment are written as (owned; NULL for none). */
struct exp {
    const char *id, *name, *queue, *script;
    const char *workdir, *output, *error;
    long nodes, cpus, mem, gpus, wall;
    json_t *features, *env, *command;
    long priority;
    int no_requeue, held;
    const char *dependency; /* in Loom's (Slurm's) syntax, or NULL */
    char *out_w, *err_w, *env_w;
    char *dep_w; /* the dependency as Grid Engine or PBS writes it */
};

/* Can v be a directive's value as the readers split it (as it is, or in
 * quotes when it has blanks or '#')? 0 when it cannot: empty, a newline,
 * or both kinds of quotes. */
int export_value_ok(const char *v);
/* Write v to stdout as a directive's value, quoted when it needs it. */
void export_put_value(const char *v);
/* Write the directive "PREFIX OPTION<sep>VALUE" when value is not NULL;
 * sep joins option and value (" " or "="). */
void export_put_opt(const char *prefix, const char *opt, const char *sep,
                    const char *value);
/* Fill e's out_w, err_w and env_w: the job's output and error names and
 * env as format (slurm, gridengine or pbs) writes them (each freed by the
 * caller). -1 when they can all be written, else loomctl's exit code,
 * having said why on stderr. */
int export_files_in(struct exp *e, const char *format);
/* Check that format can carry e's priority and dependency, and fill
 * dep_w (freed by the caller). -1 when it can, else loomctl's exit code,
 * having said why on stderr (export_sched.c). */
int export_sched_in(struct exp *e, const char *format);
/* Write e's priority, requeue, hold and dependency as format's
 * directives. */
void export_sched_out(const struct exp *e, const char *format);

#endif
