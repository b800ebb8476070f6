/* jsonw.c - a small streaming JSON writer. */
/* SPDX-License-Identifier: MIT */
#include "core/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/timeutil.h"

void jw_init(struct jw *w)
{
    memset(w, 0, sizeof(*w));
}

static int room(struct jw *w, size_t n)
{
    size_t cap = w->cap ? w->cap : 512;
    char *nb;

    if (w->oom)
        return -1;
    if (w->len + n + 1 <= w->cap)
        return 0;
    while (cap < w->len + n + 1)
        cap *= 2;
    nb = realloc(w->buf, cap);
    if (!nb) {
        w->oom = 1;
        return -1;
    }
    w->buf = nb;
    w->cap = cap;
    return 0;
}

static void put(struct jw *w, const char *s, size_t n)
{
    if (room(w, n) < 0)
        return;
    memcpy(w->buf + w->len, s, n);
    w->len += n;
}

/* Before a value: the comma that separates it from the one before. */
static void sep(struct jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0 && w->depth <= JW_DEPTH &&
        w->count[w->depth - 1]++ > 0)
        put(w, ",", 1);
}

/* Length of the valid UTF-8 sequence at s (1 to 4, within avail bytes),
 * or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
    size_t n;
    unsigned cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    if (n > avail)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

/* Could s[0..n) (shorter than its sequence) begin a valid sequence? Its
 * lead byte opens one and the rest are continuation bytes. */
static int utf8_prefix(const unsigned char *s, size_t n)
{
    if (s[0] < 0xc2 || s[0] > 0xf4)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return 1;
}

/* A JSON string of s[0..n); bytes that are not UTF-8 become U+FFFD, so
 * the output stays valid whatever a cluster or a job printed. */
static void quoted(struct jw *w, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + len;

    put(w, "\"", 1);
    while (s < end) {
        const unsigned char *run = s;
        size_t n;
        while (s < end && *s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
            s++;
        put(w, (const char *)run, (size_t)(s - run));
        if (s == end)
            break;
        if (*s == '"' || *s == '\\') {
            char esc[2] = {'\\', (char)*s++};
            put(w, esc, 2);
        } else if (*s < 0x20) {
            char esc[8];
            const char *named = *s == '\n' ? "\\n" : *s == '\t' ? "\\t" :
                                *s == '\r' ? "\\r" : NULL;
            if (named)
                put(w, named, 2);
            else
                put(w, esc, (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *s));
            s++;
        } else if ((n = utf8_len(s, (size_t)(end - s))) > 0) {
            put(w, (const char *)s, n);
            s += n;
        } else {
            put(w, "\xef\xbf\xbd", 3);
            s++;
        }
    }
    put(w, "\"", 1);
}

/* The length of the sequence a lead byte opens (1 for any other byte). */
static size_t utf8_need(unsigned char c)
{
    return c < 0xc2 ? 1 : c <= 0xdf ? 2 : c <= 0xef ? 3 : c <= 0xf4 ? 4 : 1;
}

size_t jw_utf8_whole(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;

    /* a sequence cut at the end begins in the last three bytes */
    for (size_t back = 1; back <= 3 && back <= len; back++) {
        unsigned char c = s[len - back];
        if ((c & 0xc0) == 0x80)
            continue; /* a continuation byte: look further back */
        if (utf8_need(c) > back &&
            utf8_len(s + len - back, back) == 0 &&
            utf8_prefix(s + len - back, back))
            return len - back;
        break;
    }
    return len;
}

void jw_open(struct jw *w, char brace)
{
    sep(w);
    put(w, &brace, 1);
    if (w->depth < JW_DEPTH)
        w->count[w->depth] = 0;
    else
        w->oom = 1; /* deeper than any document Loom writes */
    w->depth++;
}

void jw_close(struct jw *w, char brace)
{
    put(w, &brace, 1);
    if (w->depth > 0)
        w->depth--;
}

void jw_key(struct jw *w, const char *key)
{
    jw_key_n(w, key, strlen(key));
}

void jw_key_n(struct jw *w, const char *key, size_t n)
{
    sep(w);
    quoted(w, key, n);
    put(w, ":", 1);
    w->after_key = 1;
}

void jw_str(struct jw *w, const char *s)
{
    if (!s) {
        jw_null(w);
        return;
    }
    sep(w);
    quoted(w, s, strlen(s));
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
    sep(w);
    quoted(w, s, n);
}

void jw_int(struct jw *w, long long v)
{
    char num[24];

    sep(w);
    put(w, num, (size_t)snprintf(num, sizeof(num), "%lld", v));
}

void jw_double(struct jw *w, double v)
{
    char num[32];

    if (!isfinite(v)) {
        jw_null(w);
        return;
    }
    sep(w);
    put(w, num, (size_t)snprintf(num, sizeof(num), "%.6g", v));
}

void jw_raw(struct jw *w, const char *json)
{
    sep(w);
    put(w, json, strlen(json));
}

void jw_null(struct jw *w)
{
    sep(w);
    put(w, "null", 4);
}

void jw_bool(struct jw *w, int v)
{
    sep(w);
    put(w, v ? "true" : "false", v ? 4 : 5);
}

void jw_kv_str(struct jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    jw_str(w, s);
}

void jw_kv_int(struct jw *w, const char *key, long long v)
{
    jw_key(w, key);
    jw_int(w, v);
}

void jw_kv_double(struct jw *w, const char *key, double v)
{
    jw_key(w, key);
    jw_double(w, v);
}

void jw_kv_time(struct jw *w, const char *key, time_t t)
{
    char buf[32];

    jw_key(w, key);
    if (!t) {
        jw_null(w);
        return;
    }
    time_format(t, buf);
    jw_str(w, buf);
}

void jw_kv_strs(struct jw *w, const char *key, char *const *v, size_t n)
{
    jw_key(w, key);
    jw_open(w, '[');
    for (size_t i = 0; i < n; i++)
        jw_str(w, v[i]);
    jw_close(w, ']');
}

char *jw_finish(struct jw *w)
{
    if (w->oom || room(w, 0) < 0) {
        free(w->buf);
        w->buf = NULL;
        return NULL;
    }
    w->buf[w->len] = '\0';
    return w->buf;
}

char *jw_finish_fit(struct jw *w)
{
    char *text = jw_finish(w), *fit;

    if (!text || w->len + 1 == w->cap)
        return text;
    fit = realloc(text, w->len + 1); /* shrinks in place */
    return fit ? fit : text;
}
