/* script_start.c - the script adaptor's start: the job file, where the
 * job works, and the pack's start op with the job in its environment. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/script.h"
#include "core/directives.h"
#include "core/jsonx.h"
#include "core/outpath.h"

/* The job's directory under workdir and its job file, mode 0700: loomd's
 * alone (a pack that submits as the job's account hands it to the CMS on
 * standard input; one whose CMS runs it as loomd's account may execute
 * it). */
static int job_files(struct script *s, const struct start_req *req,
                     char **dir, char **file, struct loom_error *err)
{
    char id[32], *text = script_job_file(req);
    FILE *f = NULL;
    int fd = -1, ok = 0, e;

    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    *dir = script_path_join(s->workdir, id);
    *file = *dir ? script_path_join(*dir, "job.sh") : NULL;
    if (!text || !*file)
        goto oom;
    if (script_mkdir_p(*dir) == 0)
        fd = open(*file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                  0700);
    if (fd >= 0 && fchmod(fd, 0700) == 0 && (f = fdopen(fd, "w"))) {
        fd = -1; /* f's now, closed once by fclose whatever it answers */
        ok = fputs(text, f) != EOF;
        e = errno;
        if (fclose(f) != 0 && ok) { /* the write itself (a full disk) */
            ok = 0;
            e = errno;
        }
        errno = e;
    }
    e = errno;
    if (fd >= 0)
        close(fd);
    free(text);
    if (!ok)
        return loom_error_set(err, LOOM_ETEMP, "cluster %s: cannot write "
                              "%s: %s", s->cluster, *file, strerror(e));
    return 0;
oom:
    free(text);
    return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

static int push_env(struct strv *e, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int push_env(struct strv *e, const char *name, const char *fmt, ...)
{
    char value[4096], kv[4200];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(value, sizeof(value), fmt, ap);
    va_end(ap);
    snprintf(kv, sizeof(kv), "%s=%s", name, value);
    return strv_push(e, kv);
}

/* name relative to dir, as an absolute path (new string, or NULL). */
static char *absolute(const char *dir, const char *name)
{
    return name[0] == '/' ? strdup(name) : script_path_join(dir, name);
}

/* script.h */
int script_job_paths(const char *cluster, int runs_as_user,
                     const struct start_req *req, const char *jobdir,
                     char **dir, char **out, char **errf,
                     struct loom_error *err)
{
    struct outpath_vars v = {req->loom_id, req->account, req->name,
                             req->array_id,
                             req->array_id ? req->array_task : 0,
                             req->n_nodes ? req->nodes[0] : NULL};
    char buf[4096], *o = NULL, *e = NULL;
    struct passwd pw, *p = NULL;

    if (req->native_id) {
        *dir = strdup(jobdir);
        *out = script_path_join(jobdir, "stdout");
        *errf = script_path_join(jobdir, "stderr");
        return *dir && *out && *errf ? 0 : loom_error_set(err, LOOM_EINTERNAL,
                                                          "out of memory");
    }
    if (req->workdir) {
        *dir = strdup(req->workdir);
    } else if (!runs_as_user) {
        *dir = strdup(jobdir);
    } else {
        if (!req->account || getpwnam_r(req->account, &pw, buf, sizeof(buf),
                                        &p) != 0 || !p || !p->pw_dir ||
            !*p->pw_dir)
            return loom_error_set(err, LOOM_EINVAL, "cluster %s: job %lld "
                                  "runs as account '%s', which this host "
                                  "does not know (no home directory to work "
                                  "in; the request names no workdir)",
                                  cluster, (long long)req->loom_id,
                                  req->account ? req->account : "");
        *dir = strdup(p->pw_dir);
    }
    o = outpath_expand(req->output ? req->output : LOOM_OUTPUT_DEFAULT, &v);
    e = req->error ? outpath_expand(req->error, &v) : NULL;
    if (*dir && o && (!req->error || e)) {
        *out = absolute(*dir, o);
        *errf = absolute(*dir, e ? e : o);
    }
    free(o);
    free(e);
    return *dir && *out && *errf ? 0 : loom_error_set(err, LOOM_EINTERNAL,
                                                      "out of memory");
}

static json_t *start_input(const struct start_req *req, const char *dir,
                           const char *out, const char *errf)
{
    json_t *env = json_object(), *nodes = json_array(), *cmd = json_null();
    char id[32];

    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    for (size_t i = 0; req->env && req->env[i]; i++)
        jx_set_kv(env, req->env[i]);
    for (size_t i = 0; i < req->n_nodes; i++)
        json_array_append_new(nodes, json_string(req->nodes[i]));
    if (req->command) {
        cmd = json_array();
        for (size_t i = 0; req->command[i]; i++)
            json_array_append_new(cmd, json_string(req->command[i]));
    }
    return json_pack("{s:s, s:s?, s:s?, s:s?, s:o, s:s?, s:o, s:o, s:i, s:I, "
                     "s:i, s:I, s:s?, s:s, s:s, s:s, s:s?, s:s?}",
                     "loom_id", id, "name", req->name, "owner", req->owner,
                     "account", req->account,
                     "command", cmd, "script", req->script, "env", env,
                     "nodes", nodes, "cpus_per_node", req->cpus_per_node,
                     "memory_mb", (json_int_t)req->memory_mb, "gpus",
                     req->gpus, "walltime_s", (json_int_t)req->walltime_s,
                     "queue", req->queue, "workdir", dir, "stdout", out,
                     "stderr", errf, "native_id", req->native_id,
                     "reservation", req->reservation);
}

/* The cluster system gets the script with the directives Loom read
 * neutralised (core/directives.h): Loom applied them through the request,
 * in the CMS's terms; sbatch or qsub must not apply them again. */
int script_start(void *self, const struct start_req *asked,
                 struct start_result *res, struct loom_error *err)
{
    struct script *s = self;
    struct start_req copy = *asked, *req = &copy;
    char *neutral = asked->script ? directives_neutralise(asked->script)
                                  : NULL;
    char *jobdir = NULL, *dir = NULL, *file = NULL, *out = NULL, *errf = NULL;
    char nodes[4096] = "", id[32];
    struct strv extra = {0};
    const char *args[] = {id, NULL};
    json_t *in = NULL, *a = NULL;
    const char *native;
    int rc = -1;

    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    copy.script = neutral;
    if (asked->script && !neutral) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (s->single_account && !req->native_id &&
        (!req->account || strcmp(req->account, s->single_account))) {
        loom_error_set(err, LOOM_EINVAL, "cluster %s runs every job as %s "
                       "(single_account); this job is %s's", s->cluster,
                       s->single_account, req->account ? req->account : "?");
        goto out;
    }
    if (job_files(s, req, &jobdir, &file, err) < 0 ||
        script_job_paths(s->cluster, s->runs_as_user, req, jobdir, &dir,
                         &out, &errf, err) < 0)
        goto out;
    for (size_t i = 0; i < req->n_nodes; i++)
        snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%s%s",
                 i ? "," : "", req->nodes[i]);
    in = start_input(req, dir, out, errf);
    if (!in ||
        push_env(&extra, "LOOM_JOB_ID", "%s", id) < 0 ||
        push_env(&extra, "LOOM_JOB_NAME", "%s", req->name ? req->name : "job") ||
        push_env(&extra, "LOOM_JOB_OWNER", "%s", req->owner ? req->owner : "") ||
        push_env(&extra, "LOOM_JOB_ACCOUNT", "%s",
                 req->account ? req->account : "") ||
        push_env(&extra, "LOOM_RUNAS", "%s", s->runas) ||
        push_env(&extra, "LOOM_JOB_NODES", "%s", nodes) ||
        push_env(&extra, "LOOM_JOB_NNODES", "%zu", req->n_nodes) ||
        push_env(&extra, "LOOM_JOB_CPUS_PER_NODE", "%d", req->cpus_per_node) ||
        push_env(&extra, "LOOM_JOB_MEMORY_MB", "%ld", req->memory_mb) ||
        push_env(&extra, "LOOM_JOB_GPUS", "%d", req->gpus) ||
        push_env(&extra, "LOOM_JOB_WALLTIME_S", "%ld", req->walltime_s) ||
        push_env(&extra, "LOOM_JOB_QUEUE", "%s", req->queue ? req->queue : "") ||
        push_env(&extra, "LOOM_JOB_NATIVE_ID", "%s",
                 req->native_id ? req->native_id : "") ||
        push_env(&extra, "LOOM_JOB_ADOPT", "%d", req->adopt ? 1 : 0) ||
        push_env(&extra, "LOOM_JOB_RESERVATION", "%s",
                 req->reservation ? req->reservation : "") ||
        push_env(&extra, "LOOM_JOB_SCRIPT", "%s", file) ||
        push_env(&extra, "LOOM_JOB_WORKDIR", "%s", dir) ||
        push_env(&extra, "LOOM_JOB_STDOUT", "%s", out) ||
        push_env(&extra, "LOOM_JOB_STDERR", "%s", errf)) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (script_run(s, OP_START, args, in, &extra, &a, err) < 0)
        goto out;
    native = json_string_value(json_object_get(a, "native_id"));
    if (!native || !*native) {
        loom_error_set(err, LOOM_ETEMP, "answer does not follow the "
                       "protocol: no \"native_id\"");
        script_fail(s, "start", err);
        goto out;
    }
    res->native_id = strdup(native);
    res->queued = 1; /* the CMS runs it: its jobs answer says when */
    res->stdout_path = out;
    res->stderr_path = errf;
    out = errf = NULL;
    rc = res->native_id ? 0 : loom_error_set(err, LOOM_EINTERNAL, "no memory");
out:
    json_decref(in);
    json_decref(a);
    strv_fini(&extra);
    free(jobdir);
    free(dir);
    free(file);
    free(out);
    free(errf);
    free(neutral);
    return rc;
}
