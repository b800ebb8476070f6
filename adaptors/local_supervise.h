/* local_supervise.h - what the parts of loom-supervise share (it is a
 * program of its own, not part of loomd). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_LOCAL_SUPERVISE_H
#define LOOM_ADAPTORS_LOCAL_SUPERVISE_H

#include <sys/types.h>

#include "adaptors/local_job.h"

struct sup {
    const char *rundir;    /* its path, for messages and as a workdir */
    int run_fd;            /* the run directory, open (LOOM_RUNAS_RUN_FD) */
    struct local_spec spec;
    struct local_pid pid;  /* what run/pid.json says */
    struct strv argv, env; /* what the job execs with */
    int script_fd;         /* a script's text in memory (kept open for its
                              interpreter, which reads /dev/fd/N), or -1 */
    int exec_script;       /* exec script_fd itself (it has a #! line) */
    int out_fd, err_fd;    /* the job's output files, or -1 */
    char fail[320];        /* why the job cannot start at all (its working
                              directory or an output file), or "" */
    pid_t job;             /* the group leader; also the group id; 0 */
    int exec_fd;           /* read end: the errno of a failed exec, or EOF
                              once the job execs (the write end is
                              close-on-exec); -1 when none */
    const char *reason;    /* "walltime exceeded", "cancelled", or NULL */
    int stopping;          /* SIGTERM sent to the job */
    double kill_at;        /* when SIGKILL follows it; 0 once sent */
};

/* The one line the adaptor waits for on fd 3; a vanished reader is no
 * matter. A line other than "ok" is logged as a failed start. */
void sup_ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* local_launch.c: everything the job needs before it is forked: its
 * argv and environment (-1 with errno when out of memory), then its
 * working directory and output files, opened as the account (a failure
 * there is the job's: s->fail says why, and 0 is returned). */
int launch_prepare(struct sup *s);
/* Fork the job (unless s->fail), write run/pid.json, then let it exec.
 * 0, or -1 when the supervisor failed (it has answered fd 3). */
int launch_start(struct sup *s);

#endif
