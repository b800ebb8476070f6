/* state.c - loomctl goal, actual and diff: the goal and actual
 * state of nodes and their mismatches. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/ctl/talk.h"
#include "core/fdread.h"
#include "core/timeutil.h"

#define IMPORT_MAX (64L << 20) /* loomd's largest max_body_bytes */

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
    if ((rc = ctlm_node_arg(&p, goal ? "/v1/goal/nodes" : "/v1/actual/nodes",
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
    rc = body ? ctlm_change(ctl, goal ? "PUT" : "POST", &p, body)
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

    cells[0] = ctlm_member(g, "node", node, sizeof(node));
    cells[3] = ctlm_member(g, "updated", updated, sizeof(updated));
    if (!json_object_size(attrs)) {
        cells[1] = cells[2] = NULL;
        return named ? client_table_add(t, cells) : 0;
    }
    json_object_foreach((json_t *)attrs, name, v) {
        cells[1] = name;
        cells[2] = ctlm_value_text(v, value, sizeof(value));
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
    int rc = ctl_json_only(ctl, "goal", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind > 1)
        return ctl_usage("goal", "goal show takes at most one node");
    client_path_init(&p, "/v1/goal/nodes");
    if (optind < argc &&
        (rc = ctlm_node_arg(&p, "/v1/goal/nodes", "goal", argv[optind])) >= 0)
        return rc;
    return ctlm_show(ctl, &p, optind < argc, cols, 4,
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
            if (!node || !ctlm_is_node(node) ||
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
        if (!ctlm_is_node(key) || !json_is_object(v)) {
            ctl_fail(ctlm_is_node(key) ? "%s: the attributes of %s are not an "
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
        n = fd_read_all(fd, buf, IMPORT_MAX + 1);
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
    int rc = ctl_json_only(ctl, "goal", argc, argv);

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
    rc = body ? ctlm_send_req(ctl, "PUT", &p, body, &reply)
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

    cells[0] = ctlm_member(a, "node", node, sizeof(node));
    json_object_foreach(json_object_get(a, "attributes"), name, v) {
        cells[1] = name;
        cells[2] = ctlm_member(v, "value", value, sizeof(value));
        cells[3] = ctlm_member(v, "source", source, sizeof(source));
        cells[4] = ctlm_member(v, "time", when, sizeof(when));
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
    int rc = ctl_json_only(ctl, "actual", argc, argv);

    if (rc >= 0)
        return rc;
    if (argc - optind != 1)
        return ctl_usage("actual", "actual show takes one node");
    rc = ctlm_node_arg(&p, "/v1/actual/nodes", "actual", argv[optind]);
    if (rc >= 0)
        return rc;
    return ctlm_show(ctl, &p, 1, cols, 5, actual_row);
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

    cells[0] = ctlm_member(d, "node", node, sizeof(node));
    cells[1] = ctlm_member(d, "attribute", attr, sizeof(attr));
    cells[2] = ctlm_member(d, "goal", goal, sizeof(goal));
    cells[3] = ctlm_member(d, "actual", actual, sizeof(actual));
    cells[4] = ctlm_member(d, "since", since, sizeof(since));
    cells[5] = ctlm_member(d, "action", action, sizeof(action));
    cells[6] = ctlm_member(d, "maintenance", maint, sizeof(maint));
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
    rc = ctlm_filters(ctl, "diff", "Can", argc, argv, &p);
    return rc >= 0 ? rc : ctlm_show(ctl, &p, 0, cols, 7, diff_row);
}

/* maintenance ------------------------------------------------------------ */
