/* log.c - the log writer: one line per event, to stderr. */
/* SPDX-License-Identifier: MIT */
#include "core/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/jsonw.h"

static _Thread_local char thread_name[16] = "main";
static _Thread_local char request_id[LOG_REQUEST_ID_MAX + 1];
static int max_level = LOG_INFO;
static atomic_int format = LOG_FORMAT_TEXT;

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

void log_set_format(enum log_format f)
{
    atomic_store(&format, (int)f);
}

int log_format_parse(const char *v)
{
    if (v && !strcmp(v, "text"))
        return LOG_FORMAT_TEXT;
    if (v && !strcmp(v, "json"))
        return LOG_FORMAT_JSON;
    return -1;
}

void log_request_set(const char *id)
{
    snprintf(request_id, sizeof(request_id), "%s", id ? id : "");
}

const char *log_request(void)
{
    return request_id;
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

/* The keys of a message that become fields of their own in JSON, when
 * a word of the message begins with one: "job=42", "cluster=a:". */
static const char *const id_keys[] = {"job", "node", "cluster",
                                      "reservation", "maintenance", NULL};

/* The value of the first word "key=VALUE" of text, up to a blank or one
 * of ":,;()" (at most size - 1 bytes); 0, or -1 when there is none. */
static int word_value(const char *text, const char *key, char *out,
                      size_t size)
{
    size_t klen = strlen(key), n;

    for (const char *p = text; (p = strstr(p, key)); p += klen) {
        if ((p != text && p[-1] != ' ') || p[klen] != '=')
            continue;
        p += klen + 1;
        n = strcspn(p, " :,;()");
        if (!n)
            return -1;
        if (n >= size)
            n = size - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return 0;
    }
    return -1;
}

/* The line as one JSON object (malloc'd), or NULL when out of memory. */
static char *json_line(const char *stamp, const char *level,
                       const char *text)
{
    char value[256];
    struct jw w;

    jw_init(&w);
    jw_open(&w, '{');
    jw_kv_str(&w, "time", stamp);
    jw_kv_str(&w, "level", level);
    jw_kv_str(&w, "thread", thread_name);
    if (request_id[0])
        jw_kv_str(&w, "request", request_id);
    for (size_t i = 0; id_keys[i]; i++)
        if (word_value(text, id_keys[i], value, sizeof(value)) == 0)
            jw_kv_str(&w, id_keys[i], value);
    jw_kv_str(&w, "msg", text);
    jw_close(&w, '}');
    return jw_finish(&w);
}

void log_msg(int level, const char *fmt, ...)
{
    char line[2048], text[2048], stamp[40], *json;
    struct timespec ts;
    struct tm tm;
    va_list ap;
    int n;

    if (level > max_level)
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = (int)strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + n, sizeof(stamp) - (size_t)n, ".%03ldZ",
             ts.tv_nsec / 1000000);
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    /* One write per line so lines from threads never interleave. */
    if (atomic_load(&format) == LOG_FORMAT_JSON &&
        (json = json_line(stamp, level_name(level), text))) {
        fprintf(stderr, "%s\n", json);
        free(json);
        return;
    }
    n = snprintf(line, sizeof(line), "%s %s thread=%s %s%s%s", stamp,
                 level_name(level), thread_name,
                 request_id[0] ? "request=" : "", request_id,
                 request_id[0] ? " " : "");
    escape(text, line + n, sizeof(line) - (size_t)n);
    fprintf(stderr, "%s\n", line);
}
