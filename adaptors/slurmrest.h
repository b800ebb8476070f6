/* slurmrest.h - the slurmrestd adaptor's parts shared by its files. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_SLURMREST_H
#define LOOM_ADAPTORS_SLURMREST_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "adaptors/adaptor.h"
#include "core/hmap.h"

/* The API versions Loom reads, newest first. */
#define SREST_N_VERSIONS 3
extern const char *const srest_versions[SREST_N_VERSIONS];

struct sop;

/* One slurmrestd cluster. What call() uses is the server thread's; the
 * blocking ops (the fallback pack) touch only pack. */
struct srest {
    char *cluster;
    char *url;             /* http://host:port, or http://localhost */
    char *socket;          /* the Unix socket, or NULL */
    int fixed;             /* api_version named one */
    int vi;                /* srest_versions[vi] is in use */
    int settled;           /* slurmrestd answered on srest_versions[vi] */
    enum { SREST_LOCAL, SREST_KEY, SREST_TOKEN_FILE } auth;
    unsigned char *key;    /* jwt_key_file's bytes (wiped when freed) */
    size_t key_len;
    char *user;            /* whom signed tokens are for */
    char *token_file;
    char *token, *token_user;
    time_t token_exp, token_mtime;
    double token_checked;
    double timeout_s;
    size_t max_bytes;
    char *partition;       /* only these partitions (a comma list) */
    char *workdir;
    struct strv env;       /* env.*: "NAME=value", for the pack and jobs */
    struct curlloop *loop;
    char *pack_name;       /* the fallback pack, or NULL for none */
    const struct adaptor_type *pack_type;
    void *pack;
    int conditional;             /* conditional_polls: update_time */
    /* Incremental polls: when the last full answer was asked for. */
    time_t jobs_at, jobs_full_at, nodes_at, parts_at;
    struct cl_node_list nodes;   /* the last full answers */
    struct cl_queue_list parts;
    unsigned long max_job_id;    /* the highest job id seen */
    /* Ended jobs' usage (slurmrest_usage.c): native id -> what is known */
    struct hmap usage;
    unsigned long usage_gen;     /* lists applied so far */
    size_t usage_waiting;        /* jobs shown as before their end */
    time_t noacct_at;            /* when slurmrestd had no accounting */
    double acct_grace_s;         /* env.LOOM_SLURM_ACCT_GRACE_S (30) */
    struct hmap tried;           /* Loom ids whose start was sent */
    struct sop *ops;             /* operations under way */
    char via[64], via_pack[80];
};

/* What a request came to. */
struct answer {
    long status;       /* 0: no answer (error says why) */
    json_t *doc;       /* the JSON body, or NULL */
    const char *error; /* no answer: why */
    int timed_out;
    const char *text;  /* the body as sent */
    size_t len;
};

/* One operation under way: one or more requests in turn. */
struct sop {
    struct sop *prev, *next;
    struct srest *s;
    struct adaptor_call *k;
    const char *method;
    char path[160];    /* after /slurm/VERSION/ */
    char *body;
    const char *as_user; /* X-SLURM-USER-NAME of a submit, or NULL */
    int local;         /* it failed before it was sent (k->err says why) */
    int raw;           /* a 200's body is left unparsed (a->doc NULL) */
    int db;            /* path is after /slurmdb/v0.0.38/, not /slurm/V/ */
    struct strv ask;   /* the jobs whose usage is asked for, in turn */
    size_t ask_i;
    time_t asked;
    char *native;
    void (*then)(struct sop *o, const struct answer *a);
};

/* slurmrest_req.c: an operation (linked into s->ops; o->then set by the
 * caller), sent and ended. srest_send sends o's request (a token added);
 * then(o, answer) follows from the loop, once per request, even when it
 * could not be sent. srest_done ends the op: frees o, sets k->rc and calls
 * k->done_cb. srest_fail sets k->err ("cluster C: slurmrestd V: METHOD
 * PATH: why") and returns -1; srest_fail_answer does it for an answer that
 * is not the one wanted (kind from the HTTP status and Slurm's error). */
struct sop *srest_sop_new(struct srest *s, struct adaptor_call *k,
                          const char *method,
                          void (*then)(struct sop *, const struct answer *));
void srest_send(struct sop *o);
/* o failed before it was sent (o->k->err says why): ended with that from
 * the loop, as any op ends, never inside call(). */
void srest_end_unsent(struct sop *o);
void srest_done(struct sop *o, int rc);
/* A 404 of a path slurmrestd lacks: the OpenAPI plugin that serves it is
 * not loaded. */
int srest_no_path(long status, const char *body);
/* Unlink and free o without a callback. */
void srest_sop_free(struct sop *o);
int srest_fail(struct sop *o, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int srest_fail_answer(struct sop *o, const struct answer *a);
/* Free the operations under way (at the end; no callback). */
void srest_ops_drop(struct srest *s);

/*
 * slurmrest_usage.c: what ended jobs used, from slurmdbd's records through
 * openapi/dbv0.0.38 (GET /slurmdb/v0.0.38/job/ID), the figures the slurm
 * pack reads from sacct. After a full GET jobs into o->k->jobs,
 * srest_usage_ask sends the requests for the jobs that ended and whose
 * record Loom lacks, one after the other on the loop, and returns 1: its
 * callback (srest_usage_then) ends the op. 0 when none is needed (none
 * ended, or slurmrestd had no accounting in the last 10 minutes): the
 * caller calls srest_usage_apply and ends the op. srest_usage_apply gives
 * each ended job its usage where known; one whose record slurmdbd does
 * not have yet is shown as it was before it ended (running, or pending)
 * for at most acct_grace_s, so that Loom takes its end and its usage
 * together. A failed request never fails the op: the job waits.
 */
int srest_usage_ask(struct sop *o);
void srest_usage_then(struct sop *o, const struct answer *a);
void srest_usage_apply(struct sop *o);
/* Free what is known (at the end). */
void srest_usage_drop(struct srest *s);

/* slurmrest_start.c: LOOM_OP_START; 0 when started, 1 when handed back
 * (o is then the caller's to free). */
int srest_start(struct srest *s, struct sop *o);
/* A Slurm job id (digits, an array's _), safe in a path. */
int srest_is_job_id(const char *id);

/* slurmrest_ops.c: the asynchronous form (adaptor_type.call). */
/* Under rest_auth/local slurmrestd acts as its own account whoever asks:
 * what acts on a job (start, cancel, hold, release) goes to the fallback
 * pack, which acts as the job's account or as loomd's. 1 for those. */
int srest_as_pack(const struct srest *s, int op);
int srest_call(void *self, struct adaptor_call *k);

/*
 * Parsers of slurmrestd's answers (OpenAPI v0.0.36 to v0.0.38 of Slurm
 * 22.05), each into an empty list the caller owns afterwards. An answer
 * that lacks a field Loom needs, or has one of another type, fails with
 * LOOM_ETEMP naming the item and the field ("jobs[3].job_state: missing");
 * fields Loom does not read are ignored. Any thread.
 */

/* GET /nodes: only the nodes of the partitions in only (a comma list),
 * or all when only is NULL. */
int srest_parse_nodes(json_t *doc, const char *only, struct cl_node_list *out,
                      struct loom_error *err);
/* GET /jobs (every job: the list is complete). *max_id: the highest job
 * id listed (left as it is when none is higher). */
int srest_parse_jobs(json_t *doc, struct cl_job_list *out,
                     unsigned long *max_id, struct loom_error *err);
/* The same from the answer's text, reading only what Loom needs
 * (slurmrest_scan.c): what GET /jobs costs to parse is most of what the
 * adaptor adds to the request. */
int srest_scan_jobs(const char *text, size_t len, struct cl_job_list *out,
                    unsigned long *max_id, struct loom_error *err);
/* The members of a job Loom reads, as indexes into srest_job_fields[]. */
enum srest_job_field {
    SREST_F_JOB_ID, SREST_F_JOB_STATE, SREST_F_STATE_REASON, SREST_F_NAME,
    SREST_F_USER_NAME, SREST_F_NODES, SREST_F_COMMENT, SREST_F_STDOUT,
    SREST_F_STDERR, SREST_F_SUBMIT_TIME, SREST_F_START_TIME,
    SREST_F_END_TIME, SREST_F_EXIT_CODE, SREST_F_NODE_COUNT,
    SREST_F_CPUS_PER_NODE, SREST_F_MEMORY_PER_NODE, SREST_F_MEMORY_PER_CPU,
    SREST_F_TIME_LIMIT, SREST_N_JOB_FIELDS
};
/* Their names in slurmrestd's answer ("job_id", ...). */
extern const char *const srest_job_fields[SREST_N_JOB_FIELDS];
/* One job (f: its members, borrowed, NULL where the job has none; jobs[i]
 * of the answer) appended to out: the mapping both read jobs through. */
int srest_job_from(json_t *const f[SREST_N_JOB_FIELDS], size_t i,
                   struct cl_job_list *out, unsigned long *max_id,
                   struct loom_error *err);
/* GET /partitions: only those in only (a comma list), or all. */
int srest_parse_partitions(json_t *doc, const char *only,
                           struct cl_queue_list *out, struct loom_error *err);
/* GET /slurmdb/v0.0.38/job/ID (openapi/dbv0.0.38): job id's ended record
 * into *u, the figures sacct shows: its steps' summed user and system cpu
 * (UserCPU, SystemCPU of the job's line; ms, truncated as sacct does) and
 * the largest "mem" of the steps' tres.requested.max (MaxRSS; bytes into
 * KiB, rounded). 1, or 0 when slurmdbd has none yet: not listed ("Nothing
 * found"), still active in its record, or cpu times that are not pairs of
 * non-negative integers. */
int srest_parse_usage(const json_t *doc, const char *id, struct cl_usage *u);
/* POST /job/submit: the new job's id (a new string). */
int srest_parse_submit(json_t *doc, char **job_id, struct loom_error *err);
/* The first of the answer's errors[] as "what (code)" into out, and its
 * code (0 when there is none: then out is ""). */
int srest_first_error(json_t *doc, char *out, size_t n);

/* An HS256 JSON Web Token for user, as `scontrol token` makes them (the
 * claims iat, exp and sun), signed with key. A new string, or NULL when
 * out of memory. */
char *srest_jwt_sign(const unsigned char *key, size_t key_len,
                     const char *user, time_t iat, time_t exp);
/* The user a token is for (its claim sun, else username) and when it
 * expires (its claim exp, 0 when absent): 0, or -1 with err when the token
 * is not a JWT. *user is a new string. The signature is not checked. */
int srest_jwt_claims(const char *token, char **user, time_t *exp,
                     struct loom_error *err);

#endif
