/* fields.h - the columns a --format list names (jobs, history, usage):
 * picked by name, printed as a table. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_CTL_FIELDS_H
#define LOOM_CORE_CTL_FIELDS_H

#include <time.h>

#include <jansson.h>

#include "core/ctl/table.h"

struct ctl;

/* How a field's cell is made from its row (an API object). */
enum ctl_field_kind {
    CTL_F_TEXT,      /* the member key, as it is */
    CTL_F_INT,       /* a number, as a whole number */
    CTL_F_DURATION,  /* seconds, as squeue writes a time (1-02:03:04) */
    CTL_F_HOURS,     /* hours, to two decimals */
    CTL_F_JOBID,     /* a job's id; an array's waiting tasks 123_[8-100] */
    CTL_F_JOBSTATE,  /* a job's state; an array's, its waiting tasks' */
    CTL_F_NODECOUNT, /* a job's nodes: how many it has, or asks for */
    CTL_F_NODELIST,  /* an array of node names, as a hostlist n[1-4] */
    CTL_F_ELAPSED,   /* a job's run time: start_time to end_time or now */
};

/* A column --format may name: its name, its header and width, the member
 * it shows and how. Tables of them end with a NULL name. */
struct ctl_field {
    const char *name;
    struct client_table_col col;
    const char *key;
    enum ctl_field_kind kind;
};

#define CTL_FIELDS_MAX 32

/* The fields of a --format list ("jobid,name,state") of all into pick (at
 * most CTL_FIELDS_MAX). Returns their count, or -1 after printing the
 * usage error of cmd naming a field that is not one, and the fields. */
int ctl_fields_pick(const char *cmd, const struct ctl_field *all,
                    const char *list, const struct ctl_field **pick);

/* The names of all, comma-separated, into buf (size bytes). Returns buf. */
const char *ctl_fields_names(const struct ctl_field *all, char *buf,
                             size_t size);

/* Print a table of the n picked fields on stdout, a row per object of
 * rows (borrowed); now: for run times. Returns an exit status. */
int ctl_fields_print(const struct ctl_field *const *pick, int n,
                     const json_t *rows, time_t now);

/* The list rows (borrowed) as loomctl shows it: with --json, {"items":
 * rows}; else the table of the n picked fields (run times to now).
 * Returns an exit status. */
int ctl_fields_show(const struct ctl *ctl,
                    const struct ctl_field *const *pick, int n,
                    const json_t *rows);

#endif
