/* runtime.h - runtime control: signals, reload, shutdown, status. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_RUNTIME_H
#define LOOM_CORE_RUNTIME_H

#include "core/msgq.h"

enum runtime_msg {
    RUNTIME_RELOAD = 1, /* reply: what changed */
    RUNTIME_SHUTDOWN,
    RUNTIME_TAKEOVER,   /* from the leader thread: this loomd is active */
    RUNTIME_FENCED,     /* from the leader thread: another one acts now */
};

/* Block the signals the runtime thread takes (call before any thread
 * starts) and remember the configuration file for reloads. */
int runtime_init(const char *conf_path, struct loom_error *err);
struct msgq *runtime_queue(void);
double runtime_started_at(void); /* epoch seconds */
/* Run on the calling (main) thread, carrying out reloads, until a
 * shutdown, a takeover or a fence comes: returns its enum runtime_msg. A
 * reload on a standby (the threads of an epoch do not run: core/leader.h)
 * checks the file and applies what lives outside them; the takeover reads
 * the file again for the rest. */
int runtime_loop(void);
void runtime_fini(void);

#endif
