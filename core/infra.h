/* infra.h - build a cluster's snapshot part from what its adaptor reported. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_INFRA_H
#define LOOM_CORE_INFRA_H

#include "core/snapshot.h"

struct infra_desc {
    const char *name;
    const char *adaptor;
    const char *model;  /* "disabled-scheduler" | "execution-queue" */
    unsigned caps;
    int preference;
    int hold_for_loom;  /* its held native jobs are Loom's to schedule */
    const char *state;  /* up|degraded|unreachable */
    const char *error;  /* or NULL */
    time_t last_poll;
};

/* A new cluster part (one reference) with every node and queue rendered.
 * The lists are borrowed. NULL when out of memory. Server thread. */
struct scluster *infra_build(const struct infra_desc *d,
                             const struct cl_node_list *nodes,
                             const struct cl_queue_list *queues);

#endif
