/* submit.c - drmaa_run_job and drmaa_run_bulk_jobs: a job template made
 * into Loom's job request, and POST /v1/jobs with an Idempotency-Key. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid/drmaa/template.h"

#define BULK_MAX 100000 /* jobs in one drmaa_run_bulk_jobs */
#define TRIES 5         /* a submit that got no answer is sent again */
#define TASK_VAR "LOOM_TASK_ID"

static int set_new(json_t *o, const char *key, json_t *v, struct dr_error *e)
{
    if (!v || json_object_set_new(o, key, v) < 0)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return 0;
}

static int command_in(const drmaa_job_template_t *jt, json_t *body,
                      struct dr_error *e)
{
    const struct dr_strv *argv = &jt->vector[DR_V_ARGV];
    json_t *cmd;

    if (!jt->scalar[DR_REMOTE_COMMAND])
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ARGUMENT,
                            "the job template has no %s",
                            DRMAA_REMOTE_COMMAND);
    cmd = json_array();
    if (set_new(body, "command", cmd, e) < 0 ||
        json_array_append_new(cmd, json_string(jt->scalar[DR_REMOTE_COMMAND]))
            < 0)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < argv->n; i++)
        if (json_array_append_new(cmd, json_string(argv->v[i])) < 0)
            return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    return 0;
}

/* drmaa_v_env as Loom's env object; a bulk job's index in LOOM_TASK_ID. */
static int env_in(const drmaa_job_template_t *jt, int index, json_t *body,
                  struct dr_error *e)
{
    const struct dr_strv *env = &jt->vector[DR_V_ENV];
    char num[16];
    json_t *o;

    if (!env->n && !index)
        return 0;
    o = json_object();
    if (set_new(body, "env", o, e) < 0)
        return -1;
    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        char *name = strndup(env->v[i], (size_t)(eq - env->v[i]));
        int rc = name ? json_object_set_new(o, name, json_string(eq + 1))
                      : -1;
        free(name);
        if (rc < 0)
            return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    }
    if (!index)
        return 0;
    if (json_object_get(o, TASK_VAR))
        return dr_error_set(e, DRMAA_ERRNO_CONFLICTING_ATTRIBUTE_VALUES,
                            "%s sets %s, which a bulk job sets to its index",
                            DRMAA_V_ENV, TASK_VAR);
    snprintf(num, sizeof(num), "%d", index);
    return set_new(o, TASK_VAR, json_string(num), e);
}

json_t *dr_template_request(const drmaa_job_template_t *jt, int index,
                            struct dr_error *e)
{
    json_t *body = json_object(), *req;
    long long walltime;

    if (!body) {
        dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (command_in(jt, body, e) < 0 || env_in(jt, index, body, e) < 0)
        goto error;
    if (jt->scalar[DR_JOB_NAME] &&
        set_new(body, "name", json_string(jt->scalar[DR_JOB_NAME]), e) < 0)
        goto error;
    if (dr_paths_apply(jt, index, body, e) < 0)
        goto error;
    if (jt->scalar[DR_NATIVE_SPECIFICATION] &&
        dr_native_apply(jt->scalar[DR_NATIVE_SPECIFICATION], body, e) < 0)
        goto error;
    if (jt->scalar[DR_WCT_HLIMIT] &&
        dr_time_parse(jt->scalar[DR_WCT_HLIMIT], &walltime) == 0) {
        req = json_object_get(body, "request");
        if (!req && set_new(body, "request", req = json_object(), e) < 0)
            goto error;
        if (set_new(req, "walltime_s", json_integer(walltime), e) < 0)
            goto error;
    }
    return body;
error:
    json_decref(body);
    return NULL;
}

/* POST one job; answers that may be a lost reply are tried again with the
 * same key. 0 with the job's id in id, or -1 with e. */
static int post(const json_t *body, const char *key, char *id, size_t size,
                struct dr_error *e)
{
    json_t *reply = NULL;
    const char *got;
    long status = 0, nap = 200;

    for (int t = 1;; t++) {
        if (dr_rest("POST", "/v1/jobs", body, key, &status, &reply, e) == 0)
            break;
        /* No answer, 503 (not stored), or 409 (the first try is still
         * being committed): the same key cannot make a second job. */
        if ((status != 0 && status != 503 &&
             !(status == 409 && strstr(e->msg, "in progress"))) ||
            t == TRIES || !dr_session_active())
            break;
        dr_session_nap(nap);
        nap *= 2;
    }
    if (e->code != DRMAA_ERRNO_SUCCESS) {
        if (status == 400 || status == 409 || status == 413 || status == 422)
            e->code = DRMAA_ERRNO_DENIED_BY_DRM;
        return -1;
    }
    got = json_string_value(json_object_get(reply, "id"));
    if (!got || strlen(got) >= size) {
        json_decref(reply);
        return dr_error_set(e, DRMAA_ERRNO_INTERNAL_ERROR,
                            "Loom's answer to POST /v1/jobs has no job id");
    }
    snprintf(id, size, "%s", got);
    json_decref(reply);
    return dr_jobs_add(id, e);
}

static int submit_one(const drmaa_job_template_t *jt, unsigned long call,
                      int index, char *id, size_t size, struct dr_error *e)
{
    char key[128];
    json_t *body = dr_template_request(jt, index, e);
    int rc;

    if (!body)
        return -1;
    dr_session_key(key, sizeof(key), call, index);
    rc = post(body, key, id, size, e);
    json_decref(body);
    return rc;
}

int drmaa_run_job(char *job_id, size_t job_id_len,
                  const drmaa_job_template_t *jt, char *error_diagnosis,
                  size_t error_diag_len)
{
    struct dr_error e = { 0 };
    char id[32];

    if (!job_id || !job_id_len || !jt) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_run_job needs a buffer for the id and jt");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    if (submit_one(jt, dr_session_call(), 0, id, sizeof(id), &e) == 0)
        dr_copy(job_id, job_id_len, id);
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

/* A bulk submit that failed half-way: cancel what it made (best effort),
 * so that the caller, who gets no ids, is left with no jobs either. */
static void undo(struct dr_strv *ids, struct dr_error *e)
{
    struct dr_error ignored;
    char path[64];
    json_t *reply;
    long status;
    size_t n = strlen(e->msg);

    for (size_t i = 0; i < ids->n; i++) {
        snprintf(path, sizeof(path), "/v1/jobs/%s", ids->v[i]);
        dr_rest("DELETE", path, NULL, NULL, &status, &reply, &ignored);
        json_decref(reply);
        dr_jobs_reap(ids->v[i]);
    }
    if (ids->n && n < sizeof(e->msg))
        snprintf(e->msg + n, sizeof(e->msg) - n,
                 "; the %zu job(s) submitted before it were cancelled",
                 ids->n);
}

int drmaa_run_bulk_jobs(drmaa_job_ids_t **jobids,
                        const drmaa_job_template_t *jt, int start, int end,
                        int incr, char *error_diagnosis,
                        size_t error_diag_len)
{
    struct dr_error e = { 0 };
    drmaa_job_ids_t *out;
    unsigned long call;
    char id[32];

    if (!jobids || !jt || start < 1 || end < start || incr < 1 ||
        (end - start) / incr >= BULK_MAX) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_run_bulk_jobs needs jobids, jt, 1 <= start <= "
                     "end and incr >= 1, for at most %d jobs (got %d to %d "
                     "by %d)", BULK_MAX, start, end, incr);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    *jobids = NULL;
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    out = dr_ids_new();
    if (!out)
        dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    call = dr_session_call();
    for (long long i = start; out && i <= end; i += incr) {
        if (submit_one(jt, call, (int)i, id, sizeof(id), &e) < 0) {
            size_t n = strlen(e.msg);
            snprintf(e.msg + n, sizeof(e.msg) - n, " (index %lld)", i);
            undo(dr_ids_strv(out), &e);
            break;
        }
        if (dr_strv_push(dr_ids_strv(out), id) < 0) {
            dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
            undo(dr_ids_strv(out), &e);
            break;
        }
    }
    if (e.code == DRMAA_ERRNO_SUCCESS)
        *jobids = out;
    else
        drmaa_release_job_ids(out);
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}
