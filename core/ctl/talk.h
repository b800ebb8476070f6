/* talk.h - what loomctl's goal, actual, diff and maintenance
 * commands share: requests to loomd and their tables. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_TALK_H
#define LOOM_CORE_CTL_TALK_H

#include <jansson.h>

#include "core/ctl/client.h"
#include "core/ctl/loomctl.h"
#include "core/ctl/table.h"

typedef int row_f(struct client_table *t, const json_t *item);

/* Is id a node id, CLUSTER/NAME? */
int ctlm_is_node(const char *id);

/* p = base/CLUSTER/NAME from id. Returns -1 to go on, or a usage error. */
int ctlm_node_arg(struct client_path *p, const char *base, const char *cmd,
                  const char *id);

/* Send one request; on success *reply is the answer (may be NULL). */
int ctlm_send_req(struct ctl *ctl, const char *method,
                  const struct client_path *p, const json_t *body,
                  json_t **reply);

/* Send a change; print the answer with --json only. */
int ctlm_change(struct ctl *ctl, const char *method,
                const struct client_path *p, const json_t *body);

/* The filters a list allows (letters of allowed: C --cluster, a
 * --attribute, n --node, s --state of a maintenance request) into p's
 * query, named as the options. Returns -1 to go on, or an exit status. */
int ctlm_filters(struct ctl *ctl, const char *cmd, const char *allowed,
                 int argc, char **argv, struct client_path *p);

/* A value as a cell: strings as they are, numbers and booleans written
 * out, lists of strings joined with ',', null as "" (shown as "-"),
 * anything else as compact JSON. Returns buf. */
const char *ctlm_value_text(const json_t *v, char *buf, size_t size);

const char *ctlm_member(const json_t *obj, const char *key, char *buf,
                        size_t size);

/* Print one row per object of items (an array) or of the one object. */
int ctlm_table(const struct client_table_col *cols, size_t ncols,
               const json_t *items, row_f *row);

/* GET a list (all its pages) or one object, and print it as a table. */
int ctlm_show(struct ctl *ctl, const struct client_path *p, int one,
              const struct client_table_col *cols, size_t ncols, row_f *row);

#endif
