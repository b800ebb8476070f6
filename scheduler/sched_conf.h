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

struct sched_conf {
    enum sched_policy policy;
    struct plan_config plan;
    struct prio_weights weights;
    double interval_s; /* the periodic cycle */
};

/* Fill out from [scheduler] (absent: the defaults, FIFO order with EASY
 * backfill). An unknown key or a bad value: -1 naming file, line, key. */
int sched_conf_read(struct conf *c, struct sched_conf *out,
                    struct loom_error *err);
const char *sched_policy_name(const struct sched_conf *sc); /* "fifo+easy" */

#endif
