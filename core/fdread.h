/* fdread.h - reading a descriptor to its end, within a bound. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_FDREAD_H
#define LOOM_CORE_FDREAD_H

#include <stddef.h>
#include <sys/types.h>

/* Read fd until its end or max bytes into buf, again after EINTR. The
 * count read (max + 1 asked and max + 1 got tells the caller the input is
 * larger than it takes), or -1 with errno set. Any thread. */
ssize_t fd_read_all(int fd, void *buf, size_t max);

#endif
