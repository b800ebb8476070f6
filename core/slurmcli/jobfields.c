/* jobfields.c - a job's fields as squeue (-o letters, -O names) and
 * scontrol show job name them, made from Loom's job object. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static const json_t *req(const json_t *j)
{
    return json_object_get(j, "request");
}

static const char *f_jobid(const json_t *j, char *b, size_t n)
{
    const char *tasks = sc_str(j, "array_tasks");

    if (*tasks && json_is_string(json_object_get(j, "array_tasks_state")))
        snprintf(b, n, "%s_[%s]", sc_str(j, "id"), tasks);
    else
        snprintf(b, n, "%s", sc_str(j, "id"));
    return b;
}

/* The job's own number: a task's loom_id, else its id. */
static const char *f_jobidraw(const json_t *j, char *b, size_t n)
{
    const char *own = sc_str(j, "loom_id");

    snprintf(b, n, "%s", *own ? own : sc_str(j, "id"));
    return b;
}

static const char *f_arrayjob(const json_t *j, char *b, size_t n)
{
    const char *a = sc_str(j, "array_job_id");

    snprintf(b, n, "%s", *a ? a : sc_str(j, "id"));
    return b;
}

static const char *f_arraytask(const json_t *j, char *b, size_t n)
{
    const json_t *t = json_object_get(j, "array_task_id");
    const char *tasks = sc_str(j, "array_tasks");

    if (json_is_integer(t))
        snprintf(b, n, "%lld", (long long)json_integer_value(t));
    else if (*tasks)
        snprintf(b, n, "%s", tasks);
    else
        snprintf(b, n, "N/A");
    return b;
}

static const char *f_name(const json_t *j, char *b, size_t n)
{
    return sc_str(j, "name");
}

static const char *f_user(const json_t *j, char *b, size_t n)
{
    const char *a = sc_str(j, "account");

    return *a ? a : sc_str(j, "owner");
}

static const char *f_state(const json_t *j, char *b, size_t n)
{
    return sc_state(j);
}

static const char *f_state_short(const json_t *j, char *b, size_t n)
{
    return sc_state_short(sc_state(j));
}

static const char *f_used(const json_t *j, char *b, size_t n)
{
    return sc_duration(sc_elapsed(j, time(NULL)), 1, b, n);
}

static const char *f_limit(const json_t *j, char *b, size_t n)
{
    return sc_duration(num(req(j), "walltime_s"), 1, b, n);
}

static const char *f_left(const json_t *j, char *b, size_t n)
{
    long long left = num(req(j), "walltime_s") - sc_elapsed(j, time(NULL));

    return sc_duration(left, 1, b, n);
}

static const char *f_nodes(const json_t *j, char *b, size_t n)
{
    size_t have = json_array_size(json_object_get(j, "nodes"));

    snprintf(b, n, "%lld", have ? (long long)have : num(req(j), "nodes"));
    return b;
}

static const char *f_cpus(const json_t *j, char *b, size_t n)
{
    snprintf(b, n, "%lld",
             num(req(j), "nodes") * num(req(j), "cpus_per_node"));
    return b;
}

static const char *f_cpus_per_node(const json_t *j, char *b, size_t n)
{
    snprintf(b, n, "%lld", num(req(j), "cpus_per_node"));
    return b;
}

static const char *f_nodelist(const json_t *j, char *b, size_t n)
{
    return sc_nodelist(json_object_get(j, "nodes"), b, n);
}

/* A partition is a queue; a job that names none runs in any. */
static const char *f_partition(const json_t *j, char *b, size_t n)
{
    const char *q = sc_str(req(j), "queue");

    return *q ? q : "(any)";
}

static const char *f_cluster(const json_t *j, char *b, size_t n)
{
    const char *c = sc_str(j, "cluster");

    if (!*c)
        c = sc_str(req(j), "cluster");
    return *c ? c : "(any)";
}

static const char *f_reason(const json_t *j, char *b, size_t n)
{
    return sc_reason(j, b, n);
}

/* %R: why a waiting job waits, in parentheses; a running job's nodes. */
static const char *f_reasonlist(const json_t *j, char *b, size_t n)
{
    const char *st = sc_state(j);
    char r[512];

    if (!strcmp(st, "PENDING") || !strcmp(st, "CONFIGURING")) {
        snprintf(b, n, "(%s)", sc_reason(j, r, sizeof(r)));
        return b;
    }
    return f_nodelist(j, b, n);
}

static const char *f_submit(const json_t *j, char *b, size_t n)
{
    return sc_time(json_object_get(j, "submit_time"), b, n);
}

static const char *f_start(const json_t *j, char *b, size_t n)
{
    const json_t *s = json_object_get(j, "start_time");

    if (!json_is_string(s)) /* a waiting job: when the plan starts it */
        s = json_object_get(j, "planned_start");
    return sc_time(s, b, n);
}

static const char *f_end(const json_t *j, char *b, size_t n)
{
    return sc_time(json_object_get(j, "end_time"), b, n);
}

static const char *f_workdir(const json_t *j, char *b, size_t n)
{
    const char *w = sc_str(j, "workdir");

    return *w ? w : "(home)";
}

static const char *f_command(const json_t *j, char *b, size_t n)
{
    const json_t *c = json_object_get(j, "command");
    size_t len = 0, i;
    const json_t *v;

    if (!json_is_array(c))
        return json_is_string(json_object_get(j, "script")) ? "(script)"
                                                            : "(null)";
    b[0] = '\0';
    json_array_foreach(c, i, v)
        len += (size_t)snprintf(b + len, len < n ? n - len : 0, "%s%s",
                                i ? " " : "", json_string_value(v));
    return b;
}

static const char *f_priority(const json_t *j, char *b, size_t n)
{
    snprintf(b, n, "%lld", num(j, "priority"));
    return b;
}

static const char *f_memory(const json_t *j, char *b, size_t n)
{
    snprintf(b, n, "%lldM", num(req(j), "memory_mb"));
    return b;
}

static const char *f_depend(const json_t *j, char *b, size_t n)
{
    const char *d = sc_str(j, "dependency");

    return *d ? d : "(null)";
}

static const char *f_features(const json_t *j, char *b, size_t n)
{
    const json_t *f = json_object_get(req(j), "features"), *v;
    size_t len = 0, i;

    if (!json_array_size(f))
        return "(null)";
    b[0] = '\0';
    json_array_foreach(f, i, v)
        len += (size_t)snprintf(b + len, len < n ? n - len : 0, "%s%s",
                                i ? "&" : "", json_string_value(v));
    return b;
}

static const char *f_gres(const json_t *j, char *b, size_t n)
{
    long long g = num(req(j), "gpus");

    if (!g)
        return "(null)";
    snprintf(b, n, "gpu:%lld", g);
    return b;
}

static const char *f_exit(const json_t *j, char *b, size_t n)
{
    return sc_exit_code(j, b, n);
}

static const char *f_stdout(const json_t *j, char *b, size_t n)
{
    const char *s = sc_str(j, "stdout");

    return *s ? s : sc_str(j, "output");
}

static const char *f_stderr(const json_t *j, char *b, size_t n)
{
    const char *s = sc_str(j, "stderr");

    return *s ? s : sc_str(j, "error");
}

static const char *f_comment(const json_t *j, char *b, size_t n)
{
    const char *c = sc_str(j, "comment");

    return *c ? c : "(null)";
}

const struct sc_field sc_job_fields[] = {
    {'i', "JobID", "JOBID", 18, f_jobid},
    {'A', "JobIDRaw", "JOBID", 18, f_jobidraw},
    {'F', "ArrayJobID", "ARRAY_JOB_ID", 13, f_arrayjob},
    {'K', "ArrayTaskID", "ARRAY_TASK_ID", 13, f_arraytask},
    {0, "JobArrayID", "JOBID", 18, f_jobid},
    {'j', "Name", "NAME", 20, f_name},
    {'u', "UserName", "USER", 10, f_user},
    {'a', "Account", "ACCOUNT", 10, f_user},
    {'T', "State", "STATE", 10, f_state},
    {'t', "StateCompact", "ST", 4, f_state_short},
    {'M', "TimeUsed", "TIME", 10, f_used},
    {'l', "TimeLimit", "TIME_LIMIT", 10, f_limit},
    {'L', "TimeLeft", "TIME_LEFT", 10, f_left},
    {'D', "NumNodes", "NODES", 6, f_nodes},
    {'C', "NumCPUs", "CPUS", 5, f_cpus},
    {'c', "MinCpus", "MIN_CPUS", 8, f_cpus_per_node},
    {'N', "NodeList", "NODELIST", 20, f_nodelist},
    {'P', "Partition", "PARTITION", 10, f_partition},
    {0, "Cluster", "CLUSTER", 10, f_cluster},
    {'r', "Reason", "REASON", 20, f_reason},
    {'R', "ReasonList", "NODELIST(REASON)", 20, f_reasonlist},
    {'V', "SubmitTime", "SUBMIT_TIME", 20, f_submit},
    {'S', "StartTime", "START_TIME", 20, f_start},
    {'e', "EndTime", "END_TIME", 20, f_end},
    {'Z', "WorkDir", "WORK_DIR", 20, f_workdir},
    {'o', "Command", "COMMAND", 20, f_command},
    {'Q', "Priority", "PRIORITY", 10, f_priority},
    {'p', "PriorityLong", "PRIORITY", 10, f_priority},
    {'q', "QOS", "Loom has no QOS: a job's priority is its own (%Q)", 0,
     NULL},
    {'m', "MinMemory", "MIN_MEMORY", 10, f_memory},
    {'E', "Dependency", "DEPENDENCY", 20, f_depend},
    {'f', "Feature", "FEATURES", 10, f_features},
    {'b', "tres-per-node", "TRES_PER_NODE", 10, f_gres},
    {'k', "Comment", "COMMENT", 10, f_comment},
    {0, "ExitCode", "EXIT_CODE", 10, f_exit},
    {0, "STDOUT", "STDOUT", 20, f_stdout},
    {0, "STDERR", "STDERR", 20, f_stderr},
    {0, NULL, NULL, 0, NULL},
};

const struct sc_field *sc_job_field(const char *name)
{
    for (size_t i = 0; sc_job_fields[i].name; i++)
        if (!strcasecmp(sc_job_fields[i].name, name))
            return &sc_job_fields[i];
    return NULL;
}

/* What the fields read beyond SC_JOB_MEMBERS (GET /v1/jobs?fields=). */
static const struct {
    const char *field, *members;
} members[] = {
    {"ArrayTaskID", "array_task_id"},
    {"TimeUsed", "start_time,end_time"},
    {"TimeLeft", "start_time,end_time"},
    {"NumNodes", "nodes"},
    {"NodeList", "nodes"},
    {"ReasonList", "nodes"},
    {"SubmitTime", "submit_time"},
    {"StartTime", "start_time,planned_start"},
    {"EndTime", "end_time"},
    {"WorkDir", "workdir"},
    {"Command", "command,script"},
    {"Priority", "priority"},
    {"PriorityLong", "priority"},
    {"Dependency", "dependency"},
    {"ExitCode", "exit_code"},
    {"Comment", "comment"},
    {"STDOUT", "stdout,output"},
    {"STDERR", "stderr,error"},
};

const char *sc_job_members(const struct sc_field *f)
{
    for (size_t i = 0; i < sizeof(members) / sizeof(*members); i++)
        if (!strcmp(members[i].field, f->name))
            return members[i].members;
    return NULL;
}
