/* scontrol.c - scontrol: show job, node, partition and config; hold,
 * release, suspend, resume and update of jobs. */
/* SPDX-License-Identifier: MIT */
#include "core/slurmcli/slurmcli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/depend.h"
#include "core/timefmt.h"

static int oneliner;

static const char *or_null(const char *s)
{
    return s && *s ? s : "(null)";
}

/* Between groups of fields: a new indented line, or one space. */
static void brk(void)
{
    fputs(oneliner ? " " : "\n   ", stdout);
}

static const struct sc_field *field(const char *name)
{
    for (size_t i = 0; sc_job_fields[i].name; i++)
        if (!strcmp(sc_job_fields[i].name, name))
            return &sc_job_fields[i];
    return NULL;
}

static const char *cell(const json_t *j, const char *name, char *b, size_t n)
{
    const struct sc_field *f = field(name);

    return f ? f->cell(j, b, n) : "";
}

static void show_job(const json_t *j)
{
    const json_t *r = json_object_get(j, "request");
    char a[4096], b[512], c[512], d[512];
    long long nodes = json_integer_value(json_object_get(r, "nodes"));
    long long cpn = json_integer_value(json_object_get(r, "cpus_per_node"));

    printf("JobId=%s", cell(j, "JobIDRaw", a, sizeof(a)));
    if (*sc_str(j, "array_job_id"))
        printf(" ArrayJobId=%s ArrayTaskId=%s", sc_str(j, "array_job_id"),
               cell(j, "ArrayTaskID", b, sizeof(b)));
    else if (*sc_str(j, "array_tasks"))
        printf(" ArrayJobId=%s ArrayTaskId=%s", sc_str(j, "id"),
               sc_str(j, "array_tasks"));
    printf(" JobName=%s", sc_str(j, "name"));
    brk();
    printf("UserId=%s Account=%s Owner=%s", cell(j, "UserName", a, sizeof(a)),
           cell(j, "Account", b, sizeof(b)), sc_str(j, "owner"));
    brk();
    printf("Priority=%s Nice=0 QOS=normal", cell(j, "Priority", a,
                                                  sizeof(a)));
    brk();
    printf("JobState=%s Reason=%s Dependency=%s", sc_state(j),
           sc_reason(j, b, sizeof(b)), or_null(sc_str(j, "dependency")));
    brk();
    /* Requeue=1: submitted again if its cluster loses it ("requeue") */
    printf("Requeue=%d Restarts=%lld BatchFlag=1 ExitCode=%s",
           !json_is_false(json_object_get(j, "requeue")),
           (long long)json_integer_value(json_object_get(j, "requeues")),
           sc_exit_code(j, c, sizeof(c)));
    brk();
    printf("RunTime=%s TimeLimit=%s", sc_duration(sc_elapsed(j, time(NULL)),
                                                  0, a, sizeof(a)),
           cell(j, "TimeLimit", b, sizeof(b)));
    brk();
    printf("SubmitTime=%s", cell(j, "SubmitTime", a, sizeof(a)));
    brk();
    printf("StartTime=%s EndTime=%s", cell(j, "StartTime", a, sizeof(a)),
           cell(j, "EndTime", b, sizeof(b)));
    brk();
    printf("Partition=%s Cluster=%s", cell(j, "Partition", a, sizeof(a)),
           cell(j, "Cluster", b, sizeof(b)));
    brk();
    printf("NodeList=%s", or_null(cell(j, "NodeList", a, sizeof(a))));
    brk();
    printf("NumNodes=%lld NumCPUs=%lld NumTasks=%lld CPUs/Task=%lld",
           nodes, nodes * cpn, nodes, cpn);
    brk();
    printf("MinMemoryNode=%s Features=%s Gres=%s",
           cell(j, "MinMemory", a, sizeof(a)), cell(j, "Feature", b,
                                                     sizeof(b)),
           cell(j, "tres-per-node", c, sizeof(c)));
    brk();
    printf("Command=%s", cell(j, "Command", a, sizeof(a)));
    brk();
    printf("WorkDir=%s", cell(j, "WorkDir", a, sizeof(a)));
    brk();
    snprintf(d, sizeof(d), "%s", or_null(cell(j, "STDOUT", a, sizeof(a))));
    printf("StdErr=%s", or_null(cell(j, "STDERR", b, sizeof(b))));
    brk();
    printf("StdOut=%s\n", d);
    if (!oneliner)
        putchar('\n');
}

static int show_jobs(const char *id)
{
    struct loom_error err = {0};
    json_t *items = NULL, *j;
    size_t i;

    if (sc_jobs(NULL, id, &items, &err) < 0)
        return sc_fail("slurm_load_jobs error: %s",
                       err.kind == LOOM_ENOENT ? "Invalid job id specified"
                                               : err.message);
    if (!json_array_size(items))
        printf("No jobs in the system\n");
    json_array_foreach(items, i, j)
        show_job(j);
    json_decref(items);
    return SC_OK;
}

static const char *node_state(const char *s)
{
    static const struct {
        const char *loom, *slurm;
    } m[] = {
        {"idle", "IDLE"},         {"mixed", "MIXED"},
        {"allocated", "ALLOCATED"}, {"reserved", "RESERVED"},
        {"draining", "DRAINING"}, {"drained", "DRAINED"},
        {"down", "DOWN"},         {"maint", "MAINT"},
        {"paused", "DRAINED"},    {"unknown", "UNKNOWN"},
    };

    for (size_t i = 0; s && i < sizeof(m) / sizeof(*m); i++)
        if (!strcmp(m[i].loom, s))
            return m[i].slurm;
    return "UNKNOWN";
}

static void join(const json_t *a, const char *sep, char *b, size_t n)
{
    size_t len = 0, i;
    const json_t *v;

    b[0] = '\0';
    json_array_foreach(a, i, v)
        len += (size_t)snprintf(b + len, len < n ? n - len : 0, "%s%s",
                                i ? sep : "", json_string_value(v));
}

static void show_node(const json_t *n)
{
    char f[1024], q[1024];

    join(json_object_get(n, "features"), ",", f, sizeof(f));
    join(json_object_get(n, "queues"), ",", q, sizeof(q));
    printf("NodeName=%s Arch=x86_64", sc_str(n, "id"));
    brk();
    printf("CPUAlloc=%lld CPUTot=%lld", (long long)json_integer_value(
               json_object_get(n, "cpus_alloc")),
           (long long)json_integer_value(json_object_get(n, "cpus")));
    brk();
    printf("AvailableFeatures=%s ActiveFeatures=%s", or_null(f), or_null(f));
    brk();
    printf("Gres=%s", json_integer_value(json_object_get(n, "gpus"))
                          ? "gpu" : "(null)");
    if (json_integer_value(json_object_get(n, "gpus")))
        printf(":%lld", (long long)json_integer_value(
                            json_object_get(n, "gpus")));
    brk();
    printf("RealMemory=%lld AllocMem=%lld", (long long)json_integer_value(
               json_object_get(n, "memory_mb")),
           (long long)json_integer_value(json_object_get(n,
                                                         "memory_alloc_mb")));
    brk();
    printf("State=%s Cluster=%s", node_state(sc_str(n, "state")),
           sc_str(n, "cluster"));
    brk();
    printf("Partitions=%s", or_null(q));
    if (*sc_str(n, "reason")) {
        brk();
        printf("Reason=%s", sc_str(n, "reason"));
    }
    putchar('\n');
    if (!oneliner)
        putchar('\n');
}

static int show_nodes(const char *name)
{
    struct loom_error err = {0};
    json_t *reply = NULL, *items, *n;
    size_t i, shown = 0;

    if (sc_get("/v1/nodes", &reply, &err) < 0)
        return sc_fail("slurm_load_node error: %s", err.message);
    items = json_object_get(reply, "items");
    json_array_foreach(items, i, n)
        if (!name || !strcmp(name, sc_str(n, "id")) ||
            !strcmp(name, sc_str(n, "name"))) {
            show_node(n);
            shown++;
        }
    json_decref(reply);
    if (name && !shown)
        return sc_fail("Node %s not found", name);
    return SC_OK;
}

static int show_partitions(const char *name)
{
    struct loom_error err = {0};
    json_t *reply = NULL, *items, *p;
    size_t i, shown = 0;

    if (sc_get("/v1/queues?view=fabric", &reply, &err) < 0)
        return sc_fail("slurm_load_partitions error: %s", err.message);
    items = json_object_get(reply, "items");
    json_array_foreach(items, i, p) {
        const json_t *mw = json_object_get(p, "max_walltime_s");
        char t[64], nl[4096];
        if (name && strcmp(name, sc_str(p, "queue")))
            continue;
        shown++;
        printf("PartitionName=%s Cluster=%s", sc_str(p, "queue"),
               sc_str(p, "cluster"));
        brk();
        printf("Default=NO State=%s",
               !strcmp(sc_str(p, "state"), "open") ? "UP" : "DOWN");
        brk();
        printf("MaxTime=%s", json_is_integer(mw)
                                 ? sc_duration(json_integer_value(mw), 0, t,
                                               sizeof(t))
                                 : "UNLIMITED");
        brk();
        printf("Nodes=%s", sc_nodelist(json_object_get(p, "nodes"), nl,
                                       sizeof(nl)));
        brk();
        printf("TotalCPUs=%lld TotalNodes=%lld\n",
               (long long)json_integer_value(json_object_get(p, "cpus")),
               (long long)json_integer_value(json_object_get(p,
                                                             "node_count")));
        if (!oneliner)
            putchar('\n');
    }
    json_decref(reply);
    if (name && !shown)
        return sc_fail("Partition %s not found", name);
    return SC_OK;
}

static int show_config(void)
{
    struct loom_error err = {0};
    json_t *rt = NULL;
    char now[64];
    time_t t = time(NULL);

    if (sc_get("/v1/runtime", &rt, &err) < 0)
        return sc_fail("slurm_load_ctl_conf error: %s", err.message);
    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%S", localtime(&t));
    printf("Configuration data as of %s\n", now);
    printf("AccountingStorageType   = Loom\n");
    printf("AcctGatherNodeFreq      = 0 sec\n");
    printf("ClusterName             = loom\n");
    printf("LoomVersion             = %s\n",
           sc_str(rt, "version"));
    printf("PrivateData             = jobs\n");
    printf("SchedulerTimeSlice      = 30 sec\n");
    printf("SchedulerType           = loom\n");
    printf("SLURM_VERSION           = 22.05.8\n");
    json_decref(rt);
    return SC_OK;
}

/* hold, release, suspend, resume on each job of a list (1,2 or 1 2). */
static int act(const char *action, int argc, char **argv)
{
    struct client *c = sc_client();
    struct loom_error err = {0};
    struct client_path p;
    const char *path;
    int rc = SC_OK;

    if (argc < 1)
        return sc_usage("%s: give a job id", action);
    if (!c)
        return SC_FAIL;
    for (int i = 0; i < argc; i++) {
        for (const char *q = argv[i]; *q;) {
            size_t n = strcspn(q, ",");
            char id[64];
            json_t *reply = NULL;
            snprintf(id, sizeof(id), "%.*s", (int)(n < 63 ? n : 63), q);
            client_path_init(&p, "/v1/jobs");
            client_path_segment(&p, id);
            client_path_segment(&p, action);
            if (!(path = client_path_get(&p, &err)) ||
                client_request(c, "POST", path, NULL, NULL, NULL, &reply,
                               &err) < 0)
                rc = sc_fail("%s job %s: %s", action, id,
                             err.kind == LOOM_ENOENT
                                 ? "Invalid job id specified" : err.message);
            json_decref(reply);
            q += n;
            if (*q == ',')
                q++;
        }
    }
    return rc;
}

/* One KEY=VALUE of scontrol update into the PATCH body. */
static int update_pair(json_t *body, json_t *req, const char *kv)
{
    const char *eq = strchr(kv, '=');
    const char *v = eq ? eq + 1 : "";
    struct loom_error err = {0};
    size_t k = eq ? (size_t)(eq - kv) : strlen(kv);
    char *end;
    long n;

#define KEY(name) (k == strlen(name) && !strncasecmp(kv, name, k))
    if (!eq)
        return sc_usage("update: '%s' is not KEY=VALUE", kv);
    if (KEY("JobName") || KEY("Name")) {
        json_object_set_new(body, "name", json_string(v));
    } else if (KEY("TimeLimit")) {
        if (timefmt_slurm(v, &n, &err) < 0)
            return sc_usage("update: TimeLimit: %s", err.message);
        json_object_set_new(req, "walltime_s", json_integer(n));
    } else if (KEY("NumNodes") || KEY("MinMemoryNode") ||
               KEY("MinCPUsNode") || KEY("Priority")) {
        n = strtol(v, &end, 10);
        if (!*v || (*end && !(KEY("MinMemoryNode") && !strcmp(end, "M"))))
            return sc_usage("update: %.*s needs a whole number, not '%s'",
                            (int)k, kv, v);
        if (KEY("Priority"))
            json_object_set_new(body, "priority", json_integer(n));
        else
            json_object_set_new(req, KEY("NumNodes") ? "nodes"
                                     : KEY("MinCPUsNode") ? "cpus_per_node"
                                                          : "memory_mb",
                                json_integer(n));
    } else if (KEY("Partition")) {
        json_object_set_new(req, "queue", json_string(v));
    } else if (KEY("Dependency")) {
        json_object_set_new(body, "dependency", *v ? json_string(v)
                                                   : json_null());
    } else if (KEY("Features")) {
        json_t *f = json_array();
        for (const char *p = v; *p;) {
            size_t m = strcspn(p, "&,");
            json_array_append_new(f, json_stringn(p, m));
            p += m;
            if (*p)
                p++;
        }
        json_object_set_new(req, "features", f);
    } else {
        return sc_usage("update: %.*s cannot be changed by Loom: it changes "
                        "JobName, TimeLimit, NumNodes, MinCPUsNode, "
                        "MinMemoryNode, Partition, Features, Dependency and "
                        "Priority of a waiting job", (int)k, kv);
    }
#undef KEY
    return -1;
}

static int update(int argc, char **argv)
{
    json_t *body = json_object(), *req = json_object(), *reply = NULL;
    struct client *c;
    struct loom_error err = {0};
    struct client_path p;
    const char *id = NULL, *path;
    int rc = -1;

    for (int i = 0; i < argc && rc < 0; i++) {
        if (!strncasecmp(argv[i], "JobId=", 6))
            id = argv[i] + 6;
        else
            rc = update_pair(body, req, argv[i]);
    }
    if (rc < 0 && !id)
        rc = sc_usage("update: give JobId=ID (Loom updates jobs only)");
    if (rc < 0 && json_object_size(req))
        json_object_set(body, "request", req);
    if (rc < 0 && !json_object_size(body))
        rc = sc_usage("update: give what to change (KEY=VALUE)");
    if (rc < 0 && !(c = sc_client()))
        rc = SC_FAIL;
    if (rc < 0) {
        client_path_init(&p, "/v1/jobs");
        client_path_segment(&p, id);
        if (!(path = client_path_get(&p, &err)) ||
            client_request(c, "PATCH", path, body, NULL, NULL, &reply,
                           &err) < 0)
            rc = sc_fail("update job %s: %s", id,
                         err.kind == LOOM_ENOENT ? "Invalid job id specified"
                                                 : err.message);
        else
            rc = SC_OK;
    }
    json_decref(reply);
    json_decref(req);
    json_decref(body);
    return rc;
}

int sc_scontrol(int argc, char **argv)
{
    int i = 1;

    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--oneliner"))
            oneliner = 1;
        else if (!strcmp(argv[i], "-d") || !strcmp(argv[i], "-dd") ||
                 !strcmp(argv[i], "--details"))
            continue; /* every detail Loom has is shown */
        else
            return sc_usage("invalid option '%s': Loom's scontrol takes -o "
                            "and -d", argv[i]);
    }
    if (i >= argc)
        return sc_usage("give a command: show, hold, release, suspend, "
                        "resume or update");
    if (!strcmp(argv[i], "show")) {
        const char *what = i + 1 < argc ? argv[i + 1] : "";
        const char *name = i + 2 < argc ? argv[i + 2] : NULL;
        for (int k = i + 2; k < argc; k++)
            if (!strcmp(argv[k], "--oneliner") || !strcmp(argv[k], "-o"))
                oneliner = 1, name = name == argv[k] ? NULL : name;
            else if (!strcmp(argv[k], "-dd") || !strcmp(argv[k], "-d"))
                name = name == argv[k] ? NULL : name;
        if (!strcmp(what, "job") || !strcmp(what, "jobs") ||
            !strcmp(what, "jobid"))
            return show_jobs(name);
        if (!strcmp(what, "node") || !strcmp(what, "nodes"))
            return show_nodes(name);
        if (!strcmp(what, "partition") || !strcmp(what, "partitions"))
            return show_partitions(name);
        if (!strcmp(what, "config"))
            return show_config();
        return sc_usage("show %s: Loom's scontrol shows job, node, partition "
                        "and config", what);
    }
    if (!strcmp(argv[i], "hold") || !strcmp(argv[i], "uhold") ||
        !strcmp(argv[i], "release") || !strcmp(argv[i], "suspend") ||
        !strcmp(argv[i], "resume"))
        return act(!strcmp(argv[i], "uhold") ? "hold" : argv[i],
                   argc - i - 1, argv + i + 1);
    if (!strcmp(argv[i], "update"))
        return update(argc - i - 1, argv + i + 1);
    return sc_usage("%s: Loom's scontrol carries out show, hold, uhold, "
                    "release, suspend, resume and update", argv[i]);
}
