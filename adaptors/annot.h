/* annot.h - a node's annotations: the labels of its cluster's
 * configuration (annotate.KEY, annotate[NODES].KEY) under what the
 * maintenance thread knows of it (its goal, its latest reports). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_ANNOT_H
#define LOOM_ADAPTORS_ANNOT_H

#include <jansson.h>

#include "core/conf.h"
#include "core/hmap.h"
#include "core/strv.h"

#define ANNOT_KEY_MAX 64

/* One annotate key of a [cluster] section. */
struct annot_rule {
    char *conf_key; /* as written: annotate[n[1-4]].kernel */
    char *key, *value;
    int every;       /* annotate.KEY: every node */
    struct hmap nodes; /* annotate[NODES].KEY: these names (values unused) */
};

/* The annotate keys of one cluster, in file order. Immutable once read:
 * the cluster's worker reads it while rendering nodes. */
struct annot_conf {
    struct annot_rule *v;
    size_t n;
};

/* Read the annotate keys of sec (marking them used) into out (empty on
 * entry). A name other than 1 to 64 letters, digits, '-', '_' or '.', a
 * node list that is not one, a key such as annotate_x that starts like one,
 * or two node lists that give one node the same annotation are -1 with
 * err naming the file, the line and the key; out is then empty. */
int annot_conf_read(struct conf_section *sec, struct annot_conf *out,
                    struct loom_error *err);
void annot_conf_fini(struct annot_conf *c); /* NULL-safe; empty afterwards */
/* Do a and b hold the same keys with the same values, in the same order? */
int annot_conf_same(const struct annot_conf *a, const struct annot_conf *b);

/* The annotations of node name ("cluster/name" is node_id): the labels
 * of c (those of a node list over those of every node), then its goal,
 * then its latest reports, each over the one before. A new object, or
 * NULL when out of memory. Any thread. */
json_t *annot_node(const struct annot_conf *c, const char *node_id,
                   const char *name);

/* "KEY=VALUE" for each annotation, appended to out: the value as text
 * (6.1 and "6.1" alike, true, false), and one entry per item of a list.
 * These are what a job's features match besides the node's features. 0,
 * or -1 when out of memory. */
int annot_labels(json_t *annotations, struct strv *out);

#endif
