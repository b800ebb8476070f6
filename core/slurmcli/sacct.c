/* sacct.c - sacct: jobs and their batch steps, as Slurm's accounting
 * shows them, from Loom's job records. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/timeutil.h"

#define DEFAULT_FIELDS "JobID,JobName,Partition,Account,AllocCPUS,State," \
                       "ExitCode"
#define BRIEF_FIELDS "JobID,State,ExitCode"

/* A row is a job, or its batch step: the job with "step" set. */
static const char *step(const json_t *r)
{
    return json_string_value(json_object_get(r, "step"));
}

static long long req_num(const json_t *j, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(j, "request"),
                                              k));
}

static const char *with_step(const json_t *r, const char *id, char *b,
                             size_t n)
{
    if (step(r))
        snprintf(b, n, "%s.%s", id, step(r));
    else
        snprintf(b, n, "%s", id);
    return b;
}

static const char *f_jobid(const json_t *r, char *b, size_t n)
{
    char id[512];

    return with_step(r, sc_job_field("JobID")->cell(r, id, sizeof(id)), b, n);
}

static const char *f_jobidraw(const json_t *r, char *b, size_t n)
{
    char id[512];

    return with_step(r, sc_job_field("JobIDRaw")->cell(r, id, sizeof(id)), b,
                     n);
}

static const char *f_name(const json_t *r, char *b, size_t n)
{
    return step(r) ? step(r) : sc_str(r, "name");
}

static const char *f_user(const json_t *r, char *b, size_t n)
{
    return step(r) ? "" : sc_job_field("UserName")->cell(r, b, n);
}

static const char *f_account(const json_t *r, char *b, size_t n)
{
    return sc_job_field("Account")->cell(r, b, n);
}

static const char *f_partition(const json_t *r, char *b, size_t n)
{
    return step(r) ? "" : sc_job_field("Partition")->cell(r, b, n);
}

static const char *f_cluster(const json_t *r, char *b, size_t n)
{
    return sc_job_field("Cluster")->cell(r, b, n);
}

static const char *f_state(const json_t *r, char *b, size_t n)
{
    return sc_state(r);
}

static const char *f_exit(const json_t *r, char *b, size_t n)
{
    return sc_exit_code(r, b, n);
}

static const char *f_cpus(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", req_num(r, "nodes") * req_num(r,
                                                        "cpus_per_node"));
    return b;
}

static const char *f_nnodes(const json_t *r, char *b, size_t n)
{
    return sc_job_field("NumNodes")->cell(r, b, n);
}

static const char *f_nodelist(const json_t *r, char *b, size_t n)
{
    const char *s = sc_job_field("NodeList")->cell(r, b, n);

    return *s ? s : "None assigned";
}

static const char *f_elapsed(const json_t *r, char *b, size_t n)
{
    return sc_duration(sc_elapsed(r, time(NULL)), 0, b, n);
}

static const char *f_elapsed_raw(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lld", sc_elapsed(r, time(NULL)));
    return b;
}

static const char *f_cputime(const json_t *r, char *b, size_t n)
{
    long long cpus = req_num(r, "nodes") * req_num(r, "cpus_per_node");

    return sc_duration(cpus * sc_elapsed(r, time(NULL)), 0, b, n);
}

static const char *f_cputime_raw(const json_t *r, char *b, size_t n)
{
    long long cpus = req_num(r, "nodes") * req_num(r, "cpus_per_node");

    snprintf(b, n, "%lld", cpus * sc_elapsed(r, time(NULL)));
    return b;
}

static const char *f_submit(const json_t *r, char *b, size_t n)
{
    return sc_time(json_object_get(r, "submit_time"), b, n);
}

static const char *f_start(const json_t *r, char *b, size_t n)
{
    return sc_time(json_object_get(r, "start_time"), b, n);
}

static const char *f_end(const json_t *r, char *b, size_t n)
{
    return sc_time(json_object_get(r, "end_time"), b, n);
}

static const char *f_timelimit(const json_t *r, char *b, size_t n)
{
    return step(r) ? "" : sc_job_field("TimeLimit")->cell(r, b, n);
}

static const char *f_reqmem(const json_t *r, char *b, size_t n)
{
    snprintf(b, n, "%lldM", req_num(r, "memory_mb"));
    return b;
}

static const char *f_workdir(const json_t *r, char *b, size_t n)
{
    return sc_job_field("WorkDir")->cell(r, b, n);
}

static const char *f_reason(const json_t *r, char *b, size_t n)
{
    return sc_reason(r, b, n);
}

/* What the job used (its "usage": the local cluster measures it), or -1
 * where its cluster did not measure it, or it has not ended. */
static long long used(const json_t *r, const char *key)
{
    const json_t *v = json_object_get(json_object_get(r, "usage"), key);

    return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* CPU time as sacct writes it: [D-]HH:MM:SS, or MM:SS.mmm under an hour. */
static const char *cpu_time(long long ms, char *b, size_t n)
{
    long long s = ms / 1000;

    if (ms < 0)
        return "Unknown";
    if (s < 3600)
        snprintf(b, n, "%02lld:%02lld.%03lld", s / 60, s % 60, ms % 1000);
    else
        sc_duration(s, 0, b, n);
    return b;
}

static const char *f_usercpu(const json_t *r, char *b, size_t n)
{
    return cpu_time(used(r, "user_cpu_ms"), b, n);
}

static const char *f_systemcpu(const json_t *r, char *b, size_t n)
{
    return cpu_time(used(r, "system_cpu_ms"), b, n);
}

static const char *f_totalcpu(const json_t *r, char *b, size_t n)
{
    long long u = used(r, "user_cpu_ms"), s = used(r, "system_cpu_ms");

    return cpu_time(u < 0 || s < 0 ? -1 : u + s, b, n);
}

static const char *f_maxrss(const json_t *r, char *b, size_t n)
{
    long long kb = used(r, "max_rss_kb");

    if (kb < 0)
        return "Unknown";
    snprintf(b, n, "%lldK", kb);
    return b;
}

static const struct sc_field fields[] = {
    {0, "JobID", "JobID", 12, f_jobid},
    {0, "JobIDRaw", "JobIDRaw", 12, f_jobidraw},
    {0, "JobName", "JobName", 10, f_name},
    {0, "User", "User", 9, f_user},
    {0, "Account", "Account", 10, f_account},
    {0, "Partition", "Partition", 10, f_partition},
    {0, "Cluster", "Cluster", 10, f_cluster},
    {0, "State", "State", 10, f_state},
    {0, "ExitCode", "ExitCode", 8, f_exit},
    {0, "DerivedExitCode", "DerivedExitCode", 15, f_exit},
    {0, "AllocCPUS", "AllocCPUS", 10, f_cpus},
    {0, "NCPUS", "NCPUS", 10, f_cpus},
    {0, "ReqCPUS", "ReqCPUS", 8, f_cpus},
    {0, "NNodes", "NNodes", 8, f_nnodes},
    {0, "AllocNodes", "AllocNodes", 10, f_nnodes},
    {0, "NodeList", "NodeList", 15, f_nodelist},
    {0, "Elapsed", "Elapsed", 10, f_elapsed},
    {0, "ElapsedRaw", "ElapsedRaw", 10, f_elapsed_raw},
    {0, "CPUTime", "CPUTime", 10, f_cputime},
    {0, "CPUTimeRAW", "CPUTimeRAW", 10, f_cputime_raw},
    {0, "Submit", "Submit", 19, f_submit},
    {0, "Start", "Start", 19, f_start},
    {0, "End", "End", 19, f_end},
    {0, "Timelimit", "Timelimit", 10, f_timelimit},
    {0, "ReqMem", "ReqMem", 10, f_reqmem},
    {0, "WorkDir", "WorkDir", 20, f_workdir},
    {0, "Reason", "Reason", 20, f_reason},
    {0, "UserCPU", "UserCPU", 10, f_usercpu},
    {0, "SystemCPU", "SystemCPU", 10, f_systemcpu},
    {0, "TotalCPU", "TotalCPU", 10, f_totalcpu},
    {0, "MaxRSS", "MaxRSS", 10, f_maxrss},
    {0, NULL, NULL, 0, NULL},
};

struct sacct {
    const char *jobs, *users, *states, *format, *clusters, *parts, *names;
    time_t start, end;
    int has_start, has_end, noheader, allocations, brief, all;
    enum sc_doc json; /* --json, --yaml */
    const char *sep, *trail;
};

/* Does -j name the job, or only its batch step ("12.batch")? 0: not
 * named; 1: the job (and its steps); 2: its batch step alone. */
static int named(const char *jobs, const json_t *j)
{
    const char *ids[] = {sc_str(j, "id"), sc_str(j, "array_job_id"),
                         sc_str(j, "loom_id")};
    char b[160];

    for (size_t i = 0; i < 3; i++) {
        if (!*ids[i])
            continue;
        if (sc_listed(jobs, ids[i]))
            return 1;
        snprintf(b, sizeof(b), "%s.batch", ids[i]);
        if (sc_listed(jobs, b))
            return 2;
    }
    return 0;
}

static int in_window(const struct sacct *a, const json_t *j)
{
    time_t sub, end;
    const char *e = sc_str(j, "end_time");

    if (a->has_end && time_parse(sc_str(j, "submit_time"), &sub) == 0 &&
        sub >= a->end)
        return 0;
    if (a->has_start && *e && time_parse(e, &end) == 0 && end < a->start)
        return 0;
    return 1;
}

static int wanted(const struct sacct *a, const json_t *j)
{
    const char *queue = json_string_value(json_object_get(
        json_object_get(j, "request"), "queue"));

    if (*sc_str(j, "array_tasks") && !json_object_get(j, "array_tasks_state"))
        return 0;
    if (a->users && !sc_listed(a->users, sc_str(j, "account")) &&
        !sc_listed(a->users, sc_str(j, "owner")))
        return 0;
    if (a->states && !sc_state_listed(a->states, sc_state(j)))
        return 0;
    if (a->clusters && !sc_listed(a->clusters, sc_str(j, "cluster")))
        return 0;
    if (a->parts && (!queue || !sc_listed(a->parts, queue)))
        return 0;
    if (a->names && !sc_listed(a->names, sc_str(j, "name")))
        return 0;
    return in_window(a, j);
}

/* -j as loomd selects the jobs: each item without its step ("12.batch"
 * is job 12's); which step is the row's to tell. A new string, or NULL
 * when out of memory. */
static char *job_ids(const char *jobs)
{
    char *ids = malloc(strlen(jobs) + 1), *o = ids;

    for (const char *p = jobs; ids && *p;) {
        size_t len = strcspn(p, ","), id = strcspn(p, ".");
        if (o > ids)
            *o++ = ',';
        memcpy(o, p, id < len ? id : len);
        o += id < len ? id : len;
        p += len + (p[len] == ',');
    }
    if (ids)
        *o = '\0';
    return ids;
}

static int options(struct sacct *a, int argc, char **argv)
{
    static const struct option longs[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"allocations", no_argument, NULL, 'X'},
        {"parsable2", no_argument, NULL, 'P'},
        {"parsable", no_argument, NULL, 'p'},
        {"noheader", no_argument, NULL, 'n'},
        {"format", required_argument, NULL, 'o'},
        {"starttime", required_argument, NULL, 'S'},
        {"endtime", required_argument, NULL, 'E'},
        {"user", required_argument, NULL, 'u'},
        {"uid", required_argument, NULL, 'u'},
        {"allusers", no_argument, NULL, 'a'},
        {"state", required_argument, NULL, 's'},
        {"clusters", required_argument, NULL, 'M'},
        {"partition", required_argument, NULL, 'r'},
        {"name", required_argument, NULL, 'N'},
        {"brief", no_argument, NULL, 'b'},
        {"json", no_argument, NULL, 'J'},
        {"yaml", no_argument, NULL, 'Y'},
        {"duplicates", no_argument, NULL, 'D'},
        {"qos", required_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0;
    while ((c = getopt_long(argc, argv, ":j:XPpno:S:E:u:as:M:r:bDhLq:",
                            longs, NULL)) != -1) {
        switch (c) {
        case 'j': a->jobs = optarg; break;
        case 'X': a->allocations = 1; break;
        case 'P': a->sep = "|"; a->trail = ""; break;
        case 'p': a->sep = "|"; a->trail = "|"; break;
        case 'n': a->noheader = 1; break;
        case 'o': a->format = optarg; break;
        case 'u': a->users = optarg; break;
        case 'a': a->all = 1; break; /* all the caller may see */
        case 's': a->states = optarg; break;
        case 'M': a->clusters = optarg; break;
        case 'L': break; /* every cluster */
        case 'r': a->parts = optarg; break;
        case 'N': a->names = optarg; break;
        case 'b': a->brief = 1; break;
        case 'D': break; /* a job has one record */
        case 'S': case 'E':
            if (sc_time_arg(optarg, c == 'S' ? &a->start : &a->end) < 0)
                return sc_usage("-%c: '%s' is not a time (YYYY-MM-DD"
                                "[THH:MM[:SS]], now, now-N[minutes|hours|"
                                "days])", c, optarg);
            *(c == 'S' ? &a->has_start : &a->has_end) = 1;
            break;
        case 'J': a->json = SC_DOC_JSON; break;
        case 'Y': a->json = SC_DOC_YAML; break;
        case 'q':
            return sc_unsupported("--qos", "Loom has no QOS");
        case 'h':
            printf("Usage: sacct [-j JOBS] [-u USERS] [-s STATES] [-S TIME] "
                   "[-E TIME] [-X] [-n] [-P|-p] [-o FIELDS | --json | --yaml]\n");
            return SC_OK;
        default:
            return sc_opt_error(c, argv);
        }
    }
    if (optind < argc)
        return sc_usage("unexpected argument '%s'", argv[optind]);
    if (a->json && (a->format || a->sep || a->brief))
        return sc_usage("%s writes every field Loom has; it takes no %s",
                        sc_doc_option(a->json), a->format ? "--format"
                        : a->brief ? "--brief" : "--parsable");
    return -1;
}

static void print(const struct sacct *a, const struct sc_format *fmt,
                  const json_t *row)
{
    sc_format_row(fmt, row, a->sep);
}

int sc_sacct(int argc, char **argv)
{
    struct sacct a = {0};
    struct sc_jobs_query jq = {0};
    struct sc_format fmt;
    char *ids = NULL;
    struct loom_error err = {0};
    json_t *items = NULL, *out = NULL, *j, *st;
    struct tm tm;
    time_t now = time(NULL);
    size_t i, shown = 0;
    int rc, which;

    if ((rc = options(&a, argc, argv)) >= 0)
        return rc;
    if (a.states) {
        char b[256];
        if (sc_state_filter(a.states, b, sizeof(b)) < 0)
            return sc_usage("--state: '%s' is not a list of job states",
                            a.states);
    }
    if (!a.has_start && !a.jobs) { /* today, from midnight */
        localtime_r(&now, &tm);
        tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
        a.start = mktime(&tm);
        a.has_start = 1;
    }
    if (!a.users && !a.jobs && !a.all && sc_user())
        a.users = sc_user(); /* the caller's, as sacct without -a */
    if (sc_format_names(a.format ? a.format
                        : a.brief ? BRIEF_FIELDS : DEFAULT_FIELDS,
                        fields, &fmt) < 0)
        return SC_USAGE;
    fmt.trail = a.trail && *a.trail; /* -p: a | after the last field */
    /* loomd selects by jobs, users and partitions; the rest is filtered
     * here */
    jq.users = a.users;
    jq.queues = a.parts;
    if (a.jobs && !(ids = job_ids(a.jobs))) {
        sc_format_fini(&fmt);
        return sc_fail("out of memory");
    }
    jq.ids = ids;
    rc = sc_jobs(&jq, NULL, &items, &err);
    free(ids);
    if (rc < 0) {
        sc_format_fini(&fmt);
        return sc_fail("%s", err.message);
    }
    if (a.json)
        out = json_array();
    else if (!a.noheader)
        sc_format_header(&fmt, a.sep);
    json_array_foreach(items, i, j) {
        which = a.jobs ? named(a.jobs, j) : 1;
        if (!which || !wanted(&a, j))
            continue;
        if (a.json) { /* the job; Loom writes no steps */
            json_array_append_new(out, sc_json_acct_job(j));
            shown++;
            continue;
        }
        if (which == 1)
            print(&a, &fmt, j);
        /* a job that started ran its script as the batch step */
        if (a.allocations || !json_is_string(json_object_get(j,
                                                             "start_time")))
            continue;
        if (!(st = json_copy(j)))
            continue;
        json_object_set_new(st, "step", json_string("batch"));
        print(&a, &fmt, st);
        json_decref(st);
    }
    json_decref(items);
    sc_format_fini(&fmt);
    if (!a.json)
        return SC_OK;
    if (!out || json_array_size(out) < shown) {
        json_decref(out);
        return sc_fail("out of memory");
    }
    return sc_doc_print(a.json, "openapi/dbv0.0.38",
                        "Slurm OpenAPI DB v0.0.38", "jobs", out);
}
