/* talk.c - what loomctl's goal, actual, diff and maintenance
 * commands share: requests to loomd and their tables. */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ctl/talk.h"
#include "core/domain.h"

/* Talking to loomd ------------------------------------------------------- */

int ctlm_is_node(const char *id)
{
    struct client_path p;

    client_path_init(&p, "");
    return ctl_pair_segments(&p, id) == 0;
}

/* p = base/CLUSTER/NAME from id. Returns -1 to go on, or a usage error. */
int ctlm_node_arg(struct client_path *p, const char *base, const char *cmd,
                  const char *id)
{
    client_path_init(p, base);
    if (ctl_pair_segments(p, id) < 0)
        return ctl_usage(cmd, "a node is named CLUSTER/NAME, not '%s'", id);
    return -1;
}

/* Send one request; on success *reply is the answer (may be NULL). */
int ctlm_send_req(struct ctl *ctl, const char *method,
                  const struct client_path *p, const json_t *body,
                  json_t **reply)
{
    struct loom_error err = { 0 };
    const char *path = client_path_get(p, &err);
    struct client *c;

    *reply = NULL;
    if (!path)
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if (client_request(c, method, path, body, NULL, NULL, reply, &err) < 0)
        return ctl_fail("%s", err.message);
    return CTL_OK;
}

/* Send a change; print the answer with --json only. */
int ctlm_change(struct ctl *ctl, const char *method,
                const struct client_path *p, const json_t *body)
{
    json_t *reply;
    int rc = ctlm_send_req(ctl, method, p, body, &reply);

    if (rc == CTL_OK && ctl->json)
        ctl_print_json(reply);
    json_decref(reply);
    return rc;
}

/* The filters a list allows (letters of allowed: C --cluster, a
 * --attribute, n --node, s --state of a maintenance request) into p's
 * query, named as the options. Returns -1 to go on, or an exit status. */
int ctlm_filters(struct ctl *ctl, const char *cmd, const char *allowed,
                 int argc, char **argv, struct client_path *p)
{
    static const struct option longs[] = {
        { "cluster", required_argument, NULL, 'C' },
        { "attribute", required_argument, NULL, 'a' },
        { "node", required_argument, NULL, 'n' },
        { "state", required_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    const char *node = NULL, *cluster = NULL;
    const struct option *o;
    char opt[32];
    int c, rc;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'j') {
            ctl->json = 1;
            continue;
        }
        if (c == '?' || c == ':')
            return ctl_opt_error(cmd, c, argv);
        for (o = longs; o->val != c; o++)
            ;
        if (!strchr(allowed, c))
            return ctl_usage(cmd, "%s takes no --%s", cmd, o->name);
        snprintf(opt, sizeof(opt), "--%s", o->name);
        rc = c == 's' ? ctl_check_name(cmd, opt, &domain_maint_states, optarg)
                      : ctl_check_text(cmd, opt, optarg);
        if (rc >= 0)
            return rc;
        node = c == 'n' ? optarg : node;
        cluster = c == 'C' ? optarg : cluster;
        client_path_query(p, o->name, optarg);
    }
    if (optind < argc)
        return ctl_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (node && !cluster && !ctlm_is_node(node))
        return ctl_usage(cmd, "a node is named CLUSTER/NAME, or NAME with "
                         "--cluster; not '%s'", node);
    return -1;
}

/* Tables ------------------------------------------------------------------ */

/* A value as a cell: strings as they are, numbers and booleans written
 * out, lists of strings joined with ',', null as "" (shown as "-"),
 * anything else as compact JSON. Returns buf. */
const char *ctlm_value_text(const json_t *v, char *buf, size_t size)
{
    const json_t *e;
    size_t i, len = 0;
    char *s;

    buf[0] = '\0';
    if (json_is_string(v)) {
        snprintf(buf, size, "%s", json_string_value(v));
    } else if (json_is_integer(v)) {
        snprintf(buf, size, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        snprintf(buf, size, "%.15g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, e) {
            int n = json_is_string(e)
                        ? snprintf(buf + len, size - len, "%s%s",
                                   i ? "," : "", json_string_value(e))
                        : -1;
            if (n < 0 || (size_t)n >= size - len)
                break;
            len += (size_t)n;
        }
        if (i == json_array_size(v))
            return buf;
    }
    if (json_is_array(v) || json_is_object(v)) {
        s = json_dumps(v, JSON_COMPACT);
        snprintf(buf, size, "%s", s ? s : "?");
        free(s);
    }
    return buf;
}

const char *ctlm_member(const json_t *obj, const char *key, char *buf,
                        size_t size)
{
    return ctlm_value_text(json_object_get(obj, key), buf, size);
}

/* Print one row per object of items (an array) or of the one object. */
int ctlm_table(const struct client_table_col *cols, size_t ncols,
               const json_t *items, row_f *row)
{
    struct client_table *t = client_table_create(cols, ncols);
    const json_t *item;
    size_t i;

    if (!t)
        return ctl_fail("out of memory");
    if (json_is_object(items) && row(t, items) < 0)
        goto nomem;
    json_array_foreach(items, i, item)
        if (json_is_object(item) && row(t, item) < 0)
            goto nomem;
    client_table_print(t, stdout);
    client_table_destroy(t);
    return CTL_OK;
nomem:
    client_table_destroy(t);
    return ctl_fail("out of memory");
}

/* GET a list (all its pages) or one object, and print it as a table. */
int ctlm_show(struct ctl *ctl, const struct client_path *p, int one,
              const struct client_table_col *cols, size_t ncols, row_f *row)
{
    struct loom_error err = { 0 };
    const char *path = client_path_get(p, &err);
    json_t *items = NULL;
    struct client *c;
    int rc;

    if (!path)
        return ctl_fail("%s", err.message);
    if (!(c = ctl_client(ctl)))
        return CTL_FAIL;
    if ((one ? client_request(c, "GET", path, NULL, NULL, NULL, &items, &err)
             : client_get_all(c, path, &items, &err)) < 0)
        return ctl_fail("%s", err.message);
    if (ctl->json) {
        json_t *j = one ? json_incref(items)
                        : json_pack("{s:O}", "items", items);
        ctl_print_json(j);
        json_decref(j);
        rc = CTL_OK;
    } else {
        rc = ctlm_table(cols, ncols, items, row);
    }
    json_decref(items);
    return rc;
}
