/* sched_conf.h - the [scheduler] section of loom.conf: policy, backfill,
 * planning depth and the priority weights. Read at start-up and on reload. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_SCHEDULER_SCHED_CONF_H
#define LOOM_SCHEDULER_SCHED_CONF_H

#include "core/conf.h"
#include "core/error.h"
#include "scheduler/plan.h"
#include "scheduler/prio.h"

enum sched_policy { LOOM_ORDER_FIFO, LOOM_ORDER_PRIORITY };

/* The limits of an account ([limits], [limits ACCOUNT]), a VO ([limits
 * vo=GROUP]) or a gateway ([limits gateway=NAME]); 0: none. */
struct sched_limits {
    long max_pending_jobs;  /* pending and held at once */
    long max_running_jobs;  /* starting, running and suspended at once */
    long max_submits_per_minute;
};
#define LOOM_LIMITS_ACCOUNTS_MAX 256 /* [limits NAME] sections */
#define LOOM_LIMITS_NAME_MAX 520 /* "gateway=" and an identity */
#define LOOM_SUBMITS_PER_MINUTE_MAX 100000

struct sched_conf {
    enum sched_policy policy;
    struct plan_config plan;
    struct prio_weights weights;
    double interval_s; /* the periodic cycle */
    double gather_s;   /* news that needs no answer at once (a commit of
                          new jobs, a start's result) waits at most this
                          for the scheduler thread to wake for it; what
                          comes together in it is taken in one wake */
    int max_user_priority; /* without admin or operator, a job's priority
                              is at most this (default 0) */
    int kill_invalid_depend; /* a dependency that can never be met ends
                                its job (default), or leaves it pending */
    double job_memory_s; /* an ended job stays in memory this long, then
                            is read from the database; 0: for ever */
    double resv_memory_s; /* the same for an ended reservation */
    struct sched_limits limits; /* every account's, from [limits] */
    struct {
        char name[LOOM_LIMITS_NAME_MAX + 1]; /* ACCOUNT, vo=GROUP or
                                                gateway=NAME */
        struct sched_limits l;
    } acct_limits[LOOM_LIMITS_ACCOUNTS_MAX]; /* [limits NAME] */
    size_t n_acct_limits;
};
/* The limits of name under conf: an account's ([limits ACCOUNT], else
 * [limits]), or of "vo=GROUP" or "gateway=NAME" (their section, else
 * none). Borrowed from conf. */
const struct sched_limits *sched_limits_of(const struct sched_conf *conf,
                                           const char *name);

/* Fill out from [scheduler] (absent: the defaults, FIFO order with EASY
 * backfill). An unknown key or a bad value: -1 naming file, line, key. */
int sched_conf_read(struct conf *c, struct sched_conf *out,
                    struct loom_error *err);
const char *sched_policy_name(const struct sched_conf *sc); /* "fifo+easy" */

#endif
