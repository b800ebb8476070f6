/* runas_call.h - loomd runs loom-runas, its privileged helper. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_RUNAS_CALL_H
#define LOOM_CORE_RUNAS_CALL_H

#include <stddef.h>

#include "core/error.h"
#include "core/proc.h"

/* The libexec directory loom-runas (and loom-supervise) live in: set once
 * at start-up (before the threads), else $LOOM_LIBEXECDIR, else the one
 * configured at build time. */
void runas_call_set_dir(const char *libexec);
/* <libexec>/loom-runas. Borrowed, for the life of the process. */
const char *runas_call_path(void);
/* The environment loom-runas runs in, PATH alone: nothing of loomd's own
 * (a password for libpq, say) reaches what runs as an account. */
extern char *const runas_call_env[];

/*
 * Run `RUNAS ARGS...` (runas: the helper's path, NULL for
 * runas_call_path(); args NULL-terminated, without the program)
 * with a deadline of timeout_s and at most max_out bytes of output, fd3
 * (> 0) passed to it as descriptor 3. 0 when it exited 0 (r holds its
 * output: the caller finis it); else -1 with err saying what loom-runas
 * said, r empty: LOOM_ENOENT when the file or account it names does not
 * exist, LOOM_EPERM when it refused or was refused, LOOM_ETEMP when it
 * timed out, LOOM_EINTERNAL otherwise. Any thread; blocks up to
 * timeout_s (once the helper is the account loomd cannot signal it: each
 * verb keeps to its own alarm).
 */
int runas_call(const char *runas, const char *const *args, int fd3,
               double timeout_s, size_t max_out, struct proc_result *r,
               struct loom_error *err);

#endif
