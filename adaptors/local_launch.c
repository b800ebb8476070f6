/* local_launch.c - loom-supervise: a job's working directory, output
 * files, environment and argv, and its fork and exec (as the account). */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_supervise.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

#define DEFAULT_PATH "PATH=/usr/local/bin:/usr/bin:/bin"
#define JOB_UMASK 022

extern char **environ;

/* ---- environment and argv ----------------------------------------------- */

/* Variables the job gets from us, whatever the request says: Loom's, and
 * who it runs as. */
static int is_ours(const char *var)
{
    static const char *const ours[] = {
        "LOOM_JOB_ID=", "LOOM_CLUSTER=", "LOOM_NODES=", "LOOM_NODE=",
        "HOME=",        "USER=",         "LOGNAME=",    "SHELL="};

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

/* HOME, USER, LOGNAME and SHELL of the account (loom-runas set them). */
static int push_identity(struct strv *env)
{
    static const char *const names[] = {"HOME", "USER", "LOGNAME", "SHELL"};
    struct passwd *pw = getpwuid(getuid());
    const char *fallback[] = {pw ? pw->pw_dir : "/", pw ? pw->pw_name : "",
                              pw ? pw->pw_name : "",
                              pw && pw->pw_shell ? pw->pw_shell : "/bin/sh"};

    for (int i = 0; i < 4; i++) {
        const char *v = getenv(names[i]);
        if (push_new(env, local_strf("%s=%s", names[i],
                                     v ? v : fallback[i])) < 0)
            return -1;
    }
    return 0;
}

/* The request's environment, the account's identity, our variables, and a
 * PATH when the request has none. */
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
        push_identity(&s->env) < 0 ||
        push_new(&s->env, local_strf("LOOM_JOB_ID=%lld",
                                     (long long)sp->loom_id)) < 0 ||
        push_new(&s->env, local_strf("LOOM_CLUSTER=%s", sp->cluster)) < 0 ||
        push_new(&s->env, local_strf("LOOM_NODE=%s", sp->nodes.v[0])) < 0 ||
        push_new(&s->env, nodes_var(&sp->nodes)) < 0)
        return -1;
    return 0;
}

/* The command as given; or the script, from memory (the supervisor cannot
 * read loomd's files, and the job could not either): by its #! line, else
 * by /bin/sh. Its interpreter reads it from /dev/fd/N. */
static int build_argv(struct sup *s)
{
    const char *text = s->spec.script;
    size_t len = text ? strlen(text) : 0;
    char dev[32];

    for (size_t i = 0; i < s->spec.command.n; i++)
        if (strv_push(&s->argv, s->spec.command.v[i]) < 0)
            return -1;
    if (s->spec.command.n)
        return 0;
    if (!text) {
        errno = EINVAL;
        return -1;
    }
    s->script_fd = memfd_create("loom-job-script", 0);
    if (s->script_fd < 0)
        return -1;
    for (size_t off = 0; off < len;) {
        ssize_t n = write(s->script_fd, text + off, len - off);
        if (n < 0 && errno != EINTR)
            return -1;
        off += n > 0 ? (size_t)n : 0;
    }
    if (lseek(s->script_fd, 0, SEEK_SET) < 0)
        return -1;
    snprintf(dev, sizeof(dev), "/dev/fd/%d", s->script_fd);
    s->exec_script = strncmp(text, "#!", 2) == 0;
    if (!s->exec_script && strv_push(&s->argv, "/bin/sh") < 0)
        return -1;
    return strv_push(&s->argv, dev);
}

/* ---- working directory and output files --------------------------------- */

static void fail(struct sup *s, const char *what, const char *path, int e)
{
    snprintf(s->fail, sizeof(s->fail), "%s %s: %s", what, path, strerror(e));
}

/* Into the working directory: the one asked for, else the account's home,
 * else (a home it cannot enter, as nobody's /nonexistent) the run
 * directory. */
static int enter_workdir(struct sup *s)
{
    const char *home = getenv("HOME");

    if (s->spec.workdir) {
        if (chdir(s->spec.workdir) < 0) {
            fail(s, "cannot enter", s->spec.workdir, errno);
            return -1;
        }
        s->pid.workdir = strdup(s->spec.workdir);
    } else if (home && *home && chdir(home) == 0) {
        s->pid.workdir = strdup(home);
    } else {
        log_info("job=%lld: home %s cannot be entered: it runs in its run "
                 "directory", (long long)s->spec.loom_id, home ? home : "-");
        if (fchdir(s->run_fd) < 0) {
            fail(s, "cannot enter", s->rundir, errno);
            return -1;
        }
        s->pid.workdir = strdup(s->rundir);
    }
    return s->pid.workdir ? 0 : -1;
}

/* name relative to the working directory, as an absolute path. */
static char *absolute(const struct sup *s, const char *name)
{
    const char *dir = s->pid.workdir;
    size_t n = strlen(dir);

    if (name[0] == '/')
        return strdup(name);
    return local_strf("%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/",
                      name);
}

/* Created as the account, readable by it alone; truncated, as Slurm does.
 * name is opened from the working directory (the run directory cannot be
 * reached by its path); path is what messages show. */
static int open_output(struct sup *s, const char *what, const char *name,
                       const char *path)
{
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC,
                  0600);

    if (fd < 0)
        fail(s, what, path, errno);
    return fd;
}

static int open_outputs(struct sup *s)
{
    if (!s->spec.output) { /* loomd always names it */
        errno = EINVAL;
        return -1;
    }
    s->pid.stdout_path = absolute(s, s->spec.output);
    s->pid.stderr_path = absolute(s, s->spec.error ? s->spec.error
                                                   : s->spec.output);
    if (!s->pid.stdout_path || !s->pid.stderr_path)
        return -1;
    s->out_fd = open_output(s, "cannot open output file", s->spec.output,
                            s->pid.stdout_path);
    if (s->out_fd < 0)
        return 0;
    if (!strcmp(s->pid.stdout_path, s->pid.stderr_path)) {
        s->err_fd = s->out_fd; /* one file, as Slurm's default */
        return 0;
    }
    s->err_fd = open_output(s, "cannot open error file", s->spec.error,
                            s->pid.stderr_path);
    return 0;
}

int launch_prepare(struct sup *s)
{
    if (build_argv(s) < 0 || build_env(s) < 0)
        return -1;
    umask(JOB_UMASK);
    if (enter_workdir(s) == 0 && open_outputs(s) < 0)
        return -1;
    umask(027); /* pid.json and exit.json: loomd's group reads them */
    if (!s->pid.workdir && !s->fail[0])
        return -1; /* out of memory */
    return 0;
}

/* ---- fork and exec --------------------------------------------------- */

/* In the job's process: wait for the go, then become the job; when it
 * cannot, tell the supervisor why through report (close-on-exec). */
static void child_exec(struct sup *s, int go, int report)
{
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    sigset_t none;
    char c;
    int e;

    setpgid(0, 0);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    umask(JOB_UMASK);
    if (null < 0 || dup2(null, 0) < 0 || dup2(s->out_fd, 1) < 0 ||
        dup2(s->err_fd, 2) < 0)
        _exit(127);
    /* No go (the supervisor died before pid.json was written): never run. */
    if (read(go, &c, 1) != 1)
        _exit(127);
    environ = s->env.v;
    if (s->exec_script)
        fexecve(s->script_fd, s->argv.v, s->env.v);
    else
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
        (job && local_proc_stat(job, &state, &s->pid.job_start) < 0)) {
        sup_ready("error: cannot read /proc for pid %d", (int)job);
        return -1;
    }
    if (local_pid_write(s->run_fd, s->rundir, &s->pid, &err) < 0) {
        sup_ready("error: %s", err.message);
        return -1;
    }
    return 0;
}

int launch_start(struct sup *s)
{
    int go[2] = {-1, -1}, rep[2] = {-1, -1};
    pid_t pid = -1;

    if (s->fail[0])
        return record_pid(s, 0);
    if (pipe2(go, O_CLOEXEC) == 0 && pipe2(rep, O_CLOEXEC) == 0)
        pid = fork();
    if (pid == 0) {
        close(go[1]);
        close(rep[0]);
        child_exec(s, go[0], rep[1]);
    }
    if (pid < 0)
        sup_ready("error: cannot start job %lld: %s",
                  (long long)s->spec.loom_id, strerror(errno));
    close(go[0]);
    close(rep[1]);
    if (pid < 0) {
        close(go[1]);
        close(rep[0]);
        return -1;
    }
    s->exec_fd = rep[0];
    close(s->out_fd); /* the job has them now */
    if (s->err_fd != s->out_fd)
        close(s->err_fd);
    s->out_fd = s->err_fd = -1;
    setpgid(pid, pid); /* also in the child: whichever runs first */
    s->job = pid;
    if (chdir("/") < 0) /* the supervisor holds no directory of the job */
        log_warn("chdir /: %s", strerror(errno));
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
