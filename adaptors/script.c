/* script.c - the script adaptor: one pack executable per operation. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/script.h"
#include "core/accounts.h"
#include "core/log.h"
#include "core/proc.h"

#define DEFAULT_TIMEOUT_S 30.0
#define DEFAULT_MAX_OUT (1 << 20)
#define MAX_ERR (64 << 10)

const char *const script_op_names[N_OPS] = {
    "nodes", "jobs", "queues", "start", "cancel", "set-node-state",
    "suspend", "resume", "hold", "release", "reserve", "unreserve",
};


static int op_of(const char *name)
{
    for (int i = 0; i < N_OPS; i++)
        if (!strcmp(script_op_names[i], name))
            return i;
    return -1;
}

int script_fail(const struct script *s, const char *op, struct loom_error *err)
{
    return loom_error_prefix(err, "cluster %s: pack %s: %s", s->cluster,
                             s->pack, op);
}

/* ---- configuration ----------------------------------------------------- */

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

char *script_path_join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);

    if (p)
        snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* Read pack.json: protocol, model, whether start submits as the job's
 * account, the ops (each an executable). */
static int read_manifest(struct script *s, struct loom_error *err)
{
    char *path = script_path_join(s->pack_dir, "pack.json");
    json_error_t je;
    json_t *m = path ? json_load_file(path, 0, &je) : NULL, *ops, *v, *rau;
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
    rau = json_object_get(m, "runs_as_user");
    if (rau && !json_is_boolean(rau)) {
        loom_error_set(err, LOOM_EINVAL, "pack %s: pack.json: runs_as_user "
                       "must be true or false", s->pack);
        goto out;
    }
    s->runs_as_user = json_is_true(rau);
    ops = json_object_get(m, "ops");
    json_array_foreach(ops, i, v) {
        int op = json_is_string(v) ? op_of(json_string_value(v)) : -1;
        char *exe = op >= 0 ? script_path_join(s->pack_dir, script_op_names[op]) : NULL;
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
                           "'%s' is missing", s->pack, script_op_names[op]);
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
    free(s->runas);
    free(s->single_account);
    strv_fini(&s->env);
    free(s);
}

int script_mkdir_p(const char *path)
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

/* Whose jobs the cluster takes: a pack that submits as the job's account
 * takes anyone's; any other runs every job as one account, which its
 * section must name (single_account), and then takes only that account's
 * jobs. */
static int read_accounts(struct script *s, struct conf_section *sec,
                         const struct adaptor_env *env,
                         struct loom_error *err)
{
    const char *one;

    if (conf_get_str(sec, "single_account", NULL, &one, err) < 0)
        return -1;
    if (one && !accounts_name_ok(one))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                              "single_account: '%s' is not an account name",
                              sec->file, sec->line, sec->name, one);
    if (!one && !s->runs_as_user)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: pack %s does "
                              "not submit jobs as their own accounts (its "
                              "pack.json does not say \"runs_as_user\": "
                              "true); name the one account every job of "
                              "this cluster runs as with single_account = "
                              "ACCOUNT in [cluster %s]", s->cluster, s->pack,
                              s->cluster);
    if (one && !(s->single_account = strdup(one)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    s->runas = script_path_join(env->libexec_dir ? env->libexec_dir : LOOM_LIBEXECDIR,
                         "loom-runas");
    return s->runas ? 0 : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
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
        conf_get_prefixed(sec, "env.", &s->env, err) < 0 ||
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
    s->workdir = workdir ? strdup(workdir) : script_path_join(s->dir, "jobs");
    if (!s->pack || !s->pack_dir || !s->workdir)
        goto oom;
    if (script_mkdir_p(s->dir) < 0 || script_mkdir_p(s->workdir) < 0) {
        loom_error_set(err, LOOM_EINVAL, "cluster %s: cannot create %s: %s",
                       s->cluster, s->workdir, strerror(errno));
        goto error;
    }
    if (read_manifest(s, err) < 0 || read_accounts(s, sec, env, err) < 0)
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

/* The environment of a run: PATH and HOME, the section's env.*, LOOM_*
 * (LOOM_TIMEOUT_S: the op's time limit, whole seconds rounded up), then the
 * op's own (extra). */
static char **run_env(const struct script *s, int op, const struct strv *extra)
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
    snprintf(buf, sizeof(buf), "LOOM_OP=%s", script_op_names[op]);
    rc |= strv_push(&e, buf);
    snprintf(buf, sizeof(buf), "LOOM_TIMEOUT_S=%ld",
             (long)s->timeout[op] + (s->timeout[op] > (long)s->timeout[op]));
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

int script_run(struct script *s, int op, const char *const *args,
               json_t *input, const struct strv *extra, json_t **answer,
               struct loom_error *err)
{
    char *exe = script_path_join(s->pack_dir, script_op_names[op]);
    char *in = input ? json_dumps(input, JSON_COMPACT) : strdup("{}");
    char **envp = run_env(s, op, extra);
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
        script_fail(s, script_op_names[op], err);
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
    char *exe = script_path_join(s->pack_dir, script_op_names[OP_NODES]);
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
    d->runs_as_user = s->runs_as_user;
    d->single_account = s->single_account;
}

static int script_nodes(void *self, struct cl_node_list *out,
                        struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (script_run(s, OP_NODES, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_nodes(a, out, err);
    json_decref(a);
    return rc < 0 ? script_fail(s, "nodes", err) : 0;
}

static int script_jobs(void *self, struct cl_job_list *out, int *complete,
                       struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (script_run(s, OP_JOBS, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_jobs(a, out, complete, err);
    json_decref(a);
    return rc < 0 ? script_fail(s, "jobs", err) : 0;
}

static int script_queues(void *self, struct cl_queue_list *out,
                         struct loom_error *err)
{
    struct script *s = self;
    json_t *a;
    int rc;

    if (script_run(s, OP_QUEUES, NULL, NULL, NULL, &a, err) < 0)
        return -1;
    rc = script_parse_queues(a, out, err);
    json_decref(a);
    return rc < 0 ? script_fail(s, "queues", err) : 0;
}

static int job_op(struct script *s, int op, const char *native_id,
                  struct loom_error *err)
{
    const char *args[] = {native_id, NULL};
    json_t *a;

    if (!s->has[op])
        return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: %s is not "
                              "supported by pack %s", s->cluster,
                              script_op_names[op], s->pack);
    if (!native_id || !*native_id)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: %s: the job has "
                              "no id in the cluster yet", s->cluster,
                              script_op_names[op]);
    if (script_run(s, op, args, NULL, NULL, &a, err) < 0)
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
    rc = script_run(s, OP_SET_NODE_STATE, args, in, &extra, &a, err);
    json_decref(in);
    json_decref(a);
    strv_fini(&extra);
    return rc;
}

static const char *const script_conf_keys[] = {
    "pack", "workdir", "max_output_bytes", "env.", "timeout.",
    "single_account", NULL,
};

const struct adaptor_type adaptor_script = {
    .name = "script",
    .conf_keys = script_conf_keys,
    .poll_s = 5.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_HOLD | LOOM_CAP_NODE_STATE |
            LOOM_CAP_RESERVE, /* a pack's list narrows them (describe) */
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
    .reserve = script_reserve,
    .unreserve = script_unreserve,
};
