/* resv.c - loomctl reserve and unreserve: create and cancel
 * advance reservations. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/jsonx.h"

/* "n1,n2" of CLUSTER as node ids into a; -1 on an empty name. */
static int node_ids(json_t *a, const char *cluster, const char *list)
{
    const char *p = list;

    while (*p) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        char id[512];
        if (!n || n + strlen(cluster) + 2 > sizeof(id))
            return -1;
        snprintf(id, sizeof(id), "%s/%.*s", cluster, (int)n, p);
        json_array_append_new(a, json_string(id));
        p += n + (comma ? 1 : 0);
    }
    return 0;
}

static int post(struct ctl *ctl, const char *method, const char *path,
                const json_t *body)
{
    struct loom_error err = { 0 };
    struct client *c = ctl_client(ctl);
    json_t *r = NULL;

    if (!c)
        return CTL_FAIL;
    if (client_request(c, method, path, body, NULL, NULL, &r, &err) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json) {
        ctl_print_json(r);
    } else {
        json_t *nodes = json_object_get(r, "nodes"), *v;
        size_t i;
        printf("%s %s %s %s ", jx_str(r, "id", "?"), jx_str(r, "state", "?"),
               jx_str(r, "start", "?"), jx_str(r, "end", "?"));
        json_array_foreach(nodes, i, v)
            printf("%s%s", i ? "," : "", json_string_value(v));
        printf("\n");
    }
    json_decref(r);
    return CTL_OK;
}

int cmd_reserve(struct ctl *ctl, int argc, char **argv)
{
    static const struct option longs[] = {
        { "nodes", required_argument, NULL, 'n' },
        { "count", required_argument, NULL, 'N' },
        { "feature", required_argument, NULL, 'f' },
        { "start", required_argument, NULL, 's' },
        { "not-before", required_argument, NULL, 'b' },
        { "deadline", required_argument, NULL, 'd' },
        { "duration", required_argument, NULL, 't' },
        { "reason", required_argument, NULL, 'r' },
        { "maintenance", no_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    json_t *body = json_object(), *features = json_array();
    const char *nodes = NULL;
    char *end;
    int c, rc;
    long v;

    if (!body || !features) {
        json_decref(body);
        json_decref(features);
        return ctl_fail("out of memory");
    }
    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        switch (c) {
        case 'n': nodes = optarg; break;
        case 'f': json_array_append_new(features, json_string(optarg)); break;
        case 's': json_object_set_new(body, "start", json_string(optarg)); break;
        case 'b': json_object_set_new(body, "not_before", json_string(optarg)); break;
        case 'd': json_object_set_new(body, "deadline", json_string(optarg)); break;
        case 'r': json_object_set_new(body, "reason", json_string(optarg)); break;
        case 'm': json_object_set_new(body, "purpose", json_string("maintenance")); break;
        case 'j': ctl->json = 1; break;
        case 'N':
        case 't':
            v = strtol(optarg, &end, 10);
            if (*end || v <= 0) {
                json_decref(body);
                json_decref(features);
                return ctl_usage("reserve", "%s takes a positive number, "
                                 "not '%s'", c == 'N' ? "--count"
                                                      : "--duration", optarg);
            }
            json_object_set_new(body, c == 'N' ? "count" : "duration_s",
                                json_integer(v));
            break;
        default:
            json_decref(body);
            json_decref(features);
            return ctl_opt_error("reserve", c, argv);
        }
    }
    if (argc - optind != 1 || !!nodes == !!json_object_get(body, "count")) {
        json_decref(body);
        json_decref(features);
        return ctl_usage("reserve", "give a cluster and --nodes or --count");
    }
    json_object_set_new(body, "cluster", json_string(argv[optind]));
    if (json_array_size(features))
        json_object_set(body, "features", features);
    if (nodes) {
        json_t *ids = json_array();
        if (!ids || node_ids(ids, argv[optind], nodes) < 0) {
            json_decref(ids);
            json_decref(body);
            json_decref(features);
            return ctl_usage("reserve", "--nodes takes names separated by "
                             "commas, not '%s'", nodes);
        }
        json_object_set_new(body, "nodes", ids);
    }
    rc = post(ctl, "POST", "/v1/reservations", body);
    json_decref(body);
    json_decref(features);
    return rc;
}

int cmd_unreserve(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    struct loom_error err = { 0 };
    const char *path;

    if (argc != 2 || !*argv[1] || argv[1][0] == '-')
        return ctl_usage("unreserve", "give one reservation id");
    client_path_init(&p, "/v1/reservations");
    client_path_segment(&p, argv[1]);
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    return post(ctl, "DELETE", path, NULL);
}
