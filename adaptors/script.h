/* script.h - the script adaptor's parts shared by its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SCRIPT_H
#define LOOM_ADAPTORS_SCRIPT_H

#include <jansson.h>

#include "adaptors/adaptor.h"
#include "core/strv.h"

/* The protocol's operations, in the order of script_op_names. */
enum script_op {
    OP_NODES, OP_JOBS, OP_QUEUES, OP_START, OP_CANCEL, OP_SET_NODE_STATE,
    OP_SUSPEND, OP_RESUME, OP_HOLD, OP_RELEASE, OP_RESERVE, OP_UNRESERVE,
    N_OPS
};

/* One script adaptor instance: its pack, its directories, whose jobs it
 * takes. Created and used by the cluster's worker only. */
struct script {
    char *cluster, *pack, *pack_dir, *dir, *workdir;
    char *runas;              /* the path of loom-runas */
    char *single_account;     /* single_account = ACCOUNT, or NULL */
    int runs_as_user;         /* pack.json: start submits as the account */
    struct strv env;          /* "NAME=value": the section's env.* */
    double timeout[N_OPS];
    size_t max_out;
    int has[N_OPS];
    unsigned caps;
    enum adaptor_model model;
};

extern const char *const script_op_names[N_OPS];

/* Run the pack's op with args, input and extra environment ("NAME=value").
 * 0 with a JSON object in *answer (the caller decrefs), or -1 with err
 * naming the cluster, the pack and the op. */
int script_run(struct script *s, int op, const char *const *args,
               json_t *input, const struct strv *extra, json_t **answer,
               struct loom_error *err);
/* Prefix err with "cluster C: pack P: OP"; returns -1. */
int script_fail(const struct script *s, const char *op,
                struct loom_error *err);
/* "a/b", new string (NULL when out of memory). */
char *script_path_join(const char *a, const char *b);
/* mkdir -p, mode 0755; 0 or -1 with errno. */
int script_mkdir_p(const char *path);

/* The start op (script_start.c), as struct adaptor_type's start. */
int script_start(void *self, const struct start_req *req,
                 struct start_result *res, struct loom_error *err);

/* reserve and unreserve (script_resv.c), as struct adaptor_type's ops:
 * the request to the pack as JSON on stdin and as LOOM_RES_* variables;
 * an id that is not letters, digits, '.', '_' and '-' is refused. */
int script_reserve(void *self, const struct resv_spec *spec,
                   char **native_id, struct loom_error *err);
int script_unreserve(void *self, const char *native_id,
                     struct loom_error *err);

/* Turn a pack's answers into adaptor lists. Each fills an empty list (the
 * caller owns it) or fails with LOOM_ETEMP naming the item and field. */
int script_parse_nodes(json_t *answer, struct cl_node_list *out,
                       struct loom_error *err);
int script_parse_jobs(json_t *answer, struct cl_job_list *out,
                      int *complete, struct loom_error *err);
int script_parse_queues(json_t *answer, struct cl_queue_list *out,
                        struct loom_error *err);

/* The job file a pack submits: the script (or the command's words, each
 * quoted) with the job's env exported after the #! line. New string. */
char *script_job_file(const struct start_req *req);
/* Where a job works and writes, as its record shows it: the request's
 * workdir, else, when it runs as its own account (runs_as_user), that
 * account's home, else jobdir; its output and error names
 * (core/outpath.h: patterns expanded, relative to the working directory;
 * output loom-%j.out unless asked, error the output's file unless asked).
 * A native job the cluster holds for Loom has its own: jobdir, stdout and
 * stderr in it. 0 with three new strings, or -1. */
int script_job_paths(const char *cluster, int runs_as_user,
                     const struct start_req *req, const char *jobdir,
                     char **dir, char **out, char **errf,
                     struct loom_error *err);

#endif
