/* scheduler_job.c - job validation, JSON round trip, idempotency hash. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "scheduler/job.h"
#include "tests/lib/tap.h"

static struct job *from(const char *text, struct loom_error *err)
{
    json_t *o = json_loads(text, 0, NULL);
    struct job *j = o ? job_from_request(o, "alice", "alice-acct", "local",
                                            err) : NULL;

    json_decref(o);
    return j;
}

static void t_valid(void)
{
    struct loom_error err;
    struct job *j = from("{\"name\":\"x\",\"command\":[\"echo\",\"hi\"],"
                         "\"env\":{\"B\":\"2\",\"A\":\"1\"},\"request\":"
                         "{\"nodes\":2,\"features\":[\"ib\"],\"cluster\":"
                         "\"c\"},\"submit_dir\":\"/home/a/w\","
                         "\"submit_env\":{\"SECRET\":\"s\"}}", &err);
    struct job *back;
    json_t *doc, *red;
    size_t priv[2] = {0, 0};
    char *text, *cut;

    ok(j != NULL, "a good request is accepted (%s)", j ? "" : err.message);
    if (!j)
        return;
    is_int(j->req.nodes, 2, "nodes");
    is_int(j->req.cpus_per_node, 1, "cpus_per_node defaults to 1");
    is_int(j->req.walltime_s, 3600, "walltime defaults to 1 h");
    is_str(j->env.v[0], "A=1", "env sorted by name");
    is_str(j->owner, "alice", "owner is the token's subject");
    is_str(j->account, "alice-acct", "account is the one it maps to");
    is_str(j->submit_dir, "/home/a/w", "submit_dir kept");
    ok(j->env.n == 2, "submit_env is not the job's env (%zu variables)",
       j->env.n);
    j->id = 42;
    j->state = JOB_FAILED;
    j->has_exit_code = 1;
    j->exit_code = 3;
    j->submit_time = 1795000000;
    text = job_render(j, priv);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    ok(doc != NULL, "the rendered job is valid JSON");
    ok(text && !strstr(text, "SECRET"), "submit_env is not in the record");
    /* the private span cut out leaves valid JSON without those fields */
    cut = text ? malloc(strlen(text) + 1) : NULL;
    if (cut) {
        memcpy(cut, text, priv[0]);
        snprintf(cut + priv[0], strlen(text) + 1 - priv[0], "%s",
                 text + priv[0] + priv[1]);
    }
    red = cut ? json_loads(cut, 0, NULL) : NULL;
    ok(red != NULL, "the job without its private span is valid JSON");
    ok(red && !json_object_get(red, "command") &&
           !json_object_get(red, "script") && !json_object_get(red, "env"),
       "without its private span it has no command, script or env");
    ok(red && json_object_get(red, "priority") &&
           json_object_get(red, "request") && json_object_get(red, "state"),
       "without its private span it keeps request, state and priority");
    json_decref(red);
    free(cut);
    back = job_from_doc(doc, &err);
    ok(back != NULL, "the stored document reads back");
    if (back) {
        is_int(back->id, 42, "id kept");
        is_int(back->state, JOB_FAILED, "state kept");
        is_int(back->exit_code, 3, "exit code kept");
        is_int(back->submit_time, 1795000000, "submit time kept");
        is_str(back->req.cluster, "c", "pinned cluster kept");
        is_str(back->command.v[1], "hi", "command kept");
        is_str(back->env.v[1], "B=2", "env kept");
        is_str(back->account, "alice-acct", "account kept");
        is_str(back->submit_dir, "/home/a/w", "submit_dir read back");
        is_int(back->no_requeue, 0, "requeue defaults to true");
    }
    ok(json_is_true(json_object_get(doc, "requeue")), "... and shows so");
    json_decref(doc);
    free(text);
    job_destroy(back);
    job_destroy(j);
}

static void t_invalid(void)
{
    static const struct { const char *body, *field; } cases[] = {
        {"{\"command\":[\"x\"],\"bogus\":1}", "bogus"},
        {"{\"command\":[\"x\"],\"request\":{\"bogus\":1}}", "request.bogus"},
        {"{\"command\":[\"x\"],\"request\":{\"nodes\":\"two\"}}",
         "request.nodes"},
        {"{\"command\":[\"x\"],\"request\":{\"nodes\":0}}", "request.nodes"},
        {"{\"command\":[\"x\"],\"script\":\"y\"}", "command"},
        {"{\"name\":\"x\"}", "command"},
        {"{\"command\":[]}", "command"},
        {"{\"command\":[\"\"]}", "command[0]"},
        {"{\"command\":[\"x\"],\"env\":{\"1A\":\"v\"}}", "env.1A"},
        {"{\"command\":[\"x\"],\"env\":{\"A\":1}}", "env.A"},
        {"{\"command\":[\"x\"],\"priority\":\"high\"}", "priority"},
        {"{\"command\":[\"x\"],\"array\":\"5-1\"}", "array"},
        {"{\"command\":[\"x\"],\"array\":7}", "array"},
        {"{\"command\":[\"x\"],\"dependency\":\"after:x\"}",
         "dependency"},
        {"{\"command\":[\"x\"],\"array\":\"1-2\",\"dependency\":"
         "\"singleton\"}", "dependency"},
        {"{\"command\":[\"x\"],\"hold\":1}", "hold"},
        {"{\"command\":[\"x\"],\"requeue\":\"no\"}", "requeue"},
        {"{\"command\":[\"x\"],\"submit_dir\":\"rel\"}", "submit_dir"},
        {"{\"command\":[\"x\"],\"submit_dir\":1}", "submit_dir"},
        {"{\"command\":[\"x\"],\"submit_env\":[]}", "submit_env"},
        {"{\"command\":[\"x\"],\"submit_env\":{\"A\":1}}",
         "submit_env.A"},
        {"{\"command\":[\"x\"],\"submit_env\":{\"A B\":\"1\"}}",
         "submit_env.A B"},
    };
    struct loom_error err;

    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct job *j;
        loom_error_clear(&err);
        j = from(cases[i].body, &err);
        ok(!j && err.kind == LOOM_EINVAL && !strcmp(err.field, cases[i].field),
           "refused on %s: %s", cases[i].field, err.message);
        job_destroy(j);
    }
}

/* "requeue": false is kept: shown, stored, read back. */
static void t_no_requeue(void)
{
    struct loom_error err;
    struct job *j = from("{\"command\":[\"x\"],\"requeue\":false}", &err),
               *back = NULL;
    size_t priv[2] = {0, 0};
    char *text = NULL;
    json_t *doc = NULL;

    ok(j && j->no_requeue, "requeue false is taken");
    if (!j)
        return;
    j->id = 7;
    text = job_render(j, priv);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    ok(json_is_false(json_object_get(doc, "requeue")), "... shown false");
    back = doc ? job_from_doc(doc, &err) : NULL;
    ok(back && back->no_requeue, "... and read back from the store");
    json_decref(doc);
    free(text);
    job_destroy(back);
    job_destroy(j);
}

/* A comment is kept (shown, stored, read back), and refused when longer
 * than LOOM_JOB_COMMENT_MAX; what a job used is shown and read back. */
static void t_comment_usage(void)
{
    struct loom_error err;
    struct job *j = from("{\"command\":[\"x\"],\"comment\":\"for run 7\"}",
                         &err), *back = NULL;
    size_t priv[2] = {0, 0};
    char *text = NULL, body[1200];
    json_t *doc = NULL, *u;

    is_str(j ? j->comment : NULL, "for run 7", "a comment is taken");
    if (!j)
        return;
    j->id = 8;
    j->usage.known = 1;
    j->usage.user_cpu_ms = 1500;
    j->usage.system_cpu_ms = 20;
    j->usage.max_rss_kb = 4096;
    text = job_render(j, priv);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    is_str(json_string_value(json_object_get(doc, "comment")), "for run 7",
           "... shown");
    u = json_object_get(doc, "usage");
    ok(json_integer_value(json_object_get(u, "user_cpu_ms")) == 1500 &&
       json_integer_value(json_object_get(u, "system_cpu_ms")) == 20 &&
       json_integer_value(json_object_get(u, "max_rss_kb")) == 4096,
       "usage is shown");
    back = doc ? job_from_doc(doc, &err) : NULL;
    ok(back && back->comment && !strcmp(back->comment, "for run 7") &&
       back->usage.known && back->usage.user_cpu_ms == 1500 &&
       back->usage.system_cpu_ms == 20 && back->usage.max_rss_kb == 4096,
       "... both read back from the store");
    json_decref(doc);
    free(text);
    job_destroy(back);
    job_destroy(j);
    j = from("{\"command\":[\"x\"]}", &err);
    text = j ? job_render(j, priv) : NULL;
    doc = text ? json_loads(text, 0, NULL) : NULL;
    ok(json_is_null(json_object_get(doc, "comment")) &&
       json_is_null(json_object_get(doc, "usage")),
       "without them: comment and usage null");
    json_decref(doc);
    free(text);
    job_destroy(j);
    snprintf(body, sizeof(body), "{\"command\":[\"x\"],\"comment\":\"%*s\"}",
             1025, "c");
    loom_error_clear(&err);
    j = from(body, &err);
    ok(!j && err.kind == LOOM_EINVAL && !strcmp(err.field, "comment"),
       "a comment of 1025 bytes is refused: %s", err.message);
    job_destroy(j);
}

/* An array, a task of it, a dependency and a held submit: what they
 * render, and what their stored documents read back as. */
static void t_arrays(void)
{
    struct loom_error err;
    struct job *a = from("{\"command\":[\"x\"],\"array\":\"1-9:2%3\","
                         "\"dependency\":\"afterok:4_1?afterany:5\","
                         "\"hold\":true}", &err), *back;
    json_t *doc;
    char *text, id[48];

    ok(a && a->array && a->array->spec.tasks == 5 &&
       a->array->spec.limit == 3, "array 1-9:2%%3: 5 tasks, 3 at once");
    if (!a)
        return;
    ok(a->state == JOB_HELD && a->array->tasks_state == JOB_HELD &&
       !strcmp(a->reason, "held by alice at submit"), "hold: held, and its "
       "tasks with it (%s)", a->reason);
    ok(a->deps.n == 2 && a->deps.any, "the dependency: 2 jobs, any of them");
    a->id = 7;
    a->array->n_split = 1; /* task 1 has a record of its own */
    a->array->next = 1;
    a->array->count[TC_ACTIVE] = 1;
    text = job_render(a, NULL);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    is_str(json_string_value(json_object_get(doc, "array")), "1-9:2%3",
           "it shows its tasks: 1-9:2%%3");
    is_str(json_string_value(json_object_get(doc, "array_tasks")), "3-9:2",
           "... and those without a record of their own: 3-9:2");
    is_str(json_string_value(json_object_get(doc, "dependency")),
           "afterok:4_1?afterany:5", "... and its dependency");
    is_int(json_integer_value(json_object_get(json_object_get(doc,
                                                    "array_counts"),
                                              "running")), 1,
           "... and 1 task running");
    back = doc ? job_from_doc(doc, &err) : NULL;
    ok(back && back->id == 7 && back->array &&
       back->array->spec.tasks == 5 && back->array->tasks_state == JOB_HELD
       && back->deps.n == 2 && back->dep_wait, "the stored array reads back "
       "(its tasks, held, the dependency to look at again)");
    job_destroy(back);
    json_decref(doc);
    free(text);

    /* a task of it, with a record of its own */
    job_array_destroy(a->array);
    a->array = NULL;
    a->id = 12;
    a->array_id = 7;
    a->array_task = 3;
    is_str(job_id_text(a, id), "7_3", "a task's id is its array's and its "
           "own: 7_3");
    text = job_render(a, NULL);
    doc = text ? json_loads(text, 0, NULL) : NULL;
    is_str(json_string_value(json_object_get(doc, "id")), "7_3",
           "... as it shows");
    is_str(json_string_value(json_object_get(doc, "loom_id")), "12",
           "... with its record's number");
    back = doc ? job_from_doc(doc, &err) : NULL;
    ok(back && back->id == 12 && back->array_id == 7 &&
       back->array_task == 3 && !back->array, "the stored task reads back "
       "as record 12, task 3 of array 7");
    job_destroy(back);
    json_decref(doc);
    free(text);
    job_destroy(a);
}

static void t_hash(void)
{
    json_t *a = json_loads("{\"command\":[\"x\"],\"name\":\"n\"}", 0, NULL);
    json_t *b = json_loads("{\"name\":\"n\",\"command\":[\"x\"]}", 0, NULL);
    json_t *c = json_loads("{\"name\":\"m\",\"command\":[\"x\"]}", 0, NULL);
    char ha[65], hb[65], hc[65];

    job_body_hash(a, ha);
    job_body_hash(b, hb);
    job_body_hash(c, hc);
    is_str(ha, hb, "key order does not change the hash");
    ok(strcmp(ha, hc) != 0, "another body hashes differently");
    is_int(strlen(ha), 64, "sha-256 in hex");
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

/* A variable whose name is past 255 characters is kept in the record. */
static void t_long_env_name(void)
{
    struct loom_error err;
    char name[301], body[512], want[320];
    struct job *j, *back = NULL;
    size_t priv[2];
    char *text;
    json_t *doc;

    memset(name, 'V', 300);
    name[300] = '\0';
    snprintf(body, sizeof(body), "{\"command\":[\"x\"],\"env\":{\"%s\":"
             "\"1\"}}", name);
    j = from(body, &err);
    ok(j != NULL, "a job with a variable name of 300 characters is taken");
    if (j)
        j->id = 7;
    text = j ? job_render(j, priv) : NULL;
    doc = text ? json_loads(text, 0, NULL) : NULL;
    back = doc ? job_from_doc(doc, &err) : NULL;
    snprintf(want, sizeof(want), "%s=1", name);
    ok(back && back->env.n == 1 && !strcmp(back->env.v[0], want),
       "... and its record keeps it, name whole");
    json_decref(doc);
    free(text);
    job_destroy(j);
    job_destroy(back);
}

int main(void)
{
    t_no_requeue();
    t_comment_usage();
    t_valid();
    t_long_env_name();
    t_invalid();
    t_arrays();
    t_hash();
    return done_testing();
}
