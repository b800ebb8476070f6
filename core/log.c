/* log.c - the log writer: one line per event, to stderr. */
/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static _Thread_local char thread_name[16] = "main";
static int max_level = LOG_INFO;

void log_thread_name(const char *name)
{
    char os_name[16];

    snprintf(thread_name, sizeof(thread_name), "%s", name);
    snprintf(os_name, sizeof(os_name), "loom-%s", name);
    pthread_setname_np(pthread_self(), os_name);
}

void log_set_level(int level)
{
    max_level = level;
}

int log_level_parse(const char *v)
{
    static const char *const names[] = {"err", "warning", "notice", "info",
                                        "debug"};
    static const int levels[] = {LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO,
                                 LOG_DEBUG};

    for (size_t i = 0; v && i < 5; i++)
        if (!strcmp(v, names[i]))
            return levels[i];
    return -1;
}

static const char *level_name(int level)
{
    switch (level) {
    case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: return "crit";
    case LOG_ERR: return "err";
    case LOG_WARNING: return "warning";
    case LOG_NOTICE: return "notice";
    case LOG_INFO: return "info";
    }
    return "debug";
}

/* The line with its control characters written out: \n, \r, \t, and
 * \xNN for the other bytes below 0x20 and 0x7f (a backslash stays as it
 * is), so that nothing a client or a cluster says can end a line and
 * forge the next one. out has room for 4 bytes per byte of in. */
static void escape(const char *in, char *out, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    for (; *in && o + 5 < size; in++) {
        unsigned char c = (unsigned char)*in;
        if (c >= 0x20 && c != 0x7f) {
            out[o++] = (char)c;
            continue;
        }
        out[o++] = '\\';
        if (c == '\n' || c == '\r' || c == '\t') {
            out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            continue;
        }
        out[o++] = 'x';
        out[o++] = hex[c >> 4];
        out[o++] = hex[c & 15];
    }
    out[o] = '\0';
}

void log_msg(int level, const char *fmt, ...)
{
    char line[2048], text[2048], stamp[32];
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (level > max_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    n = snprintf(line, sizeof(line), "%s.%03ldZ %s thread=%s ", stamp,
                 ts.tv_nsec / 1000000, level_name(level), thread_name);
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    escape(text, line + n, sizeof(line) - (size_t)n);
    /* One write per line so lines from threads never interleave. */
    fprintf(stderr, "%s\n", line);
}
