/* cgroup.c - the local executor's cgroups (see cgroup.h). */
/* SPDX-License-Identifier: MIT */
#include "adaptors/cgroup.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "core/runas_call.h"

#define HIER_MAX 16
#define CFS_PERIOD_US 100000L

struct hier {
    char *name;     /* "unified", or v1 controllers: "cpu,cpuacct" */
    char *instance; /* <mount>/<cgroup of loomd>/loom.jobs/<instance> */
    int v2;
    int used;       /* jobs get a cgroup here */
};

struct cgroups {
    char *runas;
    char *unconfined; /* why, or NULL */
    struct hier h[HIER_MAX];
    int n;
    int feat[CG_N_FEATURES]; /* index into h, or -1 */
    int memsw;   /* v1: memory.memsw.limit_in_bytes is there */
    int swapmax; /* v2: memory.swap.max is there */
};

static const char *const feature_names[] = {
    "memory", "cpu", "pids", "freeze", "kill", "oom", "procs"};

/* ---- files ----------------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[PATH_MAX];
    ssize_t n;
    int fd;

    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return errno = ENAMETOOLONG, -1;
    fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = write(fd, text, strlen(text));
    if (n != (ssize_t)strlen(text)) {
        int e = n < 0 ? errno : EIO;
        close(fd);
        return errno = e, -1;
    }
    return close(fd);
}

/* The text of dir/name (at most size - 1 bytes), or -1. */
static ssize_t read_file(const char *dir, const char *name, char *buf,
                         size_t size)
{
    char path[PATH_MAX];
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

static int has_file(const char *dir, const char *name)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

/* Is word one of the comma- or blank-separated words of list? */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);

    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ',' || isspace((unsigned char)p[-1])) &&
            (!p[n] || p[n] == ',' || isspace((unsigned char)p[n])))
            return 1;
    return 0;
}

/* ---- discovery --------------------------------------------------------- */

static char no_memory[] = "out of memory"; /* a reason not allocated */

static void unconfine(struct cgroups *cg, const char *why)
{
    if (!cg->unconfined)
        cg->unconfined = strdup(why);
    if (!cg->unconfined) /* still unconfined, and says so briefly */
        cg->unconfined = no_memory;
}

/* One "HIERARCHY PATH" line of `loom-runas cgroups`: our instance there. */
static void add_hier(struct cgroups *cg, const char *line,
                     const char *instance)
{
    char name[256], path[PATH_MAX], inst[PATH_MAX + 300];
    struct hier *h;

    if (cg->n == HIER_MAX ||
        sscanf(line, "%255s %4095s", name, path) != 2 ||
        snprintf(inst, sizeof(inst), "%s/%s", path, instance) >= PATH_MAX)
        return;
    if (mkdir(inst, 0755) < 0 && errno != EEXIST) {
        log_warn("cgroup %s: %s (not used)", inst, strerror(errno));
        return;
    }
    h = &cg->h[cg->n];
    h->name = strdup(name);
    h->instance = strdup(inst);
    h->v2 = !strcmp(name, "unified");
    if (h->name && h->instance)
        cg->n++;
}

/* The v2 controllers a job may have: those handed down to the instance,
 * enabled for its children. */
static void enable_v2(struct cgroups *cg, int i)
{
    static const char *const want[] = {"memory", "cpu", "pids"};
    static const enum cg_feature f[] = {CG_MEMORY, CG_CPU, CG_PIDS};
    char have[512], plus[32];

    if (read_file(cg->h[i].instance, "cgroup.controllers", have,
                  sizeof(have)) < 0)
        return;
    for (int k = 0; k < 3; k++) {
        snprintf(plus, sizeof(plus), "+%s", want[k]);
        if (has_word(have, want[k]) &&
            write_file(cg->h[i].instance, "cgroup.subtree_control",
                       plus) == 0)
            cg->feat[f[k]] = i;
    }
    if (cg->feat[CG_MEMORY] == i) {
        cg->feat[CG_OOM] = i;
        cg->swapmax = has_file(cg->h[i].instance, "memory.swap.max");
    }
    if (has_file(cg->h[i].instance, "cgroup.freeze"))
        cg->feat[CG_FREEZE] = i;
    if (has_file(cg->h[i].instance, "cgroup.kill"))
        cg->feat[CG_KILL] = i;
    cg->feat[CG_PROCS] = i;
}

/* v1 hierarchies fill what v2 does not give. */
static void pick_v1(struct cgroups *cg, int i)
{
    static const char *const ctl[] = {"memory", "cpu", "pids", "freezer"};
    static const enum cg_feature f[] = {CG_MEMORY, CG_CPU, CG_PIDS,
                                        CG_FREEZE};

    for (int k = 0; k < 4; k++)
        if (cg->feat[f[k]] < 0 && has_word(cg->h[i].name, ctl[k]))
            cg->feat[f[k]] = i;
    if (cg->feat[CG_MEMORY] == i) {
        cg->feat[CG_OOM] = i;
        cg->memsw = has_file(cg->h[i].instance, "memory.memsw.limit_in_bytes");
    }
    if (cg->feat[CG_PROCS] < 0)
        cg->feat[CG_PROCS] = i;
}

/* What `loom-runas cgroups` printed, asked once per helper (several local
 * clusters share the answer): 0 with a copy in *out, or -1 with why. */
static int runas_cgroups(const char *runas, char **out, char *why,
                         size_t size)
{
    static const char *const args[] = {"cgroups", NULL};
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *asked, *answer, *failed;
    struct proc_result r;
    struct loom_error err;

    pthread_mutex_lock(&lock);
    if (!asked || strcmp(asked, runas) != 0) {
        free(asked);
        free(answer);
        free(failed);
        answer = failed = NULL;
        asked = strdup(runas);
        if (runas_call(runas, args, 0, 30, 65536, &r, &err) == 0) {
            answer = strdup(r.out);
            proc_result_fini(&r);
        } else {
            failed = strdup(err.message);
        }
    }
    *out = answer ? strdup(answer) : NULL;
    snprintf(why, size, "%s", failed ? failed : "out of memory");
    pthread_mutex_unlock(&lock);
    return *out ? 0 : -1;
}

static void discover(struct cgroups *cg, const char *instance)
{
    char why[600], *text;

    if (runas_cgroups(cg->runas, &text, why, sizeof(why)) < 0) {
        unconfine(cg, why);
        return;
    }
    for (char *line = text, *nl; line && *line; line = nl) {
        nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        add_hier(cg, line, instance);
    }
    free(text);
    for (int i = 0; i < cg->n; i++)
        if (cg->h[i].v2)
            enable_v2(cg, i);
    for (int i = 0; i < cg->n; i++)
        if (!cg->h[i].v2)
            pick_v1(cg, i);
    /* without a v2 cgroup.kill, a job is killed through its process list */
    if (cg->feat[CG_KILL] < 0)
        cg->feat[CG_KILL] = cg->feat[CG_PROCS];
    for (int f = 0; f < CG_N_FEATURES; f++)
        if (cg->feat[f] >= 0)
            cg->h[cg->feat[f]].used = 1;
    if (cg->feat[CG_PROCS] < 0)
        unconfine(cg, "loom-runas cgroups found no cgroup hierarchy loomd "
                      "may use");
}

struct cgroups *cgroups_create(const char *runas, const char *instance,
                               int confine)
{
    struct cgroups *cg = calloc(1, sizeof(*cg));

    if (!cg)
        return NULL;
    for (int f = 0; f < CG_N_FEATURES; f++)
        cg->feat[f] = -1;
    if (!(cg->runas = strdup(runas))) {
        free(cg);
        return NULL;
    }
    if (confine)
        discover(cg, instance);
    else
        unconfine(cg, "confine = no");
    if (!cg->unconfined)
        return cg;
    for (int f = 0; f < CG_N_FEATURES; f++)
        cg->feat[f] = -1;
    return cg;
}

void cgroups_destroy(struct cgroups *cg)
{
    if (!cg)
        return;
    for (int i = 0; i < cg->n; i++) {
        rmdir(cg->h[i].instance); /* fails while a job's cgroup is in it */
        free(cg->h[i].name);
        free(cg->h[i].instance);
    }
    if (cg->unconfined != no_memory)
        free(cg->unconfined);
    free(cg->runas);
    free(cg);
}

const char *cgroups_unconfined(const struct cgroups *cg)
{
    return cg->unconfined;
}

json_t *cgroups_describe(const struct cgroups *cg)
{
    json_t *o;

    if (cg->unconfined || !(o = json_object()))
        return NULL;
    for (int f = 0; f < CG_PROCS; f++)
        json_object_set_new(o, feature_names[f],
                            cg->feat[f] < 0 ? json_null()
                            : json_string(cg->h[cg->feat[f]].v2 ? "v2"
                                                                : "v1"));
    return o;
}

char *cgroups_instances(const struct cgroups *cg)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);

    if (!f)
        return NULL;
    for (int i = 0; !cg->unconfined && i < cg->n; i++)
        if (cg->h[i].used)
            fprintf(f, "%s %s\n", cg->h[i].name, cg->h[i].instance);
    if (fclose(f) == 0)
        return out;
    free(out);
    return NULL;
}

void cgroups_summary(const struct cgroups *cg, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int f = 0; f < CG_PROCS && len < size; f++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s",
                                f ? " " : "", feature_names[f],
                                cg->feat[f] < 0 ? "none"
                                : cg->h[cg->feat[f]].v2 ? "v2" : "v1");
}

/* ---- one job --------------------------------------------------------- */

static int job_dir(const struct cgroups *cg, int i, int64_t id, char *buf,
                   size_t size)
{
    int n = snprintf(buf, size, "%s/%lld", cg->h[i].instance, (long long)id);

    return n < 0 || (size_t)n >= size ? -1 : 0;
}

int cgroups_job_file(const struct cgroups *cg, int64_t id, enum cg_feature f,
                     const char *name, char *buf, size_t size)
{
    char dir[PATH_MAX];
    int n;

    if (cg->unconfined || cg->feat[f] < 0 ||
        job_dir(cg, cg->feat[f], id, dir, sizeof(dir)) < 0)
        return -1;
    n = snprintf(buf, size, "%s%s%s", dir, *name ? "/" : "", name);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

const char *cgroups_oom_file(const struct cgroups *cg)
{
    if (cg->unconfined || cg->feat[CG_OOM] < 0)
        return NULL;
    return cg->h[cg->feat[CG_OOM]].v2 ? "memory.events" : "memory.oom_control";
}

/* Write one limit into the job's cgroup of feature f. */
static int limit(struct cgroups *cg, int64_t id, enum cg_feature f,
                 const char *name, const char *value, struct loom_error *err)
{
    char dir[PATH_MAX];

    if (cgroups_job_file(cg, id, f, "", dir, sizeof(dir)) < 0 ||
        write_file(dir, name, value) == 0)
        return 0;
    return loom_error_set(err, LOOM_EINTERNAL, "cgroup %s: write %s %s: %s",
                          dir, name, value, strerror(errno));
}

static int memory_limit(struct cgroups *cg, int64_t id, long mb,
                        struct loom_error *err)
{
    char v[32];
    int f = cg->feat[CG_MEMORY];

    snprintf(v, sizeof(v), "%lld", (long long)mb << 20);
    if (cg->h[f].v2)
        return limit(cg, id, CG_MEMORY, "memory.max", v, err) < 0 ||
                       (cg->swapmax && limit(cg, id, CG_MEMORY,
                                             "memory.swap.max", "0",
                                             err) < 0)
                   ? -1 : 0;
    /* memsw is at least the limit at every step: unlimited first */
    if ((cg->memsw && limit(cg, id, CG_MEMORY, "memory.memsw.limit_in_bytes",
                            "-1", err) < 0) ||
        limit(cg, id, CG_MEMORY, "memory.limit_in_bytes", v, err) < 0 ||
        (cg->memsw && limit(cg, id, CG_MEMORY, "memory.memsw.limit_in_bytes",
                            v, err) < 0))
        return -1;
    return 0;
}

static int cpu_limit(struct cgroups *cg, int64_t id, int cpus,
                     struct loom_error *err)
{
    char quota[32], weight[32];

    if (cg->h[cg->feat[CG_CPU]].v2) {
        snprintf(quota, sizeof(quota), "%ld %ld", cpus * CFS_PERIOD_US,
                 CFS_PERIOD_US);
        snprintf(weight, sizeof(weight), "%d", cpus < 100 ? cpus * 100
                                                          : 10000);
        return limit(cg, id, CG_CPU, "cpu.max", quota, err) < 0 ||
               limit(cg, id, CG_CPU, "cpu.weight", weight, err) < 0 ? -1 : 0;
    }
    snprintf(quota, sizeof(quota), "%ld", cpus * CFS_PERIOD_US);
    snprintf(weight, sizeof(weight), "%d", cpus * 1024);
    if (limit(cg, id, CG_CPU, "cpu.cfs_period_us", "100000", err) < 0 ||
        limit(cg, id, CG_CPU, "cpu.cfs_quota_us", quota, err) < 0 ||
        limit(cg, id, CG_CPU, "cpu.shares", weight, err) < 0)
        return -1;
    return 0;
}

static int limits(struct cgroups *cg, int64_t id, const struct cg_limits *l,
                  struct loom_error *err)
{
    char v[32];

    if (cg->feat[CG_MEMORY] >= 0 && l->memory_mb > 0 &&
        memory_limit(cg, id, l->memory_mb, err) < 0)
        return -1;
    if (cg->feat[CG_CPU] >= 0 && l->cpus > 0 &&
        cpu_limit(cg, id, l->cpus, err) < 0)
        return -1;
    snprintf(v, sizeof(v), "%ld", l->pids_max);
    if (cg->feat[CG_PIDS] >= 0 && l->pids_max > 0 &&
        limit(cg, id, CG_PIDS, "pids.max", v, err) < 0)
        return -1;
    return 0;
}

int cgroups_job_make(struct cgroups *cg, int64_t id,
                     const struct cg_limits *lim, struct strv *dirs,
                     struct loom_error *err)
{
    char dir[PATH_MAX];

    if (cg->unconfined)
        return 0;
    for (int i = 0; i < cg->n; i++) {
        if (!cg->h[i].used)
            continue;
        if (job_dir(cg, i, id, dir, sizeof(dir)) < 0 ||
            (mkdir(dir, 0755) < 0 && errno != EEXIST)) {
            loom_error_set(err, LOOM_EINTERNAL, "cgroup %s: %s", dir,
                           strerror(errno));
            goto error;
        }
        if (strv_push(dirs, dir) < 0) {
            loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            goto error;
        }
    }
    if (limits(cg, id, lim, err) == 0)
        return 0;
error:
    cgroups_job_remove(cg, id);
    return -1;
}

int cgroups_job_freeze(struct cgroups *cg, int64_t id, int on,
                       struct loom_error *err)
{
    int f = cg->unconfined ? -1 : cg->feat[CG_FREEZE];

    if (f < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "no cgroup freezer");
    if (cg->h[f].v2)
        return limit(cg, id, CG_FREEZE, "cgroup.freeze", on ? "1" : "0", err);
    return limit(cg, id, CG_FREEZE, "freezer.state", on ? "FROZEN" : "THAWED",
                 err);
}

int cgroups_job_signal(struct cgroups *cg, int64_t id, const char *account,
                       int sig, struct loom_error *err)
{
    char dir[PATH_MAX], num[16];
    const char *args[] = {"signal", account, num, dir, NULL};
    struct proc_result r;

    if (cgroups_job_file(cg, id, CG_PROCS, "", dir, sizeof(dir)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "job %lld has no cgroup",
                              (long long)id);
    snprintf(num, sizeof(num), "%d", sig);
    if (runas_call(cg->runas, args, 0, 30, 4096, &r, err) < 0)
        return -1;
    proc_result_fini(&r);
    return 0;
}

int cgroups_job_kill(struct cgroups *cg, int64_t id, const char *account,
                     struct loom_error *err)
{
    if (cg->unconfined)
        return loom_error_set(err, LOOM_EINTERNAL, "no cgroups");
    if (cg->h[cg->feat[CG_KILL]].v2 &&
        has_file(cg->h[cg->feat[CG_KILL]].instance, "cgroup.kill"))
        return limit(cg, id, CG_KILL, "cgroup.kill", "1", err);
    return cgroups_job_signal(cg, id, account, SIGKILL, err);
}

int cgroups_job_nprocs(const struct cgroups *cg, int64_t id)
{
    char path[PATH_MAX], line[32];
    FILE *f;
    int n = 0;

    if (cgroups_job_file(cg, id, CG_PROCS, "cgroup.procs", path,
                         sizeof(path)) < 0 ||
        !(f = fopen(path, "re")))
        return -1;
    while (fgets(line, sizeof(line), f))
        n++;
    fclose(f);
    return n;
}

long cgroups_job_oom_kills(const struct cgroups *cg, int64_t id)
{
    const char *name = cgroups_oom_file(cg);
    char dir[PATH_MAX], text[1024], *p;

    if (!name || cgroups_job_file(cg, id, CG_OOM, "", dir, sizeof(dir)) < 0 ||
        read_file(dir, name, text, sizeof(text)) < 0 ||
        !(p = strstr(text, "oom_kill ")))
        return -1;
    return strtol(p + 9, NULL, 10);
}

int cgroups_job_remove(struct cgroups *cg, int64_t id)
{
    char dir[PATH_MAX];
    int rc = 0;

    for (int i = 0; !cg->unconfined && i < cg->n; i++)
        if (cg->h[i].used && job_dir(cg, i, id, dir, sizeof(dir)) == 0 &&
            rmdir(dir) < 0 && errno != ENOENT)
            rc = -1;
    return rc;
}

void cgroups_job_each(const struct cgroups *cg,
                      void (*fn)(int64_t id, void *arg), void *arg)
{
    DIR *d;
    struct dirent *e;

    if (cg->unconfined || cg->feat[CG_PROCS] < 0 ||
        !(d = opendir(cg->h[cg->feat[CG_PROCS]].instance)))
        return;
    while ((e = readdir(d))) {
        char *end;
        long long id = strtoll(e->d_name, &end, 10);
        if (e->d_type == DT_DIR && id > 0 && !*end &&
            isdigit((unsigned char)e->d_name[0]))
            fn((int64_t)id, arg);
    }
    closedir(d);
}
