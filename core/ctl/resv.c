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
#include "core/limits.h"
#include "core/timeutil.h"

/* "n1,n2" (names of the cluster, or node ids) into a; -1 on an empty
 * one or one that is not UTF-8. */
static int node_list(json_t *a, const char *list)
{
    const char *p = list;

    do {
        size_t n = strcspn(p, ",");
        if (!n || json_array_append_new(a, json_stringn(p, n)) < 0)
            return -1;
        p += n;
    } while (*p++);
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

/* One option of reserve into body or features. Returns -1 to go on, or
 * the exit status of a usage error. */
static int reserve_option(json_t *body, json_t *features, int c, char **argv)
{
    const char *key = c == 's'   ? "start"
                      : c == 'b' ? "not_before"
                      : c == 'd' ? "deadline"
                                 : "reason";
    time_t t;
    long v;

    switch (c) {
    case 'f':
        if (!*optarg ||
            json_array_size(features) == LOOM_JOB_FEATURES_MAX ||
            json_array_append_new(features, json_string(optarg)) < 0)
            return ctl_usage("reserve", "--feature takes a non-empty name "
                             "(at most %d of them)", LOOM_JOB_FEATURES_MAX);
        return -1;
    case 'm':
        json_object_set_new(body, "purpose", json_string("maintenance"));
        return -1;
    case 'N':
    case 't':
        if (ctl_long(optarg, 1, c == 'N' ? LOOM_COUNT_MAX : LOOM_WINDOW_MAX_S,
                     &v) < 0)
            return ctl_usage("reserve", "%s takes a whole number from 1 to "
                             "%ld, not '%s'",
                             c == 'N' ? "--count" : "--duration",
                             c == 'N' ? LOOM_COUNT_MAX : LOOM_WINDOW_MAX_S,
                             optarg);
        json_object_set_new(body, c == 'N' ? "count" : "duration_s",
                            json_integer(v));
        return -1;
    case 's':
    case 'b':
    case 'd':
        if (time_parse(optarg, &t) < 0)
            return ctl_usage("reserve", "--%s takes an RFC 3339 time such "
                             "as 2026-11-22T03:00:00Z, not '%s'",
                             c == 'b' ? "not-before" : key, optarg);
        /* fall through */
    case 'r':
        if (json_object_set_new(body, key, json_string(optarg)) < 0)
            return ctl_usage("reserve", "--%s is not UTF-8 text", key);
        return -1;
    default:
        return ctl_opt_error("reserve", c, argv);
    }
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
    int c, rc = -1;

    if (!body || !features) {
        json_decref(body);
        json_decref(features);
        return ctl_fail("out of memory");
    }
    while (rc < 0 && (c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'n')
            nodes = optarg;
        else if (c == 'j')
            ctl->json = 1;
        else
            rc = reserve_option(body, features, c, argv);
    }
    if (rc >= 0) {
        json_decref(body);
        json_decref(features);
        return rc;
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
        if (!ids || node_list(ids, nodes) < 0) {
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

    if (argc != 2)
        return ctl_usage("unreserve", "give one reservation id");
    if (ctl_check_id("unreserve", "reservation", argv[1]) >= 0)
        return CTL_USAGE;
    client_path_init(&p, "/v1/reservations");
    client_path_segment(&p, argv[1]);
    if (!(path = client_path_get(&p, &err)))
        return ctl_fail("%s", err.message);
    return post(ctl, "DELETE", path, NULL);
}
