/* core_api_jobfilter.c - the filters of GET /v1/jobs that squeue and sacct
 * send: ?id= (jobs, arrays, tasks), ?user= (owner or account), ?queue=,
 * what they take and refuse, and which jobs they match. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "tests/lib/tap.h"

static const struct api_param params[] = {
    {"id", API_Q_JOB_IDS}, {"user", API_Q_NAMES}, {"queue", API_Q_NAMES},
    {NULL, 0}};

/* A job view: id, owner, account, queue (or NULL), and of an array its
 * waiting tasks, of a task its array's id and number. */
static struct jview *view(int64_t id, const char *owner, const char *account,
                          const char *queue, const char *tasks,
                          int64_t array_id, long task)
{
    struct jview *v = jview_create(id, "pending", "local", owner, NULL,
                                   account, "c1", strdup("{}"), NULL);

    if (!v || jview_set_match(v, "n", queue, tasks, NULL, 0) < 0)
        return NULL;
    v->array_id = array_id;
    v->array_task = task;
    return v;
}

/* Does the filter of id, user and queue (each NULL or a value) match v? */
static int matches(const char *id, const char *user, const char *queue,
                   const struct jview *v)
{
    struct api_route_args a = {.params = params};
    struct api_job_filter f;
    struct loom_error err;
    int m;

    a.value[0] = id;
    a.value[1] = user;
    a.value[2] = queue;
    if (api_job_filter_init(&f, &a, &err) < 0)
        return -1;
    m = api_job_filter_matches(&f, v);
    api_job_filter_fini(&f);
    return m;
}

int main(void)
{
    struct api_job_ref *refs = NULL;
    struct loom_error err = {0};
    size_t n = 0;
    /* job 5; array 7 (tasks 1 and 3 wait), its task 2 as job 9 */
    struct jview *job = view(5, "alice", "alice", "debug", NULL, 0, -1);
    struct jview *arr = view(7, "https://iss,sub", "bob", NULL, "1,3", 7, -1);
    struct jview *task = view(9, "https://iss,sub", "bob", "gpu", NULL, 7, 2);

    ok(job && arr && task, "the views are made");

    is_int(api_job_ids_parse("5,7_2,12", &refs, &n, &err), 0,
           "?id= takes jobs and tasks");
    ok(n == 3 && refs[0].id == 5 && refs[0].task == -1 && refs[1].id == 7 &&
           refs[1].task == 2 && refs[2].id == 12,
       "each as its id and task (-1: the whole job)");
    free(refs);
    is_int(api_job_ids_parse("5,x7", &refs, &n, &err), -1, "?id=5,x7 is refused");
    is_str(err.message, "query parameter id: 'x7' is not a job: the ids are "
           "a comma-separated list of jobs (123) and array tasks (123_7)",
           "naming the item that is no job");
    ok(refs == NULL && n == 0, "and gives nothing back");
    is_int(api_job_ids_parse("5,", &refs, &n, &err), -1, "an empty item is refused");
    is_int(api_job_ids_parse("05", &refs, &n, &err), -1, "a leading zero is refused");
    is_int(api_list_check("user", "a,,b", &err), -1, "?user=a,,b is refused");
    is_str(err.field, "user", "on the field user");
    is_int(api_list_check("queue", "a,b", &err), 0, "?queue=a,b is taken");

    is_int(matches("5", NULL, NULL, job), 1, "id=5: job 5");
    is_int(matches("7", NULL, NULL, job), 0, "id=7: not job 5");
    is_int(matches("7", NULL, NULL, arr), 1, "id=7: the array's item");
    is_int(matches("7", NULL, NULL, task), 1, "id=7: its task");
    is_int(matches("9", NULL, NULL, task), 1, "id=9: the task by its own id");
    is_int(matches("7_2", NULL, NULL, task), 1, "id=7_2: the task's record");
    is_int(matches("7_2", NULL, NULL, arr), 0,
           "id=7_2: not the array's item (task 2 has its own)");
    is_int(matches("7_3", NULL, NULL, arr), 1,
           "id=7_3: the array's item, where task 3 waits");
    is_int(matches("7_4", NULL, NULL, arr), 0, "id=7_4: no task of it");
    is_int(matches("5_0", NULL, NULL, job), 0, "id=5_0: job 5 is no array");
    is_int(matches(NULL, "bob", NULL, arr), 1, "user=bob: by account");
    is_int(matches(NULL, "carol,alice", NULL, job), 1, "user=carol,alice: by owner");
    is_int(matches(NULL, "carol", NULL, job), 0, "user=carol: not alice's");
    is_int(matches(NULL, "https://iss", NULL, task), 0,
           "user= splits on commas: an owner with one matches by its account");
    is_int(matches(NULL, NULL, "gpu,debug", job), 1, "queue=gpu,debug: debug");
    is_int(matches(NULL, NULL, "gpu", job), 0, "queue=gpu: not debug");
    is_int(matches(NULL, NULL, "gpu", arr), 0,
           "queue=: a job that asked for none matches none");
    is_int(matches("5,9", "bob", "gpu", task), 1, "every filter at once");
    is_int(matches("5,9", "alice", "gpu", task), 0, "every filter must match");

    jview_unref(job);
    jview_unref(arr);
    jview_unref(task);
    return done_testing();
}
