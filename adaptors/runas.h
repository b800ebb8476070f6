/* runas.h - what loomd and loom-runas agree on. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_RUNAS_H
#define LOOM_ADAPTORS_RUNAS_H

#include <unistd.h>

/* Accounts below this uid (system accounts) run no job unless runas.conf
 * says otherwise; loomd's own min_uid defaults to the same. */
#define LOOM_RUNAS_MIN_UID 1000

/* The name of loom-runas in the libexec directory, beside loom-supervise. */
#define LOOM_RUNAS_NAME "loom-runas"

/* `start` hands loom-supervise its run directory open on this descriptor:
 * the account owns the directory but cannot reach it by path (it lies in
 * loomd's private job directory). */
#define LOOM_RUNAS_RUN_FD 5

/* `read` gives up after this long (loomd cannot signal it once it has
 * become the account); `run -t` sets its own. */
#define LOOM_RUNAS_READ_TIMEOUT_S 10

/* Close every descriptor from first on: loom-runas keeps only what a verb
 * is given, loom-supervise what the protocol gives it, so that nothing
 * else of loomd's (a library's socket left open across exec, say) reaches
 * a process of the account's. */
static inline void runas_close_from(int first)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    if (close_range((unsigned)first, ~0U, 0) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);

    if (max <= 0 || max > 65536)
        max = 65536;
    for (int fd = first; fd < max; fd++)
        close(fd);
}

#endif
