/* runas.h - what loomd and loom-runas agree on. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_RUNAS_H
#define LOOM_ADAPTORS_RUNAS_H

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

#endif
