/* control.c - drmaa_control: suspend, resume, hold, release and terminate,
 * for one job or every job of the session. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <string.h>

#include "grid/drmaa/dr.h"

static const struct {
    const char *method, *op; /* the request: METHOD /v1/jobs/{id}[/op] */
    int inconsistent;        /* the code for a job in the wrong state */
} actions[] = {
    [DRMAA_CONTROL_SUSPEND] = { "POST", "suspend",
                                DRMAA_ERRNO_SUSPEND_INCONSISTENT_STATE },
    [DRMAA_CONTROL_RESUME] = { "POST", "resume",
                               DRMAA_ERRNO_RESUME_INCONSISTENT_STATE },
    [DRMAA_CONTROL_HOLD] = { "POST", "hold",
                             DRMAA_ERRNO_HOLD_INCONSISTENT_STATE },
    [DRMAA_CONTROL_RELEASE] = { "POST", "release",
                                DRMAA_ERRNO_RELEASE_INCONSISTENT_STATE },
    [DRMAA_CONTROL_TERMINATE] = { "DELETE", NULL, DRMAA_ERRNO_INVALID_JOB },
};

/* One job. A state that does not allow the action (409), or a cluster that
 * cannot do it (501), is the action's inconsistent-state code (for
 * terminate, a job that has ended: DRMAA_ERRNO_INVALID_JOB). */
static int act(const char *id, int action, struct dr_error *e)
{
    char path[96];
    json_t *reply;
    long status;

    if (dr_job_id_check(id, e) < 0)
        return -1;
    if (actions[action].op)
        snprintf(path, sizeof(path), "/v1/jobs/%s/%s", id,
                 actions[action].op);
    else
        snprintf(path, sizeof(path), "/v1/jobs/%s", id);
    if (dr_rest(actions[action].method, path, NULL, NULL, &status, &reply,
                e) == 0) {
        json_decref(reply);
        return 0;
    }
    if (status == 404)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_JOB, "Loom has no job "
                            "'%s'", id);
    if (status == 409 || status == 501)
        e->code = actions[action].inconsistent;
    return -1;
}

/* Whether a job whose state refused an action has ended: the session's
 * ended jobs (not yet reaped) are left out of DRMAA_JOB_IDS_SESSION_ALL. */
static int has_ended(const char *id, const struct dr_error *refused)
{
    struct dr_error e = { 0 };
    struct dr_job j;

    return refused->code != DRMAA_ERRNO_INVALID_ARGUMENT &&
           refused->code != DRMAA_ERRNO_AUTH_FAILURE &&
           refused->code != DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE &&
           dr_job_get(id, &j, &e) == 0 && j.final;
}

/* Every job of the session that has not ended: each is tried; the first
 * failure is told, with how many failed. */
static int act_all(int action, struct dr_error *e)
{
    struct dr_strv ids = { 0 };
    struct dr_error one;
    size_t failed = 0, n;

    if (dr_jobs_list(&ids, e) < 0)
        return -1;
    for (size_t i = 0; i < ids.n; i++) {
        one.code = DRMAA_ERRNO_SUCCESS;
        if (act(ids.v[i], action, &one) == 0 || has_ended(ids.v[i], &one))
            continue;
        if (!failed++)
            *e = one;
    }
    n = strlen(e->msg);
    if (failed > 1 && n < sizeof(e->msg))
        snprintf(e->msg + n, sizeof(e->msg) - n,
                 " (and %zu more of the session's %zu jobs failed)",
                 failed - 1, ids.n);
    dr_strv_fini(&ids);
    return failed ? -1 : 0;
}

int drmaa_control(const char *jobid, int action, char *error_diagnosis,
                  size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!jobid || action < DRMAA_CONTROL_SUSPEND ||
        action > DRMAA_CONTROL_TERMINATE ||
        !strcmp(jobid, DRMAA_JOB_IDS_SESSION_ANY)) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_control needs a job id (or %s) and an action "
                     "from DRMAA_CONTROL_SUSPEND to DRMAA_CONTROL_TERMINATE",
                     DRMAA_JOB_IDS_SESSION_ALL);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    if (!strcmp(jobid, DRMAA_JOB_IDS_SESSION_ALL))
        act_all(action, &e);
    else
        act(jobid, action, &e);
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}
