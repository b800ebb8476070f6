/* proc.c - posix_spawn a child with pipes, deadlines and output caps. */
/* SPDX-License-Identifier: MIT */
#include "core/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/timeutil.h"

#define KILL_GRACE_S 1.0
#define GONE_WAIT_S 0.25 /* how long a killed group's members may take */

void proc_result_fini(struct proc_result *r)
{
    if (!r)
        return;
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

struct sink {
    char *buf;
    size_t len, cap, max;
};

/* Read what is there; 0 at EOF, 1 to go on, 2 when over the cap. */
static int drain(int fd, struct sink *s)
{
    char tmp[16384];
    ssize_t n = read(fd, tmp, sizeof(tmp));

    if (n < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (n == 0)
        return 0;
    if (s->len + (size_t)n > s->max)
        return 2;
    if (s->len + (size_t)n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16384;
        char *b;
        while (cap < s->len + (size_t)n + 1)
            cap *= 2;
        b = realloc(s->buf, cap);
        if (!b)
            return 2;
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, tmp, (size_t)n);
    s->len += (size_t)n;
    s->buf[s->len] = '\0';
    return 1;
}

static int spawn(const struct proc_spec *sp, int in[2], int out[2],
                 int errp[2], pid_t *pid, struct loom_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    int rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
    if (sp->fd3 > 0)
        posix_spawn_file_actions_adddup2(&fa, sp->fd3, 3);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    /* Nothing else of loomd's: a pack passes what it inherits on to the
     * CMS commands it runs as an account (loom-runas run). */
    posix_spawn_file_actions_addclosefrom_np(&fa, sp->fd3 > 0 ? 4 : 3);
#endif
    if (sp->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, sp->cwd);
    /* Its own process group; default signal dispositions and no blocked
     * signals (loomd's threads block the ones the runtime thread takes). */
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawn(pid, sp->path, &fa, &at, sp->argv, sp->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot run %s: %s",
                              sp->path, strerror(rc));
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Feed stdin, collect stdout/stderr until both close or a limit hits. */
static void pump(const struct proc_spec *sp, pid_t pid, int in, int out,
                 int errfd, struct proc_result *r, struct sink *so,
                 struct sink *se)
{
    double t0 = time_mono(), deadline = t0 + sp->timeout_s, kill_at = 0;
    size_t written = 0;

    while (out >= 0 || errfd >= 0) {
        struct pollfd p[3];
        int n = 0, ms, rc;
        double now = time_mono();
        if (!kill_at && now >= deadline) {
            r->timed_out = 1;
            killpg(pid, SIGTERM);
            kill_at = now + KILL_GRACE_S;
        }
        if (kill_at && now >= kill_at) {
            killpg(pid, SIGKILL);
            kill_at = now + 3600; /* once */
        }
        if (in >= 0 && written == sp->input_len)
            close_fd(&in);
        if (in >= 0)
            p[n++] = (struct pollfd){in, POLLOUT, 0};
        if (out >= 0)
            p[n++] = (struct pollfd){out, POLLIN, 0};
        if (errfd >= 0)
            p[n++] = (struct pollfd){errfd, POLLIN, 0};
        ms = (int)(((kill_at ? kill_at : deadline) - now) * 1000) + 1;
        rc = poll(p, (nfds_t)n, ms < 1 ? 1 : ms);
        if (rc < 0 && errno != EINTR)
            break;
        for (int i = 0; rc > 0 && i < n; i++) {
            if (!p[i].revents)
                continue;
            if (p[i].fd == in) {
                ssize_t w = write(in, sp->input + written,
                                  sp->input_len - written);
                if (w > 0)
                    written += (size_t)w;
                else if (w < 0 && errno != EAGAIN && errno != EINTR)
                    close_fd(&in); /* it does not read its input */
            } else {
                int *fd = p[i].fd == out ? &out : &errfd;
                int d = drain(*fd, p[i].fd == out ? so : se);
                if (d == 2 && !r->too_much) {
                    r->too_much = 1;
                    killpg(pid, SIGKILL);
                }
                if (d != 1)
                    close_fd(fd);
            }
        }
    }
    close_fd(&in);
    close_fd(&out);
    close_fd(&errfd);
}

/* Wait for the child, within the deadline (it may have closed its
 * outputs and gone on); past it, kill the group. */
static void reap(pid_t pid, double deadline, struct proc_result *r, int *st)
{
    struct timespec tick = {0, 50 * 1000}; /* 50 us, doubling to 5 ms: a
                                              child that closed its outputs
                                              usually exits right away */
    pid_t got;

    while ((got = waitpid(pid, st, WNOHANG)) == 0) {
        if (time_mono() >= deadline) {
            r->timed_out = 1;
            killpg(pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, st, 0) < 0 && errno == EINTR)
                ;
            return;
        }
        nanosleep(&tick, NULL);
        if (tick.tv_nsec < 5 * 1000 * 1000)
            tick.tv_nsec *= 2;
    }
}

/* Kill whatever the run left behind in its group, and give it a moment to
 * be gone, so that the next run of the same op never overlaps it. Bounded:
 * an orphan whose new parent never reaps it stays in the group as a
 * zombie. */
static void kill_group(pid_t pgid)
{
    struct timespec tick = {0, 2 * 1000 * 1000};
    double until = time_mono() + GONE_WAIT_S;

    if (killpg(pgid, SIGKILL) < 0)
        return; /* nothing left: the usual case */
    while (killpg(pgid, 0) == 0 && time_mono() < until)
        nanosleep(&tick, NULL);
}

static pthread_once_t sigpipe_once = PTHREAD_ONCE_INIT;

/* A child that does not read its input must not end the caller: a write to
 * its closed pipe fails with EPIPE instead. */
static void ignore_sigpipe(void)
{
    signal(SIGPIPE, SIG_IGN);
}

int proc_run(const struct proc_spec *sp, struct proc_result *r,
             struct loom_error *err)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, errp[2] = {-1, -1}, st = 0;
    struct sink so = {.max = sp->max_out}, se = {.max = sp->max_err};
    double t0 = time_mono();
    pid_t pid;

    pthread_once(&sigpipe_once, ignore_sigpipe);
    memset(r, 0, sizeof(*r));
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
        pipe2(errp, O_CLOEXEC) < 0) {
        loom_error_set(err, LOOM_EINTERNAL, "pipe: %s", strerror(errno));
        goto error;
    }
    if (spawn(sp, in, out, errp, &pid, err) < 0)
        goto error;
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&errp[1]);
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    pump(sp, pid, in[1], out[0], errp[0], r, &so, &se);
    reap(pid, t0 + sp->timeout_s, r, &st);
    kill_group(pid);
    r->exited = WIFEXITED(st);
    r->exit_code = r->exited ? WEXITSTATUS(st) : -1;
    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->out = so.buf ? so.buf : strdup("");
    r->err = se.buf ? se.buf : strdup("");
    r->out_len = so.len;
    r->err_len = se.len;
    r->elapsed_s = time_mono() - t0;
    return 0;
error:
    for (int i = 0; i < 2; i++) {
        close_fd(&in[i]);
        close_fd(&out[i]);
        close_fd(&errp[i]);
    }
    free(so.buf);
    free(se.buf);
    return -1;
}
