/* goal.c - goal state and monitoring reports: what the API sets and asks,
 * kept in memory and in PostgreSQL. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/log.h"
#include "core/store_maint.h"
#include "core/timeutil.h"
#include "maintenance/maint_state.h"

#define MAX_ATTRS 256

/* What a cluster reports of every node: not for monitoring reports. */
static const char *const cluster_attrs[] = {"state", "cpus", "memory_mb",
                                            "gpus", "features", NULL};

int attr_from_cluster(const char *attr)
{
    for (int i = 0; cluster_attrs[i]; i++)
        if (!strcmp(attr, cluster_attrs[i]))
            return 1;
    return 0;
}

json_t *actual_from_cluster(const struct snode *n, const char *attr)
{
    json_t *a;

    if (!attr_from_cluster(attr))
        return NULL;
    if (!n)
        return NULL;
    if (!strcmp(attr, "state"))
        return json_string(snode_usable(n) ? "up" : n->state);
    if (!strcmp(attr, "cpus"))
        return json_integer(n->cpus);
    if (!strcmp(attr, "memory_mb"))
        return json_integer(n->memory_mb);
    if (!strcmp(attr, "gpus"))
        return json_integer(n->gpus);
    a = json_array();
    for (size_t i = 0; a && i < n->features.n; i++)
        json_array_append_new(a, json_string(n->features.v[i]));
    return a;
}

struct gnode *gnode_get(const char *id, int create)
{
    struct gnode *g = hmap_get(&M.nodes, id);

    if (g || !create)
        return g;
    if (!(g = calloc(1, sizeof(*g))) || !(g->id = strdup(id)) ||
        !(g->reports = json_object()) || !(g->mm = json_object()) ||
        hmap_put(&M.nodes, id, g) < 0) {
        if (g) {
            free(g->id);
            json_decref(g->reports);
            json_decref(g->mm);
        }
        free(g);
        return NULL;
    }
    return g;
}

const struct snode *maint_node(struct snapshot *s, const char *id)
{
    const char *slash = strchr(id, '/');
    struct scluster *c;
    char cl[256];

    if (!slash || (size_t)(slash - id) >= sizeof(cl))
        return NULL;
    memcpy(cl, id, (size_t)(slash - id));
    cl[slash - id] = '\0';
    c = snapshot_cluster(s, cl);
    return c ? scluster_node(c, slash + 1) : NULL;
}

/* Show g's goal and latest reports (a report over the goal) as the
 * node's annotations, from its next rendering on. */
static void annot_publish(const struct gnode *g)
{
    json_t *a = g->goal ? json_copy(g->goal) : json_object(), *v;
    const char *k;

    json_object_foreach(g->reports, k, v)
        if (a)
            json_object_set(a, k, json_object_get(v, "value"));
    if (!a)
        log_err("node=%s: out of memory; its annotations show its goal and "
                "reports from the next change on", g->id);
    infra_annot_set(g->id, a);
    json_decref(a);
}

/* An attribute value: a string, number, boolean or list of strings. */
static int value_ok(json_t *v)
{
    size_t i;
    json_t *e;

    if (json_is_string(v) || json_is_number(v) || json_is_boolean(v))
        return 1;
    if (!json_is_array(v))
        return 0;
    json_array_foreach(v, i, e) if (!json_is_string(e)) return 0;
    return 1;
}

/* A goal for what the cluster reports itself (cluster_attrs) must be a
 * value the cluster can report, else the node could never match it:
 * state one of domain_goal_states, cpus, memory_mb and gpus whole numbers
 * (as JSON numbers or as text, "8"), features a list. */
static int goal_value_ok(const char *k, json_t *v, const char *path,
                         struct loom_error *err)
{
    const char *text = json_string_value(v);
    char field[128];
    int64_t n;

    snprintf(field, sizeof(field), "%s.%s", path, k);
    if (!strcmp(k, "state")) {
        if (domain_check(&domain_goal_states, text ? text : "", field,
                         err) == 0)
            return 0;
        if (!text)
            return loom_error_field(err, LOOM_EINVAL, field, "goal "
                                    "attribute 'state' must be a string: "
                                    "up, down or drained");
        return loom_error_prefix(err, "goal attribute 'state'");
    }
    if (!strcmp(k, "features")) {
        if (json_is_array(v))
            return 0;
        return loom_error_field(err, LOOM_EINVAL, field, "goal attribute "
                                "'features' must be a list of feature names");
    }
    if ((json_is_integer(v) && json_integer_value(v) >= 0) ||
        (text && (!strcmp(text, "0") || domain_id_parse(text, &n) == 0)))
        return 0;
    return loom_error_field(err, LOOM_EINVAL, field, "goal attribute '%s' "
                            "must be a whole number from 0 on (written "
                            "without leading zeros), as the cluster reports "
                            "it", k);
}

static int attrs_ok(json_t *attrs, const char *path, int goal,
                    struct loom_error *err)
{
    const char *k;
    json_t *v;

    if (!json_is_object(attrs))
        return loom_error_field(err, LOOM_EINVAL, path, "%s must be an "
                                "object of attributes", path);
    if (json_object_size(attrs) > MAX_ATTRS)
        return loom_error_field(err, LOOM_EINVAL, path, "at most %d "
                                "attributes per node", MAX_ATTRS);
    json_object_foreach(attrs, k, v) {
        if (!*k || strlen(k) > 64)
            return loom_error_field(err, LOOM_EINVAL, path, "an attribute "
                                    "name has 1 to 64 characters");
        if (!value_ok(v))
            return loom_error_field(err, LOOM_EINVAL, path, "attribute '%s' "
                                    "must be a string, a number, a boolean "
                                    "or a list of strings", k);
        if (goal && attr_from_cluster(k) && goal_value_ok(k, v, path, err) < 0)
            return -1;
    }
    return 0;
}

static const struct jx_field one_fields[] = {
    {"attributes", JX_OBJECT, 1},
    {NULL, 0, 0},
};
static const struct jx_field import_fields[] = {
    {"items", JX_ARRAY, 1},
    {NULL, 0, 0},
};
static const struct jx_field item_fields[] = {
    {"node", JX_STRING, 1},
    {"attributes", JX_OBJECT, 1},
    {NULL, 0, 0},
};

/* The PUT body as items [{"node", "attributes"}], checked against s. */
static json_t *goal_items(const struct maint_op *op, struct snapshot *s,
                          struct loom_error *err)
{
    json_t *body = jx_parse_object(op->body, op->body ? strlen(op->body) : 0,
                                   err);
    json_t *items = NULL, *it;
    char path[64], apath[80];
    size_t i;

    if (!body)
        return NULL;
    if (op->node) {
        if (jx_check(body, "", one_fields, err) < 0 ||
            attrs_ok(json_object_get(body, "attributes"), "attributes", 1,
                     err) < 0)
            goto out;
        if (!maint_node(s, op->node)) {
            loom_error_set(err, LOOM_ENOENT, "there is no node %s", op->node);
            goto out;
        }
        items = json_pack("[{s:s, s:O}]", "node", op->node, "attributes",
                          json_object_get(body, "attributes"));
        goto out;
    }
    if (jx_check(body, "", import_fields, err) < 0)
        goto out;
    json_array_foreach(json_object_get(body, "items"), i, it) {
        snprintf(path, sizeof(path), "items[%zu]", i);
        snprintf(apath, sizeof(apath), "items[%zu].attributes", i);
        if (!json_is_object(it)) {
            loom_error_field(err, LOOM_EINVAL, path, "%s must be an object",
                             path);
            goto out;
        }
        if (jx_check(it, path, item_fields, err) < 0 ||
            attrs_ok(json_object_get(it, "attributes"), apath, 1, err) < 0)
            goto out;
        if (!maint_node(s, jx_str(it, "node", ""))) {
            loom_error_field(err, LOOM_ENOENT, path, "there is no node %s "
                             "(%s); nothing was imported",
                             jx_str(it, "node", ""), path);
            goto out;
        }
    }
    items = json_incref(json_object_get(body, "items"));
out:
    json_decref(body);
    return items;
}

static json_t *goal_json(const struct gnode *g, const char *id)
{
    char t[32];

    if (g && g->goal_time)
        time_format(g->goal_time, t);
    /* "o" takes the reference: a new {} or one more of the goal */
    return json_pack("{s:s, s:o, s:s?}", "node", id, "attributes",
                     g && g->goal ? json_incref(g->goal) : json_object(),
                     "updated", g && g->goal_time ? t : NULL);
}

void goal_put(struct msg *m)
{
    struct maint_op *op = m->data;
    struct snapshot *s = snapshot_get();
    struct loom_error err;
    json_t *items = goal_items(op, s, &err), *it;
    char *text = items ? json_dumps(items, JSON_COMPACT) : NULL;
    time_t now = time(NULL);
    size_t i;

    if (!items || !text || store_goal_put(M.st, text, &err) < 0) {
        if (items && !text)
            loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        reply_send_error(m->reply, &err);
        goto out;
    }
    json_array_foreach(items, i, it) {
        const char *id = jx_str(it, "node", "");
        struct gnode *g = gnode_get(id, 1);
        json_t *a = json_object_get(it, "attributes");
        if (!g) {
            log_err("node=%s: out of memory; its goal is in the database "
                    "and comes back at the next start", id);
            continue;
        }
        json_decref(g->goal);
        g->goal = json_object_size(a) ? json_incref(a) : NULL;
        g->goal_time = now;
        annot_publish(g);
        if (op->node)
            compare_run(s, id, time_real());
    }
    if (!op->node) {
        compare_run(s, NULL, time_real());
        log_info("goal state of %zu node(s) imported by %s",
                 json_array_size(items), op->subject);
        json_t *o = json_pack("{s:I}", "nodes",
                              (json_int_t)json_array_size(items));
        reply_send(m->reply, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
        json_decref(o);
    } else {
        json_t *o = goal_json(gnode_get(op->node, 0), op->node);
        log_info("node=%s goal set by %s", op->node, op->subject);
        reply_send(m->reply, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
        json_decref(o);
    }
out:
    free(text);
    json_decref(items);
    snapshot_put(s);
}

void goal_get(struct msg *m)
{
    struct maint_op *op = m->data;
    struct snapshot *s = snapshot_get();
    struct loom_error err;
    json_t *o = NULL;

    if (op->node) {
        if (!maint_node(s, op->node) && !gnode_get(op->node, 0)) {
            loom_error_set(&err, LOOM_ENOENT, "there is no node %s",
                           op->node);
            reply_send_error(m->reply, &err);
            snapshot_put(s);
            return;
        }
        o = goal_json(gnode_get(op->node, 0), op->node);
    } else {
        json_t *items = json_array();
        for (size_t i = 0; items && i < M.nodes.cap; i++) {
            struct gnode *g = hmap_slot_value(&M.nodes, i);
            if (g && g->goal)
                json_array_append_new(items, goal_json(g, g->id));
        }
        o = items ? json_pack("{s:o}", "items", items) : NULL;
    }
    snapshot_put(s);
    reply_send(m->reply, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
}

static const struct jx_field report_fields[] = {
    {"attributes", JX_OBJECT, 1},
    {"time", JX_STRING, 0},
    {NULL, 0, 0},
};

/* The report's rows [{"attribute", "value", "time"}], checked. */
static json_t *report_rows(json_t *body, time_t *t, struct loom_error *err)
{
    json_t *attrs = json_object_get(body, "attributes"), *v, *rows;
    const char *k, *ts = jx_str(body, "time", NULL);

    if (jx_check(body, "", report_fields, err) < 0 ||
        attrs_ok(attrs, "attributes", 0, err) < 0)
        return NULL;
    *t = time(NULL);
    if (ts && time_parse(ts, t) < 0) {
        loom_error_field(err, LOOM_EINVAL, "time", "time must be an RFC 3339 "
                         "time such as 2026-11-21T20:00:00Z");
        return NULL;
    }
    if (*t > time(NULL) + 5) {
        loom_error_field(err, LOOM_EINVAL, "time", "a report cannot come "
                         "from the future");
        return NULL;
    }
    json_object_foreach(attrs, k, v)
        if (attr_from_cluster(k)) {
            loom_error_field(err, LOOM_EINVAL, "attributes", "'%s' is what "
                             "the cluster reports itself; a report cannot "
                             "set it", k);
            return NULL;
        }
    if (!(rows = json_array())) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    json_object_foreach(attrs, k, v)
        json_array_append_new(rows, json_pack("{s:s, s:O, s:I}", "attribute",
                                              k, "value", v, "time",
                                              (json_int_t)*t));
    return rows;
}

void actual_post(struct msg *m)
{
    struct maint_op *op = m->data;
    struct snapshot *s = snapshot_get();
    struct loom_error err;
    json_t *body = jx_parse_object(op->body, op->body ? strlen(op->body) : 0,
                                   &err);
    json_t *rows = NULL, *row, *o;
    struct gnode *g;
    char *text = NULL, ts[32];
    time_t t = 0;
    size_t i;

    if (!body || !(rows = report_rows(body, &t, &err)))
        goto error;
    if (!maint_node(s, op->node)) {
        loom_error_set(&err, LOOM_ENOENT, "there is no node %s", op->node);
        goto error;
    }
    if (!(text = json_dumps(rows, JSON_COMPACT)) ||
        !(g = gnode_get(op->node, 1))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (store_actual_put(M.st, op->node, text, &err) < 0)
        goto error;
    json_array_foreach(rows, i, row) {
        const char *attr = jx_str(row, "attribute", "");
        json_t *old = json_object_get(g->reports, attr);
        if (old && jx_int(old, "time", 0) > (long long)t)
            continue; /* an older report than the one kept */
        json_object_set_new(g->reports, attr,
                            json_pack("{s:O, s:I}", "value",
                                      json_object_get(row, "value"), "time",
                                      (json_int_t)t));
    }
    annot_publish(g);
    compare_run(s, op->node, time_real());
    time_format(t, ts);
    o = json_pack("{s:s, s:I, s:s}", "node", op->node, "attributes",
                  (json_int_t)json_array_size(rows), "time", ts);
    reply_send(m->reply, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
    goto out;
error:
    reply_send_error(m->reply, &err);
out:
    free(text);
    json_decref(rows);
    json_decref(body);
    snapshot_put(s);
}

void actual_get(struct msg *m)
{
    struct maint_op *op = m->data;
    struct snapshot *s = snapshot_get();
    const struct snode *n = maint_node(s, op->node);
    struct gnode *g = gnode_get(op->node, 0);
    json_t *attrs = json_object(), *v, *o;
    struct loom_error err;
    const char *k;
    char ts[32];

    if (!n) {
        loom_error_set(&err, LOOM_ENOENT, "there is no node %s", op->node);
        reply_send_error(m->reply, &err);
        json_decref(attrs);
        snapshot_put(s);
        return;
    }
    {
        char cl[256];
        size_t len = strcspn(op->node, "/");
        snprintf(cl, sizeof(cl), "%.*s", (int)len, op->node);
        time_format(snapshot_cluster(s, cl)->last_poll, ts);
    }
    for (int i = 0; attrs && cluster_attrs[i]; i++)
        json_object_set_new(attrs, cluster_attrs[i],
                            json_pack("{s:o, s:s, s:s}", "value",
                                      actual_from_cluster(n, cluster_attrs[i]),
                                      "time", ts, "source", "cluster"));
    if (g)
        json_object_foreach(g->reports, k, v) {
            time_format((time_t)jx_int(v, "time", 0), ts);
            json_object_set_new(attrs, k,
                                json_pack("{s:O, s:s, s:s, s:b}", "value",
                                          json_object_get(v, "value"), "time",
                                          ts, "source", "report", "stale",
                                          jx_int(v, "time", 0) +
                                                  M.conf.actual_ttl_s <
                                              time_real()));
        }
    snapshot_put(s);
    o = json_pack("{s:s, s:o}", "node", op->node, "attributes", attrs);
    reply_send(m->reply, 200, o ? json_dumps(o, JSON_COMPACT) : NULL);
    json_decref(o);
}

static int goal_row(void *arg, int n, const char *const *cols)
{
    struct gnode *g;
    json_t *a;

    (void)arg;
    if (n < 3 || !(a = json_loads(cols[1], 0, NULL)) || !json_is_object(a)) {
        log_err("node=%s: stored goal unreadable; skipped", cols[0]);
        return 0;
    }
    if (!(g = gnode_get(cols[0], 1))) {
        json_decref(a);
        return -1;
    }
    g->goal = a;
    g->goal_time = (time_t)strtoll(cols[2], NULL, 10);
    return 0;
}

static int actual_row(void *arg, int n, const char *const *cols)
{
    struct gnode *g;
    json_t *v;

    (void)arg;
    if (n < 4 || !(v = json_loads(cols[2], JSON_DECODE_ANY, NULL))) {
        log_err("node=%s: stored report unreadable; skipped", cols[0]);
        return 0;
    }
    if (!(g = gnode_get(cols[0], 1))) {
        json_decref(v);
        return -1;
    }
    json_object_set_new(g->reports, cols[1],
                        json_pack("{s:o, s:I}", "value", v, "time",
                                  (json_int_t)strtoll(cols[3], NULL, 10)));
    return 0;
}

int goal_load(struct loom_error *err)
{
    if (store_goal_load(M.st, goal_row, NULL, err) < 0 ||
        store_actual_load(M.st, actual_row, NULL, err) < 0)
        return -1;
    for (size_t i = 0; i < M.nodes.cap; i++)
        if (hmap_slot_value(&M.nodes, i))
            annot_publish(hmap_slot_value(&M.nodes, i));
    log_info("goal state: %zu node(s) with a goal or reports", M.nodes.n);
    return 0;
}
