/* slurmcli.h - what the parts of loom-slurm share: Slurm's commands
 * (sbatch, squeue, scancel, scontrol, sinfo, sacct, sacctmgr, srun) over
 * Loom's REST API, one program called by their names. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_SLURMCLI_SLURMCLI_H
#define LOOM_CORE_SLURMCLI_SLURMCLI_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "core/ctl/client.h"

/* Exit statuses, as Slurm's commands have them. */
#define SC_OK 0
#define SC_FAIL 1
#define SC_USAGE 1 /* an option refused: Slurm's commands exit 1 too */

#ifdef LOOM_SYSCONFDIR
#define SC_CONF_DEFAULT LOOM_SYSCONFDIR "/loom/slurm.conf"
#else
#define SC_CONF_DEFAULT "/etc/loom/slurm.conf"
#endif

/* The command being run: its name, for messages. */
extern const char *sc_cmd;

/* Print "CMD: error: MESSAGE" on stderr. Returns SC_FAIL. */
int sc_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, returning SC_USAGE: an option or argument refused. */
int sc_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The usage error for what getopt_long returned ('?' or ':'). */
int sc_opt_error(int c, char **argv);
/* An option Slurm has that Loom cannot carry out: refused, naming it. */
int sc_unsupported(const char *opt, const char *why);

/* The client to loomd, opened on first use: LOOM_URL, else the url of
 * LOOM_SLURM_CONF or SC_CONF_DEFAULT; with LOOM_TOKEN_FILE (or the file's
 * token_file) a token, else none (peer credentials on a unix: URL).
 * NULL after printing why. Destroyed by main. */
struct client *sc_client(void);
/* GET path into *reply. Returns 0, or -1 with err. */
int sc_get(const char *path, json_t **reply, struct loom_error *err);

/* A job's state as Slurm names it (PENDING, RUNNING, COMPLETED, FAILED,
 * CANCELLED, TIMEOUT, OUT_OF_MEMORY, SUSPENDED, ...) and its short code
 * (PD, R, CD, F, CA, TO, OOM, S, ...). */
const char *sc_state(const json_t *job);
const char *sc_state_short(const char *state);
/* The reason squeue shows (%r): Resources, Priority, Dependency,
 * JobHeldUser, ... ; "None" for a job without one. */
const char *sc_reason(const json_t *job, char *buf, size_t size);
/* ExitCode as Slurm writes it: "CODE:SIGNAL". */
const char *sc_exit_code(const json_t *job, char *buf, size_t size);
/* A Slurm state name (any case, or a short code) to Loom's job states
 * for ?state=, into buf. -1 when it is none. "all" gives "". */
int sc_state_filter(const char *list, char *buf, size_t size);
/* Is the Slurm state (PENDING) in the list as -t gives it (names or
 * short forms, any case; "all")? */
int sc_state_listed(const char *list, const char *state);
/* Time as Slurm writes it (2026-11-26T10:00:01), "Unknown" for none. */
const char *sc_time(const json_t *v, char *buf, size_t size);
/* A time as -S and -E take it: YYYY-MM-DD[THH:MM[:SS]] (local time), an
 * RFC 3339 UTC time, now, now-N[minutes|hours|days|weeks]. 0 or -1. */
int sc_time_arg(const char *s, time_t *out);
/* A duration as Slurm writes it: [D-]HH:MM:SS, or M:SS under an hour
 * when shorter is set (squeue's %M). */
const char *sc_duration(long long s, int shorter, char *buf, size_t size);
/* A job's run time in seconds (start_time to end_time or now). */
long long sc_elapsed(const json_t *job, time_t now);
/* An array of node ids (CLUSTER/NAME) as a hostlist; "" for none. */
const char *sc_nodelist(const json_t *nodes, char *buf, size_t size);
/* o's string member key, "" when it is not a string. */
const char *sc_str(const json_t *o, const char *key);
/* Is word one of the comma-separated list? */
int sc_listed(const char *list, const char *word);
/* The user name of the calling uid, or NULL. */
const char *sc_user(void);

/* Slurm's output formats: %-letters with widths (squeue -o, sinfo -o)
 * and field lists (squeue -O, sacct --format). */
struct sc_field;
typedef const char *sc_cell_f(const json_t *row, char *buf, size_t size);
struct sc_field {
    char letter;        /* for -o %X, or 0 */
    const char *name;   /* for -O and --format, case-insensitive */
    const char *header; /* or, for a field Loom refuses, why */
    int width;          /* default width */
    sc_cell_f *cell;    /* NULL: a field Slurm has that Loom cannot give;
                           a format naming it is refused, saying why */
};
struct sc_item {        /* one column: a field, or literal text */
    const struct sc_field *f;
    char *text;         /* literal text (f NULL), owned */
    int width;          /* 0: as wide as the value */
    int right;          /* right-justified (%.10i) */
};
struct sc_format {
    struct sc_item *items;
    size_t n;
    int fields_mode;    /* -O / --format: columns joined by spaces or | */
    int trail;          /* sacct -p: the separator after the last field */
};
/* Parse a %-format ("%.18i %.9P %T") with fields. -1 after printing the
 * usage error naming the letter that is not one. */
int sc_format_letters(const char *text, const struct sc_field *fields,
                      struct sc_format *fmt);
/* Parse a field list ("JobID,State%20,ExitCode"). */
int sc_format_names(const char *text, const struct sc_field *fields,
                    struct sc_format *fmt);
void sc_format_fini(struct sc_format *fmt);
/* Print the header line (sep: NULL for columns, "|" for -P). */
void sc_format_header(const struct sc_format *fmt, const char *sep);
/* Print one row. */
void sc_format_row(const struct sc_format *fmt, const json_t *row,
                   const char *sep);

/* The commands: argv[0] is the command's name. Each returns an exit
 * status. */
typedef int sc_cmd_f(int argc, char **argv);
sc_cmd_f sc_sbatch, sc_squeue, sc_scancel, sc_scontrol, sc_sinfo, sc_sacct,
    sc_sacctmgr, sc_srun;

/* The fields of a job for squeue and scontrol (jobfields.c). */
extern const struct sc_field sc_job_fields[];
/* The field of that name (any case), or NULL. */
const struct sc_field *sc_job_field(const char *name);
/* The members of the job object a field of sc_job_fields reads beyond
 * SC_JOB_MEMBERS, comma-separated, or NULL. */
const char *sc_job_members(const struct sc_field *f);
/* The members of a job object every job's row reads: to tell its state,
 * reason and ids, and for squeue's filters. */
#define SC_JOB_MEMBERS                                                      \
    "id,name,owner,account,state,reason,request,cluster,array_job_id,"    \
    "array_tasks,array_tasks_state,loom_id"
/* What GET /v1/jobs is to select (NULL: no filter): Loom's states, one
 * name, one cluster, jobs and tasks (-j), owners or accounts (-u),
 * queues (-p), the lists comma-separated; each job narrowed to the
 * members fields names (NULL: all of them). */
struct sc_jobs_query {
    const char *states, *name, *cluster, *fields, *ids, *users, *queues;
};
/* All jobs the caller may see that q selects (q NULL: every job),
 * following pages; or one job or task by id (id non-NULL). */
int sc_jobs(const struct sc_jobs_query *q, const char *id, json_t **items,
            struct loom_error *err);

/* --json (json.c): Slurm 22.05's objects made from Loom's, each a new
 * object (NULL when out of memory): squeue's job (openapi/v0.0.38),
 * sacct's job (dbv0.0.38), sinfo's node. */
json_t *sc_json_job(const json_t *job);
json_t *sc_json_acct_job(const json_t *job);
json_t *sc_json_node(const json_t *node);
/* What --json and --yaml write: the one document, in either form. */
enum sc_doc { SC_DOC_NONE, SC_DOC_JSON, SC_DOC_YAML };
/* The option that asked for as: "--json" or "--yaml". */
const char *sc_doc_option(enum sc_doc as);
/* Print {"meta": ..., "errors": [], key: items} as Slurm 22.05 does, its
 * plugin type and name in meta, as JSON or YAML; takes items. Returns an
 * exit status. */
int sc_doc_print(enum sc_doc as, const char *plugin, const char *name,
                 const char *key, json_t *items);
/* doc as YAML in block style (yaml.c), as Slurm's serializer_yaml writes
 * it: "---", then a mapping or sequence a line per scalar, strings quoted
 * where a YAML reader would take them for something else. 0, or -1 when
 * out of memory. */
int sc_yaml_write(const json_t *doc, FILE *out);

#endif
