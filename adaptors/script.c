/* script.c - the script adaptor: one pack executable per operation. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/script.h"
#include "core/directives.h"
#include "core/log.h"
#include "core/proc.h"

#define DEFAULT_TIMEOUT_S 30.0
#define DEFAULT_MAX_OUT (1 << 20)
#define MAX_ERR (64 << 10)

enum op {
    OP_NODES, OP_JOBS, OP_QUEUES, OP_START, OP_CANCEL, OP_SET_NODE_STATE,
    OP_SUSPEND, OP_RESUME, OP_HOLD, OP_RELEASE, OP_RESERVE, OP_UNRESERVE,
    N_OPS
};

static const char *const op_names[N_OPS] = {
    "nodes", "jobs", "queues", "start", "cancel", "set-node-state",
    "suspend", "resume", "hold", "release", "reserve", "unreserve",
};

struct script {
    char *cluster, *pack, *pack_dir, *dir, *workdir;
    struct strv env;          /* "NAME=value": the section's env.* */
    double timeout[N_OPS];
    size_t max_out;
    int has[N_OPS];
    unsigned caps;
    enum adaptor_model model;
};

static int op_of(const char *name)
{
    for (int i = 0; i < N_OPS; i++)
        if (!strcmp(op_names[i], name))
            return i;
    return -1;
}

static int fail(const struct script *s, const char *op, struct loom_error *err)
{
    return loom_error_prefix(err, "cluster %s: pack %s: %s", s->cluster,
                             s->pack, op);
}

/* ---- configuration ----------------------------------------------------- */

static int env_cb(void *arg, const char *name, const char *value,
                  struct loom_error *err)
{
    struct script *s = arg;
    size_t n = strlen(name) + strlen(value) + 2;
    char *kv = malloc(n);
    int rc;

    if (!kv)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    snprintf(kv, n, "%s=%s", name, value);
    rc = strv_push(&s->env, kv);
    free(kv);
    return rc < 0 ? loom_error_set(err, LOOM_EINTERNAL, "out of memory") : 0;
}

static int timeout_cb(void *arg, const char *name, const char *value,
                      struct loom_error *err)
{
    struct script *s = arg;
    int op = op_of(name);
    char *end;
    double v = strtod(value, &end);

    if (op < 0)
        return loom_error_set(err, LOOM_EINVAL, "timeout.%s: no operation "
                              "named '%s'", name, name);
    if (*end || !(v >= 0.1 && v <= 86400))
        return loom_error_set(err, LOOM_EINVAL, "timeout.%s: expected "
                              "seconds from 0.1 to 86400 (got '%s')", name,
                              value);
    s->timeout[op] = v;
    return 0;
}

/* A bundled pack by name, or a directory. */
static char *pack_dir_of(const char *pack)
{
    const char *base = getenv("LOOM_SCRIPTS_DIR");
    size_t n;
    char *d;

    if (strchr(pack, '/'))
        return strdup(pack);
    if (!base || !*base)
        base = LOOM_DATADIR "/scripts";
    n = strlen(base) + strlen(pack) + 2;
    d = malloc(n);
    if (d)
        snprintf(d, n, "%s/%s", base, pack);
    return d;
}

static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);

    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* Read pack.json: protocol, model, the ops (each an executable). */
static int read_manifest(struct script *s, struct loom_error *err)
{
    char *path = path_join(s->pack_dir, "pack.json");
    json_error_t je;
    json_t *m = path ? json_load_file(path, 0, &je) : NULL, *ops, *v;
    const char *model;
    size_t i;
    int rc = -1;

    if (!m) {
        loom_error_set(err, LOOM_EINVAL, "pack %s: cannot read %s: %s",
                       s->pack, path ? path : "pack.json", je.text);
        goto out;
    }
    if (json_integer_value(json_object_get(m, "protocol")) != 1) {
        loom_error_set(err, LOOM_EINVAL, "pack %s: pack.json: protocol must "
                       "be 1", s->pack);
        goto out;
    }
    model = json_string_value(json_object_get(m, "model"));
    if (!model || (strcmp(model, "disabled-scheduler") &&
                   strcmp(model, "execution-queue"))) {
        loom_error_set(err, LOOM_EINVAL, "pack %s: pack.json: model must be "
                       "disabled-scheduler or execution-queue", s->pack);
        goto out;
    }
    s->model = strcmp(model, "execution-queue") ? LOOM_MODEL_DISABLED_SCHEDULER
                                                : LOOM_MODEL_EXECUTION_QUEUE;
    ops = json_object_get(m, "ops");
    json_array_foreach(ops, i, v) {
        int op = json_is_string(v) ? op_of(json_string_value(v)) : -1;
        char *exe = op >= 0 ? path_join(s->pack_dir, op_names[op]) : NULL;
        int ok = exe && access(exe, X_OK) == 0;
        free(exe);
        if (op < 0 || !ok) {
            loom_error_set(err, LOOM_EINVAL, "pack %s: pack.json lists '%s', "
                           "which is %s", s->pack,
                           json_is_string(v) ? json_string_value(v) : "?",
                           op < 0 ? "not a protocol operation"
                                  : "not an executable in the pack");
            goto out;
        }
        s->has[op] = 1;
    }
    for (int op = OP_NODES; op <= OP_CANCEL; op++)
        if (!s->has[op]) {
            loom_error_set(err, LOOM_EINVAL, "pack %s: the required operation "
                           "'%s' is missing", s->pack, op_names[op]);
            goto out;
        }
    s->caps = (s->has[OP_SUSPEND] && s->has[OP_RESUME] ? LOOM_CAP_SUSPEND : 0) |
              (s->has[OP_HOLD] && s->has[OP_RELEASE] ? LOOM_CAP_HOLD : 0) |
              (s->has[OP_SET_NODE_STATE] ? LOOM_CAP_NODE_STATE : 0) |
              (s->has[OP_RESERVE] && s->has[OP_UNRESERVE] ? LOOM_CAP_RESERVE
                                                          : 0);
    rc = 0;
out:
    json_decref(m);
    free(path);
    return rc;
}

static void script_destroy(void *self)
{
    struct script *s = self;

    if (!s)
        return;
    free(s->cluster);
    free(s->pack);
    free(s->pack_dir);
    free(s->dir);
    free(s->workdir);
    strv_fini(&s->env);
    free(s);
}

static int mkdir_p(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    return mkdir(buf, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static int script_create(struct conf_section *sec,
                         const struct adaptor_env *env, void **self,
                         struct loom_error *err)
{
    struct script *s = calloc(1, sizeof(*s));
    const char *pack, *workdir;
    long max_out;

    if (!s)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    for (int i = 0; i < N_OPS; i++)
        s->timeout[i] = DEFAULT_TIMEOUT_S;
    s->cluster = strdup(env->cluster);
    s->dir = malloc(strlen(env->state_dir) + strlen(env->cluster) + 16);
    if (!s->cluster || !s->dir)
        goto oom;
    snprintf(s->dir, strlen(env->state_dir) + strlen(env->cluster) + 16,
             "%s/clusters/%s", env->state_dir, env->cluster);
    if (conf_get_str(sec, "pack", NULL, &pack, err) < 0 ||
        conf_get_str(sec, "workdir", NULL, &workdir, err) < 0 ||
        conf_get_long(sec, "max_output_bytes", DEFAULT_MAX_OUT, 1024,
                      256L << 20, &max_out, err) < 0 ||
        conf_each_prefixed(sec, "env.", env_cb, s, err) < 0 ||
        conf_each_prefixed(sec, "timeout.", timeout_cb, s, err) < 0)
        goto error;
    if (!pack) {
        loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] needs 'pack = "
                       "<name or directory>'", sec->file, sec->line,
                       sec->name);
        goto error;
    }
    s->max_out = (size_t)max_out;
    s->pack = strdup(pack);
    s->pack_dir = pack_dir_of(pack);
    s->workdir = workdir ? strdup(workdir) : path_join(s->dir, "jobs");
    if (!s->pack || !s->pack_dir || !s->workdir)
        goto oom;
    if (mkdir_p(s->dir) < 0 || mkdir_p(s->workdir) < 0) {
        loom_error_set(err, LOOM_EINVAL, "cluster %s: cannot create %s: %s",
                       s->cluster, s->workdir, strerror(errno));
        goto error;
    }
    if (read_manifest(s, err) < 0)
        goto error;
    *self = s;
    return 0;
oom:
    loom_error_set(err, LOOM_EINTERNAL, "out of memory");
error:
    script_destroy(s);
    return -1;
}

/* ---- one run ----------------------------------------------------------- */

/* The environment of a run: PATH and HOME, the section's env.*, LOOM_*,
 * then the op's own (extra). */
static char **run_env(const struct script *s, const char *op,
                      const struct strv *extra)
{
    struct strv e = {0};
    const char *home = getenv("HOME");
    char buf[4200];
    int rc = strv_push(&e, "PATH=/usr/local/bin:/usr/bin:/bin");

    snprintf(buf, sizeof(buf), "HOME=%s", home ? home : "/");
    rc |= strv_push(&e, buf);
    for (size_t i = 0; i < s->env.n; i++)
        rc |= strv_push(&e, s->env.v[i]);
    snprintf(buf, sizeof(buf), "LOOM_CLUSTER=%s", s->cluster);
    rc |= strv_push(&e, buf);
    snprintf(buf, sizeof(buf), "LOOM_OP=%s", op);
    rc |= strv_push(&e, buf);
    snprintf(buf, sizeof(buf), "LOOM_PACK_DIR=%s", s->pack_dir);
    rc |= strv_push(&e, buf);
    snprintf(buf, sizeof(buf), "LOOM_STATE_DIR=%s", s->dir);
    rc |= strv_push(&e, buf);
    for (size_t i = 0; extra && i < extra->n; i++)
        rc |= strv_push(&e, extra->v[i]);
    if (rc) {
        strv_fini(&e);
        return NULL;
    }
    return e.v;
}

/* The first line of what the pack said on stderr, printable. */
static void first_line(const char *text, char *out, size_t n)
{
    size_t k = 0;

    for (; *text && *text != '\n' && k + 1 < n; text++)
        out[k++] = (*text >= 32 && *text < 127) ? *text : '?';
    out[k] = '\0';
}

static int judge(const struct script *s, int op, const struct proc_result *r,
                 json_t **answer, struct loom_error *err)
{
    char said[256];
    json_error_t je;

    first_line(r->err, said, sizeof(said));
    if (r->timed_out)
        return loom_error_set(err, LOOM_ETEMP, "script timed out after %g s",
                              s->timeout[op]);
    if (r->too_much)
        return loom_error_set(err, LOOM_ETEMP, "output larger than %zu bytes",
                              s->max_out);
    if (!r->exited)
        return loom_error_set(err, LOOM_ETEMP, "script killed by signal %d",
                              r->signal);
    switch (r->exit_code) {
    case 0:
        break;
    case 1:
        return loom_error_set(err, LOOM_EINVAL, "%s", *said ? said
                              : "failed (exit status 1)");
    case 2:
        return loom_error_set(err, LOOM_ENOTSUP, "not supported by this "
                              "cluster system%s%s", *said ? ": " : "", said);
    case 75:
        return loom_error_set(err, LOOM_ETEMP, "temporary failure: %s",
                              *said ? said : "(no message)");
    default:
        return loom_error_set(err, LOOM_ETEMP, "exited with status %d%s%s",
                              r->exit_code, *said ? ": " : "", said);
    }
    if (r->out_len == 0 || strspn(r->out, " \t\r\n") == r->out_len) {
        *answer = json_object();
        return 0;
    }
    *answer = json_loadb(r->out, r->out_len, 0, &je);
    if (!json_is_object(*answer)) {
        first_line(r->out, said, 80);
        json_decref(*answer);
        *answer = NULL;
        return loom_error_set(err, LOOM_ETEMP, "answer is not a JSON object "
                              "(%s): '%s'", je.text, said);
    }
    return 0;
}

/* Run the pack's op with args, input and extra environment. 0 with a JSON
 * object in *answer (the caller decrefs), or -1 with err naming the
 * cluster, the pack and the op. */
static int run(struct script *s, int op, const char *const *args,
               json_t *input, const struct strv *extra, json_t **answer,
               struct loom_error *err)
{
    char *exe = path_join(s->pack_dir, op_names[op]);
    char *in = input ? json_dumps(input, JSON_COMPACT) : strdup("{}");
    char **envp = run_env(s, op_names[op], extra);
    const char *argv[8] = {exe};
    struct proc_result r = {0};
    struct proc_spec spec;
    int n = 1, rc = -1;

    *answer = NULL;
    if (!exe || !in || !envp) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    for (; args && args[n - 1] && n < 7; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    spec = (struct proc_spec){
        .path = exe, .argv = (char *const *)argv, .envp = envp,
        .cwd = s->dir, .input = in, .input_len = strlen(in),
        .timeout_s = s->timeout[op], .max_out = s->max_out,
        .max_err = MAX_ERR};
    if (proc_run(&spec, &r, err) == 0)
        rc = judge(s, op, &r, answer, err);
    else
        err->kind = LOOM_ETEMP;
out:
    if (rc < 0)
        fail(s, op_names[op], err);
    proc_result_fini(&r);
    free(exe);
    free(in);
    if (envp) {
        struct strv e = {envp, 0};
        while (envp[e.n])
            e.n++;
        strv_fini(&e);
    }
    return rc;
}

/* ---- operations ---------------------------------------------------------- */

static int script_probe(void *self, struct loom_error *err)
{
    struct script *s = self;
    char *exe = path_join(s->pack_dir, op_names[OP_NODES]);
    int ok = exe && access(exe, X_OK) == 0;

    free(exe);
    return ok ? 0 : loom_error_set(err, LOOM_EUNAVAIL, "cluster %s: pack %s "
                                   "is not installed in %s", s->cluster,
                                   s->pack, s->pack_dir);
}

static void script_describe(void *self, struct adaptor_desc *d)
{
    struct script *s = self;

    d->caps = s->caps;
    d->model = s->model;
}

static int script_nodes(void *self, struct cl_node_list *out,
                        struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (run(s, OP_NODES, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_nodes(a, out, err);
    json_decref(a);
    return rc < 0 ? fail(s, "nodes", err) : 0;
}

static int script_jobs(void *self, struct cl_job_list *out, int *complete,
                       struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (run(s, OP_JOBS, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_jobs(a, out, complete, err);
    json_decref(a);
    return rc < 0 ? fail(s, "jobs", err) : 0;
}

static int script_queues(void *self, struct cl_queue_list *out,
                         struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (run(s, OP_QUEUES, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_queues(a, out, err);
    json_decref(a);
    return rc < 0 ? fail(s, "queues", err) : 0;
}

static int job_op(struct script *s, int op, const char *native_id,
                  struct loom_error *err)
{
    const char *args[] = {native_id, NULL};
    json_t *a;

    if (!s->has[op])
        return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: %s is not "
                              "supported by pack %s", s->cluster,
                              op_names[op], s->pack);
    if (!native_id || !*native_id)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: %s: the job has "
                              "no id in the cluster yet", s->cluster,
                              op_names[op]);
    if (run(s, op, args, NULL, NULL, &a, err) < 0)
        return -1;
    json_decref(a);
    return 0;
}

static int script_cancel(void *self, const char *id, struct loom_error *err)
{
    return job_op(self, OP_CANCEL, id, err);
}

static int script_suspend(void *self, const char *id, struct loom_error *err)
{
    return job_op(self, OP_SUSPEND, id, err);
}

static int script_resume(void *self, const char *id, struct loom_error *err)
{
    return job_op(self, OP_RESUME, id, err);
}

static int script_hold(void *self, const char *id, struct loom_error *err)
{
    return job_op(self, OP_HOLD, id, err);
}

static int script_release(void *self, const char *id, struct loom_error *err)
{
    return job_op(self, OP_RELEASE, id, err);
}

static int script_set_node_state(void *self, const char *node,
                                 const char *state, const char *reason,
                                 struct loom_error *err)
{
    struct script *s = self;
    const char *args[] = {node, state, NULL};
    struct strv extra = {0};
    json_t *in = json_pack("{s:s?}", "reason", reason), *a = NULL;
    char buf[1024];
    int rc;

    if (!s->has[OP_SET_NODE_STATE])
        return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: setting node "
                              "state is not supported by pack %s", s->cluster,
                              s->pack);
    snprintf(buf, sizeof(buf), "LOOM_REASON=%s", reason ? reason : "");
    strv_push(&extra, buf);
    rc = run(s, OP_SET_NODE_STATE, args, in, &extra, &a, err);
    json_decref(in);
    json_decref(a);
    strv_fini(&extra);
    return rc;
}

/* The job's directory under workdir and its job file (mode 0755). */
static int job_files(struct script *s, const struct start_req *req,
                     char **dir, char **file, struct loom_error *err)
{
    char id[32], *text = script_job_file(req);
    FILE *f = NULL;

    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    *dir = path_join(s->workdir, id);
    *file = *dir ? path_join(*dir, "job.sh") : NULL;
    if (!text || !*file)
        goto oom;
    if (mkdir_p(*dir) < 0 || !(f = fopen(*file, "w")) ||
        fputs(text, f) == EOF || fclose(f) != 0 || chmod(*file, 0755) < 0) {
        if (f)
            fclose(f);
        loom_error_set(err, LOOM_ETEMP, "cluster %s: cannot write %s: %s",
                       s->cluster, *file, strerror(errno));
        free(text);
        return -1;
    }
    free(text);
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

static json_t *start_input(const struct start_req *req, const char *dir,
                           const char *out, const char *errf)
{
    json_t *env = json_object(), *nodes = json_array(), *cmd = json_null();
    char id[32];

    snprintf(id, sizeof(id), "%lld", (long long)req->loom_id);
    for (size_t i = 0; req->env && req->env[i]; i++) {
        const char *eq = strchr(req->env[i], '=');
        char name[256];
        if (!eq || (size_t)(eq - req->env[i]) >= sizeof(name))
            continue;
        memcpy(name, req->env[i], (size_t)(eq - req->env[i]));
        name[eq - req->env[i]] = '\0';
        json_object_set_new(env, name, json_string(eq + 1));
    }
    for (size_t i = 0; i < req->n_nodes; i++)
        json_array_append_new(nodes, json_string(req->nodes[i]));
    if (req->command) {
        cmd = json_array();
        for (size_t i = 0; req->command[i]; i++)
            json_array_append_new(cmd, json_string(req->command[i]));
    }
    return json_pack("{s:s, s:s?, s:s?, s:o, s:s?, s:o, s:o, s:i, s:I, s:i, "
                     "s:I, s:s?, s:s, s:s, s:s, s:s?}",
                     "loom_id", id, "name", req->name, "owner", req->owner,
                     "command", cmd, "script", req->script, "env", env,
                     "nodes", nodes, "cpus_per_node", req->cpus_per_node,
                     "memory_mb", (json_int_t)req->memory_mb, "gpus",
                     req->gpus, "walltime_s", (json_int_t)req->walltime_s,
                     "queue", req->queue, "workdir", dir, "stdout", out,
                     "stderr", errf, "native_id", req->native_id);
}

/* The cluster system gets the script with the directives Loom read
 * neutralised (core/directives.h): Loom applied them through the request,
 * in the CMS's terms; sbatch or qsub must not apply them again. */
static int script_start(void *self, const struct start_req *asked,
                        struct start_result *res, struct loom_error *err)
{
    struct script *s = self;
    struct start_req copy = *asked, *req = &copy;
    char *neutral = asked->script ? directives_neutralise(asked->script)
                                  : NULL;
    char *dir = NULL, *file = NULL, *out = NULL, *errf = NULL, id[32];
    char nodes[4096] = "";
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
    if (job_files(s, req, &dir, &file, err) < 0)
        goto out;
    out = path_join(dir, "stdout");
    errf = path_join(dir, "stderr");
    for (size_t i = 0; i < req->n_nodes; i++)
        snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%s%s",
                 i ? "," : "", req->nodes[i]);
    in = start_input(req, dir, out, errf);
    if (!out || !errf || !in ||
        push_env(&extra, "LOOM_JOB_ID", "%s", id) < 0 ||
        push_env(&extra, "LOOM_JOB_NAME", "%s", req->name ? req->name : "job") ||
        push_env(&extra, "LOOM_JOB_OWNER", "%s", req->owner ? req->owner : "") ||
        push_env(&extra, "LOOM_JOB_ACCOUNT", "%s",
                 req->account ? req->account : "") ||
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
        push_env(&extra, "LOOM_JOB_SCRIPT", "%s", file) ||
        push_env(&extra, "LOOM_JOB_WORKDIR", "%s", dir) ||
        push_env(&extra, "LOOM_JOB_STDOUT", "%s", out) ||
        push_env(&extra, "LOOM_JOB_STDERR", "%s", errf)) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (run(s, OP_START, args, in, &extra, &a, err) < 0)
        goto out;
    native = json_string_value(json_object_get(a, "native_id"));
    if (!native || !*native) {
        loom_error_set(err, LOOM_ETEMP, "answer does not follow the "
                       "protocol: no \"native_id\"");
        fail(s, "start", err);
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
    free(dir);
    free(file);
    free(out);
    free(errf);
    free(neutral);
    return rc;
}

static const char *const script_conf_keys[] = {
    "pack", "workdir", "max_output_bytes", "env.", "timeout.", NULL,
};

const struct adaptor_type adaptor_script = {
    .name = "script",
    .conf_keys = script_conf_keys,
    .poll_s = 5.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_HOLD | LOOM_CAP_NODE_STATE,
    .model = LOOM_MODEL_DISABLED_SCHEDULER,
    .create = script_create,
    .destroy = script_destroy,
    .probe = script_probe,
    .describe = script_describe,
    .nodes = script_nodes,
    .jobs = script_jobs,
    .queues = script_queues,
    .start = script_start,
    .cancel = script_cancel,
    .set_node_state = script_set_node_state,
    .suspend = script_suspend,
    .resume = script_resume,
    .hold = script_hold,
    .release = script_release,
};
