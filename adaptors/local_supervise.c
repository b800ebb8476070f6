/* local_supervise.c - loom-supervise: runs one local job, records its end. */
/* SPDX-License-Identifier: MIT */
/*
 * Started by loom-runas as `loom-supervise --run RUNDIR`, as the job's
 * account, in the job's cgroups (the protocol is in adaptors/local_job.h).
 * It detaches, runs the job in its own process group, enforces the
 * walltime, turns a SIGTERM into a cancel of everything in the job's
 * cgroup (or, unconfined, its process group), makes sure nothing of it
 * survives, writes run/exit.json and exits.
 */
#include "adaptors/local_supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptors/runas.h"
#include "core/log.h"
#include "core/timeutil.h"

#define DRAIN_S 5.0 /* how long to wait for a killed job to be gone */

void sup_ready(const char *fmt, ...)
{
    char line[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (strcmp(line, "ok") != 0)
        log_err("start failed: %s", line);
    dprintf(LOOM_LOCAL_READY_FD, "%s\n", line);
    close(LOOM_LOCAL_READY_FD);
}

/* sig to every process of the job: each one in its cgroup but us, or
 * (unconfined) its process group. The number signalled. */
static int signal_job(struct sup *s, int sig)
{
    char line[32];
    FILE *f;
    int n = 0;

    if (!s->spec.cgroup_procs)
        return s->job > 0 && killpg(s->job, sig) == 0 ? 1 : 0;
    f = fopen(s->spec.cgroup_procs, "re");
    if (!f) {
        log_warn("job=%lld: %s: %s", (long long)s->spec.loom_id,
                 s->spec.cgroup_procs, strerror(errno));
        return s->job > 0 && killpg(s->job, sig) == 0 ? 1 : 0;
    }
    while (fgets(line, sizeof(line), f)) {
        long p = strtol(line, NULL, 10);
        if (p > 1 && p != (long)getpid() && kill((pid_t)p, sig) == 0)
            n++;
    }
    fclose(f);
    return n;
}

static void begin_stop(struct sup *s, const char *reason, double now)
{
    if (s->stopping)
        return;
    s->stopping = 1;
    s->reason = reason;
    s->kill_at = now + LOOM_LOCAL_GRACE_S;
    log_info("job=%lld pgid=%d: %s: SIGTERM to the job",
             (long long)s->spec.loom_id, (int)s->job, reason);
    signal_job(s, SIGTERM);
    signal_job(s, SIGCONT); /* a stopped job must run to see the TERM */
}

/* 1 once the leader has ended (not reaped yet, so its group id stays ours);
 * reaps orphans that the subreaper adopted meanwhile. */
static int leader_ended(struct sup *s)
{
    for (;;) {
        siginfo_t si;

        memset(&si, 0, sizeof(si));
        if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
            return errno != EINTR;
        if (si.si_pid == 0)
            return 0;
        if (si.si_pid == s->job)
            return 1;
        waitpid(si.si_pid, NULL, 0);
    }
}

static void supervise(struct sup *s, const sigset_t *set)
{
    double start = time_mono();
    double wall_at = s->spec.walltime_s > 0 ? start + s->spec.walltime_s : 0;

    while (!leader_ended(s)) {
        double now = time_mono(), wait = 1.0;
        struct timespec ts;
        int sig;

        if (wall_at && wall_at - now < wait)
            wait = wall_at - now;
        if (s->kill_at && s->kill_at - now < wait)
            wait = s->kill_at - now;
        wait = wait > 0 ? wait : 0;
        ts.tv_sec = (time_t)wait;
        ts.tv_nsec = (long)((wait - (double)ts.tv_sec) * 1e9);
        sig = sigtimedwait(set, NULL, &ts);
        now = time_mono();
        if (sig == SIGTERM || sig == SIGINT)
            begin_stop(s, "cancelled", now);
        if (wall_at && now >= wall_at) {
            wall_at = 0;
            begin_stop(s, "walltime exceeded", now);
        }
        if (s->kill_at && now >= s->kill_at) {
            s->kill_at = 0;
            log_info("job=%lld: grace over: SIGKILL to the job",
                     (long long)s->spec.loom_id);
            signal_job(s, SIGKILL);
        }
    }
    /* A cancel signals every process of the job's cgroup, us too: the job
     * may end of that TERM before we took ours (thawed together after a
     * suspend, say). It is still a cancel. */
    if (!s->stopping) {
        struct timespec zero = {0, 0};
        int sig;

        while ((sig = sigtimedwait(set, NULL, &zero)) > 0)
            if (sig == SIGTERM || sig == SIGINT)
                begin_stop(s, "cancelled", time_mono());
    }
}

/* Kill what is left of the job and wait (briefly) until it is gone: in a
 * cgroup, again until none is left (what is killed cannot fork again). */
static void drain(struct sup *s)
{
    double deadline = time_mono() + DRAIN_S;
    struct timespec pause = {0, 10 * 1000 * 1000};

    while (signal_job(s, SIGKILL) > 0) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (time_mono() > deadline) {
            log_warn("job=%lld: processes of the job survive SIGKILL",
                     (long long)s->spec.loom_id);
            return;
        }
        nanosleep(&pause, NULL);
    }
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
}

/* The errno with which the job's exec failed, or 0 when it ran. Called
 * once the leader has ended: the pipe holds the errno or is at its end. */
static int exec_errno(struct sup *s)
{
    int e = 0;
    ssize_t n;

    if (s->exec_fd < 0)
        return 0;
    while ((n = read(s->exec_fd, &e, sizeof(e))) < 0 && errno == EINTR)
        ;
    close(s->exec_fd);
    s->exec_fd = -1;
    return n == (ssize_t)sizeof(e) ? e : 0;
}

/* The kernel's out-of-memory kills in the job's memory cgroup. */
static long oom_kills(const struct sup *s)
{
    char text[1024], *p;
    ssize_t n = -1;
    int fd;

    if (!s->spec.oom_file)
        return 0;
    fd = open(s->spec.oom_file, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        n = read(fd, text, sizeof(text) - 1);
        close(fd);
    }
    if (n <= 0)
        return 0;
    text[n] = '\0';
    p = strstr(text, "oom_kill ");
    return p ? strtol(p + 9, NULL, 10) : 0;
}

/* What the job's processes used: every child the supervisor reaped (the
 * leader, with the descendants it waited for, and the orphans it took as
 * subreaper), once all are reaped. */
static void usage_of(struct cl_usage *u)
{
    struct rusage ru;

    if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
        return;
    u->known = 1;
    u->user_cpu_ms = (long long)ru.ru_utime.tv_sec * 1000 +
                     ru.ru_utime.tv_usec / 1000;
    u->system_cpu_ms = (long long)ru.ru_stime.tv_sec * 1000 +
                       ru.ru_stime.tv_usec / 1000;
    u->max_rss_kb = ru.ru_maxrss; /* kilobytes on Linux */
}

/* Why the job ended, in the words the job's record shows; "" when it
 * ended well (exit code 0). */
static void end_reason(struct sup *s, const struct local_exit *x, int exec_err,
                       char *out, size_t size)
{
    const char *sig = x->signal ? sigabbrev_np(x->signal) : NULL;

    if (s->reason)
        snprintf(out, size, "%s", s->reason);
    else if (oom_kills(s) > 0)
        snprintf(out, size, "out of memory (memory_mb %ld)",
                 s->spec.memory_mb);
    else if (exec_err)
        snprintf(out, size, "cannot execute %s: %s", s->argv.v[0],
                 strerror(exec_err));
    else if (x->signal && sig)
        snprintf(out, size, "killed by signal %d (%s)", x->signal, sig);
    else if (x->signal)
        snprintf(out, size, "killed by signal %d", x->signal);
    else if (x->exit_code)
        snprintf(out, size, "exited with code %d", x->exit_code);
    else
        out[0] = '\0';
}

/* Write run/exit.json. On a full file system it tries again every second
 * until there is space: the job has ended, but its end is known only here,
 * and loomd, which sees this supervisor alive, waits for it (a supervisor
 * that gave up would leave the job "supervisor lost", its exit code gone). */
static int exit_record(struct sup *s, const struct local_exit *e,
                       struct loom_error *err)
{
    struct timespec pause = {1, 0};
    int waited = 0;

    while (local_exit_write(s->run_fd, s->rundir, e, err) < 0) {
        if (err->kind != LOOM_ETEMP)
            return -1;
        if (!waited++)
            log_warn("job=%lld: ended; waiting for space to record it: %s",
                     (long long)s->spec.loom_id, err->message);
        nanosleep(&pause, NULL);
    }
    if (waited)
        log_info("job=%lld: its end recorded after %d s without space",
                 (long long)s->spec.loom_id, waited);
    return 0;
}

static int finish(struct sup *s)
{
    struct local_exit e;
    struct loom_error err;
    int status = 0;

    memset(&e, 0, sizeof(e));
    if (s->job > 0) {
        /* the group before the leader is reaped: its id cannot be reused */
        signal_job(s, SIGKILL);
        while (waitpid(s->job, &status, 0) < 0 && errno == EINTR)
            ;
        drain(s);
        usage_of(&e.usage);
        e.has_exit_code = 1;
        if (WIFSIGNALED(status)) {
            e.signal = WTERMSIG(status);
            e.exit_code = 128 + e.signal;
        } else {
            e.exit_code = WEXITSTATUS(status);
        }
        end_reason(s, &e, exec_errno(s), e.reason, sizeof(e.reason));
    } else {
        snprintf(e.reason, sizeof(e.reason), "%s", s->fail);
    }
    e.start_time = s->pid.start_time;
    e.end_time = time(NULL);
    if (exit_record(s, &e, &err) < 0) {
        log_err("job=%lld: %s", (long long)s->spec.loom_id, err.message);
        return 1;
    }
    log_info("job=%lld: ended exit_code=%d reason=%s",
             (long long)s->spec.loom_id, e.exit_code,
             e.reason[0] ? e.reason : "none");
    return 0;
}

/* spec.json, from the descriptor loomd locked (its directory is loomd's,
 * closed to the account). */
static int read_spec(struct sup *s)
{
    struct loom_error err;
    json_error_t je;
    json_t *o;
    int r;

    if (lseek(LOOM_LOCAL_LOCK_FD, 0, SEEK_SET) < 0 ||
        !(o = json_loadfd(LOOM_LOCAL_LOCK_FD, JSON_REJECT_DUPLICATES, &je))) {
        sup_ready("error: %s: %s", LOOM_LF_SPEC,
                  errno ? strerror(errno) : je.text);
        return -1;
    }
    r = local_spec_from_json(o, LOOM_LF_SPEC, &s->spec, &err);
    json_decref(o);
    if (r < 0)
        sup_ready("error: %s", err.message);
    return r < 0 ? -1 : 0;
}

/* The real supervisor, in its own session. */
static int run(struct sup *s)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigaddset(&set, SIGPIPE);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, NULL);
    /* Orphans of the job are re-parented to us, and so can be reaped and
     * waited for. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    umask(027);
    runas_close_from(LOOM_RUNAS_RUN_FD + 1); /* keep 0-5 */
    if (chdir("/") < 0)
        log_warn("chdir /: %s", strerror(errno));
    fcntl(LOOM_LOCAL_READY_FD, F_SETFD, FD_CLOEXEC);
    fcntl(LOOM_LOCAL_LOCK_FD, F_SETFD, FD_CLOEXEC);
    fcntl(s->run_fd, F_SETFD, FD_CLOEXEC);
    errno = 0;
    if (read_spec(s) < 0)
        return 1;
    if (launch_prepare(s) < 0) {
        sup_ready("error: job %lld: cannot build its argv and environment: "
                  "%s", (long long)s->spec.loom_id, strerror(errno));
        return 1;
    }
    if (launch_start(s) < 0)
        return 1;
    if (s->fail[0])
        log_info("job=%lld: not started: %s", (long long)s->spec.loom_id,
                 s->fail);
    else
        log_info("job=%lld: started pgid=%d as %s in %s",
                 (long long)s->spec.loom_id, (int)s->job,
                 s->spec.account ? s->spec.account : "?", s->pid.workdir);
    if (s->fail[0]) {
        int rc = finish(s);
        sup_ready("ok");
        return rc;
    }
    sup_ready("ok");
    supervise(s, &set);
    return finish(s);
}

int main(int argc, char **argv)
{
    struct sup s;
    pid_t pid;
    int rc;

    if (argc != 3 || strcmp(argv[1], "--run") != 0 || argv[2][0] != '/') {
        fprintf(stderr, "usage: loom-supervise --run /ABSOLUTE/RUN/DIR "
                        "(run by loom-runas for loomd's local adaptor)\n");
        return 2;
    }
    /* First of all, and inherited by the fork: the job runs as our
     * account, and it must not trace us or reach our descriptors (the
     * lock, the run directory) or our environment through /proc. */
    prctl(PR_SET_DUMPABLE, 0);
    log_thread_name("supervise");
    memset(&s, 0, sizeof(s));
    s.rundir = argv[2];
    s.run_fd = LOOM_RUNAS_RUN_FD;
    s.exec_fd = s.script_fd = s.out_fd = s.err_fd = -1;
    pid = fork();
    if (pid < 0) {
        sup_ready("error: fork: %s", strerror(errno));
        return 1;
    }
    if (pid > 0)
        _exit(0); /* the adaptor reaps us; the supervisor is init's child */
    if (setsid() < 0) {
        sup_ready("error: setsid: %s", strerror(errno));
        return 1;
    }
    rc = run(&s);
    local_spec_fini(&s.spec);
    local_pid_fini(&s.pid);
    strv_fini(&s.argv);
    strv_fini(&s.env);
    return rc;
}
