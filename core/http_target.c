/* http_target.c - a request's target as sent, taken apart strictly: the
 * path and the query, %-decoded, with what is wrong in them marked. */
/* SPDX-License-Identifier: MIT */
#include "core/http.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static int hex(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The byte that s[i..] stands for: a %XX escape (*i moves past it), '+'
 * as a space when plus, else itself; -1 for a '%' without two hex digits
 * (*i then stays on it). */
static int decoded(const char *s, size_t n, size_t *i, int plus)
{
    if (s[*i] == '%') {
        int hi = *i + 1 < n ? hex(s[*i + 1]) : -1;
        int lo = *i + 2 < n ? hex(s[*i + 2]) : -1;
        if (hi < 0 || lo < 0)
            return -1;
        *i += 2;
        return hi * 16 + lo;
    }
    return plus && s[*i] == '+' ? ' ' : (unsigned char)s[*i];
}

/* Is s[0..n) UTF-8 without any control character (NUL included)? */
static int is_text(const char *s, size_t n)
{
    json_t *j;

    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return 0;
    j = json_stringn(s, n);
    json_decref(j);
    return j != NULL;
}

/* The path s[0..n) decoded into out (n + 1 bytes); -1 when it names
 * nothing: a malformed escape, an escaped '/', a control character, or
 * bytes that are not UTF-8. */
static int path_decode(const char *s, size_t n, char *out)
{
    size_t len = 0;

    for (size_t i = 0; i < n; i++) {
        int esc = s[i] == '%', c = decoded(s, n, &i, 0);
        if (c < 0 || (esc && c == '/'))
            return -1;
        out[len++] = (char)c;
    }
    out[len] = '\0';
    return is_text(out, len) ? 0 : -1;
}

/* s[0..n) decoded into *out ('+' a space); returns its length and marks
 * a malformed escape (kept as it is). */
static size_t part_decode(const char *s, size_t n, char **out, int *bad)
{
    char *start = *out;

    for (size_t i = 0; i < n; i++) {
        int c = decoded(s, n, &i, 1);
        if (c < 0) {
            *bad = 1;
            c = '%';
        }
        *(*out)++ = (char)c;
    }
    *(*out)++ = '\0';
    return (size_t)(*out - start - 1);
}

static void query_parse(struct http_target *t, const char *q, char *buf)
{
    while (*q) {
        size_t n = strcspn(q, "&"), k = strcspn(q, "=");
        struct http_param *p = &t->query[t->n_query];

        if (n && t->n_query == HTTP_QUERY_MAX) {
            t->over = 1;
            return;
        }
        if (n) { /* "a&&b" and a last '&' hold nothing */
            p->has_value = k < n;
            p->key = buf;
            p->key_len = part_decode(q, k < n ? k : n, &buf, &p->bad_escape);
            p->value = buf;
            p->value_len = k < n ? part_decode(q + k + 1, n - k - 1, &buf,
                                               &p->bad_escape)
                                 : part_decode(q, 0, &buf, &p->bad_escape);
            p->value_text = is_text(p->value, p->value_len);
            t->n_query++;
        }
        q += n + (q[n] == '&');
    }
}

static char *printable(const char *raw)
{
    static const char digits[] = "0123456789ABCDEF";
    char *out = malloc(3 * strlen(raw) + 1), *o = out;

    for (; out && *raw; raw++) {
        unsigned char c = (unsigned char)*raw;
        if (c > 0x20 && c < 0x7f) {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = digits[c >> 4];
            *o++ = digits[c & 15];
        }
    }
    if (out)
        *o = '\0';
    return out;
}

int http_target_parse(const char *raw, struct http_target *t)
{
    size_t plen = strcspn(raw, "?"), len = strlen(raw);

    memset(t, 0, sizeof(*t));
    if (!(t->printable = printable(raw)) || !(t->path = malloc(plen + 1)) ||
        !(t->buf = malloc(2 * len + 2))) {
        http_target_fini(t);
        return -1;
    }
    if (path_decode(raw, plen, t->path) < 0) {
        free(t->path);
        t->path = NULL;
    }
    if (raw[plen] == '?')
        query_parse(t, raw + plen + 1, t->buf);
    return 0;
}

void http_target_fini(struct http_target *t)
{
    free(t->printable);
    free(t->path);
    free(t->buf);
    memset(t, 0, sizeof(*t));
}
