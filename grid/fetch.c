/* fetch.c - the thread that fetches issuers' keys from their jwks_url
 * with libcurl: every jwks_refresh_s, and when a token names a kid the
 * keys lack (at most once a minute). Requests never wait for it: they use
 * the keys fetched last. A failed fetch keeps those keys and says why. */
/* SPDX-License-Identifier: MIT */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"
#include "grid/issuer.h"

#define BODY_MAX (1 << 20)  /* bytes of a JWKS document */
#define TIMEOUT_S 10        /* a fetch, all of it */
#define RETRY_MAX_S 30.0    /* a failed fetch is tried again this soon */

static struct {
    pthread_t thread;
    pthread_mutex_t m;
    pthread_cond_t cv;
    int started, stop, woken;
} F = {.m = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

void fetch_wake(void)
{
    pthread_mutex_lock(&F.m);
    F.woken = 1;
    pthread_cond_signal(&F.cv);
    pthread_mutex_unlock(&F.m);
}

struct body {
    char *p;
    size_t len;
    int over;
};

static size_t on_data(char *d, size_t size, size_t n, void *arg)
{
    struct body *b = arg;
    size_t add = size * n;
    char *p;

    if (b->len + add > BODY_MAX) {
        b->over = 1;
        return 0; /* ends the transfer */
    }
    if (!(p = realloc(b->p, b->len + add + 1)))
        return 0;
    memcpy(p + b->len, d, add);
    b->p = p;
    b->len += add;
    return add;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d)
{
    int stop;

    pthread_mutex_lock(&F.m);
    stop = F.stop;
    pthread_mutex_unlock(&F.m);
    return stop; /* non-zero aborts: loomd is stopping */
}

/* GET url: the body, or NULL with why. */
static char *get(const struct grid_issuer *is, size_t *len, char *why,
                 size_t size)
{
    char cerr[CURL_ERROR_SIZE] = "";
    struct body b = {0};
    CURL *h = curl_easy_init();
    long code = 0;
    CURLcode rc;

    if (!h) {
        snprintf(why, size, "cannot start libcurl");
        return NULL;
    }
    curl_easy_setopt(h, CURLOPT_URL, is->jwks_url);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)CURLPROTO_HTTPS);
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, (long)CURLPROTO_HTTPS);
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, 3L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)TIMEOUT_S);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, cerr);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    if (is->jwks_ca_file)
        curl_easy_setopt(h, CURLOPT_CAINFO, is->jwks_ca_file);
    rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_cleanup(h);
    if (rc == CURLE_OK && code == 200 && b.p) {
        b.p[b.len] = '\0';
        *len = b.len;
        return b.p;
    }
    if (b.over)
        snprintf(why, size, "the answer is larger than 1 MiB");
    else if (rc != CURLE_OK)
        snprintf(why, size, "%s", cerr[0] ? cerr : curl_easy_strerror(rc));
    else
        snprintf(why, size, "HTTP status %ld", code);
    free(b.p);
    return NULL;
}

static void fetch_one(struct grid_issuer *is, double now)
{
    struct grid_keyset *ks = NULL, *old;
    struct loom_error err;
    char why[600] = "", kids[200] = "";
    size_t len = 0, skipped = 0, o = 0;
    char *body = get(is, &len, why, sizeof(why));

    if (body)
        ks = keyset_from_jwks(body, len, is->jwks_url, &skipped, &err);
    if (body && !ks)
        snprintf(why, sizeof(why), "%s", err.message);
    free(body);
    for (size_t i = 0; ks && i < ks->n && o < sizeof(kids); i++)
        o += (size_t)snprintf(kids + o, sizeof(kids) - o, "%s%s",
                              i ? "," : "", ks->keys[i].kid);
    pthread_mutex_lock(&is->lock);
    is->last_try = now;
    is->want = 0;
    is->fetches++;
    if (!ks) {
        is->failures++;
        snprintf(is->last_error, sizeof(is->last_error), "%s: %s",
                 is->jwks_url, why);
        is->next_fetch = now + (is->refresh_s < RETRY_MAX_S
                                    ? (double)is->refresh_s : RETRY_MAX_S);
    } else {
        is->last_error[0] = '\0';
        is->next_fetch = now + (double)is->refresh_s;
    }
    old = is->keys;
    pthread_mutex_unlock(&is->lock);
    if (!ks) {
        log_warn("issuer=%s: fetching keys from %s failed: %s; %s", is->name,
                 is->jwks_url, why, old ? "the keys fetched before stay"
                                        : "it has no keys yet");
        return;
    }
    log_info("issuer=%s: %zu keys from %s (kids %s)%s", is->name, ks->n,
             is->jwks_url, kids, skipped ? "; others skipped" : "");
    issuer_keys_set(is, ks);
}

/* Fetch what is due; the time of the next fetch due (time_mono). */
static double fetch_due(struct grid_issuers *set, double now)
{
    double next = now + 60;

    for (size_t i = 0; set && i < set->n; i++) {
        struct grid_issuer *is = &set->v[i];
        double at;
        int due;
        if (!is->jwks_url)
            continue;
        pthread_mutex_lock(&is->lock);
        at = is->next_fetch;
        if (is->want) { /* an unknown kid: once a minute at most */
            double kid_at = is->last_try ? is->last_try + KID_FETCH_MIN_S
                                         : now;
            at = kid_at < at ? kid_at : at;
        }
        due = now >= at;
        pthread_mutex_unlock(&is->lock);
        if (due) {
            fetch_one(is, now);
            pthread_mutex_lock(&is->lock);
            at = is->next_fetch;
            pthread_mutex_unlock(&is->lock);
        }
        if (at < next)
            next = at;
    }
    return next;
}

static void *fetch_main(void *arg)
{
    log_thread_name("grid");
    for (;;) {
        struct grid_issuers *set = issuers_get();
        double next = fetch_due(set, time_mono()), wait;
        struct timespec ts;
        issuers_put(set);
        pthread_mutex_lock(&F.m);
        wait = next - time_mono();
        if (!F.stop && !F.woken && wait > 0) {
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += (time_t)wait;
            ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&F.cv, &F.m, &ts);
        }
        F.woken = 0;
        if (F.stop) {
            pthread_mutex_unlock(&F.m);
            return NULL;
        }
        pthread_mutex_unlock(&F.m);
    }
}

int fetch_start(struct loom_error *err)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot initialise "
                              "libcurl");
    if (pthread_create(&F.thread, NULL, fetch_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the thread "
                              "that fetches issuers' keys");
    F.started = 1;
    return 0;
}

void fetch_stop(void)
{
    if (!F.started)
        return;
    pthread_mutex_lock(&F.m);
    F.stop = 1;
    pthread_cond_signal(&F.cv);
    pthread_mutex_unlock(&F.m);
    pthread_join(F.thread, NULL);
    F.started = 0;
    curl_global_cleanup();
}
