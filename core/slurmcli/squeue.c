/* squeue.c - squeue: the jobs of the fabric, in Slurm's formats. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include "core/arrayspec.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_FORMAT "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
#define LONG_FORMAT "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
#define QUEUE_STATES "pending,held,starting,running,suspended"
/* What --json reads beyond SC_JOB_MEMBERS (json.c's sc_json_job). */
#define JSON_MEMBERS                                                        \
    "array_task_id,workdir,dependency,start_time,end_time,planned_start,"  \
    "exit_code,nodes,priority,requeue,stdout,stderr,submit_time"

struct squeue {
    const char *jobs, *users, *states, *format, *fields, *parts, *clusters,
        *names;
    int noheader, longer, tasks;
    enum sc_doc json; /* --json, --yaml */
};

/* Does -j name this job: its id, its array's id, its own number? */
static int job_named(const struct squeue *q, const json_t *j)
{
    return sc_listed(q->jobs, sc_str(j, "id")) ||
           sc_listed(q->jobs, sc_str(j, "array_job_id")) ||
           sc_listed(q->jobs, sc_str(j, "loom_id"));
}

static int wanted(const struct squeue *q, const json_t *j)
{
    const json_t *r = json_object_get(j, "request");
    const char *queue = json_string_value(json_object_get(r, "queue"));
    const char *cl = sc_str(j, "cluster");

    if (!*cl)
        cl = sc_str(r, "cluster");
    if (q->jobs && !job_named(q, j))
        return 0;
    if (q->users && !sc_listed(q->users, sc_str(j, "account")) &&
        !sc_listed(q->users, sc_str(j, "owner")))
        return 0;
    if (q->parts && (!queue || !sc_listed(q->parts, queue)))
        return 0;
    if (q->clusters && !sc_listed(q->clusters, cl))
        return 0;
    if (q->names && !sc_listed(q->names, sc_str(j, "name")))
        return 0;
    return !q->states || sc_state_listed(q->states, sc_state(j));
}

/* -r: an array's waiting tasks (one record, "array_tasks") a line each,
 * as the tasks they are: 123_8, 123_9, ... Returns the lines printed, or
 * -1 after printing why. */
static long each_task(const struct squeue *q, const struct sc_format *fmt,
                      const json_t *j)
{
    struct array_spec spec;
    struct loom_error err = {0};
    json_t *t = json_deep_copy(j);
    const char *id = sc_str(j, "id");
    char tid[160];
    long shown = 0;

    if (!t || array_spec_parse(sc_str(j, "array_tasks"), &spec, &err) < 0) {
        json_decref(t);
        return sc_fail("job %s: its tasks '%s': %s", id,
                       sc_str(j, "array_tasks"),
                       t ? err.message : "out of memory"), -1;
    }
    json_object_set(t, "state", json_object_get(j, "array_tasks_state"));
    json_object_del(t, "array_tasks");
    json_object_del(t, "array_tasks_state");
    json_object_set_new(t, "array_job_id", json_string(id));
    for (long ord = 0; ord < spec.tasks; ord++) {
        long task = array_spec_task(&spec, ord);

        snprintf(tid, sizeof(tid), "%s_%ld", id, task);
        json_object_set_new(t, "id", json_string(tid));
        json_object_set_new(t, "array_task_id", json_integer(task));
        if (wanted(q, t)) {
            sc_format_row(fmt, t, NULL);
            shown++;
        }
    }
    array_spec_fini(&spec);
    json_decref(t);
    return shown;
}

/* The members of the job object the rows read (GET /v1/jobs?fields=):
 * a row of 10,000 jobs costs the parse of what it never shows. A new
 * string, or NULL when out of memory. */
static char *members_of(const struct sc_format *fmt, int json)
{
    size_t len = sizeof(SC_JOB_MEMBERS "," JSON_MEMBERS);
    char *all, *end;

    for (size_t i = 0; i < fmt->n; i++)
        if (fmt->items[i].f && sc_job_members(fmt->items[i].f))
            len += strlen(sc_job_members(fmt->items[i].f)) + 1;
    if (!(all = malloc(len)))
        return NULL;
    end = all + snprintf(all, len, "%s", json ? SC_JOB_MEMBERS "," JSON_MEMBERS
                                              : SC_JOB_MEMBERS);
    for (size_t i = 0; !json && i < fmt->n; i++)
        if (fmt->items[i].f && sc_job_members(fmt->items[i].f))
            end += snprintf(end, len - (size_t)(end - all), ",%s",
                            sc_job_members(fmt->items[i].f));
    return all;
}

static int options(struct squeue *q, int argc, char **argv)
{
    static const struct option longs[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"user", required_argument, NULL, 'u'},
        {"states", required_argument, NULL, 't'},
        {"noheader", no_argument, NULL, 'h'},
        {"format", required_argument, NULL, 'o'},
        {"Format", required_argument, NULL, 'O'},
        {"all", no_argument, NULL, 'a'},
        {"partition", required_argument, NULL, 'p'},
        {"clusters", required_argument, NULL, 'M'},
        {"name", required_argument, NULL, 'n'},
        {"long", no_argument, NULL, 'l'},
        {"me", no_argument, NULL, 'm'},
        {"noconvert", no_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'J'},
        {"yaml", no_argument, NULL, 'Y'},
        {"array", no_argument, NULL, 'r'},
        {"iterate", required_argument, NULL, 'i'},
        {"qos", required_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'H'},
        {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":j:u:t:ho:O:ap:M:n:lri:q:", longs,
                            NULL)) != -1) {
        switch (c) {
        case 'j': q->jobs = optarg; break;
        case 'u': q->users = optarg; break;
        case 't': q->states = optarg; break;
        case 'h': q->noheader = 1; break;
        case 'o': q->format = optarg; break;
        case 'O': q->fields = optarg; break;
        case 'a': break; /* Loom hides no partition */
        case 'p': q->parts = optarg; break;
        case 'M': q->clusters = optarg; break;
        case 'n': q->names = optarg; break;
        case 'l': q->longer = 1; break;
        case 'm': q->users = sc_user(); break;
        case 'c': break; /* Loom's sizes are never converted */
        case 'J': q->json = SC_DOC_JSON; break;
        case 'Y': q->json = SC_DOC_YAML; break;
        case 'r': q->tasks = 1; break;
        case 'i':
            return sc_unsupported("--iterate", "run squeue again");
        case 'q':
            return sc_unsupported("--qos", "Loom has no QOS");
        case 'H':
            printf("Usage: squeue [-j JOBS] [-u USERS] [-t STATES] [-r] [-p "
                   "PARTITIONS] [-M CLUSTERS] [-n NAMES] [-h] [-l] [-o "
                   "FORMAT | -O FIELDS | --json | --yaml]\n");
            return SC_OK;
        default:
            return sc_opt_error(c, argv);
        }
    }
    if (optind < argc)
        return sc_usage("unexpected argument '%s'", argv[optind]);
    if (q->users && !*q->users)
        return sc_fail("cannot tell the calling user's name");
    if (q->json && (q->format || q->fields || q->longer))
        return sc_usage("%s writes every field Loom has; it takes no %s",
                        sc_doc_option(q->json), q->format ? "--format"
                        : q->fields ? "--Format" : "--long");
    return -1;
}

int sc_squeue(int argc, char **argv)
{
    struct squeue q = {0};
    struct sc_jobs_query jq = {0};
    struct sc_format fmt;
    struct loom_error err = {0};
    char states[256];
    json_t *items = NULL, *out = NULL, *j;
    char *members;
    size_t i, shown = 0;
    int rc;

    if ((rc = options(&q, argc, argv)) >= 0)
        return rc;
    if (q.tasks && q.json)
        return sc_unsupported(q.json == SC_DOC_YAML ? "--array with --yaml"
                                                    : "--array with --json",
                              "the document gives an array's waiting tasks "
                              "as one job");
    if (q.states && sc_state_filter(q.states, states, sizeof(states)) < 0)
        return sc_usage("--states: '%s' is not a list of job states (PENDING "
                        "RUNNING SUSPENDED COMPLETED CANCELLED FAILED TIMEOUT "
                        "OUT_OF_MEMORY CONFIGURING, their short forms, or "
                        "all)", q.states);
    if (!q.states) /* the queue; with -j, the jobs named, in any state */
        snprintf(states, sizeof(states), "%s", q.jobs ? "" : QUEUE_STATES);
    if ((q.fields ? sc_format_names(q.fields, sc_job_fields, &fmt)
                  : sc_format_letters(q.format ? q.format
                                      : q.longer ? LONG_FORMAT
                                                 : DEFAULT_FORMAT,
                                      sc_job_fields, &fmt)) < 0)
        return SC_USAGE;
    if (!(members = members_of(&fmt, q.json))) {
        sc_format_fini(&fmt);
        return sc_fail("out of memory");
    }
    /* loomd selects by jobs, users and queues, by one name or cluster;
     * lists of names and clusters, and tasks (-r), are filtered here */
    jq.states = states;
    jq.fields = members;
    jq.ids = q.jobs;
    jq.users = q.users;
    jq.queues = q.parts;
    jq.name = q.names && !strchr(q.names, ',') ? q.names : NULL;
    jq.cluster = q.clusters && !strchr(q.clusters, ',') ? q.clusters
                                                         : NULL;
    if (!strcmp(states, "none")) /* only states Loom never has */
        items = json_array();
    else if (sc_jobs(&jq, NULL, &items, &err) < 0) {
        free(members);
        sc_format_fini(&fmt);
        return sc_fail("slurm_load_jobs error: %s", err.message);
    }
    free(members);
    if (q.json)
        out = json_array();
    else if (!q.noheader)
        sc_format_header(&fmt, NULL);
    json_array_foreach(items, i, j) {
        long n;

        if (q.tasks && *sc_str(j, "array_tasks") &&
            json_is_string(json_object_get(j, "array_tasks_state"))) {
            if ((n = each_task(&q, &fmt, j)) < 0) {
                rc = SC_FAIL;
                break;
            }
            shown += (size_t)n;
        } else if (wanted(&q, j)) {
            if (out)
                json_array_append_new(out, sc_json_job(j));
            else
                sc_format_row(&fmt, j, NULL);
            shown++;
        }
    }
    json_decref(items);
    sc_format_fini(&fmt);
    if (rc == SC_FAIL) {
        json_decref(out);
        return rc;
    }
    if (q.json && (!out || json_array_size(out) < shown)) {
        json_decref(out);
        return sc_fail("out of memory");
    }
    if (q.jobs && !shown && !strchr(q.jobs, ',')) {
        json_decref(out);
        return sc_fail("slurm_load_jobs error: Invalid job id specified");
    }
    if (q.json)
        return sc_doc_print(q.json, "openapi/v0.0.38",
                            "Slurm OpenAPI v0.0.38", "jobs", out);
    return SC_OK;
}
