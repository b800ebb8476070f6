/* maint.c - loomctl maintenance: list, request and cancel
 * maintenance requests. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/talk.h"
#include "core/limits.h"
#include "core/timeutil.h"

static int maint_row(struct client_table *t, const json_t *m)
{
    char id[32], action[128], st[32], owner[256], cl[256], start[64],
        end[64], why[512], nodes[1024] = "";
    const char *cells[9];
    const json_t *v;
    size_t i, len = 0;

    json_array_foreach(json_object_get(m, "nodes"), i, v) {
        const char *n = json_string_value(v), *slash = n ? strchr(n, '/')
                                                        : NULL;
        int k = snprintf(nodes + len, sizeof(nodes) - len, "%s%s",
                         i ? "," : "", slash ? slash + 1 : n ? n : "?");
        if (k < 0 || (size_t)k >= sizeof(nodes) - len)
            break;
        len += (size_t)k;
    }
    cells[0] = ctlm_member(m, "id", id, sizeof(id));
    cells[1] = ctlm_member(m, "action", action, sizeof(action));
    cells[2] = ctlm_member(m, "state", st, sizeof(st));
    cells[3] = ctlm_member(m, "owner", owner, sizeof(owner));
    cells[4] = ctlm_member(m, "cluster", cl, sizeof(cl));
    cells[5] = nodes;
    cells[6] = ctlm_member(m, "start", start, sizeof(start));
    cells[7] = ctlm_member(m, "end", end, sizeof(end));
    cells[8] = ctlm_member(m, "reason", why, sizeof(why));
    return client_table_add(t, cells);
}

static int maint_list(struct ctl *ctl, int argc, char **argv)
{
    static const struct client_table_col cols[] = {
        { "ID", 1, 0 },      { "ACTION", 0, 0 }, { "STATE", 0, 0 },
        { "OWNER", 0, 0 },   { "CLUSTER", 0, 0 }, { "NODES", 0, 0 },
        { "START", 0, 0 },   { "END", 0, 0 },    { "REASON", 0, 60 },
    };
    struct client_path p;
    int rc;

    client_path_init(&p, "/v1/maintenance");
    rc = ctlm_filters(ctl, "maintenance", "Cs", argc, argv, &p);
    return rc >= 0 ? rc : ctlm_show(ctl, &p, 0, cols, 9, maint_row);
}

/* One option of maintenance request into body or window. Returns -1 to go
 * on, or an exit status. */
static int request_option(struct ctl *ctl, json_t *body, json_t *window,
                          int c, char **argv)
{
    const char *key;
    long v;
    time_t t;

    switch (c) {
    case 'a': key = "action"; break;
    case 'r': key = "reason"; break;
    case 'C': key = "cluster"; break;
    case 'f': json_object_set_new(body, "force", json_true()); return -1;
    case 'j': ctl->json = 1; return -1;
    case 'N':
    case 'd':
        if (ctl_long(optarg, 1, c == 'N' ? LOOM_COUNT_MAX : LOOM_WINDOW_MAX_S,
                     &v) < 0)
            return ctl_usage("maintenance", "%s takes a whole number from 1 "
                             "to %ld, not '%s'",
                             c == 'N' ? "--count" : "--duration",
                             c == 'N' ? LOOM_COUNT_MAX : LOOM_WINDOW_MAX_S,
                             optarg);
        json_object_set_new(c == 'N' ? body : window,
                            c == 'N' ? "count" : "duration_s",
                            json_integer(v));
        return -1;
    case 's':
    case 'b':
    case 'e':
        key = c == 's' ? "start" : c == 'b' ? "not_before" : "deadline";
        if (time_parse(optarg, &t) < 0)
            return ctl_usage("maintenance", "--%s takes an RFC 3339 time "
                             "such as 2026-11-22T03:00:00Z, not '%s'",
                             c == 'b' ? "not-before" : key, optarg);
        json_object_set_new(window, key, json_string(optarg));
        return -1;
    default:
        return ctl_opt_error("maintenance", c, argv);
    }
    if ((c != 'r' && !*optarg) ||
        json_object_set_new(body, key, json_string(optarg)) < 0)
        return ctl_usage("maintenance", "--%s needs %sUTF-8 text", key,
                         c != 'r' ? "non-empty " : "");
    return -1;
}

/* The nodes of a request (NODE... or --count with --cluster), the window's
 * kind and --action. Returns -1 to go on, or an exit status. */
static int request_check(json_t *body, const json_t *window, int n,
                         char **nodes)
{
    int count = json_object_get(body, "count") != NULL;
    int cluster = json_object_get(body, "cluster") != NULL;
    json_t *ids;

    if (!json_object_get(body, "action"))
        return ctl_usage("maintenance", "give --action (node-off, or an "
                         "action of loom.conf)");
    if (json_object_get(window, "start") &&
        (json_object_get(window, "not_before") ||
         json_object_get(window, "deadline")))
        return ctl_usage("maintenance", "give --start for a fixed window, "
                         "or --not-before and --deadline, not both");
    if (!n == !count || (count && !cluster))
        return ctl_usage("maintenance", "give the nodes, or --count N with "
                         "--cluster C");
    if (count)
        return -1;
    if (!(ids = json_array()))
        return ctl_fail("out of memory");
    json_object_set_new(body, "nodes", ids);
    for (int i = 0; i < n; i++) {
        if (!cluster && !ctlm_is_node(nodes[i]))
            return ctl_usage("maintenance", "a node is named CLUSTER/NAME, "
                             "or NAME with --cluster; not '%s'", nodes[i]);
        if (json_array_append_new(ids, json_string(nodes[i])) < 0)
            return ctl_fail("out of memory");
    }
    return -1;
}

static int maint_request(struct ctl *ctl, int argc, char **argv)
{
    static const struct option longs[] = {
        { "action", required_argument, NULL, 'a' },
        { "reason", required_argument, NULL, 'r' },
        { "duration", required_argument, NULL, 'd' },
        { "start", required_argument, NULL, 's' },
        { "not-before", required_argument, NULL, 'b' },
        { "deadline", required_argument, NULL, 'e' },
        { "count", required_argument, NULL, 'N' },
        { "cluster", required_argument, NULL, 'C' },
        { "force", no_argument, NULL, 'f' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    json_t *body = json_object(), *window = json_object(), *reply = NULL;
    struct client_path p;
    int c, rc = -1;

    if (!body || !window) {
        json_decref(body);
        json_decref(window);
        return ctl_fail("out of memory");
    }
    while (rc < 0 && (c = getopt_long(argc, argv, ":", longs, NULL)) != -1)
        rc = request_option(ctl, body, window, c, argv);
    if (rc < 0)
        rc = request_check(body, window, argc - optind, argv + optind);
    if (rc < 0) {
        json_object_set(body, "window", window);
        client_path_init(&p, "/v1/maintenance");
        rc = ctlm_send_req(ctl, "POST", &p, body, &reply);
    }
    if (rc == CTL_OK && ctl->json)
        ctl_print_json(reply);
    else if (rc == CTL_OK && reply)
        client_table_object(stdout, reply);
    json_decref(reply);
    json_decref(window);
    json_decref(body);
    return rc;
}

static int maint_cancel(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    json_t *reply;
    int rc = ctl_json_only(ctl, "maintenance", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1)
        return ctl_usage("maintenance", "give one request id");
    if ((rc = ctl_check_id("maintenance", "maintenance request",
                           argv[optind])) >= 0)
        return rc;
    client_path_init(&p, "/v1/maintenance");
    client_path_segment(&p, argv[optind]);
    rc = ctlm_send_req(ctl, "DELETE", &p, NULL, &reply);
    if (rc == CTL_OK && ctl->json) {
        ctl_print_json(reply);
    } else if (rc == CTL_OK && json_is_object(reply)) {
        char id[32], st[32];
        printf("%s %s\n", ctlm_member(reply, "id", id, sizeof(id)),
               ctlm_member(reply, "state", st, sizeof(st)));
    }
    json_decref(reply);
    return rc;
}

int cmd_maintenance(struct ctl *ctl, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";

    if (argc < 2 || sub[0] == '-')
        return maint_list(ctl, argc, argv);
    if (!strcmp(sub, "request"))
        return maint_request(ctl, argc - 1, argv + 1);
    if (!strcmp(sub, "cancel"))
        return maint_cancel(ctl, argc - 1, argv + 1);
    if (!strcmp(sub, "list"))
        return maint_list(ctl, argc - 1, argv + 1);
    return ctl_usage("maintenance", "give list, request or cancel");
}
