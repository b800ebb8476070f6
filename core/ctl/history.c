/* history.c - loomctl history and usage: the jobs' history and their use
 * (GET /v1/accounting, GET /v1/usage), like sacct and sreport. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ctl/client.h"
#include "core/ctl/fields.h"
#include "core/ctl/loomctl.h"
#include "core/domain.h"
#include "core/timeutil.h"

static const struct ctl_field history_fields[] = {
    {"jobid", {"JOBID", 0, 0}, "id", CTL_F_TEXT},
    {"name", {"NAME", 0, 0}, "name", CTL_F_TEXT},
    {"account", {"ACCOUNT", 0, 0}, "account", CTL_F_TEXT},
    {"owner", {"OWNER", 0, 0}, "owner", CTL_F_TEXT},
    {"state", {"STATE", 0, 0}, "state", CTL_F_TEXT},
    {"exitcode", {"EXIT", 1, 0}, "exit_code", CTL_F_INT},
    {"cluster", {"CLUSTER", 0, 0}, "cluster", CTL_F_TEXT},
    {"nodelist", {"NODELIST", 0, 200}, "nodelist", CTL_F_TEXT},
    {"submit", {"SUBMIT", 0, 0}, "submit_time", CTL_F_TEXT},
    {"start", {"START", 0, 0}, "start_time", CTL_F_TEXT},
    {"end", {"END", 0, 0}, "end_time", CTL_F_TEXT},
    {"elapsed", {"ELAPSED", 1, 0}, "elapsed_s", CTL_F_DURATION},
    {"cpus", {"CPUS", 1, 0}, "cpus", CTL_F_INT},
    {"cpu_s", {"CPU_S", 1, 0}, "cpu_seconds", CTL_F_INT},
    {"reason", {"REASON", 0, 0}, "reason", CTL_F_TEXT},
    {NULL, {NULL, 0, 0}, NULL, 0},
};
#define HISTORY_DEFAULT \
    "jobid,name,account,owner,state,exitcode,cluster,nodelist,start," \
    "elapsed,cpu_s"

static const struct ctl_field usage_fields[] = {
    {"cluster", {"CLUSTER", 0, 0}, "cluster", CTL_F_TEXT},
    {"account", {"ACCOUNT", 0, 0}, "account", CTL_F_TEXT},
    {"owner", {"OWNER", 0, 0}, "owner", CTL_F_TEXT},
    {"jobs", {"JOBS", 1, 0}, "jobs", CTL_F_INT},
    {"cpu_hours", {"CPU_HOURS", 1, 0}, "cpu_hours", CTL_F_HOURS},
    {"cpu_s", {"CPU_S", 1, 0}, "cpu_seconds", CTL_F_INT},
    {NULL, {NULL, 0, 0}, NULL, 0},
};
#define USAGE_DEFAULT "cluster,account,owner,jobs,cpu_hours"

/* The options both commands take, into the query of p; letters of allowed
 * beyond start, end, account, cluster, format and json: u (--user) and s
 * (--state). Returns -1 to go on, or an exit status. */
static int options(struct ctl *ctl, int argc, char **argv,
                   const char *allowed, struct client_path *p,
                   const char **format)
{
    static const struct option longs[] = {
        {"start", required_argument, NULL, 'S'},
        {"end", required_argument, NULL, 'E'},
        {"account", required_argument, NULL, 'A'},
        {"user", required_argument, NULL, 'u'},
        {"cluster", required_argument, NULL, 'C'},
        {"state", required_argument, NULL, 's'},
        {"format", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *v[6] = {NULL}; /* S E A u C s */
    static const char letters[] = "SEAuCs";
    static const char *const keys[] = {"start", "end", "account", "owner",
                                       "cluster", "state"};
    time_t t[2] = {0, 0};
    int c, rc;

    while ((c = getopt_long(argc, argv, ":u:", longs, NULL)) != -1) {
        const char *at = c > 0 ? strchr(letters, c) : NULL;
        if (c == 'j') {
            ctl->json = 1;
            continue;
        }
        if (c == 'o') {
            *format = optarg;
            continue;
        }
        if (!at)
            return ctl_opt_error(cmd, c, argv);
        if (strchr("us", c) && !strchr(allowed, c))
            return ctl_usage(cmd, "%s takes no --%s", cmd,
                             c == 'u' ? "user" : "state");
        if (c == 'S' || c == 'E') {
            if (time_parse_when(optarg, &t[c == 'E']) < 0)
                return ctl_usage(cmd, "--%s takes an RFC 3339 time such as "
                                 "2026-11-22T03:00:00Z, or seconds since "
                                 "the epoch, not '%s'",
                                 c == 'S' ? "start" : "end", optarg);
        } else if (c == 's') {
            if ((rc = ctl_check_name(cmd, "--state", &domain_job_states,
                                     optarg)) >= 0)
                return rc;
        } else if ((rc = ctl_check_text(cmd, c == 'A'   ? "--account"
                                             : c == 'u' ? "--user"
                                                        : "--cluster",
                                        optarg)) >= 0) {
            return rc;
        }
        v[at - letters] = optarg;
    }
    if (optind < argc)
        return ctl_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (v[0] && v[1] && t[1] <= t[0])
        return ctl_usage(cmd, "--end (%s) must come after --start (%s)",
                         v[1], v[0]);
    for (int k = 0; k < 6; k++)
        client_path_query(p, keys[k], v[k]);
    return -1;
}

int cmd_history(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_field *pick[CTL_FIELDS_MAX];
    const char *format = HISTORY_DEFAULT, *path;
    struct loom_error err = {0};
    struct client_path p;
    struct client *c;
    json_t *items = NULL;
    int rc, n;

    client_path_init(&p, "/v1/accounting");
    if ((rc = options(ctl, argc, argv, "us", &p, &format)) >= 0)
        return rc;
    if ((n = ctl_fields_pick("history", history_fields, format, pick)) < 0)
        return CTL_USAGE;
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_get_all(c, path, &items, &err) < 0)
        return ctl_fail("%s", err.message);
    rc = ctl_fields_show(ctl, pick, n, items);
    json_decref(items);
    return rc;
}

/* The usage's rows as a table shows them: each account's, then its
 * owners' (with the account's cluster and account). A new array. */
static json_t *usage_rows(const json_t *items)
{
    json_t *rows = json_array(), *o, *u;
    size_t i, k;

    json_array_foreach(items, i, o) {
        json_array_append(rows, (json_t *)o);
        json_array_foreach(json_object_get(o, "users"), k, u) {
            json_t *r = json_deep_copy(u);
            json_object_set(r, "cluster", json_object_get(o, "cluster"));
            json_object_set(r, "account", json_object_get(o, "account"));
            json_array_append_new(rows, r);
        }
    }
    return rows;
}

int cmd_usage(struct ctl *ctl, int argc, char **argv)
{
    const struct ctl_field *pick[CTL_FIELDS_MAX];
    const char *format = USAGE_DEFAULT, *path;
    struct loom_error err = {0};
    struct client_path p;
    struct client *c;
    json_t *reply = NULL, *rows;
    int rc, n;

    client_path_init(&p, "/v1/usage");
    if ((rc = options(ctl, argc, argv, "", &p, &format)) >= 0)
        return rc;
    if ((n = ctl_fields_pick("usage", usage_fields, format, pick)) < 0)
        return CTL_USAGE;
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, "GET", path, NULL, NULL, NULL, &reply, &err) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json) {
        ctl_print_json(reply);
        rc = CTL_OK;
    } else if (!(rows = usage_rows(json_object_get(reply, "items")))) {
        rc = ctl_fail("out of memory");
    } else {
        rc = ctl_fields_print(pick, n, rows, time(NULL));
        json_decref(rows);
    }
    json_decref(reply);
    return rc;
}
