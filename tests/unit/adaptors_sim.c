/* adaptors_sim.c - unit tests of the sim adaptor on hand-made clusters. */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adaptors/adaptor.h"
#include "core/conf.h"
#include "tests/lib/tap.h"

/* The test cluster: 4 nodes of 4 cpus, 1000 MB, 1 gpu; 1 s simulated is
 * 10 ms real. */
#define SMALL "nodes = 4\ncpus_per_node = 4\nmemory_mb = 1000\ngpus = 1\n" \
              "features = ib, avx2\nspeed = 100\n"
#define LONG_RUN "LOOM_SIM_RUNTIME_S=3600" /* 36 s real: never ends here */

static const struct adaptor_type *T;
static struct conf *conf;

/* What the test has seen of each job through incremental jobs() calls. */
struct seen {
    char id[32];
    char state[16];
    char reason[64];
    time_t start, end;
    int has_exit, exit;
    size_t n_nodes;
};
static struct seen seen[64];
static size_t n_seen;
static size_t last_n;    /* entries in the last jobs() answer */
static int last_complete;

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A new instance from this config text, or NULL with err filled. */
static void *cluster(const char *text, struct loom_error *err)
{
    struct adaptor_env env = {.cluster = "t", .state_dir = "/tmp"};
    char buf[1024];
    void *self = NULL;

    snprintf(buf, sizeof(buf), "[cluster t]\nadaptor = sim\n%s", text);
    conf_destroy(conf);
    conf = conf_parse("<test>", buf, err);
    if (!conf)
        return NULL;
    n_seen = 0;
    if (T->create(conf_section(conf, "cluster", "t"), &env, &self, err) < 0)
        return NULL;
    return self;
}

static struct seen *seen_get(const char *id)
{
    for (size_t i = 0; i < n_seen; i++)
        if (!strcmp(seen[i].id, id))
            return &seen[i];
    if (n_seen == sizeof(seen) / sizeof(seen[0]))
        return NULL;
    memset(&seen[n_seen], 0, sizeof(seen[0]));
    snprintf(seen[n_seen].id, sizeof(seen[0].id), "%s", id);
    return &seen[n_seen++];
}

static int poll_jobs(void *self)
{
    struct cl_job_list l = {0};
    struct loom_error err = {0};

    if (T->jobs(self, &l, &last_complete, &err) < 0) {
        printf("# jobs: %s\n", err.message);
        return -1;
    }
    last_n = l.n;
    for (size_t i = 0; i < l.n; i++) {
        struct cl_job *j = &l.v[i];
        struct seen *s = seen_get(j->native_id);
        if (!s)
            continue;
        snprintf(s->state, sizeof(s->state), "%s", j->state);
        snprintf(s->reason, sizeof(s->reason), "%s",
                 j->reason ? j->reason : "");
        s->start = j->start_time;
        s->end = j->end_time;
        s->has_exit = j->has_exit_code;
        s->exit = j->exit_code;
        s->n_nodes = j->nodes.n;
    }
    cl_job_list_fini(&l);
    return 0;
}

/* Poll until job id is in state, for at most timeout_s; the last seen
 * record (or an empty one). */
static struct seen wait_state(void *self, const char *id, const char *state,
                              double timeout_s)
{
    double deadline = mono() + timeout_s;
    struct seen *s;

    for (;;) {
        if (poll_jobs(self) < 0)
            break;
        s = seen_get(id);
        if ((s && !strcmp(s->state, state)) || mono() > deadline)
            break;
        nap_ms(1);
    }
    s = seen_get(id);
    return s ? *s : (struct seen){0};
}

/* Start job id on one node with cpus cpus and this env (NULL-terminated
 * list, or NULL); returns the start's result. */
static int start1(void *self, int64_t id, const char *node, int cpus,
                  long walltime_s, const char *const *env,
                  struct loom_error *err)
{
    const char *nodes[] = {node};
    struct start_req r = {
        .loom_id = id, .name = "job", .owner = "alice", .env = env,
        .nodes = nodes, .n_nodes = 1, .cpus_per_node = cpus,
        .memory_mb = 100, .walltime_s = walltime_s,
    };
    struct start_result res = {0};
    int rc = T->start(self, &r, &res, err);

    start_result_fini(&res);
    return rc;
}

/* The state, cpus_alloc or reason of one node, from a fresh nodes(). */
static struct {
    char state[16], reason[64];
    int cpus_alloc, gpus_alloc;
    long mem_alloc;
} nd;

static int node_get(void *self, const char *name)
{
    struct cl_node_list l = {0};
    struct loom_error err;
    int found = 0;

    memset(&nd, 0, sizeof(nd));
    if (T->nodes(self, &l, &err) < 0)
        return -1;
    for (size_t i = 0; i < l.n; i++) {
        if (strcmp(l.v[i].name, name))
            continue;
        snprintf(nd.state, sizeof(nd.state), "%s", l.v[i].state);
        snprintf(nd.reason, sizeof(nd.reason), "%s",
                 l.v[i].reason ? l.v[i].reason : "(none)");
        nd.cpus_alloc = l.v[i].cpus_alloc;
        nd.gpus_alloc = l.v[i].gpus_alloc;
        nd.mem_alloc = l.v[i].memory_alloc_mb;
        found = 1;
    }
    cl_node_list_fini(&l);
    return found ? 0 : -1;
}


static void t_config(void)
{
    struct loom_error err = {0};
    struct cl_node_list l = {0};
    struct cl_queue_list q = {0};
    void *self = cluster("", &err);
    static const char *const bad[] = {
        "nodes = 0\n", "nodes = 100001\n", "cpus_per_node = 0\n",
        "speed = 0\n", "speed = fast\n", "gpus = -1\n",
    };

    ok(self != NULL, "defaults: created (%s)", err.message);
    if (!self)
        return;
    ok(T->probe(self, &err) == 0, "probe is fine");
    ok(T->nodes(self, &l, &err) == 0, "nodes");
    is_int(l.n, 64, "64 nodes by default");
    if (l.n == 64) {
        is_str(l.v[0].name, "n1", "first node n1");
        is_str(l.v[63].name, "n64", "last node n64");
        is_str(l.v[0].state, "idle", "idle");
        is_int(l.v[0].cpus, 32, "32 cpus by default");
        is_int(l.v[0].memory_mb, 131072, "131072 MB by default");
        is_int(l.v[0].gpus, 0, "no gpus by default");
        is_int(l.v[0].features.n, 0, "no features by default");
        is_int(l.v[0].queues.n, 1, "one queue");
        is_str(l.v[0].queues.n ? l.v[0].queues.v[0] : NULL, "default",
               "queue default");
        ok(l.v[0].reason == NULL, "no reason");
    }
    cl_node_list_fini(&l);
    ok(T->queues(self, &q, &err) == 0 && q.n == 1, "one queue");
    if (q.n == 1) {
        is_str(q.v[0].name, "default", "queue name");
        is_str(q.v[0].state, "open", "queue open");
        is_int(q.v[0].nodes, 64, "queue holds every node");
        is_int(q.v[0].max_walltime_s, 0, "no walltime limit");
    }
    cl_queue_list_fini(&q);
    T->destroy(self);
    T->destroy(NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        self = cluster(bad[i], &err);
        ok(!self && err.kind == LOOM_EINVAL, "refused: %.*s (%s)",
           (int)strlen(bad[i]) - 1, bad[i], err.message);
        T->destroy(self);
    }
}

static void t_features(void)
{
    struct loom_error err = {0};
    struct cl_node_list l = {0};
    void *self = cluster(SMALL, &err);

    ok(self && T->nodes(self, &l, &err) == 0 && l.n == 4, "4 nodes");
    if (l.n == 4) {
        is_int(l.v[3].cpus, 4, "4 cpus");
        is_int(l.v[3].memory_mb, 1000, "1000 MB");
        is_int(l.v[3].gpus, 1, "1 gpu");
        is_int(l.v[3].features.n, 2, "2 features");
        if (l.v[3].features.n == 2) {
            is_str(l.v[3].features.v[0], "ib", "feature ib, trimmed");
            is_str(l.v[3].features.v[1], "avx2", "feature avx2, trimmed");
        }
    }
    cl_node_list_fini(&l);
    T->destroy(self);
}

/* A sim cluster takes only the jobs that name it unless its section says
 * unpinned_jobs. */
static void t_pinned_only(void)
{
    struct loom_error err = {0};
    struct adaptor_desc d = {.caps = T->caps, .model = T->model};
    void *self = cluster(SMALL, &err);

    ok(self && T->describe, "describe: a sim cluster says what it takes");
    if (self && T->describe)
        T->describe(self, &d);
    is_int(d.pinned_only, 1, "without unpinned_jobs: pinned jobs only");
    is_int(d.caps, T->caps, "... the type's capabilities");
    T->destroy(self);
    self = cluster(SMALL "unpinned_jobs = yes\n", &err);
    d = (struct adaptor_desc){.caps = T->caps, .model = T->model};
    if (self && T->describe)
        T->describe(self, &d);
    is_int(d.pinned_only, 0, "unpinned_jobs = yes: any job");
    T->destroy(self);
    self = cluster(SMALL "unpinned_jobs = maybe\n", &err);
    ok(!self, "unpinned_jobs = maybe is refused");
    is_str(err.message, "<test>:9: key 'unpinned_jobs': expected yes or "
           "no (got 'maybe')", "... naming the file, line and key");
}

static void t_complete(void)
{
    static const char *const env[] = {"LOOM_SIM_RUNTIME_S=1", NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);
    time_t t0 = time(NULL), t1;
    double m0;
    struct seen s;

    poll_jobs(self);
    ok(last_complete && last_n == 0, "first jobs(): complete and empty");
    m0 = mono();
    ok(start1(self, 1, "n1", 2, 0, env, &err) == 0, "start 1 s job (%s)",
       err.message);
    t1 = time(NULL);
    ok(node_get(self, "n1") == 0, "node n1 listed");
    is_str(nd.state, "mixed", "n1 mixed");
    is_int(nd.cpus_alloc, 2, "n1 2 cpus allocated");
    is_int(nd.mem_alloc, 100, "n1 100 MB allocated");
    poll_jobs(self);
    ok(!last_complete && last_n == 1, "next jobs(): the start only");
    is_str(seen_get("sim-1")->state, "running", "running");
    s = wait_state(self, "sim-1", "completed", 30);
    is_str(s.state, "completed", "completed");
    ok(mono() - m0 >= 0.009, "after >= 10 ms real (%.4f s)", mono() - m0);
    ok(s.has_exit && s.exit == 0, "exit code 0");
    ok(s.start >= t0 && s.start <= t1 + 1, /* time() may lag a tick */
       "start time is the start() call");
    ok(s.end >= s.start && s.end <= s.start + 1, "end = start + 10 ms");
    is_int(s.n_nodes, 1, "on one node");
    ok(node_get(self, "n1") == 0 && !strcmp(nd.state, "idle") &&
       nd.cpus_alloc == 0 && nd.mem_alloc == 0, "n1 idle again");
    poll_jobs(self);
    is_int(last_n, 0, "no change since");
    T->destroy(self);
}

static void t_failures(void)
{
    static const char *const exit3[] = {"LOOM_SIM_RUNTIME_S=1",
                                        "LOOM_SIM_EXIT_CODE=3", NULL};
    static const char *const over[] = {"LOOM_SIM_RUNTIME_S=5", NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);
    double m0 = mono();
    struct seen s;

    ok(start1(self, 2, "n1", 1, 0, exit3, &err) == 0, "start exit-3 job");
    s = wait_state(self, "sim-2", "failed", 30);
    is_str(s.state, "failed", "exit 3: failed");
    ok(s.has_exit && s.exit == 3, "exit code 3");
    is_str(s.reason, "exited with code 3", "reason");

    m0 = mono();
    ok(start1(self, 3, "n2", 1, 2, over, &err) == 0, "start 5 s job, 2 s "
       "walltime");
    s = wait_state(self, "sim-3", "failed", 30);
    is_str(s.state, "failed", "over walltime: failed");
    ok(mono() - m0 >= 0.019, "killed after the 20 ms walltime");
    is_str(s.reason, "walltime exceeded", "reason walltime exceeded");
    ok(s.has_exit && s.exit == 137, "exit code 137");

    ok(start1(self, 4, "n3", 1, 2, NULL, &err) == 0, "start with walltime "
       "and no runtime");
    s = wait_state(self, "sim-4", "completed", 30);
    ok(!strcmp(s.state, "completed") && s.exit == 0, "runs its walltime, "
       "completes");
    T->destroy(self);
}

static void t_default_runtime(void)
{
    struct loom_error err = {0};
    void *self = cluster("nodes = 1\nspeed = 1000\n", &err);
    double m0 = mono();
    struct seen s;

    /* Only lower bounds on time: a loaded machine may be late, never
     * early. */
    ok(start1(self, 5, "n1", 1, 0, NULL, &err) == 0, "start, no runtime");
    s = wait_state(self, "sim-5", "completed", 30);
    is_str(s.state, "completed", "completed");
    ok(mono() - m0 >= 0.0599, "after the default 60 s = 60 ms (%.3f s)",
       mono() - m0);
    T->destroy(self);
}

static int start_req(void *self, struct start_req *r, struct loom_error *err)
{
    struct start_result res = {0};
    int rc = T->start(self, r, &res, err);

    start_result_fini(&res);
    return rc;
}

static void t_overcommit(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    const char *n32[] = {"n3", "n2"}, *n33[] = {"n3", "n3"};
    struct start_req r = {.loom_id = 20, .env = env, .nodes = n32,
                          .n_nodes = 2, .cpus_per_node = 1};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);

    poll_jobs(self);
    ok(start1(self, 10, "n2", 4, 0, env, &err) == 0, "n2 fully used");
    ok(start1(self, 11, "n2", 1, 0, env, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "one more cpu on n2: conflict");
    is_str(err.message, "cluster t: start job 11: node n2 has 0 free cpus, "
           "needs 1", "the message names cluster, job, node, numbers");
    ok(start_req(self, &r, &err) < 0 && err.kind == LOOM_ECONFLICT &&
       strstr(err.message, "node n2"), "n3 then n2: conflict on n2");
    ok(node_get(self, "n3") == 0 && !strcmp(nd.state, "idle") &&
       nd.cpus_alloc == 0, "the refused start left n3 untouched");
    r.nodes = n33;
    ok(start_req(self, &r, &err) < 0 && err.kind == LOOM_EINVAL &&
       strstr(err.message, "named twice"), "n3 twice: invalid");
    r.nodes = n32;
    r.n_nodes = 1;
    r.memory_mb = 1001;
    ok(start_req(self, &r, &err) < 0 && err.kind == LOOM_ECONFLICT &&
       strstr(err.message, "1000 MB free memory, needs 1001"),
       "memory over-commit: %s", err.message);
    r.memory_mb = 0;
    r.gpus = 2;
    ok(start_req(self, &r, &err) < 0 && err.kind == LOOM_ECONFLICT &&
       strstr(err.message, "1 free gpus, needs 2"), "gpu over-commit");
    ok(start1(self, 12, "n5", 1, 0, env, &err) < 0 &&
       err.kind == LOOM_ECONFLICT && strstr(err.message, "node n5 does not "
       "exist"), "unknown node n5: %s", err.message);
    ok(start1(self, 12, "n01", 1, 0, env, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "n01 is not n1");
    ok(start1(self, 12, "n3", 4, 0, env, &err) == 0, "the refused loom id "
       "starts later");
    poll_jobs(self);
    is_int(last_n, 2, "refused starts left no job");
    T->destroy(self);
}

static void t_bad_requests(void)
{
    static const char *const rt[] = {"LOOM_SIM_RUNTIME_S=abc", NULL};
    static const char *const neg[] = {"LOOM_SIM_RUNTIME_S=-1", NULL};
    static const char *const ec[] = {"LOOM_SIM_EXIT_CODE=256", NULL};
    struct start_req r = {.loom_id = 1};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);

    ok(start1(self, 1, "n1", 1, 0, rt, &err) < 0 && err.kind == LOOM_EINVAL,
       "runtime abc: %s", err.message);
    ok(start1(self, 1, "n1", 1, 0, neg, &err) < 0 && err.kind == LOOM_EINVAL,
       "runtime -1: invalid");
    ok(start1(self, 1, "n1", 1, 0, ec, &err) < 0 && err.kind == LOOM_EINVAL,
       "exit code 256: invalid");
    ok(start1(self, 0, "n1", 1, 0, NULL, &err) < 0 &&
       err.kind == LOOM_EINVAL, "loom id 0: invalid");
    ok(start_req(self, &r, &err) < 0 && err.kind == LOOM_EINVAL,
       "no nodes: invalid");
    ok(start1(self, 1, "n1", -1, 0, NULL, &err) < 0 &&
       err.kind == LOOM_EINVAL, "negative cpus: invalid");
    T->destroy(self);
}

static void t_node_state(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);

    ok(start1(self, 1, "n1", 1, 0, env, &err) == 0, "job on n1");
    ok(start1(self, 2, "n2", 4, 0, env, &err) == 0, "job filling n2");
    ok(node_get(self, "n2") == 0 && !strcmp(nd.state, "allocated"),
       "n2 allocated");
    ok(T->set_node_state(self, "n1", "drain", "disk", &err) == 0, "drain n1");
    ok(node_get(self, "n1") == 0, "n1 listed");
    is_str(nd.state, "draining", "n1 draining while its job runs");
    is_str(nd.reason, "disk", "reason kept");
    ok(start1(self, 3, "n1", 1, 0, env, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "no start on a draining node");
    is_str(err.message, "cluster t: start job 3: node n1 is draining",
           "message says why");
    ok(T->cancel(self, "sim-1", &err) == 0, "cancel its job");
    ok(node_get(self, "n1") == 0 && !strcmp(nd.state, "drained"),
       "n1 drained when empty");
    ok(T->set_node_state(self, "n1", "up", NULL, &err) == 0, "up n1");
    ok(node_get(self, "n1") == 0 && !strcmp(nd.state, "idle") &&
       !strcmp(nd.reason, "(none)"), "n1 idle, reason cleared");
    ok(T->set_node_state(self, "n2", "down", "psu", &err) == 0, "down n2");
    ok(node_get(self, "n2") == 0 && !strcmp(nd.state, "down") &&
       !strcmp(nd.reason, "psu"), "n2 down, reason psu");
    poll_jobs(self);
    is_str(seen_get("sim-2")->state, "running", "its job keeps running "
           "(documented)");
    ok(start1(self, 4, "n2", 0, 0, env, &err) < 0 &&
       err.kind == LOOM_ECONFLICT, "no start on a down node");
    ok(T->set_node_state(self, "n2", "maint", NULL, &err) < 0 &&
       err.kind == LOOM_EINVAL, "state maint: invalid");
    ok(T->set_node_state(self, "n2", NULL, NULL, &err) < 0 &&
       err.kind == LOOM_EINVAL, "no state: invalid");
    ok(T->set_node_state(self, "n9", "up", NULL, &err) < 0 &&
       err.kind == LOOM_ENOENT, "node n9: not found");
    ok(T->set_node_state(self, "x", "up", NULL, &err) < 0 &&
       err.kind == LOOM_ENOENT, "node x: not found");
    T->destroy(self);
}

static void t_suspend(void)
{
    static const char *const env[] = {"LOOM_SIM_RUNTIME_S=20", NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);
    double m0, m1;
    struct seen s;

    poll_jobs(self);
    m0 = mono();
    ok(start1(self, 1, "n1", 1, 0, env, &err) == 0, "start a 200 ms job");
    ok(T->suspend(self, "sim-1", &err) == 0, "suspend it");
    ok(T->suspend(self, "sim-1", &err) == 0, "suspend again: no change");
    poll_jobs(self);
    is_str(seen_get("sim-1")->state, "suspended", "suspended");
    ok(node_get(self, "n1") == 0 && nd.cpus_alloc == 1, "keeps its cpus");
    while (mono() - m0 < 0.35) {
        poll_jobs(self);
        nap_ms(5);
    }
    is_str(seen_get("sim-1")->state, "suspended", "not over after 350 ms "
           "suspended");
    m1 = mono();
    ok(T->resume(self, "sim-1", &err) == 0, "resume");
    ok(T->resume(self, "sim-1", &err) == 0, "resume again: no change");
    s = wait_state(self, "sim-1", "completed", 30);
    is_str(s.state, "completed", "completed after the resume");
    ok(mono() - m1 >= 0.19, "the 200 ms left still ran (%.3f s)",
       mono() - m1);
    ok(mono() - m0 >= 0.54, "end moved by the suspension");
    ok(T->suspend(self, "sim-1", &err) < 0 && err.kind == LOOM_ECONFLICT,
       "suspend a finished job: conflict");
    ok(T->resume(self, "sim-1", &err) < 0 && err.kind == LOOM_ECONFLICT,
       "resume a finished job: conflict");
    ok(T->suspend(self, "sim-99", &err) < 0 && err.kind == LOOM_ENOENT,
       "suspend unknown: not found");
    T->destroy(self);
}

static void t_cancel(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);
    struct seen s;

    poll_jobs(self);
    ok(start1(self, 1, "n1", 3, 0, env, &err) == 0, "start a long job");
    ok(T->suspend(self, "sim-1", &err) == 0, "suspend it");
    ok(T->cancel(self, "sim-1", &err) == 0, "cancel it while suspended");
    poll_jobs(self);
    s = *seen_get("sim-1");
    is_str(s.state, "cancelled", "cancelled");
    is_str(s.reason, "cancelled", "reason");
    ok(!s.has_exit, "no exit code");
    /* time() may lag the precise clock by a tick at a second's boundary */
    ok(s.end >= s.start && s.end <= time(NULL) + 1, "end time is now");
    ok(node_get(self, "n1") == 0 && nd.cpus_alloc == 0, "cpus freed");
    ok(T->cancel(self, "sim-1", &err) == 0, "cancel again: fine");
    poll_jobs(self);
    is_int(last_n, 0, "and no change");
    ok(T->cancel(self, "sim-999", &err) < 0 && err.kind == LOOM_ENOENT,
       "unknown job: not found");
    is_str(err.message, "cluster t: cancel sim-999: no such job", "message");
    ok(T->cancel(self, "bogus", &err) < 0 && err.kind == LOOM_ENOENT,
       "bogus id: not found");
    ok(T->cancel(self, "sim-", &err) < 0 && err.kind == LOOM_ENOENT,
       "sim- : not found");
    ok(T->cancel(self, "sim-1x", &err) < 0 && err.kind == LOOM_ENOENT,
       "sim-1x: not found");
    T->destroy(self);
}

static void t_idempotent(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    const char *nodes[] = {"n1"};
    struct start_req r = {.loom_id = 7, .env = env, .nodes = nodes,
                          .n_nodes = 1, .cpus_per_node = 2};
    struct start_result res = {0};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);

    poll_jobs(self);
    ok(T->start(self, &r, &res, &err) == 0, "start job 7");
    is_str(res.native_id, "sim-7", "native id sim-7");
    is_int(res.adopted, 0, "a new job");
    start_result_fini(&res);
    poll_jobs(self);
    is_int(last_n, 1, "one change");
    nodes[0] = "n2";
    ok(T->start(self, &r, &res, &err) == 0, "start job 7 again");
    is_str(res.native_id, "sim-7", "the same job");
    is_int(res.adopted, 1, "adopted");
    start_result_fini(&res);
    ok(node_get(self, "n1") == 0 && nd.cpus_alloc == 2, "n1 not counted "
       "twice");
    ok(node_get(self, "n2") == 0 && nd.cpus_alloc == 0, "n2 untouched");
    poll_jobs(self);
    is_int(last_n, 0, "no change");
    T->destroy(self);
}

static void t_adopt(void)
{
    static const char *const done[] = {"LOOM_SIM_RUNTIME_S=600", NULL};
    static const char *const run[] = {LONG_RUN, NULL};
    const char *nodes[] = {"n1"};
    time_t now = time(NULL);
    struct start_req r = {.loom_id = 8, .env = done, .nodes = nodes,
                          .n_nodes = 1, .cpus_per_node = 1, .adopt = 1,
                          .start_time = now - 1000};
    struct start_result res = {0};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);
    struct seen s;

    ok(T->set_node_state(self, "n1", "down", NULL, &err) == 0, "n1 down");
    ok(T->start(self, &r, &res, &err) == 0, "adopt job 8 started 1000 s "
       "ago (%s)", err.message);
    is_int(res.adopted, 1, "adopted");
    start_result_fini(&res);
    poll_jobs(self);
    ok(last_complete && last_n == 1, "first jobs(): complete, job 8");
    s = *seen_get("sim-8");
    is_str(s.state, "completed", "it had ended: completed");
    is_int(s.start, now - 1000, "start time as recorded");
    is_int(s.end, now - 1000 + 6, "end = start + 600 s / 100");
    r.loom_id = 9;
    r.walltime_s = 300;
    ok(T->start(self, &r, &res, &err) == 0, "adopt job 9, walltime 300 s");
    start_result_fini(&res);
    poll_jobs(self);
    s = *seen_get("sim-9");
    ok(!strcmp(s.state, "failed") && s.exit == 137 &&
       s.end == now - 1000 + 3, "killed at start + 3 s");
    r.loom_id = 10;
    r.walltime_s = 0;
    r.env = run;
    r.start_time = now - 10;
    ok(T->start(self, &r, &res, &err) == 0, "adopt job 10 on the down n1");
    start_result_fini(&res);
    poll_jobs(self);
    s = *seen_get("sim-10");
    ok(!strcmp(s.state, "running") && s.start == now - 10, "still running, "
       "from its recorded start");
    ok(node_get(self, "n1") == 0 && nd.cpus_alloc == 1, "holding n1");
    T->destroy(self);
}

static void t_incremental(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    struct loom_error err = {0};
    void *self = cluster(SMALL, &err);

    ok(start1(self, 1, "n1", 1, 0, env, &err) == 0 &&
       start1(self, 2, "n2", 1, 0, env, &err) == 0, "two jobs before any "
       "jobs()");
    poll_jobs(self);
    ok(last_complete && last_n == 2, "first answer: complete, both");
    poll_jobs(self);
    ok(!last_complete && last_n == 0, "then: nothing changed");
    ok(start1(self, 3, "n3", 1, 0, env, &err) == 0 &&
       start1(self, 4, "n4", 1, 0, env, &err) == 0 &&
       start1(self, 5, "n4", 1, 0, env, &err) == 0, "three more");
    ok(T->cancel(self, "sim-2", &err) == 0, "cancel job 2");
    ok(T->cancel(self, "sim-4", &err) == 0, "cancel job 4");
    poll_jobs(self);
    ok(!last_complete && last_n == 4, "3, 4, 5 started, 2 cancelled: 4 "
       "changes (got %zu)", last_n);
    ok(T->suspend(self, "sim-1", &err) == 0 &&
       T->resume(self, "sim-3", &err) == 0, "suspend 1, resume running 3");
    poll_jobs(self);
    ok(last_n == 1 && !strcmp(seen_get("sim-1")->state, "suspended"),
       "only job 1 changed");
    ok(T->resume(self, "sim-1", &err) == 0, "resume 1");
    poll_jobs(self);
    ok(last_n == 1 && !strcmp(seen_get("sim-1")->state, "running"),
       "job 1 running again");
    poll_jobs(self);
    is_int(last_n, 0, "quiet");
    T->destroy(self);
}

static void t_big(void)
{
    static const char *const env[] = {LONG_RUN, NULL};
    struct loom_error err = {0};
    struct cl_node_list l = {0};
    double m0 = mono(), m1;
    void *self = cluster("nodes = 100000\n", &err);

    ok(self != NULL, "100,000-node cluster created");
    if (!self)
        return;
    m1 = mono();
    ok(T->nodes(self, &l, &err) == 0, "nodes()");
    printf("# create %.1f ms, nodes() of 100,000: %.1f ms\n",
           (m1 - m0) * 1e3, (mono() - m1) * 1e3);
    is_int(l.n, 100000, "lists 100,000 nodes");
    if (l.n == 100000) {
        is_str(l.v[99999].name, "n100000", "the last is n100000");
        is_str(l.v[99999].state, "idle", "idle");
    }
    cl_node_list_fini(&l);
    ok(start1(self, 1, "n100000", 1, 0, env, &err) == 0, "start on n100000");
    ok(start1(self, 2, "n100001", 1, 0, env, &err) < 0, "n100001 is not "
       "there");
    T->destroy(self);
}

int main(void)
{
    T = adaptor_type_find("sim");
    ok(T != NULL, "type sim is registered");
    if (!T)
        return done_testing();
    t_config();
    t_features();
    t_pinned_only();
    t_complete();
    t_failures();
    t_default_runtime();
    t_overcommit();
    t_bad_requests();
    t_node_state();
    t_suspend();
    t_cancel();
    t_idempotent();
    t_adopt();
    t_incremental();
    t_big();
    conf_destroy(conf);
    return done_testing();
}
