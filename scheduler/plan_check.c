/* plan_check.c - what the API asks of the planner: could a job ever run,
 * may it start on these nodes now, where does a reservation fit. */
/* SPDX-License-Identifier: MIT */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/plan_state.h"

/* ---- checks for the API ------------------------------------------------- */

int plan_feasible(const struct plan_cluster *clusters, size_t n,
                  const struct plan_job *j, char *why, size_t why_len)
{
    size_t best = 0, want = j->nodes > 0 ? (size_t)j->nodes : 1;
    int pinned_seen = 0, queue_seen = 0, walltime_over = 0;
    const char *only_named = NULL; /* would fit, takes named jobs only */
    const struct plan_cluster *only_as = NULL; /* would fit, runs as another
                                                  account */

    for (size_t c = 0; c < n; c++) {
        const struct plan_queue *q = j->queue ? plan_queue_of(&clusters[c],
                                                          j->queue) : NULL;
        int takes = plan_cluster_takes(&clusters[c], j);
        size_t count = 0;
        if (j->cluster && strcmp(j->cluster, clusters[c].name))
            continue;
        pinned_seen = 1;
        if (j->queue && !q)
            continue;
        queue_seen |= takes;
        if (q && q->max_walltime_s && j->walltime_s > q->max_walltime_s) {
            walltime_over |= takes;
            continue;
        }
        for (size_t i = 0; i < clusters[c].n_nodes; i++)
            count += plan_node_matches(&clusters[c].nodes[i], j);
        if (count >= want && takes)
            return 1;
        if (count >= want && !plan_cluster_runs_as(&clusters[c], j)) {
            if (!only_as)
                only_as = &clusters[c];
        } else if (count >= want && !only_named) {
            only_named = clusters[c].name;
        }
        if (count > best && takes)
            best = count;
    }
    if (j->cluster && !pinned_seen)
        snprintf(why, why_len, "no cluster is named %s", j->cluster);
    else if (only_as && !only_named)
        plan_why_account(only_as, j, why, why_len);
    else if (only_named)
        snprintf(why, why_len, "it fits only on %s, a cluster that takes "
                 "only the jobs that name it (request.cluster)", only_named);
    else if (j->queue && !queue_seen)
        snprintf(why, why_len, "no cluster%s%s has a queue named %s",
                 j->cluster ? " " : "", j->cluster ? j->cluster : "",
                 j->queue);
    else if (walltime_over && best == 0)
        snprintf(why, why_len, "walltime %ld s exceeds the limit of queue "
                 "%s", j->walltime_s, j->queue);
    else
        snprintf(why, why_len, "needs %zu node(s) with %d cpus, %ld MiB "
                 "and %d gpus%s; the largest matching set has %zu",
                 want, j->per_node.cpus, j->per_node.memory_mb,
                 j->per_node.gpus, j->n_features ? " and its features" : "",
                 best);
    return 0;
}

int plan_fits_nodes(const struct plan *p, const struct plan_job *j,
                    size_t c, const size_t *nodes, size_t n_nodes,
                    char *why, size_t why_len)
{
    struct prof_need need = plan_need_of(j);

    if (c < p->n_cl && !plan_cluster_runs_as(p->cl[c].def, j)) {
        plan_why_account(p->cl[c].def, j, why, why_len);
        return 0;
    }
    if (c < p->n_cl && !j->cluster && !plan_cluster_takes(p->cl[c].def, j)) {
        snprintf(why, why_len, "cluster %s takes only the jobs that name it "
                 "(request.cluster)", p->cl[c].def->name);
        return 0;
    }
    if (c >= p->n_cl || !plan_cluster_matches(p, c, j)) {
        snprintf(why, why_len, "the job cannot run on this cluster (pin, "
                 "queue or reservation)");
        return 0;
    }
    if (n_nodes != (size_t)(j->nodes > 0 ? j->nodes : 1)) {
        snprintf(why, why_len, "the job asks for %d node(s), %zu given",
                 j->nodes, n_nodes);
        return 0;
    }
    for (size_t k = 0; k < n_nodes; k++) {
        const struct plan_node *nd;
        if (nodes[k] >= p->cl[c].def->n_nodes) {
            snprintf(why, why_len, "no such node");
            return 0;
        }
        nd = &p->cl[c].def->nodes[nodes[k]];
        if (!nd->usable || !plan_node_matches(nd, j) ||
            !prof_fits(&p->cl[c].nodes[nodes[k]], p->now,
                       (double)j->walltime_s, &need)) {
            snprintf(why, why_len, "node %s cannot take the job now (state, "
                     "size, features, what runs there or a reservation)",
                     nd->name);
            return 0;
        }
        for (size_t m = 0; m < k; m++)
            if (nodes[m] == nodes[k]) {
                snprintf(why, why_len, "node %s is named twice", nd->name);
                return 0;
            }
    }
    return 1;
}

int plan_find_window(const struct plan *cp, size_t c, const size_t *nodes,
                     size_t n_nodes, size_t count,
                     const char *const *features, size_t n_features,
                     double not_before, double latest_start,
                     double duration_s, double *start, size_t **chosen,
                     char *why, size_t why_len)
{
    struct plan *p = (struct plan *)cp; /* scratch, and the nodes' floors
                                           (which change no answer) */
    struct prof_need need = {.whole = 1};
    size_t n = 0, want = n_nodes ? n_nodes : count;
    double t;

    *chosen = NULL;
    if (c >= p->n_cl || want == 0) {
        snprintf(why, why_len, "no nodes asked for");
        return 0;
    }
    if (not_before < p->now)
        not_before = p->now;
    if (n_nodes) {
        for (size_t k = 0; k < n_nodes; k++)
            p->cand[n++] = nodes[k];
    } else {
        const struct plan_cluster *cl = p->cl[c].def;
        struct plan_job j = {.features = features, .n_features = n_features};
        for (size_t i = 0; i < cl->n_nodes; i++)
            if (cl->nodes[i].usable && plan_node_matches(&cl->nodes[i], &j))
                p->cand[n++] = i;
    }
    t = plan_search(p, c, n, want, duration_s, &need, not_before,
               latest_start < not_before ? not_before : latest_start, 0);
    if (t >= PLAN_FOREVER || t > latest_start) {
        snprintf(why, why_len, "no window of %.0f s on %zu node(s) starts "
                 "by the deadline without running into a running job or "
                 "another reservation", duration_s, want);
        return 0;
    }
    if (!(*chosen = malloc(want * sizeof(**chosen))))
        return -1;
    memcpy(*chosen, p->pick, want * sizeof(**chosen));
    *start = t;
    return 1;
}
