/* fdread.c - reading a descriptor to its end, within a bound. */
/* SPDX-License-Identifier: MIT */
#include "core/fdread.h"

#include <errno.h>
#include <unistd.h>

ssize_t fd_read_all(int fd, void *buf, size_t max)
{
    char *p = buf;
    size_t got = 0;

    while (got < max) {
        ssize_t n = read(fd, p + got, max - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}
