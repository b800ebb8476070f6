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
 * skips what Loom does not read, and hands each job's few fields, as a
 * small jansson object, to the same mapping as the full parse
 * (srest_job_from), so both read a job alike. It checks the structure
 * (brackets, strings, literals, where numbers are); the values it keeps
 * are decoded strictly, those it skips are not. What it costs is the bytes
 * it walks: strings are skipped 8 bytes a step, a key is matched against
 * the wanted ones of its length only, and the values it keeps (strings
 * with slurmrestd's "\/", numbers, null) are made here, not by a parse of
 * their text.
 */

#define MAX_DEPTH 64

struct scan {
    const char *p, *end, *start;
    int depth;
    struct loom_error *err;
};

#define W(k) {k, sizeof(k) - 1}
static const struct {
    const char *key;
    size_t len;
} wanted[] = {
    W("job_id"), W("job_state"), W("state_reason"), W("name"),
    W("user_name"), W("nodes"), W("comment"), W("standard_output"),
    W("standard_error"), W("submit_time"), W("start_time"), W("end_time"),
    W("exit_code"), W("node_count"), W("minimum_cpus_per_node"),
    W("memory_per_node"), W("memory_per_cpu"), W("time_limit"),
};
#undef W

#define N_WANTED (sizeof(wanted) / sizeof(wanted[0]))
/* Longer than any wanted key (a unit test reads every one). */
#define MAX_KEY 32

/* Byte classes, so that the hot loops test one table entry a byte. */
enum { C_WS = 1, C_STOP = 2, C_NUM = 4 };
static unsigned char cls[256];
/* by_len[n]: 1 + the index in wanted[] of each key n bytes long, then 0. */
static unsigned char by_len[MAX_KEY][N_WANTED + 1];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static void cls_init(void)
{
    for (size_t i = 0; i < N_WANTED; i++) {
        unsigned char *w;
        if (wanted[i].len >= MAX_KEY)
            continue; /* never read: the unit test's full parse tells */
        w = by_len[wanted[i].len];
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

static int expect(struct scan *s, char c)
{
    ws(s);
    if (s->p >= s->end || *s->p != c) {
        char why[32];
        snprintf(why, sizeof(why), "'%c' expected", c);
        return bad(s, why);
    }
    s->p++;
    return 0;
}

/* 8 bytes with none that ends a string ('"', '\\', a control character):
 * the common case tested a word at a time (the classic "has a zero byte"
 * and "has a byte less than n" tests, exact for whether any byte is). */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static int plain8(const char *p)
{
    uint64_t v, q, b;

    memcpy(&v, p, 8);
    q = v ^ (ONES * '"');
    b = v ^ (ONES * '\\');
    return !((((q - ONES) & ~q) | ((b - ONES) & ~b) |
              ((v - ONES * 0x20) & ~v)) & HIGHS);
}

/* At a '"': past the string. *raw: it has no escape (its text is
 * [start, p - 1)). */
static int skip_string(struct scan *s, int *raw)
{
    const char *p = s->p + 1, *end = s->end;

    *raw = 1;
    for (;;) {
        while (end - p >= 8 && plain8(p))
            p += 8;
        while (p < end && !(cls[(unsigned char)*p] & C_STOP))
            p++;
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

/* The value at s->p as a jansson value: strings, integers and literals
 * directly, anything else through json_loadb of its text. */
static json_t *value(struct scan *s)
{
    const char *v;
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
    if (n < 20 && (*v == '-' || (*v >= '0' && *v <= '9'))) {
        char num[24], *end;
        long long i;
        memcpy(num, v, n);
        num[n] = '\0';
        i = strtoll(num, &end, 10);
        if (end == num + n && end[-1] != '-')
            return json_integer(i);
    }
    return json_loadb(v, n, JSON_DECODE_ANY, NULL);
}

/* The key k (n bytes) as one of wanted[] (its own NUL-terminated name),
 * or NULL. Most keys of a job are not wanted: by_len[] leaves them at one
 * look-up. */
static const char *wanted_key(const char *k, size_t n)
{
    if (n >= MAX_KEY)
        return NULL;
    for (const unsigned char *w = by_len[n]; *w; w++)
        if (wanted[*w - 1].key[0] == k[0] &&
            !memcmp(wanted[*w - 1].key, k, n))
            return wanted[*w - 1].key;
    return NULL;
}

/* One job object: its wanted fields into o, emptied first. One object
 * serves every job of a list: emptied, it keeps its hash table, which a
 * new one would grow again for the 18 fields. */
static int job_fields(struct scan *s, json_t *o)
{
    int raw;

    json_object_clear(o);
    if (expect(s, '{') < 0)
        return -1;
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        const char *k, *key;
        size_t kn;
        ws(s);
        if (s->p >= s->end || *s->p != '"')
            return bad(s, "a key expected");
        k = s->p + 1;
        if (skip_string(s, &raw) < 0)
            return -1;
        kn = (size_t)(s->p - 1 - k);
        if (expect(s, ':') < 0)
            return -1;
        if (raw && (key = wanted_key(k, kn))) {
            json_t *v = value(s);
            if (!v)
                return s->err->kind != LOOM_OK ? -1
                       : bad(s, "a value Loom cannot read");
            json_object_set_new_nocheck(o, key, v);
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

int srest_scan_jobs(const char *text, size_t len, struct cl_job_list *out,
                    unsigned long *max_id, struct loom_error *err)
{
    struct scan s = {text, text + len, text, 0, err};
    json_t *o = json_object();
    int raw, found = 0;
    size_t i = 0;

    pthread_once(&cls_once, cls_init);
    loom_error_clear(err);
    if (!o) {
        loom_error_set(err, LOOM_EINTERNAL, "no memory");
        goto error;
    }
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
                    int rc = job_fields(&s, o);
                    if (rc == 0)
                        rc = srest_job_from(o, i, out, max_id, err);
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
    json_decref(o);
    return 0;
error:
    json_decref(o);
    cl_job_list_fini(out);
    return -1;
}
