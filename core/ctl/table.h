/* table.h - loomctl's output: tables like sinfo/squeue, key: value. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_TABLE_H
#define LOOM_CORE_CTL_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "core/error.h"

#define CLIENT_TABLE_CELL_MAX 40 /* default widest cell, in characters */

/* One column: its header, whether cells are right-aligned (numbers), and
 * the widest cell shown (0: CLIENT_TABLE_CELL_MAX); a longer cell is cut
 * and ends in '+'. */
struct client_table_col {
    const char *header;
    int right;
    int max;
};

struct client_table;

/* A new, empty table with ncols columns; cols is borrowed and must outlive
 * the table (a static array, normally). Returns NULL when out of memory.
 * Destroy with client_table_destroy. Not shared between threads. */
struct client_table *client_table_create(const struct client_table_col *cols,
                                         size_t ncols);
void client_table_destroy(struct client_table *t); /* NULL-safe */

/* Add a row of ncols cells (copied; NULL or "" shows as "-"). Control
 * characters are shown as '?', so data cannot move the cursor or inject
 * terminal escapes. Returns 0, or -1 when out of memory. */
int client_table_add(struct client_table *t, const char *const *cells);

/* Print the header line and the rows; widths come from the data, columns
 * are separated by one space and lines carry no trailing blanks. */
void client_table_print(const struct client_table *t, FILE *out);

/* The tables of loomctl's list commands (the jobs': fields.h), from an
 * API list's "items" (borrowed), with the same signature so a caller can
 * pick one by list. now is the time used for ages. Return 0,
 * or -1 with err when out of memory. Items that are not objects are
 * skipped; missing fields show as "-".
 *   nodes:    NODE CLUSTER STATE CPUS(A/T) MEMORY GPUS FEATURES REASON
 *             (state "reserved" shows as "resv", as sinfo says it; a node
 *             in a reservation without a reason of its own gives the
 *             reservation as its reason)
 *   clusters: CLUSTER ADAPTOR STATE NODES JOBS LAST_POLL ERROR (JOBS:
 *             any, or pinned: only the jobs that name the cluster)
 *   queues:   QUEUE CLUSTER STATE NODES MAXTIME
 *   partitions (queues?view=fabric): PARTITION STATE NODES IDLE CPUS
 *             (allocated/total) MAXTIME NODELIST */
int client_table_nodes(FILE *out, const json_t *items, time_t now,
                       struct loom_error *err);
int client_table_clusters(FILE *out, const json_t *items, time_t now,
                          struct loom_error *err);
int client_table_reservations(FILE *out, const json_t *items, time_t now,
                              struct loom_error *err);
int client_table_queues(FILE *out, const json_t *items, time_t now,
                        struct loom_error *err);
int client_table_partitions(FILE *out, const json_t *items, time_t now,
                            struct loom_error *err);

/* Print every member of obj (borrowed) as an aligned "key: value" line:
 * nested objects flattened ("request.nodes: 1"), arrays of plain words
 * joined with ',' (other arrays as compact JSON), null as "-", and a
 * string with line breaks as an indented block below its key. */
void client_table_object(FILE *out, const json_t *obj);

/* Round, in obj (changed in place), the times in milliseconds (members
 * named *_ms or *_ms_*, and every member below one; in_ms: obj is one) to
 * what a reader needs: 0.19, 12.3, 231; below 0.005 "<0.01". They become
 * strings: for the key: value listing only, never for --json. */
void client_table_round_ms(json_t *obj, int in_ms);

/* Format seconds as squeue does: "M:SS", "H:MM:SS" or "D-HH:MM:SS"
 * (negative counts as 0). Writes into buf (size bytes). Returns buf. */
char *client_table_duration(long long seconds, char *buf, size_t size);

#endif
