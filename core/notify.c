/* notify.c - datagrams to $NOTIFY_SOCKET. */
/* SPDX-License-Identifier: MIT */
#include "core/notify.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/log.h"

static struct sockaddr_un addr;
static socklen_t addr_len; /* 0: no manager to tell */
static char name[sizeof(addr.sun_path)]; /* $NOTIFY_SOCKET as it was */

void notify_init(void)
{
    const char *s = getenv("NOTIFY_SOCKET");
    size_t n = s ? strlen(s) : 0;

    addr_len = 0;
    if (n < 2 || n >= sizeof(addr.sun_path) || (s[0] != '/' && s[0] != '@')) {
        if (s)
            log_warn("NOTIFY_SOCKET '%s' is neither an absolute path nor "
                     "@name: the service manager is not told", s);
        unsetenv("NOTIFY_SOCKET");
        return;
    }
    memcpy(name, s, n + 1);
    memset(&addr, 0, sizeof(addr));
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, s, n);
    if (s[0] == '@') /* abstract: a leading NUL, no NUL at the end */
        addr.sun_path[0] = '\0';
    addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
                           (s[0] == '/'));
    unsetenv("NOTIFY_SOCKET");
}

void notify_send(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int fd, n;

    if (!addr_len)
        return;
    va_start(ap, fmt);
    n = vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(msg))
        n = (int)strlen(msg);
    fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || sendto(fd, msg, (size_t)n, MSG_NOSIGNAL,
                         (struct sockaddr *)&addr, addr_len) != n)
        log_debug("notify: %s: %s", msg, strerror(errno));
    if (fd >= 0)
        close(fd);
}

void notify_reloading(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    notify_send("RELOADING=1\nMONOTONIC_USEC=%llu",
                (unsigned long long)ts.tv_sec * 1000000ULL +
                    (unsigned long long)ts.tv_nsec / 1000ULL);
}

void notify_env_restore(void)
{
    if (addr_len)
        setenv("NOTIFY_SOCKET", name, 1);
}
