/* adaptors_slurmrest.c - the slurmrestd adaptor's parsers on recorded
 * answers (tests/fixtures/slurmrest/), its tokens, its configuration, its
 * fallback pack, and its asynchronous form against a slurmrestd that is
 * not there. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "adaptors/curlloop.h"
#include "adaptors/slurmrest.h"
#include "core/conf.h"
#include "core/hostlist.h"
#include "core/timeutil.h"
#include "tests/lib/tap.h"

#include <curl/curl.h>

static char fixtures[4096];

static json_t *load(const char *name)
{
    char path[4200];
    json_error_t je;
    json_t *d;

    snprintf(path, sizeof(path), "%s/%s", fixtures, name);
    d = json_load_file(path, 0, &je);
    if (!d)
        printf("# %s: %s\n", path, je.text);
    return d;
}

static const struct cl_node *node(const struct cl_node_list *l,
                                  const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].name, name))
            return &l->v[i];
    return NULL;
}

static const struct cl_job *job(const struct cl_job_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].name && !strcmp(l->v[i].name, name))
            return &l->v[i];
    return NULL;
}

static char *joined(const struct strv *v)
{
    static char buf[256];
    size_t k = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < v->n && k < sizeof(buf); i++)
        k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? "," : "",
                              v->v[i]);
    return buf;
}

/* ---- nodes ---------------------------------------------------------------- */

static void check_nodes(const char *file)
{
    struct cl_node_list l = {0};
    struct loom_error err = {0};
    json_t *d = load(file);
    static const char *const want[][2] = {
        {"n1", "mixed"}, {"n2", "mixed"}, {"n3", "allocated"},
        {"n4", "draining"}, {"n5", "drained"}, {"n6", "down"},
        {"n7", "maint"}, {"n8", "unknown"},
    };
    const struct cl_node *n;

    ok(d && srest_parse_nodes(d, NULL, &l, &err) == 0, "%s parses (%s)",
       file, err.message);
    is_int((int)l.n, 8, "%s: 8 nodes", file);
    for (size_t i = 0; i < 8; i++) {
        n = node(&l, want[i][0]);
        is_str(n ? n->state : "(none)", want[i][1], "%s: %s is %s", file,
               want[i][0], want[i][1]);
    }
    n = node(&l, "n1");
    ok(n && n->cpus == 2 && n->cpus_alloc == 1 && n->memory_mb == 2048 &&
       n->memory_alloc_mb == 100 && n->gpus == 2, "%s: n1 has 2 cpus, 1 "
       "allocated, 2048 MB, 100 allocated, 2 gpus", file);
    n = node(&l, "n2");
    is_str(n ? joined(&n->features) : "", "fast,ssd", "%s: n2's features",
           file);
    n = node(&l, "n5");
    is_str(n && n->reason ? n->reason : "", "disk \"bad\" \\ see ticket",
           "%s: n5's reason keeps quotes and a backslash", file);
    n = node(&l, "n4");
    is_str(n && n->reason ? n->reason : "", "drain with a job",
           "%s: n4's reason", file);
    n = node(&l, "n8");
    is_str(n && n->reason ? n->reason : "", "not responding",
           "%s: n8 is not responding", file);
    n = node(&l, "n7");
    is_str(n ? joined(&n->queues) : "", "debug,big", "%s: n7's partitions",
           file);
    cl_node_list_fini(&l);
    ok(srest_parse_nodes(d, "big", &l, &err) == 0 && l.n == 2 &&
       !strcmp(l.v[0].name, "n7") && !strcmp(l.v[1].name, "n8"),
       "%s: partition big has n7 and n8 only", file);
    cl_node_list_fini(&l);
    json_decref(d);
}

/* ---- jobs ------------------------------------------------------------------ */

static void check_jobs(const char *file)
{
    struct cl_job_list l = {0};
    struct loom_error err = {0};
    unsigned long max = 0;
    json_t *d = load(file);
    static const struct {
        const char *name, *state;
        int exit_code; /* -1: none */
    } want[] = {
        {"ok-exit0", "completed", 0},
        {"fail-exit3", "failed", 3},
        {"killed-sig9", "failed", 137},
        {"we\"ird\\name", "completed", 0},
        {"cancelled-running", "cancelled", 143},
        {"two-nodes", "running", -1},
        {"suspended", "suspended", -1},
        {"pending-resources", "pending", -1},
        {"held", "held", -1},
        {"held-admin", "held", -1},
        {"cancelled-pending", "cancelled", -1},
    };
    const struct cl_job *j;

    ok(d && srest_parse_jobs(d, &l, &max, &err) == 0, "%s parses (%s)", file,
       err.message);
    is_int((int)l.n, 14, "%s: 14 jobs", file);
    is_int((int)max, 14, "%s: the highest job id is 14", file);
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        j = job(&l, want[i].name);
        is_str(j ? j->state : "(none)", want[i].state, "%s: %s is %s", file,
               want[i].name, want[i].state);
        if (want[i].exit_code < 0)
            ok(j && !j->has_exit_code, "%s: %s has no exit code", file,
               want[i].name);
        else
            ok(j && j->has_exit_code && j->exit_code == want[i].exit_code,
               "%s: %s exited %d", file, want[i].name, want[i].exit_code);
    }
    j = job(&l, "we\"ird\\name");
    ok(j && j->loom_id == 42, "%s: the comment loom:42 is Loom job 42", file);
    j = job(&l, "ok-exit0");
    ok(j && j->loom_id == 0 && !strcmp(j->native_id, "1") &&
       j->start_time > 0 && j->end_time > 0,
       "%s: a native job: no Loom id, its id, start and end", file);
    /* v0.0.36 leaves user_name empty */
    if (strncmp(file, "v0.0.36", 7) == 0)
        ok(j && !j->owner, "%s: no owner (v0.0.36 does not say)", file);
    else
        is_str(j && j->owner ? j->owner : "", "root", "%s: its owner", file);
    j = job(&l, "two-nodes");
    is_str(j ? joined(&j->nodes) : "", "n1,n2", "%s: n[1-2] is n1 and n2",
           file);
    ok(j && j->end_time == 0, "%s: a running job has no end yet", file);
    j = job(&l, "pending-resources");
    ok(j && j->start_time == 0 && j->nodes.n == 0 && j->reason &&
       !strcmp(j->reason, "Resources"), "%s: a pending job: no start, no "
       "nodes, Slurm's reason", file);
    j = job(&l, "held");
    ok(j && j->req.nodes == 2 && j->req.cpus_per_node == 2 &&
       j->req.memory_mb == 300 && j->req.walltime_s == 300,
       "%s: a job its user holds says what it asked for (2 nodes, 2 cpus, "
       "300 MB, 5 min)", file);
    j = job(&l, "held-admin");
    ok(j && j->req.nodes == 0, "%s: an admin's hold is not offered to Loom",
       file);
    cl_job_list_fini(&l);
    json_decref(d);
}

/* The scanner reads every job as the full parse does. */
static int same_job(const struct cl_job *a, const struct cl_job *b)
{
#define SAME_STR(f) ((!a->f && !b->f) || (a->f && b->f && !strcmp(a->f, b->f)))
    int same = SAME_STR(native_id) && SAME_STR(name) && SAME_STR(owner) &&
               SAME_STR(state) && SAME_STR(reason) && SAME_STR(stdout_path) &&
               SAME_STR(stderr_path) && a->loom_id == b->loom_id &&
               a->submit_time == b->submit_time &&
               a->start_time == b->start_time && a->end_time == b->end_time &&
               a->has_exit_code == b->has_exit_code &&
               a->exit_code == b->exit_code && a->nodes.n == b->nodes.n &&
               a->node_failure == b->node_failure &&
               !memcmp(&a->req, &b->req, sizeof(a->req));
#undef SAME_STR
    for (size_t i = 0; same && i < a->nodes.n; i++)
        same = !strcmp(a->nodes.v[i], b->nodes.v[i]);
    return same;
}

static char *slurp(const char *name, size_t *len)
{
    char path[4200], *buf;
    FILE *f;
    long n;

    snprintf(path, sizeof(path), "%s/%s", fixtures, name);
    if (!(f = fopen(path, "rb")))
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static void check_scan(const char *file)
{
    struct cl_job_list full = {0}, fast = {0};
    struct loom_error err = {0};
    unsigned long m1 = 0, m2 = 0;
    size_t len = 0, bad_prefix = 0;
    char *text = slurp(file, &len);
    json_t *d = load(file);
    int same = 1;

    ok(text && d && srest_parse_jobs(d, &full, &m1, &err) == 0 &&
       srest_scan_jobs(text, len, &fast, &m2, &err) == 0,
       "%s: scanned as well as parsed (%s)", file, err.message);
    ok(full.n == fast.n && full.n > 0 && m1 == m2, "%s: the same %zu jobs",
       file, fast.n);
    for (size_t i = 0; same && i < full.n && i < fast.n; i++)
        same = same_job(&full.v[i], &fast.v[i]);
    ok(same, "%s: every field of every job alike", file);
    cl_job_list_fini(&full);
    cl_job_list_fini(&fast);
    /* every prefix cut at a 97th byte fails, cleanly */
    for (size_t cut = 1; text && cut < len - 2; cut += 97) {
        if (srest_scan_jobs(text, cut, &fast, &m2, &err) == 0 || fast.n)
            bad_prefix++;
        cl_job_list_fini(&fast);
    }
    is_int((int)bad_prefix, 0, "%s: a cut answer is refused wherever it is "
           "cut", file);
    free(text);
    json_decref(d);
}

static void check_scan_bad(void)
{
    static const char *const bad[] = {
        "{\"jobs\": [{\"job_id\": 1, \"job_state\": \"RUNNING\",}]}",
        "{\"jobs\": [{\"job_id\": 1, \"job_state\": nul}]}",
        "{\"jobs\": [{\"job_id\": 1, \"job_state\": \"RUN\nNING\"}]}",
        "{\"jobs\": [{\"job_id\": 1}]} trailing",
        "{\"jobs\": [{\"job_id\": -, \"job_state\": \"RUNNING\"}]}",
        "{\"jobs\": [{\"job_id\": 1-2, \"job_state\": \"RUNNING\"}]}",
        "{\"jobs\": [{\"job_id\": 1, \"job_state\": \"RUN\\qNING\"}]}",
        "{\"jobs\": {}}",
        "{\"meta\": 1}",
        "[1, 2]",
        "",
    };
    struct cl_job_list l = {0};
    struct loom_error err = {0};
    unsigned long m = 0;
    const char *esc;
    char deep[400];
    int n = 0;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ok(srest_scan_jobs(bad[i], strlen(bad[i]), &l, &m, &err) < 0 &&
           l.n == 0 && err.kind == LOOM_ETEMP, "refused: %.40s... (%s)",
           bad[i], err.message);
    }
    n = snprintf(deep, sizeof(deep), "{\"x\": ");
    for (int i = 0; i < 100; i++)
        deep[n++] = '[';
    deep[n] = '\0';
    ok(srest_scan_jobs(deep, (size_t)n, &l, &m, &err) < 0 &&
       strstr(err.message, "nesting too deep"), "100 brackets deep: %s",
       err.message);
    esc = "{\"jobs\": [{\"job_id\": 3, \"job_state\": \"PEN\\u0044ING\", "
          "\"name\": \"a\\\"b\"}]}";
    ok(srest_scan_jobs(esc, strlen(esc), &l, &m, &err) == 0 && l.n == 1 &&
       !strcmp(l.v[0].state, "pending") && !strcmp(l.v[0].name, "a\"b"),
       "escapes in a field Loom reads are decoded (%s)", err.message);
    cl_job_list_fini(&l);
    esc = "{\"jobs\": [{\"job_id\": 5, \"job_state\": \"NODE_FAIL\"}, "
          "{\"job_id\": 6, \"job_state\": \"FAILED\"}]}";
    ok(srest_scan_jobs(esc, strlen(esc), &l, &m, &err) == 0 && l.n == 2 &&
       !strcmp(l.v[0].state, "failed") && l.v[0].node_failure == 1 &&
       !strcmp(l.v[1].state, "failed") && l.v[1].node_failure == 0,
       "NODE_FAIL is failed with node_failure; FAILED without (%s)",
       err.message);
    cl_job_list_fini(&l);
    /* as slurmrestd writes paths, and one past the decoder's stack buffer */
    esc = "{\"jobs\": [{\"job_id\": 4, \"job_state\": \"COMPLETED\", "
          "\"standard_output\": \"\\/tmp\\/a\\tb.out\", "
          "\"standard_error\": \"\\/x\\/"
          "0123456789012345678901234567890123456789012345678901234567890123"
          "0123456789012345678901234567890123456789012345678901234567890123"
          "0123456789012345678901234567890123456789012345678901234567890123"
          "0123456789012345678901234567890123456789012345678901234567890123"
          "\\u00e9\", \"memory_per_cpu\": null, \"exit_code\": 0}]}";
    ok(srest_scan_jobs(esc, strlen(esc), &l, &m, &err) == 0 && l.n == 1 &&
       !strcmp(l.v[0].stdout_path, "/tmp/a\tb.out") &&
       !strncmp(l.v[0].stderr_path, "/x/0123", 7) &&
       strlen(l.v[0].stderr_path) == 3 + 256 + 2 &&
       !strcmp(l.v[0].stderr_path + 259, "\xc3\xa9"),
       "\\/ and \\t decoded, a long string with \\u too, null read (%s)",
       err.message);
    cl_job_list_fini(&l);
    /* one value a field serves every job: a field one job has and the
     * next lacks, or has as null or of another kind, is not carried over */
    esc = "{\"jobs\": [{\"job_id\": 7, \"job_state\": \"PENDING\", "
          "\"state_reason\": \"JobHeldUser\", \"name\": \"first\", "
          "\"node_count\": 2, \"time_limit\": 5, "
          "\"memory_per_node\": 300, \"standard_output\": \"\\/o\"}, "
          "{\"job_id\": 8, \"job_state\": \"PENDING\", "
          "\"state_reason\": \"JobHeldUser\", \"node_count\": null, "
          "\"time_limit\": 1.5, \"memory_per_cpu\": 10}, "
          "{\"job_id\": 9, \"job_state\": \"PENDING\", "
          "\"state_reason\": \"JobHeldUser\", \"node_count\": 3, "
          "\"name\": \"third\"}]}";
    ok(srest_scan_jobs(esc, strlen(esc), &l, &m, &err) == 0 && l.n == 3 &&
       !strcmp(l.v[0].name, "first") && l.v[0].req.nodes == 2 &&
       l.v[0].req.walltime_s == 300 && l.v[0].req.memory_mb == 300 &&
       !strcmp(l.v[0].stdout_path, "/o") &&
       !l.v[1].name && l.v[1].req.nodes == 0 && l.v[1].req.walltime_s == 0 &&
       l.v[1].req.memory_mb == 10 && !l.v[1].stdout_path &&
       !strcmp(l.v[2].name, "third") && l.v[2].req.nodes == 3 &&
       l.v[2].req.memory_mb == 0 && l.v[2].req.walltime_s == 0,
       "no field of a job is carried into the next (%s)", err.message);
    cl_job_list_fini(&l);
    esc = "{\"jobs\": [{\"job_id\": 10, \"job_state\": \"RUNNING\"}, "
          "{\"job_id\": 11, \"job_state\": 12}]}";
    ok(srest_scan_jobs(esc, strlen(esc), &l, &m, &err) < 0 && l.n == 0 &&
       strstr(err.message, "jobs[1].job_state"),
       "a field of the wrong kind after a good one is refused (%s)",
       err.message);
    cl_job_list_fini(&l);
}

/* ---- partitions, submit, errors --------------------------------------------- */

static void check_partitions(const char *file)
{
    struct cl_queue_list l = {0};
    struct loom_error err = {0};
    json_t *d = load(file);

    ok(d && srest_parse_partitions(d, NULL, &l, &err) == 0 && l.n == 2,
       "%s: two partitions (%s)", file, err.message);
    ok(l.n == 2 && !strcmp(l.v[0].name, "debug") && l.v[0].nodes == 8 &&
       !strcmp(l.v[0].state, "open") && l.v[0].max_walltime_s == 0,
       "%s: debug: 8 nodes, open, no limit", file);
    ok(l.n == 2 && !strcmp(l.v[1].name, "big") && l.v[1].nodes == 2 &&
       l.v[1].max_walltime_s == 86400, "%s: big: 2 nodes, 1 day", file);
    cl_queue_list_fini(&l);
    ok(srest_parse_partitions(d, "big", &l, &err) == 0 && l.n == 1,
       "%s: only big when asked", file);
    cl_queue_list_fini(&l);
    json_decref(d);
}

static void check_answers(void)
{
    struct loom_error err = {0};
    json_t *d = load("v0.0.38-submit.json");
    char *id = NULL, what[320];

    ok(d && srest_parse_submit(d, &id, &err) == 0 && id && atol(id) > 0,
       "a submit's answer has the job id (%s)", id ? id : err.message);
    free(id);
    json_decref(d);
    d = load("v0.0.38-submit-held.json");
    id = NULL;
    ok(d && srest_parse_submit(d, &id, &err) == 0 && id,
       "a held submit (error 2042 with a job id) is a success");
    is_int(srest_first_error(d, what, sizeof(what)), 2042,
           "... its error (an error_code, not an error_number) is 2042");
    free(id);
    json_decref(d);
    d = load("v0.0.38-delete-unknown.json");
    is_int(srest_first_error(d, what, sizeof(what)), 2017,
           "a cancel of an unknown job: error 2017");
    ok(strstr(what, "Invalid job id specified") != NULL, "... said: %s", what);
    json_decref(d);
}

/* slurmdbd's record through openapi/dbv0.0.38, recorded from a Slurm with
 * accounting (LOOM_SLURM_ACCT=1) where sacct showed, for job 1,
 * 1|COMPLETED|00:00.746|00:00.086| and 1.batch MaxRSS 21256K; -none is
 * the answer while the job ran ("Nothing found", 9003). */
static void check_usage(void)
{
    json_t *d = load("v0.0.38-db-job.json"), *step, *t;
    struct cl_usage u = {0};

    is_int(srest_parse_usage(d, "1", &u), 1, "job 1's record has its usage");
    ok(u.known && u.user_cpu_ms == 746 && u.system_cpu_ms == 86 &&
       u.max_rss_kb == 21256, "... sacct's 00:00.746, 00:00.086, 21256K "
       "(%lld, %lld, %lld)", u.user_cpu_ms, u.system_cpu_ms, u.max_rss_kb);
    is_int(srest_parse_usage(d, "2", &u), 0, "job 2 is not in it");
    /* a second step: the cpu times add up (microseconds carried), the
     * largest mem is the max */
    step = json_deep_copy(json_array_get(json_object_get(json_array_get(
        json_object_get(d, "jobs"), 0), "steps"), 0));
    t = json_object_get(json_object_get(step, "time"), "user");
    json_object_set_new(t, "seconds", json_integer(1));
    json_object_set_new(t, "microseconds", json_integer(400000));
    json_array_append_new(json_object_get(json_array_get(
        json_object_get(d, "jobs"), 0), "steps"), step);
    is_int(srest_parse_usage(d, "1", &u), 1, "two steps");
    ok(u.user_cpu_ms == 2146 && u.system_cpu_ms == 172 &&
       u.max_rss_kb == 21256, "... user 746108 + 1400000 us is 2146 ms, "
       "system twice 86136 us is 172 ms (%lld, %lld)", u.user_cpu_ms,
       u.system_cpu_ms);
    json_object_set_new(t, "seconds", json_string("1"));
    is_int(srest_parse_usage(d, "1", &u), 0,
           "a cpu time that is not a number: no usage yet");
    json_object_set_new(t, "seconds", json_integer(1));
    json_object_set_new(json_object_get(json_array_get(json_object_get(
        d, "jobs"), 0), "state"), "current", json_string("RUNNING"));
    is_int(srest_parse_usage(d, "1", &u), 0,
           "a record still RUNNING: none yet");
    json_decref(d);
    d = load("v0.0.38-db-job-none.json");
    ok(d && srest_parse_usage(d, "1", &u) == 0,
       "'Nothing found' while the job runs: none yet");
    json_decref(d);
}

static void check_bad(void)
{
    struct cl_job_list jl = {0};
    struct cl_node_list nl = {0};
    struct loom_error err = {0};
    unsigned long max = 0;
    json_t *d;

    d = json_loads("{\"jobs\": [{\"job_id\": 5, \"job_state\": \"RUNNING\"},"
                   "{\"job_id\": 6}]}", 0, NULL);
    ok(srest_parse_jobs(d, &jl, &max, &err) < 0 && err.kind == LOOM_ETEMP &&
       strstr(err.message, "jobs[1].job_state: missing"),
       "a job without job_state is an error naming it: %s", err.message);
    ok(jl.n == 0, "... and nothing is kept");
    json_decref(d);
    d = json_loads("{\"nodes\": {}}", 0, NULL);
    ok(srest_parse_nodes(d, NULL, &nl, &err) < 0 &&
       strstr(err.message, "nodes: not a list"), "nodes not a list: %s",
       err.message);
    json_decref(d);
    d = json_loads("{\"nodes\": [{\"name\": \"a\", \"state\": \"idle\", "
                   "\"cpus\": \"2\"}]}", 0, NULL);
    ok(srest_parse_nodes(d, NULL, &nl, &err) < 0 &&
       strstr(err.message, "nodes[0].cpus"), "cpus as a string: %s",
       err.message);
    json_decref(d);
    ok(srest_parse_jobs(NULL, &jl, &max, &err) < 0 &&
       strstr(err.message, "jobs: missing"), "no document: %s", err.message);
}

static void check_hostlist(void)
{
    struct loom_error err = {0};
    struct strv v = {0};

    ok(hostlist_expand("n[1-3,5],gpu[08-10]x,login", LOOM_ETEMP, &v,
                       &err) == 0, "a hostlist expands");
    is_str(joined(&v), "n1,n2,n3,n5,gpu08x,gpu09x,gpu10x,login",
           "... ranges, widths, suffixes and plain names");
    strv_fini(&v);
    ok(hostlist_expand("", LOOM_ETEMP, &v, &err) == 0 && v.n == 0,
       "an empty list");
    ok(hostlist_expand("n[1-", LOOM_ETEMP, &v, &err) < 0 &&
       err.kind == LOOM_ETEMP, "n[1- is refused, a temporary failure: %s",
       err.message);
    ok(hostlist_expand("n[3-1]", LOOM_ETEMP, &v, &err) < 0,
       "n[3-1] is refused");
    ok(hostlist_expand("n[1-999999]", LOOM_ETEMP, &v, &err) < 0,
       "a million hosts are refused: %s", err.message);
    strv_fini(&v);
}

static void check_jwt(void)
{
    const unsigned char key[] = "0123456789abcdef0123456789abcdef";
    char *t = srest_jwt_sign(key, 32, "loom", 1700000000, 1700001800);
    struct loom_error err = {0};
    char *user = NULL;
    time_t exp = 0;

    /* What Python's hmac makes of the same header, claims and key. */
    is_str(t ? t : "", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJleHAiOjE3MDA"
           "wMDE4MDAsImlhdCI6MTcwMDAwMDAwMCwic3VuIjoibG9vbSJ9._MNka3Uwf2ZCQOh"
           "voHJ29xL1l0ZQU1VE55vEZI8LxU8", "an HS256 token as scontrol token "
           "makes it");
    ok(t && srest_jwt_claims(t, &user, &exp, &err) == 0 && user &&
       !strcmp(user, "loom") && exp == 1700001800,
       "its claims read back: sun loom, exp");
    free(user);
    free(t);
    ok(srest_jwt_claims("not.a-token", &user, &exp, &err) < 0,
       "a string that is no JWT is refused: %s", err.message);
}

/* ---- configuration and the asynchronous form ---------------------------------- */

static const struct adaptor_type *T;

static int create(const char *text, void **inst, struct adaptor_env *env,
                  struct loom_error *err)
{
    struct conf *c = conf_parse("<test>", text, err);
    int rc = c ? T->create(conf_section(c, "cluster", "sr"), env, inst, err)
               : -1;

    conf_destroy(c);
    return rc;
}

static int calls_done;

static void on_done(struct adaptor_call *k)
{
    calls_done++;
}

/* A job that records no account is never submitted (as the token's user):
 * refused, and told from the loop as any end of a call. */
static void check_no_account(void *inst, struct curlloop *loop)
{
    static const char *const nodes[] = {"n1", NULL}, *const no_env[] = {NULL};
    struct start_req req = {.loom_id = 7, .workdir = "/tmp", .nodes = nodes,
                            .n_nodes = 1, .env = no_env};
    struct adaptor_call k = {.op = LOOM_OP_START, .start = &req,
                             .done_cb = on_done};
    int before = calls_done;
    double end;

    ok(T->call(inst, &k) == 0, "call(start) of a job without an account "
       "starts");
    is_int(calls_done, before, "... and does not end inside call()");
    end = time_mono() + 30;
    while (calls_done == before && time_mono() < end)
        curlloop_run(loop, 0.5);
    ok(calls_done == before + 1 && k.rc < 0 && k.err.kind == LOOM_EINVAL &&
       strstr(k.err.message, "no account to run as"),
       "... it is refused, not submitted as the token's user: %s",
       k.err.message);
    adaptor_call_fini(&k);
}

static void check_conf_and_call(const char *dir)
{
    struct loom_error err = {0};
    struct curlloop *loop = curlloop_create(&err);
    struct adaptor_env env = {.cluster = "sr", .state_dir = dir,
                              .loop = loop};
    struct adaptor_call k = {.op = LOOM_OP_NODES, .done_cb = on_done};
    char text[8400], key[4200], tok[4200];
    void *inst = NULL;
    double end;
    FILE *f;

    T = adaptor_type_find("slurmrest");
    ok(T && T->call && T->via, "slurmrest is registered with call() and "
       "via()");
    if (!T || !loop)
        return;
    ok(create("[cluster sr]\nadaptor = slurmrest\n", &inst, &env, &err) < 0 &&
       strstr(err.message, "needs 'url"), "no url: %s", err.message);
    ok(create("[cluster sr]\nadaptor = slurmrest\nurl = ftp://x\n", &inst,
              &env, &err) < 0 && strstr(err.message, "url: expected"),
       "a url that is neither unix: nor http: %s", err.message);
    ok(create("[cluster sr]\nadaptor = slurmrest\nurl = http://127.0.0.1:1\n",
              &inst, &env, &err) < 0 && strstr(err.message, "jwt_key_file"),
       "TCP without a token: %s", err.message);
    ok(create("[cluster sr]\nadaptor = slurmrest\nurl = unix:/x\n"
              "api_version = v0.0.40\n", &inst, &env, &err) < 0 &&
       strstr(err.message, "auto, v0.0.38, v0.0.37 or v0.0.36"),
       "an API version Loom does not read: %s", err.message);
    ok(create("[cluster sr]\nadaptor = slurmrest\nurl = unix:/x\n"
              "fallback_pack = none\n", &inst, &env, &err) < 0 &&
       strstr(err.message, "rest_auth/local") &&
       strstr(err.message, "fallback_pack"),
       "rest_auth/local without a pack to start jobs as their accounts is "
       "refused: %s", err.message);
    ok(create("[cluster sr]\nadaptor = slurmrest\nurl = unix:/x\n"
              "env.LOOM_SLURM_ACCT_GRACE_S = 30s\n", &inst, &env, &err) < 0 &&
       strstr(err.message, "env.LOOM_SLURM_ACCT_GRACE_S: '30s' is not a "
              "number of seconds from 0 to 3600"),
       "a grace time for slurmdbd's record that is no number: %s",
       err.message);
    snprintf(tok, sizeof(tok), "%s/token", dir);
    if ((f = fopen(tok, "w"))) {
        fputs("eyJhbGciOiJIUzI1NiJ9.eyJzdW4iOiJzbHVybSJ9.x\n", f);
        fclose(f);
    }
    chmod(tok, 0644);
    snprintf(key, sizeof(key), "%s/jwt.key", dir);
    f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0644);
    snprintf(text, sizeof(text), "[cluster sr]\nadaptor = slurmrest\n"
             "url = http://127.0.0.1:1\njwt_key_file = %s\n"
             "fallback_pack = none\n", key);
    ok(create(text, &inst, &env, &err) < 0 && strstr(err.message, "chmod 600"),
       "a key others may read is refused: %s", err.message);
    chmod(key, 0600);
    snprintf(text, sizeof(text), "[cluster sr]\nadaptor = slurmrest\n"
             "url = http://127.0.0.1:1\ntoken_file = %s\n"
             "fallback_pack = none\n", tok);
    ok(create(text, &inst, &env, &err) < 0 && strstr(err.message, "chmod 600"),
       "a token file others may read is refused: %s", err.message);
    snprintf(text, sizeof(text), "[cluster sr]\nadaptor = slurmrest\n"
             "url = http://127.0.0.1:1\njwt_key_file = %s\n"
             "fallback_pack = none\n", key);
    ok(create(text, &inst, &env, &err) == 0, "a key of loomd's own: created "
       "(%s)", err.message);
    is_str(T->via(inst, LOOM_OP_NODES), "slurmrestd v0.0.38?",
           "nodes go to slurmrestd (the version not known yet)");
    ok(T->via(inst, LOOM_OP_SUSPEND) == NULL, "suspend goes nowhere without "
       "a fallback pack");
    is_str(T->via(inst, LOOM_OP_START), "slurmrestd v0.0.38?",
           "with a JWT, starts go to slurmrestd (as the job's account)");
    ok(T->call(inst, &k) == 0, "call(nodes) starts");
    is_int(calls_done, 0, "... and does not end inside call()");
    end = time_mono() + 30;
    while (!calls_done && time_mono() < end)
        curlloop_run(loop, 0.5);
    is_int(calls_done, 1, "done_cb is called once, from the loop");
    ok(k.rc < 0 && k.err.kind == LOOM_ETEMP &&
       strstr(k.err.message, "cannot reach http://127.0.0.1:1"),
       "an unreachable slurmrestd is a temporary failure: %s", k.err.message);
    k = (struct adaptor_call){.op = LOOM_OP_SUSPEND, .native_id = "5",
                              .done_cb = on_done};
    is_int(T->call(inst, &k), 1, "call(suspend) is handed to the blocking "
           "form (the pack)");
    adaptor_call_run(T, inst, &k);
    ok(k.rc < 0 && k.err.kind == LOOM_ENOTSUP, "... which says there is no "
       "pack: %s", k.err.message);
    check_no_account(inst, loop);
    T->destroy(inst);
    curlloop_destroy(loop);
}

/* A pack whose queues op answers one queue named for $LOOM_PARTITION. */
static void write_pack(const char *dir)
{
    static const char *const ops[] = {"nodes", "jobs", "start", "cancel"};
    char path[4300];
    FILE *f;

    mkdir(dir, 0700);
    snprintf(path, sizeof(path), "%s/pack.json", dir);
    if ((f = fopen(path, "w"))) {
        fputs("{\"protocol\": 1, \"model\": \"disabled-scheduler\", "
              "\"runs_as_user\": true, \"ops\": [\"nodes\", \"jobs\", "
              "\"queues\", \"start\", \"cancel\"]}\n", f);
        fclose(f);
    }
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, ops[i]);
        if ((f = fopen(path, "w"))) {
            fputs("#!/bin/sh\necho '{}'\n", f);
            fclose(f);
        }
        chmod(path, 0700);
    }
    snprintf(path, sizeof(path), "%s/queues", dir);
    if ((f = fopen(path, "w"))) {
        fputs("#!/bin/sh\nprintf '{\"items\": [{\"name\": \"%s\", "
              "\"state\": \"open\"}]}\\n' \"$LOOM_PARTITION\"\n", f);
        fclose(f);
    }
    chmod(path, 0700);
}

/* The queue the fallback pack answers for a section's extra lines. */
static void pack_queue(const char *dir, const char *extra, char *out,
                       size_t n)
{
    struct adaptor_env env = {.cluster = "sr", .state_dir = dir};
    struct cl_queue_list l = {0};
    struct loom_error err = {0};
    char text[9000];
    void *inst = NULL;

    snprintf(text, sizeof(text), "[cluster sr]\nadaptor = slurmrest\n"
             "url = unix:/nonexistent\nfallback_pack = %s/pack\n%s", dir,
             extra);
    snprintf(out, n, "(none)");
    if (create(text, &inst, &env, &err) < 0) {
        snprintf(out, n, "create: %s", err.message);
        return;
    }
    if (T->queues(inst, &l, &err) < 0)
        snprintf(out, n, "queues: %s", err.message);
    else if (l.n == 1)
        snprintf(out, n, "%s", l.v[0].name);
    cl_queue_list_fini(&l);
    T->destroy(inst);
}

static void check_fallback_partition(const char *dir)
{
    char pack[4200], got[600];

    snprintf(pack, sizeof(pack), "%s/pack", dir);
    write_pack(pack);
    pack_queue(dir, "partition = debug,big\n", got, sizeof(got));
    is_str(got, "debug,big", "partition reaches the fallback pack as "
           "LOOM_PARTITION");
    pack_queue(dir, "partition = debug\nenv.LOOM_PARTITION = big\n", got,
               sizeof(got));
    is_str(got, "big", "... unless the section sets env.LOOM_PARTITION");
}

/* ---- the loop's connections --------------------------------------------- */

struct one_answer {
    int lfd;
};

/* Answer one request on the listening socket, 50 ms after it came, then
 * wait for the client to close. */
static void *answer_one(void *arg)
{
    static const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                                "\r\n{}";
    struct one_answer *a = arg;
    char buf[4096];
    int c = accept(a->lfd, NULL, NULL);

    if (c < 0)
        return NULL;
    if (read(c, buf, sizeof(buf)) > 0 && usleep(50000) == 0 &&
        write(c, reply, sizeof(reply) - 1) == (ssize_t)(sizeof(reply) - 1))
        while (read(c, buf, sizeof(buf)) > 0)
            ;
    close(c);
    return NULL;
}

static int fetched_n;
static double fetched_transfer_s, fetched_s;

static void count_fetched(void *arg, const struct fetch_result *r)
{
    *(long *)arg = r->status;
    fetched_transfer_s = r->transfer_s;
    fetched_s = r->seconds;
    fetched_n++;
}

/* The connection the loop keeps open to a Unix socket is close-on-exec:
 * nothing loomd starts (a pack, an account's sbatch) inherits it. */
static void check_cloexec(const char *dir)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    struct one_answer a = {socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    struct loom_error err = {0};
    struct curlloop *loop = curlloop_create(&err);
    long status = 0;
    struct fetch_req f = {.method = "GET", .url = "http://localhost/x",
                          .unix_socket = sa.sun_path, .timeout_s = 10,
                          .max_bytes = 65536, .done_cb = count_fetched,
                          .arg = &status};
    int found = 0, cloexec = 0;
    double end = time_mono() + 30;
    pthread_t t;

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%.96s/s.sock", dir);
    if (!loop || a.lfd < 0 ||
        bind(a.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(a.lfd, 1) < 0 ||
        pthread_create(&t, NULL, answer_one, &a) != 0) {
        ok(0, "a Unix socket to answer on (%s)", strerror(errno));
        curlloop_destroy(loop);
        return;
    }
    ok(curlloop_fetch(loop, &f, &err) == 0, "a request on a Unix socket");
    while (!fetched_n && time_mono() < end)
        curlloop_run(loop, 0.5);
    is_int(status, 200, "... is answered");
    /* libcurl's own time of it (Loom's own is the rest): the server's
     * 50 ms at least, and no more than the loop's time of the request */
    ok(fetched_transfer_s >= 0.05 && fetched_transfer_s <= fetched_s + 0.001,
       "libcurl's time of the transfer, %.4f s, holds the server's 50 ms "
       "and is within the request's %.4f s", fetched_transfer_s, fetched_s);
    /* The client's end: its peer is the socket's path, it has no name of
     * its own (the answering end has the path as its own). */
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_un peer, own;
        socklen_t n = sizeof(peer), m = sizeof(own);
        if (getpeername(fd, (struct sockaddr *)&peer, &n) == 0 &&
            getsockname(fd, (struct sockaddr *)&own, &m) == 0 &&
            peer.sun_family == AF_UNIX && !strcmp(peer.sun_path, sa.sun_path) &&
            (m <= sizeof(sa_family_t) || !own.sun_path[0])) {
            found = 1;
            cloexec = (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0;
        }
    }
    ok(found && cloexec, "the connection the loop keeps is close-on-exec "
       "(%s)", !found ? "not found" : cloexec ? "it is" : "it is not");
    curlloop_destroy(loop); /* closes it: the answering thread ends */
    pthread_join(t, NULL);
    close(a.lfd);
    unlink(sa.sun_path);
}

static int rm_one(const char *path, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

int main(void)
{
    const char *src = getenv("LOOM_TOP_SRCDIR"), *tmp = getenv("TMPDIR");
    char dir[4096];

    snprintf(fixtures, sizeof(fixtures), "%s/tests/fixtures/slurmrest",
             src ? src : ".");
    snprintf(dir, sizeof(dir), "%s/loom-srest-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp %s\n", dir);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    check_nodes("v0.0.38-nodes.json");
    check_nodes("v0.0.37-nodes.json");
    check_jobs("v0.0.38-jobs.json");
    check_jobs("v0.0.37-jobs.json");
    check_jobs("v0.0.36-jobs.json");
    check_scan("v0.0.38-jobs.json");
    check_scan("v0.0.37-jobs.json");
    check_scan("v0.0.36-jobs.json");
    check_scan_bad();
    check_partitions("v0.0.38-partitions.json");
    check_partitions("v0.0.37-partitions.json");
    check_partitions("v0.0.36-partitions.json");
    check_answers();
    check_usage();
    check_bad();
    check_hostlist();
    check_jwt();
    check_conf_and_call(dir);
    check_fallback_partition(dir);
    check_cloexec(dir);
    curl_global_cleanup();
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return done_testing();
}
