/* local_supervise.c - loom-supervise: runs one local job, records its end. */
/* SPDX-License-Identifier: MIT */
/*
 * Started by the local adaptor as `loom-supervise JOBDIR` (the protocol is in
 * adaptors/local_job.h). It detaches, runs the job in its own process group,
 * enforces the walltime, turns a SIGTERM into a cancel of the whole group,
 * makes sure nothing of the group survives, writes exit.json and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adaptors/local_job.h"
#include "core/log.h"
#include "core/timeutil.h"

#define DRAIN_S 5.0 /* how long to wait for a killed group to be gone */
#define DEFAULT_PATH "PATH=/usr/local/bin:/usr/bin:/bin"

extern char **environ;

struct sup {
    const char *dir;
    struct local_spec spec;
    struct local_pid pid;
    struct strv argv, env; /* what the job execs with */
    pid_t job;             /* the group leader; also the group id */
    int exec_fd;           /* read end: the errno of a failed exec, or EOF
                              once the job execs (the write end is
                              close-on-exec); -1 when none */
    const char *reason;    /* "walltime exceeded", "cancelled", or NULL */
    int stopping;          /* SIGTERM sent to the group */
    double kill_at;        /* when SIGKILL follows it; 0 once sent */
};

static void ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The one line the adaptor waits for; a vanished reader is no matter. */
static void ready(const char *fmt, ...)
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

/* Keep 0-4, close whatever else loomd left open to us. */
static void close_others(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    if (close_range(LOOM_LOCAL_LOCK_FD + 1, ~0U, 0) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);

    if (max <= 0 || max > 65536)
        max = 65536;
    for (int fd = LOOM_LOCAL_LOCK_FD + 1; fd < max; fd++)
        close(fd);
}

static int open_out(const char *dir, const char *name)
{
    char path[4096];

    if (local_path(path, sizeof(path), dir, name, NULL) < 0)
        return -1;
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
}

/* Variables the job gets from us, whatever the request says. */
static int is_ours(const char *var)
{
    static const char *const ours[] = {"LOOM_JOB_ID=", "LOOM_CLUSTER=",
                                       "LOOM_NODES=", "LOOM_NODE="};

    for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
        if (strncmp(var, ours[i], strlen(ours[i])) == 0)
            return 1;
    return 0;
}

static int push_new(struct strv *v, char *str)
{
    int rc = str ? strv_push(v, str) : -1;

    free(str);
    return rc;
}

/* LOOM_NODES=n1,n2,... */
static char *nodes_var(const struct strv *nodes)
{
    char *s = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&s, &len);

    if (!f)
        return NULL;
    for (size_t i = 0; i < nodes->n; i++)
        fprintf(f, "%s%s", i ? "," : "LOOM_NODES=", nodes->v[i]);
    if (fclose(f) == 0)
        return s;
    free(s);
    return NULL;
}

/* The request's environment, our variables, and a PATH when it has none. */
static int build_env(struct sup *s)
{
    const struct local_spec *sp = &s->spec;
    int has_path = 0;

    for (size_t i = 0; i < sp->env.n; i++) {
        if (is_ours(sp->env.v[i]))
            continue;
        has_path |= strncmp(sp->env.v[i], "PATH=", 5) == 0;
        if (strv_push(&s->env, sp->env.v[i]) < 0)
            return -1;
    }
    if ((!has_path && strv_push(&s->env, DEFAULT_PATH) < 0) ||
        push_new(&s->env, local_strf("LOOM_JOB_ID=%lld",
                                     (long long)sp->loom_id)) < 0 ||
        push_new(&s->env, local_strf("LOOM_CLUSTER=%s", sp->cluster)) < 0 ||
        push_new(&s->env, local_strf("LOOM_NODE=%s", sp->nodes.v[0])) < 0 ||
        push_new(&s->env, nodes_var(&sp->nodes)) < 0)
        return -1;
    return 0;
}

/* The command as given; or the script, by its #! line or by /bin/sh. */
static int build_argv(struct sup *s)
{
    char path[4096], head[2] = "";
    int fd;

    for (size_t i = 0; i < s->spec.command.n; i++)
        if (strv_push(&s->argv, s->spec.command.v[i]) < 0)
            return -1;
    if (s->spec.command.n)
        return 0;
    if (local_path(path, sizeof(path), s->dir, LOOM_LF_SCRIPT, NULL) < 0 ||
        (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if (read(fd, head, 2) != 2)
        head[0] = '\0';
    close(fd);
    if (memcmp(head, "#!", 2) != 0 && strv_push(&s->argv, "/bin/sh") < 0)
        return -1;
    return strv_push(&s->argv, path);
}

/* In the job's process: wait for the go, then become the job; when it
 * cannot, tell the supervisor why through report (close-on-exec). */
static void child_exec(struct sup *s, int go, int out, int errfd, int report)
{
    int null = open("/dev/null", O_RDONLY);
    sigset_t none;
    char c;
    int e;

    setpgid(0, 0);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (null < 0 || dup2(null, 0) < 0 || dup2(out, 1) < 0 ||
        dup2(errfd, 2) < 0 || chdir(s->dir) < 0)
        _exit(127);
    /* No go (the supervisor died before pid.json was written): never run. */
    if (read(go, &c, 1) != 1)
        _exit(127);
    environ = s->env.v;
    execvp(s->argv.v[0], s->argv.v);
    e = errno;
    /* On a failed write the supervisor knows the exit code alone. */
    while (write(report, &e, sizeof(e)) < 0 && errno == EINTR)
        ;
    dprintf(2, "loom-supervise: cannot execute %s: %s\n", s->argv.v[0],
            strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

static int record_pid(struct sup *s, pid_t job)
{
    struct loom_error err;
    char state;

    s->pid.sup_pid = getpid();
    s->pid.pgid = job;
    s->pid.start_time = time(NULL);
    snprintf(s->pid.boot_id, sizeof(s->pid.boot_id), "%s", local_boot_id());
    if (local_proc_stat(getpid(), &state, &s->pid.sup_start) < 0 ||
        local_proc_stat(job, &state, &s->pid.job_start) < 0) {
        ready("error: cannot read /proc for pid %d", (int)job);
        return -1;
    }
    if (local_pid_write(s->dir, &s->pid, &err) < 0) {
        ready("error: %s", err.message);
        return -1;
    }
    return 0;
}

static int start_job(struct sup *s)
{
    int out = open_out(s->dir, LOOM_LF_STDOUT);
    int errfd = open_out(s->dir, LOOM_LF_STDERR);
    int go[2] = {-1, -1}, rep[2] = {-1, -1};
    pid_t pid = -1;

    if (out >= 0 && errfd >= 0 && pipe2(go, O_CLOEXEC) == 0 &&
        pipe2(rep, O_CLOEXEC) == 0)
        pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(rep[0]);
        child_exec(s, go[0], out, errfd, rep[1]);
    }
    if (pid < 0)
        ready("error: cannot start the job in %s: %s", s->dir,
              strerror(errno));
    close(out);
    close(errfd);
    close(go[0]);
    close(rep[1]);
    if (pid < 0) {
        close(go[1]);
        close(rep[0]);
        return -1;
    }
    s->exec_fd = rep[0];
    setpgid(pid, pid); /* also in the child: whichever runs first */
    s->job = pid;
    if (record_pid(s, pid) < 0) {
        close(go[1]); /* the child reads EOF and ends without exec */
        waitpid(pid, NULL, 0);
        return -1;
    }
    if (write(go[1], "g", 1) != 1)
        log_warn("job=%lld: go: %s", (long long)s->spec.loom_id,
                 strerror(errno));
    close(go[1]);
    return 0;
}

static void begin_stop(struct sup *s, const char *reason, double now)
{
    if (s->stopping)
        return;
    s->stopping = 1;
    s->reason = reason;
    s->kill_at = now + LOOM_LOCAL_GRACE_S;
    log_info("job=%lld pgid=%d: %s: SIGTERM to the group",
             (long long)s->spec.loom_id, (int)s->job, reason);
    killpg(s->job, SIGTERM);
    killpg(s->job, SIGCONT); /* a stopped job must run to see the TERM */
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
            log_info("job=%lld pgid=%d: grace over: SIGKILL to the group",
                     (long long)s->spec.loom_id, (int)s->job);
            killpg(s->job, SIGKILL);
        }
    }
}

/* Kill what is left of the group and wait (briefly) until it is gone. */
static void drain_group(struct sup *s)
{
    double deadline = time_mono() + DRAIN_S;
    struct timespec pause = {0, 10 * 1000 * 1000};

    while (killpg(s->job, 0) == 0) {
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        if (time_mono() > deadline) {
            log_warn("job=%lld pgid=%d: processes of the group survive "
                     "SIGKILL", (long long)s->spec.loom_id, (int)s->job);
            return;
        }
        nanosleep(&pause, NULL);
    }
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

/* Why the job ended, in the words the job's record shows; "" when it
 * ended well (exit code 0). */
static void end_reason(struct sup *s, const struct local_exit *x, int exec_err,
                       char *out, size_t size)
{
    const char *sig = x->signal ? sigabbrev_np(x->signal) : NULL;

    if (s->reason)
        snprintf(out, size, "%s", s->reason);
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

static int finish(struct sup *s)
{
    struct local_exit e;
    struct loom_error err;
    int status = 0;

    killpg(s->job, SIGKILL);
    while (waitpid(s->job, &status, 0) < 0 && errno == EINTR)
        ;
    drain_group(s);
    memset(&e, 0, sizeof(e));
    e.has_exit_code = 1;
    if (WIFSIGNALED(status)) {
        e.signal = WTERMSIG(status);
        e.exit_code = 128 + e.signal;
    } else {
        e.exit_code = WEXITSTATUS(status);
    }
    end_reason(s, &e, exec_errno(s), e.reason, sizeof(e.reason));
    e.start_time = s->pid.start_time;
    e.end_time = time(NULL);
    if (local_exit_write(s->dir, &e, &err) < 0) {
        log_err("job=%lld: %s", (long long)s->spec.loom_id, err.message);
        return 1;
    }
    log_info("job=%lld: ended exit_code=%d reason=%s",
             (long long)s->spec.loom_id, e.exit_code,
             e.reason[0] ? e.reason : "none");
    return 0;
}

/* The real supervisor, in its own session. */
static int run(struct sup *s)
{
    struct loom_error err;
    sigset_t set;
    int r;

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
    close_others();
    if (chdir(s->dir) < 0)
        log_warn("chdir %s: %s", s->dir, strerror(errno));
    fcntl(LOOM_LOCAL_READY_FD, F_SETFD, FD_CLOEXEC);
    fcntl(LOOM_LOCAL_LOCK_FD, F_SETFD, FD_CLOEXEC);
    r = local_spec_read(s->dir, &s->spec, &err);
    if (r <= 0) {
        ready("error: %s", r == 0 ? "no " LOOM_LF_SPEC : err.message);
        return 1;
    }
    if (build_argv(s) < 0 || build_env(s) < 0) {
        ready("error: job %lld: cannot build its argv and environment: %s",
              (long long)s->spec.loom_id, strerror(errno));
        return 1;
    }
    if (start_job(s) < 0)
        return 1;
    log_info("job=%lld: started pgid=%d", (long long)s->spec.loom_id,
             (int)s->job);
    ready("ok");
    supervise(s, &set);
    return finish(s);
}

int main(int argc, char **argv)
{
    struct sup s;
    pid_t pid;
    int rc;

    if (argc != 2 || argv[1][0] != '/') {
        fprintf(stderr, "usage: loom-supervise /ABSOLUTE/JOB/DIR "
                        "(run by loomd's local adaptor)\n");
        return 2;
    }
    log_thread_name("supervise");
    memset(&s, 0, sizeof(s));
    s.dir = argv[1];
    s.exec_fd = -1;
    pid = fork();
    if (pid < 0) {
        ready("error: fork: %s", strerror(errno));
        return 1;
    }
    if (pid > 0)
        _exit(0); /* the adaptor reaps us; the supervisor is init's child */
    if (setsid() < 0) {
        ready("error: setsid: %s", strerror(errno));
        return 1;
    }
    rc = run(&s);
    local_spec_fini(&s.spec);
    strv_fini(&s.argv);
    strv_fini(&s.env);
    return rc;
}
