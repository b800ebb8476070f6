/* loompeer.h - the loom adaptor's parts shared by its files: another loomd
 * (the inner one) seen as one cluster of this one. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_LOOMPEER_H
#define LOOM_ADAPTORS_LOOMPEER_H

#include <jansson.h>
#include <stddef.h>

#include "adaptors/adaptor.h"
#include "core/accounts.h"
#include "core/hmap.h"

/* The environment variable that carries this loomd's job id into the
 * inner loomd's job (how a poll tells which job is which), signed:
 * "ID.MAC", MAC the first LPEER_MAC_LEN bytes of HMAC-SHA256 of ID with
 * the cluster's marker key, in hex. An account that submits to the inner
 * loomd itself cannot make a job pass for one of this loomd's. */
#define LPEER_ID_VAR "LOOM_OUTER_JOB_ID"
#define LPEER_MAC_LEN 12
#define LPEER_MARKER_MAX (20 + 1 + 2 * LPEER_MAC_LEN + 1)

/* The members of an inner job that lpeer_parse_jobs reads, as GET /v1/jobs
 * ?fields= takes them: the others (its script, up to 1 MiB, among them)
 * are neither sent nor parsed. */
#define LPEER_JOB_FIELDS "id,name,account,state,reason,stdout,stderr,nodes," \
                         "submit_time,start_time,end_time,exit_code," \
                         "request,env,loom_id,usage"

struct lop;

/* A page of a list of jobs: its path and its ETag. */
struct lpage {
    char path[1024];
    char etag[80];
};

/* One inner cluster of another loomd. Only the server thread touches it
 * after create(). */
struct lpeer {
    char *cluster;     /* this loomd's name for it */
    char *inner;       /* the inner loomd's name of its cluster */
    char *url;         /* http://host:port, or http://localhost */
    char *socket;      /* the Unix socket, or NULL */
    char *ca_file;     /* HTTPS: the CAs of its certificate, or NULL */
    char *cert_file, *key_file; /* HTTPS: a client certificate, or NULL */
    char *token_file;  /* this loomd's token there: operator, scheduler */
    char *token_dir;   /* one token file per account it may act for */
    unsigned char *key; /* the marker key (state_dir/clusters/NAME/) */
    size_t key_len;
    double timeout_s;
    size_t max_bytes;
    struct curlloop *loop;
    long long after;   /* jobs below it were listed in a final state */
    long page;         /* jobs a page (jobs_page) */
    /* the pages of the last complete list of jobs, each asked for again
     * with its ETag (If-None-Match: a 304 says nothing in it changed);
     * none when a page had no ETag */
    struct lpage *jobs_pages;
    size_t n_jobs_pages, cap_jobs_pages;
    struct hmap account; /* inner job id -> struct lacct */
    struct lop *ops;   /* operations under way */
    char via[64];
};

/* An inner job's account (what cancel and the others act as). */
struct lacct {
    char id[48];
    long long rec;     /* its record id */
    int final;         /* listed as ended */
    char account[LOOM_ACCOUNT_MAX + 1];
    /* the marker it was last listed with and the id it stands for (0:
     * none): a poll verifies a marker once, not every time */
    char marker[LPEER_MARKER_MAX];
    long long loom_id;
};

/* What a request came to. */
struct lanswer {
    long status;       /* 0: no answer (error says why) */
    json_t *doc;       /* the JSON body, or NULL */
    const char *error; /* no answer: why */
    int timed_out;
    const char *text;  /* the body as sent */
    const char *etag;  /* its ETag, or NULL */
};

/* One operation under way: one or more requests in turn. */
struct lop {
    struct lop *prev, *next;
    struct lpeer *p;
    struct adaptor_call *k;
    const char *method;
    char path[1024];    /* /v1/... with its query */
    char *body;         /* JSON, or NULL */
    char *idem;         /* an Idempotency-Key, or NULL */
    /* whose token: this loomd's own (token_file), or else account's
     * (token_dir); an op never falls back from an account to token_file */
    int as_loomd;
    char account[LOOM_ACCOUNT_MAX + 1];
    int local;          /* it ended before it was sent: with local_rc */
    int local_rc;       /* -1: k->err says why */
    char *native;       /* start: the inner job's id */
    int priority;       /* start: the priority submitted */
    long long low, high; /* jobs: lowest unfinished id, highest id */
    int pages;          /* jobs: pages answered before this one */
    size_t quiet;       /* jobs: pages answered 304 before this one */
    int no_etag;        /* jobs: a page of this list had no ETag */
    const char *inm;    /* an If-None-Match to send, or NULL */
    void (*then)(struct lop *o, const struct lanswer *a);
};

/* loompeer.c: the marker of job id into out (LPEER_MARKER_MAX bytes): 0,
 * or -1 when OpenSSL fails. The id a marker stands for, or 0 when it is
 * not one of this cluster's. */
int lpeer_marker(const struct lpeer *p, long long id, char *out);
long long lpeer_marker_id(const struct lpeer *p, const char *marker);

/* loompeer_req.c: an operation (linked into p->ops; o->then set by the
 * caller), sent and ended. lpeer_send sends o's request with the token
 * o->account names; then(o, answer) follows from the loop, once per
 * request, even when it could not be sent. lpeer_done ends the op: frees
 * o, sets k->rc and calls k->done_cb. lpeer_fail sets k->err ("cluster C:
 * loomd URL: METHOD PATH: why") and returns -1; lpeer_fail_answer does it
 * for an answer that is not the one wanted (its kind from the status). */
struct lop *lpeer_op_new(struct lpeer *p, struct adaptor_call *k,
                         const char *method,
                         void (*then)(struct lop *, const struct lanswer *));
void lpeer_send(struct lop *o);
void lpeer_done(struct lop *o, int rc);
int lpeer_fail(struct lop *o, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int lpeer_fail_answer(struct lop *o, const struct lanswer *a);
/* o failed before it was sent (k->err says why), or has nothing to send
 * (lpeer_end_done): ended from the loop. */
void lpeer_end_unsent(struct lop *o);
void lpeer_end_done(struct lop *o);
/* Free the operations under way (at the end; no callback). */
void lpeer_ops_drop(struct lpeer *p);

/* loompeer_start.c: LOOM_OP_START on o (its then and requests). */
void lpeer_start(struct lop *o);

/* loompeer_parse.c: the inner loomd's answers into the contract's lists
 * (empty lists the caller owns afterwards). 0, or -1 with err (LOOM_ETEMP
 * naming the item and field). */
int lpeer_parse_nodes(json_t *doc, struct cl_node_list *out,
                      struct loom_error *err);
int lpeer_parse_queues(json_t *doc, struct cl_queue_list *out,
                       struct loom_error *err);
/* One page of GET /v1/jobs appended to out; *low and *high: the lowest
 * record id of a job not yet final (left alone when none is lower) and the
 * highest record id. p->account is kept up to date; a job is this
 * loomd's (loom_id) when its marker is p's. */
int lpeer_parse_jobs(struct lpeer *p, json_t *doc, struct cl_job_list *out,
                     long long *low, long long *high, struct loom_error *err);
/* Remember the account of inner job id (record rec, ended or not): its
 * entry (borrowed: p->account owns it; its marker and loom_id as they
 * were), or NULL when out of memory. Forget those that ended below
 * p->after (after a complete list: listed as ended, and taken). */
struct lacct *lpeer_note_account(struct lpeer *p, const char *id,
                                 long long rec, const char *account,
                                 int final);
void lpeer_prune_accounts(struct lpeer *p);
/* A cluster or node name of the inner loomd (letters, digits, . _ -, at
 * most 255), safe in a path as it is. */
int lpeer_name_ok(const char *s);
/* An inner job id (digits, a task's _digits), safe in a path. */
int lpeer_is_job_id(const char *id);

/* loompeer_ops.c: the asynchronous form (adaptor_type.call). */
int lpeer_call(void *self, struct adaptor_call *k);

#endif
