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

/* How a line is written ([loomd] log_format): text (the default), or one
 * JSON object a line for log shippers. */
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };
void log_set_format(enum log_format f);
/* The format of "text" or "json"; -1 else. */
int log_format_parse(const char *name);

/* The API request the calling thread works for (its X-Request-Id), or
 * NULL for none: each line it writes names it until it is set again.
 * The id is copied (at most LOG_REQUEST_ID_MAX characters). */
#define LOG_REQUEST_ID_MAX 40
void log_request_set(const char *id);
/* The calling thread's request id, or "" (borrowed, thread-local). */
const char *log_request(void);

/* Write one line to stderr; control characters in the message are written
 * out (\n, \t, \xNN), so it stays one line. Text:
 * 2026-11-21T20:00:00.123Z info thread=server request=5f1c09a2-7 cluster=a:
 * polled 4 nodes
 * JSON: {"time":"2026-11-21T20:00:00.123Z","level":"info","thread":
 * "server","request":"5f1c09a2-7","cluster":"a","msg":"cluster=a: polled
 * 4 nodes"}, with the message's job=, node=, cluster=, reservation= and
 * maintenance= as fields of their own (JSON escapes its control
 * characters). */
void log_msg(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
