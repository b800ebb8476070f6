/* compare.c - goal against actual state: the mismatches, kept in memory
 * and in PostgreSQL, shown by GET /v1/state/diff. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonx.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/store_maint.h"
#include "core/timeutil.h"
#include "maintenance/maint_state.h"

static void key_of(char *buf, size_t len, const char *node, const char *attr)
{
    snprintf(buf, len, "%s\x1f%s", node, attr);
}

/* A scalar as text: "6.1" and 6.1 are the same value. */
static int scalar_text(json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        snprintf(buf, len, "%s", json_string_value(v));
    else if (json_is_integer(v))
        snprintf(buf, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.15g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
    else
        return -1;
    return 0;
}

static int in_array(json_t *a, const char *s)
{
    size_t i;
    json_t *e;

    json_array_foreach(a, i, e) if (json_is_string(e) &&
                                    !strcmp(json_string_value(e), s)) return 1;
    return 0;
}

int maint_same_value(json_t *goal, json_t *actual)
{
    char a[512], b[512];
    size_t i;
    json_t *e;

    if (!actual)
        return 0;
    if (json_is_array(goal) || json_is_array(actual)) {
        if (!json_is_array(goal) || !json_is_array(actual))
            return 0;
        json_array_foreach(goal, i, e) if (!json_is_string(e) ||
                                           !in_array(actual,
                                                     json_string_value(e)))
            return 0;
        json_array_foreach(actual, i, e) if (!json_is_string(e) ||
                                             !in_array(goal,
                                                       json_string_value(e)))
            return 0;
        return 1;
    }
    return scalar_text(goal, a, sizeof(a)) == 0 &&
           scalar_text(actual, b, sizeof(b)) == 0 && !strcmp(a, b);
}

static const struct maint_rule *rule_for(const char *node, const char *attr,
                                         json_t *actual)
{
    for (size_t i = 0; i < M.conf.n_rules; i++) {
        const struct maint_rule *r = &M.conf.rules[i];
        size_t cl = r->cluster ? strlen(r->cluster) : 0;
        if (strcmp(r->attribute, attr))
            continue;
        if (r->cluster && (strncmp(node, r->cluster, cl) || node[cl] != '/'))
            continue;
        if ((r->when == WHEN_DIFFERS && !actual) ||
            (r->when == WHEN_UNKNOWN && actual))
            continue;
        return r;
    }
    return NULL;
}

void mism_free(void *p)
{
    struct mism *x = p;

    free(x->held);
    free(x->json);
    free(x->node);
    free(x->attr);
    json_decref(x->goal);
    json_decref(x->actual);
    free(x);
}

static void gone(struct gnode *g, const char *attr)
{
    char key[512];
    struct mism *x;

    key_of(key, sizeof(key), g->id, attr);
    if (!(x = hmap_del(&M.mism, key)))
        return;
    json_array_append_new(M.mism_gone, json_pack("{s:s, s:s}", "node",
                                                 g->id, "attribute", attr));
    mism_free(x);
    M.diff_changed = 1;
}

/* The attribute differs: record it (new, or its values changed). */
static void differs(struct gnode *g, const char *attr, json_t *goal,
                    json_t *actual, double now)
{
    char key[512];
    struct mism *x;

    key_of(key, sizeof(key), g->id, attr);
    x = hmap_get(&M.mism, key);
    if (x && json_equal(x->goal, goal) &&
        (x->actual ? actual && json_equal(x->actual, actual) : !actual)) {
        const struct maint_rule *r = rule_for(g->id, attr, actual);
        if (r != x->rule) { /* a reload: its action shows again */
            free(x->json);
            x->json = NULL;
            M.diff_changed = 1;
        }
        x->rule = r;
        return;
    }
    if (!x) {
        if (!(x = calloc(1, sizeof(*x))) || !(x->node = strdup(g->id)) ||
            !(x->attr = strdup(attr)) || hmap_put(&M.mism, key, x) < 0) {
            if (x) {
                free(x->node);
                free(x->attr);
            }
            free(x);
            log_err("node=%s: out of memory recording a mismatch", g->id);
            return;
        }
        x->since = (time_t)now;
        json_object_set_new(g->mm, attr, json_true());
    }
    json_decref(x->goal);
    json_decref(x->actual);
    free(x->json);
    x->json = NULL;
    x->goal = json_incref(goal);
    x->actual = json_incref(actual);
    x->rule = rule_for(g->id, attr, actual);
    json_array_append_new(M.mism_set,
                          json_pack("{s:s, s:s, s:O, s:O?, s:I}", "node",
                                    x->node, "attribute", attr, "goal", goal,
                                    "actual", actual, "since",
                                    (json_int_t)x->since));
    M.diff_changed = 1;
}

static void compare_node(struct snapshot *s, struct gnode *g, double now)
{
    const struct snode *n = maint_node(s, g->id);
    const char *k;
    json_t *gv, *tmp;
    void *it;

    json_object_foreach(g->goal, k, gv) {
        json_t *av = NULL, *r;
        if (attr_from_cluster(k))
            av = actual_from_cluster(n, k);
        else if ((r = json_object_get(g->reports, k)) &&
                 (double)jx_int(r, "time", 0) + M.conf.actual_ttl_s >= now)
            av = json_incref(json_object_get(r, "value"));
        if (maint_same_value(gv, av))
            gone(g, k);
        else
            differs(g, k, gv, av, now);
        json_decref(av);
    }
    /* mismatches of attributes the goal no longer names */
    tmp = json_object();
    json_object_foreach_safe(g->mm, it, k, gv)
        if (!g->goal || !json_object_get(g->goal, k))
            json_object_set_new(tmp, k, json_true());
    json_object_foreach(tmp, k, gv) {
        gone(g, k);
        json_object_del(g->mm, k);
    }
    json_decref(tmp);
    json_object_foreach_safe(g->mm, it, k, gv) {
        char key[512];
        key_of(key, sizeof(key), g->id, k);
        if (!hmap_get(&M.mism, key))
            json_object_del(g->mm, k);
    }
}

/* Is node id ("cluster/name") in one of these clusters? */
static int in_clusters(const char *id, const struct strv *clusters)
{
    size_t cl = strcspn(id, "/");

    for (size_t k = 0; k < clusters->n; k++)
        if (strlen(clusters->v[k]) == cl && !strncmp(clusters->v[k], id, cl))
            return 1;
    return 0;
}

/* Every node with a goal or mismatches, or those of clusters only. */
static void compare_nodes(struct snapshot *s, const struct strv *only,
                          double now)
{
    double t0 = time_mono();

    for (size_t i = 0; i < M.nodes.cap; i++) {
        struct gnode *g = hmap_slot_value(&M.nodes, i);
        if (g && (g->goal || json_object_size(g->mm)) &&
            (!only || in_clusters(g->id, only)))
            compare_node(s, g, now);
    }
    if (only)
        return; /* the figures are of full comparisons */
    M.compare_ms_last = (time_mono() - t0) * 1000;
    if (M.compare_ms_last > M.compare_ms_max)
        M.compare_ms_max = M.compare_ms_last;
    M.compares++;
}

void compare_run(struct snapshot *s, const char *id, double now)
{
    struct gnode *g;

    if (!id)
        compare_nodes(s, NULL, now);
    else if ((g = gnode_get(id, 0)))
        compare_node(s, g, now);
}

/* The clusters that published a new version since the last look (all of
 * them when the set of clusters changed), by name into changed. */
static void clusters_changed(struct snapshot *s, struct strv *changed)
{
    int all = s->n_clusters != M.n_seen;
    struct scluster **seen;

    for (size_t i = 0; i < s->n_clusters; i++)
        if ((all || s->clusters[i] != M.seen[i]) &&
            strv_push(changed, s->clusters[i]->name) < 0)
            M.compare_all = 1; /* out of memory: compare them all */
    if (!changed->n || !(seen = calloc(s->n_clusters + 1, sizeof(*seen))))
        return;
    for (size_t i = 0; i < M.n_seen; i++)
        scluster_unref(M.seen[i]);
    free(M.seen);
    for (size_t i = 0; i < s->n_clusters; i++)
        seen[i] = scluster_ref(s->clusters[i]);
    M.seen = seen;
    M.n_seen = s->n_clusters;
}

void compare_tick(double now)
{
    struct snapshot *s = snapshot_get();
    struct strv changed = {0};

    if (!s)
        return;
    clusters_changed(s, &changed);
    if (M.compare_all || now >= M.next_compare) {
        compare_nodes(s, NULL, now); /* reports time out on every node */
        M.compare_all = 0;
        M.next_compare = now + M.conf.compare_s;
    } else if (changed.n) {
        compare_nodes(s, &changed, now); /* what those clusters report */
    }
    strv_fini(&changed);
    snapshot_put(s);
}

int mism_flush(void)
{
    struct loom_error err;
    char *set, *gone_text;
    int rc;

    if (!json_array_size(M.mism_set) && !json_array_size(M.mism_gone))
        return 0;
    set = json_dumps(M.mism_set, JSON_COMPACT);
    gone_text = json_dumps(M.mism_gone, JSON_COMPACT);
    rc = set && gone_text ? store_mismatch_apply(M.st, set, gone_text, &err)
                          : loom_error_set(&err, LOOM_EINTERNAL,
                                           "out of memory");
    free(set);
    free(gone_text);
    if (rc < 0) {
        log_warn("mismatches: not written yet (%s); kept for the next try",
                 err.message);
        return -1;
    }
    json_array_clear(M.mism_set);
    json_array_clear(M.mism_gone);
    return 0;
}

static int cmp_mism(const void *a, const void *b)
{
    const struct mism *x = *(struct mism *const *)a,
                      *y = *(struct mism *const *)b;
    int c = strcmp(x->node, y->node);

    return c ? c : strcmp(x->attr, y->attr);
}

static char *render(const struct mism *x)
{
    const char *action = x->rule ? x->rule->action : NULL;
    size_t cl = strcspn(x->node, "/");
    struct mreq *r = mreq_open_on(x->node, action);
    char cluster[256], since[32], id[24];
    json_t *o;
    char *text;

    snprintf(cluster, sizeof(cluster), "%.*s", (int)cl, x->node);
    time_format(x->since, since);
    if (r)
        snprintf(id, sizeof(id), "%lld", (long long)r->id);
    o = json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s?, s:s?}", "node",
                  x->node, "cluster", cluster, "attribute", x->attr, "goal",
                  x->goal ? json_incref(x->goal) : json_null(), "actual",
                  x->actual ? json_incref(x->actual) : json_string("unknown"),
                  "since", since, "action", action, "maintenance",
                  r ? id : NULL);
    text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* An attribute and its mismatches, for loom_mismatches. */
struct attr_count {
    const char *attr;
    double n;
};

static int by_count(const void *a, const void *b)
{
    const struct attr_count *x = a, *y = b;

    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->attr, y->attr);
}

/* loom_mismatches of GET /metrics: the n mismatches by attribute, the
 * attributes with the most first (past the family's ceiling the rest
 * show as "other"). */
static void count_attrs(struct mism **all, size_t n)
{
    struct attr_count *c = calloc(n + 1, sizeof(*c));
    const char **names = calloc(n + 1, sizeof(*names));
    double *v = calloc(n + 1, sizeof(*v));
    struct hmap seen;
    size_t k = 0;

    hmap_init(&seen);
    for (size_t i = 0; c && names && v && i < n; i++) {
        struct attr_count *a = hmap_get(&seen, all[i]->attr);
        if (!a) {
            a = &c[k++];
            a->attr = all[i]->attr;
            if (hmap_put(&seen, a->attr, a) < 0)
                goto out;
        }
        a->n++;
    }
    if (!c || !names || !v)
        goto out;
    qsort(c, k, sizeof(*c), by_count);
    for (size_t i = 0; i < k; i++) {
        names[i] = c[i].attr;
        v[i] = c[i].n;
    }
    metrics_replace(METRICS_MISMATCHES, names, v, k);
out:
    hmap_fini(&seen);
    free(c);
    free(names);
    free(v);
}

void diff_publish(void)
{
    struct mism **all = calloc(M.mism.n + 1, sizeof(*all));
    char **parts = calloc(M.mism.n + 1, sizeof(*parts));
    struct stext *t = NULL;
    size_t n = 0;

    if (!all || !parts)
        goto out;
    for (size_t i = 0; i < M.mism.cap; i++)
        if (hmap_slot_value(&M.mism, i))
            all[n++] = hmap_slot_value(&M.mism, i);
    qsort(all, n, sizeof(*all), cmp_mism);
    for (size_t i = 0; i < n; i++)
        if (!all[i]->json && !(all[i]->json = render(all[i])))
            goto out;
        else
            parts[i] = all[i]->json;
    if ((t = stext_array(parts, n))) {
        snapshot_publish_text(SNAP_DIFF, t);
        M.diff_changed = 0;
        count_attrs(all, n);
    }
out:
    free(parts);
    free(all);
}

void diff_requests_changed(void)
{
    for (size_t i = 0; i < M.mism.cap; i++) {
        struct mism *x = hmap_slot_value(&M.mism, i);
        if (x) {
            free(x->json);
            x->json = NULL;
        }
    }
    M.diff_changed = 1;
}

static int mism_row(void *arg, int n, const char *const *cols)
{
    struct gnode *g;
    struct mism *x;
    char key[512];

    (void)arg;
    if (n < 3 || !(g = gnode_get(cols[0], 1)) || !(x = calloc(1, sizeof(*x))))
        return -1;
    key_of(key, sizeof(key), cols[0], cols[1]);
    if (!(x->node = strdup(cols[0])) || !(x->attr = strdup(cols[1])) ||
        hmap_put(&M.mism, key, x) < 0) {
        mism_free(x);
        return -1;
    }
    x->since = (time_t)strtoll(cols[2], NULL, 10);
    json_object_set_new(g->mm, cols[1], json_true());
    return 0;
}

int mism_load(struct loom_error *err)
{
    return store_mismatch_load(M.st, mism_row, NULL, err);
}
