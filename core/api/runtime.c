/* runtime.c - /v1/runtime and /metrics. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/jsonx.h"
#include "core/leader.h"
#include "core/opstats.h"
#include "core/runtime.h"
#include "core/timeutil.h"
#include "grid/grid.h"
#include "maintenance/maint.h"
#include "scheduler/sched.h"

void api_runtime_get(struct http_req *rq, struct http_resp *rs,
                     const struct api_route_args *a)
{
    struct snapshot *s;
    struct http_resp sched = {0}, maint = {0};
    json_t *o, *clusters, *st, *mt, *gr;
    char *grid;

    if (!leader_threads_up()) { /* a standby, or taking over */
        api_runtime_standby(rs);
        return;
    }
    s = snapshot_get();
    clusters = json_array();
    grid = grid_status_json();
    for (size_t i = 0; s && i < s->n_clusters; i++)
        json_array_append_new(clusters, json_pack(
            "{s:s, s:s, s:i}", "name", s->clusters[i]->name, "state",
            s->clusters[i]->state, "nodes", (int)s->clusters[i]->n_nodes));
    snapshot_put(s);
    api_call(sched_queue(), SCHED_STATUS, NULL, NULL, &sched);
    api_call(maint_queue(), MAINT_STATUS, NULL, NULL, &maint);
    st = sched.body ? json_loads(sched.body, 0, NULL) : NULL;
    mt = maint.body ? json_loads(maint.body, 0, NULL) : NULL;
    gr = grid ? json_loads(grid, 0, NULL) : NULL;
    o = json_pack("{s:s, s:I, s:o, s:[ssss], s:o, s:o, s:o, s:o}",
                  "version", PACKAGE_VERSION, "uptime_s",
                  (json_int_t)(time_real() - runtime_started_at()),
                  "leader", api_leader_json(),
                  "threads", "server", "scheduler", "maintenance", "runtime",
                  "clusters", clusters, "scheduler", st ? st : json_null(),
                  "maintenance", mt ? mt : json_null(),
                  "grid", gr ? gr : json_null());
    free(sched.body);
    free(maint.body);
    free(grid);
    rs->status = 200;
    /* times in ms: six digits say them (the default 17 shows the binary
     * fraction, 0.070139999999999994) */
    rs->body = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(o);
}

static const struct jx_field sched_fields[] = {
    {"enabled", JX_BOOL, 1},
    {NULL, 0, 0},
};

void api_runtime_post(struct http_req *rq, struct http_resp *rs,
                      const struct api_route_args *a)
{
    struct loom_error err;
    json_t *body;

    if (!strcmp(a->seg[1], "reload")) {
        api_call(runtime_queue(), RUNTIME_RELOAD, NULL, NULL, rs);
    } else if (!strcmp(a->seg[1], "shutdown")) {
        msgq_post(runtime_queue(),
                  msg_create(RUNTIME_SHUTDOWN, NULL, NULL, NULL));
        rs->status = 202;
        rs->body = strdup("{\"status\":\"stopping\"}");
    } else if (!strcmp(a->seg[1], "scheduler")) {
        body = jx_parse_object(rq->body, rq->len, &err);
        if (!body || jx_check(body, "", sched_fields, &err) < 0) {
            json_decref(body);
            http_error(rs, &err);
            return;
        }
        api_call(sched_queue(), SCHED_ENABLE,
                 (void *)(intptr_t)json_is_true(json_object_get(body,
                                                                "enabled")),
                 NULL, rs);
        json_decref(body);
    } else {
        loom_error_set(&err, LOOM_ENOENT, "no such resource: %s", rq->path);
        http_error(rs, &err);
    }
}

/* Prometheus text (what promtool check metrics accepts: every family
 * whole, with HELP and TYPE): clusters, jobs by state, adaptor calls. */
void api_metrics(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a)
{
    static const char *const states[] = {"pending", "held", "starting",
        "running", "suspended", "completed", "failed", "cancelled"};
    struct snapshot *s = snapshot_get();
    size_t count[8] = {0}, cap = 65536, off = 0;
    char *out = malloc(cap);
    int64_t max = s ? jobtab_max_id(s->jobs) : 0;

    if (!out) {
        snapshot_put(s);
        rs->status = 500;
        return;
    }
#define EMIT(...)                                                            \
    do {                                                                     \
        int n_ = snprintf(out + off, cap - off, __VA_ARGS__);                \
        if (n_ > 0 && (size_t)n_ < cap - off)                                \
            off += (size_t)n_;                                               \
    } while (0)
    EMIT("# HELP loom_cluster_up Whether the cluster answered its last "
         "polls: 1 up, 0 degraded or unreachable.\n"
         "# TYPE loom_cluster_up gauge\n");
    for (size_t i = 0; s && i < s->n_clusters; i++)
        EMIT("loom_cluster_up{cluster=\"%s\"} %d\n", s->clusters[i]->name,
             !strcmp(s->clusters[i]->state, "up"));
    EMIT("# HELP loom_cluster_nodes Nodes of the cluster, as last polled.\n"
         "# TYPE loom_cluster_nodes gauge\n");
    for (size_t i = 0; s && i < s->n_clusters; i++)
        EMIT("loom_cluster_nodes{cluster=\"%s\"} %zu\n", s->clusters[i]->name,
             s->clusters[i]->n_nodes);
    for (int64_t id = 1; id <= max; id++) {
        struct jview *v = jobtab_get(s->jobs, id);
        for (size_t k = 0; v && k < 8; k++)
            if (!strcmp(v->state, states[k]))
                count[k]++;
    }
    EMIT("# HELP loom_jobs Jobs of the fabric by state (every state, zeros "
         "included).\n"
         "# TYPE loom_jobs gauge\n");
    for (size_t k = 0; k < 8; k++)
        EMIT("loom_jobs{state=\"%s\"} %zu\n", states[k], count[k]);
    off += opstats_render(out + off, cap - off);
#undef EMIT
    snapshot_put(s);
    rs->status = 200;
    rs->body = out;
    rs->ctype = "text/plain; version=0.0.4";
}
