/* cmd.c - loomctl's lists, show, status, job/node/runtime control. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/ctl/table.h"
#include "core/domain.h"
#include "core/jsonx.h"

typedef int print_f(FILE *out, const json_t *items, time_t now,
                    struct loom_error *err);

int ctl_json_only(struct ctl *ctl, const char *cmd, int argc, char **argv)
{
    static const struct option longs[] = {
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c != 'j')
            return ctl_opt_error(cmd ? cmd : argv[0], c, argv);
        ctl->json = 1;
    }
    return -1;
}

/* GET one object and print it as key: value lines (or JSON); round_ms:
 * times in milliseconds rounded for the reader. */
static int show_path(struct ctl *ctl, const struct client_path *p,
                     int round_ms)
{
    struct loom_error err = { 0 };
    const char *path = client_path_get(p, &err);
    struct client *c;
    json_t *reply;

    if (!path)
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, "GET", path, NULL, NULL, NULL, &reply, &err) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json) {
        ctl_print_json(reply);
    } else if (reply) {
        if (round_ms && json_is_object(reply))
            client_table_round_ms(reply, 0);
        client_table_object(stdout, reply);
    }
    json_decref(reply);
    return CTL_OK;
}

/* Send one change; print the answer with --json. */
static int change(struct ctl *ctl, const char *method,
                  const struct client_path *p, const json_t *body)
{
    struct loom_error err = { 0 };
    const char *path = client_path_get(p, &err);
    struct client *c;
    json_t *reply;

    if (!path)
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, method, path, body, NULL, NULL, &reply, &err) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json)
        ctl_print_json(reply);
    json_decref(reply);
    return CTL_OK;
}

/* Lists ------------------------------------------------------------------ */

static int run_list(struct ctl *ctl, const struct client_path *p,
                    print_f *print)
{
    struct loom_error err = { 0 };
    const char *path = client_path_get(p, &err);
    json_t *items = NULL, *wrap;
    struct client *c;
    int rc = CTL_OK;

    if (!path)
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_get_all(c, path, &items, &err) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json) {
        wrap = json_pack("{s:O}", "items", items);
        ctl_print_json(wrap);
        json_decref(wrap);
    } else if (print(stdout, items, time(NULL), &err) < 0) {
        rc = ctl_fail("%s", err.message);
    }
    json_decref(items);
    return rc;
}

/* Parse the filters a list allows (letters of allowed: C cluster, s state
 * of the domain states, o owner, F fabric: the view of the queues, which
 * sets *fabric) into p's query. Returns -1 to go on, or an exit status. */
static int list_options(struct ctl *ctl, int argc, char **argv,
                        const char *allowed, const struct domain *states,
                        struct client_path *p, int *fabric)
{
    static const struct option longs[] = {
        { "cluster", required_argument, NULL, 'C' },
        { "state", required_argument, NULL, 's' },
        { "owner", required_argument, NULL, 'o' },
        { "fabric", no_argument, NULL, 'F' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    const char *cluster = NULL, *state = NULL, *owner = NULL;
    int c, rc;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'j') {
            ctl->json = 1;
            continue;
        }
        if (c == '?' || c == ':')
            return ctl_opt_error(argv[0], c, argv);
        if (!strchr(allowed, c))
            return ctl_usage(argv[0], "%s takes no --%s", argv[0],
                             c == 'C' ? "cluster" : c == 's' ? "state"
                             : c == 'F' ? "fabric" : "owner");
        if (c == 'F') {
            *fabric = 1;
            continue;
        }
        if (c == 's' && states == &domain_node_states &&
            !strcmp(optarg, "resv"))
            optarg = "reserved"; /* as the table shows it, like sinfo */
        if (c == 's')
            rc = ctl_check_name(argv[0], "--state", states, optarg);
        else
            rc = ctl_check_text(argv[0], c == 'C' ? "--cluster" : "--owner",
                                optarg);
        if (rc >= 0)
            return rc;
        switch (c) {
        case 'C': cluster = optarg; break;
        case 's': state = optarg; break;
        default: owner = optarg; break;
        }
    }
    if (optind < argc)
        return ctl_usage(argv[0], "unexpected argument '%s'", argv[optind]);
    client_path_query(p, "cluster", cluster);
    client_path_query(p, "state", state);
    client_path_query(p, "owner", owner);
    if (fabric && *fabric)
        client_path_query(p, "view", "fabric");
    return -1;
}

static int list(struct ctl *ctl, int argc, char **argv, const char *base,
                const char *allowed, const struct domain *states,
                print_f *print)
{
    struct client_path p;
    int rc;

    client_path_init(&p, base);
    rc = list_options(ctl, argc, argv, allowed, states, &p, NULL);
    return rc >= 0 ? rc : run_list(ctl, &p, print);
}

int cmd_clusters(struct ctl *ctl, int argc, char **argv)
{
    return list(ctl, argc, argv, "/v1/clusters", "", NULL,
                client_table_clusters);
}

int cmd_nodes(struct ctl *ctl, int argc, char **argv)
{
    return list(ctl, argc, argv, "/v1/nodes", "Cs", &domain_node_states,
                client_table_nodes);
}

int cmd_queues(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    int fabric = 0, rc;

    client_path_init(&p, "/v1/queues");
    rc = list_options(ctl, argc, argv, "CF", NULL, &p, &fabric);
    if (rc >= 0)
        return rc;
    return run_list(ctl, &p, fabric ? client_table_partitions
                                    : client_table_queues);
}

int cmd_reservations(struct ctl *ctl, int argc, char **argv)
{
    return list(ctl, argc, argv, "/v1/reservations", "Cso",
                &domain_resv_states, client_table_reservations);
}

/* One object ------------------------------------------------------------- */

static const struct {
    const char *kind, *base;
    int pair; /* the id is CLUSTER/NAME */
    int loom_id; /* the id is one of Loom's numbers */
} kinds[] = {
    { "job", "/v1/jobs", 0, 1 },
    { "node", "/v1/nodes", 1, 0 },
    { "queue", "/v1/queues", 1, 0 },
    { "cluster", "/v1/clusters", 0, 0 },
    { "reservation", "/v1/reservations", 0, 1 },
    { "maintenance", "/v1/maintenance", 0, 1 },
};

int ctl_pair_segments(struct client_path *p, const char *id)
{
    const char *slash = strchr(id, '/');
    char cluster[256];

    if (!slash || slash == id || !slash[1] || strchr(slash + 1, '/') ||
        (size_t)(slash - id) >= sizeof(cluster))
        return -1;
    memcpy(cluster, id, (size_t)(slash - id));
    cluster[slash - id] = '\0';
    client_path_segment(p, cluster);
    client_path_segment(p, slash + 1);
    return 0;
}

int cmd_show(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    int rc = ctl_json_only(ctl, NULL, argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 2)
        return ctl_usage("show", "give a kind and an id");
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const char *id = argv[optind + 1];

        if (strcmp(argv[optind], kinds[i].kind) != 0)
            continue;
        client_path_init(&p, kinds[i].base);
        if (!*id)
            return ctl_usage("show", "the id is empty");
        if (kinds[i].loom_id && !strcmp(kinds[i].kind, "job")) {
            if ((rc = ctl_check_job("show", id)) >= 0)
                return rc;
        } else if (kinds[i].loom_id &&
                   (rc = ctl_check_id("show",
                                      !strcmp(kinds[i].kind, "maintenance")
                                          ? "maintenance request"
                                          : kinds[i].kind, id)) >= 0) {
            return rc;
        }
        if (!kinds[i].pair)
            client_path_segment(&p, id);
        else if (ctl_pair_segments(&p, id) < 0)
            return ctl_usage("show", "a %s is named CLUSTER/NAME, not '%s'",
                             kinds[i].kind, id);
        return show_path(ctl, &p, 0);
    }
    return ctl_usage("show", "unknown kind '%s'", argv[optind]);
}

int cmd_status(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    int rc = ctl_json_only(ctl, NULL, argc, argv);

    if (rc >= 0)
        return rc;
    if (optind < argc)
        return ctl_usage("status", "unexpected argument '%s'", argv[optind]);
    client_path_init(&p, "/v1/runtime");
    return show_path(ctl, &p, 1);
}

/* Job and node control ----------------------------------------------------- */

int ctl_job_action(struct ctl *ctl, struct client *c, const char *action,
                   const char *id, int *stop)
{
    struct loom_error err = { 0 };
    int cancel = strcmp(action, "cancel") == 0;
    json_t *body = cancel ? NULL : json_object(), *reply;
    struct client_path p;
    const char *path;
    long status = 0;
    int rc;

    client_path_init(&p, "/v1/jobs");
    client_path_segment(&p, id);
    if (!cancel)
        client_path_segment(&p, action);
    path = client_path_get(&p, &err);
    rc = path ? client_request(c, cancel ? "DELETE" : "POST", path, body,
                               NULL, &status, &reply, &err)
              : -1;
    json_decref(body);
    if (rc < 0) {
        /* Without an answer, the next job will not fare better. */
        *stop = status == 0;
        if (status == 0 || strstr(err.message, id))
            return ctl_fail("%s", err.message);
        return ctl_fail("job %s: %s", id, err.message);
    }
    if (ctl->json)
        ctl_print_json(reply);
    json_decref(reply);
    return CTL_OK;
}

int ctl_job_actions(struct ctl *ctl, const char *action, char **ids, int n)
{
    int rc, stop = 0, failed = 0;
    struct client *c;

    for (int i = 0; i < n; i++)
        if ((rc = ctl_check_job(action, ids[i])) >= 0)
            return rc;
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    for (int i = 0; i < n && !stop; i++)
        failed |= ctl_job_action(ctl, c, action, ids[i], &stop) != CTL_OK;
    return failed ? CTL_FAIL : CTL_OK;
}

int cmd_job_action(struct ctl *ctl, int argc, char **argv)
{
    int rc = ctl_json_only(ctl, NULL, argc, argv);

    if (rc >= 0)
        return rc;
    if (optind >= argc)
        return ctl_usage(argv[0], "give at least one job id");
    return ctl_job_actions(ctl, argv[0], argv + optind, argc - optind);
}

/* --reason, --json, and (cluster not NULL) --cluster. Returns -1 to go
 * on, or an exit status. */
static int node_state_options(struct ctl *ctl, int argc, char **argv,
                              const char **reason, const char **cluster)
{
    static const struct option longs[] = {
        { "reason", required_argument, NULL, 'r' },
        { "cluster", required_argument, NULL, 'C' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'r')
            *reason = optarg;
        else if (c == 'C' && cluster)
            *cluster = optarg;
        else if (c == 'j')
            ctl->json = 1;
        else if (c == 'C')
            return ctl_usage(argv[0], "%s takes no --cluster", argv[0]);
        else
            return ctl_opt_error(argv[0], c, argv);
    }
    return -1;
}

/* PUT p/state {"state": state, "reason": reason}; with show, the node
 * as the answer shows it printed as "CLUSTER/NAME STATE" (with --json:
 * the whole answer). */
static int put_node_state(struct ctl *ctl, struct client_path *p,
                          const char *state, const char *reason, int show)
{
    struct loom_error err = { 0 };
    json_t *body, *reply = NULL;
    const char *path;
    struct client *c;

    client_path_segment(p, "state");
    body = json_pack("{s:s}", "state", state);
    if (!body || (reason && json_object_set_new(body, "reason",
                                                json_string(reason)) < 0)) {
        json_decref(body);
        return ctl_fail("the reason is not UTF-8 text");
    }
    if (!(path = client_path_get(p, &err)) || !(c = ctl_client(ctl)) ||
        client_request(c, "PUT", path, body, NULL, NULL, &reply, &err) < 0) {
        json_decref(body);
        return err.message[0] ? ctl_fail("%s", err.message) : CTL_FAIL;
    }
    json_decref(body);
    if (ctl->json)
        ctl_print_json(reply);
    else if (show)
        printf("%s/%s %s\n", jx_str(reply, "cluster", "?"),
               jx_str(reply, "name", "?"), jx_str(reply, "state", "?"));
    json_decref(reply);
    return CTL_OK;
}

int cmd_node_state(struct ctl *ctl, int argc, char **argv)
{
    const char *reason = NULL, *state;
    struct client_path p;
    int rc = node_state_options(ctl, argc, argv, &reason, NULL);

    if (rc >= 0)
        return rc;
    if (argc - optind != 2)
        return ctl_usage("node-state", "give a node and a state");
    state = argv[optind + 1];
    if ((rc = ctl_check_name("node-state", "the state",
                             &domain_node_state_set, state)) >= 0)
        return rc;
    client_path_init(&p, "/v1/nodes");
    if (ctl_pair_segments(&p, argv[optind]) < 0)
        return ctl_usage("node-state", "a node is named CLUSTER/NAME, not "
                         "'%s'", argv[optind]);
    return put_node_state(ctl, &p, state, reason, 0);
}

/* pause NODE and unpause NODE: NODE is CLUSTER/NAME, or NAME with
 * --cluster (domain_node_add, as loomd reads a node). */
int cmd_pause(struct ctl *ctl, int argc, char **argv)
{
    const char *reason = NULL, *cluster = NULL;
    int pause = !strcmp(argv[0], "pause");
    struct strv names = { 0 };
    struct loom_error err;
    struct client_path p;
    char *cl = NULL;
    int rc = node_state_options(ctl, argc, argv, &reason, &cluster);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1)
        return ctl_usage(argv[0], "give one node");
    if (!pause && reason)
        return ctl_usage(argv[0], "unpause takes no --reason");
    if (cluster && (rc = ctl_check_text(argv[0], "--cluster", cluster)) >= 0)
        return rc;
    if (cluster && !(cl = strdup(cluster)))
        return ctl_fail("out of memory");
    if (domain_node_add(argv[optind], &cl, &names, "NODE", &err) < 0) {
        free(cl);
        strv_fini(&names);
        return ctl_usage(argv[0], "%s", err.message);
    }
    client_path_init(&p, "/v1/nodes");
    client_path_segment(&p, cl);
    client_path_segment(&p, names.v[0]);
    free(cl);
    strv_fini(&names);
    return put_node_state(ctl, &p, pause ? "pause" : "resume", reason, 1);
}

int cmd_runtime(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    const char *what, *on;
    json_t *body;
    int rc = ctl_json_only(ctl, NULL, argc, argv), n;

    if (rc >= 0)
        return rc;
    n = argc - optind;
    what = n > 0 ? argv[optind] : "";
    on = n > 1 ? argv[optind + 1] : "";
    if (n == 1 && (!strcmp(what, "reload") || !strcmp(what, "shutdown")))
        body = json_object();
    else if (n == 2 && !strcmp(what, "scheduler") &&
             (!strcmp(on, "on") || !strcmp(on, "off")))
        body = json_pack("{s:b}", "enabled", !strcmp(on, "on"));
    else
        return ctl_usage("runtime", "give reload, shutdown, or scheduler "
                         "on|off");
    client_path_init(&p, "/v1/runtime");
    client_path_segment(&p, what);
    rc = change(ctl, "POST", &p, body);
    json_decref(body);
    return rc;
}
