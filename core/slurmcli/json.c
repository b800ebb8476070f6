/* json.c - squeue, sinfo and sacct --json: the documents Slurm 22.05
 * writes (its openapi/v0.0.38 job and node, dbv0.0.38 for sacct), with
 * the fields Loom has; a field Loom cannot know is left out. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timeutil.h"

static long long num(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static const json_t *req(const json_t *j)
{
    return json_object_get(j, "request");
}

/* A time as Slurm's JSON has it: seconds since the epoch, 0 for none. */
static long long epoch(const json_t *v)
{
    const char *s = json_string_value(v);
    time_t t;

    return s && time_parse(s, &t) == 0 ? (long long)t : 0;
}

/* Slurm keeps time limits in whole minutes. */
static long long minutes(long long s)
{
    return (s + 59) / 60;
}

/* The exit code as a wait status (CODE << 8 | SIGNAL), as Slurm keeps
 * it; from the same "CODE:SIGNAL" that squeue and sacct print. */
static int wait_status(const json_t *j, int *code, int *sig)
{
    char b[64];

    *code = *sig = 0;
    sscanf(sc_exit_code(j, b, sizeof(b)), "%d:%d", code, sig);
    return *code << 8 | *sig;
}

/* A job's field of jobfields.c: the same text as squeue's column. */
static const char *cell(const json_t *j, const char *field, char *b,
                        size_t n)
{
    return sc_job_field(field)->cell(j, b, n);
}

/* A string member, "" for none: Slurm's empty string. */
static void set_str(json_t *o, const char *key, const char *v)
{
    json_object_set_new(o, key, json_string(v ? v : ""));
}

static void set_int(json_t *o, const char *key, long long v)
{
    json_object_set_new(o, key, json_integer(v));
}

/* The job's own number: a task's loom_id, its id otherwise. */
static long long job_id(const json_t *j)
{
    const char *own = sc_str(j, "loom_id");

    return strtoll(*own ? own : sc_str(j, "id"), NULL, 10);
}

/* Where a job started, or the plan starts it; where it ended, or its
 * walltime ends it (Slurm's end_time of a running job). */
static void times(const json_t *j, long long *start, long long *end)
{
    *start = epoch(json_object_get(j, "start_time"));
    *end = epoch(json_object_get(j, "end_time"));
    if (!*start)
        *start = epoch(json_object_get(j, "planned_start"));
    else if (!*end)
        *end = *start + num(req(j), "walltime_s");
}

json_t *sc_json_job(const json_t *j)
{
    const json_t *r = req(j), *task = json_object_get(j, "array_task_id");
    json_t *o = json_object();
    long long start, end;
    int code, sig;
    char b[4096];

    if (!o)
        return NULL;
    times(j, &start, &end);
    set_str(o, "account", cell(j, "Account", b, sizeof(b)));
    set_int(o, "array_job_id", strtoll(sc_str(j, "array_job_id"), NULL,
                                       10));
    json_object_set_new(o, "array_task_id", json_is_integer(task)
                                                ? json_integer(
                                                      json_integer_value(
                                                          task))
                                                : json_null());
    set_str(o, "array_task_string", sc_str(j, "array_tasks"));
    set_str(o, "cluster", json_is_string(json_object_get(j, "cluster"))
                              ? sc_str(j, "cluster") : sc_str(r, "cluster"));
    if (json_is_string(json_object_get(j, "workdir")))
        set_str(o, "current_working_directory", sc_str(j, "workdir"));
    set_str(o, "dependency", sc_str(j, "dependency"));
    set_int(o, "end_time", end);
    set_int(o, "exit_code", wait_status(j, &code, &sig));
    set_str(o, "features", json_array_size(json_object_get(r, "features"))
                               ? cell(j, "Feature", b, sizeof(b)) : "");
    set_int(o, "job_id", job_id(j));
    set_str(o, "job_state", sc_state(j));
    set_str(o, "name", sc_str(j, "name"));
    set_str(o, "nodes", cell(j, "NodeList", b, sizeof(b)));
    set_int(o, "cpus", num(r, "nodes") * num(r, "cpus_per_node"));
    set_int(o, "node_count", strtoll(cell(j, "NumNodes", b, sizeof(b)),
                                     NULL, 10));
    set_str(o, "partition", sc_str(r, "queue"));
    set_int(o, "memory_per_node", num(r, "memory_mb"));
    set_int(o, "minimum_cpus_per_node", num(r, "cpus_per_node"));
    set_int(o, "priority", num(j, "priority"));
    json_object_set_new(o, "requeue", json_boolean(!json_is_false(
                                          json_object_get(j, "requeue"))));
    set_int(o, "start_time", start);
    set_str(o, "state_reason", sc_reason(j, b, sizeof(b)));
    set_str(o, "standard_error", sc_str(j, "stderr"));
    set_str(o, "standard_output", sc_str(j, "stdout"));
    set_int(o, "submit_time", epoch(json_object_get(j, "submit_time")));
    set_int(o, "time_limit", minutes(num(r, "walltime_s")));
    set_str(o, "user_name", cell(j, "UserName", b, sizeof(b)));
    return o;
}

/* sacct's exit code: {"status", "return_code"} or, for a signal,
 * {"status": "SIGNALED", "signal": {"signal_id"}}. */
static json_t *exit_of(const json_t *j)
{
    int code, sig;

    if (!json_is_string(json_object_get(j, "end_time")))
        return json_pack("{s:s}", "status", "PENDING");
    wait_status(j, &code, &sig);
    if (sig)
        return json_pack("{s:s, s:{s:i}}", "status", "SIGNALED", "signal",
                         "signal_id", sig);
    return json_pack("{s:s, s:i}", "status", code ? "FAILED" : "SUCCESS",
                     "return_code", code);
}

json_t *sc_json_acct_job(const json_t *j)
{
    const json_t *r = req(j), *task = json_object_get(j, "array_task_id");
    json_t *o = json_object(), *array, *t;
    long long start = epoch(json_object_get(j, "start_time"));
    long long end = epoch(json_object_get(j, "end_time"));
    char b[4096];

    if (!o)
        return NULL;
    set_str(o, "account", cell(j, "Account", b, sizeof(b)));
    array = json_object();
    set_int(array, "job_id", strtoll(sc_str(j, "array_job_id"), NULL, 10));
    if (json_is_integer(task)) {
        snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(task));
        set_str(array, "task", b);
        set_int(array, "task_id", json_integer_value(task));
    } else if (*sc_str(j, "array_tasks")) {
        set_str(array, "task", sc_str(j, "array_tasks"));
    }
    json_object_set_new(o, "array", array);
    t = json_object();
    set_int(t, "elapsed", sc_elapsed(j, time(NULL)));
    set_int(t, "end", end);
    set_int(t, "start", start);
    set_int(t, "submission", epoch(json_object_get(j, "submit_time")));
    set_int(t, "limit", minutes(num(r, "walltime_s")));
    json_object_set_new(o, "time", t);
    set_str(o, "cluster", json_is_string(json_object_get(j, "cluster"))
                              ? sc_str(j, "cluster") : sc_str(r, "cluster"));
    set_str(o, "constraints", json_array_size(json_object_get(r, "features"))
                                  ? cell(j, "Feature", b, sizeof(b)) : "");
    json_object_set_new(o, "exit_code", exit_of(j));
    set_int(o, "job_id", job_id(j));
    set_str(o, "name", sc_str(j, "name"));
    set_str(o, "nodes", cell(j, "NodeList", b, sizeof(b)));
    set_str(o, "partition", sc_str(r, "queue"));
    set_int(o, "priority", num(j, "priority"));
    json_object_set_new(o, "required",
                        json_pack("{s:I, s:I}", "CPUs",
                                  (json_int_t)(num(r, "nodes") *
                                               num(r, "cpus_per_node")),
                                  "memory",
                                  (json_int_t)num(r, "memory_mb")));
    json_object_set_new(o, "state",
                        json_pack("{s:s, s:s}", "current", sc_state(j),
                                  "reason", sc_reason(j, b, sizeof(b))));
    set_str(o, "user", cell(j, "UserName", b, sizeof(b)));
    if (json_is_string(json_object_get(j, "workdir")))
        set_str(o, "working_directory", sc_str(j, "workdir"));
    return o;
}

/* A node's state as Slurm's JSON has it: the base state by its cpus, and
 * the flags for what Loom's state adds (DRAIN, MAINTENANCE, RESERVED). */
static const char *node_state(const json_t *n, const char **flag)
{
    const char *st = sc_str(n, "state");
    long long cpus = num(n, "cpus"), alloc = num(n, "cpus_alloc");
    const char *base = !alloc ? "idle" : alloc < cpus ? "mixed"
                                                      : "allocated";

    *flag = NULL;
    if (!strcmp(st, "idle") || !strcmp(st, "mixed") ||
        !strcmp(st, "allocated") || !strcmp(st, "down") ||
        !strcmp(st, "unknown"))
        return st;
    if (!strcmp(st, "reserved"))
        *flag = "RESERVED";
    else if (!strcmp(st, "maint"))
        *flag = "MAINTENANCE";
    else /* draining, drained, paused: no new work */
        *flag = "DRAIN";
    return base;
}

json_t *sc_json_node(const json_t *n)
{
    const json_t *f = json_object_get(n, "features"), *v;
    json_t *o = json_object(), *parts = json_array();
    const char *flag, *st = node_state(n, &flag);
    size_t i, len = 0;
    char b[4096] = "";

    if (!o || !parts) {
        json_decref(o);
        json_decref(parts);
        return NULL;
    }
    json_array_foreach(f, i, v)
        len += (size_t)snprintf(b + len, len < sizeof(b) ? sizeof(b) - len
                                                         : 0,
                                "%s%s", i ? "," : "", json_string_value(v));
    set_int(o, "cpus", num(n, "cpus"));
    set_str(o, "features", b);
    set_str(o, "name", sc_str(n, "id"));
    set_str(o, "state", st);
    json_object_set_new(o, "state_flags", flag ? json_pack("[s]", flag)
                                               : json_array());
    json_array_foreach(json_object_get(n, "queues"), i, v)
        json_array_append(parts, (json_t *)v);
    json_object_set_new(o, "partitions", parts);
    set_int(o, "real_memory", num(n, "memory_mb"));
    set_str(o, "reason", sc_str(n, "reason"));
    set_int(o, "alloc_memory", num(n, "memory_alloc_mb"));
    set_int(o, "alloc_cpus", num(n, "cpus_alloc"));
    set_int(o, "idle_cpus", num(n, "cpus") - num(n, "cpus_alloc"));
    return o;
}

const char *sc_doc_option(enum sc_doc as)
{
    return as == SC_DOC_YAML ? "--yaml" : "--json";
}

int sc_doc_print(enum sc_doc as, const char *plugin, const char *name,
                 const char *key, json_t *items)
{
    json_t *doc;
    char *text = NULL;
    int rc = -1;

    /* meta says whose format this is: Slurm 22.05's, written by Loom */
    doc = json_pack("{s:{s:{s:s, s:s}, s:{s:{s:i, s:i}, s:s}}, s:[], s:o}",
                    "meta", "plugin", "type", plugin, "name", name, "Slurm",
                    "version", "major", 22, "minor", 5, "release",
                    "22.05 (Loom)", "errors", key, items);
    if (doc && as == SC_DOC_YAML)
        rc = sc_yaml_write(doc, stdout);
    else if (doc && (text = json_dumps(doc, JSON_INDENT(2) |
                                                JSON_PRESERVE_ORDER)))
        rc = puts(text) < 0 ? -1 : 0;
    json_decref(doc);
    free(text);
    if (rc < 0)
        return sc_fail("out of memory");
    return SC_OK;
}
