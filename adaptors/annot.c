/* annot.c - a node's annotations: the annotate keys of its cluster's
 * section, and its goal and reports as the maintenance thread sets them. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/annot.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/infra.h"
#include "core/hostlist.h"

#define PREFIX "annotate"

/* ---- configuration ------------------------------------------------------ */

static int name_ok(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > ANNOT_KEY_MAX)
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_' &&
            *s != '.')
            return 0;
    return 1;
}

static void rule_fini(struct annot_rule *r)
{
    free(r->conf_key);
    free(r->key);
    free(r->value);
    hmap_fini(&r->nodes);
}

void annot_conf_fini(struct annot_conf *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        rule_fini(&c->v[i]);
    free(c->v);
    c->v = NULL;
    c->n = 0;
}

int annot_conf_same(const struct annot_conf *a, const struct annot_conf *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i].conf_key, b->v[i].conf_key) ||
            strcmp(a->v[i].value, b->v[i].value))
            return 0;
    return 1;
}

/* The rule of c other than r that gives node name the annotation key
 * through a node list, or NULL. Two such leave the node's value to the
 * order of the file: refused. */
static const struct annot_rule *listed(const struct annot_conf *c,
                                       const char *key, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (!c->v[i].every && !strcmp(c->v[i].key, key) &&
            hmap_get(&c->v[i].nodes, name))
            return &c->v[i];
    return NULL;
}

/* r's node list from text, each name not given r's key by another list
 * of c. */
static int rule_nodes(const struct annot_conf *c, struct annot_rule *r,
                      const char *list, struct loom_error *err)
{
    struct strv names = {0};
    const struct annot_rule *o;
    int rc = 0;

    if (!*list)
        return loom_error_set(err, LOOM_EINVAL, "key '%s': the node list "
                              "between [ and ] is empty", r->conf_key);
    if (hostlist_expand(list, LOOM_EINVAL, &names, err) < 0) {
        strv_fini(&names);
        return loom_error_prefix(err, "key '%s': node list '%s'",
                                 r->conf_key, list);
    }
    for (size_t i = 0; i < names.n && rc == 0; i++)
        if ((o = listed(c, r->key, names.v[i])))
            rc = loom_error_set(err, LOOM_EINVAL, "key '%s': node %s has "
                                "annotation '%s' from key '%s' already",
                                r->conf_key, names.v[i], r->key,
                                o->conf_key);
        else if (hmap_put(&r->nodes, names.v[i], r) < 0)
            rc = loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    strv_fini(&names);
    return rc;
}

static int read_cb(void *arg, const char *rest, const char *value,
                   struct loom_error *err)
{
    struct annot_conf *c = arg;
    struct annot_rule r = {0}, *grown;
    const char *key = NULL;
    char *list = NULL;
    size_t klen = strlen(PREFIX) + strlen(rest) + 1;

    hmap_init(&r.nodes);
    if (!(r.conf_key = malloc(klen)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    snprintf(r.conf_key, klen, "%s%s", PREFIX, rest);
    if (*rest == '.') {
        key = rest + 1;
        r.every = 1;
    } else if (*rest == '[') {
        const char *close = strrchr(rest, ']');
        if (close && close[1] == '.') {
            key = close + 2;
            list = strndup(rest + 1, (size_t)(close - rest - 1));
            if (!list) {
                loom_error_set(err, LOOM_EINTERNAL, "out of memory");
                goto error;
            }
        }
    }
    if (!key) {
        loom_error_set(err, LOOM_EINVAL, "unknown key '%s': an annotation "
                       "is annotate.KEY (every node) or annotate[NODES].KEY "
                       "(NODES a list such as n[1-4],gpu7)", r.conf_key);
        goto error;
    }
    if (!name_ok(key)) {
        loom_error_set(err, LOOM_EINVAL, "key '%s': an annotation name has "
                       "1 to %d letters, digits, '-', '_' or '.'",
                       r.conf_key, ANNOT_KEY_MAX);
        goto error;
    }
    if (!(r.key = strdup(key)) || !(r.value = strdup(value))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    if (list && rule_nodes(c, &r, list, err) < 0)
        goto error;
    if (!(grown = realloc(c->v, (c->n + 1) * sizeof(*grown)))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    c->v = grown;
    c->v[c->n++] = r;
    free(list);
    return 0;
error:
    free(list);
    rule_fini(&r);
    return -1;
}

int annot_conf_read(struct conf_section *sec, struct annot_conf *out,
                    struct loom_error *err)
{
    if (conf_each_prefixed(sec, PREFIX, read_cb, out, err) < 0) {
        annot_conf_fini(out);
        return -1;
    }
    return 0;
}

/* ---- goal and reports, from the maintenance thread ---------------------- */

/* "cluster/name" -> json_t object (owned). Set by the maintenance thread,
 * read by the workers that render nodes. */
static struct {
    pthread_mutex_t lock;
    struct hmap m;
} state = {PTHREAD_MUTEX_INITIALIZER, {0}};

static void decref(void *p)
{
    json_decref(p);
}

void infra_annot_set(const char *node_id, json_t *attrs)
{
    json_t *copy = json_object_size(attrs) ? json_deep_copy(attrs) : NULL;

    pthread_mutex_lock(&state.lock);
    json_decref(hmap_del(&state.m, node_id));
    if (copy && hmap_put(&state.m, node_id, copy) < 0)
        json_decref(copy);
    pthread_mutex_unlock(&state.lock);
}

void infra_annot_clear(void)
{
    pthread_mutex_lock(&state.lock);
    hmap_fini_values(&state.m, decref);
    hmap_init(&state.m);
    pthread_mutex_unlock(&state.lock);
}

/* ---- a node's annotations ----------------------------------------------- */

static int put_str(json_t *o, const char *k, const char *v)
{
    return json_object_set_new(o, k, json_string(v));
}

json_t *annot_node(const struct annot_conf *c, const char *node_id,
                   const char *name)
{
    json_t *o = json_object(), *from;
    int rc = o ? 0 : -1;

    for (int pass = 0; c && pass < 2 && rc == 0; pass++)
        for (size_t i = 0; i < c->n && rc == 0; i++) {
            const struct annot_rule *r = &c->v[i];
            if (pass == 0 ? r->every
                          : !r->every && hmap_get(&r->nodes, name))
                rc = put_str(o, r->key, r->value);
        }
    if (rc == 0) {
        pthread_mutex_lock(&state.lock);
        from = state.m.n ? hmap_get(&state.m, node_id) : NULL;
        if (from) {
            json_t *copy = json_deep_copy(from);
            rc = copy ? json_object_update(o, copy) : -1;
            json_decref(copy);
        }
        pthread_mutex_unlock(&state.lock);
    }
    if (rc < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* KEY=text of v appended to out: a string as it is, 6.1 as "6.1", true,
 * false; anything else (null, an object) left out. 0, or -1 when out of
 * memory. */
static int push_label(struct strv *out, const char *k, json_t *v)
{
    char buf[64];

    if (json_is_string(v))
        return strv_push_kv(out, k, json_string_value(v));
    if (json_is_integer(v))
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, sizeof(buf), "%.15g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
    else
        return 0;
    return strv_push_kv(out, k, buf);
}

int annot_labels(json_t *annotations, struct strv *out)
{
    const char *k;
    json_t *v, *e;
    size_t i;

    json_object_foreach(annotations, k, v) {
        if (!json_is_array(v)) {
            if (push_label(out, k, v) < 0)
                return -1;
            continue;
        }
        json_array_foreach(v, i, e)
            if (push_label(out, k, e) < 0)
                return -1;
    }
    return 0;
}
