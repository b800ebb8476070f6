/* local_job.h - the local executor's job directory and supervisor protocol. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_LOCAL_JOB_H
#define LOOM_ADAPTORS_LOCAL_JOB_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "adaptors/adaptor.h"
#include "adaptors/cgroup.h"
#include "core/error.h"

/*
 * One directory per job, <state_dir>/clusters/<cluster>/jobs/<loom_id>/,
 * loomd's, mode 0700 (nobody else can reach anything below it by path):
 *   spec.json      what was asked (and the script); written by the adaptor
 *                  before the start, never changed once a supervisor ran.
 *                  Its open file is the supervisor's lifetime lock (flock)
 *                  and the only way the supervisor reads it.
 *   supervise.log  the supervisor's own log lines (its stderr)
 *   suspended      present while the adaptor holds the job frozen/stopped
 *   exit.json      how the job ended, when the adaptor had to say it (its
 *                  supervisor was lost); it wins over run/exit.json
 *   run/           the run directory: the job's account owns it (mode
 *                  2750, group loomd's), loomd reads it
 *     pid.json     supervisor pid and start time, the job's process group
 *                  and its leader's start time, where it runs and writes;
 *                  by the supervisor, before the job may exec
 *     exit.json    how the job ended, by the supervisor
 *     (the job's working directory and output when its account has no
 *     home it can enter and the request names no workdir)
 * Every JSON file is written whole: NAME.tmp, fsync, rename.
 */
#define LOOM_LF_SPEC "spec.json"
#define LOOM_LF_PID "pid.json"
#define LOOM_LF_EXIT "exit.json"
#define LOOM_LF_SUSPENDED "suspended"
#define LOOM_LF_SUPLOG "supervise.log"
#define LOOM_LF_RUN "run"

/*
 * The supervisor protocol. The adaptor makes the job's cgroups and runs
 * `loom-runas start ACCOUNT JOBDIR/run CGROUP...` with fd 3 the write end
 * of a pipe and fd 4 an open file of JOBDIR/spec.json on which it holds
 * flock(LOCK_EX), in runas_call_env (nothing of loomd's environment). loom-runas gives run/ to the account, joins the cgroups,
 * becomes the account and executes `loom-supervise --run JOBDIR/run` with
 * run/ open on fd 5 (LOOM_RUNAS_RUN_FD). That process forks the real
 * supervisor and exits at once (the adaptor reaps it). The supervisor
 * starts a new session, makes itself undumpable (the job, of the same
 * account, can neither trace it nor open its descriptors through /proc),
 * keeps fd 4 (and so the lock) for its whole life, starts the job,
 * writes run/pid.json, lets the job exec, then writes one line to fd 3:
 * "ok", or "error: <message>" when the job could not be started. A job
 * whose working directory or output cannot be opened has started and
 * ended at once: run/exit.json says why.
 */
#define LOOM_LOCAL_READY_FD 3
#define LOOM_LOCAL_LOCK_FD 4
#define LOOM_LOCAL_GRACE_S 2 /* from SIGTERM to SIGKILL */

/* Everything below is called from the server-interface thread (through the
 * local adaptor) or from loom-supervise, and keeps no state of its own. */

/* What was asked (spec.json); the supervisor turns it into argv and an
 * environment. All strings owned. */
struct local_spec {
    int64_t loom_id;
    char *cluster;
    char *name, *owner;   /* or NULL */
    char *account;        /* who it runs as (NULL: a directory from before
                             accounts) */
    struct strv command;  /* argv as given; empty: the script */
    char *script;         /* the script's text, or NULL */
    struct strv env;      /* the request's NAME=value entries */
    struct strv nodes;
    char *workdir;        /* as asked, or NULL: the account's home */
    char *output, *error; /* names with their patterns expanded, relative
                             to the working directory; error NULL: the
                             output file */
    char *cgroup_procs;   /* the job cgroup's cgroup.procs, or NULL */
    char *oom_file;       /* its out-of-memory counter file, or NULL */
    int cpus_per_node;
    long memory_mb;
    int gpus;
    long walltime_s; /* 0 = none */
    time_t submit_time;
};

/* Who runs it and where (run/pid.json). Start times are /proc/PID/stat
 * field 22, and with the boot id they keep a recycled pid (also after a
 * reboot) from being taken for ours. */
struct local_pid {
    pid_t sup_pid;
    unsigned long long sup_start;
    pid_t pgid; /* the job's process group: its leader's pid; 0 when the
                   job could not even be forked (run/exit.json says why) */
    unsigned long long job_start;
    time_t start_time;
    char boot_id[40];
    char *workdir, *stdout_path, *stderr_path; /* absolute; owned */
};

/* How it ended (exit.json). */
struct local_exit {
    int has_exit_code;
    int exit_code;   /* 128 + signal for a signalled job */
    int signal;      /* 0, or the signal that ended it */
    char reason[320]; /* "" = none (exit code 0); "walltime exceeded",
                         "cancelled", "exited with code N", "killed by
                         signal N (NAME)", "cannot execute PATH: WHY",
                         "cannot enter DIR: WHY", "cannot open output file
                         PATH: WHY", "out of memory (memory_mb N)",
                         "supervisor lost" */
    time_t start_time, end_time;
    struct cl_usage usage; /* the job's processes that its leader waited
                              for, and the leader (wait4's rusage) */
};

/* A job's state as its directory tells: API job states. */
enum local_state {
    LOOM_LOCAL_RUNNING,
    LOOM_LOCAL_SUSPENDED,
    LOOM_LOCAL_COMPLETED,
    LOOM_LOCAL_FAILED,
    LOOM_LOCAL_CANCELLED,
};
extern const char *const local_state_names[];

/* What a job needs of its cluster: the adaptor's, borrowed by its jobs. */
struct local_ctx {
    const char *cluster;
    const char *runas;  /* <libexec>/loom-runas */
    struct cgroups *cg; /* never NULL; may be unconfined */
    long pids_max;      /* 0: none */
};

/* One job, as read from its directory. */
struct local_job {
    char *dir;
    const struct local_ctx *ctx;
    struct local_spec spec;
    struct local_pid pid;
    struct local_exit exit;
    int has_pid;
    enum local_state state;
    int reported; /* the adaptor's: the state it last reported, or -1 */
};

/* An empty job of dir (state running, nothing read), or NULL when out of
 * memory. */
struct local_job *local_job_new(const char *dir, const struct local_ctx *ctx);
/* 1 when a supervisor holds the lock of dir's spec.json, 0 when none does,
 * -1 when there is no spec.json. */
int local_job_locked(const char *dir);
/* Read dir into a new job (destroy it with local_job_destroy): 1; 0 when
 * dir holds no job that ever started (no spec.json, or neither a pid.json
 * nor a live supervisor); -1 with err. */
int local_job_load(const char *dir, const struct local_ctx *ctx,
                   struct local_job **out, struct loom_error *err);
/* Write dir for req (checked by the caller, resources and all; it has an
 * account), make its cgroups and run its supervisor: a new job, or NULL
 * with err. Blocks up to 10 s for the supervisor's answer and leaves no
 * child behind. A failure leaves no directory and no cgroup, unless a job
 * did start after all: then that job is returned and a warning logged.
 * The start holds a lock on dir throughout, and starts nothing when the
 * job started already: LOOM_ECONFLICT (the caller adopts it), or
 * LOOM_ETEMP while another process holds that lock (docs/internals/
 * standby.md: two loomd never start a job twice). */
struct local_job *local_job_start(const char *dir, const struct local_ctx *ctx,
                                  const struct start_req *req,
                                  struct loom_error *err);
void local_job_destroy(struct local_job *j); /* NULL-safe */
int local_job_active(const struct local_job *j); /* running or suspended */
/* Bring a running job up to date: one file look-up, and one read of /proc
 * while it runs. A job whose supervisor died without writing exit.json is
 * ended with "supervisor lost" (or "out of memory ..." when the kernel
 * killed it so), after everything in its cgroup is killed. */
void local_job_refresh(struct local_job *j);
/* Cancel: thaw it, then SIGTERM to a live supervisor through loom-runas
 * (it ends the job and writes exit.json); with no supervisor, kill what is
 * left and write exit.json here. An ended job: 0, nothing done. -1 with
 * LOOM_ETEMP while starting. */
int local_job_cancel(struct local_job *j, struct loom_error *err);
/* Freeze (stop = 1) or thaw the job's cgroup (unconfined: SIGSTOP or
 * SIGCONT to its process group, through loom-runas), and mark or unmark
 * it suspended. The caller checks the job's state first. */
int local_job_stop(struct local_job *j, int stop, struct loom_error *err);
/* Remove an ended job's cgroups; -1 while a process is left in them (it
 * is killed: try again later). */
int local_job_cgroups_remove(const struct local_ctx *ctx, int64_t id,
                             const char *account);

/* ---- files (local_files.c): loomd's and the supervisor's ------------- */

/* buf = <state_dir>/clusters/<cluster>/jobs/<id>/run: a job's run directory
 * (where its output is when its account has no home to run in). 0, or -1
 * when it does not fit. */
int local_run_dir(const char *state_dir, const char *cluster, int64_t id,
                  char *buf, size_t size);

/* A new string of that format, or NULL when out of memory. */
char *local_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* buf = dir/name; -1 with err (may be NULL) when it does not fit. */
int local_path(char *buf, size_t size, const char *dir, const char *name,
               struct loom_error *err);
/* The error kind of a failed write in the state_dir: LOOM_ETEMP when the
 * file system is full (ENOSPC, EDQUOT), which passes (the job waits and is
 * started again), else LOOM_EINTERNAL. */
enum loom_err_kind local_errno_kind(int e);
/* name in the directory open on dirfd (what path names, for messages),
 * written whole with that mode (tmp, fsync, rename); err's kind is
 * local_errno_kind's. */
int local_write_at(int dirfd, const char *path, const char *name,
                   const char *data, size_t len, mode_t mode,
                   struct loom_error *err);
/* dir/name as JSON, written whole, mode 0600 (dirfd < 0: by path; else
 * in the directory open on dirfd, mode 0640). Consumes o; NULL (a failed
 * json_pack) is an out-of-memory error. */
int local_json_write_take(int dirfd, const char *dir, const char *name,
                          json_t *o, struct loom_error *err);
/* 1 with a new reference in *out, 0 when the file does not exist, -1. */
int local_json_read(const char *dir, const char *name, json_t **out,
                    struct loom_error *err);

/* The files. Reads fill *p (fini a spec or pid): 1, 0 when there is no
 * such file, -1 with err for a bad one. Writes are whole. */
void local_spec_fini(struct local_spec *s); /* NULL-safe */
json_t *local_spec_json(const struct local_spec *s); /* new, or NULL */
int local_spec_from_json(json_t *o, const char *what, struct local_spec *s,
                         struct loom_error *err);
int local_spec_read(const char *dir, struct local_spec *s,
                    struct loom_error *err);
void local_pid_fini(struct local_pid *p); /* NULL-safe */
int local_pid_write(int dirfd, const char *dir, const struct local_pid *p,
                    struct loom_error *err);
/* JOBDIR/run/pid.json */
int local_pid_read(const char *jobdir, struct local_pid *p,
                   struct loom_error *err);
int local_exit_write(int dirfd, const char *dir, const struct local_exit *e,
                     struct loom_error *err);
/* JOBDIR/exit.json, else JOBDIR/run/exit.json */
int local_exit_read(const char *jobdir, struct local_exit *e,
                    struct loom_error *err);

/* State letter (R, S, T, Z, ...) and start time of a process: 0, or -1
 * when there is no such process. */
int local_proc_stat(pid_t pid, char *state, unsigned long long *start);
/* /proc/sys/kernel/random/boot_id, or "" when unknown. Borrowed. */
const char *local_boot_id(void);

#endif
