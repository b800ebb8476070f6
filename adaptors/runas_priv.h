/* runas_priv.h - what the parts of loom-runas share (not part of libloom). */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_ADAPTORS_RUNAS_PRIV_H
#define LOOM_ADAPTORS_RUNAS_PRIV_H

/* Where a refusal of `start` is written besides stderr (its ready pipe),
 * or -1. */
extern int runas_ready_fd;

/* Say why on stderr (and runas_ready_fd) and exit 1. */
void runas_fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

/* Open an absolute path one component at a time, never through a symbolic
 * link or "..", the last component with flags (O_NOFOLLOW|O_CLOEXEC
 * added). A descriptor, or -1 with errno. */
int runas_open_nofollow(const char *path, int flags);
/* A cgroup directory owned by the caller (getuid()): an O_PATH descriptor;
 * anything else ends the program. */
int runas_open_cgroup(const char *path);
/* Write text to the file name in the directory dir. 0 or -1 with errno. */
int runas_write_at(int dir, const char *name, const char *text);
/* The `cgroups` verb. */
int runas_cgroups(void);

#endif
