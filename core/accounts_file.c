/* accounts_file.c - the accounts file read into rules: its methods, its
 * fields (quoted or not), grid-mapfile lines, cluster= options, and the
 * bounds on its regular expressions. */
/* SPDX-License-Identifier: MIT */
#include "core/accounts_priv.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define LINE_MAX_ 4096
#define RULES_MAX 10000

const struct accounts_method accounts_methods[] = {
    {"LOOM", 1},      /* the subject of Loom's own tokens */
    {"SCITOKENS", 0}, /* a grid token's "ISSUER,SUBJECT" */
    {"GROUP", 0},     /* one of its groups, "ISSUER,GROUP" */
    {"DN", 0},        /* a client certificate's subject, /DC=org/CN=Bob */
    {NULL, 0},
};
#define METHOD_NAMES "LOOM, SCITOKENS, GROUP, DN"

int accounts_method_find(const char *name)
{
    for (int m = 0; accounts_methods[m].name; m++)
        if (!strcmp(accounts_methods[m].name, name))
            return m;
    return -1;
}

static void rule_fini(struct accounts_rule *r)
{
    if (r->literal)
        free(r->literal);
    else if (r->account) /* re was compiled */
        regfree(&r->re);
    free(r->account);
    strv_fini(&r->clusters);
}

void accounts_destroy(struct accounts *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++)
        rule_fini(&a->rules[i]);
    free(a->rules);
    free(a->path);
    free(a);
}

/* The highest \N in an account template, or -1 for a stray backslash. */
static int max_group(const char *t)
{
    int max = 0;

    for (; *t; t++) {
        if (*t != '\\')
            continue;
        if (t[1] < '1' || t[1] > '9')
            return -1;
        if (t[1] - '0' > max)
            max = t[1] - '0';
        t++;
    }
    return max;
}

/* Bounds on an identity's regular expression, so that glibc compiles it
 * in bounded memory and matches it in bounded time: its size estimated
 * with groups and repetitions multiplied out, a repetition's bound, the
 * depth of its groups. */
#define RE_WEIGHT_MAX 10000
#define RE_BOUND_MAX 255
#define RE_DEPTH_MAX 32

/* The end of the bracket expression that begins at p ("[...]"), or NULL
 * when it does not end (regcomp then says why). */
static const char *bracket_end(const char *p)
{
    p++;
    if (*p == '^')
        p++;
    if (*p == ']')
        p++;
    for (; *p && *p != ']'; p++) {
        if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
            char c = p[1];
            for (p += 2; *p && !(*p == c && p[1] == ']'); p++)
                ;
            if (!*p)
                return NULL;
            p++;
        }
    }
    return *p ? p : NULL;
}

/* NULL when the POSIX ERE p is within the bounds, else why not: no
 * back-reference (a glibc extension that makes matching exponential), no
 * repetition of a repetition ("a++", undefined in POSIX), no bound above
 * RE_BOUND_MAX, an estimated size of at most RE_WEIGHT_MAX. What is
 * malformed is left to regcomp. */
static const char *re_unbounded(const char *p)
{
    long stack[RE_DEPTH_MAX], cur = 0, last = 0, times, add;
    int depth = 0, rep = 0;
    char *end;

    for (; *p; p++) {
        add = 0;
        switch (*p) {
        case '\\':
            if (p[1] >= '1' && p[1] <= '9')
                return "back-references (\\1 to \\9) are not taken";
            if (p[1])
                p++;
            add = last = 1;
            rep = 0;
            break;
        case '[':
            if (!(p = bracket_end(p)))
                return NULL;
            add = last = 1;
            rep = 0;
            break;
        case '(':
            if (depth == RE_DEPTH_MAX)
                return "groups are nested too deep";
            stack[depth++] = cur;
            cur = last = 0;
            rep = 0;
            break;
        case ')':
            last = depth && cur ? cur : 1;
            cur = depth ? stack[--depth] : cur;
            add = last;
            rep = 0;
            break;
        case '{': /* {m}, {m,}, {m,n}, {,n} (glibc); else a '{' */
            times = isdigit((unsigned char)p[1]) ? strtol(p + 1, &end, 10)
                                                 : 0;
            if (!isdigit((unsigned char)p[1]))
                end = (char *)p + 1;
            if (*end == ',' && isdigit((unsigned char)end[1]))
                times = strtol(end + 1, &end, 10);
            else if (*end == ',')
                end++;
            if (*end != '}' || end == p + 1) {
                add = last = 1;
                rep = 0;
                break;
            }
            if (times > RE_BOUND_MAX)
                return "a bound above 255";
            if (rep)
                return "a repetition follows a repetition";
            p = end;
            add = last * (times > 1 ? times - 1 : 0);
            last *= times;
            rep = 1;
            break;
        case '*':
        case '+':
        case '?':
            if (rep)
                return "a repetition follows a repetition";
            times = *p == '?' ? 1 : 2;
            add = last * (times - 1); /* the last atom or group, again */
            last *= times;
            rep = 1;
            break;
        case '|':
            last = 0;
            rep = 0;
            break;
        default:
            add = last = 1;
            rep = 0;
        }
        cur += add;
        if (cur > RE_WEIGHT_MAX || last > RE_WEIGHT_MAX)
            return "it is too complex";
    }
    return NULL;
}

/* Split text into at most max fields at blanks; a field may be quoted
 * ("/DC=org/CN=Bob Smith"), \" and \\ standing for " and \ inside the
 * quotes, and bit i of *quoted says field i was. The number of fields, or
 * -1 with err for an unterminated quote or a quote followed by something
 * other than a blank. */
static int split_fields(const char *file, int line, char *p, char **f,
                        int max, unsigned *quoted, struct loom_error *err)
{
    int n = 0;

    while (n < max) {
        p += strspn(p, " \t");
        if (!*p)
            break;
        if (*p != '"') {
            f[n++] = p;
            p += strcspn(p, " \t");
            if (*p)
                *p++ = '\0';
            continue;
        }
        char *o = f[n] = ++p;
        *quoted |= 1u << n++;
        while (*p && *p != '"') {
            if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                p++;
            *o++ = *p++;
        }
        if (*p != '"')
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: a quote is not "
                                  "closed", file, line);
        *o = '\0';
        p++;
        if (*p && !strchr(" \t", *p))
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: a blank must "
                                  "follow a closing quote", file, line);
    }
    return n;
}


/* The option of a line's last field: cluster=NAME[,NAME...]. */
static int parse_option(const char *file, int line, const char *opt,
                        struct accounts_rule *r, struct loom_error *err)
{
    const char *p = opt + 8;

    if (strncmp(opt, "cluster=", 8) != 0 || !*p)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown option '%s' "
                              "(known: cluster=NAME[,NAME...])", file, line,
                              opt);
    while (*p) {
        size_t n = strcspn(p, ",");
        char name[64];
        if (!n || n >= sizeof(name))
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: '%s': a cluster "
                                  "name is 1 to 63 characters", file, line,
                                  opt);
        memcpy(name, p, n);
        name[n] = '\0';
        if (strv_push(&r->clusters, name) < 0)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        p += n + (p[n] == ',');
    }
    return 0;
}

/* The identity f (quoted or not) of a line into r: a literal, or a
 * regular expression within bounds that has the groups its account g
 * names. */
static int parse_identity(const char *file, int line, const char *f,
                          int quoted, const char *acct, int g,
                          struct accounts_rule *r, struct loom_error *err)
{
    char pat[LINE_MAX_ + 4];
    const char *unbounded;
    size_t len = strlen(f);
    int rc;

    /* a quoted identity is a literal, whatever it looks like */
    if (quoted || f[0] != '/' || len < 2 || f[len - 1] != '/') {
        if (g > 0)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s' "
                                  "names a group, but '%s' is not a regular "
                                  "expression (/.../)", file, line, acct, f);
        if (!(r->literal = strdup(f)))
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return 0;
    }
    snprintf(pat, sizeof(pat), "^(%.*s)$", (int)len - 2, f + 1);
    if ((unbounded = re_unbounded(pat)))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: regular expression "
                              "%s: %s", file, line, f, unbounded);
    /* the whole identity: wrapped in ^( )$, so \1 is group 2 inside */
    if ((rc = regcomp(&r->re, pat, REG_EXTENDED)) != 0) {
        char why[200];
        regerror(rc, &r->re, why, sizeof(why));
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: regular expression "
                              "%s: %s", file, line, f, why);
    }
    if ((size_t)g + 1 > r->re.re_nsub) {
        regfree(&r->re);
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s' names "
                              "group %d, but %s has %zu", file, line, acct, g,
                              f, r->re.re_nsub - 1);
    }
    return 0;
}

/* One line's fields into r (on failure, r holds at most clusters): METHOD
 * IDENTITY ACCOUNT [cluster=...]. A line that begins with a quote is a
 * grid-mapfile's, "DN" ACCOUNT, of method DN. */
static int parse_rule(const char *file, int line, char *text,
                      struct accounts_rule *r, struct loom_error *err)
{
    char *f[5] = {0};
    unsigned quoted = 0;
    int n, g, mapfile = text[0] == '"';

    n = split_fields(file, line, text, mapfile ? f + 1 : f, mapfile ? 4 : 5,
                     &quoted, err);
    if (n < 0)
        return -1;
    if (mapfile) {
        f[0] = "DN";
        quoted <<= 1;
        n++;
    }
    if (n != 3 && n != 4)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: expected METHOD "
                              "IDENTITY ACCOUNT [cluster=NAME,...]%s, got %d "
                              "field%s", file, line,
                              mapfile ? " (or \"DN\" ACCOUNT)" : "",
                              n - mapfile, n - mapfile == 1 ? "" : "s");
    if ((r->method = accounts_method_find(f[0])) < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown method '%s' "
                              "(known: " METHOD_NAMES ")", file, line, f[0]);
    if ((r->method == ACCOUNTS_M_SCITOKENS ||
         r->method == ACCOUNTS_M_GROUP) &&
        (quoted & 2 || f[1][0] != '/') && !strchr(f[1], ','))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: a %s identity is "
                              "ISSUER,%s (or a /regular expression/), not "
                              "'%s'", file, line, f[0],
                              r->method == ACCOUNTS_M_GROUP ? "GROUP"
                                                            : "SUBJECT",
                              f[1]);
    if (strchr(f[2], ','))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s': a list "
                              "of accounts is not taken; give one", file,
                              line, f[2]);
    if (n == 4 && parse_option(file, line, f[3], r, err) < 0)
        return -1;
    g = max_group(f[2]);
    if (g < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s': a "
                              "backslash must be followed by a group "
                              "number 1 to 9", file, line, f[2]);
    r->line = line;
    if (parse_identity(file, line, f[1], (quoted & 2) != 0, f[2], g, r,
                       err) < 0)
        return -1;
    if (!(r->account = strdup(f[2]))) {
        if (r->literal)
            free(r->literal);
        else
            regfree(&r->re);
        r->literal = NULL;
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

/* One line of the file into a->rules (p: its text, trimmed). */
static int add_line(struct accounts *a, int line, char *p, size_t *cap,
                    struct loom_error *err)
{
    if (a->n == RULES_MAX)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: more than %d lines",
                              a->path, line, RULES_MAX);
    if (a->n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        struct accounts_rule *r = realloc(a->rules, c * sizeof(*r));
        if (!r)
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        a->rules = r;
        *cap = c;
    }
    memset(&a->rules[a->n], 0, sizeof(a->rules[a->n]));
    if (parse_rule(a->path, line, p, &a->rules[a->n], err) < 0) {
        strv_fini(&a->rules[a->n].clusters);
        return -1;
    }
    a->n++;
    return 0;
}

static int read_file(struct accounts *a, FILE *fp, struct loom_error *err)
{
    char *buf = NULL;
    size_t bufsize = 0, cap = 0;
    ssize_t len;
    int line = 0, rc = 0;

    while (rc == 0 && (len = getline(&buf, &bufsize, fp)) >= 0) {
        char *p = buf, *end = buf + len;
        line++;
        if ((size_t)len - (buf[len - 1] == '\n') > LINE_MAX_ - 2) {
            rc = loom_error_set(err, LOOM_EINVAL, "%s:%d: line longer than "
                                "%d bytes", a->path, line, LINE_MAX_ - 2);
            break;
        }
        if (memchr(buf, '\0', (size_t)len)) {
            rc = loom_error_set(err, LOOM_EINVAL, "%s:%d: a NUL byte in the "
                                "line", a->path, line);
            break;
        }
        while (isspace((unsigned char)*p))
            p++;
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (*p && *p != '#')
            rc = add_line(a, line, p, &cap, err);
    }
    if (rc == 0 && ferror(fp))
        rc = loom_error_set(err, LOOM_EINVAL, "cannot read %s: %s", a->path,
                            strerror(errno));
    free(buf);
    return rc;
}

/* A new map with policy pol: empty without fp, else read from fp, which
 * messages call name. */
static struct accounts *make(const char *name, FILE *fp,
                             const struct accounts_policy *pol,
                             struct loom_error *err)
{
    struct accounts *a = calloc(1, sizeof(*a));

    if (!a || (name && !(a->path = strdup(name)))) {
        free(a);
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    a->pol = pol ? *pol : accounts_default_policy;
    if (fp && read_file(a, fp, err) < 0) {
        accounts_destroy(a);
        return NULL;
    }
    return a;
}

struct accounts *accounts_read(const char *path,
                               const struct accounts_policy *pol,
                               struct loom_error *err)
{
    struct accounts *a;
    FILE *fp;

    if (!path)
        return make(NULL, NULL, pol, err);
    if (!(fp = fopen(path, "re"))) {
        loom_error_set(err, LOOM_EINVAL, "accounts_file %s: %s", path,
                       strerror(errno));
        return NULL;
    }
    a = make(path, fp, pol, err);
    fclose(fp);
    return a;
}

struct accounts *accounts_parse(const char *name, const char *text,
                                size_t len,
                                const struct accounts_policy *pol,
                                struct loom_error *err)
{
    struct accounts *a;
    FILE *fp = len ? fmemopen((void *)text, len, "r") : NULL;

    if (len && !fp) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    a = make(name, fp, pol, err);
    if (fp)
        fclose(fp);
    return a;
}
