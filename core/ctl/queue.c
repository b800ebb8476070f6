/* queue.c - loomctl jobs, cancel by filter and summary: the queue as
 * squeue, scancel and sinfo show it. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/client.h"
#include "core/ctl/fields.h"
#include "core/ctl/loomctl.h"
#include "core/ctl/table.h"
#include "core/domain.h"

/* The states a job waits or runs in: what squeue shows by default. */
#define ACTIVE_STATES "pending,held,starting,running,suspended"

static const struct ctl_field job_fields[] = {
    {"jobid", {"JOBID", 1, 0}, "id", CTL_F_JOBID},
    {"name", {"NAME", 0, 24}, "name", CTL_F_TEXT},
    {"owner", {"OWNER", 0, 16}, "owner", CTL_F_TEXT},
    {"account", {"ACCOUNT", 0, 16}, "account", CTL_F_TEXT},
    {"state", {"STATE", 0, 0}, "state", CTL_F_JOBSTATE},
    {"cluster", {"CLUSTER", 0, 0}, "cluster", CTL_F_TEXT},
    {"nodes", {"NODES", 1, 0}, "nodes", CTL_F_NODECOUNT},
    {"time", {"TIME", 1, 0}, "start_time", CTL_F_ELAPSED},
    {"nodelist", {"NODELIST", 0, 60}, "nodes", CTL_F_NODELIST},
    {"priority", {"PRIORITY", 1, 0}, "priority", CTL_F_INT},
    {"submit", {"SUBMIT", 0, 0}, "submit_time", CTL_F_TEXT},
    {"start", {"START", 0, 0}, "start_time", CTL_F_TEXT},
    {"end", {"END", 0, 0}, "end_time", CTL_F_TEXT},
    {"exitcode", {"EXIT", 1, 0}, "exit_code", CTL_F_INT},
    {"reason", {"REASON", 0, 60}, "reason", CTL_F_TEXT},
    {NULL, {NULL, 0, 0}, NULL, 0},
};
#define JOBS_DEFAULT "jobid,name,owner,state,cluster,nodes,time,nodelist,reason"

/* The filters of jobs and cancel. */
struct filter {
    const char *cluster, *states, *owner, *name, *nodelist, *format;
    const char *ids, *queues;
    int all;
};

/* The option code of --json: -j is --jobs here, as in squeue. */
#define OPT_JSON 0x100

/* Each of a comma-separated list of states is a job state: -1, or the
 * usage error's status. */
static int check_states(const char *cmd, const char *list)
{
    struct loom_error err;
    unsigned bits;

    if (domain_list_parse(&domain_job_states, list, &bits, "", &err) == 0)
        return -1;
    return ctl_usage(cmd, "--state: %s", err.message);
}

/* A comma-separated list of what (--jobs: job ids and array tasks, as
 * loomd's ?id= takes them; --queue: names), none empty: -1, or the usage
 * error's status. */
static int check_list(const char *cmd, const char *what, const char *list)
{
    int jobs = !strcmp(what, "--jobs"), rc;

    if ((rc = ctl_check_text(cmd, what, list)) >= 0)
        return rc;
    for (const char *p = list; p;) {
        size_t len = strcspn(p, ",");
        char one[48];
        int64_t id;
        long task;

        snprintf(one, sizeof(one), "%.*s", (int)len, p);
        if (!len)
            return ctl_usage(cmd, "%s: '%s' has an empty item; give %s, "
                             "comma-separated", what, list, jobs
                             ? "job ids (123) and array tasks (123_7)"
                             : "queue names");
        if (jobs && (len >= sizeof(one) ||
                     domain_job_ref_parse(one, &id, &task) < 0))
            return ctl_usage(cmd, "%s: '%.*s' is not a job: give job ids "
                             "(123, without leading zeros) and array tasks "
                             "(123_7), comma-separated", what, (int)len, p);
        p = p[len] ? p + len + 1 : NULL;
    }
    return -1;
}

/* The options of jobs (cancel: cancel's, which take no --all, --nodelist,
 * --format, --jobs or --queue) into f. Returns -1 to go on, or an exit
 * status. */
static int filter_options(struct ctl *ctl, int argc, char **argv, int cancel,
                          struct filter *f)
{
    static const struct option longs[] = {
        {"cluster", required_argument, NULL, 'M'},
        {"state", required_argument, NULL, 't'},
        {"user", required_argument, NULL, 'u'},
        {"owner", required_argument, NULL, 'O'},
        {"name", required_argument, NULL, 'n'},
        {"nodelist", required_argument, NULL, 'w'},
        {"format", required_argument, NULL, 'o'},
        {"all", no_argument, NULL, 'a'},
        {"jobs", required_argument, NULL, 'j'},
        {"queue", required_argument, NULL, 'p'},
        {"json", no_argument, NULL, OPT_JSON},
        {NULL, 0, NULL, 0},
    };
    static const struct {
        int c;
        const char *name;
    } cancel_not[] = {
        {'w', "nodelist"}, {'o', "format"}, {'a', "all"},
        {'j', "jobs (the ids are its arguments)"}, {'p', "queue"},
    };
    const size_t n_not = sizeof(cancel_not) / sizeof(*cancel_not);
    const char *cmd = argv[0];
    int c, rc = -1;

    while ((c = getopt_long(argc, argv,
                            cancel ? ":u:t:n:" : ":u:t:n:w:o:aj:p:", longs,
                            NULL)) != -1) {
        for (size_t i = 0; cancel && i < n_not; i++)
            if (c == cancel_not[i].c)
                return ctl_usage(cmd, "cancel takes no --%s",
                                 cancel_not[i].name);
        switch (c) {
        case OPT_JSON: ctl->json = 1; continue;
        case 'a': f->all = 1; continue;
        case 'o': f->format = optarg; continue;
        case 't': rc = check_states(cmd, optarg); f->states = optarg; break;
        case 'M':
            rc = ctl_check_text(cmd, "--cluster", optarg);
            f->cluster = optarg;
            break;
        case 'u':
        case 'O':
            rc = ctl_check_text(cmd, c == 'u' ? "--user" : "--owner", optarg);
            f->owner = optarg;
            break;
        case 'n':
            rc = ctl_check_text(cmd, "--name", optarg);
            f->name = optarg;
            break;
        case 'w':
            rc = ctl_check_text(cmd, "--nodelist", optarg);
            f->nodelist = optarg;
            break;
        case 'j':
        case 'p':
            rc = check_list(cmd, c == 'j' ? "--jobs" : "--queue", optarg);
            *(c == 'j' ? &f->ids : &f->queues) = optarg;
            break;
        default:
            return ctl_opt_error(cmd, c, argv);
        }
        if (rc >= 0)
            return rc;
    }
    return -1;
}

/* GET /v1/jobs with the filters f: every page into *items. Jobs named by
 * id are shown in any state unless --state says otherwise, as squeue -j
 * shows them. */
static int get_jobs(struct ctl *ctl, const struct filter *f, json_t **items)
{
    struct loom_error err = {0};
    struct client_path p;
    const char *path;
    struct client *c;

    client_path_init(&p, "/v1/jobs");
    client_path_query(&p, "cluster", f->cluster);
    client_path_query(&p, "state", f->states          ? f->states
                                   : f->all || f->ids ? NULL
                                                      : ACTIVE_STATES);
    client_path_query(&p, "owner", f->owner);
    client_path_query(&p, "name", f->name);
    client_path_query(&p, "nodelist", f->nodelist);
    client_path_query(&p, "id", f->ids);
    client_path_query(&p, "queue", f->queues);
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_get_all(c, path, items, &err) < 0)
        return ctl_fail("%s", err.message);
    return CTL_OK;
}

int cmd_jobs(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_field *pick[CTL_FIELDS_MAX];
    struct filter f = {.format = JOBS_DEFAULT};
    json_t *items = NULL;
    int rc, n;

    if ((rc = filter_options(ctl, argc, argv, 0, &f)) >= 0)
        return rc;
    if (optind < argc)
        return ctl_usage("jobs", "unexpected argument '%s'", argv[optind]);
    if ((n = ctl_fields_pick("jobs", job_fields, f.format, pick)) < 0)
        return CTL_USAGE;
    if ((rc = get_jobs(ctl, &f, &items)) != CTL_OK)
        return rc;
    rc = ctl_fields_show(ctl, pick, n, items);
    json_decref(items);
    return rc;
}

/* Cancel the jobs that match f, as the server lets this identity: each one
 * named as it goes, then how many. */
static int cancel_matching(struct ctl *ctl, const struct filter *f)
{
    json_t *items = NULL, *j;
    int rc = get_jobs(ctl, f, &items), stop = 0;
    size_t i, done = 0, tried = 0;

    if (rc != CTL_OK)
        return rc;
    json_array_foreach(items, i, j) {
        const char *id = json_string_value(json_object_get(j, "id"));
        const char *name = json_string_value(json_object_get(j, "name"));
        if (!id || stop)
            continue;
        tried++;
        if (ctl_job_action(ctl, ctl_client(ctl), "cancel", id, &stop) !=
            CTL_OK)
            continue;
        done++;
        if (!ctl->json)
            printf("cancelled job %s (%s)\n", id, name ? name : "-");
    }
    json_decref(items);
    if (!ctl->json && !tried)
        printf("no job matches\n");
    else if (!ctl->json)
        printf("cancelled %zu of %zu matching job%s\n", done, tried,
               tried == 1 ? "" : "s");
    return done == tried ? CTL_OK : CTL_FAIL;
}

int cmd_cancel(struct ctl *ctl, int argc, char **argv)
{
    struct filter f = {0};
    int rc, filtered;

    if ((rc = filter_options(ctl, argc, argv, 1, &f)) >= 0)
        return rc;
    filtered = f.owner || f.states || f.name;
    if (!filtered && f.cluster)
        return ctl_usage("cancel", "--cluster only narrows --user, --state "
                         "or --name: give one of them");
    if (!filtered && optind >= argc)
        return ctl_usage("cancel", "give job ids, or filters (--user, "
                         "--state, --name, and --cluster)");
    if (filtered && optind < argc)
        return ctl_usage("cancel", "give job ids or filters, not both");
    if (filtered)
        return cancel_matching(ctl, &f);
    return ctl_job_actions(ctl, "cancel", argv + optind, argc - optind);
}

/* Summary --------------------------------------------------------------- */

/* The node states a summary counts, in its columns' order; the last four
 * are shown only when some node is in them. */
static const struct {
    const char *header;
    const char *states[3];
    int optional;
} columns[] = {
    {"IDLE", {"idle"}, 0},
    {"MIXED", {"mixed"}, 0},
    {"ALLOC", {"allocated"}, 0},
    {"DRAIN", {"draining", "drained"}, 0},
    {"DOWN", {"down"}, 0},
    {"RESV", {"reserved"}, 1},
    {"MAINT", {"maint"}, 1},
    {"PAUSED", {"paused"}, 1},
    {"UNKNOWN", {"unknown"}, 1},
};
#define N_COLUMNS (sizeof(columns) / sizeof(*columns))

/* A node whose free cpus may take jobs: sinfo's idle cpus, else other. */
static int takes_jobs(const char *state)
{
    return state && (!strcmp(state, "idle") || !strcmp(state, "mixed") ||
                     !strcmp(state, "allocated") ||
                     !strcmp(state, "reserved"));
}

/* One cluster's summary from the lists: a new object. */
static json_t *summary_of(const char *cluster, const json_t *queues,
                          const json_t *nodes)
{
    json_t *o = json_pack("{s:s,s:[],s:i,s:{},s:{s:i,s:i,s:i,s:i}}",
                          "cluster", cluster, "queues", "nodes", 0,
                          "states", "cpus", "allocated", 0, "idle", 0,
                          "other", 0, "total", 0);
    json_t *st = json_object_get(o, "states"), *cpus, *v;
    long long a = 0, idle = 0, other = 0, total = 0, n = 0;
    size_t i;

    if (!o)
        return NULL;
    json_array_foreach(queues, i, v)
        if (json_is_string(json_object_get(v, "name")) &&
            !strcmp(cluster, json_string_value(json_object_get(v,
                                                               "cluster"))))
            json_array_append(json_object_get(o, "queues"),
                              json_object_get(v, "name"));
    json_array_foreach(nodes, i, v) {
        const char *c = json_string_value(json_object_get(v, "cluster"));
        const char *s = json_string_value(json_object_get(v, "state"));
        long long cp = json_integer_value(json_object_get(v, "cpus"));
        long long al = json_integer_value(json_object_get(v, "cpus_alloc"));
        if (!c || strcmp(c, cluster) != 0)
            continue;
        n++;
        if (s)
            json_object_set_new(st, s, json_integer(json_integer_value(
                                           json_object_get(st, s)) + 1));
        a += al;
        total += cp;
        if (takes_jobs(s))
            idle += cp - al;
        else
            other += cp - al;
    }
    json_object_set_new(o, "nodes", json_integer(n));
    cpus = json_pack("{s:I,s:I,s:I,s:I}", "allocated", (json_int_t)a, "idle",
                     (json_int_t)idle, "other", (json_int_t)other, "total",
                     (json_int_t)total);
    json_object_set_new(o, "cpus", cpus);
    return o;
}

static int summary_print(const json_t *items)
{
    struct client_table_col cols[N_COLUMNS + 4];
    const char *cells[N_COLUMNS + 4];
    char bufs[N_COLUMNS + 4][256];
    int shown[N_COLUMNS] = {0};
    struct client_table *t;
    const json_t *o;
    size_t i, nc = 0;

    cols[nc++] = (struct client_table_col){"CLUSTER", 0, 0};
    cols[nc++] = (struct client_table_col){"QUEUES", 0, 0};
    cols[nc++] = (struct client_table_col){"NODES", 1, 0};
    for (size_t k = 0; k < N_COLUMNS; k++) {
        json_array_foreach(items, i, o) {
            const json_t *st = json_object_get(o, "states");
            for (size_t s = 0; s < 3 && columns[k].states[s]; s++)
                shown[k] |= json_integer_value(json_object_get(
                                st, columns[k].states[s])) > 0;
        }
        shown[k] |= !columns[k].optional;
        if (shown[k])
            cols[nc++] = (struct client_table_col){columns[k].header, 1, 0};
    }
    cols[nc++] = (struct client_table_col){"CPUS(A/I/O/T)", 1, 0};
    if (!(t = client_table_create(cols, nc)))
        return ctl_fail("out of memory");
    json_array_foreach(items, i, o) {
        const json_t *st = json_object_get(o, "states"), *q;
        const json_t *cpus = json_object_get(o, "cpus");
        size_t c = 0, k, len = 0;
        cells[c++] = json_string_value(json_object_get(o, "cluster"));
        bufs[1][0] = '\0';
        json_array_foreach(json_object_get(o, "queues"), k, q) {
            if (len >= sizeof(bufs[1]))
                break; /* cut: the table ends the cell in '+' */
            len += (size_t)snprintf(bufs[1] + len, sizeof(bufs[1]) - len,
                                    "%s%s", k ? "," : "",
                                    json_string_value(q));
        }
        cells[c++] = bufs[1];
        snprintf(bufs[2], 256, "%lld",
                 (long long)json_integer_value(json_object_get(o, "nodes")));
        cells[c++] = bufs[2];
        for (k = 0; k < N_COLUMNS; k++) {
            long long n = 0;
            if (!shown[k])
                continue;
            for (size_t s = 0; s < 3 && columns[k].states[s]; s++)
                n += json_integer_value(json_object_get(
                    st, columns[k].states[s]));
            snprintf(bufs[c], 256, "%lld", n);
            cells[c] = bufs[c];
            c++;
        }
        snprintf(bufs[c], 256, "%lld/%lld/%lld/%lld",
                 (long long)json_integer_value(json_object_get(cpus,
                                                              "allocated")),
                 (long long)json_integer_value(json_object_get(cpus, "idle")),
                 (long long)json_integer_value(json_object_get(cpus,
                                                              "other")),
                 (long long)json_integer_value(json_object_get(cpus,
                                                              "total")));
        cells[c] = bufs[c];
        if (client_table_add(t, cells) < 0) {
            client_table_destroy(t);
            return ctl_fail("out of memory");
        }
    }
    client_table_print(t, stdout);
    client_table_destroy(t);
    return CTL_OK;
}

/* GET one list of base (with ?cluster= when cluster) into *items. */
static int get_list(struct client *c, const char *base, const char *cluster,
                    json_t **items)
{
    struct loom_error err = {0};
    struct client_path p;
    const char *path;

    client_path_init(&p, base);
    client_path_query(&p, "cluster", cluster);
    if (!(path = client_path_get(&p, &err)) ||
        client_get_all(c, path, items, &err) < 0)
        return ctl_fail("%s", err.message);
    return CTL_OK;
}

int cmd_summary(struct ctl *ctl, int argc, char **argv)
{
    static const struct option longs[] = {
        {"cluster", required_argument, NULL, 'M'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    const char *cluster = NULL;
    json_t *clusters = NULL, *queues = NULL, *nodes = NULL, *items, *v;
    struct client *c;
    size_t i;
    int rc, o;

    while ((o = getopt_long(argc, argv, ":M:", longs, NULL)) != -1) {
        if (o == 'j') {
            ctl->json = 1;
        } else if (o == 'M') {
            if ((rc = ctl_check_text("summary", "--cluster", optarg)) >= 0)
                return rc;
            cluster = optarg;
        } else {
            return ctl_opt_error("summary", o, argv);
        }
    }
    if (optind < argc)
        return ctl_usage("summary", "unexpected argument '%s'",
                         argv[optind]);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if ((rc = get_list(c, "/v1/clusters", NULL, &clusters)) != CTL_OK ||
        (rc = get_list(c, "/v1/queues", cluster, &queues)) != CTL_OK ||
        (rc = get_list(c, "/v1/nodes", cluster, &nodes)) != CTL_OK)
        goto out;
    items = json_array();
    json_array_foreach(clusters, i, v) {
        const char *name = json_string_value(json_object_get(v, "name"));
        if (name && (!cluster || !strcmp(cluster, name)))
            json_array_append_new(items, summary_of(name, queues, nodes));
    }
    if (ctl->json) {
        json_t *wrap = json_pack("{s:o}", "items", items);
        ctl_print_json(wrap);
        json_decref(wrap);
        rc = CTL_OK;
    } else {
        rc = summary_print(items);
        json_decref(items);
    }
out:
    json_decref(clusters);
    json_decref(queues);
    json_decref(nodes);
    return rc;
}
