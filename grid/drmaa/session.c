/* session.c - the DRMAA session: drmaa_init and drmaa_exit, the session
 * lock, its jobs, its HTTP clients, and what it says about itself. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "core/ctl/client.h"
#include "grid/drmaa/dr.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define POOL_MAX 8 /* idle HTTP clients kept for reuse */

enum { S_IDLE, S_STARTING, S_ACTIVE, S_LEAVING };

/* Everything below is guarded by lock, except what an entered call reads:
 * contact and token do not change while a call is inside (drmaa_exit waits
 * for busy to fall to 0 before it frees them). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond; /* busy changed, or the session is being left */
    int state;
    int busy;            /* calls inside the session */
    char *contact;
    char *token;         /* a secret: wiped before free */
    char drm[128];       /* "Loom 0.1.0" */
    char sid[33];        /* random, hex: makes Idempotency-Keys unique */
    unsigned long calls;
    long long *jobs;     /* the session's job ids, ascending */
    size_t njobs, capjobs;
    struct client *pool[POOL_MAX];
    size_t npool;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int once_failed;

/* The condition variable on the monotonic clock, and libcurl: once. */
static void global_init(void)
{
    pthread_condattr_t a;

    if (pthread_condattr_init(&a) != 0 ||
        pthread_condattr_setclock(&a, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&S.cond, &a) != 0)
        once_failed = 1;
    pthread_condattr_destroy(&a);
    /* Thread-safe since libcurl 7.84; never cleaned up, as the program
     * may use libcurl itself. */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        once_failed = 1;
}

static void wipe_free(char *s)
{
    if (s) {
        OPENSSL_cleanse(s, strlen(s));
        free(s);
    }
}

/* Entering and leaving -------------------------------------------------- */

int dr_session_enter(struct dr_error *e)
{
    int ok;

    pthread_mutex_lock(&S.lock);
    ok = S.state == S_ACTIVE;
    if (ok)
        S.busy++;
    pthread_mutex_unlock(&S.lock);
    if (!ok)
        return dr_error_set(e, DRMAA_ERRNO_NO_ACTIVE_SESSION,
                            "no active session: call drmaa_init first");
    return 0;
}

void dr_session_leave(void)
{
    pthread_mutex_lock(&S.lock);
    if (--S.busy == 0)
        pthread_cond_broadcast(&S.cond);
    pthread_mutex_unlock(&S.lock);
}

int dr_session_active(void)
{
    int active;

    pthread_mutex_lock(&S.lock);
    active = S.state == S_ACTIVE;
    pthread_mutex_unlock(&S.lock);
    return active;
}

void dr_session_nap(long ms)
{
    struct timespec until;

    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&S.lock);
    while (S.state == S_ACTIVE &&
           pthread_cond_timedwait(&S.cond, &S.lock, &until) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&S.lock);
}

/* HTTP clients ---------------------------------------------------------- */

static int https(void)
{
    return strncmp(S.contact, "https://", 8) == 0;
}

/* A client for the contact, with the TLS files of the environment
 * (LOOM_CA_FILE, LOOM_CA_DIR, LOOM_CERT_FILE, LOOM_KEY_FILE) for https. */
static struct client *open_client(struct loom_error *err)
{
    struct client_tls t;
    struct client *c = client_create(S.contact, S.token, 0, err);

    client_tls_from_env(&t);
    if (c && https() && client_set_tls(c, &t, err) < 0) {
        client_destroy(c);
        c = NULL;
    }
    return c;
}

struct client *dr_client_take(struct dr_error *e)
{
    struct client *c = NULL;
    struct loom_error err;

    pthread_mutex_lock(&S.lock);
    if (S.npool)
        c = S.pool[--S.npool];
    pthread_mutex_unlock(&S.lock);
    if (c)
        return c;
    c = open_client(&err);
    if (!c)
        dr_error_set(e, DRMAA_ERRNO_INTERNAL_ERROR, "%s", err.message);
    return c;
}

void dr_client_give(struct client *c)
{
    pthread_mutex_lock(&S.lock);
    if (c && S.npool < POOL_MAX) {
        S.pool[S.npool++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&S.lock);
    client_destroy(c);
}

/* Keys ------------------------------------------------------------------ */

unsigned long dr_session_call(void)
{
    unsigned long n;

    pthread_mutex_lock(&S.lock);
    n = ++S.calls;
    pthread_mutex_unlock(&S.lock);
    return n;
}

void dr_session_key(char *buf, size_t size, unsigned long call, int index)
{
    snprintf(buf, size, "drmaa-%s-%lu-%d", S.sid, call, index);
}

/* The session's jobs ---------------------------------------------------- */

/* Loom's job ids are positive decimal numbers; anything else is no job. */
static long long id_num(const char *id)
{
    long long v = 0;

    if (!id || !*id || strlen(id) > 18)
        return -1;
    for (; *id; id++) {
        if (*id < '0' || *id > '9')
            return -1;
        v = v * 10 + (*id - '0');
    }
    return v > 0 ? v : -1;
}

/* Where id is, or would go, in the sorted array. */
static size_t find(long long id)
{
    size_t lo = 0, hi = S.njobs;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (S.jobs[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int dr_jobs_add(const char *id, struct dr_error *e)
{
    long long v = id_num(id), *grown;
    size_t at, cap;
    int rc = 0;

    if (v < 0)
        return dr_error_set(e, DRMAA_ERRNO_INTERNAL_ERROR,
                            "Loom answered a job id that is not a number: "
                            "'%.40s'", id ? id : "");
    pthread_mutex_lock(&S.lock);
    at = find(v);
    if (at < S.njobs && S.jobs[at] == v)
        goto out; /* a replayed submit: the same job */
    if (S.njobs == S.capjobs) {
        cap = S.capjobs ? 2 * S.capjobs : 64;
        grown = realloc(S.jobs, cap * sizeof(*grown));
        if (!grown) {
            rc = dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
            goto out;
        }
        S.jobs = grown;
        S.capjobs = cap;
    }
    memmove(S.jobs + at + 1, S.jobs + at, (S.njobs - at) * sizeof(*S.jobs));
    S.jobs[at] = v;
    S.njobs++;
out:
    pthread_mutex_unlock(&S.lock);
    return rc;
}

int dr_jobs_has(const char *id)
{
    long long v = id_num(id);
    size_t at;
    int has;

    pthread_mutex_lock(&S.lock);
    at = find(v);
    has = v > 0 && at < S.njobs && S.jobs[at] == v;
    pthread_mutex_unlock(&S.lock);
    return has;
}

int dr_jobs_reap(const char *id)
{
    long long v = id_num(id);
    size_t at;
    int rc = -1;

    pthread_mutex_lock(&S.lock);
    at = find(v);
    if (v > 0 && at < S.njobs && S.jobs[at] == v) {
        memmove(S.jobs + at, S.jobs + at + 1,
                (S.njobs - at - 1) * sizeof(*S.jobs));
        S.njobs--;
        rc = 0;
    }
    pthread_mutex_unlock(&S.lock);
    return rc;
}

int dr_jobs_list(struct dr_strv *s, struct dr_error *e)
{
    char id[24];
    int rc = 0;

    pthread_mutex_lock(&S.lock);
    for (size_t i = 0; i < S.njobs && rc == 0; i++) {
        snprintf(id, sizeof(id), "%lld", S.jobs[i]);
        if (dr_strv_push(s, id) < 0)
            rc = dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    }
    pthread_mutex_unlock(&S.lock);
    return rc;
}

/* Init and exit --------------------------------------------------------- */

/* Ask Loom who it is, with the token: a wrong URL or token fails here. */
static int probe(struct client *c, struct dr_error *e)
{
    struct loom_error err;
    json_t *reply = NULL;
    const char *v;
    long status = 0;

    if (client_request(c, "GET", "/v1/runtime", NULL, NULL, &status, &reply,
                       &err) < 0) {
        if (status == 401 || status == 403)
            return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE, "%s",
                                err.message);
        if (status == 0 || status == 503)
            return dr_error_set(e, DRMAA_ERRNO_DRM_COMMUNICATION_FAILURE,
                                "%s", err.message);
        return dr_error_set(e, DRMAA_ERRNO_DRMS_INIT_FAILED,
                            "GET /v1/runtime: %s", err.message);
    }
    v = json_string_value(json_object_get(reply, "version"));
    snprintf(S.drm, sizeof(S.drm), "Loom %.60s", v ? v : "(unknown version)");
    json_decref(reply);
    return 0;
}

static int session_id(struct dr_error *e)
{
    unsigned char r[16];

    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return dr_error_set(e, DRMAA_ERRNO_DRMS_INIT_FAILED,
                            "getrandom failed: %s", strerror(errno));
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(S.sid + 2 * i, 3, "%02x", r[i]);
    return 0;
}

/* The contact string: the one given, else $LOOM_URL. Checked by building
 * a client from it. */
static int start(const char *contact, struct dr_error *e)
{
    const char *env_url = getenv("LOOM_URL");
    int from_env = !contact || !*contact;
    struct client_tls tls;
    struct loom_error err;
    struct client *c;

    if (from_env && (!env_url || !*env_url))
        return dr_error_set(e, DRMAA_ERRNO_NO_DEFAULT_CONTACT_STRING_SELECTED,
                            "no contact string: give Loom's URL to "
                            "drmaa_init or set LOOM_URL");
    S.contact = strdup(from_env ? env_url : contact);
    if (!S.contact)
        return dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
    client_tls_from_env(&tls);
    /* https with a client certificate: the certificate may be the
     * identity, and a token is read only when LOOM_TOKEN_FILE names one */
    if ((!https() || !tls.cert_file || getenv("LOOM_TOKEN_FILE")) &&
        dr_token_read(&S.token, e) < 0)
        return -1;
    c = open_client(&err);
    if (!c)
        return dr_error_set(e, from_env
                                   ? DRMAA_ERRNO_DEFAULT_CONTACT_STRING_ERROR
                                   : DRMAA_ERRNO_INVALID_CONTACT_STRING,
                            "%s%s", from_env ? "LOOM_URL: " : "",
                            err.message);
    if (probe(c, e) < 0 || session_id(e) < 0) {
        client_destroy(c);
        return -1;
    }
    S.pool[S.npool++] = c;
    return 0;
}

/* Free what the session holds; under the lock, with no call inside. */
static void forget(void)
{
    while (S.npool)
        client_destroy(S.pool[--S.npool]);
    free(S.contact);
    wipe_free(S.token);
    free(S.jobs);
    S.contact = S.token = NULL;
    S.jobs = NULL;
    S.njobs = S.capjobs = 0;
    S.drm[0] = '\0';
    S.sid[0] = '\0';
}

int drmaa_init(const char *contact, char *error_diagnosis,
               size_t error_diag_len)
{
    struct dr_error e = { 0 };
    int state;

    if (pthread_once(&once, global_init) != 0 || once_failed) {
        dr_error_set(&e, DRMAA_ERRNO_DRMS_INIT_FAILED,
                     "cannot initialise libcurl or the session lock");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    pthread_mutex_lock(&S.lock);
    state = S.state;
    if (state == S_IDLE)
        S.state = S_STARTING;
    pthread_mutex_unlock(&S.lock);
    if (state != S_IDLE) {
        dr_error_set(&e, DRMAA_ERRNO_ALREADY_ACTIVE_SESSION,
                     "a session is %s already; call drmaa_exit first",
                     state == S_LEAVING ? "being left" : "active");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    /* Nothing else touches S while it is S_STARTING. */
    if (start(contact, &e) < 0) {
        pthread_mutex_lock(&S.lock);
        forget();
        S.state = S_IDLE;
        pthread_mutex_unlock(&S.lock);
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    pthread_mutex_lock(&S.lock);
    S.state = S_ACTIVE;
    pthread_mutex_unlock(&S.lock);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_exit(char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };

    pthread_mutex_lock(&S.lock);
    if (S.state != S_ACTIVE) {
        pthread_mutex_unlock(&S.lock);
        dr_error_set(&e, DRMAA_ERRNO_NO_ACTIVE_SESSION,
                     "no active session to leave");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    S.state = S_LEAVING;
    pthread_cond_broadcast(&S.cond); /* wakes waiting calls: they return */
    while (S.busy > 0)
        pthread_cond_wait(&S.cond, &S.lock);
    forget();
    S.state = S_IDLE;
    pthread_mutex_unlock(&S.lock);
    return DRMAA_ERRNO_SUCCESS;
}

/* What the session says about itself ------------------------------------- */

int drmaa_get_contact(char *contact, size_t contact_len,
                      char *error_diagnosis, size_t error_diag_len)
{
    const char *env_url = getenv("LOOM_URL");
    struct dr_error e = { 0 };

    if (!contact || !contact_len) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_contact needs a buffer");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    pthread_mutex_lock(&S.lock);
    if (S.state == S_ACTIVE)
        dr_copy(contact, contact_len, S.contact);
    else
        dr_copy(contact, contact_len, env_url ? env_url : "");
    pthread_mutex_unlock(&S.lock);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_version(unsigned int *major, unsigned int *minor,
                  char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!major || !minor) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_version needs major and minor");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    *major = 1;
    *minor = 0;
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_DRM_system(char *drm_system, size_t drm_system_len,
                         char *error_diagnosis, size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!drm_system || !drm_system_len) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_DRM_system needs a buffer");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    pthread_mutex_lock(&S.lock);
    dr_copy(drm_system, drm_system_len,
            S.state == S_ACTIVE ? S.drm : "Loom");
    pthread_mutex_unlock(&S.lock);
    return DRMAA_ERRNO_SUCCESS;
}

int drmaa_get_DRMAA_implementation(char *drmaa_impl, size_t drmaa_impl_len,
                                   char *error_diagnosis,
                                   size_t error_diag_len)
{
    struct dr_error e = { 0 };

    if (!drmaa_impl || !drmaa_impl_len) {
        dr_error_set(&e, DRMAA_ERRNO_INVALID_ARGUMENT,
                     "drmaa_get_DRMAA_implementation needs a buffer");
        return dr_error_out(&e, error_diagnosis, error_diag_len);
    }
    dr_copy(drmaa_impl, drmaa_impl_len,
            "Loom DRMAA " PACKAGE_VERSION " (DRMAA 1.0, GFD.133)");
    return DRMAA_ERRNO_SUCCESS;
}
