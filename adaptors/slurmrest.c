/* slurmrest.c - the slurmrestd adaptor: configuration and fallback. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <openssl/crypto.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/curlloop.h"
#include "adaptors/slurmrest.h"
#include "core/log.h"

#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_MAX_BYTES (64L << 20)

const char *const srest_versions[SREST_N_VERSIONS] = {
    "v0.0.38", "v0.0.37", "v0.0.36",
};

extern const struct adaptor_type adaptor_script;

/* ---- configuration ---------------------------------------------------- */

static int set_version(struct srest *s, struct conf_section *sec,
                       const char *v, struct loom_error *err)
{
    if (!strcmp(v, "auto"))
        return 0;
    for (int i = 0; i < SREST_N_VERSIONS; i++)
        if (!strcmp(v, srest_versions[i])) {
            s->vi = i;
            s->fixed = 1;
            return 0;
        }
    return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] api_version: "
                          "'%s' is not one Loom reads: auto, v0.0.38, v0.0.37 "
                          "or v0.0.36", sec->file, sec->line, sec->name, v);
}

/* The key file: private to loomd's account, 32 bytes at least (Slurm's
 * jwt_key wants a strong key). */
static int read_key(struct srest *s, const char *path, struct loom_error *err)
{
    FILE *f = fopen(path, "rbe");
    unsigned char buf[4096];
    struct stat st;
    size_t n;

    if (!f)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: jwt_key_file %s: "
                              "%s", s->cluster, path, strerror(errno));
    if (fstat(fileno(f), &st) == 0 && (st.st_mode & 077)) {
        fclose(f);
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: jwt_key_file %s "
                              "is readable by others (mode %03o): it signs "
                              "tokens for any user; chmod 600 it", s->cluster,
                              path, (unsigned)(st.st_mode & 0777));
    }
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    if (n < 32 || n == sizeof(buf)) {
        OPENSSL_cleanse(buf, sizeof(buf));
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: jwt_key_file %s: "
                              "%zu bytes; a key is 32 to 4095 bytes", s->cluster,
                              path, n);
    }
    s->key = malloc(n);
    if (s->key) {
        memcpy(s->key, buf, n);
        s->key_len = n;
    }
    OPENSSL_cleanse(buf, sizeof(buf));
    return s->key ? 0 : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}

static int set_auth(struct srest *s, struct conf_section *sec,
                    struct loom_error *err)
{
    const char *key, *tokf, *user;
    struct passwd *pw;

    if (conf_get_str(sec, "jwt_key_file", NULL, &key, err) < 0 ||
        conf_get_str(sec, "token_file", NULL, &tokf, err) < 0 ||
        conf_get_str(sec, "user", NULL, &user, err) < 0)
        return -1;
    if (key && tokf)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: "
                              "jwt_key_file and token_file: give one", sec->file,
                              sec->line, sec->name);
    if (user && !key)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] user: "
                              "only with jwt_key_file (a token_file names its "
                              "user)", sec->file, sec->line, sec->name);
    if (key) {
        s->auth = SREST_KEY;
        pw = user ? NULL : getpwuid(geteuid());
        s->user = strdup(user ? user : pw ? pw->pw_name : "root");
        return s->user ? read_key(s, key, err)
                       : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    if (tokf) {
        struct stat st;
        s->auth = SREST_TOKEN_FILE;
        s->token_file = strdup(tokf);
        if (access(tokf, R_OK) < 0 || stat(tokf, &st) < 0)
            return loom_error_set(err, LOOM_EINVAL, "cluster %s: token_file "
                                  "%s: %s", s->cluster, tokf, strerror(errno));
        if (st.st_mode & 077)
            return loom_error_set(err, LOOM_EINVAL, "cluster %s: token_file "
                                  "%s is readable by others (mode %03o): it "
                                  "speaks for other users; chmod 600 it",
                                  s->cluster, tokf,
                                  (unsigned)(st.st_mode & 0777));
        return s->token_file ? 0 : loom_error_set(err, LOOM_EINTERNAL,
                                                  "out of memory");
    }
    s->auth = SREST_LOCAL;
    if (!s->socket)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: over "
                              "TCP slurmrestd needs a JSON Web Token: give "
                              "jwt_key_file or token_file (without either, "
                              "url must be unix:/PATH, rest_auth/local)",
                              sec->file, sec->line, sec->name);
    return 0;
}

/* The fallback pack: a script adaptor instance of its own, made from this
 * section's pack name, workdir and env.* keys, and LOOM_PARTITION from
 * partition (the slurm pack's nodes, queues and default partition) unless
 * an env.LOOM_PARTITION of the section says otherwise. */
static int make_pack(struct srest *s, struct conf_section *sec,
                     const struct adaptor_env *env, struct loom_error *err)
{
    struct conf_entry *e = calloc(sec->n_entries + 3, sizeof(*e));
    struct conf_section ps = {.kind = sec->kind, .name = sec->name,
                              .line = sec->line, .file = sec->file,
                              .entries = e};
    size_t n = 0;
    int rc;

    if (!e)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    e[n++] = (struct conf_entry){.key = "pack", .value = s->pack_name,
                                 .line = sec->line};
    if (s->workdir)
        e[n++] = (struct conf_entry){.key = "workdir", .value = s->workdir,
                                     .line = sec->line};
    if (s->partition && !conf_get(sec, "env.LOOM_PARTITION"))
        e[n++] = (struct conf_entry){.key = "env.LOOM_PARTITION",
                                     .value = s->partition,
                                     .line = sec->line};
    for (size_t i = 0; i < sec->n_entries; i++)
        if (!strncmp(sec->entries[i].key, "env.", 4))
            e[n++] = sec->entries[i];
    ps.n_entries = n;
    s->pack_type = &adaptor_script;
    rc = adaptor_script.create(&ps, env, &s->pack, err);
    free(e);
    return rc < 0 ? loom_error_prefix(err, "fallback_pack") : 0;
}

/* How long an ended job waits for slurmdbd's record: the slurm pack's
 * env.LOOM_SLURM_ACCT_GRACE_S, so that one key says it for both. */
static int acct_grace(struct srest *s, struct conf_section *sec,
                      struct loom_error *err)
{
    static const char key[] = "LOOM_SLURM_ACCT_GRACE_S=";
    char *end;

    s->acct_grace_s = 30;
    for (size_t i = 0; i < s->env.n; i++) {
        const char *v = s->env.v[i] + sizeof(key) - 1;
        if (strncmp(s->env.v[i], key, sizeof(key) - 1) != 0)
            continue;
        s->acct_grace_s = strtod(v, &end);
        if (end == v || *end || !(s->acct_grace_s >= 0) ||
            s->acct_grace_s > 3600)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                                  "env.LOOM_SLURM_ACCT_GRACE_S: '%s' is not "
                                  "a number of seconds from 0 to 3600",
                                  sec->file, sec->line, sec->name, v);
    }
    return 0;
}

static void srest_destroy(void *self)
{
    struct srest *s = self;

    if (!s)
        return;
    srest_ops_drop(s);
    srest_usage_drop(s);
    if (s->pack)
        s->pack_type->destroy(s->pack);
    if (s->key)
        OPENSSL_cleanse(s->key, s->key_len);
    if (s->token)
        OPENSSL_cleanse(s->token, strlen(s->token));
    free(s->key);
    free(s->token);
    free(s->token_user);
    free(s->token_file);
    free(s->user);
    free(s->cluster);
    free(s->url);
    free(s->socket);
    free(s->partition);
    free(s->workdir);
    free(s->pack_name);
    strv_fini(&s->env);
    cl_node_list_fini(&s->nodes);
    cl_queue_list_fini(&s->parts);
    hmap_fini(&s->tried);
    free(s);
}

static int srest_create(struct conf_section *sec,
                        const struct adaptor_env *env, void **self,
                        struct loom_error *err)
{
    struct srest *s = calloc(1, sizeof(*s));
    const char *url, *ver, *part, *workdir, *pack;
    long max;

    if (!s)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    hmap_init(&s->tried);
    hmap_init(&s->usage);
    s->loop = env->loop;
    if (!(s->cluster = strdup(env->cluster)))
        goto oom;
    if (conf_get_str(sec, "url", NULL, &url, err) < 0 ||
        conf_get_str(sec, "api_version", "auto", &ver, err) < 0 ||
        conf_get_str(sec, "partition", NULL, &part, err) < 0 ||
        conf_get_str(sec, "workdir", NULL, &workdir, err) < 0 ||
        conf_get_str(sec, "fallback_pack", "slurm", &pack, err) < 0 ||
        conf_get_double(sec, "timeout_s", DEFAULT_TIMEOUT_S, 0.1, 3600,
                        &s->timeout_s, err) < 0 ||
        conf_get_long(sec, "max_answer_bytes", DEFAULT_MAX_BYTES, 65536,
                      1L << 30, &max, err) < 0 ||
        conf_get_bool(sec, "conditional_polls", 1, &s->conditional, err) < 0 ||
        conf_get_prefixed(sec, "env.", &s->env, err) < 0)
        goto error;
    if (!url) {
        loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] needs 'url = "
                       "unix:/PATH' or 'url = http://HOST:PORT' (slurmrestd)",
                       sec->file, sec->line, sec->name);
        goto error;
    }
    s->max_bytes = (size_t)max;
    if (acct_grace(s, sec, err) < 0)
        goto error;
    if (curlloop_url_parse(sec, url, 0, &s->url, &s->socket, err) < 0 ||
        set_version(s, sec, ver, err) < 0 ||
        set_auth(s, sec, err) < 0)
        goto error;
    if ((part && !(s->partition = strdup(part))) ||
        (workdir && !(s->workdir = strdup(workdir))))
        goto oom;
    if (strcmp(pack, "none") != 0) {
        if (!(s->pack_name = strdup(pack)))
            goto oom;
        snprintf(s->via_pack, sizeof(s->via_pack), "pack %s", pack);
        if (make_pack(s, sec, env, err) < 0)
            goto error;
    }
    if (!s->workdir) {
        size_t n = strlen(env->state_dir) + strlen(env->cluster) + 32;
        if (!(s->workdir = malloc(n)))
            goto oom;
        snprintf(s->workdir, n, "%s/clusters/%s/jobs", env->state_dir,
                 env->cluster);
    }
    if (s->auth == SREST_LOCAL && !s->pack) {
        loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] url = unix: "
                       "(rest_auth/local) acts as slurmrestd's own account "
                       "whoever asks: starts, cancels, holds and releases go "
                       "to the fallback pack, and fallback_pack = none "
                       "leaves none (use jwt_key_file over http:, or a "
                       "fallback_pack)", sec->file, sec->line, sec->name);
        goto error;
    }
    *self = s;
    return 0;
oom:
    loom_error_set(err, LOOM_EINTERNAL, "out of memory");
error:
    srest_destroy(s);
    return -1;
}

/* ---- what goes which way ----------------------------------------------- */

static int probe(void *self, struct loom_error *err)
{
    struct srest *s = self;

    if (s->socket && access(s->socket, F_OK) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "cluster %s: no slurmrestd "
                              "socket %s: %s", s->cluster, s->socket,
                              strerror(errno));
    return 0;
}

int srest_as_pack(const struct srest *s, int op)
{
    return s->auth == SREST_LOCAL &&
           (op == LOOM_OP_START || op == LOOM_OP_CANCEL ||
            op == LOOM_OP_HOLD || op == LOOM_OP_RELEASE);
}

/* What only the pack can do (suspend, node states, reservations) is
 * offered when the fallback pack offers it. Every job runs as its
 * account: submitted as it with a JWT, by the pack under rest_auth/local. */
static void srest_describe(void *self, struct adaptor_desc *d)
{
    struct srest *s = self;
    unsigned pack_only = LOOM_CAP_SUSPEND | LOOM_CAP_NODE_STATE |
                         LOOM_CAP_RESERVE;
    struct adaptor_desc pd = {0};

    d->runs_as_user = 1;
    if (s->pack) {
        pd.caps = s->pack_type->caps;
        if (s->pack_type->describe)
            s->pack_type->describe(s->pack, &pd);
    }
    d->caps &= ~(pack_only & ~pd.caps);
}

static const char *srest_via(void *self, enum adaptor_op op)
{
    struct srest *s = self;
    int api = op == LOOM_OP_NODES || op == LOOM_OP_JOBS ||
              op == LOOM_OP_QUEUES || op == LOOM_OP_START ||
              op == LOOM_OP_CANCEL || op == LOOM_OP_HOLD ||
              op == LOOM_OP_RELEASE;

    /* v0.0.36 has no node flags, allocations nor partition states. */
    if (s->vi == 2 && (op == LOOM_OP_NODES || op == LOOM_OP_QUEUES))
        api = 0;
    if (srest_as_pack(s, op))
        api = 0;
    if (!api)
        return s->pack ? s->via_pack : NULL;
    snprintf(s->via, sizeof(s->via), "slurmrestd %s%s", srest_versions[s->vi],
             s->settled || s->fixed ? "" : "?");
    return s->via;
}

/* ---- the blocking ops: the fallback pack, on the worker ---------------- */

static int no_pack(struct srest *s, const char *op, struct loom_error *err)
{
    return loom_error_set(err, LOOM_ENOTSUP, "cluster %s: %s: slurmrestd "
                          "cannot, and no fallback_pack is set", s->cluster,
                          op);
}

#define PACK(s) ((struct srest *)(s))->pack
#define PACK_OP(s, op, name, ...)                                           \
    (PACK(s) ? ((struct srest *)(s))->pack_type->op(PACK(s), __VA_ARGS__)   \
             : no_pack(s, name, err))

static int b_nodes(void *s, struct cl_node_list *out, struct loom_error *err)
{
    return PACK_OP(s, nodes, "nodes", out, err);
}

static int b_jobs(void *s, struct cl_job_list *out, int *complete,
                  struct loom_error *err)
{
    return PACK_OP(s, jobs, "jobs", out, complete, err);
}

static int b_queues(void *s, struct cl_queue_list *out, struct loom_error *err)
{
    return PACK_OP(s, queues, "queues", out, err);
}

static int b_start(void *s, const struct start_req *req,
                   struct start_result *out, struct loom_error *err)
{
    return PACK_OP(s, start, "start", req, out, err);
}

static int b_cancel(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, cancel, "cancel", id, err);
}

static int b_node_state(void *s, const char *node, const char *state,
                        const char *reason, struct loom_error *err)
{
    return PACK_OP(s, set_node_state, "set_node_state", node, state, reason,
                   err);
}

static int b_suspend(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, suspend, "suspend", id, err);
}

static int b_resume(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, resume, "resume", id, err);
}

static int b_hold(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, hold, "hold", id, err);
}

static int b_release(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, release, "release", id, err);
}

static int b_reserve(void *s, const struct resv_spec *spec, char **id,
                     struct loom_error *err)
{
    *id = NULL;
    return PACK_OP(s, reserve, "reserve", spec, id, err);
}

static int b_unreserve(void *s, const char *id, struct loom_error *err)
{
    return PACK_OP(s, unreserve, "unreserve", id, err);
}

static const char *const srest_conf_keys[] = {
    "url", "api_version", "jwt_key_file", "user", "token_file", "timeout_s",
    "max_answer_bytes", "partition", "workdir", "fallback_pack",
    "conditional_polls", "env.", NULL,
};

const struct adaptor_type adaptor_slurmrest = {
    .name = "slurmrest",
    .conf_keys = srest_conf_keys,
    .poll_s = 2.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_HOLD | LOOM_CAP_NODE_STATE |
            LOOM_CAP_RESERVE,
    .model = LOOM_MODEL_DISABLED_SCHEDULER,
    .create = srest_create,
    .destroy = srest_destroy,
    .probe = probe,
    .describe = srest_describe,
    .nodes = b_nodes,
    .jobs = b_jobs,
    .queues = b_queues,
    .start = b_start,
    .cancel = b_cancel,
    .set_node_state = b_node_state,
    .suspend = b_suspend,
    .resume = b_resume,
    .hold = b_hold,
    .release = b_release,
    .reserve = b_reserve,
    .unreserve = b_unreserve,
    .call = srest_call,
    .via = srest_via,
};
