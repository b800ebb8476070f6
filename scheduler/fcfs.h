/* fcfs.h - what Loom's jobs hold per node, and first fit placement of a
 * job submitted when nothing waits (the planner does the rest). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_FCFS_H
#define LOOM_SCHEDULER_FCFS_H

#include <stddef.h>

#include "core/hmap.h"
#include "core/snapshot.h"
#include "scheduler/job.h"

/* What Loom's own jobs hold on each node ("cluster/node" -> struct use). */
struct usage {
    struct hmap by_node;
};
struct use {
    int cpus;
    long memory_mb;
    int gpus;
};
void usage_init(struct usage *u);
void usage_fini(struct usage *u);
/* Add (sign +1) or release (sign -1) what job j holds on its nodes. */
int usage_apply(struct usage *u, const struct job *j, int sign);

/* Pick the first cluster (pinned, or in configuration order among those
 * that take unpinned jobs) and its first nodes that fit j now. 1 with
 * *cluster (borrowed from s) and nodes filled, 0 when nothing fits now
 * (why says so), -1 when out of memory.
 * first: one index per cluster of s, zeroed at the start of a cycle; nodes
 * before it have no free cpu (usage only grows within a cycle), so a cycle
 * that places many jobs does not scan full nodes again. May be NULL. */
int fcfs_place(const struct snapshot *s, const struct usage *u,
               const struct job *j, size_t *first, const char **cluster,
               struct strv *nodes, char *why, size_t why_len);

/* Do these nodes of that cluster have room for j now (state, what Loom's
 * jobs hold, what the cluster reports allocated)? 1 or 0. */
int fcfs_nodes_fit(const struct snapshot *s, const struct usage *u,
                   const struct job *j, const char *cluster,
                   const struct strv *nodes);

#endif
