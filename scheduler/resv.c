/* resv.c - advance reservations: the request, the record, its JSON. */
/* SPDX-License-Identifier: MIT */
#include "scheduler/resv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/domain.h"
#include "core/jsonw.h"
#include "core/jsonx.h"
#include "core/limits.h"
#include "core/timeutil.h"
#include "scheduler/job.h"

static const struct jx_field req_fields[] = {
    {"cluster", JX_STRING, 0},
    {"nodes", JX_ARRAY, 0},
    {"count", JX_INT, 0},
    {"features", JX_ARRAY, 0},
    {"start", JX_STRING, 0},
    {"end", JX_STRING, 0},
    {"not_before", JX_STRING, 0},
    {"deadline", JX_STRING, 0},
    {"duration_s", JX_INT, 0},
    {"purpose", JX_STRING, 0},
    {"reason", JX_STRING | JX_NULLABLE, 0},
    {NULL, 0, 0},
};

/* The states' names are the API's, kept in core/domain.c. */
_Static_assert(RESV_CANCELLED + 1 == DOMAIN_RESV_STATES_N,
               "enum resv_state and domain_resv_states differ");

const char *resv_state_name(enum resv_state s)
{
    return domain_resv_states.names[s];
}

int resv_state_final(enum resv_state s)
{
    return s == RESV_DONE || s == RESV_CANCELLED;
}

static int time_field(json_t *body, const char *key, time_t *out,
                      struct loom_error *err)
{
    const char *s = jx_str(body, key, NULL);

    if (s && time_parse(s, out) < 0)
        return loom_error_field(err, LOOM_EINVAL, key, "field '%s' must be "
                                "an RFC 3339 time such as "
                                "2026-11-21T20:00:00Z", key);
    return 0;
}

int node_ids_in(json_t *arr, char **cluster, struct strv *names,
                struct loom_error *err)
{
    struct strv refs = {0};
    int rc = job_strings_in(arr, "nodes", LOOM_COUNT_MAX, &refs, err);

    for (size_t i = 0; i < refs.n && rc == 0; i++)
        rc = domain_node_add(refs.v[i], cluster, names, "nodes", err);
    strv_fini(&refs);
    return rc;
}

static int window_in(json_t *body, time_t now, struct resv_req *rq,
                     struct loom_error *err)
{
    int has_start = json_object_get(body, "start") != NULL;
    int has_end = json_object_get(body, "end") != NULL;
    int flexible = json_object_get(body, "not_before") ||
                   json_object_get(body, "deadline");
    time_t end = 0;
    long long d;

    if (time_field(body, "start", &rq->start, err) < 0 ||
        time_field(body, "end", &end, err) < 0 ||
        time_field(body, "not_before", &rq->not_before, err) < 0 ||
        time_field(body, "deadline", &rq->deadline, err) < 0)
        return -1;
    /* Neither start nor not_before nor deadline: as soon as possible, as
     * a maintenance request without a window. */
    if (has_start && flexible)
        return loom_error_set(err, LOOM_EINVAL, "a reservation has a fixed "
                              "window (start) or a flexible one (not_before "
                              "and/or deadline), not both");
    if (has_end && !has_start)
        return loom_error_field(err, LOOM_EINVAL, "end", "end goes with "
                                "start; a flexible window gives duration_s");
    if (has_end && !json_object_get(body, "duration_s")) {
        if (end <= rq->start)
            return loom_error_field(err, LOOM_EINVAL, "end", "end must be "
                                    "after start");
        rq->duration_s = (long)(end - rq->start);
    } else {
        if (has_end)
            return loom_error_field(err, LOOM_EINVAL, "end", "give end or "
                                    "duration_s, not both");
        if (!json_object_get(body, "duration_s"))
            return loom_error_field(err, LOOM_EINVAL, "duration_s", "field "
                                    "'duration_s' is required");
        if (jx_int_range(body, "", "duration_s", 0, 1, LOOM_WINDOW_MAX_S, &d,
                         err) < 0)
            return -1;
        rq->duration_s = (long)d;
    }
    rq->fixed = has_start;
    if (!rq->fixed) {
        if (!rq->not_before)
            rq->not_before = now;
        if (!rq->deadline)
            rq->deadline = rq->not_before + LOOM_WINDOW_MAX_S;
        if (rq->deadline - rq->not_before < rq->duration_s)
            return loom_error_field(err, LOOM_EINVAL, "deadline", "the window "
                                    "from not_before to deadline is shorter "
                                    "than duration_s");
    }
    return 0;
}

int nodes_or_count_in(json_t *body, char **cluster, struct strv *nodes,
                      long *count, struct loom_error *err)
{
    long long n;

    if (jx_str(body, "cluster", NULL) &&
        !(*cluster = strdup(jx_str(body, "cluster", ""))))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (json_object_get(body, "nodes") &&
        node_ids_in(json_object_get(body, "nodes"), cluster, nodes, err) < 0)
        return -1;
    if (jx_int_range(body, "", "count", 0, 0, LOOM_COUNT_MAX, &n, err) < 0)
        return -1;
    *count = (long)n;
    if (json_object_get(body, "count") && n == 0)
        return loom_error_field(err, LOOM_EINVAL, "count", "count must be "
                                "from 1 to %ld", LOOM_COUNT_MAX);
    if (!nodes->n == !*count)
        return loom_error_field(err, LOOM_EINVAL, "nodes", "give the nodes "
                                "(their ids, or names with cluster) or a "
                                "count (with cluster), one of the two");
    if (!*cluster)
        return loom_error_field(err, LOOM_EINVAL, "cluster", "field "
                                "'cluster' is required with count");
    return 0;
}

int resv_req_parse(json_t *body, time_t now, struct resv_req *rq,
                   struct loom_error *err)
{
    const char *purpose;

    memset(rq, 0, sizeof(*rq));
    if (jx_check(body, "", req_fields, err) < 0)
        return -1;
    if (nodes_or_count_in(body, &rq->cluster, &rq->nodes, &rq->count,
                          err) < 0)
        return -1;
    if (job_strings_in(json_object_get(body, "features"), "features", 64,
                       &rq->features, err) < 0)
        return -1;
    if (rq->nodes.n && rq->features.n)
        return loom_error_field(err, LOOM_EINVAL, "features", "features "
                                "choose among nodes: they go with count");
    purpose = jx_str(body, "purpose", "user");
    if (domain_check(&domain_resv_purposes, purpose, "purpose", err) < 0)
        return -1;
    if (!(rq->purpose = strdup(purpose)) ||
        job_set_str(&rq->reason, jx_str(body, "reason", NULL)) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return window_in(body, now, rq, err);
}

void resv_req_fini(struct resv_req *rq)
{
    free(rq->cluster);
    strv_fini(&rq->nodes);
    strv_fini(&rq->features);
    free(rq->purpose);
    free(rq->reason);
    free(rq->account);
    memset(rq, 0, sizeof(*rq));
}

char *resv_render(const struct resv *r)
{
    struct jw w;
    char id[24], node[512];

    snprintf(id, sizeof(id), "%lld", (long long)r->id);
    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "id", id);
    jw_kv_str(&w, "purpose", r->purpose);
    jw_kv_str(&w, "owner", r->owner);
    jw_kv_str(&w, "cluster", r->cluster);
    jw_key(&w, "nodes");
    jw_open(&w, '[');
    for (size_t i = 0; i < r->nodes.n; i++) {
        snprintf(node, sizeof(node), "%s/%s", r->cluster, r->nodes.v[i]);
        jw_str(&w, node);
    }
    jw_close(&w, ']');
    jw_kv_time(&w, "start", r->start);
    jw_kv_time(&w, "end", r->end);
    jw_kv_str(&w, "state", resv_state_name(r->state));
    jw_kv_str(&w, "reason", r->reason);
    if (r->hold_from)
        jw_kv_time(&w, "hold_from", r->hold_from);
    if (r->maint) {
        snprintf(id, sizeof(id), "%lld", (long long)r->maint);
        jw_kv_str(&w, "maintenance", id);
    }
    jw_kv_str(&w, "account", r->account);
    jw_key(&w, "native");
    if (r->native_id) {
        jw_open(&w, '{');
        jw_kv_str(&w, "id", r->native_id);
        jw_kv_time(&w, "start", r->native_start);
        jw_kv_time(&w, "end", r->native_end);
        jw_close(&w, '}');
    } else {
        jw_null(&w);
    }
    jw_kv_str(&w, "native_error", r->native_error);
    jw_close(&w, '}');
    return jw_finish_fit(&w); /* kept as its view */
}

/* "native": null or {"id", "start", "end"}. 0, or 1 when unreadable. */
static int native_from_doc(struct resv *r, json_t *o)
{
    if (!json_is_object(o))
        return 0;
    return job_set_str(&r->native_id, jx_str(o, "id", NULL)) < 0 ||
           !r->native_id ||
           time_parse(jx_str(o, "start", ""), &r->native_start) < 0 ||
           time_parse(jx_str(o, "end", ""), &r->native_end) < 0;
}

struct resv *resv_from_doc(json_t *doc, struct loom_error *err)
{
    struct resv *r = calloc(1, sizeof(*r));
    int bad = !r, st;

    if (!r) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    r->id = strtoll(jx_str(doc, "id", "0"), NULL, 10);
    bad |= r->id <= 0;
    bad |= job_set_str(&r->purpose, jx_str(doc, "purpose", "user"));
    bad |= job_set_str(&r->owner, jx_str(doc, "owner", "?"));
    bad |= job_set_str(&r->cluster, jx_str(doc, "cluster", ""));
    bad |= node_ids_in(json_object_get(doc, "nodes"), &r->cluster, &r->nodes,
                       err) < 0;
    bad |= time_parse(jx_str(doc, "start", ""), &r->start) < 0;
    bad |= time_parse(jx_str(doc, "end", ""), &r->end) < 0;
    st = domain_find(&domain_resv_states, jx_str(doc, "state", ""));
    r->state = st >= 0 ? (enum resv_state)st : RESV_CANCELLED;
    bad |= job_set_str(&r->reason, jx_str(doc, "reason", NULL));
    if (jx_str(doc, "hold_from", NULL))
        bad |= time_parse(jx_str(doc, "hold_from", ""), &r->hold_from) < 0;
    r->maint = strtoll(jx_str(doc, "maintenance", "0"), NULL, 10);
    bad |= job_set_str(&r->account, jx_str(doc, "account", NULL));
    bad |= native_from_doc(r, json_object_get(doc, "native"));
    bad |= job_set_str(&r->native_error, jx_str(doc, "native_error", NULL));
    if (bad) {
        resv_destroy(r);
        loom_error_set(err, LOOM_EINVAL, "stored reservation is unreadable");
        return NULL;
    }
    return r;
}

void resv_destroy(struct resv *r)
{
    if (!r)
        return;
    free(r->purpose);
    free(r->owner);
    free(r->cluster);
    strv_fini(&r->nodes);
    free(r->reason);
    free(r->account);
    free(r->native_id);
    free(r->native_error);
    free(r);
}
