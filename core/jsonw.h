/* jsonw.h - a small streaming JSON writer for documents rendered often
 * (a job's view), where building a jansson tree first costs more than the
 * text itself. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_JSONW_H
#define LOOM_CORE_JSONW_H

#include <stddef.h>
#include <time.h>

#define JW_DEPTH 16

struct jw {
    char *buf;
    size_t len, cap;
    int oom;                /* an allocation failed: jw_finish gives NULL */
    int depth;
    int count[JW_DEPTH];    /* values written at each open level */
    int after_key;
};

void jw_init(struct jw *w);
void jw_open(struct jw *w, char brace);  /* '{' or '[' */
void jw_close(struct jw *w, char brace); /* '}' or ']' */
void jw_key(struct jw *w, const char *key);
/* The first n bytes of key as the next key. */
void jw_key_n(struct jw *w, const char *key, size_t n);
void jw_str(struct jw *w, const char *s); /* NULL: null */
/* s[0..n) as a string: NUL bytes are written \u0000, bytes that are not
 * UTF-8 U+FFFD. */
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_int(struct jw *w, long long v);
void jw_double(struct jw *w, double v); /* 6 significant digits; NaN and
                                          infinities are written null */
void jw_null(struct jw *w);
void jw_bool(struct jw *w, int v);
/* A key and its value at once. */
void jw_kv_str(struct jw *w, const char *key, const char *s); /* NULL: null */
void jw_kv_int(struct jw *w, const char *key, long long v);
void jw_kv_double(struct jw *w, const char *key, double v);
/* An RFC 3339 time; 0 is written null. */
void jw_kv_time(struct jw *w, const char *key, time_t t);
void jw_kv_strs(struct jw *w, const char *key, char *const *v, size_t n);
/* The length of s[0..n) without a UTF-8 sequence cut short at its end
 * (one that more bytes could complete), to read the rest from later. */
size_t jw_utf8_whole(const char *s, size_t n);
/* A value already written as JSON text (a document rendered before and
 * stored): put as it is. */
void jw_raw(struct jw *w, const char *json);
/* The text (malloc'd, the caller frees), or NULL when out of memory. */
char *jw_finish(struct jw *w);
/* The same in an allocation of the text's own size, not of the buffer's
 * (which grows by doubling): for text kept long, such as a job's view. */
char *jw_finish_fit(struct jw *w);

#endif
