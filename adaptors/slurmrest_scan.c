/* slurmrest_scan.c - GET /jobs read fast: only the fields Loom needs. */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
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
 * are decoded strictly, those it skips are not.
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

/* Byte classes, so that the hot loops test one table entry a byte. */
enum { C_WS = 1, C_STOP = 2, C_NUM = 4 };
static unsigned char cls[256];
static pthread_once_t cls_once = PTHREAD_ONCE_INIT;

static void cls_init(void)
{
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
    while (s->p < s->end && (cls[(unsigned char)*s->p] & C_WS))
        s->p++;
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

/* At a '"': past the string. *raw: it has no escape (its text is
 * [start, p - 1)). */
static int skip_string(struct scan *s, int *raw)
{
    *raw = 1;
    for (s->p++; s->p < s->end; s->p++) {
        if (!(cls[(unsigned char)*s->p] & C_STOP))
            continue;
        if (*s->p == '"') {
            s->p++;
            return 0;
        }
        if ((unsigned char)*s->p < 0x20)
            return bad(s, "a control character in a string");
        if (*s->p == '\\') {
            *raw = 0;
            if (++s->p >= s->end)
                break;
        }
    }
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

/* The value at s->p as a jansson value: strings without escapes and
 * integers directly, anything else through json_loadb of its text. */
static json_t *value(struct scan *s)
{
    const char *v;
    int raw;

    ws(s);
    v = s->p;
    if (s->p < s->end && *s->p == '"') {
        if (skip_string(s, &raw) < 0)
            return NULL;
        if (raw)
            return json_stringn(v + 1, (size_t)(s->p - v - 2));
    } else if (skip_value(s) < 0) {
        return NULL;
    }
    if ((*v == '-' || (*v >= '0' && *v <= '9')) && s->p - v < 20 &&
        !memchr(v, '.', (size_t)(s->p - v)) &&
        !memchr(v, 'e', (size_t)(s->p - v)) &&
        !memchr(v, 'E', (size_t)(s->p - v))) {
        char num[24];
        memcpy(num, v, (size_t)(s->p - v));
        num[s->p - v] = '\0';
        return json_integer(strtoll(num, NULL, 10));
    }
    return json_loadb(v, (size_t)(s->p - v), JSON_DECODE_ANY, NULL);
}

static int is_wanted(const char *k, size_t n)
{
    for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
        if (wanted[i].len == n && !memcmp(wanted[i].key, k, n))
            return 1;
    return 0;
}

/* One job object: its wanted fields into a new object (*out). */
static int job_fields(struct scan *s, json_t **out)
{
    json_t *o = json_object();
    int raw;

    *out = o;
    if (!o || expect(s, '{') < 0)
        return o ? -1 : loom_error_set(s->err, LOOM_EINTERNAL, "no memory");
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
        return 0;
    }
    for (;;) {
        const char *k;
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
        if (raw && is_wanted(k, kn)) {
            char key[32];
            json_t *v = value(s);
            if (!v)
                return s->err->kind != LOOM_OK ? -1
                       : bad(s, "a value Loom cannot read");
            snprintf(key, sizeof(key), "%.*s", (int)kn, k);
            json_object_set_new(o, key, v);
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
                    json_t *o = NULL;
                    int rc = job_fields(&s, &o);
                    if (rc == 0)
                        rc = srest_job_from(o, i, out, max_id, err);
                    json_decref(o);
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
    return 0;
error:
    cl_job_list_fini(out);
    return -1;
}
