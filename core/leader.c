/* leader.c - the leader thread: the lock, the heartbeat, takeover, fence. */
/* SPDX-License-Identifier: MIT */
#include "core/leader.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"
#include "core/msgq.h"
#include "core/runtime.h"
#include "core/store.h"
#include "core/store_leader.h"

#define TICK_S 0.25       /* a standby looks this often */
#define MARGIN_S 0.5      /* past the lease, before another loomd acts */
#define TAKE_WAIT_MS 2000 /* for the writes in flight, at a takeover */

enum { MSG_STOP, MSG_RENEW }; /* to the leader thread */

static struct {
    /* the leader thread's (and leader_start's, before it runs) */
    struct store *st;
    struct msgq *q;
    pthread_t thread;
    int running;
    unsigned session;   /* store_session when the lock was taken */
    int locked;         /* the lock is held on that session */
    int told_fenced;    /* RUNTIME_FENCED was sent */
    double next_renew;
    double ended_at;    /* when it last ended a stalled holder's sessions */
    double lease, renew_every;
    char identity[64];
    char last_err[256]; /* the last error logged, not to repeat it */
    /* shared: atomics, and what follows mu under it */
    _Atomic int role;
    _Atomic int serving;
    _Atomic int64_t epoch;
    _Atomic double ok_until; /* this loomd's lease ends (CLOCK_BOOTTIME) */
    _Atomic double safe_at;  /* the one before has surely stopped acting */
    pthread_mutex_t mu;
    char url[512];           /* ours, or "" */
    int url_fixed;           /* advertised: leader_set_url keeps it */
    struct store_leader_row seen; /* the heartbeat row as last read */
    int seen_ok;
    double seen_change;      /* when it last moved (or was first read) */
    char why[256];           /* why fenced */
} L = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* CLOCK_BOOTTIME: it runs on while the machine sleeps, as time does for
 * the other loomd. */
static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double lease_of(const struct store_leader_row *row)
{
    return row->lease_ms > 0 ? (double)row->lease_ms / 1000 : L.lease;
}

static void tell(int type)
{
    msgq_post(runtime_queue(), msg_create(type, NULL, NULL, NULL));
}

/* Log an error once, not at every tick while it lasts. */
static void complain(const char *what, const struct loom_error *err)
{
    char line[sizeof(L.last_err)];

    snprintf(line, sizeof(line), "%.60s: %.190s", what, err->message);
    if (strcmp(line, L.last_err) != 0)
        log_warn("leader: %s", line);
    memcpy(L.last_err, line, sizeof(line));
}

/* The heartbeat row as read at now: note when it moved (under L.mu). */
static void note(const struct store_leader_row *row, double now)
{
    if (!L.seen_ok || row->epoch != L.seen.epoch || row->seq != L.seen.seq ||
        row->released != L.seen.released)
        L.seen_change = now;
    L.seen = *row;
    L.seen_ok = 1;
}

/* Read the heartbeat row; note when it moved. */
static int observe(double now, struct loom_error *err)
{
    struct store_leader_row row;

    if (store_leader_get(L.st, &row, err) < 0)
        return -1;
    pthread_mutex_lock(&L.mu);
    note(&row, now);
    pthread_mutex_unlock(&L.mu);
    return 0;
}

static int lock_lost(void)
{
    if (L.locked && store_session(L.st) != L.session)
        L.locked = 0;
    return !L.locked;
}

/* The lock, held already or taken now on the current session: 1 held,
 * 0 another holds it, -1 with err. */
static int lock_get(struct loom_error *err)
{
    int got = lock_lost() ? store_leader_lock(L.st, err) : 1;

    if (got > 0 && !L.locked) {
        L.locked = 1;
        L.session = store_session(L.st);
    }
    return got;
}

/* Take over, the lock held: the migrations, then the epoch raised. */
static int take(struct loom_error *err)
{
    struct store_leader_row prev;
    double t0 = now_s(), safe = 0, now;
    char url[sizeof(L.url)];
    int64_t epoch;

    pthread_mutex_lock(&L.mu);
    memcpy(url, L.url, sizeof(url));
    pthread_mutex_unlock(&L.mu);
    if (store_leader_timeout(L.st, 0, err) < 0 ||
        store_migrate(L.st, err) < 0 ||
        store_leader_take(L.st, L.identity, url, (long)(L.lease * 1000),
                          TAKE_WAIT_MS, &prev, &epoch, err) < 0 ||
        store_leader_timeout(L.st, (long)(L.lease * 1000), err) < 0)
        return -1;
    now = now_s();
    pthread_mutex_lock(&L.mu);
    /* A renewal this loomd had not seen yet came before the row was read
     * (now, at the latest): the lease it gave runs from then. */
    note(&prev, now);
    if (prev.epoch > 0 && !prev.released)
        safe = L.seen_change + lease_of(&prev) + MARGIN_S;
    L.why[0] = '\0';
    pthread_mutex_unlock(&L.mu);
    store_epoch_set(epoch);
    atomic_store(&L.epoch, epoch);
    atomic_store(&L.safe_at, safe);
    atomic_store(&L.ok_until, t0 + L.lease);
    atomic_store(&L.serving, 0);
    atomic_store(&L.role, LEADER_ACTIVE);
    L.next_renew = t0 + L.renew_every;
    L.last_err[0] = '\0';
    if (prev.epoch == 0 || prev.released)
        log_info("leader: active, epoch %" PRId64 " (the one before let go)",
                 epoch);
    else
        log_warn("leader: taking over from %s (epoch %" PRId64 "): active, "
                 "epoch %" PRId64 "; acting in %.1f s, when its lease has "
                 "surely ended", prev.identity, prev.epoch, epoch,
                 safe > now ? safe - now : 0.0);
    return 0;
}

/* A stalled holder: its heartbeat has not moved for its lease and the
 * margin, and it holds the lock still (a stopped process keeps its
 * connections). */
static int stalled(double now)
{
    int s;

    pthread_mutex_lock(&L.mu);
    s = L.seen_ok && L.seen.epoch > 0 && !L.seen.released &&
        L.seen.identity[0] &&
        now - L.seen_change > lease_of(&L.seen) + MARGIN_S &&
        now - L.ended_at > lease_of(&L.seen);
    pthread_mutex_unlock(&L.mu);
    return s;
}

/* End the sessions of the holder the row names: its lock goes with them,
 * and a transaction it left open no longer holds the fence. */
static void end_holder(double now)
{
    struct store_leader_row row;
    struct loom_error err;
    char name[80];
    long n;

    pthread_mutex_lock(&L.mu);
    row = L.seen;
    pthread_mutex_unlock(&L.mu);
    if (!row.identity[0] || !strcmp(row.identity, L.identity))
        return;
    snprintf(name, sizeof(name), "loomd/%s", row.identity);
    L.ended_at = now;
    n = store_leader_terminate(L.st, name, &err);
    if (n < 0)
        complain("ending the sessions of a stalled loomd", &err);
    else
        log_warn("leader: the heartbeat of %s (epoch %" PRId64 ") has not "
                 "moved for %.1f s: its %ld database session(s) ended",
                 row.identity, row.epoch, now - L.seen_change, n);
}

static void standby_tick(double now)
{
    struct loom_error err;
    int got;

    /* Children of an image that was fenced and executed this one again. */
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    if (observe(now, &err) < 0 && err.kind == LOOM_EUNAVAIL) {
        complain("the database", &err);
        return;
    }
    got = lock_get(&err);
    if (got < 0) {
        complain("the lock", &err);
        return;
    }
    if (!got) {
        if (stalled(now))
            end_holder(now);
        return;
    }
    if (take(&err) < 0) {
        complain("taking over", &err);
        if (err.kind == LOOM_ETEMP) /* writes of a stalled holder */
            end_holder(now);
        return;
    }
    tell(RUNTIME_TAKEOVER);
}

/* Act no more, because of why. */
static void fence(const char *why)
{
    atomic_store(&L.role, LEADER_FENCED);
    atomic_store(&L.ok_until, 0.0);
    pthread_mutex_lock(&L.mu);
    snprintf(L.why, sizeof(L.why), "%s", why);
    pthread_mutex_unlock(&L.mu);
}

/* The lease is lost or may be: act no more; try to get it back. */
static void lapse(const char *why)
{
    fence(why);
    log_warn("leader: fenced: %s; this loomd acts no more unless it gets "
             "its lease back", why);
}

/* Another loomd acts now: this one will not again. */
static void gone(const char *why)
{
    fence(why);
    if (!L.told_fenced) {
        L.told_fenced = 1;
        log_warn("leader: fenced for good: %s", why);
        tell(RUNTIME_FENCED);
    }
}

/* Renew the heartbeat: 1 renewed, 0 another took over, -1 failed. */
static int renew_once(struct loom_error *err)
{
    double t0 = now_s(), took;
    char url[sizeof(L.url)];
    int r;

    pthread_mutex_lock(&L.mu);
    memcpy(url, L.url, sizeof(url));
    pthread_mutex_unlock(&L.mu);
    r = store_leader_renew(L.st, atomic_load(&L.epoch), L.identity, url,
                           err);
    took = now_s() - t0;
    /* Each renewal's time, and a warning when one took longer than the
     * interval: past lease - interval, this loomd stops acting. */
    log_debug("leader: renewal answered in %.3f s", took);
    if (took > L.renew_every)
        log_warn("leader: a renewal of the lease took %.1f s (renewed every "
                 "%.1f s, lease %.1f s): the database or this machine is "
                 "short of time", took, L.renew_every, L.lease);
    /* Renewed on a new session (the call reconnected): the lock went with
     * the old one, and the renewal counts for nothing. */
    if (r >= 0 && lock_lost())
        r = loom_error_set(err, LOOM_EUNAVAIL, "its database session ended, "
                           "and the lock with it");
    if (r == 1) { /* the lease runs from when the renewal was sent */
        atomic_store(&L.ok_until, t0 + L.lease);
        L.next_renew = t0 + L.renew_every;
    }
    return r;
}

static void active_tick(double now)
{
    struct loom_error err;
    int r;

    if (lock_lost()) {
        lapse("its database session ended, and the lock with it");
        return;
    }
    r = renew_once(&err);
    if (r == 0) {
        gone("another loomd took over (the heartbeat is no longer this "
             "epoch's)");
    } else if (r < 0) {
        complain("renewing the lease", &err);
        if (err.kind == LOOM_EUNAVAIL) /* the session is gone */
            lapse(err.message);
        else
            L.next_renew = now + TICK_S; /* the clock ends the lease */
    } else if (L.last_err[0]) {
        L.last_err[0] = '\0';
    }
}

static void fenced_tick(double now)
{
    struct loom_error err;
    int got, r;

    if (observe(now, &err) < 0)
        return; /* the database is still away */
    got = lock_get(&err);
    if (got < 0)
        return;
    if (!got) {
        gone("another loomd holds the lock");
        return;
    }
    /* The lock again: the lease too, if the epoch is still this one's. */
    if ((r = renew_once(&err)) == 1) {
        atomic_store(&L.role, LEADER_ACTIVE);
        log_info("leader: lease renewed again: active, epoch %" PRId64,
                 atomic_load(&L.epoch));
    } else if (r == 0) {
        store_leader_unlock(L.st, &err);
        L.locked = 0;
        gone("another loomd took over meanwhile (the heartbeat is no "
             "longer this epoch's)");
    }
}

static void *leader_main(void *arg)
{
    (void)arg;
    log_thread_name("leader");
    for (;;) {
        double now = now_s(), wait = TICK_S;
        struct msg *m;
        int role = atomic_load(&L.role);

        if (role == LEADER_STANDBY)
            standby_tick(now);
        else if (role == LEADER_ACTIVE && now >= L.next_renew)
            active_tick(now);
        else if (role == LEADER_FENCED && !L.told_fenced)
            fenced_tick(now);
        if (atomic_load(&L.role) == LEADER_ACTIVE) {
            wait = L.next_renew - now_s();
            wait = wait < 0 ? 0 : wait > TICK_S ? TICK_S : wait;
        }
        m = msgq_take(L.q, wait, 8);
        while (m) {
            struct msg *next = m->next;
            int type = m->type;
            msg_destroy(m);
            m = next;
            if (type == MSG_STOP) {
                while (m) {
                    next = m->next;
                    msg_destroy(m);
                    m = next;
                }
                return NULL;
            }
            L.next_renew = 0; /* MSG_RENEW */
        }
    }
}

/* host:pid:nonce, at most 63 bytes with "loomd/" before it. */
static void make_identity(void)
{
    char host[65] = "";
    uint32_t nonce = 0;

    if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
        snprintf(host, sizeof(host), "localhost");
    host[strcspn(host, ".")] = '\0';
    host[32] = '\0';
    if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
        nonce = (uint32_t)now_s() ^ (uint32_t)getpid();
    snprintf(L.identity, sizeof(L.identity), "%s:%d:%08x", host,
             (int)getpid(), (unsigned)nonce);
}

int leader_start(const struct leader_conf *c, struct loom_error *err)
{
    char app[80];
    int got, rc = 0;

    make_identity();
    snprintf(app, sizeof(app), "loomd/%s", L.identity);
    store_identity_set(app);
    L.lease = c->lease_s;
    L.renew_every = c->lease_s / 3;
    if (c->url && *c->url) {
        snprintf(L.url, sizeof(L.url), "%s", c->url);
        L.url_fixed = 1;
    }
    atomic_store(&L.role, LEADER_STANDBY);
    if (!(L.q = msgq_create()))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (!(L.st = store_open(c->database, err)) ||
        store_leader_timeout(L.st, (long)(L.lease * 1000), err) < 0)
        return -1;
    /* The first look is made here, so that the daemon knows at once
     * whether it starts active; the thread goes on from it. */
    if (observe(now_s(), err) < 0 && err->kind == LOOM_EUNAVAIL)
        return -1; /* (a missing table is the migrations' to make) */
    if ((got = lock_get(err)) < 0)
        return -1;
    if (got) {
        if (take(err) == 0)
            rc = 1;
        else if (err->kind != LOOM_ETEMP && err->kind != LOOM_EUNAVAIL)
            return -1; /* e.g. a schema newer than this build */
        else
            complain("taking over", err);
    }
    if (!rc) {
        pthread_mutex_lock(&L.mu);
        log_info("leader: standby (identity %s); the active loomd is %s",
                 L.identity, L.seen_ok && L.seen.identity[0]
                                 ? L.seen.identity : "not known yet");
        pthread_mutex_unlock(&L.mu);
    } else {
        log_info("leader: identity %s", L.identity);
    }
    if (pthread_create(&L.thread, NULL, leader_main, NULL) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot start the "
                              "leader thread");
    L.running = 1;
    return rc;
}

void leader_stop(int release)
{
    struct loom_error err;

    if (L.running) {
        msgq_post(L.q, msg_create(MSG_STOP, NULL, NULL, NULL));
        pthread_join(L.thread, NULL);
        L.running = 0;
    }
    if (release && L.st && !lock_lost() &&
        atomic_load(&L.role) == LEADER_ACTIVE) {
        /* flushed: a standby then takes over without waiting */
        if (store_leader_timeout(L.st, 0, &err) < 0 ||
            store_leader_release(L.st, atomic_load(&L.epoch), L.identity,
                                 &err) < 0)
            log_warn("leader: %s", err.message);
        else
            log_info("leader: let go of epoch %" PRId64,
                     atomic_load(&L.epoch));
    }
    store_close(L.st); /* and with the session, the lock */
    L.st = NULL;
    msgq_destroy(L.q);
    L.q = NULL;
}

int leader_may_act(void)
{
    double now;

    if (atomic_load(&L.role) != LEADER_ACTIVE)
        return 0;
    now = now_s();
    return now < atomic_load(&L.ok_until) && now >= atomic_load(&L.safe_at);
}

int leader_check(const char *what, struct loom_error *err)
{
    char why[256];

    if (leader_may_act())
        return 0;
    pthread_mutex_lock(&L.mu);
    snprintf(why, sizeof(why), "%s", L.why);
    pthread_mutex_unlock(&L.mu);
    loom_error_set(err, LOOM_EUNAVAIL, "%s: not done: this loomd is "
                   "%s%s%s%s; retry later", what, leader_role_name(),
                   why[0] ? " (" : "", why, why[0] ? ")" : "");
    if (err)
        err->retry_after = 1;
    return -1;
}

void leader_wait_safe(void)
{
    double left;

    while (atomic_load(&L.role) == LEADER_ACTIVE &&
           (left = atomic_load(&L.safe_at) - now_s()) > 0) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        if (left < 0.05)
            ts.tv_nsec = (long)(left * 1e9) + 1;
        nanosleep(&ts, NULL);
    }
}

void leader_serving(void)
{
    atomic_store(&L.serving, 1);
}

void leader_set_url(const char *url)
{
    if (!url)
        return;
    pthread_mutex_lock(&L.mu);
    if (!L.url_fixed)
        snprintf(L.url, sizeof(L.url), "%s", url);
    pthread_mutex_unlock(&L.mu);
    /* the standbys learn it with a renewal at once */
    if (L.running)
        msgq_post(L.q, msg_create(MSG_RENEW, NULL, NULL, NULL));
}

enum leader_role leader_role(void)
{
    return (enum leader_role)atomic_load(&L.role);
}

const char *leader_role_name(void)
{
    switch (atomic_load(&L.role)) {
    case LEADER_STANDBY:
        return "standby";
    case LEADER_ACTIVE:
        if (!atomic_load(&L.serving))
            return "taking-over";
        return now_s() < atomic_load(&L.ok_until) ? "active" : "fenced";
    default:
        return "fenced";
    }
}

int leader_threads_up(void)
{
    return atomic_load(&L.role) != LEADER_STANDBY && atomic_load(&L.serving);
}

/* The row shows an active loomd, another one, renewed recently. */
static int other_fresh(double now)
{
    return L.seen_ok && L.seen.epoch > 0 && !L.seen.released &&
           L.seen.identity[0] && strcmp(L.seen.identity, L.identity) != 0 &&
           now - L.seen_change <= lease_of(&L.seen) + MARGIN_S;
}

int leader_active_url(char *buf, size_t size)
{
    int rc = -1;

    pthread_mutex_lock(&L.mu);
    if (other_fresh(now_s())) {
        rc = L.seen.url[0] ? 0 : 1;
        snprintf(buf, size, "%s", rc ? L.seen.identity : L.seen.url);
    }
    pthread_mutex_unlock(&L.mu);
    return rc;
}

json_t *leader_status_json(void)
{
    double now = now_s();
    json_t *o, *active = json_null();
    int64_t epoch = atomic_load(&L.epoch);
    const char *role = leader_role_name();

    pthread_mutex_lock(&L.mu);
    if (!strcmp(role, "active") || !strcmp(role, "taking-over"))
        active = json_pack("{s:s, s:s?, s:I}", "identity", L.identity,
                           "url", L.url[0] ? L.url : NULL, "epoch",
                           (json_int_t)epoch);
    else if (other_fresh(now))
        active = json_pack("{s:s, s:s?, s:I, s:f}", "identity",
                           L.seen.identity, "url",
                           L.seen.url[0] ? L.seen.url : NULL, "epoch",
                           (json_int_t)L.seen.epoch, "heartbeat_age_s",
                           now - L.seen_change);
    o = json_pack("{s:s, s:s, s:I, s:f, s:o, s:s?}", "role", role,
                  "identity", L.identity, "epoch", (json_int_t)epoch,
                  "lease_s", L.lease, "active", active ? active : json_null(),
                  "fenced_because", L.why[0] && !strcmp(role, "fenced")
                                        ? L.why : NULL);
    pthread_mutex_unlock(&L.mu);
    return o;
}
