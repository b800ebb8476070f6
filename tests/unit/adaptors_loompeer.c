/* adaptors_loompeer.c - the loom adaptor: its configuration, the markers
 * that tell its jobs from others, its readers of the inner loomd's
 * answers, and a start it cannot make (no token for the account), told
 * from the loop; a job of no account never acts with loomd's own token;
 * a job held there for this loomd is started, not submitted anew. */
/* SPDX-License-Identifier: MIT */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "adaptors/curlloop.h"
#include "adaptors/loompeer.h"
#include "core/conf.h"
#include "core/timeutil.h"
#include "tests/lib/tap.h"

static const struct adaptor_type *T;
static char dir[256], tokens[512], state[512], text[4096];

static int create(const char *conf, struct curlloop *loop, void **inst,
                  struct loom_error *err)
{
    struct adaptor_env env = {.cluster = "b", .state_dir = state,
                              .libexec_dir = "/nonexistent", .loop = loop};
    struct conf *c = conf_parse("<test>", conf, err);
    int rc = c ? T->create(conf_section(c, "cluster", "b"), &env, inst, err)
               : -1;

    conf_destroy(c);
    return rc;
}

/* The section with every required key, then extra (a line or ""). */
static const char *section(const char *extra)
{
    static char sect[2048];

    snprintf(sect, sizeof(sect), "[cluster b]\nadaptor = loom\nurl = "
             "http://127.0.0.1:1\ncluster = inner\ntoken_file = %s/control\n"
             "token_dir = %s\n%s", dir, tokens, extra);
    return sect;
}

static void check_conf(struct curlloop *loop)
{
    struct loom_error err;
    struct conf *c;
    struct stat st;
    char path[600];
    void *inst = NULL;

    ok(create("[cluster b]\nadaptor = loom\nurl = http://127.0.0.1:1\n",
              loop, &inst, &err) < 0 && strstr(err.message, "needs cluster"),
       "a section without cluster is refused: %s", err.message);
    snprintf(text, sizeof(text), "[cluster b]\nadaptor = loom\nurl = "
             "http://h:1\ncluster = inner\ntoken_file = x\n");
    ok(create(text, loop, &inst, &err) < 0 &&
       strstr(err.message, "needs token_dir"),
       "... without token_dir: %s", err.message);
    ok(create(section(""), loop, &inst, &err) == 0, "a whole section "
       "is taken");
    T->destroy(inst);
    inst = NULL;
    snprintf(path, sizeof(path), "%s/clusters/b/marker.key", state);
    ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 &&
       st.st_size == 32, "its marker key is made: 32 bytes, mode 0600");
    snprintf(text, sizeof(text), "%s", section(""));
    *strstr(text, "http://127.0.0.1:1") = 'f';
    ok(create(text, loop, &inst, &err) < 0 &&
       strstr(err.message, "expected unix:/PATH, https://HOST:PORT or "
              "http://HOST:PORT"),
       "a url of another scheme is refused: %s", err.message);
    snprintf(text, sizeof(text), "%s", section(""));
    memcpy(strstr(text, "= inner"), "= a/b  ", 7);
    ok(create(text, loop, &inst, &err) < 0 &&
       strstr(err.message, "is not a cluster name"),
       "a cluster name with a slash is refused: %s", err.message);
    chmod(tokens, 0755);
    ok(create(section(""), loop, &inst, &err) < 0 &&
       strstr(err.message, "chmod 700"),
       "a token_dir others may enter is refused: %s", err.message);
    chmod(tokens, 0700);
    snprintf(path, sizeof(path), "%s/ca.pem", dir);
    fclose(fopen(path, "w"));
    snprintf(text, sizeof(text), "ca_file = %s\n", path);
    ok(create(section(text), loop, &inst, &err) < 0 &&
       strstr(err.message, "ca_file: only with an https:// url"),
       "ca_file with an http:// url is refused: %s", err.message);
    snprintf(text, sizeof(text), "[cluster b]\nadaptor = loom\nurl = "
             "https://127.0.0.1:1\ncluster = inner\ntoken_file = x\n"
             "token_dir = %s\nca_file = %s\ncert_file = %s\n", tokens, path,
             path);
    ok(create(text, loop, &inst, &err) < 0 &&
       strstr(err.message, "cert_file and key_file go together"),
       "a certificate without its key is refused: %s", err.message);
    snprintf(text + strlen(text), sizeof(text) - strlen(text),
             "key_file = %s\n", path);
    chmod(path, 0644);
    ok(create(text, loop, &inst, &err) < 0 &&
       strstr(err.message, "chmod 600"),
       "a key others may read is refused: %s", err.message);
    chmod(path, 0600);
    ok(create(text, loop, &inst, &err) == 0, "https:// with a CA, a "
       "certificate and its key is taken");
    T->destroy(inst);
    inst = NULL;
    c = conf_parse("<test>", section("bogus = 1\n"), &err);
    ok(c && adaptor_conf_check(adaptor_type_find("loom"),
                               conf_section(c, "cluster", "b"), &err) < 0 &&
       strstr(err.message, "bogus"),
       "an unknown key is refused, named: %s", err.message);
    conf_destroy(c);
}

static void check_markers(struct curlloop *loop)
{
    struct loom_error err;
    char m[LPEER_MARKER_MAX], forged[LPEER_MARKER_MAX + 8];
    void *inst = NULL, *other = NULL;
    char state2[sizeof(state)];

    if (create(section(""), loop, &inst, &err) < 0) {
        ok(0, "create: %s", err.message);
        return;
    }
    ok(lpeer_marker(inst, 42, m) == 0 && !strncmp(m, "42.", 3) &&
       strlen(m) == 3 + 2 * LPEER_MAC_LEN, "job 42's marker: %s", m);
    is_int((int)lpeer_marker_id(inst, m), 42, "... stands for job 42");
    snprintf(forged, sizeof(forged), "%s", m);
    forged[strlen(forged) - 1] ^= 1;
    is_int((int)lpeer_marker_id(inst, forged), 0, "a MAC changed: no job");
    snprintf(forged, sizeof(forged), "43%s", m + 2);
    is_int((int)lpeer_marker_id(inst, forged), 0, "another id with 42's MAC: "
           "no job");
    is_int((int)lpeer_marker_id(inst, "42"), 0, "an id without a MAC: none");
    snprintf(forged, sizeof(forged), "%sff", m);
    is_int((int)lpeer_marker_id(inst, forged), 0, "a longer MAC: none");
    /* another loomd (another state_dir): another key */
    snprintf(state2, sizeof(state2), "%s", state);
    snprintf(state, sizeof(state), "%s/state2", dir);
    mkdir(state, 0700);
    if (create(section(""), loop, &other, &err) == 0)
        is_int((int)lpeer_marker_id(other, m), 0, "another loomd's marker "
               "is no job of this one");
    else
        ok(0, "create: %s", err.message);
    snprintf(state, sizeof(state), "%s", state2);
    T->destroy(other);
    T->destroy(inst);
}

static void check_parse(struct curlloop *loop)
{
    struct cl_node_list nl = {0};
    struct cl_queue_list ql = {0};
    struct cl_job_list jl = {0};
    struct loom_error err;
    long long low = 0, high = 0;
    char m[LPEER_MARKER_MAX], doc_text[2048];
    struct lpeer *p = NULL;
    const struct lacct *acc;
    json_t *doc;

    if (create(section(""), loop, (void **)&p, &err) < 0) {
        ok(0, "create: %s", err.message);
        return;
    }
    doc = json_loads("{\"items\":[{\"name\":\"n1\",\"state\":\"reserved\","
                     "\"cpus\":4,\"cpus_alloc\":1,\"memory_mb\":1024,"
                     "\"features\":[\"ib\"],\"queues\":[\"default\"],"
                     "\"reason\":null},{\"name\":\"n2\",\"state\":\"odd\"}]}",
                     0, NULL);
    ok(lpeer_parse_nodes(doc, &nl, &err) == 0 && nl.n == 2, "two nodes");
    ok(nl.n == 2 && !strcmp(nl.v[0].state, "allocated") &&
       nl.v[0].cpus == 4 && nl.v[0].cpus_alloc == 1 &&
       nl.v[0].features.n == 1 && !strcmp(nl.v[1].state, "unknown"),
       "a node reserved there takes none of this loomd's jobs (allocated); "
       "an unknown state is unknown");
    json_decref(doc);
    cl_node_list_fini(&nl);
    nl = (struct cl_node_list){0};
    doc = json_loads("{\"items\":[{\"state\":\"idle\"}]}", 0, NULL);
    ok(lpeer_parse_nodes(doc, &nl, &err) < 0 &&
       !strcmp(err.message, "nodes[0].name: missing"), "a node without a "
       "name: %s", err.message);
    json_decref(doc);
    cl_node_list_fini(&nl);
    doc = json_loads("{\"items\":[{\"name\":\"default\",\"state\":\"open\","
                     "\"nodes\":2,\"max_walltime_s\":null}]}", 0, NULL);
    ok(lpeer_parse_queues(doc, &ql, &err) == 0 && ql.n == 1 &&
       ql.v[0].nodes == 2 && ql.v[0].max_walltime_s == 0, "a queue");
    json_decref(doc);
    cl_queue_list_fini(&ql);

    lpeer_marker(p, 9, m);
    snprintf(doc_text, sizeof(doc_text),
             "{\"items\":[{\"id\":\"3\",\"state\":\"completed\",\"account\":"
             "\"alice\",\"exit_code\":0,\"env\":{},\"usage\":"
             "{\"user_cpu_ms\":2500,\"system_cpu_ms\":40,"
             "\"max_rss_kb\":3000}},"
             "{\"id\":\"4\",\"state\":\"held\",\"account\":\"bob\","
             "\"env\":{\"LOOM_OUTER_JOB_ID\":\"%s\"},\"nodes\":[],"
             "\"request\":{\"nodes\":1,\"walltime_s\":60}},"
             "{\"id\":\"5\",\"state\":\"held\",\"account\":\"bob\","
             "\"env\":{\"LOOM_OUTER_JOB_ID\":\"9.000000000000000000000000\"}},"
             "{\"id\":\"12_3\",\"loom_id\":\"15\",\"state\":\"running\","
             "\"start_time\":\"2026-11-26T10:00:00Z\",\"nodes\":[\"n1\"]}]}",
             m);
    doc = json_loads(doc_text, 0, NULL);
    ok(lpeer_parse_jobs(p, doc, &jl, &low, &high, &err) == 0 && jl.n == 4,
       "four jobs: %s", jl.n == 4 ? "" : err.message);
    if (jl.n == 4) {
        ok(jl.v[0].loom_id == 0 && jl.v[0].has_exit_code &&
           !strcmp(jl.v[0].state, "completed"), "a job of its own");
        ok(jl.v[0].usage.known && jl.v[0].usage.user_cpu_ms == 2500 &&
           jl.v[0].usage.system_cpu_ms == 40 &&
           jl.v[0].usage.max_rss_kb == 3000, "its usage, as the inner "
           "loomd has it");
        ok(!jl.v[1].usage.known, "a job without usage has none");
        ok(jl.v[1].loom_id == 9 && !strcmp(jl.v[1].state, "pending") &&
           jl.v[1].req.walltime_s == 60, "this loomd's job 9, held there "
           "until started: pending");
        ok(jl.v[2].loom_id == 0 && !strcmp(jl.v[2].state, "held"),
           "a job with a forged marker is no job of this loomd's");
        ok(!strcmp(jl.v[3].native_id, "12_3") &&
           jl.v[3].start_time > 0 && jl.v[3].nodes.n == 1, "a task");
    }
    is_int((int)low, 4, "the lowest unfinished record: 4");
    is_int((int)high, 15, "the highest record: 15 (the task's own)");
    acc = hmap_get(&p->account, "4");
    ok(acc && !strcmp(acc->account, "bob") && !acc->final,
       "a job's account is kept (what cancel acts as)");
    acc = hmap_get(&p->account, "3");
    ok(acc && !strcmp(acc->account, "alice") && acc->final,
       "... an ended one's too");
    p->after = low - 1;
    lpeer_prune_accounts(p);
    ok(!hmap_get(&p->account, "3") && hmap_get(&p->account, "4"),
       "below the lowest unfinished job the ended ones are forgotten");
    acc = hmap_get(&p->account, "4");
    ok(acc && !strcmp(acc->marker, m) && acc->loom_id == 9,
       "job 4's marker is kept, verified: 9");
    json_decref(doc);
    cl_job_list_fini(&jl);
    jl = (struct cl_job_list){0};
    doc = json_loads("{\"items\":[{\"id\":\"4\",\"state\":\"held\","
                     "\"account\":\"bob\",\"env\":{\"LOOM_OUTER_JOB_ID\":"
                     "\"9.000000000000000000000000\"}}]}", 0, NULL);
    ok(lpeer_parse_jobs(p, doc, &jl, &low, &high, &err) == 0 && jl.n == 1 &&
       jl.v[0].loom_id == 0, "job 4 listed again with another marker, a "
       "forged one: no job of this loomd's (the kept one does not vouch)");
    json_decref(doc);
    cl_job_list_fini(&jl);
    jl = (struct cl_job_list){0};
    lpeer_marker(p, 10, m);
    snprintf(doc_text, sizeof(doc_text), "{\"items\":[{\"id\":\"4\","
             "\"state\":\"held\",\"account\":\"bob\",\"env\":{"
             "\"LOOM_OUTER_JOB_ID\":\"%s\"}}]}", m);
    doc = json_loads(doc_text, 0, NULL);
    ok(lpeer_parse_jobs(p, doc, &jl, &low, &high, &err) == 0 && jl.n == 1 &&
       jl.v[0].loom_id == 10, "... and with job 10's marker: job 10");
    json_decref(doc);
    cl_job_list_fini(&jl);
    jl = (struct cl_job_list){0};
    doc = json_loads("{\"items\":[{\"id\":\"../x\",\"state\":\"held\"}]}", 0,
                     NULL);
    ok(lpeer_parse_jobs(p, doc, &jl, &low, &high, &err) < 0 &&
       strstr(err.message, "jobs[0].id"), "a job id not of digits is "
       "refused: %s", err.message);
    json_decref(doc);
    cl_job_list_fini(&jl);
    jl = (struct cl_job_list){0};
    doc = json_loads("{\"items\":[{\"id\":\"3\",\"state\":\"completed\","
                     "\"usage\":{\"user_cpu_ms\":-1,\"system_cpu_ms\":0,"
                     "\"max_rss_kb\":0}}]}", 0, NULL);
    ok(lpeer_parse_jobs(p, doc, &jl, &low, &high, &err) < 0 &&
       strstr(err.message, "jobs[0].usage"), "a usage that is not "
       "non-negative integers is refused: %s", err.message);
    json_decref(doc);
    cl_job_list_fini(&jl);
    ok(lpeer_is_job_id("12") && lpeer_is_job_id("12_3") &&
       !lpeer_is_job_id("12_") && !lpeer_is_job_id("_3") &&
       !lpeer_is_job_id("1/2") && !lpeer_is_job_id(""), "job ids");
    T->destroy(p);
}

static int calls_done;

static void on_done(struct adaptor_call *k)
{
    (void)k;
    calls_done++;
}

/* An account with no token in token_dir: refused, from the loop. */
static void check_no_token(struct curlloop *loop)
{
    static const char *const nodes[] = {"n1", NULL}, *const no_env[] = {NULL};
    static const char *const argv[] = {"/bin/true", NULL};
    struct start_req req = {.loom_id = 7, .account = "nobody2",
                            .command = argv, .nodes = nodes, .n_nodes = 1,
                            .env = no_env};
    struct adaptor_call k = {.op = LOOM_OP_START, .start = &req,
                             .done_cb = on_done};
    struct loom_error err;
    void *inst = NULL;
    double end;

    if (create(section(""), loop, &inst, &err) < 0) {
        ok(0, "create: %s", err.message);
        return;
    }
    ok(T->call(inst, &k) == 0 && calls_done == 0, "call(start) begins and "
       "does not end inside call()");
    end = time_mono() + 30;
    while (!calls_done && time_mono() < end)
        curlloop_run(loop, 0.5);
    ok(calls_done == 1 && k.rc < 0 && k.err.kind == LOOM_EPERM &&
       strstr(k.err.message, "no token to act for account nobody2"),
       "a start for an account without a token fails: %s", k.err.message);
    adaptor_call_fini(&k);
    T->destroy(inst);
}

/* Run k on inst to its end, from the loop. */
static void run_call(void *inst, struct curlloop *loop,
                     struct adaptor_call *k)
{
    double end = time_mono() + 30;

    calls_done = 0;
    if (T->call(inst, k) != 0)
        return;
    while (!calls_done && time_mono() < end)
        curlloop_run(loop, 0.5);
}

/* A job of no account acts as no one: never with this loomd's own token
 * (token_file, here a readable one), whether started or cancelled. */
static void check_no_fallback(struct curlloop *loop)
{
    static const char *const nodes[] = {"n1", NULL}, *const no_env[] = {NULL};
    static const char *const argv[] = {"/bin/true", NULL};
    struct start_req req = {.loom_id = 8, .account = "", .command = argv,
                            .nodes = nodes, .n_nodes = 1, .env = no_env};
    struct adaptor_call k = {.op = LOOM_OP_START, .start = &req,
                             .done_cb = on_done};
    struct loom_error err;
    struct lpeer *p = NULL;

    if (create(section(""), loop, (void **)&p, &err) < 0) {
        ok(0, "create: %s", err.message);
        return;
    }
    run_call(p, loop, &k);
    ok(calls_done == 1 && k.rc < 0 && k.err.kind == LOOM_EPERM &&
       strstr(k.err.message, "job 8 has no account to run as"),
       "a start of a job of an empty account fails, unsent: %s",
       k.err.message);
    adaptor_call_fini(&k);
    lpeer_note_account(p, "8", 8, "", 0);
    k = (struct adaptor_call){.op = LOOM_OP_CANCEL, .native_id = "8",
                              .done_cb = on_done};
    run_call(p, loop, &k);
    ok(calls_done == 1 && k.rc < 0 && k.err.kind == LOOM_EPERM &&
       strstr(k.err.message, "'' is not an account name"),
       "a cancel of an inner job listed with an empty account fails, "
       "unsent: %s", k.err.message);
    adaptor_call_fini(&k);
    T->destroy(p);
}

/* A job of the inner cluster held there for this loomd (hold_for_loom):
 * started as it is, with this loomd's token, never submitted anew. */
static void check_held_native(struct curlloop *loop)
{
    static const char *const nodes[] = {"n1", NULL}, *const no_env[] = {NULL};
    struct start_req req = {.loom_id = 9, .account = "bob", .nodes = nodes,
                            .n_nodes = 1, .env = no_env, .native_id = "5"};
    struct adaptor_call k = {.op = LOOM_OP_START, .start = &req,
                             .done_cb = on_done};
    struct loom_error err;
    void *inst = NULL;

    if (create(section(""), loop, &inst, &err) < 0) {
        ok(0, "create: %s", err.message);
        return;
    }
    run_call(inst, loop, &k);
    ok(calls_done == 1 && k.rc < 0 && k.err.kind == LOOM_ETEMP &&
       strstr(k.err.message, "POST /v1/jobs/5/start: cannot reach it"),
       "a start of inner job 5, held for this loomd, starts job 5 there: "
       "%s", k.err.message);
    adaptor_call_fini(&k);
    req.native_id = "5/../6";
    k = (struct adaptor_call){.op = LOOM_OP_START, .start = &req,
                              .done_cb = on_done};
    run_call(inst, loop, &k);
    ok(calls_done == 1 && k.rc < 0 && k.err.kind == LOOM_EINVAL &&
       strstr(k.err.message, "'5/../6' is not a job id of the inner loomd"),
       "... a native id not of digits is refused: %s", k.err.message);
    adaptor_call_fini(&k);
    T->destroy(inst);
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
    const char *tmp = getenv("TMPDIR");
    struct loom_error err;
    struct curlloop *loop;
    char control[600];
    FILE *f;

    snprintf(dir, sizeof(dir), "%s/loom-lpeer-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        printf("Bail out! mkdtemp %s\n", dir);
        return 1;
    }
    snprintf(tokens, sizeof(tokens), "%s/tokens", dir);
    snprintf(state, sizeof(state), "%s/state", dir);
    mkdir(tokens, 0700);
    mkdir(state, 0700);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    T = adaptor_type_find("loom");
    ok(T != NULL, "the loom adaptor is registered");
    if (!T || !(loop = curlloop_create(&err)))
        return done_testing();
    check_conf(loop);
    check_markers(loop);
    check_parse(loop);
    check_no_token(loop);
    snprintf(control, sizeof(control), "%s/control", dir);
    if (!(f = fopen(control, "w")) || fputs("control-token\n", f) < 0 ||
        fclose(f) != 0 || chmod(control, 0600) < 0)
        printf("Bail out! cannot write %s\n", control);
    check_no_fallback(loop);
    check_held_native(loop);
    curlloop_destroy(loop);
    curl_global_cleanup();
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return done_testing();
}
