/* proc.h - run an external program: own process group, pipes, time and
 * output limits. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_PROC_H
#define LOOM_CORE_PROC_H

#include <stddef.h>

#include "core/error.h"

struct proc_spec {
    const char *path;          /* the executable */
    char *const *argv;         /* argv[0] included, NULL-terminated */
    char *const *envp;         /* the whole environment, NULL-terminated */
    const char *cwd;           /* or NULL */
    const char *input;         /* written to standard input, may be NULL */
    size_t input_len;
    double timeout_s;          /* then SIGTERM to the group, SIGKILL 1 s on */
    size_t max_out, max_err;   /* caps on standard output and error */
    int fd3;                   /* > 0: an open descriptor the child gets as
                                  descriptor 3; 0: none */
};

struct proc_result {
    int exited;        /* 1: exit_code is valid */
    int exit_code;
    int signal;        /* the signal that ended it, or 0 */
    int timed_out;
    int too_much;      /* an output went over its cap */
    char *out, *err;   /* owned, NUL-terminated */
    size_t out_len, err_len;
    double elapsed_s;
};
void proc_result_fini(struct proc_result *r); /* NULL-safe */

/* Run spec to its end (or its time-out). 0 once it ran — then look at r —
 * or -1 when it could not be started (err). Any thread; the child is in a
 * process group of its own and is always reaped. */
int proc_run(const struct proc_spec *spec, struct proc_result *r,
             struct loom_error *err);

#endif
