/* query.c - a request's query parameters checked against its route's
 * table (route.c): names, repeats, empty values, control characters, and
 * each value against its domain. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/hostlist.h"
#include "core/limits.h"
#include "core/timeutil.h"

/* s[0..n) as a client would write it: printable ASCII as it is, other
 * bytes %XX (so that a message can always show it). Returns out. */
static const char *shown(const char *s, size_t n, char *out, size_t size)
{
    static const char digits[] = "0123456789ABCDEF";
    size_t o = 0;

    for (size_t i = 0; i < n && o + 4 <= size; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f) {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = digits[c >> 4];
            out[o++] = digits[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* "GET /v1/jobs takes cluster, state and owner" or "... no query
 * parameters", for the message about an unknown one. */
static void takes(const struct http_req *rq, const struct api_param *params,
                  char *out, size_t size)
{
    size_t len = (size_t)snprintf(out, size, "%s %.200s takes ", rq->method,
                                  rq->path ? rq->path : "");
    int n = 0;

    while (params[n].name)
        n++;
    if (!n)
        snprintf(out + len, size - len, "no query parameters");
    for (int i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(out + len, size - len, "%s%s",
                                !i ? "" : i + 1 < n ? ", " : " and ",
                                params[i].name);
}

static int find(const struct api_param *params, const struct http_param *p)
{
    for (int k = 0; params[k].name; k++)
        if (strlen(params[k].name) == p->key_len &&
            !strcmp(params[k].name, p->key))
            return k;
    return -1;
}

/* The names and values as sent: each known, once, with a value of text. */
static int check_names(const struct http_req *rq,
                       const struct api_param *params,
                       struct api_route_args *a, struct loom_error *err)
{
    char key[200], all[400];

    if (rq->query_over)
        return loom_error_set(err, LOOM_EINVAL, "more than %d query "
                              "parameters", HTTP_QUERY_MAX);
    for (size_t i = 0; i < rq->n_query; i++) {
        const struct http_param *p = &rq->query[i];
        int k = find(params, p);
        shown(p->key, p->key_len, key, sizeof(key));
        if (k < 0) {
            takes(rq, params, all, sizeof(all));
            return loom_error_field(err, LOOM_EINVAL, key, "unknown query "
                                    "parameter '%s': %s", key, all);
        }
        if (a->value[k])
            return loom_error_field(err, LOOM_EINVAL, key, "query parameter "
                                    "%s is given twice", key);
        if (p->bad_escape)
            return loom_error_field(err, LOOM_EINVAL, key, "query parameter "
                                    "%s has a '%%' without two hex digits "
                                    "after it (a '%%' itself is %%25)", key);
        if (!p->value_len)
            return loom_error_field(err, LOOM_EINVAL, key, "query parameter "
                                    "%s needs a value (%s=...)", key, key);
        if (!p->value_text)
            return loom_error_field(err, LOOM_EINVAL, key, "query parameter "
                                    "%s has a control character or is not "
                                    "UTF-8 text", key);
        a->value[k] = p->value;
    }
    return 0;
}

/* ?cluster=: one of the configured clusters. */
static int check_cluster(const char *v, struct loom_error *err)
{
    struct snapshot *s = snapshot_get();
    char all[300] = "";
    size_t len = 0;
    int found = 0;

    for (size_t i = 0; s && i < s->n_clusters; i++) {
        found |= !strcmp(s->clusters[i]->name, v);
        if (len < sizeof(all))
            len += (size_t)snprintf(all + len, sizeof(all) - len, "%s%s",
                                    !i ? "" : i + 1 < s->n_clusters
                                                  ? ", " : " and ",
                                    s->clusters[i]->name);
    }
    snapshot_put(s);
    if (found)
        return 0;
    return loom_error_field(err, LOOM_EINVAL, "cluster", "query parameter "
                            "cluster: there is no cluster '%.100s'; the "
                            "clusters are %s", v, all);
}

/* ?node=: a node's id, or its name with ?cluster=; a[node] becomes the id. */
static int check_node(struct api_route_args *a, int k, struct loom_error *err)
{
    const char *given = api_param(a, "cluster");
    char *cluster = given ? strdup(given) : NULL;
    struct strv name = {0};
    struct snapshot *s = NULL;
    struct scluster *c;
    int rc = -1;

    if (given && !cluster) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    if (domain_node_add(a->value[k], &cluster, &name, "node", err) < 0) {
        loom_error_prefix(err, "query parameter node");
        goto out;
    }
    s = snapshot_get();
    c = s ? snapshot_cluster(s, cluster) : NULL;
    if (!c || !scluster_node(c, name.v[0])) {
        loom_error_field(err, LOOM_EINVAL, "node", "query parameter node: "
                         "there is no node %.100s/%.100s", cluster,
                         name.v[0]);
        goto out;
    }
    snprintf(a->node, sizeof(a->node), "%s/%s", cluster, name.v[0]);
    a->value[k] = a->node;
    rc = 0;
out:
    snapshot_put(s);
    strv_fini(&name);
    free(cluster);
    return rc;
}

/* "local/n[1-2], simA/n[1-4]": what nodes there are, for a message. */
static void nodes_known(const struct snapshot *s, const char *cluster,
                        char *out, size_t size)
{
    size_t len = 0;

    out[0] = '\0';
    for (size_t i = 0; s && i < s->n_clusters && len < size; i++) {
        const struct scluster *c = s->clusters[i];
        char **names = calloc(c->n_nodes + 1, sizeof(*names));
        char *list;
        if (cluster && strcmp(cluster, c->name) != 0) {
            free(names);
            continue;
        }
        for (size_t k = 0; names && k < c->n_nodes; k++)
            names[k] = c->nodes[k].name;
        list = names ? hostlist_compress(names, c->n_nodes) : NULL;
        len += (size_t)snprintf(out + len, size - len, "%s%s/%.200s",
                                len ? ", " : "", c->name,
                                list ? list : "?");
        free(list);
        free(names);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void api_strv_sort(struct strv *s)
{
    if (s->n)
        qsort(s->v, s->n, sizeof(*s->v), cmp_str);
}

int api_strv_has(const struct strv *s, const char *name)
{
    return name && s->n &&
           bsearch(&name, s->v, s->n, sizeof(*s->v), cmp_str) != NULL;
}

/* One item of a node list, an id or a bare name, as ids into ids. */
static int node_ids(const struct snapshot *s, const char *item,
                    const char *cluster, struct strv *ids,
                    struct loom_error *err)
{
    const char *slash = strchr(item, '/');
    char known[400], id[600];
    int found = 0;

    for (size_t i = 0; s && i < s->n_clusters; i++) {
        const struct scluster *c = s->clusters[i];
        size_t cl = strlen(c->name);
        const char *name = item;
        if (slash && ((size_t)(slash - item) != cl ||
                      strncmp(item, c->name, cl) != 0))
            continue;
        if (slash)
            name = slash + 1;
        if (cluster && strcmp(cluster, c->name) != 0)
            continue;
        if (!scluster_node(c, name))
            continue;
        snprintf(id, sizeof(id), "%s/%s", c->name, name);
        if (strv_push(ids, id) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        found = 1;
    }
    if (found)
        return 0;
    nodes_known(s, cluster, known, sizeof(known));
    return loom_error_field(err, LOOM_EINVAL, "nodelist", "query parameter "
                            "nodelist: there is no node '%.100s'%s%.100s; "
                            "the nodes are %s", item,
                            cluster ? " in cluster " : "",
                            cluster ? cluster : "", known);
}

int api_nodelist_ids(const char *list, const char *cluster, struct strv *ids,
                     struct loom_error *err)
{
    struct strv items = {0};
    struct snapshot *s;
    int rc = 0;

    if (hostlist_expand(list, LOOM_EINVAL, &items, err) < 0) {
        char why[200];
        snprintf(why, sizeof(why), "%.150s", err->message);
        strv_fini(&items);
        return loom_error_field(err, LOOM_EINVAL, "nodelist", "query "
                                "parameter nodelist: '%.100s' is not a "
                                "node list such as n[1-4],gpu7: %s", list,
                                why);
    }
    s = snapshot_get();
    for (size_t i = 0; rc == 0 && i < items.n; i++)
        rc = node_ids(s, items.v[i], cluster, ids, err);
    snapshot_put(s);
    strv_fini(&items);
    if (rc == 0)
        api_strv_sort(ids);
    return rc;
}

int api_nodelist_has(const struct strv *ids, const char *cluster,
                     const char *name)
{
    char id[600];

    snprintf(id, sizeof(id), "%s/%s", cluster, name);
    return api_strv_has(ids, id);
}

static const struct domain *named(enum api_qdom dom)
{
    switch (dom) {
    case API_Q_JOB_STATE: return &domain_job_states;
    case API_Q_NODE_STATE: return &domain_node_states;
    case API_Q_RESV_STATE: return &domain_resv_states;
    case API_Q_PURPOSE: return &domain_resv_purposes;
    case API_Q_QUEUE_VIEW: return &domain_queue_views;
    case API_Q_MAINT_STATE: return &domain_maint_states;
    default: return NULL;
    }
}

/* One value against its domain. */
static int check_value(struct api_route_args *a, int k,
                       struct loom_error *err)
{
    const struct api_param *p = &a->params[k];
    const char *v = a->value[k];
    int64_t n;
    time_t t;

    switch (p->dom) {
    case API_Q_TEXT:
        return 0;
    case API_Q_CLUSTER:
        return check_cluster(v, err);
    case API_Q_NODE:
        return check_node(a, k, err);
    case API_Q_JOB_STATES: {
        unsigned bits;
        if (domain_list_parse(&domain_job_states, v, &bits, p->name,
                              err) == 0)
            return 0;
        return loom_error_prefix(err, "query parameter %s", p->name);
    }
    case API_Q_NODELIST: {
        struct strv ids = {0};
        int rc = api_nodelist_ids(v, api_param(a, "cluster"), &ids, err);
        strv_fini(&ids);
        return rc;
    }
    case API_Q_LIMIT:
        if (domain_id_parse(v, &n) == 0 && n <= LOOM_LIST_LIMIT_MAX)
            return 0;
        return loom_error_field(err, LOOM_EINVAL, p->name, "query parameter "
                                "limit must be a whole number from 1 to "
                                "%ld, not '%.100s'", LOOM_LIST_LIMIT_MAX, v);
    case API_Q_AFTER:
        if (!strcmp(v, "0") || domain_id_parse(v, &n) == 0)
            return 0;
        return loom_error_field(err, LOOM_EINVAL, p->name, "query parameter "
                                "after must be a job id or 0, not '%.100s'",
                                v);
    case API_Q_STREAM:
        if (!strcmp(v, "stdout") || !strcmp(v, "stderr"))
            return 0;
        return loom_error_field(err, LOOM_EINVAL, p->name, "query parameter "
                                "stream must be stdout or stderr, not "
                                "'%.100s'", v);
    case API_Q_OFFSET:
        if (!strcmp(v, "0") ||
            (domain_id_parse(v, &n) == 0 && n <= LOOM_OFFSET_MAX))
            return 0;
        return loom_error_field(err, LOOM_EINVAL, p->name, "query parameter "
                                "offset must be a whole number of bytes from "
                                "0 to %lld, not '%.100s'",
                                (long long)LOOM_OFFSET_MAX, v);
    case API_Q_JOB_FIELDS: {
        uint64_t bits;
        return api_fields_parse(v, &bits, err);
    }
    case API_Q_JOB_IDS: {
        struct api_job_ref *refs;
        size_t n_refs;
        int rc = api_job_ids_parse(v, &refs, &n_refs, err);
        free(refs);
        return rc;
    }
    case API_Q_NAMES:
        return api_list_check(p->name, v, err);
    case API_Q_TIME:
        if (time_parse_when(v, &t) == 0)
            return 0;
        return loom_error_field(err, LOOM_EINVAL, p->name, "query parameter "
                                "%s must be an RFC 3339 UTC time (such as "
                                "2026-11-26T10:00:00Z) or whole seconds "
                                "since the epoch, not '%.100s'", p->name, v);
    default:
        if (domain_check(named(p->dom), v, p->name, err) == 0)
            return 0;
        return loom_error_prefix(err, "query parameter %s", p->name);
    }
}

int api_query_check(const struct http_req *rq,
                    const struct api_param *params, struct api_route_args *a,
                    struct loom_error *err)
{
    a->params = params;
    memset(a->value, 0, sizeof(a->value));
    if (check_names(rq, params, a, err) < 0)
        return -1;
    for (int k = 0; params[k].name; k++)
        if (a->value[k] && check_value(a, k, err) < 0)
            return -1;
    return 0;
}

const char *api_param(const struct api_route_args *a, const char *name)
{
    for (int k = 0; a->params && a->params[k].name; k++)
        if (!strcmp(a->params[k].name, name))
            return a->value[k];
    return NULL;
}

void api_query_append(char *out, size_t n, const char *name,
                      const char *value)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t off = strlen(out);

    if (!value)
        return;
    off += (size_t)snprintf(out + off, n > off ? n - off : 0, "&%s=", name);
    for (; *value && off + 4 < n; value++) {
        unsigned char c = (unsigned char)*value;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || strchr("-._~", c)) {
            out[off++] = (char)c;
        } else {
            out[off++] = '%';
            out[off++] = hex[c >> 4];
            out[off++] = hex[c & 15];
        }
    }
    out[off < n ? off : n - 1] = '\0';
}
