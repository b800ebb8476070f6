/* update.c - loomctl update: a waiting job's fields changed (PATCH
 * /v1/jobs/{id}), each FIELD=VALUE checked as loomd checks it. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/depend.h"
#include "core/limits.h"
#include "core/timefmt.h"

#define FIELDS "name, nodes, cpus-per-node, mem, gpus, time, time-s, " \
               "cluster, queue, features, reservation, dependency and "  \
               "priority"

/* A whole number of a request (or of the job, req NULL). */
struct num_field {
    const char *name, *key;
    long min, max;
    int in_request;
};

static const struct num_field nums[] = {
    {"nodes", "nodes", 1, LOOM_JOB_NODES_MAX, 1},
    {"cpus-per-node", "cpus_per_node", 1, LOOM_JOB_CPUS_MAX, 1},
    {"mem", "memory_mb", LOOM_JOB_MEMORY_MB_MIN, LOOM_JOB_MEMORY_MB_MAX, 1},
    {"gpus", "gpus", 0, LOOM_JOB_GPUS_MAX, 1},
    {"time-s", "walltime_s", 1, LOOM_JOB_WALLTIME_MAX_S, 1},
    {"priority", "priority", -LOOM_JOB_PRIORITY_MAX, LOOM_JOB_PRIORITY_MAX,
     0},
    {NULL, NULL, 0, 0, 0},
};

/* features=F1,F2 (empty: none). */
static json_t *features_of(const char *v)
{
    json_t *a = json_array();
    const char *p = v, *end;

    while (a && *p) {
        end = p + strcspn(p, ",");
        if (end > p)
            json_array_append_new(a, json_stringn(p, (size_t)(end - p)));
        p = *end ? end + 1 : end;
    }
    return a;
}

/* Text, or null when empty (cluster, queue, reservation, dependency). */
static json_t *text_or_null(const char *v)
{
    return *v ? json_string(v) : json_null();
}

/* One FIELD=VALUE into body (and its request). -1 to go on, or an exit
 * status. */
static int field_in(json_t *body, json_t *req, const char *arg)
{
    const char *eq = strchr(arg, '='), *v = eq ? eq + 1 : "";
    char name[32];
    struct loom_error err;
    long n;

    if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name))
        return ctl_usage("update", "'%s' is not FIELD=VALUE (FIELD is one "
                         "of " FIELDS ")", arg);
    snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
    for (const struct num_field *f = nums; f->name; f++) {
        if (strcmp(f->name, name) != 0)
            continue;
        if (ctl_long(v, f->min, f->max, &n) < 0)
            return ctl_usage("update", "%s needs a whole number from %ld to "
                             "%ld, not '%s'", name, f->min, f->max, v);
        json_object_set_new(f->in_request ? req : body, f->key,
                            json_integer(n));
        return -1;
    }
    if (!strcmp(name, "time")) {
        if (timefmt_slurm(v, &n, &err) < 0)
            return ctl_usage("update", "time: %s", err.message);
        json_object_set_new(req, "walltime_s", json_integer(n));
    } else if (!strcmp(name, "name")) {
        if (!*v || strlen(v) > LOOM_JOB_NAME_MAX)
            return ctl_usage("update", "name takes 1 to %d characters",
                             LOOM_JOB_NAME_MAX);
        json_object_set_new(body, "name", json_string(v));
    } else if (!strcmp(name, "cluster") || !strcmp(name, "queue") ||
               !strcmp(name, "reservation")) {
        json_object_set_new(req, name, text_or_null(v));
    } else if (!strcmp(name, "features")) {
        json_object_set_new(req, "features", features_of(v));
    } else if (!strcmp(name, "dependency")) {
        struct dep_list l;
        if (*v && dep_parse(v, &l, &err) < 0)
            return ctl_usage("update", "dependency: %s", err.message);
        if (*v)
            dep_list_fini(&l);
        json_object_set_new(body, "dependency", text_or_null(v));
    } else {
        return ctl_usage("update", "unknown field '%s': the fields are "
                         FIELDS, name);
    }
    return -1;
}

int cmd_update(struct ctl *ctl, int argc, char **argv)
{
    json_t *body = json_object(), *req = json_object(), *reply = NULL;
    struct loom_error err = { 0 };
    struct client_path p;
    struct client *c;
    const char *path;
    int rc = ctl_json_only(ctl, NULL, argc, argv);

    if (rc >= 0)
        goto out;
    rc = CTL_USAGE;
    if (argc - optind < 2) {
        rc = ctl_usage("update", "give a job and at least one FIELD=VALUE");
        goto out;
    }
    if ((rc = ctl_check_job("update", argv[optind])) >= 0)
        goto out;
    for (int i = optind + 1; i < argc; i++) {
        size_t before = json_object_size(body) + json_object_size(req);
        if ((rc = field_in(body, req, argv[i])) >= 0)
            goto out;
        if (json_object_size(body) + json_object_size(req) == before) {
            rc = ctl_usage("update", "'%s' gives a field a second time",
                           argv[i]);
            goto out;
        }
    }
    if (json_object_size(req))
        json_object_set(body, "request", req);
    client_path_init(&p, "/v1/jobs");
    client_path_segment(&p, argv[optind]);
    rc = CTL_FAIL;
    if (!(path = client_path_get(&p, &err))) {
        ctl_fail("%s", err.message);
        goto out;
    }
    if (!(c = ctl_client(ctl)))
        goto out;
    if (client_request(c, "PATCH", path, body, NULL, NULL, &reply,
                       &err) < 0) {
        ctl_fail("%s", err.message);
        goto out;
    }
    if (ctl->json)
        ctl_print_json(reply);
    rc = CTL_OK;
out:
    json_decref(reply);
    json_decref(req);
    json_decref(body);
    return rc;
}
