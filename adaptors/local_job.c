/* local_job.c - one local job's directory: its files, liveness, control. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/log.h"
#include "core/timeutil.h"

#define MAX_FILE_BYTES (16 << 20) /* a spec with a large environment */
#define READY_TIMEOUT_S 10.0

extern char **environ;

const char *const local_state_names[] = {"running", "suspended", "completed",
                                         "failed", "cancelled"};

/* ---- files -------------------------------------------------------------- */

char *local_strf(const char *fmt, ...)
{
    char *s;
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vasprintf(&s, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

int local_path(char *buf, size_t size, const char *dir, const char *name,
               struct loom_error *err)
{
    int n = snprintf(buf, size, "%s/%s", dir, name);

    if (n < 0 || (size_t)n >= size)
        return loom_error_set(err, LOOM_EINVAL, "path too long: %s/%s", dir,
                              name);
    return 0;
}

static int write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno != EINTR)
            return -1;
        data += w > 0 ? w : 0;
        len -= w > 0 ? (size_t)w : 0;
    }
    return 0;
}

static int write_atomic(const char *dir, const char *name, const char *data,
                        size_t len, mode_t mode, struct loom_error *err)
{
    char path[PATH_MAX], tmp[PATH_MAX + 8];
    int fd, saved;

    if (local_path(path, sizeof(path), dir, name, err) < 0)
        return -1;
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd >= 0 && write_all(fd, data, len) == 0 && fsync(fd) == 0) {
        close(fd);
        fd = -1;
        if (rename(tmp, path) == 0)
            return 0;
    }
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return loom_error_set(err, LOOM_EINTERNAL, "write %s: %s", path,
                          strerror(saved));
}

int local_json_write_take(const char *dir, const char *name, json_t *o,
                          struct loom_error *err)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    int rc = -1;

    if (text)
        rc = write_atomic(dir, name, text, strlen(text), 0600, err);
    else
        loom_error_set(err, LOOM_EINTERNAL, "%s/%s: out of memory or text "
                       "that is not UTF-8", dir, name);
    free(text);
    json_decref(o);
    return rc;
}

int local_json_read(const char *dir, const char *name, json_t **out,
                    struct loom_error *err)
{
    char path[PATH_MAX];
    json_error_t je;
    struct stat st;
    int fd;

    *out = NULL;
    if (local_path(path, sizeof(path), dir, name, err) < 0)
        return -1;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : loom_error_set(err, LOOM_EINTERNAL,
                                                    "open %s: %s", path,
                                                    strerror(errno));
    if (fstat(fd, &st) == 0 && st.st_size <= MAX_FILE_BYTES)
        *out = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    else
        snprintf(je.text, sizeof(je.text), "larger than %d bytes",
                 MAX_FILE_BYTES);
    close(fd);
    if (!*out)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", path, je.text);
    return 1;
}

static int file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;

    return local_path(path, sizeof(path), dir, name, NULL) == 0 &&
           stat(path, &st) == 0;
}

/* ---- spec.json, pid.json, exit.json ------------------------------------- */

void local_spec_fini(struct local_spec *s)
{
    if (!s)
        return;
    free(s->cluster);
    free(s->name);
    free(s->owner);
    strv_fini(&s->command);
    strv_fini(&s->env);
    strv_fini(&s->nodes);
    memset(s, 0, sizeof(*s));
}

static int strv_copy(struct strv *v, const char *const *src, size_t n)
{
    for (size_t i = 0; src && (n ? i < n : src[i] != NULL); i++)
        if (strv_push(v, src[i]) < 0)
            return -1;
    return 0;
}

static int spec_from_req(struct local_spec *s, const struct start_req *req,
                         const char *cluster, struct loom_error *err)
{
    memset(s, 0, sizeof(*s));
    s->loom_id = req->loom_id;
    s->cpus_per_node = req->cpus_per_node > 0 ? req->cpus_per_node : 1;
    s->memory_mb = req->memory_mb;
    s->gpus = req->gpus;
    s->walltime_s = req->walltime_s;
    s->submit_time = time(NULL);
    if (!(s->cluster = strdup(cluster)) ||
        (req->name && !(s->name = strdup(req->name))) ||
        (req->owner && !(s->owner = strdup(req->owner))) ||
        strv_copy(&s->command, req->command, 0) < 0 ||
        strv_copy(&s->env, req->env, 0) < 0 ||
        strv_copy(&s->nodes, req->nodes, req->n_nodes) < 0) {
        local_spec_fini(s);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

static json_t *strv_json(const struct strv *v)
{
    json_t *a = json_array();

    for (size_t i = 0; a && i < v->n; i++)
        if (json_array_append_new(a, json_string(v->v[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static int strv_from_json(struct strv *v, json_t *a)
{
    size_t i;
    json_t *x;

    if (!json_is_array(a))
        return -1;
    json_array_foreach(a, i, x)
        if (!json_is_string(x) || strv_push(v, json_string_value(x)) < 0)
            return -1;
    return 0;
}

static int job_write(const char *dir, const struct local_spec *s,
                     const char *script, struct loom_error *err)
{
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, LOOM_EINTERNAL, "mkdir %s: %s", dir,
                              strerror(errno));
    if (script && write_atomic(dir, LOOM_LF_SCRIPT, script, strlen(script),
                               0700, err) < 0)
        return -1;
    return local_json_write_take(dir, LOOM_LF_SPEC, json_pack(
        "{s:I, s:s, s:s*, s:s*, s:o, s:o, s:o, s:i, s:I, s:i, s:I, s:I}",
        "loom_id", (json_int_t)s->loom_id, "cluster", s->cluster,
        "name", s->name, "owner", s->owner,
        "command", strv_json(&s->command), "env", strv_json(&s->env),
        "nodes", strv_json(&s->nodes), "cpus_per_node", s->cpus_per_node,
        "memory_mb", (json_int_t)s->memory_mb, "gpus", s->gpus,
        "walltime_s", (json_int_t)s->walltime_s,
        "submit_time", (json_int_t)s->submit_time), err);
}

int local_spec_read(const char *dir, struct local_spec *s,
                    struct loom_error *err)
{
    const char *cluster, *name = NULL, *owner = NULL;
    json_t *o, *command, *env, *nodes;
    json_int_t id, mem, wall, submit;
    json_error_t je;
    int r = local_json_read(dir, LOOM_LF_SPEC, &o, err);

    memset(s, 0, sizeof(*s));
    if (r <= 0)
        return r;
    r = json_unpack_ex(o, &je, 0, "{s:I, s:s, s?:s, s?:s, s:o, s:o, s:o, "
                       "s:i, s:I, s:i, s:I, s:I}", "loom_id", &id,
                       "cluster", &cluster, "name", &name, "owner", &owner,
                       "command", &command, "env", &env, "nodes", &nodes,
                       "cpus_per_node", &s->cpus_per_node, "memory_mb", &mem,
                       "gpus", &s->gpus, "walltime_s", &wall,
                       "submit_time", &submit);
    if (r == 0) {
        snprintf(je.text, sizeof(je.text), "bad command, env or nodes");
        s->loom_id = id;
        s->memory_mb = (long)mem;
        s->walltime_s = (long)wall;
        s->submit_time = (time_t)submit;
        if (!(s->cluster = strdup(cluster)) ||
            (name && !(s->name = strdup(name))) ||
            (owner && !(s->owner = strdup(owner))) ||
            strv_from_json(&s->command, command) < 0 ||
            strv_from_json(&s->env, env) < 0 ||
            strv_from_json(&s->nodes, nodes) < 0 || s->nodes.n == 0)
            r = -1;
    }
    json_decref(o);
    if (r == 0)
        return 1;
    local_spec_fini(s);
    return loom_error_set(err, LOOM_EINTERNAL, "%s/%s: %s", dir,
                          LOOM_LF_SPEC, je.text);
}

int local_pid_write(const char *dir, const struct local_pid *p,
                    struct loom_error *err)
{
    return local_json_write_take(dir, LOOM_LF_PID, json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:s}",
        "supervisor_pid", (json_int_t)p->sup_pid,
        "supervisor_start", (json_int_t)p->sup_start,
        "pgid", (json_int_t)p->pgid, "job_start", (json_int_t)p->job_start,
        "start_time", (json_int_t)p->start_time, "boot_id", p->boot_id), err);
}

int local_pid_read(const char *dir, struct local_pid *p,
                   struct loom_error *err)
{
    json_int_t sp, ss, pg, js, st;
    const char *boot;
    json_error_t je;
    json_t *o;
    int r = local_json_read(dir, LOOM_LF_PID, &o, err);

    memset(p, 0, sizeof(*p));
    if (r <= 0)
        return r;
    r = json_unpack_ex(o, &je, 0, "{s:I, s:I, s:I, s:I, s:I, s:s}",
                       "supervisor_pid", &sp, "supervisor_start", &ss,
                       "pgid", &pg, "job_start", &js, "start_time", &st,
                       "boot_id", &boot);
    if (r == 0 && sp > 1 && pg > 1) {
        *p = (struct local_pid){(pid_t)sp, (unsigned long long)ss, (pid_t)pg,
                                (unsigned long long)js, (time_t)st, ""};
        snprintf(p->boot_id, sizeof(p->boot_id), "%s", boot);
    }
    json_decref(o);
    if (r < 0 || sp <= 1 || pg <= 1)
        return loom_error_set(err, LOOM_EINTERNAL, "%s/%s: %s", dir,
                              LOOM_LF_PID, r < 0 ? je.text : "bad pid");
    return 1;
}

int local_exit_write(const char *dir, const struct local_exit *e,
                     struct loom_error *err)
{
    return local_json_write_take(dir, LOOM_LF_EXIT, json_pack(
        "{s:o, s:i, s:s?, s:I, s:I}", "exit_code",
        e->has_exit_code ? json_integer(e->exit_code) : json_null(),
        "signal", e->signal, "reason", e->reason[0] ? e->reason : NULL,
        "start_time", (json_int_t)e->start_time,
        "end_time", (json_int_t)e->end_time), err);
}

static int exit_read(const char *dir, struct local_exit *e,
                     struct loom_error *err)
{
    json_t *o, *code, *reason;
    json_int_t st, et;
    json_error_t je;
    int r = local_json_read(dir, LOOM_LF_EXIT, &o, err);

    memset(e, 0, sizeof(*e));
    if (r <= 0)
        return r;
    r = json_unpack_ex(o, &je, 0, "{s:o, s:i, s:o, s:I, s:I}", "exit_code",
                       &code, "signal", &e->signal, "reason", &reason,
                       "start_time", &st, "end_time", &et);
    if (r == 0 && (json_is_integer(code) || json_is_null(code)) &&
        (json_is_string(reason) || json_is_null(reason))) {
        e->has_exit_code = json_is_integer(code);
        e->exit_code = (int)json_integer_value(code);
        snprintf(e->reason, sizeof(e->reason), "%s",
                 json_is_string(reason) ? json_string_value(reason) : "");
        e->start_time = (time_t)st;
        e->end_time = (time_t)et;
        json_decref(o);
        return 1;
    }
    json_decref(o);
    return loom_error_set(err, LOOM_EINTERNAL, "%s/%s: %s", dir, LOOM_LF_EXIT,
                          r < 0 ? je.text : "bad exit_code or reason");
}

/* ---- processes ---------------------------------------------------------- */

/* Pids and start times compare only within one boot. Read once. */
static char boot_id[40];
static pthread_once_t boot_once = PTHREAD_ONCE_INIT;

static void boot_read(void)
{
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, boot_id, sizeof(boot_id) - 1) : 0;

    if (fd >= 0)
        close(fd);
    boot_id[n > 0 ? n : 0] = '\0';
    boot_id[strcspn(boot_id, "\n")] = '\0';
}

const char *local_boot_id(void)
{
    pthread_once(&boot_once, boot_read);
    return boot_id;
}

static int this_boot(const struct local_pid *p)
{
    return strcmp(p->boot_id, local_boot_id()) == 0;
}

int local_proc_stat(pid_t pid, char *state, unsigned long long *start)
{
    char path[64], buf[1024], *p, *end;
    ssize_t n = -1;
    int fd;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    fd = pid > 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
    }
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "pid (comm) state ..."; comm may hold spaces and parentheses. */
    p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || !p[2])
        return -1;
    *state = p[2];
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    if (!p)
        return -1;
    errno = 0;
    *start = strtoull(p + 1, &end, 10);
    return errno || end == p + 1 ? -1 : 0;
}

static int sup_alive(const struct local_pid *p)
{
    unsigned long long start;
    char state;

    return this_boot(p) && local_proc_stat(p->sup_pid, &state, &start) == 0 &&
           start == p->sup_start && state != 'Z' && state != 'X';
}

static int group_kill(const struct local_pid *p, int sig)
{
    unsigned long long start;
    char state;

    if (p->pgid <= 1 || !this_boot(p) ||
        (local_proc_stat(p->pgid, &state, &start) == 0 &&
         start != p->job_start)) {
        errno = ESRCH;
        return -1;
    }
    return killpg(p->pgid, sig);
}

static int job_locked(const char *dir)
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

static struct local_job *job_new(const char *dir, const char *cluster)
{
    struct local_job *j = calloc(1, sizeof(*j));

    if (!j || !(j->dir = strdup(dir))) {
        free(j);
        return NULL;
    }
    j->cluster = cluster;
    j->reported = -1;
    return j;
}

void local_job_destroy(struct local_job *j)
{
    if (!j)
        return;
    local_spec_fini(&j->spec);
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

int local_job_load(const char *dir, const char *cluster,
                   struct local_job **out, struct loom_error *err)
{
    struct local_job *j = job_new(dir, cluster);
    int r;

    *out = NULL;
    if (!j)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    r = local_spec_read(dir, &j->spec, err);
    if (r > 0)
        r = local_pid_read(dir, &j->pid, err);
    j->has_pid = r > 0;
    if (r >= 0 && j->spec.nodes.n)
        r = exit_read(dir, &j->exit, err);
    if (r > 0)
        j->state = exit_state(&j->exit);
    else if (r == 0 && (j->has_pid || job_locked(dir) == 1))
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
    int r = exit_read(j->dir, &j->exit, &err);

    if (r < 0)
        log_warn("cluster=%s job=%lld: %s", j->cluster,
                 (long long)j->spec.loom_id, err.message);
    if (r <= 0)
        return 0;
    j->state = exit_state(&j->exit);
    return 1;
}

static void job_end(struct local_job *j, const char *reason)
{
    struct local_exit *e = &j->exit;
    struct loom_error err;

    if (j->has_pid && group_kill(&j->pid, SIGKILL) < 0 && errno != ESRCH)
        log_warn("cluster=%s job=%lld: kill group %d: %s", j->cluster,
                 (long long)j->spec.loom_id, (int)j->pid.pgid,
                 strerror(errno));
    memset(e, 0, sizeof(*e));
    snprintf(e->reason, sizeof(e->reason), "%s", reason);
    e->start_time = j->has_pid ? j->pid.start_time : 0;
    e->end_time = time(NULL);
    if (local_exit_write(j->dir, e, &err) < 0)
        log_warn("cluster=%s job=%lld: %s", j->cluster,
                 (long long)j->spec.loom_id, err.message);
    j->state = exit_state(e);
    log_warn("cluster=%s job=%lld: ended without its supervisor: %s",
             j->cluster, (long long)j->spec.loom_id, reason);
}

void local_job_refresh(struct local_job *j)
{
    struct loom_error err;

    if (!local_job_active(j) || take_exit(j))
        return;
    if (!j->has_pid) {
        j->has_pid = local_pid_read(j->dir, &j->pid, &err) > 0;
        if (!j->has_pid && job_locked(j->dir) == 1)
            return; /* its supervisor is still starting it */
    }
    if (j->has_pid && sup_alive(&j->pid))
        return;
    if (!take_exit(j)) /* it may have ended just now */
        job_end(j, "supervisor lost");
}

int local_job_cancel(struct local_job *j, struct loom_error *err)
{
    if (!local_job_active(j) || take_exit(j))
        return 0;
    if (!j->has_pid)
        j->has_pid = local_pid_read(j->dir, &j->pid, err) > 0;
    if (j->has_pid && sup_alive(&j->pid) &&
        kill(j->pid.sup_pid, SIGTERM) == 0) {
        log_info("cluster=%s job=%lld: cancel: SIGTERM to supervisor %d",
                 j->cluster, (long long)j->spec.loom_id, (int)j->pid.sup_pid);
        return 0;
    }
    if (!j->has_pid && job_locked(j->dir) == 1)
        return loom_error_set(err, LOOM_ETEMP, "it is still starting");
    if (!take_exit(j))
        job_end(j, "cancelled");
    return 0;
}

int local_job_stop(struct local_job *j, int stop, struct loom_error *err)
{
    char mark[PATH_MAX];
    int e;

    if (local_path(mark, sizeof(mark), j->dir, LOOM_LF_SUSPENDED, err) < 0)
        return -1;
    /* The mark goes first, so that a restart finds a stopped job marked. */
    if (stop && write_atomic(j->dir, LOOM_LF_SUSPENDED, "", 0, 0600, err) < 0)
        return -1;
    if (group_kill(&j->pid, stop ? SIGSTOP : SIGCONT) < 0) {
        e = errno;
        if (stop)
            unlink(mark);
        return loom_error_set(err, e == ESRCH ? LOOM_ECONFLICT
                                              : LOOM_EINTERNAL, "%s",
                              e == ESRCH ? "its processes are gone"
                                         : strerror(e));
    }
    if (!stop)
        unlink(mark);
    j->state = stop ? LOOM_LOCAL_SUSPENDED : LOOM_LOCAL_RUNNING;
    log_info("cluster=%s job=%lld: %s to group %d", j->cluster,
             (long long)j->spec.loom_id, stop ? "SIGSTOP" : "SIGCONT",
             (int)j->pid.pgid);
    return 0;
}

/* ---- starting: the supervisor ------------------------------------------- */

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

/* Move fd above the numbers the supervisor is given (or -1). */
static int fd_high(int fd)
{
    int high = fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 10);

    if (fd >= 0)
        close(fd);
    return high;
}

static int spawn(const char *supervise, const char *dir, int lock, int wfd,
                 pid_t *pid)
{
    char *const argv[] = {"loom-supervise", (char *)dir, NULL};
    char log[PATH_MAX];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    int rc;

    if (local_path(log, sizeof(log), dir, LOOM_LF_SUPLOG, NULL) < 0)
        return ENAMETOOLONG;
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
    rc = posix_spawn(pid, supervise, &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return rc;
}

/* Lock spec.json (the lock passes to the supervisor), run the supervisor,
 * reap its first process and wait for its line. */
static int run_supervisor(const char *supervise, const char *dir,
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
        e = spawn(supervise, dir, lock, p[1], &pid);
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
        return loom_error_set(err, LOOM_ETEMP, "run %s: %s", supervise,
                              strerror(e));
    if (strcmp(line, "ok") != 0)
        return loom_error_set(err, LOOM_ETEMP, "loom-supervise: %s",
                              *line ? line : "ended without an answer");
    return 0;
}

/* Remove a directory in which no job ran. */
static void job_remove(const char *dir)
{
    static const char *const names[] = {
        LOOM_LF_SPEC, LOOM_LF_SCRIPT, LOOM_LF_STDOUT, LOOM_LF_STDERR,
        LOOM_LF_PID,  LOOM_LF_EXIT,   LOOM_LF_SUPLOG};
    char path[PATH_MAX];

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (local_path(path, sizeof(path), dir, names[i], NULL) == 0)
            unlink(path);
    rmdir(dir);
}

struct local_job *local_job_start(const char *dir, const char *cluster,
                                  const struct start_req *req,
                                  const char *supervise,
                                  struct loom_error *err)
{
    struct local_job *j = job_new(dir, cluster);
    struct loom_error why;

    if (!j) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    if (spec_from_req(&j->spec, req, cluster, err) < 0)
        goto error;
    if (job_write(dir, &j->spec, req->script, err) == 0 &&
        run_supervisor(supervise, dir, err) == 0)
        goto started;
    if (!file_exists(dir, LOOM_LF_PID) && job_locked(dir) != 1) {
        job_remove(dir);
        goto error;
    }
    log_warn("cluster=%s job=%lld: started, but: %s", cluster,
             (long long)req->loom_id, err->message);
started:
    j->has_pid = local_pid_read(dir, &j->pid, &why) > 0;
    return j;
error:
    local_job_destroy(j);
    return NULL;
}
