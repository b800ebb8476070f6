/* adaptors_local.c - the local adaptor with real processes, no mocks. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adaptors/adaptor.h"
#include "adaptors/local_job.h"
#include "core/conf.h"
#include "core/timeutil.h"
#include "tests/lib/tap.h"

#define MAX_ID 64
#define CONF_TEXT                                                            \
    "[cluster t]\n"                                                          \
    "adaptor = local\n"                                                      \
    "nodes = 3\n"                                                            \
    "cpus_per_node = 2\n"                                                    \
    "memory_mb = 1024\n"                                                     \
    "features = ssd, fast\n"

static const struct adaptor_type *T;
static char top[PATH_MAX - 128], libexec[PATH_MAX];
static struct adaptor_env env;

/* What jobs() told about each job so far: later calls report changes. */
struct seen {
    char state[16];
    int has_exit_code, exit_code;
    char reason[320], out[PATH_MAX];
};
static struct seen seen[MAX_ID];
static int last_complete;

static void *create(const char *text, struct loom_error *err)
{
    struct conf *c = conf_parse("<test>", text, err);
    void *a = NULL;

    if (!c)
        return NULL;
    conf_get(conf_section(c, "cluster", "t"), "adaptor");
    if (T->create(conf_section(c, "cluster", "t"), &env, &a, err) < 0)
        a = NULL;
    conf_destroy(c);
    return a;
}

static int poll_jobs(void *a)
{
    struct cl_job_list l = {0};
    struct loom_error err;
    int n;

    if (T->jobs(a, &l, &last_complete, &err) < 0) {
        printf("# jobs: %s\n", err.message);
        return -1;
    }
    for (size_t i = 0; i < l.n; i++) {
        struct cl_job *j = &l.v[i];
        struct seen *s;
        if (j->loom_id <= 0 || j->loom_id >= MAX_ID)
            continue;
        s = &seen[j->loom_id];
        snprintf(s->state, sizeof(s->state), "%s", j->state);
        snprintf(s->reason, sizeof(s->reason), "%s",
                 j->reason ? j->reason : "");
        snprintf(s->out, sizeof(s->out), "%s", j->stdout_path);
        s->has_exit_code = j->has_exit_code;
        s->exit_code = j->exit_code;
    }
    n = (int)l.n;
    cl_job_list_fini(&l);
    return n;
}

/* Poll jobs() until job id is in state want, with a deadline. */
static int wait_state(void *a, int64_t id, const char *want, double secs)
{
    double end = time_mono() + secs;

    do {
        if (poll_jobs(a) < 0)
            return 0;
        if (strcmp(seen[id].state, want) == 0)
            return 1;
        usleep(20000);
    } while (time_mono() < end);
    printf("# job %lld is '%s', want '%s'\n", (long long)id, seen[id].state,
           want);
    return 0;
}

static const char *const env_ok[] = {"FOO=bar", NULL};

/* Start job id on nodes (a comma list, at most 4). */
static int start_env(void *a, int64_t id, const char *nodes, int cpus,
                     long wall, const char *const *cmd, const char *script,
                     int adopt, const char *const *envv,
                     struct start_result *res, struct loom_error *err)
{
    char list[64], *v[5], *p = list;
    struct start_req req = {
        .loom_id = id, .name = "t", .owner = "tester", .account = "nobody",
        .command = cmd,
        .script = script, .env = envv, .nodes = (const char *const *)v,
        .cpus_per_node = cpus, .memory_mb = 100, .walltime_s = wall,
        .adopt = adopt};

    snprintf(list, sizeof(list), "%s", nodes);
    while (p && req.n_nodes < 4) {
        v[req.n_nodes++] = p;
        p = strchr(p, ',');
        if (p)
            *p++ = '\0';
    }
    v[req.n_nodes] = NULL;
    memset(res, 0, sizeof(*res));
    return T->start(a, &req, res, err);
}

static int start(void *a, int64_t id, const char *nodes, int cpus, long wall,
                 const char *const *cmd, const char *script, int adopt,
                 struct start_result *res, struct loom_error *err)
{
    return start_env(a, id, nodes, cpus, wall, cmd, script, adopt, env_ok,
                     res, err);
}

/* Start and forget the result; 0 or -1 (with the error printed). */
static int run(void *a, int64_t id, const char *node, int cpus, long wall,
               const char *const *cmd, const char *script)
{
    struct start_result res;
    struct loom_error err;
    int rc = start(a, id, node, cpus, wall, cmd, script, 0, &res, &err);

    if (rc < 0)
        printf("# start %lld: %s\n", (long long)id, err.message);
    start_result_fini(&res);
    return rc;
}

static void job_path(char *buf, int64_t id, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/clusters/t/jobs/%lld/%s", top, (long long)id,
             name);
}

/* A file of the job's run directory: its pid.json, and (nobody has no
 * home) its working directory with its output. */
static void run_path(char *buf, int64_t id, const char *name)
{
    snprintf(buf, PATH_MAX, "%s/clusters/t/jobs/%lld/run/%s", top,
             (long long)id, name);
}

static int slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    buf[0] = '\0';
    if (!f)
        return -1;
    n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return (int)n;
}

static int lines(const char *path)
{
    char buf[4096];
    int n = 0;

    if (slurp(path, buf, sizeof(buf)) < 0)
        return -1;
    for (char *p = buf; *p; p++)
        n += *p == '\n';
    return n;
}

static int wait_file(const char *path, double secs)
{
    double end = time_mono() + secs;
    char buf[64];

    while (slurp(path, buf, sizeof(buf)) <= 0)
        if (time_mono() > end)
            return 0;
        else
            usleep(20000);
    return 1;
}

/* 'Z' counts as gone: only its parent's reaping is left. */
static char proc_state(pid_t pid)
{
    unsigned long long start;
    char st;

    return local_proc_stat(pid, &st, &start) < 0 || st == 'Z' ? 0 : st;
}

static int wait_gone(pid_t pid, double secs)
{
    double end = time_mono() + secs;

    while (proc_state(pid))
        if (time_mono() > end)
            return 0;
        else
            usleep(20000);
    return 1;
}

/* 1 when pid's cgroup is frozen (v2 cgroup.events, or the v1 freezer),
 * 0 when not, -1 when it is in no freezable cgroup. */
static int frozen(pid_t pid)
{
    char path[PATH_MAX], line[PATH_MAX], text[256];
    int found = -1;
    FILE *f;

    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (found < 1 && fgets(line, sizeof(line), f)) {
        char *cg = strrchr(line, ':');
        line[strcspn(line, "\n")] = '\0';
        if (!cg)
            continue;
        if (!strncmp(line, "0::", 3))
            snprintf(path, sizeof(path), "/sys/fs/cgroup/unified%s/"
                     "cgroup.events", cg + 1);
        else if (strstr(line, ":freezer:"))
            snprintf(path, sizeof(path), "/sys/fs/cgroup/freezer%s/"
                     "freezer.state", cg + 1);
        else
            continue;
        if (slurp(path, text, sizeof(text)) > 0)
            found = strstr(text, "frozen 1") || !strncmp(text, "FROZEN", 6);
    }
    fclose(f);
    return found;
}

static int wait_frozen(pid_t pid, int want, double secs)
{
    double end = time_mono() + secs;

    while (frozen(pid) != want)
        if (time_mono() > end)
            return 0;
        else
            usleep(20000);
    return 1;
}

static struct local_pid job_pid(int64_t id)
{
    struct local_pid p = {0};
    struct loom_error err;
    char dir[PATH_MAX];

    job_path(dir, id, "");
    local_pid_read(dir, &p, &err);
    free(p.workdir); /* the numbers are what the tests use */
    free(p.stdout_path);
    free(p.stderr_path);
    p.workdir = p.stdout_path = p.stderr_path = NULL;
    return p;
}

static const struct cl_node *find_node(const struct cl_node_list *l,
                                       const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    return NULL;
}

static const char *node_state(void *a, const char *name, char *buf)
{
    struct cl_node_list l = {0};
    struct loom_error err;
    const struct cl_node *n;

    snprintf(buf, 64, "?");
    if (T->nodes(a, &l, &err) == 0 && (n = find_node(&l, name)))
        snprintf(buf, 64, "%s/%d", n->state, n->cpus_alloc);
    cl_node_list_fini(&l);
    return buf;
}

static int touch(const char *path)
{
    FILE *f = fopen(path, "w");

    return f ? fclose(f) : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    return remove(path);
}

static void test_type_and_config(void)
{
    struct loom_error err;
    void *a;

    ok(T != NULL, "type 'local' is registered");
    ok(adaptor_type_check(T, &err) == 0, "capabilities and ops agree");
    is_int(T->caps, LOOM_CAP_SUSPEND | LOOM_CAP_NODE_STATE, "caps");
    is_int(T->model, LOOM_MODEL_DISABLED_SCHEDULER, "model");
    a = create("[cluster t]\nnodes = 0\n", &err);
    ok(!a && strstr(err.message, "'nodes'"), "nodes = 0 is refused: %s",
       err.message);
    T->destroy(a);
    a = create("[cluster t]\nfeatures = a,,b\n", &err);
    ok(!a && strstr(err.message, "features"), "an empty feature is "
       "refused: %s", err.message);
    T->destroy(a);
    T->destroy(NULL);
}

static void test_inventory(void *a)
{
    struct cl_node_list nl = {0};
    struct cl_queue_list ql = {0};
    struct loom_error err;
    const struct cl_node *n;

    ok(T->probe(a, &err) == 0, "probe");
    ok(T->nodes(a, &nl, &err) == 0, "nodes");
    is_int(nl.n, 3, "three nodes");
    n = find_node(&nl, "n3");
    ok(n && n->cpus == 2 && n->memory_mb == 1024 && n->cpus_alloc == 0,
       "n3 has 2 cpus, 1024 MB, none allocated");
    is_str(n ? n->state : NULL, "idle", "n3 is idle");
    ok(n && n->features.n == 2 && !strcmp(n->features.v[0], "ssd") &&
       !strcmp(n->features.v[1], "fast"), "features ssd, fast");
    ok(n && n->queues.n == 1 && !strcmp(n->queues.v[0], "default"),
       "in queue default");
    cl_node_list_fini(&nl);
    ok(T->queues(a, &ql, &err) == 0 && ql.n == 1, "one queue");
    ok(ql.n == 1 && !strcmp(ql.v[0].name, "default") &&
       !strcmp(ql.v[0].state, "open") && ql.v[0].nodes == 3 &&
       ql.v[0].max_walltime_s == 0, "default: open, 3 nodes, no limit");
    cl_queue_list_fini(&ql);
    is_int(poll_jobs(a), 0, "no jobs yet");
    is_int(last_complete, 1, "the first jobs() is complete");
    poll_jobs(a);
    is_int(last_complete, 0, "later ones list changes");
}

static void test_exit_codes(void *a)
{
    const char *const hello[] = {"/bin/sh", "-c", "echo hello $LOOM_JOB_ID "
        "$LOOM_CLUSTER $LOOM_NODE $LOOM_NODES $FOO $PWD", NULL};
    char buf[PATH_MAX + 128], want[PATH_MAX + 128], path[PATH_MAX];
    struct start_result res;
    struct loom_error err;
    int st;

    ok(run(a, 1, "n1", 1, 0, hello, NULL) == 0, "start job 1 (exits 0)");
    errno = 0;
    ok(waitpid(-1, &st, WNOHANG) < 0 && errno == ECHILD,
       "no child of ours is left to reap");
    ok(run(a, 2, "n2", 1, 0, NULL, "echo out\necho err >&2\nexit 3\n") == 0,
       "start job 2 (a script exiting 3)");
    ok(run(a, 3, "n3", 1, 0, NULL, "#!/bin/sh\necho shebang\n") == 0,
       "start job 3 (a script with #!)");
    ok(wait_state(a, 1, "completed", 30), "job 1 completed");
    ok(seen[1].has_exit_code && seen[1].exit_code == 0, "exit code 0");
    is_str(seen[1].reason, "", "no reason: it ended well");
    slurp(seen[1].out, buf, sizeof(buf));
    run_path(path, 1, "");
    path[strlen(path) - 1] = '\0';
    snprintf(want, sizeof(want), "hello 1 t n1 n1 bar %s\n", path);
    is_str(buf, want, "stdout captured; env as documented; a home it cannot "
           "enter: it runs in its run directory");
    ok(wait_state(a, 2, "failed", 30), "job 2 failed");
    is_int(seen[2].exit_code, 3, "exit code 3");
    is_str(seen[2].reason, "exited with code 3", "reason: exited with code 3");
    slurp(seen[2].out, buf, sizeof(buf));
    is_str(buf, "out\nerr\n", "job 2 stdout and stderr, in one file");
    run_path(path, 2, "loom-2.out");
    is_str(seen[2].out, path, "the default output file: loom-%%j.out in the "
           "working directory");
    ok(wait_state(a, 3, "completed", 30), "job 3 completed");
    slurp(seen[3].out, buf, sizeof(buf));
    is_str(buf, "shebang\n", "a #! script runs by its interpreter");
    ok(run(a, 20, "n3", 1, 0, NULL, "kill -KILL $$\n") == 0,
       "start job 20 (a script that kills itself)");
    ok(wait_state(a, 20, "failed", 10), "job 20 failed");
    is_int(seen[20].exit_code, 128 + SIGKILL, "exit code 137");
    is_str(seen[20].reason, "killed by signal 9 (KILL)",
           "reason: killed by signal 9 (KILL)");

    ok(start(a, 1, "n1", 1, 0, hello, NULL, 0, &res, &err) == 0 &&
       res.adopted == 1, "starting job 1 again answers adopted=1");
    is_str(res.native_id, "1", "native id is the loom id");
    ok(res.stdout_path && strstr(res.stdout_path, "/jobs/1/run/loom-1.out"),
       "stdout path %s", res.stdout_path ? res.stdout_path : "(null)");
    start_result_fini(&res);
    run_path(path, 1, LOOM_LF_PID);
    ok(access(path, F_OK) == 0, "it was not started twice (one pid file)");
    ok(T->cancel(a, "1", &err) == 0, "cancel of an ended job: no-op");
    ok(T->cancel(a, "99", &err) < 0 && err.kind == LOOM_ENOENT,
       "cancel of an unknown job: %s", err.message);
    ok(T->suspend(a, "2", &err) < 0 && err.kind == LOOM_ECONFLICT,
       "suspend of an ended job: %s", err.message);
}

static void test_cancel_kills_group(void *a)
{
    const char *script = "sleep 300 &\necho $! > child.pid\nsleep 300\n";
    char path[PATH_MAX], buf[64];
    struct loom_error err;
    struct local_pid p;
    pid_t child;

    ok(run(a, 4, "n1", 1, 0, NULL, script) == 0, "start job 4 with a child");
    run_path(path, 4, "child.pid");
    ok(wait_file(path, 30), "the child wrote its pid");
    slurp(path, buf, sizeof(buf));
    child = (pid_t)strtol(buf, NULL, 10);
    p = job_pid(4);
    ok(child > 1 && proc_state(child), "child %d runs", (int)child);
    ok(T->cancel(a, "4", &err) == 0, "cancel job 4");
    ok(wait_state(a, 4, "cancelled", 30), "job 4 cancelled");
    is_str(seen[4].reason, "cancelled", "reason cancelled");
    ok(wait_gone(child, 30), "the background child is gone");
    ok(wait_gone(p.pgid, 30), "the job's shell is gone");
    ok(wait_gone(p.sup_pid, 30), "the supervisor is gone");
}

static void test_suspend_resume(void *a)
{
    const char *const sleep30[] = {"sleep", "30", NULL};
    struct loom_error err;
    struct local_pid p;

    ok(run(a, 5, "n1", 1, 0, sleep30, NULL) == 0, "start job 5 (sleep)");
    ok(wait_state(a, 5, "running", 30), "job 5 running");
    p = job_pid(5);
    is_int(frozen(p.pgid), 0, "its cgroup is not frozen");
    ok(T->suspend(a, "5", &err) == 0, "suspend job 5");
    ok(wait_frozen(p.pgid, 1, 30), "its cgroup is frozen");
    ok(wait_state(a, 5, "suspended", 30), "reported suspended");
    ok(T->suspend(a, "5", &err) == 0, "suspending again is a no-op");
    ok(T->resume(a, "5", &err) == 0, "resume job 5");
    ok(wait_frozen(p.pgid, 0, 30), "its cgroup is thawed");
    ok(wait_state(a, 5, "running", 30), "reported running");
    ok(T->suspend(a, "5", &err) == 0 && wait_frozen(p.pgid, 1, 30),
       "suspended once more");
    ok(T->cancel(a, "5", &err) == 0, "cancel a suspended job");
    ok(wait_state(a, 5, "cancelled", 30), "job 5 cancelled");
}

static void test_walltime(void *a)
{
    const char *const sleep30[] = {"sleep", "30", NULL};
    double t0 = time_mono();

    ok(run(a, 6, "n2", 1, 1, sleep30, NULL) == 0, "start job 6, walltime 1");
    ok(wait_state(a, 6, "failed", 30), "job 6 failed");
    is_str(seen[6].reason, "walltime exceeded", "reason walltime");
    is_int(seen[6].exit_code, 128 + SIGTERM, "ended by SIGTERM");
    ok(time_mono() - t0 < 29, "before its sleep 30 would end");
    ok(run(a, 16, "n3", 1, 1, NULL, "trap '' TERM\nsleep 30\n") == 0,
       "start job 16, walltime 1, deaf to SIGTERM");
    ok(wait_state(a, 16, "failed", 30), "job 16 failed");
    is_str(seen[16].reason, "walltime exceeded", "reason walltime");
    is_int(seen[16].exit_code, 128 + SIGKILL, "ended by SIGKILL after "
           "the grace");
}

static void test_bad_starts(void *a)
{
    const char *const nosuch[] = {"/nonexistent/prog", NULL};
    const char *const bad_env[] = {"NOEQUALS", NULL};
    const char *const sh[] = {"/bin/sh", "-c", "exit 0", NULL};
    struct adaptor_env env2 = env;
    struct start_result res;
    struct loom_error err;
    char path[PATH_MAX], buf[256];
    void *b = NULL;

    ok(start_env(a, 13, "n1", 1, 0, sh, NULL, 0, bad_env, &res, &err) < 0 &&
       err.kind == LOOM_EINVAL, "a bad env entry: %s", err.message);
    ok(start(a, 13, "n1", 1, 0, sh, "exit 0\n", 0, &res, &err) < 0 &&
       err.kind == LOOM_EINVAL, "command and script: %s", err.message);
    job_path(path, 13, "");
    ok(access(path, F_OK) < 0, "refused starts leave no job directory");
    ok(run(a, 14, "n1", 1, 0, nosuch, NULL) == 0, "start a missing program");
    ok(wait_state(a, 14, "failed", 30), "it failed");
    is_int(seen[14].exit_code, 127, "exit code 127");
    is_str(seen[14].reason, "cannot execute /nonexistent/prog: No such file "
           "or directory", "reason: cannot execute, and why");
    run_path(path, 14, "loom-14.out");
    slurp(path, buf, sizeof(buf));
    buf[strcspn(buf, "\n")] = '\0';
    ok(strstr(buf, "cannot execute /nonexistent/prog") != NULL,
       "stderr says why: %s", buf);

    env2.libexec_dir = "/nonexistent";
    env2.cluster = "u";
    ok(T->create(NULL, &env2, &b, &err) == 0, "create cluster u, all "
       "defaults, no loom-runas");
    if (b) {
        ok(T->probe(b, &err) < 0 && err.kind == LOOM_EUNAVAIL,
           "probe without loom-runas: %s", err.message);
        ok(start(b, 15, "n1", 1, 0, sh, NULL, 0, &res, &err) < 0 &&
           err.kind == LOOM_EINTERNAL && strstr(err.message, "loom-runas"),
           "start without loom-runas: %s", err.message);
    }
    T->destroy(b);
}

static void test_multi_node(void *a)
{
    const char *const cmd[] = {"/bin/sh", "-c",
                               "echo $LOOM_NODES; exec sleep 300", NULL};
    struct loom_error err;
    char buf[64];

    ok(run(a, 12, "n1,n3", 1, 0, cmd, NULL) == 0, "job 12 on n1 and n3");
    ok(wait_state(a, 12, "running", 30), "job 12 runs");
    is_str(node_state(a, "n1", buf), "mixed/1", "it holds a cpu on n1");
    is_str(node_state(a, "n3", buf), "mixed/1", "and one on n3");
    ok(wait_file(seen[12].out, 30), "it wrote its output");
    slurp(seen[12].out, buf, sizeof(buf));
    is_str(buf, "n1,n3\n", "LOOM_NODES");
    ok(T->cancel(a, "12", &err) == 0, "cancel job 12");
    ok(wait_state(a, 12, "cancelled", 30), "job 12 cancelled");
    is_str(node_state(a, "n3", buf), "idle/0", "n3 is free again");
}

static void test_busy_and_drain(void *a)
{
    const char *const sleep300[] = {"sleep", "300", NULL};
    struct start_result res;
    struct loom_error err;
    char buf[64];

    ok(run(a, 7, "n2", 2, 0, sleep300, NULL) == 0, "job 7 takes n2 whole");
    is_str(node_state(a, "n2", buf), "allocated/2", "n2 allocated");
    ok(start(a, 8, "n2", 1, 0, sleep300, NULL, 0, &res, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "a start on busy n2 is a conflict");
    ok(strstr(err.message, "cluster t: start job 8: node n2 has 0 free cpus, "
              "needs 1") != NULL, "message: %s", err.message);
    ok(start(a, 8, "n9", 1, 0, sleep300, NULL, 0, &res, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "no node n9: %s", err.message);
    ok(start(a, 8, "n3", 3, 0, sleep300, NULL, 0, &res, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "3 cpus never fit: %s", err.message);
    job_path(buf, 8, "");
    ok(access(buf, F_OK) < 0, "refused starts leave no job directory");

    ok(T->set_node_state(a, "n3", "drain", "disk check", &err) == 0,
       "drain n3");
    is_str(node_state(a, "n3", buf), "drained/0", "n3 drained");
    ok(start(a, 8, "n3", 1, 0, sleep300, NULL, 0, &res, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "drained n3 refuses: %s", err.message);
    ok(T->set_node_state(a, "n2", "drain", NULL, &err) == 0, "drain n2");
    is_str(node_state(a, "n2", buf), "draining/2", "n2 draining (job 7)");
    ok(T->set_node_state(a, "n2", "down", "gone", &err) == 0 &&
       !strcmp(node_state(a, "n2", buf), "down/2"), "n2 down");
    ok(T->set_node_state(a, "n2", "up", NULL, &err) == 0 &&
       !strcmp(node_state(a, "n2", buf), "allocated/2"), "n2 up again");
    ok(T->set_node_state(a, "n2", "sideways", NULL, &err) < 0 &&
       err.kind == LOOM_EINVAL, "bad state: %s", err.message);
    ok(T->set_node_state(a, "n7", "up", NULL, &err) < 0 &&
       err.kind == LOOM_ENOENT, "no node n7: %s", err.message);
}

static void test_adoption(void **ap)
{
    char starts[PATH_MAX], go[PATH_MAX], script[2 * PATH_MAX + 128], buf[64];
    struct cl_node_list nl = {0};
    struct start_result res;
    struct loom_error err;
    const struct cl_node *n;

    snprintf(starts, sizeof(starts), "%s/w/starts", top);
    snprintf(go, sizeof(go), "%s/w/go", top);
    snprintf(script, sizeof(script), "echo started >> %s\n"
             "while [ ! -e %s ]; do sleep 0.05; done\necho done\n", starts, go);
    ok(run(*ap, 9, "n1", 1, 0, NULL, script) == 0, "start job 9");
    ok(wait_file(starts, 30), "job 9 runs");
    T->destroy(*ap);
    *ap = create(CONF_TEXT, &err);
    ok(*ap != NULL, "a new instance on the same state dir");
    if (!*ap)
        return;
    memset(seen, 0, sizeof(seen));
    ok(start(*ap, 9, "n1", 1, 0, NULL, script, 1, &res, &err) == 0 &&
       res.adopted == 1, "start(adopt) of job 9: adopted");
    start_result_fini(&res);
    poll_jobs(*ap);
    is_int(last_complete, 1, "first jobs() of the new instance: complete");
    is_str(seen[9].state, "running", "job 9 is running");
    is_str(seen[7].state, "running", "job 7 is running");
    is_str(seen[1].state, "completed", "job 1 is reported, ended");
    is_str(node_state(*ap, "n3", buf), "drained/0", "n3 is still drained");
    ok(T->nodes(*ap, &nl, &err) == 0 && (n = find_node(&nl, "n3")) &&
       n->reason && !strcmp(n->reason, "disk check"), "with its reason");
    cl_node_list_fini(&nl);
    is_str(node_state(*ap, "n2", buf), "allocated/2",
           "job 7 keeps its cpus");
    ok(touch(go) == 0, "let job 9 end");
    ok(wait_state(*ap, 9, "completed", 30), "its end is collected");
    slurp(seen[9].out, buf, sizeof(buf));
    is_str(buf, "done\n", "job 9's output");
    is_int(lines(starts), 1, "job 9 started exactly once");

    ok(start(*ap, 10, "n1", 1, 0, NULL, "exit 0\n", 1, &res, &err) == 0 &&
       res.adopted == 0, "start(adopt) of a job never started: starts it");
    start_result_fini(&res);
    ok(wait_state(*ap, 10, "completed", 30), "job 10 completed");
}

static void test_supervisor_lost(void *a)
{
    const char *const sleep300[] = {"sleep", "300", NULL};
    struct local_pid p;

    ok(run(a, 11, "n1", 1, 0, sleep300, NULL) == 0, "start job 11");
    p = job_pid(11);
    ok(p.sup_pid > 1 && kill(p.sup_pid, SIGKILL) == 0,
       "SIGKILL its supervisor");
    ok(wait_state(a, 11, "failed", 30), "job 11 failed");
    is_str(seen[11].reason, "supervisor lost", "reason supervisor lost");
    ok(wait_gone(p.pgid, 30), "its process is killed too");
}

/* Whatever still runs (after a failure): cancel it and wait. */
static void cleanup(void *a)
{
    struct loom_error err;
    char id[16];

    for (int i = 1; i < MAX_ID; i++) {
        if (strcmp(seen[i].state, "running") &&
            strcmp(seen[i].state, "suspended"))
            continue;
        snprintf(id, sizeof(id), "%d", i);
        T->cancel(a, id, &err);
        wait_state(a, i, "cancelled", 30);
    }
}

int main(void)
{
    const char *b = getenv("LOOM_TOP_BUILDDIR"), *tmp = getenv("TMPDIR");
    char real[PATH_MAX];
    struct loom_error err;
    void *a;

    /* loom-supervise is in the build directory (or the current one). */
    if (!realpath(b && *b ? b : ".", libexec)) {
        printf("Bail out! %s: %s\n", b ? b : ".", strerror(errno));
        return 1;
    }
    snprintf(top, sizeof(top), "%s/loom-local-XXXXXX", tmp ? tmp : "/tmp");
    /* The job's cwd is the physical path: resolve symbolic links. */
    if (!mkdtemp(top) || !realpath(top, real) ||
        snprintf(top, sizeof(top), "%s", real) >= (int)sizeof(top)) {
        printf("Bail out! mkdtemp %s: %s\n", top, strerror(errno));
        return 1;
    }
    /* jobs run as nobody: they may enter top and write in top/w */
    snprintf(real, sizeof(real), "%s/w", top);
    if (chmod(top, 0755) < 0 || mkdir(real, 0755) < 0 ||
        chmod(real, 01777) < 0) {
        printf("Bail out! %s: %s\n", real, strerror(errno));
        return 1;
    }
    env = (struct adaptor_env){.cluster = "t", .state_dir = top,
                               .libexec_dir = libexec};
    T = adaptor_type_find("local");
    test_type_and_config();
    if (!T)
        return done_testing();
    a = create(CONF_TEXT, &err);
    ok(a != NULL, "create: %s", a ? "ok" : err.message);
    if (!a)
        return done_testing();
    test_inventory(a);
    test_exit_codes(a);
    test_cancel_kills_group(a);
    test_suspend_resume(a);
    test_walltime(a);
    test_bad_starts(a);
    test_multi_node(a);
    test_busy_and_drain(a);
    test_adoption(&a);
    if (a) {
        test_supervisor_lost(a);
        cleanup(a);
        T->destroy(a);
    }
    if (!tap_failed)
        nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    else
        printf("# state kept in %s\n", top);
    return done_testing();
}
