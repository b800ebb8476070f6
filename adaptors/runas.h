/* runas.h - what loomd and loom-runas agree on. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_RUNAS_H
#define LOOM_ADAPTORS_RUNAS_H

/* Accounts below this uid (system accounts) run no job unless runas.conf
 * says otherwise; loomd's own min_uid defaults to the same. */
#define LOOM_RUNAS_MIN_UID 1000

/* The name of loom-runas in the libexec directory, beside loom-supervise. */
#define LOOM_RUNAS_NAME "loom-runas"

#endif
