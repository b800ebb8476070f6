/* local_job.c - one local job: its liveness, control, and its start. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/runas_call.h"

#define SIGNAL_TIMEOUT_S 10.0

const char *const local_state_names[] = {"running", "suspended", "completed",
                                         "failed", "cancelled"};

static int file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;

    return local_path(path, sizeof(path), dir, name, NULL) == 0 &&
           stat(path, &st) == 0;
}

/* ---- processes ---------------------------------------------------------- */

static int this_boot(const struct local_pid *p)
{
    return strcmp(p->boot_id, local_boot_id()) == 0;
}

/* Is the job's supervisor alive? It holds the lock on spec.json for its
 * whole life, and nothing else can: the descriptor came from loomd and
 * never reaches the job. (run/pid.json cannot say so: a job that runs in
 * its run directory could rewrite it.) */
static int sup_alive(const struct local_job *j)
{
    return local_job_locked(j->dir) == 1;
}

/* Is the process group pgid still the job's? (Same boot, and its id not
 * now led by another process: a group whose leader has gone cannot have
 * been reused while any member lives.) */
static int group_ours(const struct local_pid *p, pid_t pgid,
                      unsigned long long start)
{
    unsigned long long now;
    char state;

    return pgid > 1 && this_boot(p) &&
           !(local_proc_stat(pgid, &state, &now) == 0 && now != start);
}

/* sig to process group pgid as the job's account (loomd's account may not
 * signal it itself). */
static int runas_signal(const struct local_job *j, int sig, pid_t pgid,
                        struct loom_error *err)
{
    char s[16], g[16];
    const char *args[] = {"signal", j->spec.account, s, "-g", g, NULL};
    struct proc_result r;

    snprintf(s, sizeof(s), "%d", sig);
    snprintf(g, sizeof(g), "%d", (int)pgid);
    if (runas_call(j->ctx->runas, args, 0, SIGNAL_TIMEOUT_S, 4096, &r,
                   err) < 0)
        return -1;
    proc_result_fini(&r);
    return 0;
}

int local_job_locked(const char *dir)
{
    char path[PATH_MAX];
    int fd, locked;

    if (local_path(path, sizeof(path), dir, LOOM_LF_SPEC, NULL) < 0 ||
        (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    locked = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    close(fd); /* and with it the lock, when we got it */
    return locked;
}

/* ---- the job ------------------------------------------------------------ */

struct local_job *local_job_new(const char *dir, const struct local_ctx *ctx)
{
    struct local_job *j = calloc(1, sizeof(*j));

    if (!j || !(j->dir = strdup(dir))) {
        free(j);
        return NULL;
    }
    j->ctx = ctx;
    j->reported = -1;
    return j;
}

void local_job_destroy(struct local_job *j)
{
    if (!j)
        return;
    local_spec_fini(&j->spec);
    local_pid_fini(&j->pid);
    free(j->dir);
    free(j);
}

int local_job_active(const struct local_job *j)
{
    return j->state == LOOM_LOCAL_RUNNING || j->state == LOOM_LOCAL_SUSPENDED;
}

static enum local_state exit_state(const struct local_exit *e)
{
    if (strcmp(e->reason, "cancelled") == 0)
        return LOOM_LOCAL_CANCELLED;
    if (e->has_exit_code && e->exit_code == 0 && !e->reason[0])
        return LOOM_LOCAL_COMPLETED;
    return LOOM_LOCAL_FAILED;
}

int local_job_load(const char *dir, const struct local_ctx *ctx,
                   struct local_job **out, struct loom_error *err)
{
    struct local_job *j = local_job_new(dir, ctx);
    int r;

    *out = NULL;
    if (!j)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    r = local_spec_read(dir, &j->spec, err);
    if (r > 0)
        r = local_pid_read(dir, &j->pid, err);
    j->has_pid = r > 0;
    if (r >= 0 && j->spec.nodes.n)
        r = local_exit_read(dir, &j->exit, err);
    if (r > 0)
        j->state = exit_state(&j->exit);
    else if (r == 0 && (j->has_pid || local_job_locked(dir) == 1))
        j->state = file_exists(dir, LOOM_LF_SUSPENDED) ? LOOM_LOCAL_SUSPENDED
                                                       : LOOM_LOCAL_RUNNING;
    else
        goto out; /* -1, or 0: never started */
    *out = j;
    return 1;
out:
    local_job_destroy(j);
    return r < 0 ? -1 : 0;
}

static int take_exit(struct local_job *j)
{
    struct loom_error err;
    int r = local_exit_read(j->dir, &j->exit, &err);

    if (r < 0)
        log_warn("cluster=%s job=%lld: %s", j->ctx->cluster,
                 (long long)j->spec.loom_id, err.message);
    if (r <= 0)
        return 0;
    j->state = exit_state(&j->exit);
    return 1;
}

/* Kill whatever of the job is left: its cgroup, or its process group. */
static void kill_rest(struct local_job *j)
{
    struct loom_error err;
    int rc = 0;

    if (!j->spec.account)
        return;
    if (!cgroups_unconfined(j->ctx->cg))
        rc = cgroups_job_kill(j->ctx->cg, j->spec.loom_id, j->spec.account,
                              &err);
    else if (j->has_pid && group_ours(&j->pid, j->pid.pgid, j->pid.job_start))
        rc = runas_signal(j, SIGKILL, j->pid.pgid, &err);
    if (rc < 0)
        log_warn("cluster=%s job=%lld: kill what is left: %s",
                 j->ctx->cluster, (long long)j->spec.loom_id, err.message);
}

/* The supervisor is gone: end the job here, saying why. */
static void job_end(struct local_job *j, const char *why)
{
    struct local_exit *e = &j->exit;
    struct loom_error err;

    kill_rest(j);
    memset(e, 0, sizeof(*e));
    if (strcmp(why, "cancelled") != 0 &&
        cgroups_job_oom_kills(j->ctx->cg, j->spec.loom_id) > 0)
        snprintf(e->reason, sizeof(e->reason), "out of memory (memory_mb "
                 "%ld)", j->spec.memory_mb);
    else
        snprintf(e->reason, sizeof(e->reason), "%s", why);
    e->start_time = j->has_pid ? j->pid.start_time : 0;
    e->end_time = time(NULL);
    if (local_exit_write(-1, j->dir, e, &err) < 0)
        log_warn("cluster=%s job=%lld: %s", j->ctx->cluster,
                 (long long)j->spec.loom_id, err.message);
    j->state = exit_state(e);
    log_warn("cluster=%s job=%lld: ended without its supervisor: %s",
             j->ctx->cluster, (long long)j->spec.loom_id, e->reason);
}

void local_job_refresh(struct local_job *j)
{
    struct loom_error err;

    if (!local_job_active(j) || take_exit(j))
        return;
    if (!j->has_pid)
        j->has_pid = local_pid_read(j->dir, &j->pid, &err) > 0;
    if (sup_alive(j))
        return; /* running, or still starting it */
    if (!take_exit(j)) /* it may have ended just now */
        job_end(j, "supervisor lost");
}

/* SIGTERM to the supervisor: to every process of the job's cgroup (it is
 * one of them, whatever pid.json says), or to its process group. */
static int term_supervisor(struct local_job *j, struct loom_error *err)
{
    if (!cgroups_unconfined(j->ctx->cg))
        return cgroups_job_signal(j->ctx->cg, j->spec.loom_id,
                                  j->spec.account, SIGTERM, err);
    if (!j->has_pid)
        return loom_error_set(err, LOOM_ETEMP, "no pid.json");
    return runas_signal(j, SIGTERM, j->pid.sup_pid, err);
}

int local_job_cancel(struct local_job *j, struct loom_error *err)
{
    struct loom_error why;

    if (!local_job_active(j) || take_exit(j))
        return 0;
    if (!j->has_pid)
        j->has_pid = local_pid_read(j->dir, &j->pid, err) > 0;
    if (!j->has_pid && local_job_locked(j->dir) == 1)
        return loom_error_set(err, LOOM_ETEMP, "it is still starting");
    /* a frozen supervisor would not see the TERM */
    if (j->state == LOOM_LOCAL_SUSPENDED &&
        local_job_stop(j, 0, &why) < 0)
        log_warn("cluster=%s job=%lld: cancel: resume: %s", j->ctx->cluster,
                 (long long)j->spec.loom_id, why.message);
    if (sup_alive(j) && term_supervisor(j, &why) == 0) {
        log_info("cluster=%s job=%lld: cancel: SIGTERM to its supervisor",
                 j->ctx->cluster, (long long)j->spec.loom_id);
        return 0;
    }
    if (!take_exit(j))
        job_end(j, "cancelled");
    return 0;
}

int local_job_stop(struct local_job *j, int stop, struct loom_error *err)
{
    char mark[PATH_MAX], dir[PATH_MAX];
    int freezer = cgroups_job_file(j->ctx->cg, j->spec.loom_id, CG_FREEZE, "",
                                   dir, sizeof(dir)) == 0;
    int rc;

    if (local_path(mark, sizeof(mark), j->dir, LOOM_LF_SUSPENDED, err) < 0)
        return -1;
    /* The mark goes first, so that a restart finds a stopped job marked. */
    if (stop && close(open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", mark,
                              strerror(errno));
    if (freezer)
        rc = cgroups_job_freeze(j->ctx->cg, j->spec.loom_id, stop, err);
    else if (!group_ours(&j->pid, j->pid.pgid, j->pid.job_start))
        rc = loom_error_set(err, LOOM_ECONFLICT, "its processes are gone");
    else
        rc = runas_signal(j, stop ? SIGSTOP : SIGCONT, j->pid.pgid, err);
    if (rc < 0) {
        if (stop)
            unlink(mark);
        return -1;
    }
    if (!stop)
        unlink(mark);
    j->state = stop ? LOOM_LOCAL_SUSPENDED : LOOM_LOCAL_RUNNING;
    log_info("cluster=%s job=%lld: %s", j->ctx->cluster,
             (long long)j->spec.loom_id,
             freezer ? (stop ? "frozen" : "thawed")
             : stop ? "SIGSTOP to its group" : "SIGCONT to its group");
    return 0;
}

int local_job_cgroups_remove(const struct local_ctx *ctx, int64_t id,
                             const char *account)
{
    struct loom_error err;

    if (cgroups_job_remove(ctx->cg, id) == 0)
        return 0;
    /* a process outlived its supervisor (one that changed its uid, say) */
    if (account && cgroups_job_kill(ctx->cg, id, account, &err) < 0)
        log_warn("cluster=%s job=%lld: kill what is left in its cgroup: %s",
                 ctx->cluster, (long long)id, err.message);
    return -1;
}
