/* infra.h - build a cluster's snapshot part from what its adaptor reported. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_INFRA_H
#define LOOM_ADAPTORS_INFRA_H

#include <jansson.h>

#include "adaptors/adaptor.h"
#include "core/snapshot.h"

struct annot_conf;

struct infra_desc {
    const char *name;
    const char *adaptor;
    const char *model;  /* "disabled-scheduler" | "execution-queue" */
    unsigned caps;
    int preference;
    int hold_for_loom;  /* its held native jobs are Loom's to schedule */
    int pinned_only;    /* it takes only jobs that name it */
    int runs_as_user;   /* each job runs as its own account */
    const char *single_account; /* or NULL: see struct adaptor_desc */
    const char *state;  /* up|degraded|unreachable */
    const char *error;  /* or NULL */
    time_t last_poll;
    /* How each operation is carried out (adaptor_type.via), indexed by
     * enum adaptor_op, or NULL: shown as "operations" when any is set. */
    const char *const *via;
    const json_t *info; /* members added to the cluster's object, or NULL */
    const struct annot_conf *annot; /* its annotate keys, or NULL */
};

/* A new cluster part (one reference) with every node and queue rendered.
 * The lists are borrowed. NULL when out of memory. Server thread. */
struct scluster *infra_build(const struct infra_desc *d,
                             const struct cl_node_list *nodes,
                             const struct cl_queue_list *queues);

/* Show a node ("cluster/name") as "maint" with this reason from its next
 * rendering on, whatever its cluster says; NULL reason: as reported again.
 * Any thread. */
void infra_maint_mark(const char *node_id, const char *reason);
void infra_maint_clear(void); /* all marks gone (at shutdown) */
/* The same for a paused node: shown "paused" with this reason (but "maint"
 * while in maintenance). */
void infra_pause_mark(const char *node_id, const char *reason);
void infra_pause_clear(void);

/* Annotate a node ("cluster/name") with attrs (borrowed: copied), its goal
 * and latest reports merged, from its next rendering on, over the labels
 * of its cluster's configuration; NULL or {}: none. Any thread
 * (adaptors/annot.c). */
void infra_annot_set(const char *node_id, json_t *attrs);
void infra_annot_clear(void); /* all gone (at shutdown) */

#endif
