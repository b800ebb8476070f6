/* runtime.c - /v1/runtime and /metrics. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/api/api.h"
#include "core/domain.h"
#include "core/jsonx.h"
#include "core/jobcount.h"
#include "core/metrics.h"
#include "core/leader.h"
#include "core/opstats.h"
#include "core/runtime.h"
#include "core/timeutil.h"
#include "grid/grid.h"
#include "maintenance/maint.h"
#include "scheduler/sched.h"

/* Fair share's usage per owner: a reader who may not see another's jobs
 * sees only its own. */
static void fairshare_private(const struct http_req *rq, json_t *sched)
{
    json_t *owners = json_object_get(json_object_get(sched, "fairshare"),
                                     "owners"), *mine;

    if (!owners || api_others_see(rq) != API_SEE_NOTHING)
        return;
    mine = json_object_get(owners, rq->who.subject);
    json_incref(mine);
    json_object_clear(owners);
    if (mine)
        json_object_set_new(owners, rq->who.subject, mine);
}

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
    fairshare_private(rq, st);
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
 * whole, with HELP and TYPE): the clusters and their nodes from the
 * snapshot, the jobs from their counts (core/jobcount.h), what the threads
 * recorded (core/metrics.h). Nothing here walks the jobs. */
void api_metrics(struct http_req *rq, struct http_resp *rs,
                 const struct api_route_args *a)
{
    struct snapshot *s = snapshot_get();
    struct metrics_out o = {0};
    struct loom_error err;

    metrics_family(&o, "loom_cluster_up", "gauge", "Whether the cluster "
                   "answered its last polls: 1 up, 0 degraded or "
                   "unreachable.");
    for (size_t i = 0; s && i < s->n_clusters; i++) {
        metrics_printf(&o, "loom_cluster_up{cluster=\"");
        metrics_label(&o, s->clusters[i]->name);
        metrics_printf(&o, "\"} %d\n", !strcmp(s->clusters[i]->state, "up"));
    }
    metrics_family(&o, "loom_cluster_nodes", "gauge", "Nodes of the "
                   "cluster, as last polled.");
    for (size_t i = 0; s && i < s->n_clusters; i++) {
        metrics_printf(&o, "loom_cluster_nodes{cluster=\"");
        metrics_label(&o, s->clusters[i]->name);
        metrics_printf(&o, "\"} %zu\n", s->clusters[i]->n_nodes);
    }
    metrics_family(&o, "loom_nodes", "gauge", "Nodes of the cluster by the "
                   "state they show (every state, zeros included).");
    for (size_t i = 0; s && i < s->n_clusters; i++)
        for (size_t k = 0; k < DOMAIN_NODE_STATES_N; k++) {
            metrics_printf(&o, "loom_nodes{cluster=\"");
            metrics_label(&o, s->clusters[i]->name);
            metrics_printf(&o, "\",state=\"%s\"} %zu\n",
                           domain_node_states.names[k],
                           s->clusters[i]->nodes_by_state[k]);
        }
    snapshot_put(s);
    jobcount_render(&o);
    metrics_render(&o);
    if (o.oom) {
        free(o.p);
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    rs->status = 200;
    rs->body = o.p;
    rs->ctype = "text/plain; version=0.0.4";
}
