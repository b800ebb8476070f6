/* local_start.c - starting one local job: its directory and spec, its
 * cgroups, and its supervisor through loom-runas. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/outpath.h"
#include "core/runas_call.h"
#include "core/timeutil.h"

#define READY_TIMEOUT_S 10.0

static int strv_copy(struct strv *v, const char *const *src, size_t n)
{
    for (size_t i = 0; src && (n ? i < n : src[i] != NULL); i++)
        if (strv_push(v, src[i]) < 0)
            return -1;
    return 0;
}

/* The spec's output names and cgroup files (all may stay NULL). */
static int spec_paths(struct local_spec *s, const struct start_req *req,
                      const struct local_ctx *ctx)
{
    struct outpath_vars v = {req->loom_id, req->account, req->name,
                             req->array_id,
                             req->array_id ? req->array_task : 0,
                             req->nodes[0]};
    const char *oom = cgroups_oom_file(ctx->cg);
    char path[PATH_MAX];

    s->output = outpath_expand(req->output ? req->output
                                           : LOOM_OUTPUT_DEFAULT, &v);
    if (!s->output || (req->error && !(s->error = outpath_expand(req->error,
                                                                 &v))))
        return -1;
    if (cgroups_job_file(ctx->cg, req->loom_id, CG_PROCS, "cgroup.procs",
                         path, sizeof(path)) == 0 &&
        !(s->cgroup_procs = strdup(path)))
        return -1;
    if (oom && cgroups_job_file(ctx->cg, req->loom_id, CG_OOM, oom, path,
                                sizeof(path)) == 0 &&
        !(s->oom_file = strdup(path)))
        return -1;
    return 0;
}

static int spec_from_req(struct local_spec *s, const struct start_req *req,
                         const struct local_ctx *ctx, struct loom_error *err)
{
    memset(s, 0, sizeof(*s));
    s->loom_id = req->loom_id;
    s->cpus_per_node = req->cpus_per_node > 0 ? req->cpus_per_node : 1;
    s->memory_mb = req->memory_mb;
    s->gpus = req->gpus;
    s->walltime_s = req->walltime_s;
    s->submit_time = time(NULL);
    if (!(s->cluster = strdup(ctx->cluster)) ||
        !(s->account = strdup(req->account)) ||
        (req->name && !(s->name = strdup(req->name))) ||
        (req->owner && !(s->owner = strdup(req->owner))) ||
        (req->script && !(s->script = strdup(req->script))) ||
        (req->workdir && !(s->workdir = strdup(req->workdir))) ||
        strv_copy(&s->command, req->command, 0) < 0 ||
        strv_copy(&s->env, req->env, 0) < 0 ||
        strv_copy(&s->nodes, req->nodes, req->n_nodes) < 0 ||
        spec_paths(s, req, ctx) < 0) {
        local_spec_fini(s);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

/* The job directory, its empty run directory (loom-runas gives it to the
 * account), and spec.json. */
static int job_write(const char *dir, const struct local_spec *s,
                     struct loom_error *err)
{
    char run[PATH_MAX];

    if (local_path(run, sizeof(run), dir, LOOM_LF_RUN, err) < 0)
        return -1;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, local_errno_kind(errno), "mkdir %s: %s",
                              dir, strerror(errno));
    if (mkdir(run, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, local_errno_kind(errno), "mkdir %s: %s",
                              run, strerror(errno));
    return local_json_write_take(-1, dir, LOOM_LF_SPEC, local_spec_json(s),
                                 err);
}

/* Read the supervisor's one line, until EOF or the deadline. */
static int read_ready(int fd, char *buf, size_t size)
{
    double deadline = time_mono() + READY_TIMEOUT_S;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    size_t len = 0;

    for (;;) {
        int left = (int)((deadline - time_mono()) * 1000) + 1;
        int rc = left > 0 ? poll(&pfd, 1, left) : 0;
        ssize_t n;

        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            return -1;
        n = read(fd, buf + len, size - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || (len += (size_t)n) == size - 1)
            break;
    }
    buf[len] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Move fd above the numbers the helper is given (or -1). */
static int fd_high(int fd)
{
    int high = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);

    if (fd >= 0)
        close(fd);
    return high;
}

/* `loom-runas start ACCOUNT DIR/run CGROUP...`, fds as the protocol says. */
static int spawn(const struct local_ctx *ctx, const char *dir,
                 const char *account, const struct strv *cgdirs, int lock,
                 int wfd, pid_t *pid)
{
    char log[PATH_MAX], run[PATH_MAX];
    struct strv argv = {0};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    int rc;

    if (local_path(log, sizeof(log), dir, LOOM_LF_SUPLOG, NULL) < 0 ||
        local_path(run, sizeof(run), dir, LOOM_LF_RUN, NULL) < 0)
        return ENAMETOOLONG;
    if (strv_push(&argv, "loom-runas") < 0 || strv_push(&argv, "start") < 0 ||
        strv_push(&argv, account) < 0 || strv_push(&argv, run) < 0 ||
        strv_copy(&argv, (const char *const *)cgdirs->v, cgdirs->n) < 0) {
        strv_fini(&argv);
        return ENOMEM;
    }
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    /* loomd blocks every signal in every thread: undo that for the child. */
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log,
                                     O_WRONLY | O_CREAT | O_APPEND, 0600);
    posix_spawn_file_actions_adddup2(&fa, wfd, LOOM_LOCAL_READY_FD);
    posix_spawn_file_actions_adddup2(&fa, lock, LOOM_LOCAL_LOCK_FD);
    rc = posix_spawn(pid, ctx->runas, &fa, &at, argv.v, runas_call_env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    strv_fini(&argv);
    return rc;
}

/* Lock spec.json (the lock passes to the supervisor), run the supervisor,
 * reap its first process and wait for its line. */
static int run_supervisor(const struct local_ctx *ctx, const char *dir,
                          const char *account, const struct strv *cgdirs,
                          struct loom_error *err)
{
    int lock = -1, p[2] = {-1, -1}, e = 0, st;
    char path[PATH_MAX], line[512] = "";
    pid_t pid = -1;

    if (local_path(path, sizeof(path), dir, LOOM_LF_SPEC, err) < 0)
        return -1;
    lock = fd_high(open(path, O_RDONLY | O_CLOEXEC));
    if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0 ||
        pipe2(p, O_CLOEXEC) < 0 || (p[0] = fd_high(p[0])) < 0 ||
        (p[1] = fd_high(p[1])) < 0)
        e = errno ? errno : EIO;
    else
        e = spawn(ctx, dir, account, cgdirs, lock, p[1], &pid);
    if (p[1] >= 0)
        close(p[1]);
    if (!e) {
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (read_ready(p[0], line, sizeof(line)) < 0)
            snprintf(line, sizeof(line), "no answer within %.0f s",
                     READY_TIMEOUT_S);
    }
    if (lock >= 0)
        close(lock); /* the supervisor holds its own copy of the lock */
    if (p[0] >= 0)
        close(p[0]);
    if (e == EWOULDBLOCK)
        return loom_error_set(err, LOOM_ECONFLICT, "%s: a supervisor runs "
                              "this job already", dir);
    if (e)
        return loom_error_set(err, LOOM_ETEMP, "run %s: %s", ctx->runas,
                              strerror(e));
    if (!strncmp(line, "error: ", 7)) /* a refusal, or a failure of it */
        return loom_error_set(err, LOOM_EINTERNAL, "%s", line + 7);
    if (strcmp(line, "ok") != 0)
        return loom_error_set(err, LOOM_ETEMP, "loom-supervise: %s",
                              *line ? line : "ended without an answer");
    return 0;
}

/* Remove a directory in which no job ran. */
static void job_remove(const char *dir)
{
    static const char *const names[] = {LOOM_LF_SPEC, LOOM_LF_SUPLOG,
                                        LOOM_LF_EXIT, LOOM_LF_SUSPENDED,
                                        LOOM_LF_RUN};
    char path[PATH_MAX];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (local_path(path, sizeof(path), dir, names[i], NULL) == 0 &&
            unlink(path) < 0 && errno == EISDIR)
            rmdir(path);
    rmdir(dir);
}

static int started(const char *dir)
{
    char path[PATH_MAX];

    return local_path(path, sizeof(path), dir, LOOM_LF_RUN "/" LOOM_LF_PID,
                      NULL) == 0 && access(path, F_OK) == 0;
}

/* Claim dir for a start: create it and hold a lock on it (not on a file
 * in it: spec.json is replaced whole). Two loomd that start the same job
 * (one that lost its lease in the middle of a start, and the one that took
 * over) come one after the other, and the second finds the job started.
 * The descriptor, or -1 with err: LOOM_ETEMP when another holds the claim,
 * LOOM_ECONFLICT when the job started already. */
static int claim(const char *dir, struct loom_error *err)
{
    int fd;

    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, local_errno_kind(errno), "mkdir %s: %s",
                              dir, strerror(errno));
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", dir,
                              strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        if (errno == EWOULDBLOCK)
            return loom_error_set(err, LOOM_ETEMP, "%s: another loomd is "
                                  "starting this job", dir);
        return loom_error_set(err, LOOM_EINTERNAL, "flock %s: %s", dir,
                              strerror(errno));
    }
    if (started(dir) || local_job_locked(dir) == 1) {
        close(fd);
        return loom_error_set(err, LOOM_ECONFLICT, "%s: the job started "
                              "already", dir);
    }
    return fd;
}

struct local_job *local_job_start(const char *dir, const struct local_ctx *ctx,
                                  const struct start_req *req,
                                  struct loom_error *err)
{
    struct local_job *j;
    struct loom_error why;
    struct strv cgdirs = {0};
    struct cg_limits lim = {req->memory_mb,
                            req->cpus_per_node > 0 ? req->cpus_per_node : 1,
                            ctx->pids_max};
    int r, fd = -1;

    if (!(j = local_job_new(dir, ctx))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    if (spec_from_req(&j->spec, req, ctx, err) < 0 ||
        (fd = claim(dir, err)) < 0)
        goto error;
    if (job_write(dir, &j->spec, err) == 0 &&
        cgroups_job_make(ctx->cg, req->loom_id, &lim, &cgdirs, err) == 0 &&
        run_supervisor(ctx, dir, req->account, &cgdirs, err) == 0)
        goto out;
    if (!started(dir) && local_job_locked(dir) != 1) {
        job_remove(dir);
        cgroups_job_remove(ctx->cg, req->loom_id);
        close(fd);
        goto error;
    }
    log_warn("cluster=%s job=%lld: started, but: %s", ctx->cluster,
             (long long)req->loom_id, err->message);
out:
    close(fd); /* the supervisor holds spec.json's lock now */
    r = local_pid_read(dir, &j->pid, &why);
    j->has_pid = r > 0;
    strv_fini(&cgdirs);
    return j;
error:
    strv_fini(&cgdirs);
    local_job_destroy(j);
    return NULL;
}
