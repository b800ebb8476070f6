/* wait.c - drmaa_wait and drmaa_synchronize: Loom is asked about the jobs
 * until they end, the timeout passes or the session is left. */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grid/drmaa/dr.h"

#define NAP_FIRST_MS 50L /* between rounds of questions, doubling... */
#define NAP_MAX_MS 1000L /* ... up to this */

/* When a wait gives up: never (forever), or at end. */
struct deadline {
    int forever;
    struct timespec end;
};

static int deadline_init(struct deadline *d, signed long timeout,
                         struct dr_error *e)
{
    if (timeout < DRMAA_TIMEOUT_WAIT_FOREVER)
        return dr_error_set(e, DRMAA_ERRNO_INVALID_ARGUMENT,
                            "the timeout must be seconds, DRMAA_TIMEOUT_"
                            "WAIT_FOREVER (-1) or DRMAA_TIMEOUT_NO_WAIT (0), "
                            "not %ld", timeout);
    d->forever = timeout == DRMAA_TIMEOUT_WAIT_FOREVER;
    clock_gettime(CLOCK_MONOTONIC, &d->end);
    if (!d->forever)
        d->end.tv_sec += timeout;
    return 0;
}

/* The nap before the next round, or -1 when the deadline has passed or
 * the session is being left (e says which). */
static long next_nap(const struct deadline *d, long *nap, struct dr_error *e)
{
    struct timespec now;
    long left, n = *nap;

    if (!dr_session_active())
        return dr_error_set(e, DRMAA_ERRNO_NO_ACTIVE_SESSION,
                            "the session was left while waiting");
    if (!d->forever) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        left = (long)(d->end.tv_sec - now.tv_sec) * 1000 +
               (d->end.tv_nsec - now.tv_nsec) / 1000000;
        if (left <= 0)
            return dr_error_set(e, DRMAA_ERRNO_EXIT_TIMEOUT,
                                "the job(s) had not ended when the timeout "
                                "passed");
        if (n > left)
            n = left;
    }
    *nap = *nap * 2 > NAP_MAX_MS ? NAP_MAX_MS : *nap * 2;
    return n;
}

/* One round over ids: each one not yet done is asked about. With any, stop
 * at the first that has ended and reap it (*found is its index, j its
 * record); without, mark each ended one done (*found: how many are done).
 * -1 with e on a failed question. */
static int round_of(struct dr_strv *ids, char *done, int any, size_t *found,
                    struct dr_job *j, struct dr_error *e)
{
    size_t n_done = 0;

    for (size_t i = 0; i < ids->n; i++) {
        if (done[i]) {
            n_done++;
            continue;
        }
        if (dr_job_get(ids->v[i], j, e) < 0) {
            if (e->code == DRMAA_ERRNO_INVALID_JOB)
                dr_jobs_reap(ids->v[i]); /* Loom forgot it: so do we */
            return -1;
        }
        if (!j->final)
            continue;
        done[i] = 1;
        n_done++;
        if (any && dr_jobs_reap(ids->v[i]) == 0) {
            *found = i;
            return 0;
        }
    }
    *found = any ? ids->n : n_done;
    return 0;
}

int drmaa_wait(const char *job_id, char *job_id_out, size_t job_id_out_len,
               int *stat, signed long timeout, drmaa_attr_values_t **rusage,
               char *error_diagnosis, size_t error_diag_len)
{
    int any = job_id && !strcmp(job_id, DRMAA_JOB_IDS_SESSION_ANY);
    struct dr_strv ids = { 0 };
    struct dr_error e = { 0 };
    struct deadline d;
    struct dr_job j;
    long nap = NAP_FIRST_MS, n;
    size_t found;
    char *done = NULL;

    if (rusage)
        *rusage = NULL;
    if (!job_id || deadline_init(&d, timeout, &e) < 0) {
        if (!job_id)
            dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                         "drmaa_wait needs a job id or %s",
                         DRMAA_JOB_IDS_SESSION_ANY);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    for (;;) {
        dr_strv_fini(&ids);
        free(done);
        done = NULL;
        if (any ? dr_jobs_list(&ids, &e) < 0
                : dr_strv_push(&ids, job_id) < 0)
            break;
        if (!ids.n || (!any && !dr_jobs_has(job_id))) {
            dr_error_set(&e, DRMAA_ERRNO_INVALID_JOB,
                         any ? "the session has no job left to wait for"
                             : "job '%.40s' is not a job of this session, "
                               "or was reaped already", job_id);
            break;
        }
        done = calloc(ids.n, 1);
        if (!done) {
            dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
            break;
        }
        if (round_of(&ids, done, 1, &found, &j, &e) < 0)
            break;
        if (found < ids.n)
            break;
        if ((n = next_nap(&d, &nap, &e)) < 0)
            break;
        dr_session_nap(n);
    }
    if (e.code == DRMAA_ERRNO_SUCCESS) {
        dr_copy(job_id_out, job_id_out_len, j.id);
        if (stat)
            *stat = j.stat;
        if (rusage && !(*rusage = dr_job_rusage(&j)))
            dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    }
    dr_strv_fini(&ids);
    free(done);
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}

/* The ids job_ids names: session jobs only; DRMAA_JOB_IDS_SESSION_ALL is
 * every job of the session. */
static int sync_ids(const char *job_ids[], struct dr_strv *ids,
                    struct dr_error *e)
{
    for (size_t i = 0; job_ids[i]; i++) {
        if (!strcmp(job_ids[i], DRMAA_JOB_IDS_SESSION_ALL)) {
            if (dr_jobs_list(ids, e) < 0)
                return -1;
        } else if (!dr_jobs_has(job_ids[i])) {
            return dr_error_set(e, DRMAA_ERRNO_INVALID_JOB,
                                "job '%.40s' is not a job of this session, "
                                "or was reaped already", job_ids[i]);
        } else if (dr_strv_push(ids, job_ids[i]) < 0) {
            return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
        }
    }
    return 0;
}

int drmaa_synchronize(const char *job_ids[], signed long timeout, int dispose,
                      char *error_diagnosis, size_t error_diag_len)
{
    struct dr_strv ids = { 0 };
    struct dr_error e = { 0 };
    struct deadline d;
    struct dr_job j;
    long nap = NAP_FIRST_MS, n;
    size_t n_done;
    char *done = NULL;

    if (!job_ids || deadline_init(&d, timeout, &e) < 0) {
        if (!job_ids)
            dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                         "drmaa_synchronize needs a NULL-terminated list "
                         "of job ids");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    if (dr_session_enter(&e) < 0)
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    if (sync_ids(job_ids, &ids, &e) < 0)
        goto out;
    done = calloc(ids.n + 1, 1);
    if (!done) {
        dr_error_set(&e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
        goto out;
    }
    for (;;) {
        if (round_of(&ids, done, 0, &n_done, &j, &e) < 0 ||
            n_done == ids.n)
            break;
        if ((n = next_nap(&d, &nap, &e)) < 0)
            break;
        dr_session_nap(n);
    }
    if (e.code == DRMAA_ERRNO_SUCCESS && dispose)
        for (size_t i = 0; i < ids.n; i++)
            dr_jobs_reap(ids.v[i]);
out:
    dr_strv_fini(&ids);
    free(done);
    dr_session_leave();
    return dr_error_out(&e, error_diagnosis, error_diag_len);
}
