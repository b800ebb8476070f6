/* loompeer.c - the loom adaptor: one cluster of another loomd (the inner
 * one) seen as a cluster of this one, through its REST API. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adaptors/curlloop.h"
#include "adaptors/loompeer.h"
#include "core/token.h"

#define DEFAULT_TIMEOUT_S 10.0
#define DEFAULT_MAX_BYTES (64L << 20)
/* A job narrowed to what a poll reads is well under 1 KiB but for its
 * environment (up to LOOM_JOB_ENV_MAX variables): 2,000 of them keep
 * within max_answer_bytes, and one page holds the jobs of most polls (a
 * list of one page is asked for again with its ETag). */
#define DEFAULT_PAGE 2000

static void lpeer_destroy(void *self)
{
    struct lpeer *p = self;

    if (!p)
        return;
    lpeer_ops_drop(p);
    hmap_fini_values(&p->account, free);
    free(p->jobs_pages);
    token_key_free(p->key, p->key_len);
    free(p->cluster);
    free(p->inner);
    free(p->url);
    free(p->socket);
    free(p->ca_file);
    free(p->cert_file);
    free(p->key_file);
    free(p->token_file);
    free(p->token_dir);
    free(p);
}

/* token_dir: a directory only loomd's account may enter, as its files are
 * secrets that speak for users. */
static int check_dir(struct conf_section *sec, const char *dir,
                     struct loom_error *err)
{
    struct stat st;

    if (stat(dir, &st) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                              "token_dir %s: %s", sec->file, sec->line,
                              sec->name, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                              "token_dir %s is not a directory", sec->file,
                              sec->line, sec->name, dir);
    if (st.st_mode & 077)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                              "token_dir %s may be entered by others (mode "
                              "%03o): its tokens speak for users; chmod 700 "
                              "it", sec->file, sec->line, sec->name, dir,
                              (unsigned)(st.st_mode & 0777));
    return 0;
}

/* The marker key: state_dir/clusters/NAME/marker.key, made once (32
 * random bytes, 0600), so that markers outlive a restart. */
static int load_key(struct lpeer *p, const struct adaptor_env *env,
                    struct loom_error *err)
{
    char dir[4096], path[4200];

    snprintf(dir, sizeof(dir), "%s/clusters", env->state_dir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: cannot make "
                              "%s: %s", p->cluster, dir, strerror(errno));
    snprintf(dir, sizeof(dir), "%s/clusters/%s", env->state_dir, p->cluster);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return loom_error_set(err, LOOM_EINVAL, "cluster %s: cannot make "
                              "%s: %s", p->cluster, dir, strerror(errno));
    snprintf(path, sizeof(path), "%s/marker.key", dir);
    return token_key_load(path, 1, &p->key, &p->key_len, err);
}

int lpeer_marker(const struct lpeer *p, long long id, char *out)
{
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    char msg[24];
    int n = snprintf(msg, sizeof(msg), "%lld", id);

    if (!HMAC(EVP_sha256(), p->key, (int)p->key_len,
              (const unsigned char *)msg, (size_t)n, mac, &len) ||
        len < LPEER_MAC_LEN)
        return -1;
    n = snprintf(out, LPEER_MARKER_MAX, "%s.", msg);
    for (int i = 0; i < LPEER_MAC_LEN; i++)
        n += snprintf(out + n, LPEER_MARKER_MAX - (size_t)n, "%02x", mac[i]);
    return 0;
}

long long lpeer_marker_id(const struct lpeer *p, const char *marker)
{
    char want[LPEER_MARKER_MAX], *end;
    long long id = strtoll(marker, &end, 10);

    if (id <= 0 || *end != '.' || lpeer_marker(p, id, want) < 0 ||
        strlen(marker) != strlen(want))
        return 0;
    return CRYPTO_memcmp(want, marker, strlen(want)) == 0 ? id : 0;
}

/* ca_file, cert_file and key_file: for https only; a certificate with its
 * key; files loomd's account can read, the key no other account. */
static int set_tls(struct lpeer *p, struct conf_section *sec,
                   struct loom_error *err)
{
    const char *ca, *cert, *key;
    const char *const *f[] = {&ca, &cert, &key};
    static const char *const names[] = {"ca_file", "cert_file", "key_file"};
    struct stat st;

    if (conf_get_str(sec, "ca_file", NULL, &ca, err) < 0 ||
        conf_get_str(sec, "cert_file", NULL, &cert, err) < 0 ||
        conf_get_str(sec, "key_file", NULL, &key, err) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        if (!*f[i])
            continue;
        if (strncmp(p->url, "https://", 8) != 0)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                                  "%s: only with an https:// url",
                                  sec->file, sec->line, sec->name, names[i]);
        if (access(*f[i], R_OK) < 0)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                                  "%s %s: %s", sec->file, sec->line,
                                  sec->name, names[i], *f[i],
                                  strerror(errno));
    }
    if (!cert != !key)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s]: "
                              "cert_file and key_file go together",
                              sec->file, sec->line, sec->name);
    if (key && stat(key, &st) == 0 && (st.st_mode & 077))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] "
                              "key_file %s is readable by others (mode "
                              "%03o); chmod 600 it", sec->file, sec->line,
                              sec->name, key, (unsigned)(st.st_mode & 0777));
    if ((ca && !(p->ca_file = strdup(ca))) ||
        (cert && !(p->cert_file = strdup(cert))) ||
        (key && !(p->key_file = strdup(key))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

static int lpeer_create(struct conf_section *sec,
                        const struct adaptor_env *env, void **self,
                        struct loom_error *err)
{
    struct lpeer *p = calloc(1, sizeof(*p));
    const char *url, *inner, *tokf, *tokd;
    long max;

    if (!p)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    hmap_init(&p->account);
    p->loop = env->loop;
    if (conf_get_str(sec, "url", NULL, &url, err) < 0 ||
        conf_get_str(sec, "cluster", NULL, &inner, err) < 0 ||
        conf_get_str(sec, "token_file", NULL, &tokf, err) < 0 ||
        conf_get_str(sec, "token_dir", NULL, &tokd, err) < 0 ||
        conf_get_double(sec, "timeout_s", DEFAULT_TIMEOUT_S, 0.1, 3600,
                        &p->timeout_s, err) < 0 ||
        conf_get_long(sec, "max_answer_bytes", DEFAULT_MAX_BYTES, 65536,
                      1L << 30, &max, err) < 0 ||
        conf_get_long(sec, "jobs_page", DEFAULT_PAGE, 1, 100000, &p->page,
                      err) < 0)
        goto error;
    p->max_bytes = (size_t)max;
    if (!url || !inner || !tokf || !tokd) {
        loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] needs %s (the "
                       "inner loomd's url, the cluster of it this one is, "
                       "this loomd's token there and the directory of the "
                       "tokens of the accounts it may act for)", sec->file,
                       sec->line, sec->name,
                       !url ? "url" : !inner ? "cluster"
                       : !tokf ? "token_file" : "token_dir");
        goto error;
    }
    if (!lpeer_name_ok(inner)) {
        loom_error_set(err, LOOM_EINVAL, "%s:%d: [cluster %s] cluster: '%s' "
                       "is not a cluster name (letters, digits, . _ -)",
                       sec->file, sec->line, sec->name, inner);
        goto error;
    }
    if (curlloop_url_parse(sec, url, 1, &p->url, &p->socket, err) < 0 ||
        set_tls(p, sec, err) < 0 || check_dir(sec, tokd, err) < 0)
        goto error;
    if (!(p->cluster = strdup(env->cluster)) || !(p->inner = strdup(inner)) ||
        !(p->token_file = strdup(tokf)) || !(p->token_dir = strdup(tokd))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (load_key(p, env, err) < 0)
        goto error;
    snprintf(p->via, sizeof(p->via), "loomd cluster %s", p->inner);
    *self = p;
    return 0;
error:
    lpeer_destroy(p);
    return -1;
}

static int probe(void *self, struct loom_error *err)
{
    struct lpeer *p = self;

    if (p->socket && access(p->socket, F_OK) < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "cluster %s: no loomd "
                              "socket %s: %s", p->cluster, p->socket,
                              strerror(errno));
    return 0;
}

/* Every job runs there as its own account (a token of token_dir). */
static void lpeer_describe(void *self, struct adaptor_desc *d)
{
    (void)self;
    d->runs_as_user = 1;
}

static const char *lpeer_via(void *self, enum adaptor_op op)
{
    (void)op;
    return ((struct lpeer *)self)->via;
}

/* ---- the blocking ops ----------------------------------------------------
 * Every op goes through call() on the server thread; one that could not be
 * begun there (out of memory) comes here and says so. */

static int not_begun(void *self, const char *op, struct loom_error *err)
{
    return loom_error_set(err, LOOM_ETEMP, "cluster %s: %s: the request "
                          "could not be begun (out of memory)",
                          ((struct lpeer *)self)->cluster, op);
}

static int b_nodes(void *s, struct cl_node_list *out, struct loom_error *err)
{
    (void)out;
    return not_begun(s, "nodes", err);
}

static int b_jobs(void *s, struct cl_job_list *out, int *complete,
                  struct loom_error *err)
{
    (void)out;
    (void)complete;
    return not_begun(s, "jobs", err);
}

static int b_queues(void *s, struct cl_queue_list *out, struct loom_error *err)
{
    (void)out;
    return not_begun(s, "queues", err);
}

static int b_start(void *s, const struct start_req *req,
                   struct start_result *out, struct loom_error *err)
{
    (void)req;
    (void)out;
    return not_begun(s, "start", err);
}

static int b_job(void *s, const char *id, struct loom_error *err)
{
    (void)id;
    return not_begun(s, "job control", err);
}

static int b_node_state(void *s, const char *node, const char *state,
                        const char *reason, struct loom_error *err)
{
    (void)node;
    (void)state;
    (void)reason;
    return not_begun(s, "set_node_state", err);
}

static const char *const lpeer_conf_keys[] = {
    "url", "cluster", "token_file", "token_dir", "timeout_s",
    "max_answer_bytes", "jobs_page", "ca_file", "cert_file", "key_file",
    NULL,
};

const struct adaptor_type adaptor_loom = {
    .name = "loom",
    .conf_keys = lpeer_conf_keys,
    .poll_s = 2.0,
    .version = LOOM_ADAPTOR_VERSION,
    .caps = LOOM_CAP_SUSPEND | LOOM_CAP_HOLD | LOOM_CAP_NODE_STATE,
    .model = LOOM_MODEL_DISABLED_SCHEDULER,
    .create = lpeer_create,
    .destroy = lpeer_destroy,
    .probe = probe,
    .describe = lpeer_describe,
    .nodes = b_nodes,
    .jobs = b_jobs,
    .queues = b_queues,
    .start = b_start,
    .cancel = b_job,
    .set_node_state = b_node_state,
    .suspend = b_job,
    .resume = b_job,
    .hold = b_job,
    .release = b_job,
    .call = lpeer_call,
    .via = lpeer_via,
};
