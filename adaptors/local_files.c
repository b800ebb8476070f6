/* local_files.c - a local job's files (spec.json, pid.json, exit.json)
 * and what /proc says of a process; shared by loomd and loom-supervise. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_job.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILE_BYTES (32 << 20) /* a spec with a script and a large
                                     environment */

/* ---- helpers ------------------------------------------------------------ */

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

int local_run_dir(const char *state_dir, const char *cluster, int64_t id,
                  char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s/clusters/%s/jobs/%lld/%s", state_dir,
                     cluster, (long long)id, LOOM_LF_RUN);

    return n < 0 || (size_t)n >= size ? -1 : 0;
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

enum loom_err_kind local_errno_kind(int e)
{
    return e == ENOSPC || e == EDQUOT ? LOOM_ETEMP : LOOM_EINTERNAL;
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

int local_write_at(int dirfd, const char *path, const char *name,
                   const char *data, size_t len, mode_t mode,
                   struct loom_error *err)
{
    char tmp[NAME_MAX + 1];
    int fd, saved;

    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
                                O_NOFOLLOW, mode);
    if (fd >= 0 && write_all(fd, data, len) == 0 && fsync(fd) == 0) {
        close(fd);
        fd = -1;
        if (renameat(dirfd, tmp, dirfd, name) == 0)
            return 0;
    }
    saved = errno;
    if (fd >= 0)
        close(fd);
    unlinkat(dirfd, tmp, 0);
    return loom_error_set(err, local_errno_kind(saved), "write %s/%s: %s",
                          path, name, strerror(saved));
}

int local_json_write_take(int dirfd, const char *dir, const char *name,
                          json_t *o, struct loom_error *err)
{
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    int fd = dirfd, rc = -1;

    if (!text)
        loom_error_set(err, LOOM_EINTERNAL, "%s/%s: out of memory or text "
                       "that is not UTF-8", dir, name);
    else if (fd < 0 && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        loom_error_set(err, LOOM_EINTERNAL, "open %s: %s", dir,
                       strerror(errno));
    else
        rc = local_write_at(fd, dir, name, text, strlen(text),
                            dirfd < 0 ? 0600 : 0640, err);
    if (dirfd < 0 && fd >= 0)
        close(fd);
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
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? 0 : loom_error_set(err, LOOM_EINTERNAL,
                                                    "open %s: %s", path,
                                                    strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size <= MAX_FILE_BYTES)
        *out = json_loadfd(fd, JSON_REJECT_DUPLICATES, &je);
    else
        snprintf(je.text, sizeof(je.text), "not a file of at most %d bytes",
                 MAX_FILE_BYTES);
    close(fd);
    if (!*out)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", path, je.text);
    return 1;
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

/* *field = a copy of the string member key (absent or null: NULL); -1
 * when it is something else, or out of memory. */
static int str_member(json_t *o, const char *key, char **field)
{
    json_t *v = json_object_get(o, key);

    *field = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    *field = strdup(json_string_value(v));
    return *field ? 0 : -1;
}

/* ---- spec.json ------------------------------------------------------- */

void local_spec_fini(struct local_spec *s)
{
    if (!s)
        return;
    free(s->cluster);
    free(s->name);
    free(s->owner);
    free(s->account);
    strv_fini(&s->command);
    free(s->script);
    strv_fini(&s->env);
    strv_fini(&s->nodes);
    free(s->workdir);
    free(s->output);
    free(s->error);
    free(s->cgroup_procs);
    free(s->oom_file);
    memset(s, 0, sizeof(*s));
}

json_t *local_spec_json(const struct local_spec *s)
{
    return json_pack(
        "{s:I, s:s, s:s*, s:s*, s:s*, s:o, s:s*, s:o, s:o, s:s*, s:s*, s:s*, "
        "s:s*, s:s*, s:i, s:I, s:i, s:I, s:I}",
        "loom_id", (json_int_t)s->loom_id, "cluster", s->cluster,
        "name", s->name, "owner", s->owner, "account", s->account,
        "command", strv_json(&s->command), "script", s->script,
        "env", strv_json(&s->env), "nodes", strv_json(&s->nodes),
        "workdir", s->workdir, "output", s->output, "error", s->error,
        "cgroup_procs", s->cgroup_procs, "oom_file", s->oom_file,
        "cpus_per_node", s->cpus_per_node,
        "memory_mb", (json_int_t)s->memory_mb, "gpus", s->gpus,
        "walltime_s", (json_int_t)s->walltime_s,
        "submit_time", (json_int_t)s->submit_time);
}

int local_spec_from_json(json_t *o, const char *what, struct local_spec *s,
                         struct loom_error *err)
{
    const char *cluster;
    json_t *command, *env, *nodes;
    json_int_t id, mem, wall, submit;
    json_error_t je;
    int r;

    memset(s, 0, sizeof(*s));
    r = json_unpack_ex(o, &je, 0, "{s:I, s:s, s:o, s:o, s:o, s:i, s:I, s:i, "
                       "s:I, s:I}", "loom_id", &id, "cluster", &cluster,
                       "command", &command, "env", &env, "nodes", &nodes,
                       "cpus_per_node", &s->cpus_per_node, "memory_mb", &mem,
                       "gpus", &s->gpus, "walltime_s", &wall,
                       "submit_time", &submit);
    if (r == 0) {
        snprintf(je.text, sizeof(je.text), "bad command, env, nodes or text");
        s->loom_id = id;
        s->memory_mb = (long)mem;
        s->walltime_s = (long)wall;
        s->submit_time = (time_t)submit;
        if (!(s->cluster = strdup(cluster)) ||
            str_member(o, "name", &s->name) < 0 ||
            str_member(o, "owner", &s->owner) < 0 ||
            str_member(o, "account", &s->account) < 0 ||
            str_member(o, "script", &s->script) < 0 ||
            str_member(o, "workdir", &s->workdir) < 0 ||
            str_member(o, "output", &s->output) < 0 ||
            str_member(o, "error", &s->error) < 0 ||
            str_member(o, "cgroup_procs", &s->cgroup_procs) < 0 ||
            str_member(o, "oom_file", &s->oom_file) < 0 ||
            strv_from_json(&s->command, command) < 0 ||
            strv_from_json(&s->env, env) < 0 ||
            strv_from_json(&s->nodes, nodes) < 0 || s->nodes.n == 0)
            r = -1;
    }
    if (r == 0)
        return 1;
    local_spec_fini(s);
    return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", what, je.text);
}

int local_spec_read(const char *dir, struct local_spec *s,
                    struct loom_error *err)
{
    char what[PATH_MAX];
    json_t *o;
    int r = local_json_read(dir, LOOM_LF_SPEC, &o, err);

    memset(s, 0, sizeof(*s));
    if (r <= 0)
        return r;
    snprintf(what, sizeof(what), "%s/%s", dir, LOOM_LF_SPEC);
    r = local_spec_from_json(o, what, s, err);
    json_decref(o);
    return r;
}

/* ---- pid.json ---------------------------------------------------------- */

void local_pid_fini(struct local_pid *p)
{
    if (!p)
        return;
    free(p->workdir);
    free(p->stdout_path);
    free(p->stderr_path);
    memset(p, 0, sizeof(*p));
}

int local_pid_write(int dirfd, const char *dir, const struct local_pid *p,
                    struct loom_error *err)
{
    return local_json_write_take(dirfd, dir, LOOM_LF_PID, json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:s, s:s*, s:s*, s:s*}",
        "supervisor_pid", (json_int_t)p->sup_pid,
        "supervisor_start", (json_int_t)p->sup_start,
        "pgid", (json_int_t)p->pgid, "job_start", (json_int_t)p->job_start,
        "start_time", (json_int_t)p->start_time, "boot_id", p->boot_id,
        "workdir", p->workdir, "stdout", p->stdout_path,
        "stderr", p->stderr_path), err);
}

int local_pid_read(const char *jobdir, struct local_pid *p,
                   struct loom_error *err)
{
    json_int_t sp, ss, pg, js, st;
    const char *boot;
    char run[PATH_MAX];
    json_error_t je;
    json_t *o;
    int r;

    memset(p, 0, sizeof(*p));
    if (local_path(run, sizeof(run), jobdir, LOOM_LF_RUN, err) < 0)
        return -1;
    r = local_json_read(run, LOOM_LF_PID, &o, err);
    if (r <= 0)
        return r;
    r = json_unpack_ex(o, &je, 0, "{s:I, s:I, s:I, s:I, s:I, s:s}",
                       "supervisor_pid", &sp, "supervisor_start", &ss,
                       "pgid", &pg, "job_start", &js, "start_time", &st,
                       "boot_id", &boot);
    if (r == 0 && sp > 1 && pg >= 0 && pg != 1) {
        p->sup_pid = (pid_t)sp;
        p->sup_start = (unsigned long long)ss;
        p->pgid = (pid_t)pg;
        p->job_start = (unsigned long long)js;
        p->start_time = (time_t)st;
        snprintf(p->boot_id, sizeof(p->boot_id), "%s", boot);
        if (str_member(o, "workdir", &p->workdir) < 0 ||
            str_member(o, "stdout", &p->stdout_path) < 0 ||
            str_member(o, "stderr", &p->stderr_path) < 0)
            r = -1;
    } else if (r == 0) {
        r = -1;
        snprintf(je.text, sizeof(je.text), "bad pid");
    }
    json_decref(o);
    if (r == 0)
        return 1;
    local_pid_fini(p);
    return loom_error_set(err, LOOM_EINTERNAL, "%s/%s: %s", run, LOOM_LF_PID,
                          je.text);
}

/* ---- exit.json --------------------------------------------------------- */

int local_exit_write(int dirfd, const char *dir, const struct local_exit *e,
                     struct loom_error *err)
{
    const struct cl_usage *u = &e->usage;

    return local_json_write_take(dirfd, dir, LOOM_LF_EXIT, json_pack(
        "{s:o, s:i, s:s?, s:I, s:I, s:o?}", "exit_code",
        e->has_exit_code ? json_integer(e->exit_code) : json_null(),
        "signal", e->signal, "reason", e->reason[0] ? e->reason : NULL,
        "start_time", (json_int_t)e->start_time,
        "end_time", (json_int_t)e->end_time, "usage",
        !u->known ? NULL : json_pack("{s:I, s:I, s:I}", "user_cpu_ms",
                                     (json_int_t)u->user_cpu_ms,
                                     "system_cpu_ms",
                                     (json_int_t)u->system_cpu_ms,
                                     "max_rss_kb",
                                     (json_int_t)u->max_rss_kb)), err);
}

static int exit_read_in(const char *dir, struct local_exit *e,
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
        /* one from before the supervisor measured has none */
        (void)cl_usage_read(json_object_get(o, "usage"), &e->usage);
        json_decref(o);
        return 1;
    }
    json_decref(o);
    return loom_error_set(err, LOOM_EINTERNAL, "%s/%s: %s", dir, LOOM_LF_EXIT,
                          r < 0 ? je.text : "bad exit_code or reason");
}

int local_exit_read(const char *jobdir, struct local_exit *e,
                    struct loom_error *err)
{
    char run[PATH_MAX];
    int r = exit_read_in(jobdir, e, err);

    if (r != 0 || local_path(run, sizeof(run), jobdir, LOOM_LF_RUN, err) < 0)
        return r;
    return exit_read_in(run, e, err);
}

/* ---- processes ------------------------------------------------------- */

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
