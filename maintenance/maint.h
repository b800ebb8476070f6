/* maint.h - the maintenance interface thread. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_MAINTENANCE_MAINT_H
#define LOOM_MAINTENANCE_MAINT_H

#include "core/error.h"
#include "core/msgq.h"

enum maint_msg {
    MAINT_STATUS = 1, /* reply: {"requests": N, "mismatches": N} */
};

/* Start the thread (it owns maintenance requests and the goal/actual
 * comparison; its loop runs the periodic comparison). */
int maint_start(struct loom_error *err);
void maint_stop(void);
struct msgq *maint_queue(void);

#endif
