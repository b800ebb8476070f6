/* store_maint.h - the maintenance thread's tables in PostgreSQL: goal
 * state, actual reports, mismatches, maintenance requests, paused
 * nodes. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_STORE_MAINT_H
#define LOOM_CORE_STORE_MAINT_H

#include <stdint.h>

#include "core/error.h"
#include "core/store.h"

/* Writes take JSON text and run as one transaction each (one statement
 * over json_array_elements where there are many rows), so a call either
 * lands whole or not at all. 0, or -1 with err. */

/* items: [{"node": "c/n", "attributes": {...}}, ...]; replaces each
 * node's goal; a node with {} loses its row. */
int store_goal_put(struct store *st, const char *items, struct loom_error *err);
/* node, and [{"attribute", "value", "time" (epoch s)}, ...]. */
int store_actual_put(struct store *st, const char *node, const char *reports,
                     struct loom_error *err);
/* set: [{"node", "attribute", "goal", "actual", "since" (epoch s)}] are
 * written (insert or replace); gone: [{"node", "attribute"}] deleted. */
int store_mismatch_apply(struct store *st, const char *set, const char *gone,
                         struct loom_error *err);
int store_maint_put(struct store *st, int64_t id, const char *state,
                    const char *doc, struct loom_error *err);
/* The requests with these ids deleted (those that are stored). */
int store_maint_delete(struct store *st, const int64_t *ids, size_t n,
                       struct loom_error *err);
/* A paused node ("cluster/name") and its doc (JSON text: see
 * sql/0007_node_pauses.sql), written or replaced; deleted on resume. */
int store_pause_put(struct store *st, const char *node, const char *doc,
                    struct loom_error *err);
int store_pause_del(struct store *st, const char *node,
                    struct loom_error *err);

/* goal_nodes: node, attrs. */
int store_goal_load(struct store *st, store_row_cb cb, void *arg,
                    struct loom_error *err);
/* actual_reports: node, attribute, value, time (epoch s). */
int store_actual_load(struct store *st, store_row_cb cb, void *arg,
                      struct loom_error *err);
/* mismatches: node, attribute, since (epoch s). */
int store_mismatch_load(struct store *st, store_row_cb cb, void *arg,
                        struct loom_error *err);
/* maintenance: id, state, doc, in id order. With light_upto
 * (time_format_before), a request the first look of the maintenance
 * thread would let go (store_maint_load.c says which) comes light: its
 * doc NULL. */
int store_maint_load(struct store *st, const char *light_upto,
                     store_row_cb cb, void *arg, struct loom_error *err);
/* Maintenance request id's state and document (new strings): 1, 0 when
 * there is none, or -1. */
int store_maint_doc(struct store *st, int64_t id, char **state, char **doc,
                    struct loom_error *err);
/* The ended requests (done, failed, cancelled) with ids up to upto but
 * those in but (a PostgreSQL array, "{1,2}") whose documents hold
 * match's members (a JSON object; NULL: all): id, doc, in id order. cb
 * returns 0 to go on, -1 (out of memory) to stop. 0 or -1. */
int store_maint_ended(struct store *st, const char *but, int64_t upto,
                      const char *match, store_row_cb cb, void *arg,
                      struct loom_error *err);
/* node_pauses: node, doc. */
int store_pause_load(struct store *st, store_row_cb cb, void *arg,
                     struct loom_error *err);

#endif
