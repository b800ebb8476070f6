/* core_api_fields.c - ?fields= of GET /v1/jobs: the names it takes (every
 * member a rendered job has, and no other), and the members cut from a
 * job's text, the same as a JSON parser reads them, with and without the
 * private span. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "scheduler/job.h"
#include "tests/lib/tap.h"

static struct job *from(const char *text)
{
    struct loom_error err;
    json_t *o = json_loads(text, 0, NULL);
    struct job *j = o ? job_from_request(o, "alice", "alice", "local", &err)
                      : NULL;

    json_decref(o);
    return j;
}

/* The members cut for list, as an object: "{" spans "}". */
static json_t *cut(const char *text, const size_t priv[2], const char *list)
{
    struct api_span s[API_FIELDS_MAX];
    struct loom_error err;
    uint64_t bits;
    size_t n, len = 2;
    char *obj;
    json_t *o;

    if (api_fields_parse(list, &bits, &err) < 0)
        return NULL;
    n = api_fields_cut(text, strlen(text), priv ? priv[0] : 0,
                       priv ? priv[1] : 0, bits, s, API_FIELDS_MAX);
    for (size_t i = 0; i < n; i++)
        len += s[i].len + 1;
    if (!(obj = malloc(len + 1)))
        return NULL;
    len = 0;
    obj[len++] = '{';
    for (size_t i = 0; i < n; i++) {
        if (i)
            obj[len++] = ',';
        memcpy(obj + len, s[i].p, s[i].len);
        len += s[i].len;
    }
    obj[len++] = '}';
    obj[len] = '\0';
    o = json_loads(obj, 0, NULL);
    free(obj);
    return o;
}

/* Does o hold exactly the members of full that list names (those full
 * has)? */
static int same(const json_t *o, const json_t *full, const char *list)
{
    size_t want = 0;
    int good = o != NULL;

    for (const char *p = list; good && *p;) {
        size_t n = strcspn(p, ",");
        char k[64];
        json_t *v;
        snprintf(k, sizeof(k), "%.*s", (int)n, p);
        p += n + (p[n] == ',');
        if (!(v = json_object_get(full, k)))
            continue;
        want++;
        good = json_equal(v, json_object_get(o, k));
    }
    return good && json_object_size(o) == want;
}

static void t_names(void)
{
    struct loom_error err;
    uint64_t bits = 0;

    /* id, state and request are members 0, 10 and 11 */
    ok(api_fields_parse("id,state,request", &bits, &err) == 0 &&
           bits == 0xc01, "id,state,request: three members (bits %llx)",
       (unsigned long long)bits);
    ok(api_fields_parse("id,bogus", &bits, &err) < 0 &&
           !strcmp(err.field, "fields") &&
           strstr(err.message, "query parameter fields: no field 'bogus'; the "
                               "fields are id,name,") &&
           strstr(err.message, ",dependency,loom_id"),
       "an unknown name is refused, naming it and the fields (%s)",
       err.message);
    ok(api_fields_parse("id,", &bits, &err) < 0 &&
           strstr(err.message, "no field ''"),
       "an empty name is refused (%s)", err.message);
    ok(api_fields_parse("request.queue", &bits, &err) < 0,
       "a member of a member is no field of the job");
}

static void t_cut(const char *what, struct job *j)
{
    static const char *const lists[] = {
        "id", "state,id", "request,nodes,loom_id,array_counts",
        "command,script,env,directives,priority",
        "id,name,owner,account,state,reason,request,cluster,nodes,"
        "start_time,end_time,planned_start,array_job_id,array_task_id,"
        "array_tasks,array_tasks_state,loom_id,exit_code,priority,workdir,"
        "stdout,stderr,requeue,dependency"};
    size_t priv[2] = {0, 0};
    char *text = job_render(j, priv), *red;
    json_t *full = text ? json_loads(text, 0, NULL) : NULL, *o, *redj;
    const char *k;
    json_t *v;
    int all = 1;

    ok(full != NULL, "%s: rendered", what);
    if (!full)
        return;
    json_object_foreach(full, k, v) {
        uint64_t bits;
        struct loom_error err;
        if (api_fields_parse(k, &bits, &err) < 0) {
            all = 0;
            printf("# %s is not in fields.c's list\n", k);
        }
    }
    ok(all, "%s: every member of the job is a field ?fields= takes", what);
    red = malloc(strlen(text) + 1);
    memcpy(red, text, priv[0]);
    memcpy(red + priv[0], text + priv[0] + priv[1],
           strlen(text) - priv[0] - priv[1] + 1);
    redj = json_loads(red, 0, NULL);
    for (size_t i = 0; i < sizeof(lists) / sizeof(*lists); i++) {
        o = cut(text, NULL, lists[i]);
        ok(same(o, full, lists[i]), "%s: ?fields=%s cuts those members",
           what, lists[i]);
        json_decref(o);
        o = cut(text, priv, lists[i]);
        ok(redj && same(o, redj, lists[i]), "%s: ... and, for a reader "
           "who may not see the private fields, those it may see", what);
        json_decref(o);
    }
    json_decref(redj);
    json_decref(full);
    free(red);
    free(text);
}

int main(void)
{
    struct job *j = from("{\"name\":\"x \\\"q\\\" }{,\",\"command\":"
                         "[\"sh\",\"-c\",\"echo '}],{'\"],\"env\":"
                         "{\"A\":\"1\"},\"request\":{\"nodes\":2,"
                         "\"features\":[\"ib\"]}}");
    struct job *a = from("{\"command\":[\"true\"],\"array\":\"1-9%3\","
                         "\"hold\":true}");

    t_names();
    if (j) {
        j->id = 4;
        t_cut("a job", j);
    }
    if (a) {
        a->id = 7;
        t_cut("an array", a);
    }
    ok(j && a, "the requests are taken");
    job_destroy(j);
    job_destroy(a);
    return done_testing();
}
