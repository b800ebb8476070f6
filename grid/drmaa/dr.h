/* dr.h - the inside of libdrmaa: errors, string vectors, the session, job
 * templates, requests to Loom, job records. Not installed. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_GRID_DRMAA_DR_H
#define LOOM_GRID_DRMAA_DR_H

#include <stddef.h>

#include <jansson.h>

#include "grid/drmaa/drmaa.h"

/* Errors ------------------------------------------------------------------ */

/* What failed: a DRMAA_ERRNO_* code and one sentence. */
struct dr_error {
    int code;
    char msg[DRMAA_ERROR_STRING_BUFFER];
};

/* Fill e and return -1, so that an error path is one line. */
int dr_error_set(struct dr_error *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copy e's message into the caller's diagnosis buffer (when it has one)
 * and return e's code: the last line of every exported function. */
int dr_error_out(const struct dr_error *e, char *diag, size_t len);
/* Copy src into dst (size bytes), truncated and always terminated; a NULL
 * or empty dst is left alone. */
void dr_copy(char *dst, size_t size, const char *src);

/* String vectors (attribute names, attribute values, job ids) ------------ */

struct dr_strv {
    char **v;
    size_t n, cap, next; /* next: the iterator's position */
};

/* Append a copy of s. 0, or -1 when out of memory. */
int dr_strv_push(struct dr_strv *s, const char *s_new);
void dr_strv_fini(struct dr_strv *s);

/* The opaque vectors of drmaa.h, each a struct dr_strv. New, empty; NULL
 * when out of memory. Released with drmaa_release_*. */
drmaa_attr_names_t *dr_names_new(void);
drmaa_attr_values_t *dr_values_new(void);
drmaa_job_ids_t *dr_ids_new(void);
struct dr_strv *dr_names_strv(drmaa_attr_names_t *v);
struct dr_strv *dr_values_strv(drmaa_attr_values_t *v);
struct dr_strv *dr_ids_strv(drmaa_job_ids_t *v);

/* The session ------------------------------------------------------------ */

struct client;

/* Enter the active session for one call (a call that enters must leave);
 * -1 with DRMAA_ERRNO_NO_ACTIVE_SESSION when there is none. drmaa_exit
 * waits until every call that entered has left. */
int dr_session_enter(struct dr_error *e);
void dr_session_leave(void);
/* 1 while the session is active: a waiting call stops when it is not. */
int dr_session_active(void);
/* Sleep up to ms milliseconds, or less when drmaa_exit begins. */
void dr_session_nap(long ms);

/* An HTTP client for one request (the session keeps a few, for reuse).
 * Taken and given back within one entered call. */
struct client *dr_client_take(struct dr_error *e);
void dr_client_give(struct client *c);

/* A new Idempotency-Key for a submit: unique to the session, the call and
 * the index. Writes into buf. */
void dr_session_key(char *buf, size_t size, unsigned long call, int index);
/* A new call number for dr_session_key. */
unsigned long dr_session_call(void);

/* The session's jobs. A job is the session's from its submit until it is
 * reaped (drmaa_wait, or drmaa_synchronize with dispose). */
int dr_jobs_add(const char *id, struct dr_error *e);
int dr_jobs_has(const char *id);
/* Reap id: 0, or -1 when it is not (or no longer) the session's. */
int dr_jobs_reap(const char *id);
/* A copy of the session's job ids, in submit order, into s. 0 or -1
 * (out of memory, with e). */
int dr_jobs_list(struct dr_strv *s, struct dr_error *e);

/* The bearer token from the file $LOOM_TOKEN_FILE names: a regular file
 * that group and others cannot access, holding one word. 0 with *token a
 * new string (a secret: wipe it before free), or -1 with e
 * (DRMAA_ERRNO_AUTH_FAILURE). */
int dr_token_read(char **token, struct dr_error *e);

/* Requests to Loom ------------------------------------------------------- */

/*
 * Send method to path with body (borrowed, or NULL) and, for a submit, an
 * Idempotency-Key (or NULL). Returns 0 with *reply (new reference, may be
 * NULL) and *status on a 2xx answer; else -1 with e filled from the
 * answer: 401 and 403 DRMAA_ERRNO_AUTH_FAILURE; no answer and 503
 * DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE; 404 DRMAA_ERRNO_INVALID_JOB; any
 * other status DRMAA_ERRNO_INVALID_ARGUMENT (callers that know better map
 * *status again). The message is Loom's. Must be inside an entered call.
 */
int dr_rest(const char *method, const char *path, const json_t *body,
            const char *idem_key, long *status, json_t **reply,
            struct dr_error *e);

/* Job records ------------------------------------------------------------- */

/* What drmaa_job_ps, drmaa_wait and drmaa_synchronize need of a job. */
struct dr_job {
    char id[32];
    int ps;        /* DRMAA_PS_* */
    int final;     /* completed, failed or cancelled */
    int stat;      /* for drmaa_wait, once final */
    long long submit_time, start_time, end_time; /* epoch s, or -1 */
    int has_exit;
    int exit_code;
};

/* 0 when id has the form of Loom's job ids (a positive decimal number);
 * else -1 with DRMAA_ERRNO_INVALID_JOB, so that no other text becomes part
 * of a request's path. */
int dr_job_id_check(const char *id, struct dr_error *e);
/* GET /v1/jobs/{id} into j. 0, or -1 with e (DRMAA_ERRNO_INVALID_JOB for a
 * job Loom does not know). Must be inside an entered call. */
int dr_job_get(const char *id, struct dr_job *j, struct dr_error *e);
/* The rusage of a final job: "name=value" strings. NULL when out of
 * memory. */
drmaa_attr_values_t *dr_job_rusage(const struct dr_job *j);

/* Job templates ---------------------------------------------------------- */

/* Build the body of POST /v1/jobs for jt; index is the bulk index (0 for
 * a single job: no LOOM_TASK_ID). Returns a new object, or NULL with e. */
json_t *dr_template_request(const drmaa_job_template_t *jt, int index,
                            struct dr_error *e);

/* The native specification: its words checked and put into the request
 * (body, and body's "request" object). 0, or -1 with e naming the word. */
int dr_native_apply(const char *spec, json_t *body, struct dr_error *e);

#endif
