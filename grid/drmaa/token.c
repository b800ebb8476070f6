/* token.c - the bearer token of a DRMAA session, from $LOOM_TOKEN_FILE. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "grid/drmaa/dr.h"

#define TOKEN_FILE_MAX 16384

/* Read the whole of fd, up to max bytes, into buf. Bytes read, or -1. */
static ssize_t read_all(int fd, char *buf, size_t max)
{
    size_t got = 0;
    ssize_t n;

    while (got < max) {
        n = read(fd, buf + got, max - got);
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

/* As ssh does with its keys: a token others could read is refused. */
static int check(const char *path, int fd, struct dr_error *e)
{
    struct stat st;

    if (fstat(fd, &st) < 0)
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE, "token file %s: %s",
                            path, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                            "token file %s is not a regular file", path);
    if (st.st_mode & 077)
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                            "token file %s may be read or written by group "
                            "or others (mode %04o); chmod 600 it", path,
                            (unsigned)(st.st_mode & 07777));
    return 0;
}

int dr_token_read(char **token, struct dr_error *e)
{
    const char *path = getenv("LOOM_TOKEN_FILE");
    char *buf = NULL, *start, *end;
    ssize_t n;
    int fd;

    *token = NULL;
    if (!path || !*path)
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                            "no token: set LOOM_TOKEN_FILE to a file that "
                            "holds a Loom token (loomctl token create)");
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                            "token file %s: cannot open: %s", path,
                            strerror(errno));
    if (check(path, fd, e) < 0)
        goto error;
    buf = calloc(1, TOKEN_FILE_MAX + 2);
    if (!buf) {
        dr_error_set(e, DRMAA_ERRNO_NO_MEMORY, "out of memory");
        goto error;
    }
    n = read_all(fd, buf, TOKEN_FILE_MAX + 1);
    if (n < 0 || n > TOKEN_FILE_MAX || memchr(buf, '\0', (size_t)n)) {
        dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE, "token file %s: %s", path,
                     n < 0 ? strerror(errno)
                     : n > TOKEN_FILE_MAX ? "larger than 16 KiB"
                                          : "not text");
        goto error;
    }
    for (start = buf; *start && strchr(" \t\r\n", *start); start++)
        ;
    end = start + strlen(start);
    while (end > start && strchr(" \t\r\n", end[-1]))
        *--end = '\0';
    if (!*start || strpbrk(start, " \t\r\n")) {
        dr_error_set(e, DRMAA_ERRNO_AUTH_FAILURE,
                     "token file %s does not hold one token (it is empty "
                     "or has several words)", path);
        goto error;
    }
    memmove(buf, start, strlen(start) + 1);
    close(fd);
    *token = buf;
    return 0;
error:
    if (buf) {
        OPENSSL_cleanse(buf, TOKEN_FILE_MAX + 2);
        free(buf);
    }
    close(fd);
    return -1;
}
