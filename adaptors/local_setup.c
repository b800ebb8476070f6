/* local_setup.c - the local adaptor's start: its configuration, paths,
 * cgroups, node states, and the jobs its directories hold. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/local_state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"

#define KEEP_FINISHED_S (7 * 24 * 3600)
#define NODES_STATE "nodes.state"
#define CGROUPS_FILE "cgroups" /* where the jobs' cgroups are: for people */

const char *const local_admin_names[] = {"up", "drain", "down"};

static int split_features(struct strv *v, const char *list,
                          struct loom_error *err)
{
    const char *p = list;

    for (;;) {
        const char *end = strchr(p, ','), *q = end ? end : p + strlen(p);
        char item[128];
        int n;

        while (p < q && isspace((unsigned char)*p))
            p++;
        while (q > p && isspace((unsigned char)q[-1]))
            q--;
        n = (int)(q - p);
        if (n == 0 || n >= (int)sizeof(item))
            return loom_error_set(err, LOOM_EINVAL, "features: an empty or "
                                  "too long name in '%s'", list);
        snprintf(item, sizeof(item), "%.*s", n, p);
        if (strv_push(v, item) < 0)
            return local_oom(err);
        if (!end)
            return 0;
        p = end + 1;
    }
}

static int read_config(struct local *l, struct conf_section *sec,
                       int *confine, struct loom_error *err)
{
    long nodes, cpus, gpus;
    const char *features;

    if (conf_get_bool(sec, "confine", 1, confine, err) < 0 ||
        conf_get_long(sec, "pids_max", 0, 0, 1L << 22, &l->ctx.pids_max,
                      err) < 0 ||
        conf_get_long(sec, "nodes", 4, 1, 4096, &nodes, err) < 0 ||
        conf_get_long(sec, "cpus_per_node", 1, 1, 1024, &cpus, err) < 0 ||
        conf_get_long(sec, "memory_mb", 1024, 1, 1L << 30, &l->memory_mb,
                      err) < 0 ||
        conf_get_long(sec, "gpus", 0, 0, 1024, &gpus, err) < 0 ||
        conf_get_str(sec, "features", NULL, &features, err) < 0)
        return -1;
    l->n_nodes = (int)nodes;
    l->cpus = (int)cpus;
    l->gpus = (int)gpus;
    if (features && split_features(&l->features, features, err) < 0)
        return -1;
    l->nodes = calloc((size_t)nodes, sizeof(*l->nodes));
    return l->nodes ? 0 : local_oom(err);
}

/* mkdir -p, mode 0700 for the directories it creates. */
static int mkdirs(const char *path, struct loom_error *err)
{
    char buf[PATH_MAX];

    if (local_path(buf, sizeof(buf), path, "", err) < 0)
        return -1;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) < 0 && errno != EEXIST)
            return loom_error_set(err, LOOM_EINTERNAL, "mkdir %s: %s", buf,
                                  strerror(errno));
        *p = '/';
    }
    return 0;
}

static int make_paths(struct local *l, const struct adaptor_env *env,
                      struct loom_error *err)
{
    const char *libexec = env->libexec_dir;
    char sup[PATH_MAX];

#ifdef LOOM_LIBEXECDIR
    if (!libexec)
        libexec = LOOM_LIBEXECDIR;
#endif
    if (!env->state_dir || !libexec)
        return loom_error_set(err, LOOM_EINVAL, "no state_dir or libexec "
                              "directory");
    l->dir = local_strf("%s/clusters/%s", env->state_dir, env->cluster);
    l->jobs_dir = local_strf("%s/jobs", l->dir ? l->dir : "");
    l->runas = local_strf("%s/loom-runas", libexec);
    if (!l->dir || !l->jobs_dir || !l->runas)
        return local_oom(err);
    if (strlen(l->jobs_dir) > PATH_MAX - 64)
        return loom_error_set(err, LOOM_EINVAL, "%s: path too long",
                              l->jobs_dir);
    snprintf(sup, sizeof(sup), "%s/loom-supervise", libexec);
    if (access(l->runas, X_OK) < 0 || access(sup, X_OK) < 0)
        log_warn("cluster=%s: %s or %s: %s: jobs cannot start", l->name,
                 l->runas, sup, strerror(errno));
    return mkdirs(l->jobs_dir, err);
}

/* nodes.state: {"n3": {"state": "drain", "reason": "..."}, ...} for every
 * node that is not up. */
int local_nodes_save(struct local *l, struct loom_error *err)
{
    json_t *o = json_object();

    for (int k = 0; o && k < l->n_nodes; k++) {
        const struct lnode *n = &l->nodes[k];
        char name[16];

        snprintf(name, sizeof(name), "n%d", k + 1);
        if (n->admin != A_UP &&
            json_object_set_new(o, name, json_pack("{s:s, s:s*}", "state",
                                                   local_admin_names[n->admin],
                                                   "reason", n->reason)) < 0) {
            json_decref(o);
            o = NULL;
        }
    }
    return local_json_write_take(-1, l->dir, NODES_STATE, o, err);
}

static int nodes_load(struct local *l, struct loom_error *err)
{
    const char *key;
    json_t *o, *v;
    int r = local_json_read(l->dir, NODES_STATE, &o, err);

    if (r <= 0)
        return r;
    json_object_foreach(o, key, v) {
        const char *state = "", *reason = NULL;
        int k = local_node_index(l, key), a = A_DRAIN + 1;

        if (json_unpack(v, "{s:s, s?:s}", "state", &state, "reason",
                        &reason) == 0)
            for (a = A_DRAIN; a <= A_DOWN; a++)
                if (strcmp(state, local_admin_names[a]) == 0)
                    break;
        if (k < 0 || a > A_DOWN) {
            log_warn("cluster=%s: %s: ignoring node %s", l->name,
                     NODES_STATE, key);
            continue;
        }
        l->nodes[k].admin = (enum admin)a;
        if (reason && !(l->nodes[k].reason = strdup(reason))) {
            json_decref(o);
            return local_oom(err);
        }
    }
    json_decref(o);
    return 0;
}

/* Adopt every job directory: running jobs keep their resources, jobs that
 * ended within KEEP_FINISHED_S are reported once more. */
static int jobs_scan(struct local *l, struct loom_error *err)
{
    time_t horizon = time(NULL) - KEEP_FINISHED_S;
    DIR *d = opendir(l->jobs_dir);
    struct dirent *e;

    if (!d)
        return loom_error_set(err, LOOM_EINTERNAL, "%s: %s", l->jobs_dir,
                              strerror(errno));
    while ((e = readdir(d))) {
        int64_t id = local_parse_id(e->d_name);
        struct loom_error why;
        struct local_job *j = NULL;
        int r = id > 0 ? local_job_get_id(l, id, &j, &why) : 0;

        if (r < 0)
            log_warn("cluster=%s job=%lld: not adopted: %s", l->name,
                     (long long)id, why.message);
        if (r > 0 && !local_job_active(j) && j->exit.end_time < horizon) {
            l->n_jobs--; /* too old to report */
            local_job_destroy(j);
        }
    }
    closedir(d);
    return 0;
}

/* ---- cgroups -------------------------------------------------------- */

/* <cluster>-<8 hex>: FNV-1a of state_dir, so that the loomd of another
 * state_dir (several share a machine) never meets this one's jobs, and
 * a restarted loomd finds its own again. */
static char *instance_name(const struct adaptor_env *env)
{
    uint32_t h = 2166136261u;

    for (const char *p = env->state_dir; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return local_strf("%s-%08x", env->cluster, h);
}

/* Remove the cgroups of jobs that do not run (left by a loomd that ended
 * before it reported their end). */
static void cg_sweep_one(int64_t id, void *arg)
{
    struct local *l = arg;

    for (size_t i = 0; i < l->n_jobs; i++)
        if (l->jobs[i]->spec.loom_id == id && local_job_active(l->jobs[i]))
            return;
    if (local_job_cgroups_remove(&l->ctx, id, NULL) < 0)
        local_cg_left_add(l, id);
}

/* 1 when the file name in dirfd holds text already. */
static int holds(int dirfd, const char *name, const char *text)
{
    size_t len = strlen(text), got = 0;
    char *buf = malloc(len + 1);
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), same;
    ssize_t n = 1;

    while (buf && fd >= 0 && got <= len && n > 0)
        if ((n = read(fd, buf + got, len + 1 - got)) > 0)
            got += (size_t)n;
    same = buf && fd >= 0 && n == 0 && got == len &&
           memcmp(buf, text, len) == 0;
    if (fd >= 0)
        close(fd);
    free(buf);
    return same;
}

static int cg_setup(struct local *l, const struct adaptor_env *env,
                    int confine, struct loom_error *err)
{
    char *inst = instance_name(env), line[512], *text;
    int fd, rc;

    if (!inst)
        return local_oom(err);
    l->ctx.cg = cgroups_create(l->runas, inst, confine);
    free(inst);
    if (!l->ctx.cg || !(text = cgroups_instances(l->ctx.cg)))
        return local_oom(err);
    fd = open(l->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    /* written only when it changed: a restart on a full state_dir goes on
     * with the list it has */
    rc = fd < 0 ? loom_error_set(err, LOOM_EINTERNAL, "%s: %s", l->dir,
                                 strerror(errno))
         : holds(fd, CGROUPS_FILE, text)
             ? 0
             : local_write_at(fd, l->dir, CGROUPS_FILE, text, strlen(text),
                              0600, err);
    if (fd >= 0)
        close(fd);
    free(text);
    if (rc < 0)
        return -1;
    if (cgroups_unconfined(l->ctx.cg)) {
        log_warn("cluster=%s: unconfined: %s: jobs run without cgroups (no "
                 "memory or cpu limit; cancel and suspend reach their "
                 "process group only)", l->name,
                 cgroups_unconfined(l->ctx.cg));
        return 0;
    }
    cgroups_summary(l->ctx.cg, line, sizeof(line));
    log_info("cluster=%s: confinement: %s", l->name, line);
    if (strstr(line, "=none"))
        log_warn("cluster=%s: cgroups do not give every feature (%s): "
                 "what is none is not enforced", l->name, line);
    return 0;
}

void local_cg_left_add(struct local *l, int64_t id)
{
    int64_t *v;

    for (size_t i = 0; i < l->n_cg_left; i++)
        if (l->cg_left[i] == id)
            return;
    if (l->n_cg_left == l->cap_cg_left) {
        size_t cap = l->cap_cg_left ? 2 * l->cap_cg_left : 16;
        if (!(v = realloc(l->cg_left, cap * sizeof(*v))))
            return; /* found again by the sweep of the next start */
        l->cg_left = v;
        l->cap_cg_left = cap;
    }
    l->cg_left[l->n_cg_left++] = id;
}

void local_cg_left_retry(struct local *l)
{
    size_t kept = 0;

    for (size_t i = 0; i < l->n_cg_left; i++)
        if (local_job_cgroups_remove(&l->ctx, l->cg_left[i], NULL) < 0)
            l->cg_left[kept++] = l->cg_left[i];
    l->n_cg_left = kept;
}

void local_describe(void *self, struct adaptor_desc *d)
{
    struct local *l = self;
    const char *why = cgroups_unconfined(l->ctx.cg);
    json_t *c = cgroups_describe(l->ctx.cg);

    d->runs_as_user = 1; /* through loom-runas, each job as its account */
    d->info = why ? json_pack("{s:n, s:b, s:s}", "confinement", "unconfined",
                              1, "unconfined_reason", why)
                  : json_pack("{s:o, s:b}", "confinement",
                              c ? c : json_null(), "unconfined", 0);
}

/* ---- start and end ----------------------------------------------------- */

int local_setup(struct local *l, struct conf_section *sec,
                const struct adaptor_env *env, struct loom_error *err)
{
    int confine = 1;

    l->ctx.cluster = l->name;
    if (read_config(l, sec, &confine, err) < 0 ||
        make_paths(l, env, err) < 0)
        return -1;
    l->ctx.runas = l->runas;
    if (cg_setup(l, env, confine, err) < 0 || nodes_load(l, err) < 0 ||
        jobs_scan(l, err) < 0)
        return -1;
    cgroups_job_each(l->ctx.cg, cg_sweep_one, l);
    return 0;
}

void local_teardown(struct local *l)
{
    cgroups_destroy(l->ctx.cg);
    l->ctx.cg = NULL;
    free(l->cg_left);
    free(l->runas);
    free(l->jobs_dir);
    free(l->dir);
}
