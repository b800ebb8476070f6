/* infra.c - render clusters, nodes and queues into snapshot parts. */
/* SPDX-License-Identifier: MIT */
#include "adaptors/infra.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/annot.h"
#include "core/domain.h"
#include "core/hmap.h"
#include "core/jsonw.h"
#include "core/timeutil.h"

/* Nodes shown otherwise than their cluster says: "cluster/name" ->
 * reason (owned). In maintenance, set by the maintenance thread, and
 * paused, set by the same thread; read by the workers that render
 * nodes. */
struct marks {
    pthread_mutex_t lock;
    struct hmap m;
};
static struct marks maint = {PTHREAD_MUTEX_INITIALIZER, {0}};
static struct marks paused = {PTHREAD_MUTEX_INITIALIZER, {0}};

static void marks_set(struct marks *k, const char *node_id,
                      const char *reason)
{
    char *copy = reason ? strdup(reason) : NULL;

    pthread_mutex_lock(&k->lock);
    free(hmap_del(&k->m, node_id));
    if (copy && hmap_put(&k->m, node_id, copy) < 0)
        free(copy);
    pthread_mutex_unlock(&k->lock);
}

static void marks_clear(struct marks *k)
{
    pthread_mutex_lock(&k->lock);
    hmap_fini_values(&k->m, free);
    hmap_init(&k->m);
    pthread_mutex_unlock(&k->lock);
}

/* The node's reason (a copy the caller frees), or NULL: not marked. */
static char *marks_get(struct marks *k, const char *node_id)
{
    char *r = NULL;

    pthread_mutex_lock(&k->lock);
    if (k->m.n && hmap_get(&k->m, node_id))
        r = strdup(hmap_get(&k->m, node_id));
    pthread_mutex_unlock(&k->lock);
    return r;
}

void infra_maint_mark(const char *node_id, const char *reason)
{
    marks_set(&maint, node_id, reason);
}

void infra_maint_clear(void)
{
    marks_clear(&maint);
}

void infra_pause_mark(const char *node_id, const char *reason)
{
    marks_set(&paused, node_id, reason);
}

void infra_pause_clear(void)
{
    marks_clear(&paused);
}

/* Put the nodes of reservation r (a parsed record) into out, if it is an
 * active one of cluster. 0, or -1 when out of memory. */
static int resv_nodes(json_t *r, const char *cluster, struct hmap *out)
{
    const char *id = json_string_value(json_object_get(r, "id"));
    const char *cl = json_string_value(json_object_get(r, "cluster"));
    const char *st = json_string_value(json_object_get(r, "state"));
    size_t len = cl ? strlen(cl) : 0, k;
    json_t *v;

    if (!id || !cl || !st || strcmp(cl, cluster) || strcmp(st, "active"))
        return 0;
    json_array_foreach(json_object_get(r, "nodes"), k, v) {
        const char *node = json_string_value(v);
        char *copy;
        if (!node || strncmp(node, cl, len) || node[len] != '/' ||
            hmap_get(out, node + len + 1))
            continue;
        if (!(copy = strdup(id)) || hmap_put(out, node + len + 1, copy) < 0) {
            free(copy);
            return -1;
        }
    }
    return 0;
}

/* The active reservations of cluster as the scheduler last published
 * them: node name -> reservation id (both owned by the map: free the
 * values with free). Every poll asks, and the list keeps every
 * reservation ever made: only the records that say they are active (in
 * the compact form resv_render writes) are parsed. 0, or -1 when out of
 * memory. */
static int resv_active(const char *cluster, struct hmap *out)
{
    static const char active[] = "\"state\":\"active\"";
    struct snapshot *s = snapshot_get();
    const struct stext *t = s ? s->text[SNAP_RESV] : NULL;
    int rc = 0;

    hmap_init(out);
    for (size_t i = 0; t && t->row && i < t->n_rows && rc == 0; i++) {
        const char *row = t->text + t->row[i];
        size_t len = t->row[i + 1] - 1 - t->row[i];
        json_t *r;
        if (!memmem(row, len, active, sizeof(active) - 1))
            continue;
        r = json_loadb(row, len, 0, NULL);
        rc = resv_nodes(r, cluster, out);
        json_decref(r);
    }
    snapshot_put(s);
    return rc;
}

static char *id_of(const char *cluster, const char *name)
{
    size_t n = strlen(cluster) + strlen(name) + 2;
    char *id = malloc(n);

    if (id)
        snprintf(id, n, "%s/%s", cluster, name);
    return id;
}

static char *render(json_t *o)
{
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

/* The state a node shows: "maint" while in maintenance and "paused"
 * while paused (whatever its cluster says), "reserved" when idle inside
 * an active reservation, else what its cluster says. */
static const char *shown_state(const struct cl_node *n, const char *in_maint,
                               const char *in_pause, const char *resv)
{
    if (in_maint)
        return "maint";
    if (in_pause)
        return "paused";
    if (!n->state)
        return "unknown";
    return resv && !strcmp(n->state, "idle") ? "reserved" : n->state;
}

/* The node's lists: its features and queues as reported, and what a
 * job's features match (features and annotations). */
static int node_lists(struct snode *sn, const struct cl_node *n,
                      json_t *annotations)
{
    for (size_t i = 0; i < n->features.n; i++)
        if (strv_push(&sn->features, n->features.v[i]) < 0 ||
            strv_push(&sn->match, n->features.v[i]) < 0)
            return -1;
    for (size_t i = 0; i < n->queues.n; i++)
        if (strv_push(&sn->queues, n->queues.v[i]) < 0)
            return -1;
    return annot_labels(annotations, &sn->match);
}

/* resv: the active reservation the node is in, or NULL; annot: its
 * cluster's annotate keys, or NULL. */
static int node_fill(struct snode *sn, const char *cluster,
                     const struct cl_node *n, const char *resv,
                     const struct annot_conf *annot)
{
    struct jw w;
    char *in_maint, *in_pause, *why, *annot_text;
    json_t *annotations;

    sn->id = id_of(cluster, n->name);
    sn->name = strdup(n->name);
    in_maint = sn->id ? marks_get(&maint, sn->id) : NULL;
    in_pause = sn->id ? marks_get(&paused, sn->id) : NULL;
    why = in_maint ? in_maint : in_pause ? in_pause : n->reason;
    sn->state = strdup(shown_state(n, in_maint, in_pause, resv));
    sn->cpus = n->cpus;
    sn->cpus_alloc = n->cpus_alloc;
    sn->gpus = n->gpus;
    sn->gpus_alloc = n->gpus_alloc;
    sn->memory_mb = n->memory_mb;
    sn->memory_alloc_mb = n->memory_alloc_mb;
    annotations = sn->id ? annot_node(annot, sn->id, n->name) : NULL;
    /* most nodes have none: "{}" without rendering an empty object */
    annot_text = !annotations ? NULL
                 : json_object_size(annotations)
                     ? json_dumps(annotations, JSON_COMPACT)
                     : strdup("{}");
    if (!sn->id || !sn->name || !sn->state || !annot_text ||
        node_lists(sn, n, annotations) < 0) {
        json_decref(annotations);
        free(annot_text);
        free(in_maint);
        free(in_pause);
        return -1;
    }
    json_decref(annotations);
    /* written straight to text: every poll renders every node */
    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "id", sn->id);
    jw_kv_str(&w, "cluster", cluster);
    jw_kv_str(&w, "name", sn->name);
    jw_kv_str(&w, "state", sn->state);
    jw_kv_int(&w, "cpus", n->cpus);
    jw_kv_int(&w, "cpus_alloc", n->cpus_alloc);
    jw_kv_int(&w, "memory_mb", n->memory_mb);
    jw_kv_int(&w, "memory_alloc_mb", n->memory_alloc_mb);
    jw_kv_int(&w, "gpus", n->gpus);
    jw_kv_int(&w, "gpus_alloc", n->gpus_alloc);
    jw_kv_strs(&w, "features", n->features.v, n->features.n);
    jw_kv_strs(&w, "queues", n->queues.v, n->queues.n);
    jw_kv_str(&w, "reason", why);
    jw_kv_str(&w, "reservation", resv);
    free(in_maint);
    free(in_pause);
    jw_key(&w, "annotations");
    jw_raw(&w, annot_text);
    free(annot_text);
    jw_close(&w, '}');
    sn->json = jw_finish_fit(&w); /* kept until the next poll */
    if (!sn->json)
        return -1;
    sn->len = strlen(sn->json);
    return 0;
}

static int queue_fill(struct squeue *sq, const char *cluster,
                      const struct cl_queue *q)
{
    json_t *o;

    sq->id = id_of(cluster, q->name);
    sq->name = strdup(q->name);
    sq->state = strdup(q->state ? q->state : "open");
    sq->nodes = q->nodes;
    sq->max_walltime_s = q->max_walltime_s;
    if (!sq->id || !sq->name || !sq->state)
        return -1;
    o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:o}", "id", sq->id,
                  "cluster", cluster, "name", sq->name, "state", sq->state,
                  "nodes", q->nodes, "max_walltime_s",
                  q->max_walltime_s ? json_integer(q->max_walltime_s)
                                    : json_null());
    sq->json = o ? render(o) : NULL;
    if (!sq->json)
        return -1;
    sq->len = strlen(sq->json);
    return 0;
}

/* Join the node objects with commas, for the list endpoint. */
static int join_nodes(struct scluster *c)
{
    size_t total = 1, off = 0;

    for (size_t i = 0; i < c->n_nodes; i++)
        total += c->nodes[i].len + 1;
    c->nodes_json = malloc(total);
    if (!c->nodes_json)
        return -1;
    for (size_t i = 0; i < c->n_nodes; i++) {
        if (i)
            c->nodes_json[off++] = ',';
        memcpy(c->nodes_json + off, c->nodes[i].json, c->nodes[i].len);
        off += c->nodes[i].len;
    }
    c->nodes_json[off] = '\0';
    c->nodes_len = off;
    return 0;
}

struct scluster *infra_build(const struct infra_desc *d,
                             const struct cl_node_list *nodes,
                             const struct cl_queue_list *queues)
{
    struct scluster *c = calloc(1, sizeof(*c));
    struct hmap resv;
    char stamp[32];
    json_t *o;

    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    hmap_init(&c->node_index);
    if (resv_active(d->name, &resv) < 0)
        goto error;
    c->name = strdup(d->name);
    c->adaptor = strdup(d->adaptor);
    c->model = d->model;
    c->state = strdup(d->state);
    c->error = d->error ? strdup(d->error) : NULL;
    c->caps = d->caps;
    c->preference = d->preference;
    c->hold_for_loom = d->hold_for_loom;
    c->pinned_only = d->pinned_only;
    c->runs_as_user = d->runs_as_user;
    c->single_account = d->single_account ? strdup(d->single_account) : NULL;
    c->last_poll = d->last_poll;
    c->nodes = calloc(nodes->n ? nodes->n : 1, sizeof(*c->nodes));
    c->queues = calloc(queues->n ? queues->n : 1, sizeof(*c->queues));
    if (!c->name || !c->adaptor || !c->state || !c->nodes || !c->queues ||
        (d->single_account && !c->single_account))
        goto error;
    for (size_t i = 0; i < nodes->n; i++) {
        int st;
        c->n_nodes++;
        if (node_fill(&c->nodes[i], d->name, &nodes->v[i],
                      resv.n ? hmap_get(&resv, nodes->v[i].name) : NULL,
                      d->annot) < 0 ||
            hmap_put(&c->node_index, c->nodes[i].name, &c->nodes[i]) < 0)
            goto error;
        st = domain_find(&domain_node_states, c->nodes[i].state);
        c->nodes_by_state[st < 0 ? DOMAIN_NODE_STATES_N - 1 : st]++;
    }
    for (size_t i = 0; i < queues->n; i++) {
        c->n_queues++;
        if (queue_fill(&c->queues[i], d->name, &queues->v[i]) < 0)
            goto error;
    }
    time_format(d->last_poll, stamp);
    o = json_pack("{s:s, s:s, s:s, s:b, s:b, s:s?, s:s, s:i, s:s?, s:s?}",
                  "name", d->name, "adaptor", d->adaptor, "model", d->model,
                  "unpinned_jobs", !d->pinned_only, "runs_as_user",
                  d->runs_as_user, "single_account", d->single_account,
                  "state", d->state, "nodes", (int)nodes->n, "last_poll",
                  d->last_poll ? stamp : NULL, "error", d->error);
    if (o) {
        json_t *caps = json_array();
        for (unsigned bit = 1; bit <= LOOM_CAP_ALL; bit <<= 1)
            if (d->caps & bit)
                json_array_append_new(caps,
                                      json_string(adaptor_cap_name(bit)));
        json_object_set_new(o, "capabilities", caps);
    }
    if (o && d->via) {
        json_t *ops = json_object();
        for (int op = 0; op < LOOM_N_OPS; op++)
            if (d->via[op])
                json_object_set_new(ops, adaptor_op_name(op),
                                    json_string(d->via[op]));
        json_object_set_new(o, "operations", ops);
    }
    if (o && d->info)
        json_object_update(o, (json_t *)d->info);
    c->json = o ? render(o) : NULL;
    if (!c->json || join_nodes(c) < 0)
        goto error;
    hmap_fini_values(&resv, free);
    return c;
error:
    hmap_fini_values(&resv, free);
    scluster_unref(c);
    return NULL;
}
