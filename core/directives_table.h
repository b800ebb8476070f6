/* directives_table.h - what the tables of the directive systems are made
 * of: the slots a directive fills, and one row per option. Shared by
 * directives.c and the system files (directives_slurm.c, _sge.c, _pbs.c). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_DIRECTIVES_TABLE_H
#define LOOM_CORE_DIRECTIVES_TABLE_H

#include <jansson.h>

#include "core/error.h"
#include "core/strv.h"

/* What a directive says, in the cluster systems' own terms; directives.c
 * turns the slots into the request's fields (one table, slot_defs). */
enum dir_slot {
    DS_NAME,          /* text */
    DS_NODES,         /* count */
    DS_NTASKS,        /* tasks in all (Slurm) */
    DS_TASKS_PER_NODE,
    DS_CPUS_PER_TASK,
    DS_CPUS_PER_NODE, /* slots or cpus on each node (Grid Engine, PBS) */
    DS_MEM_PER_NODE,  /* MiB */
    DS_MEM_PER_CPU,   /* MiB per cpu (or Grid Engine slot) */
    DS_MEM_TOTAL,     /* MiB for the whole job (PBS -l mem) */
    DS_TIME,          /* seconds */
    DS_QUEUE,         /* text: partition or queue */
    DS_FEATURES,      /* features (every one needed) */
    DS_GPUS,          /* per node */
    DS_GPUS_PER_CPU,  /* per Grid Engine slot */
    DS_GPUS_TOTAL,    /* for the whole job (Slurm --gpus) */
    DS_OUTPUT,        /* text: a name in Loom's patterns */
    DS_ERROR,         /* text: a name in Loom's patterns */
    DS_JOIN,          /* error joined to output (1), or output to error (2:
                         PBS's -j eo) */
    DS_WORKDIR,       /* text: absolute, or relative to the submit
                         directory */
    DS_CWD,           /* the submit directory as working directory */
    DS_EXPORT,        /* text: the environment to pass, "ALL", "NONE",
                         "NAME" and "NAME=value" joined by ',' */
    DS_ARRAY,         /* text: task ids, as Loom's "array" takes them */
    DS_ARRAY_LIMIT,   /* tasks at once (Grid Engine's -tc) */
    DS_DEPEND,        /* text: in Loom's (Slurm's) syntax */
    DS_HOLD,
    DS_EXCLUSIVE,
    DS_PRIORITY,      /* the job's priority (Slurm's --nice: its negation) */
    DS_NO_REQUEUE,    /* never submitted again when its cluster loses it */
    DS_COMMENT,       /* text: kept with the job (Slurm's --comment) */
    DS_N
};

#define DIR_BIT(s) (1ULL << (s))

enum dir_slot_kind {
    SK_NUM,  /* a number: directives_req.c computes its field */
    SK_TEXT, /* its text is the field's value */
    SK_FLAG, /* the field is true */
    SK_OWN,  /* directives_req.c fills its field its own way */
};

/* Each slot and the request field it feeds ("request.nodes"), or NULL
 * where Loom's request has no such field: a directive that fills it is
 * refused, "not supported by Loom: the job request has no <what>". */
struct dir_slot_def {
    const char *field;
    enum dir_slot_kind kind;
    const char *what;
};
extern const struct dir_slot_def dir_slot_defs[DS_N];
/* 0 when the request has slot's field, else -1 with that 400. */
int dir_slot_check(enum dir_slot slot, struct loom_error *err);

enum dir_arg {
    DA_NONE, /* a flag */
    DA_ONE,  /* one argument */
    DA_TWO,  /* two words (Grid Engine's -pe NAME N) */
    DA_OPT,  /* a value only when attached (Slurm's --nice=N), else none */
};

/* A directive being read: what it puts, kept apart until it is read
 * whole (a directive Loom cannot apply changes nothing). */
struct dir_ctx {
    unsigned long long put; /* a bit per slot it fills */
    long num[DS_N];
    char *text[DS_N];
    struct strv features;
    int features_reset; /* its features replace those before it */
    int export_add;     /* its DS_EXPORT adds to that before it (-v, -V) */
    const char *note;   /* why it sets nothing although Loom takes it
                           (static), or NULL */
};

/* Read an option's argument(s) into ctx with the dir_put_* calls below.
 * 0, or -1 with err saying what is wrong with the value (the caller adds
 * the line and the directive). */
typedef int (*dir_read_f)(struct dir_ctx *ctx, const char *arg,
                          const char *arg2, struct loom_error *err);

/* One option of a system: Slurm's are matched as -s and --long (with
 * "=value" or the next word), Grid Engine's as -long and PBS's as -s
 * (with the value attached or the next word). */
struct dir_opt {
    char short_name;       /* 0: none */
    const char *long_name; /* NULL: none */
    enum dir_arg arg;
    enum dir_slot slot;    /* what it fills when read is NULL: the text,
                              or 1 for a flag */
    dir_read_f read;       /* or NULL */
};

enum dir_style { DIR_GETOPT_LONG, DIR_DASH_WORD, DIR_GETOPT_SHORT };

/* A directive system: its prefix, how its options are written, its
 * table (ended by a row without names). */
struct dir_system {
    const char *prefix;  /* "#SBATCH" */
    const char *name;    /* "Slurm" */
    enum dir_style style;
    const struct dir_opt *opts;
};

extern const struct dir_system dir_slurm, dir_sge, dir_pbs;

/* Fill a slot from the directive being read: a number (counts, MiB,
 * seconds), a text (copied), a feature (the first of a directive replaces
 * those before it unless add is set). 0, or -1 with err: out of memory,
 * or a slot that Loom's request has no field for. */
int dir_put_num(struct dir_ctx *ctx, enum dir_slot slot, long v,
                struct loom_error *err);
int dir_put_text(struct dir_ctx *ctx, enum dir_slot slot, const char *text,
                 struct loom_error *err);
int dir_put_feature(struct dir_ctx *ctx, const char *name, int add,
                    struct loom_error *err);

/* One directive of a script, once read. */
struct dir_one {
    int line;
    char *text;               /* "#SBATCH --nodes=2" */
    unsigned long long slots; /* a bit per slot it filled */
    char *ignored;            /* why it changed nothing, or NULL */
};

/* What the directives of a script say: each slot's value and the
 * directive (index + 1) that filled it last. */
struct dir_set {
    long num[DS_N];
    char *text[DS_N];
    int last[DS_N];
    struct strv features;
    size_t features_from; /* directives before this one put none of them */
    size_t export_from;   /* nor of DS_EXPORT's text */
    const struct dir_system *sys; /* whose directives they are */
    struct dir_one *d;
    size_t n, cap;
};

/* directives_slots.c: add a directive read whole to set (takes its text and
 * what ctx holds; ctx is empty afterwards), or one that was not (ignored:
 * why, copied). 0, or -1 when out of memory. */
int dir_commit(struct dir_set *set, int line, char *text_take,
               struct dir_ctx *ctx, const char *ignored);
void dir_ctx_fini(struct dir_ctx *ctx);
void dir_set_fini(struct dir_set *set);
/* directives_req.c: the request fields the body lacks, from set, and the
 * record (see directives_apply). */
int dir_request(struct dir_set *set, json_t *body, json_t **record,
                struct loom_error *err);

/* Does DS_EXPORT's text name ALL or a variable without its value: the
 * submitter's environment? */
int dir_export_needs_env(const char *text);
/* The workdir of a request that neither gives one nor has directives
 * that set it: its submit_dir, unless sys is Grid Engine's (whose jobs
 * work in the home directory unless -cwd). 0, or -1 with err. */
int dir_workdir_default(json_t *body, const struct dir_system *sys,
                        struct loom_error *err);

/* What the system files read values with. */
/* A count: a whole number from min to max (what: "the node count"). */
int dir_count(const char *text, const char *what, long min, long max,
              long *out, struct loom_error *err);
/* A unit of size: its suffix (matched without regard to case) and bytes;
 * a table of them ends with a NULL suffix. */
struct dir_unit {
    const char *suffix;
    double bytes;
};
/* A size into MiB, rounded up: digits and a suffix of units ("" for the
 * bare number); from 1 MiB to LOOM_JOB_MEMORY_MB_MAX. what names it in
 * messages ("the memory"), forms lists the forms ("N[K|M|G|T]"). */
int dir_size_mb(const char *text, const struct dir_unit *units,
                const char *what, const char *forms, long *mb,
                struct loom_error *err);
/* Call fn for each NAME=VALUE of a comma-separated list (both non-empty,
 * else a 400). 0, or the first -1. */
int dir_each_kv(struct dir_ctx *ctx, const char *list,
                int (*fn)(struct dir_ctx *ctx, const char *name,
                          const char *val, struct loom_error *err),
                struct loom_error *err);
/* A job name: 1 to LOOM_JOB_NAME_MAX characters (a dir_read_f). */
int dir_read_name(struct dir_ctx *ctx, const char *arg, const char *arg2,
                  struct loom_error *err);
/* A name Loom can take as a queue or feature: [A-Za-z0-9._-]+ with at
 * most 64 characters. */
int dir_name_ok(const char *text);
/* An array's task ids (core/arrayspec.h), checked (a dir_read_f). */
int dir_read_array(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err);
/* qsub's -p N (Grid Engine, PBS): the job's priority N, a whole number
 * from min to max (the system's range). */
int dir_put_priority(struct dir_ctx *ctx, const char *text, long min,
                     long max, struct loom_error *err);
/* qsub's -r y|n (Grid Engine, PBS): n is "requeue": false; y, a job
 * rerun whenever its node fails, is more than Loom does, and refused. */
int dir_read_rerun(struct dir_ctx *ctx, const char *arg, const char *arg2,
                   struct loom_error *err);
/* A dependency in Slurm's syntax (core/depend.h), checked. */
int dir_read_depend(struct dir_ctx *ctx, const char *arg, const char *arg2,
                    struct loom_error *err);
/* Grid Engine's and PBS's -V (all of the submitter's environment) and
 * -v NAME[=value][,...], added to what other -v and -V put (dir_read_f). */
int dir_read_export_all(struct dir_ctx *ctx, const char *arg,
                        const char *arg2, struct loom_error *err);
int dir_read_export_list(struct dir_ctx *ctx, const char *arg,
                         const char *arg2, struct loom_error *err);
/* Put DS_EXPORT's text after checking it: "ALL", "NONE" (if none_ok),
 * NAME or NAME=value, joined by ','. */
int dir_put_export(struct dir_ctx *ctx, const char *text, int none_ok,
                   struct loom_error *err);
/* An output or error file name in Loom's patterns (what: "output"),
 * checked (outpath_check), into slot. */
int dir_put_outpath(struct dir_ctx *ctx, enum dir_slot slot,
                    const char *text, struct loom_error *err);
/* A path of qsub's -o or -e (Grid Engine's, PBS's) into slot as
 * dir_put_outpath takes it: '%' is itself; with pseudo_vars, Grid
 * Engine's $JOB_ID, $TASK_ID, $USER, $JOB_NAME and $HOSTNAME (the host of
 * the job's first node), else '$' is itself too; a path ending in '/' is
 * a directory, the file in it JOB_NAME.oJOB_ID (.e for DS_ERROR). A host
 * ("host:path") is refused: the file is written where the job runs. */
int dir_put_qsub_path(struct dir_ctx *ctx, enum dir_slot slot,
                      const char *arg, int pseudo_vars,
                      struct loom_error *err);

/* A dependency Loom's reader has made of a system's own (text), checked
 * as one in Slurm's syntax. */
int dir_put_depend(struct dir_ctx *ctx, const char *text,
                   struct loom_error *err);

#endif
