/* sched_acct.c - the jobs of each account, VO and gateway, counted as
 * they change (never by a scan of the queue), and the fair-use rules on
 * them: max_user_priority, the pending, running and submit-rate limits of
 * [limits], [limits ACCOUNT], [limits vo=GROUP] and [limits gateway=NAME].
 * One table holds them all, by name: an account's own, "vo=GROUP",
 * "gateway=NAME" (an account's name has no '='). */
/* SPDX-License-Identifier: MIT */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/timeutil.h"
#include "scheduler/sched_state.h"

#define PENDING_RETRY_S 30 /* Retry-After over the pending limit: when a
                              job will leave the queue is not known */

/* What a job counts as for its account, VO and gateway. */
static uint8_t class_of(const struct job *j)
{
    if (!j->account)
        return 0;
    if (j->state == JOB_PENDING || j->state == JOB_HELD)
        return 1;
    if (job_state_active(j->state))
        return 2;
    return 0;
}

/* The entry of name, made on first sight: its index + 1, or 0. */
static uint32_t entry(const char *name)
{
    struct sched_acct *a;
    uintptr_t ix = (uintptr_t)hmap_get(&S.accts.ix, name);

    if (ix)
        return (uint32_t)ix;
    if (sched_grow((void **)&S.accts.a, &S.accts.cap, S.accts.n + 1,
                   sizeof(*S.accts.a)) < 0)
        return 0;
    a = &S.accts.a[S.accts.n];
    memset(a, 0, sizeof(*a));
    if (!(a->name = strdup(name)) ||
        hmap_put(&S.accts.ix, name, (void *)(uintptr_t)(S.accts.n + 1)) < 0) {
        free(a->name);
        return 0;
    }
    return (uint32_t)++S.accts.n;
}

/* The entry of kind ("vo", "gateway") and value, or 0 for none. */
static uint32_t entry_of(const char *kind, const char *value)
{
    char name[LOOM_LIMITS_NAME_MAX + 1];

    if (!value)
        return 0;
    snprintf(name, sizeof(name), "%s=%s", kind, value);
    return entry(name);
}

/* Move entry ix's count of class from (-1) or to (+1). */
static void adjust(uint32_t ix, uint8_t cls, int by)
{
    if (!ix)
        return;
    if (cls == 1)
        S.accts.a[ix - 1].waiting += by;
    else if (cls == 2)
        S.accts.a[ix - 1].running += by;
}

void sched_acct_count(struct job *j)
{
    uint8_t c = class_of(j);

    if (c == j->acct_class)
        return;
    if ((!j->acct_ix && j->account && !(j->acct_ix = entry(j->account))) ||
        (!j->vo_ix && j->vo && !(j->vo_ix = entry_of("vo", j->vo))) ||
        (!j->gw_ix && job_gateway(j) &&
         !(j->gw_ix = entry_of("gateway", job_gateway(j)))))
        log_err("job=%lld: out of memory counting the jobs of account %s",
                (long long)j->id, j->account);
    adjust(j->acct_ix, j->acct_class, -1);
    adjust(j->vo_ix, j->acct_class, -1);
    adjust(j->gw_ix, j->acct_class, -1);
    adjust(j->arr_ix, j->acct_class, -1);
    adjust(j->acct_ix, c, 1);
    adjust(j->vo_ix, c, 1);
    adjust(j->gw_ix, c, 1);
    adjust(j->arr_ix, c, 1);
    j->acct_class = c;
}

void sched_acct_forget(struct job *j)
{
    j->state = JOB_CANCELLED; /* counted as nothing */
    sched_acct_count(j);
}

void sched_acct_move(struct job *j, const char *account)
{
    if (!account || (j->account && !strcmp(j->account, account)))
        return;
    adjust(j->acct_ix, j->acct_class, -1);
    job_set_str(&j->account, account);
    j->acct_ix = entry(account);
    adjust(j->acct_ix, j->acct_class, 1);
}

/* Seconds until the rate limit takes one more submit of a (0: now). */
static int rate_wait(struct sched_acct *a, long max, double now)
{
    double oldest;

    if (!max)
        return 0;
    if ((size_t)max > a->cap_times) { /* the limit grew: a larger ring */
        double *t = calloc((size_t)max, sizeof(*t));
        if (!t)
            return 0;
        for (size_t k = 0; k < a->cap_times && k < a->n_times; k++)
            t[k] = a->times[(a->head + k) % a->cap_times];
        free(a->times);
        a->times = t;
        a->head = 0;
        a->cap_times = (size_t)max;
    }
    while (a->n_times > (size_t)max) { /* the limit shrank */
        a->head = (a->head + 1) % a->cap_times;
        a->n_times--;
    }
    if (a->n_times < (size_t)max)
        return 0;
    oldest = a->times[a->head];
    if (now - oldest >= 60)
        return 0;
    return (int)(60 - (now - oldest)) + 1;
}

static void rate_note(struct sched_acct *a, long max, double now)
{
    if (!max || !a->cap_times)
        return;
    if (a->n_times == (size_t)max) { /* the oldest leaves the window */
        a->head = (a->head + 1) % a->cap_times;
        a->n_times--;
    }
    a->times[(a->head + a->n_times) % a->cap_times] = now;
    a->n_times++;
}

/* The running limit of entry a: an array's own, else its limits'. */
static long running_max(const struct sched_acct *a)
{
    return a->own_limit ? a->own_limit
                        : sched_limits_of(&S.conf, a->name)->max_running_jobs;
}

uint32_t sched_acct_array(int64_t id, long limit)
{
    char name[40];
    uint32_t ix;

    snprintf(name, sizeof(name), "array=%lld", (long long)id);
    if ((ix = entry(name)) && !S.accts.a[ix - 1].own_limit) {
        S.accts.a[ix - 1].own_limit = limit;
        S.accts.n_own++;
    }
    return ix;
}

/* "account alice", "vo /atlas", "gateway ce-1": entry a's name in words. */
static void what(const struct sched_acct *a, char *buf, size_t size)
{
    const char *eq = strchr(a->name, '=');

    if (eq)
        snprintf(buf, size, "%.*s %s", (int)(eq - a->name), a->name, eq + 1);
    else
        snprintf(buf, size, "account %s", a->name);
}

/* May one more job of entry ix be submitted? 0, or -1 with a 429. */
static int check_one(uint32_t ix, double now, struct loom_error *err)
{
    const struct sched_limits *l;
    struct sched_acct *a;
    char w[LOOM_LIMITS_NAME_MAX + 16];
    int wait;

    if (!ix)
        return 0;
    a = &S.accts.a[ix - 1];
    l = sched_limits_of(&S.conf, a->name);
    what(a, w, sizeof(w));
    if (l->max_pending_jobs && a->waiting >= l->max_pending_jobs) {
        loom_error_set(err, LOOM_ELIMIT, "%.300s has %ld pending jobs "
                       "(max_pending_jobs %ld): submit again when some have "
                       "started or ended", w, a->waiting,
                       l->max_pending_jobs);
        err->retry_after = PENDING_RETRY_S;
        return -1;
    }
    if ((wait = rate_wait(a, l->max_submits_per_minute, now)) > 0) {
        loom_error_set(err, LOOM_ELIMIT, "%.300s submitted %ld jobs in the "
                       "last minute (max_submits_per_minute %ld): retry in "
                       "%d s", w, l->max_submits_per_minute,
                       l->max_submits_per_minute, wait);
        err->retry_after = wait;
        return -1;
    }
    return 0;
}

int sched_acct_submit_check(struct job *j, struct loom_error *err)
{
    uint32_t ix[3];
    double now = time_mono();

    if (!j->staff && j->priority > S.conf.max_user_priority)
        return loom_error_field(err, LOOM_EPERM, "priority", "priority %d "
                                "is above max_user_priority %d: only an "
                                "operator or admin may ask for more",
                                j->priority, S.conf.max_user_priority);
    if (!j->account)
        return 0;
    ix[0] = entry(j->account);
    ix[1] = entry_of("vo", j->vo);
    ix[2] = entry_of("gateway", job_gateway(j));
    for (int k = 0; k < 3; k++)
        if (check_one(ix[k], now, err) < 0)
            return -1;
    for (int k = 0; k < 3; k++)
        if (ix[k]) {
            struct sched_acct *a = &S.accts.a[ix[k] - 1];
            rate_note(a, sched_limits_of(&S.conf, a->name)
                             ->max_submits_per_minute, now);
        }
    return 0;
}

int *sched_acct_room(size_t *n)
{
    int *room, any = S.conf.limits.max_running_jobs != 0 || S.accts.n_own;

    for (size_t i = 0; !any && i < S.conf.n_acct_limits; i++)
        any = S.conf.acct_limits[i].l.max_running_jobs != 0;
    *n = 0;
    if (!any || !S.accts.n || !(room = malloc(S.accts.n * sizeof(*room))))
        return NULL; /* no running limit: nothing to count */
    for (size_t i = 0; i < S.accts.n; i++) {
        long max = running_max(&S.accts.a[i]);
        long left = max - S.accts.a[i].running;
        room[i] = !max ? INT_MAX : left > 0 ? (int)left : 0;
    }
    *n = S.accts.n;
    return room;
}

int sched_acct_may_start(const struct job *j, char *why, size_t size)
{
    const uint32_t ix[4] = {j->acct_ix, j->vo_ix, j->gw_ix,
                            j->array ? j->array->limit_ix : j->arr_ix};

    for (int k = 0; k < 4; k++) {
        const struct sched_acct *a;
        long max;
        if (!ix[k])
            continue;
        a = &S.accts.a[ix[k] - 1];
        max = running_max(a);
        if (max && a->running >= max) {
            sched_acct_why(ix[k], why, size);
            return 0;
        }
    }
    return 1;
}

void sched_acct_why(uint32_t ix, char *why, size_t size)
{
    const struct sched_acct *a = &S.accts.a[ix - 1];
    char w[LOOM_LIMITS_NAME_MAX + 16];

    if (a->own_limit) {
        snprintf(why, size, "array %s runs %ld tasks, as many as its limit "
                 "(%%%ld) allows", a->name + 6, a->running, a->own_limit);
        return;
    }
    what(a, w, sizeof(w));
    snprintf(why, size, "%.300s has %ld running jobs (max_running_jobs)", w,
             a->running);
}

void sched_acct_fini(void)
{
    for (size_t i = 0; i < S.accts.n; i++) {
        free(S.accts.a[i].name);
        free(S.accts.a[i].times);
    }
    free(S.accts.a);
    hmap_fini(&S.accts.ix);
}
