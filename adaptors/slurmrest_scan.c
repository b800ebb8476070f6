/* slurmrest_scan.c - GET /jobs read fast: only the fields Loom needs. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/slurmrest.h"

/*
 * slurmrestd's job list is ~3 KB a job of which Loom reads 18 scalars: a
 * full parse into jansson values costs ~5 ms for 100 jobs, more than the
 * request itself. This scanner walks the text once, checks its syntax,
 * skips what Loom does not read, and hands each job's few fields, as
 * jansson values, to the same mapping as the full parse (srest_job_from),
 * so both read a job alike. It checks the structure (brackets, strings,
 * literals, where numbers are); the values it keeps are decoded strictly,
 * those it skips are not. What it costs is the bytes it walks: strings are
 * walked 8 bytes a step to the first byte that ends them, a key is
 * matched against the wanted ones of its length only, and the values it
 * keeps (strings with slurmrestd's "\/", numbers, null) are made here,
 * not by a parse of their text. One value a field serves every job of a
 * list, set in place (an integer costs no allocation, a string one), not
 * a new object of 18 members a job, which cost a third of the scan.
 */

#define MAX_DEPTH 64

struct scan {
    const char *p, *end, *start;
    int depth;
    struct loom_error *err;
};

#define N_WANTED SREST_N_JOB_FIELDS
/* Longer than any wanted key (a unit test reads every one). */
#define MAX_KEY 32

/* Byte classes, so that the hot loops test one table entry a byte. */
enum { C_WS = 1, C_STOP = 2, C_NUM = 4 };
static unsigned char cls[256];
/* by_len[n]: 1 + the index in srest_job_fields[] of each key n bytes
 * long, then 0. */
static unsigned char by_len[MAX_KEY][N_WANTED + 1];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static void cls_init(void)
{
    for (size_t i = 0; i < N_WANTED; i++) {
        size_t n = strlen(srest_job_fields[i]);
        unsigned char *w;
        if (n >= MAX_KEY)
            continue; /* never read: the unit test's full parse tells */
        w = by_len[n];
        while (*w)
            w++;
        *w = (unsigned char)(i + 1);
    }
    cls[' '] = cls['\n'] = cls['\r'] = cls['\t'] = C_WS;
    for (int c = 0; c < 0x20; c++)
        cls[c] |= C_STOP; /* a control character ends a string: bad */
    cls['"'] |= C_STOP;
    cls['\\'] |= C_STOP;
    for (const char *n = "+-.0123456789eE"; *n; n++)
        cls[(unsigned char)*n] |= C_NUM;
}

static int bad(struct scan *s, const char *why)
{
    return loom_error_set(s->err, LOOM_ETEMP, "slurmrestd's answer is not "
                          "the JSON expected: %s at byte %zu", why,
                          (size_t)(s->p - s->start));
}

static void ws(struct scan *s)
{
    const char *p = s->p, *end = s->end;

    while (p < end && (cls[(unsigned char)*p] & C_WS))
        p++;
    s->p = p;
}

static int expect_slow(struct scan *s, char c)
{
    char why[32];

    snprintf(why, sizeof(why), "'%c' expected", c);
    return bad(s, why);
}

/* Past c, after any white space. */
static inline int expect(struct scan *s, char c)
{
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 0;
    }
    ws(s);
    if (s->p >= s->end || *s->p != c)
        return expect_slow(s, c);
    s->p++;
    return 0;
}

/* Of the 8 bytes at p, those that end a string ('"', '\\', a control
 * character), as the high bit of each: the classic "has a zero byte" and
 * "has a byte less than n" tests. A borrow can mark a byte after a true
 * one, never before: the lowest mark is always true. */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static uint64_t stops8(const char *p)
{
    uint64_t v, q, b;

    memcpy(&v, p, 8);
    q = v ^ (ONES * '"');
    b = v ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b) |
            ((v - ONES * 0x20) & ~v)) & HIGHS;
}

/* p advanced to the first byte that ends a string, or to end. On a
 * little-endian machine the lowest mark of a word is its first such byte
 * (its trailing zero bits over 8); elsewhere the word only says whether
 * the byte-wise loop must look. */
static const char *to_stop(const char *p, const char *end)
{
    uint64_t m;

    while (end - p >= 8) {
        if ((m = stops8(p)) != 0) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return p + (__builtin_ctzll(m) >> 3);
#else
            break;
#endif
        }
        p += 8;
    }
    while (p < end && !(cls[(unsigned char)*p] & C_STOP))
        p++;
    return p;
}

/* At a '"': past the string. *raw: it has no escape (its text is
 * [start, p - 1)). */
static inline int skip_string(struct scan *s, int *raw)
{
    const char *p = s->p + 1, *end = s->end;

    *raw = 1;
    for (;;) {
        p = to_stop(p, end);
        if (p >= end)
            break;
        if (*p == '"') {
            s->p = p + 1;
            return 0;
        }
        if (*p != '\\') {
            s->p = p;
            return bad(s, "a control character in a string");
        }
        *raw = 0;
        if (++p >= end)
            break;
        p++;
    }
    s->p = end;
    return bad(s, "an unterminated string");
}

static int skip_value(struct scan *s);

static int skip_container(struct scan *s, char close)
{
    int raw;

    if (++s->depth > MAX_DEPTH)
        return bad(s, "nesting too deep");
    s->p++;
    ws(s);
    if (s->p < s->end && *s->p == close) {
        s->p++;
        s->depth--;
        return 0;
    }
    for (;;) {
        if (close == '}') {
            ws(s);
            if (s->p >= s->end || *s->p != '"')
                return bad(s, "a key expected");
            if (skip_string(s, &raw) < 0 || expect(s, ':') < 0)
                return -1;
        }
        if (skip_value(s) < 0)
            return -1;
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        if (expect(s, close) < 0)
            return -1;
        s->depth--;
        return 0;
    }
}

static int skip_value(struct scan *s)
{
    int raw;

    ws(s);
    if (s->p >= s->end)
        return bad(s, "a value expected");
    switch (*s->p) {
    case '"':
        return skip_string(s, &raw);
    case '{':
        return skip_container(s, '}');
    case '[':
        return skip_container(s, ']');
    case 't':
    case 'f':
    case 'n': {
        const char *lit = *s->p == 't' ? "true" : *s->p == 'f' ? "false"
                                                                : "null";
        size_t n = strlen(lit);
        if ((size_t)(s->end - s->p) < n || memcmp(s->p, lit, n))
            return bad(s, "a value expected");
        s->p += n;
        return 0;
    }
    default:
        if (*s->p != '-' && (*s->p < '0' || *s->p > '9'))
            return bad(s, "a value expected");
        while (s->p < s->end && (cls[(unsigned char)*s->p] & C_NUM))
            s->p++;
        return 0;
    }
}

/* A string's text t (n bytes, between its quotes) with escapes: decoded
 * here when they are the one-letter kind (slurmrestd writes every '/' as
 * "\/"), else by jansson. A new value, or NULL (bad UTF-8, no memory). */
static json_t *unescaped(const char *t, size_t n)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    char stack[256], *d = n <= sizeof(stack) ? stack : malloc(n);
    json_t *v = NULL;
    size_t k = 0;

    if (!d)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const char *e;
        if (t[i] != '\\') {
            d[k++] = t[i];
            continue;
        }
        if (++i >= n || !(e = strchr(from, t[i])) || !*e) {
            /* \uXXXX: jansson's decoder, on the quoted text */
            v = json_loadb(t - 1, n + 2, JSON_DECODE_ANY, NULL);
            goto out;
        }
        d[k++] = to[e - from];
    }
    v = json_stringn(d, k);
out:
    if (d != stack)
        free(d);
    return v;
}

/* The integer the text [v, v + n) is, when it is one of 18 digits or
 * fewer (more: jansson's parse says what they are). */
static int int_text(const char *v, size_t n, long long *out)
{
    size_t k = *v == '-';
    long long x = 0;

    if (k == n || n - k > 18)
        return -1;
    for (; k < n; k++) {
        if (v[k] < '0' || v[k] > '9')
            return -1;
        x = x * 10 + (v[k] - '0');
    }
    *out = *v == '-' ? -x : x;
    return 0;
}

/* The value at s->p as a jansson value: strings, integers and literals
 * directly, anything else through json_loadb of its text. */
static json_t *value(struct scan *s)
{
    const char *v;
    long long i;
    size_t n;
    int raw;

    ws(s);
    v = s->p;
    if (s->p < s->end && *s->p == '"') {
        if (skip_string(s, &raw) < 0)
            return NULL;
        n = (size_t)(s->p - v - 2);
        return raw ? json_stringn(v + 1, n) : unescaped(v + 1, n);
    }
    if (skip_value(s) < 0)
        return NULL;
    n = (size_t)(s->p - v);
    if (*v == 'n')
        return json_null();
    if (*v == 't')
        return json_true();
    if (*v == 'f')
        return json_false();
    if (int_text(v, n, &i) == 0)
        return json_integer(i);
    return json_loadb(v, n, JSON_DECODE_ANY, NULL);
}

/* The value at s->p into *slot: set in place when *slot is of its kind
 * (a string without escapes, an integer), else made anew (a value that
 * cannot be read: -1 with s->err). */
static int field(struct scan *s, json_t **slot)
{
    const char *v;
    long long i;
    json_t *n;
    int raw;

    ws(s);
    v = s->p;
    if (v < s->end && *v == '"' && json_is_string(*slot)) {
        if (skip_string(s, &raw) < 0)
            return -1;
        if (raw && json_string_setn(*slot, v + 1, (size_t)(s->p - v - 2)) == 0)
            return 0;
        s->p = v; /* escaped, or not UTF-8: as value() says */
    } else if (v < s->end && (*v == '-' || (*v >= '0' && *v <= '9')) &&
               json_is_integer(*slot)) {
        if (skip_value(s) < 0)
            return -1;
        if (int_text(v, (size_t)(s->p - v), &i) == 0) {
            json_integer_set(*slot, i);
            return 0;
        }
        s->p = v;
    }
    if (!(n = value(s)))
        return s->err->kind != LOOM_OK ? -1
               : bad(s, "a value Loom cannot read");
    json_decref(*slot);
    *slot = n;
    return 0;
}

/* The key k (n bytes) as an index in srest_job_fields[], or -1. Most keys
 * of a job are not wanted: by_len[] leaves them at one look-up. */
static int wanted_key(const char *k, size_t n)
{
    if (n >= MAX_KEY)
        return -1;
    for (const unsigned char *w = by_len[n]; *w; w++)
        if (srest_job_fields[*w - 1][0] == k[0] &&
            !memcmp(srest_job_fields[*w - 1], k, n))
            return *w - 1;
    return -1;
}

/* One job object: its wanted fields read into slot[] (one value a field
 * for every job of a list), f[] pointed at those it has, NULL for the
 * others. */
static int job_fields(struct scan *s, json_t *slot[], json_t *f[])
{
    int raw;

    for (int k = 0; k < N_WANTED; k++)
        f[k] = NULL;
    if (expect(s, '{') < 0)
        return -1;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        const char *k;
        size_t kn;
        int w;
        ws(s);
        if (s->p >= s->end || *s->p != '"')
            return bad(s, "a key expected");
        k = s->p + 1;
        if (skip_string(s, &raw) < 0)
            return -1;
        kn = (size_t)(s->p - 1 - k);
        if (expect(s, ':') < 0)
            return -1;
        if (raw && (w = wanted_key(k, kn)) >= 0) {
            if (field(s, &slot[w]) < 0)
                return -1;
            f[w] = slot[w];
        } else if (skip_value(s) < 0) {
            return -1;
        }
        ws(s);
        if (s->p < s->end && *s->p == ',') {
            s->p++;
            continue;
        }
        return expect(s, '}');
    }
}

static void slots_fini(json_t *slot[])
{
    for (int k = 0; k < N_WANTED; k++)
        json_decref(slot[k]);
}

int srest_scan_jobs(const char *text, size_t len, struct cl_job_list *out,
                    unsigned long *max_id, struct loom_error *err)
{
    struct scan s = {text, text + len, text, 0, err};
    json_t *slot[N_WANTED] = {0}, *f[N_WANTED];
    int raw, found = 0;
    size_t i = 0;

    pthread_once(&cls_once, cls_init);
    loom_error_clear(err);
    if (expect(&s, '{') < 0)
        goto error;
    for (;;) {
        const char *k;
        ws(&s);
        if (s.p >= s.end || *s.p != '"') {
            bad(&s, "a key expected");
            goto error;
        }
        k = s.p + 1;
        if (skip_string(&s, &raw) < 0 || expect(&s, ':') < 0)
            goto error;
        if (!strncmp(k, "jobs\"", 5)) {
            found = 1;
            if (expect(&s, '[') < 0)
                goto error;
            ws(&s);
            if (s.p < s.end && *s.p == ']')
                s.p++;
            else
                for (;; i++) {
                    int rc = job_fields(&s, slot, f);
                    if (rc == 0)
                        rc = srest_job_from(f, i, out, max_id, err);
                    if (rc < 0)
                        goto error;
                    ws(&s);
                    if (s.p < s.end && *s.p == ',') {
                        s.p++;
                        continue;
                    }
                    if (expect(&s, ']') < 0)
                        goto error;
                    break;
                }
        } else if (skip_value(&s) < 0) {
            goto error;
        }
        ws(&s);
        if (s.p < s.end && *s.p == ',') {
            s.p++;
            continue;
        }
        if (expect(&s, '}') < 0)
            goto error;
        break;
    }
    ws(&s);
    if (s.p != s.end) {
        bad(&s, "text after the answer");
        goto error;
    }
    if (!found) {
        loom_error_set(err, LOOM_ETEMP, "slurmrestd's answer: jobs: missing");
        goto error;
    }
    slots_fini(slot);
    return 0;
error:
    slots_fini(slot);
    cl_job_list_fini(out);
    return -1;
}
