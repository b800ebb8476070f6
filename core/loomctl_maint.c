/* loomctl_maint.c - loomctl goal, actual, diff and maintenance: the goal
 * and actual state of nodes, their mismatches, maintenance requests. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/client.h"
#include "core/client_table.h"
#include "core/loomctl.h"
#include "core/timeutil.h"

#define IMPORT_MAX (64L << 20) /* loomd's largest max_body_bytes */
#define DURATION_MAX (10L * 366 * 86400)
#define COUNT_MAX 1000000L

/* Talking to loomd ------------------------------------------------------- */

static int is_node(const char *id)
{
    struct client_path p;

    client_path_init(&p, "");
    return ctl_pair_segments(&p, id) == 0;
}

/* p = base/CLUSTER/NAME from id. Returns -1 to go on, or a usage error. */
static int node_arg(struct client_path *p, const char *base, const char *cmd,
                    const char *id)
{
    client_path_init(p, base);
    if (ctl_pair_segments(p, id) < 0)
        return ctl_usage(cmd, "a node is named CLUSTER/NAME, not '%s'", id);
    return -1;
}

/* Send one request; on success *reply is the answer (may be NULL). */
static int send_req(struct ctl *ctl, const char *method,
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
static int change(struct ctl *ctl, const char *method,
                  const struct client_path *p, const json_t *body)
{
    json_t *reply;
    int rc = send_req(ctl, method, p, body, &reply);

    if (rc == CTL_OK && ctl->json)
        ctl_print_json(reply);
    json_decref(reply);
    return rc;
}

/* Options of a command that has only --json, for command name cmd.
 * Returns -1 with optind at the first operand, or an exit status. */
static int json_only(struct ctl *ctl, const char *cmd, int argc, char **argv)
{
    static const struct option longs[] = {
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c != 'j')
            return ctl_opt_error(cmd, c, argv);
        ctl->json = 1;
    }
    return -1;
}

/* The filters a list allows (letters of allowed: C --cluster, a
 * --attribute, n --node, s --state) into p's query, named as the options.
 * Returns -1 to go on, or an exit status. */
static int filters(struct ctl *ctl, const char *cmd, const char *allowed,
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
    const struct option *o;
    int c;

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
        if (c == 'n' && !is_node(optarg))
            return ctl_usage(cmd, "a node is named CLUSTER/NAME, not '%s'",
                             optarg);
        client_path_query(p, o->name, optarg);
    }
    if (optind < argc)
        return ctl_usage(cmd, "unexpected argument '%s'", argv[optind]);
    return -1;
}

/* Tables ------------------------------------------------------------------ */

/* A value as a cell: strings as they are, numbers and booleans written
 * out, lists of strings joined with ',', null as "" (shown as "-"),
 * anything else as compact JSON. Returns buf. */
static const char *value_text(const json_t *v, char *buf, size_t size)
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

static const char *member(const json_t *obj, const char *key, char *buf,
                          size_t size)
{
    return value_text(json_object_get(obj, key), buf, size);
}

typedef int row_f(struct client_table *t, const json_t *item);

/* Print one row per object of items (an array) or of the one object. */
static int table(const struct client_table_col *cols, size_t ncols,
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
static int show(struct ctl *ctl, const struct client_path *p, int one,
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
        rc = table(cols, ncols, items, row);
    }
    json_decref(items);
    return rc;
}

/* goal ------------------------------------------------------------------ */

/* "a,b" as a list of strings ("" an empty one); NULL for an empty name. */
static json_t *feature_list(const char *text)
{
    json_t *a = json_array();
    const char *p = text;

    while (a && *text) {
        size_t k = strcspn(p, ",");
        if (!k || json_array_append_new(a, json_stringn(p, k)) < 0) {
            json_decref(a);
            return NULL;
        }
        if (!p[k])
            break;
        p += k + 1;
    }
    return a;
}

/* Words "NAME=VALUE" into attrs: every value a string, but features=a,b a
 * list (features= an empty one). Returns -1 to go on, or an exit status. */
static int attributes(const char *cmd, json_t *attrs, int n, char **words)
{
    for (int i = 0; i < n; i++) {
        const char *eq = strchr(words[i], '=');
        size_t len = eq ? (size_t)(eq - words[i]) : 0;
        char name[256];
        json_t *v;

        if (!eq || !len || len >= sizeof(name))
            return ctl_usage(cmd, "attributes are NAME=VALUE, not '%s'",
                             words[i]);
        memcpy(name, words[i], len);
        name[len] = '\0';
        if (json_object_get(attrs, name))
            return ctl_usage(cmd, "attribute '%s' is given twice", name);
        if (strcmp(name, "features") != 0)
            v = json_string(eq + 1);
        else if (!(v = feature_list(eq + 1)))
            return ctl_usage(cmd, "features=F1,F2 takes UTF-8 names "
                             "separated by commas, not '%s'", eq + 1);
        if (!v || json_object_set_new(attrs, name, v) < 0)
            return ctl_usage(cmd, "attribute '%s' is not UTF-8 text",
                             name);
    }
    return -1;
}

/* goal set (PUT, --clear) and actual report (POST, --time): a node and
 * NAME=VALUE words. */
static int set_attrs(struct ctl *ctl, const char *cmd, int argc, char **argv)
{
    static const struct option longs[] = {
        { "clear", no_argument, NULL, 'x' },
        { "time", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { NULL, 0, NULL, 0 },
    };
    int goal = strcmp(cmd, "goal") == 0, clear = 0, c, rc;
    const char *when = NULL;
    struct client_path p;
    json_t *attrs, *body;
    time_t t;

    while ((c = getopt_long(argc, argv, ":", longs, NULL)) != -1) {
        if (c == 'j')
            ctl->json = 1;
        else if (goal && c == 'x')
            clear = 1;
        else if (!goal && c == 't')
            when = optarg;
        else if (c == 'x' || c == 't')
            return ctl_usage(cmd, "%s %s takes no --%s", cmd, argv[0],
                             c == 'x' ? "clear" : "time");
        else
            return ctl_opt_error(cmd, c, argv);
    }
    if (optind >= argc || (argc - optind > 1) == clear)
        return ctl_usage(cmd, "give a node and NAME=VALUE attributes%s",
                         goal ? ", or a node and --clear" : "");
    if (when && time_parse(when, &t) < 0)
        return ctl_usage(cmd, "--time takes an RFC 3339 time such as "
                         "2026-11-22T03:00:00Z, not '%s'", when);
    if ((rc = node_arg(&p, goal ? "/v1/goal/nodes" : "/v1/actual/nodes",
                       cmd, argv[optind])) >= 0)
        return rc;
    if (!(attrs = json_object()))
        return ctl_fail("out of memory");
    rc = attributes(cmd, attrs, argc - optind - 1, argv + optind + 1);
    if (rc >= 0) {
        json_decref(attrs);
        return rc;
    }
    body = json_pack("{s:o}", "attributes", attrs);
    if (body && when)
        json_object_set_new(body, "time", json_string(when));
    rc = body ? change(ctl, goal ? "PUT" : "POST", &p, body)
              : ctl_fail("out of memory");
    json_decref(body);
    return rc;
}

/* A row per attribute of a goal; a node without one gets a row of "-"
 * only when asked for by name (a list leaves it out). */
static int goal_rows(struct client_table *t, const json_t *g, int named)
{
    char node[256], value[1024], updated[64];
    const char *cells[4], *name;
    const json_t *attrs = json_object_get(g, "attributes"), *v;

    cells[0] = member(g, "node", node, sizeof(node));
    cells[3] = member(g, "updated", updated, sizeof(updated));
    if (!json_object_size(attrs)) {
        cells[1] = cells[2] = NULL;
        return named ? client_table_add(t, cells) : 0;
    }
    json_object_foreach((json_t *)attrs, name, v) {
        cells[1] = name;
        cells[2] = value_text(v, value, sizeof(value));
        if (client_table_add(t, cells) < 0)
            return -1;
    }
    return 0;
}

static int goal_row(struct client_table *t, const json_t *g)
{
    return goal_rows(t, g, 1);
}

static int goal_list_row(struct client_table *t, const json_t *g)
{
    return goal_rows(t, g, 0);
}

static int goal_show(struct ctl *ctl, int argc, char **argv)
{
    static const struct client_table_col cols[] = {
        { "NODE", 0, 0 }, { "ATTRIBUTE", 0, 0 }, { "VALUE", 0, 0 },
        { "UPDATED", 0, 0 },
    };
    struct client_path p;
    int rc = json_only(ctl, "goal", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind > 1)
        return ctl_usage("goal", "goal show takes at most one node");
    client_path_init(&p, "/v1/goal/nodes");
    if (optind < argc &&
        (rc = node_arg(&p, "/v1/goal/nodes", "goal", argv[optind])) >= 0)
        return rc;
    return show(ctl, &p, optind < argc, cols, 4,
                optind < argc ? goal_row : goal_list_row);
}

/* The items of an import file: {"items": [...]} as it is, or
 * {"c/n": {attributes}, ...} turned into items. NULL after printing why. */
static json_t *import_items(const char *file, json_t *doc)
{
    json_t *items = json_object_get(doc, "items"), *v;
    const char *key;
    size_t i;

    if (items && (!json_is_array(items) || json_object_size(doc) != 1)) {
        ctl_fail("%s: \"items\" must be an array, and alone", file);
        return NULL;
    }
    if (items) {
        json_array_foreach(items, i, v) {
            const char *node = json_string_value(json_object_get(v, "node"));
            if (!node || !is_node(node) ||
                !json_is_object(json_object_get(v, "attributes"))) {
                ctl_fail("%s: item %zu needs a \"node\" (CLUSTER/NAME) and "
                         "an \"attributes\" object", file, i + 1);
                return NULL;
            }
        }
        return json_incref(items);
    }
    if (!(items = json_array())) {
        ctl_fail("out of memory");
        return NULL;
    }
    json_object_foreach(doc, key, v) {
        if (!is_node(key) || !json_is_object(v)) {
            ctl_fail(is_node(key) ? "%s: the attributes of %s are not an "
                                    "object"
                                  : "%s: \"%s\" is not a node (CLUSTER/NAME)",
                     file, key);
            json_decref(items);
            return NULL;
        }
        json_array_append_new(items, json_pack("{s:s, s:O}", "node", key,
                                               "attributes", v));
    }
    return items;
}

/* The JSON object in file ("-": standard input); NULL after printing why. */
static json_t *read_doc(const char *file)
{
    int fd = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : 0;
    char *buf = NULL;
    json_error_t jerr;
    json_t *doc = NULL;
    ssize_t n = -1;

    if (fd < 0) {
        ctl_fail("%s: cannot open: %s", file, strerror(errno));
        return NULL;
    }
    if ((buf = malloc(IMPORT_MAX + 1)))
        n = ctl_read_fd(fd, buf, IMPORT_MAX + 1);
    if (fd > 0)
        close(fd);
    if (n < 0)
        ctl_fail("%s: cannot read: %s", file,
                 buf ? strerror(errno) : "out of memory");
    else if (n > IMPORT_MAX)
        ctl_fail("%s: larger than %ld MiB", file, IMPORT_MAX >> 20);
    else if (!(doc = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES,
                                    &jerr)))
        ctl_fail("%s: line %d, column %d: %s", file, jerr.line, jerr.column,
                 jerr.text);
    free(buf);
    if (doc && !json_is_object(doc)) {
        ctl_fail("%s: not a JSON object", file);
        json_decref(doc);
        doc = NULL;
    }
    return doc;
}

static int goal_import(struct ctl *ctl, int argc, char **argv)
{
    struct client_path p;
    json_t *doc, *items, *body, *reply = NULL;
    int rc = json_only(ctl, "goal", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1 || !*argv[optind])
        return ctl_usage("goal", "give one file ('-': standard input)");
    if (!(doc = read_doc(argv[optind])))
        return CTL_FAIL;
    items = import_items(argv[optind], doc);
    json_decref(doc);
    if (!items)
        return CTL_FAIL;
    body = json_pack("{s:o}", "items", items);
    client_path_init(&p, "/v1/goal/nodes");
    rc = body ? send_req(ctl, "PUT", &p, body, &reply)
              : ctl_fail("out of memory");
    if (rc == CTL_OK && ctl->json) {
        ctl_print_json(reply);
    } else if (rc == CTL_OK) {
        json_t *n = json_object_get(reply, "nodes");
        long long count = json_is_integer(n)
                              ? (long long)json_integer_value(n)
                              : (long long)json_array_size(items);
        printf("imported %lld node%s\n", count, count == 1 ? "" : "s");
    }
    json_decref(reply);
    json_decref(body);
    return rc;
}

int cmd_goal(struct ctl *ctl, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";

    if (!strcmp(sub, "set"))
        return set_attrs(ctl, "goal", argc - 1, argv + 1);
    if (!strcmp(sub, "show"))
        return goal_show(ctl, argc - 1, argv + 1);
    if (!strcmp(sub, "import"))
        return goal_import(ctl, argc - 1, argv + 1);
    return ctl_usage("goal", "give set, show or import");
}

/* actual ------------------------------------------------------------------ */

static int actual_row(struct client_table *t, const json_t *a)
{
    char node[256], value[1024], source[32], when[64];
    const char *cells[5], *name;
    const json_t *v;

    cells[0] = member(a, "node", node, sizeof(node));
    json_object_foreach(json_object_get(a, "attributes"), name, v) {
        cells[1] = name;
        cells[2] = member(v, "value", value, sizeof(value));
        cells[3] = member(v, "source", source, sizeof(source));
        cells[4] = member(v, "time", when, sizeof(when));
        if (client_table_add(t, cells) < 0)
            return -1;
    }
    return 0;
}

static int actual_show(struct ctl *ctl, int argc, char **argv)
{
    static const struct client_table_col cols[] = {
        { "NODE", 0, 0 }, { "ATTRIBUTE", 0, 0 }, { "VALUE", 0, 0 },
        { "SOURCE", 0, 0 }, { "TIME", 0, 0 },
    };
    struct client_path p;
    int rc = json_only(ctl, "actual", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1)
        return ctl_usage("actual", "actual show takes one node");
    if ((rc = node_arg(&p, "/v1/actual/nodes", "actual", argv[optind])) >= 0)
        return rc;
    return show(ctl, &p, 1, cols, 5, actual_row);
}

int cmd_actual(struct ctl *ctl, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";

    if (!strcmp(sub, "report"))
        return set_attrs(ctl, "actual", argc - 1, argv + 1);
    if (!strcmp(sub, "show"))
        return actual_show(ctl, argc - 1, argv + 1);
    return ctl_usage("actual", "give report or show");
}

/* diff -------------------------------------------------------------------- */

static int diff_row(struct client_table *t, const json_t *d)
{
    char node[256], attr[256], goal[1024], actual[1024], since[64],
        action[128], maint[32];
    const char *cells[7];

    cells[0] = member(d, "node", node, sizeof(node));
    cells[1] = member(d, "attribute", attr, sizeof(attr));
    cells[2] = member(d, "goal", goal, sizeof(goal));
    cells[3] = member(d, "actual", actual, sizeof(actual));
    cells[4] = member(d, "since", since, sizeof(since));
    cells[5] = member(d, "action", action, sizeof(action));
    cells[6] = member(d, "maintenance", maint, sizeof(maint));
    return client_table_add(t, cells);
}

int cmd_diff(struct ctl *ctl, int argc, char **argv)
{
    static const struct client_table_col cols[] = {
        { "NODE", 0, 0 },   { "ATTRIBUTE", 0, 0 }, { "GOAL", 0, 0 },
        { "ACTUAL", 0, 0 }, { "SINCE", 0, 0 },     { "ACTION", 0, 0 },
        { "MAINTENANCE", 1, 0 },
    };
    struct client_path p;
    int rc;

    client_path_init(&p, "/v1/state/diff");
    rc = filters(ctl, "diff", "Can", argc, argv, &p);
    return rc >= 0 ? rc : show(ctl, &p, 0, cols, 7, diff_row);
}

/* maintenance ------------------------------------------------------------ */

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
    cells[0] = member(m, "id", id, sizeof(id));
    cells[1] = member(m, "action", action, sizeof(action));
    cells[2] = member(m, "state", st, sizeof(st));
    cells[3] = member(m, "owner", owner, sizeof(owner));
    cells[4] = member(m, "cluster", cl, sizeof(cl));
    cells[5] = nodes;
    cells[6] = member(m, "start", start, sizeof(start));
    cells[7] = member(m, "end", end, sizeof(end));
    cells[8] = member(m, "reason", why, sizeof(why));
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
    rc = filters(ctl, "maintenance", "Cs", argc, argv, &p);
    return rc >= 0 ? rc : show(ctl, &p, 0, cols, 9, maint_row);
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
        if (ctl_long(optarg, 1, c == 'N' ? COUNT_MAX : DURATION_MAX, &v) < 0)
            return ctl_usage("maintenance", "%s takes a whole number from 1 "
                             "to %ld, not '%s'",
                             c == 'N' ? "--count" : "--duration",
                             c == 'N' ? COUNT_MAX : DURATION_MAX, optarg);
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
    if (!*optarg || json_object_set_new(body, key, json_string(optarg)) < 0)
        return ctl_usage("maintenance", "--%s needs non-empty UTF-8 text",
                         key);
    return -1;
}

/* The nodes of a request (NODE... or --count with --cluster), the window's
 * kind and --action. Returns -1 to go on, or an exit status. */
static int request_check(json_t *body, const json_t *window, int n,
                         char **nodes)
{
    int count = json_object_get(body, "count") != NULL;
    json_t *ids;

    if (!json_object_get(body, "action"))
        return ctl_usage("maintenance", "give --action (node-off, or an "
                         "action of loom.conf)");
    if (json_object_get(window, "start") &&
        (json_object_get(window, "not_before") ||
         json_object_get(window, "deadline")))
        return ctl_usage("maintenance", "give --start for a fixed window, "
                         "or --not-before and --deadline, not both");
    if (!n == !count || count != (json_object_get(body, "cluster") != NULL))
        return ctl_usage("maintenance", "give the nodes, or --count N with "
                         "--cluster C");
    if (count)
        return -1;
    if (!(ids = json_array()))
        return ctl_fail("out of memory");
    json_object_set_new(body, "nodes", ids);
    for (int i = 0; i < n; i++) {
        if (!is_node(nodes[i]))
            return ctl_usage("maintenance", "a node is named CLUSTER/NAME, "
                             "not '%s'", nodes[i]);
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
        rc = send_req(ctl, "POST", &p, body, &reply);
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
    int rc = json_only(ctl, "maintenance", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1 || !*argv[optind])
        return ctl_usage("maintenance", "give one request id");
    client_path_init(&p, "/v1/maintenance");
    client_path_segment(&p, argv[optind]);
    rc = send_req(ctl, "DELETE", &p, NULL, &reply);
    if (rc == CTL_OK && ctl->json) {
        ctl_print_json(reply);
    } else if (rc == CTL_OK && json_is_object(reply)) {
        char id[32], st[32];
        printf("%s %s\n", member(reply, "id", id, sizeof(id)),
               member(reply, "state", st, sizeof(st)));
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
