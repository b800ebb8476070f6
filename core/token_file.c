/* token_file.c - a bearer token read from a file (loomctl's --token-file,
 * libdrmaa's $LOOM_TOKEN_FILE, the tokens a loom cluster's adaptor holds). */
/* SPDX-License-Identifier: MIT */
#include "core/token_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "core/fdread.h"

#define TOKEN_FILE_MAX 16384

/* As ssh does with its keys: a token others could read is refused. */
static int token_file_check(const char *path, int fd, struct loom_error *err)
{
    struct stat st;

    if (fstat(fd, &st) < 0)
        return loom_error_set(err, LOOM_EINVAL, "token file %s: %s", path,
                              strerror(errno));
    if (!S_ISREG(st.st_mode))
        return loom_error_set(err, LOOM_EINVAL,
                              "token file %s is not a regular file", path);
    if (st.st_mode & 077)
        return loom_error_set(err, LOOM_EINVAL,
                              "token file %s may be read or written by group "
                              "or others (mode %04o); chmod 600 it",
                              path, (unsigned)(st.st_mode & 07777));
    return 0;
}

char *token_file_read(const char *path, struct loom_error *err)
{
    char *buf = NULL, *start, *end;
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

    if (fd < 0) {
        loom_error_set(err, LOOM_EINVAL, "token file %s: cannot open: %s",
                       path, strerror(errno));
        return NULL;
    }
    if (token_file_check(path, fd, err) < 0)
        goto error;
    if (!(buf = calloc(1, TOKEN_FILE_MAX + 2))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    n = fd_read_all(fd, buf, TOKEN_FILE_MAX + 1);
    if (n < 0 || n > TOKEN_FILE_MAX) {
        loom_error_set(err, LOOM_EINVAL, "token file %s: %s", path,
                       n < 0 ? strerror(errno) : "larger than 16 KiB");
        goto error;
    }
    if (memchr(buf, '\0', (size_t)n)) {
        loom_error_set(err, LOOM_EINVAL, "token file %s is not text", path);
        goto error;
    }
    for (start = buf; *start && strchr(" \t\r\n", *start); start++)
        ;
    end = start + strlen(start);
    while (end > start && strchr(" \t\r\n", end[-1]))
        *--end = '\0';
    if (!*start || strpbrk(start, " \t\r\n")) {
        loom_error_set(err, LOOM_EINVAL, "token file %s does not hold one "
                       "token (it is empty or has several words)", path);
        goto error;
    }
    memmove(buf, start, strlen(start) + 1);
    close(fd);
    return buf;
error:
    if (buf)
        OPENSSL_cleanse(buf, TOKEN_FILE_MAX + 2);
    free(buf);
    close(fd);
    return NULL;
}
