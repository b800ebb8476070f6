/* events.c - GET /v1/events: a stream of Server-Sent Events that say what
 * changed in the snapshot, so that a dashboard fetches only that. One
 * thread watches the snapshot's publications and, while streams are open,
 * renders at most once a second what every stream sends (with none open,
 * publications do not wake it: it waits for a stream): each cluster's
 * state, last poll, error and a version of its nodes, and versions of the
 * jobs, reservations, maintenance requests and mismatches; how many jobs
 * there are and the highest id only to a reader that sees every job (the
 * API shows a user with private_data no one else's). A comment every 15 s
 * keeps proxies from closing an idle stream and finds closed ones; a
 * stream ends when its token expires. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/api/api.h"
#include "core/hmap.h"
#include "core/jsonw.h"
#include "core/log.h"
#include "core/timeutil.h"

#define GAP_S 1.0      /* at most one event a second */
#define PING_S 15.0    /* a keep-alive comment this often */
#define STREAMS_MAX 256

/* One stream: what it has sent, and the rest of an event being sent. */
struct estream {
    uint64_t seq, ping;
    struct token_claims who; /* its reader's: when it ends, and what it
                                may see (api_others_see, asked at each
                                event: a reload may change private_data) */
    char *pending;
    size_t len, off;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t opened; /* with lock: fresh was set */
    pthread_t thread;
    int running;
    atomic_int stopping;
    atomic_int fresh;   /* a stream opened: render now, whatever changed */
    /* under lock: the event every stream sends (text_own to those that
     * see their own jobs only), and its number */
    char *text, *text_own;
    uint64_t seq, ping;
    /* the thread's own */
    struct snapshot *prev;
    uint64_t *nodes_v; /* per cluster of prev */
    size_t n_nodes_v;
    uint64_t jobs_v, text_v[SNAP_N_TEXTS];
} E = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .opened = PTHREAD_COND_INITIALIZER};

/* The event's data for snapshot s with the nodes' versions nv; with all,
 * the jobs' count and highest id too. NULL when out of memory. */
static char *event_data(const struct snapshot *s, const uint64_t *nv,
                        int all)
{
    struct jw w;
    char v[24];

    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_time(&w, "time", time(NULL));
    jw_key(&w, "clusters");
    jw_open(&w, '[');
    for (size_t i = 0; i < s->n_clusters; i++) {
        const struct scluster *c = s->clusters[i];
        snprintf(v, sizeof(v), "%016llx", (unsigned long long)nv[i]);
        jw_open(&w, '{');
        jw_kv_str(&w, "name", c->name);
        jw_kv_str(&w, "state", c->state);
        jw_kv_time(&w, "last_poll", c->last_poll);
        jw_kv_str(&w, "error", c->error);
        jw_kv_int(&w, "nodes", (long long)c->n_nodes);
        jw_kv_str(&w, "nodes_v", v);
        jw_close(&w, '}');
    }
    jw_close(&w, ']');
    jw_key(&w, "jobs");
    jw_open(&w, '{');
    jw_kv_int(&w, "v", (long long)E.jobs_v);
    if (all) {
        jw_kv_int(&w, "max_id", s->jobs ? jobtab_max_id(s->jobs) : 0);
        jw_kv_int(&w, "count",
                  s->jobs ? (long long)jobtab_count(s->jobs) : 0);
    }
    jw_close(&w, '}');
    jw_kv_int(&w, "reservations", (long long)E.text_v[SNAP_RESV]);
    jw_kv_int(&w, "maintenance", (long long)E.text_v[SNAP_MAINT]);
    jw_kv_int(&w, "diff", (long long)E.text_v[SNAP_DIFF]);
    jw_close(&w, '}');
    return jw_finish(&w);
}

/* The versions of s against the last rendered snapshot: the event's data
 * (*own: without the jobs' count and highest id); takes s. -1 when out of
 * memory. */
static int render(struct snapshot *s, char **text, char **own)
{
    uint64_t *nv = calloc(s->n_clusters + 1, sizeof(*nv));
    struct snapshot *p = E.prev;

    *text = *own = NULL;
    if (!nv) {
        snapshot_put(s);
        return -1;
    }
    if (!p || p->jobs != s->jobs)
        E.jobs_v++;
    for (int k = 0; k < SNAP_N_TEXTS; k++)
        if (!p || p->text[k] != s->text[k])
            E.text_v[k]++;
    for (size_t i = 0; i < s->n_clusters; i++) {
        const struct scluster *c = s->clusters[i];
        if (p && i < E.n_nodes_v && i < p->n_clusters &&
            p->clusters[i]->nodes_json == c->nodes_json)
            nv[i] = E.nodes_v[i];
        else
            nv[i] = hmap_hash(c->nodes_json ? c->nodes_json : "",
                              c->nodes_json ? c->nodes_len : 0);
    }
    *text = event_data(s, nv, 1);
    *own = event_data(s, nv, 0);
    free(E.nodes_v);
    E.nodes_v = nv;
    E.n_nodes_v = s->n_clusters;
    snapshot_put(E.prev);
    E.prev = s;
    if (!*text || !*own) {
        free(*text);
        free(*own);
        *text = *own = NULL;
        return -1;
    }
    return 0;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};

    nanosleep(&ts, NULL);
}

/* With no stream open, wait up to s for one to open instead of for the
 * next publication: the scheduler publishes after each of its turns, up
 * to thousands of times a second, and the thread has nothing to do with
 * them until a stream opens. */
static void wait_opened(double s)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)s;
    pthread_mutex_lock(&E.lock);
    if (!atomic_load(&E.fresh) && !atomic_load(&E.stopping))
        pthread_cond_timedwait(&E.opened, &E.lock, &ts);
    pthread_mutex_unlock(&E.lock);
}

static void *watch(void *arg)
{
    uint64_t seen = 0, g;
    double last = 0, last_ping = time_mono(), now;
    int fresh, wake;

    (void)arg;
    log_thread_name("events");
    while (!atomic_load(&E.stopping)) {
        if (http_streams() == 0 && !atomic_load(&E.fresh)) {
            wait_opened(1.0);
            g = seen;
        } else {
            g = snapshot_wait(seen, 1.0);
        }
        now = time_mono();
        wake = 0;
        fresh = atomic_exchange(&E.fresh, 0);
        if (fresh || (g != seen && http_streams() > 0)) {
            if (!fresh && now - last < GAP_S) {
                nap(GAP_S - (now - last));
                continue;
            }
            struct snapshot *s = snapshot_get();
            char *text = NULL, *own = NULL;
            if (s)
                render(s, &text, &own); /* takes s */
            seen = g;
            last = now;
            pthread_mutex_lock(&E.lock);
            /* own is text less two fields: it changes only with text */
            if (text && (fresh || !E.text || strcmp(text, E.text) != 0)) {
                free(E.text);
                free(E.text_own);
                E.text = text;
                E.text_own = own;
                text = own = NULL;
                E.seq++;
                wake = 1;
            }
            pthread_mutex_unlock(&E.lock);
            free(text);
            free(own);
        } else {
            seen = g;
        }
        if (now - last_ping >= PING_S) {
            pthread_mutex_lock(&E.lock);
            E.ping++;
            pthread_mutex_unlock(&E.lock);
            last_ping = now;
            wake = 1;
        }
        if (wake)
            http_stream_wake();
    }
    return NULL;
}

int api_events_start(struct loom_error *err)
{
    atomic_store(&E.stopping, 0);
    if (pthread_create(&E.thread, NULL, watch, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the event "
                              "stream thread");
    E.running = 1;
    return 0;
}

void api_events_stop(void)
{
    if (!E.running)
        return;
    atomic_store(&E.stopping, 1);
    pthread_join(E.thread, NULL);
    E.running = 0;
    snapshot_put(E.prev);
    E.prev = NULL;
    free(E.nodes_v);
    E.nodes_v = NULL;
    E.n_nodes_v = 0;
    free(E.text);
    free(E.text_own);
    E.text = E.text_own = NULL;
}

/* Copy what is pending of the event being sent into buf. */
static long give(struct estream *es, char *buf, size_t max)
{
    size_t n = es->len - es->off;

    if (n > max)
        n = max;
    memcpy(buf, es->pending + es->off, n);
    es->off += n;
    if (es->off == es->len) {
        free(es->pending);
        es->pending = NULL;
        es->len = es->off = 0;
    }
    return (long)n;
}

static long stream_next(void *cls, char *buf, size_t max)
{
    struct estream *es = cls;
    const char *ping = ": keep-alive\n\n";
    struct http_req reader = {.who = es->who};
    long n = 0;
    int own; /* it sees its own jobs only: no job count, no highest id */

    if (es->pending)
        return give(es, buf, max);
    if (time(NULL) >= es->who.expires)
        return -1; /* the token expired: the client logs in again */
    own = api_others_see(&reader) == API_SEE_NOTHING;
    pthread_mutex_lock(&E.lock);
    if (es->seq != E.seq && E.text) {
        const char *data = own ? E.text_own : E.text;
        size_t len = strlen(data) + 64;
        if ((es->pending = malloc(len))) {
            es->len = (size_t)snprintf(es->pending, len, "id: %llu\nevent: "
                                       "state\ndata: %s\n\n",
                                       (unsigned long long)E.seq, data);
            es->off = 0;
            es->seq = E.seq;
            es->ping = E.ping;
        } else {
            n = -1;
        }
    } else if (es->ping != E.ping && max >= strlen(ping)) {
        es->ping = E.ping;
        memcpy(buf, ping, strlen(ping));
        n = (long)strlen(ping);
    }
    pthread_mutex_unlock(&E.lock);
    if (es->pending)
        return give(es, buf, max);
    return n;
}

static void stream_done(void *cls)
{
    struct estream *es = cls;

    free(es->pending);
    free(es);
}

void api_events(struct http_req *rq, struct http_resp *rs,
                const struct api_route_args *a)
{
    struct estream *es;
    struct loom_error err;

    (void)a;
    if (http_streams() >= STREAMS_MAX) {
        loom_error_set(&err, LOOM_EUNAVAIL, "%d event streams are open "
                       "already, the most loomd serves; retry later",
                       STREAMS_MAX);
        http_error(rs, &err);
        return;
    }
    if (!(es = calloc(1, sizeof(*es)))) {
        loom_error_set(&err, LOOM_EINTERNAL, "out of memory");
        http_error(rs, &err);
        return;
    }
    es->who = rq->who;
    pthread_mutex_lock(&E.lock);
    es->seq = E.seq; /* what it sends first is rendered for it */
    es->ping = E.ping;
    atomic_store(&E.fresh, 1);
    pthread_cond_signal(&E.opened);
    pthread_mutex_unlock(&E.lock);
    rs->status = 200;
    rs->ctype = "text/event-stream";
    http_header_add(rs, "Cache-Control", "no-cache");
    http_header_add(rs, "X-Accel-Buffering", "no");
    rs->stream = (struct http_stream){stream_next, stream_done, es};
}
