/* runtime.h - runtime control: signals, reload, shutdown, status. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_RUNTIME_H
#define LOOM_CORE_RUNTIME_H

#include "core/msgq.h"

enum runtime_msg {
    RUNTIME_RELOAD = 1, /* reply: what changed */
    RUNTIME_SHUTDOWN,
};

/* Block the signals the runtime thread takes (call before any thread
 * starts) and remember the configuration file for reloads. */
int runtime_init(const char *conf_path, struct loom_error *err);
struct msgq *runtime_queue(void);
double runtime_started_at(void); /* epoch seconds */
/* Run on the calling (main) thread until a shutdown is asked for. */
void runtime_loop(void);
void runtime_fini(void);

#endif
