/* log.h - one line per event: time, level, thread, message with key=value. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_LOG_H
#define LOOM_CORE_LOG_H

#include <syslog.h>

/* Name the calling thread for its log lines (also sets the OS thread name). */
void log_thread_name(const char *name);
/* Only lines at this level or more severe are written (default LOG_INFO). */
void log_set_level(int level);
/* The level of "err", "warning", "notice", "info" or "debug"; -1 else. */
int log_level_parse(const char *name);
/* Write one line to stderr; control characters in the message are written
 * out (\n, \t, \xNN), so it stays one line. E.g.
 * 2026-11-21T20:00:00.123Z info thread=server cluster=a: polled 4 nodes */
void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
