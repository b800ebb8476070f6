/* accounts.c - identities mapped to local accounts: the accounts file, its
 * lookups, and the [loomd] rules on the accounts jobs run as. */
/* SPDX-License-Identifier: MIT */
#include "core/accounts.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_ 4096
#define RULES_MAX 10000

/* The kinds of identity a line may map, and whether an identity no line
 * maps is the account of its own name. Grid access adds its methods here
 * (issuer and subject of a SciToken). */
static const struct method {
    const char *name;
    int self; /* unmapped: the account of its own name, if there is one */
} methods[] = {
    {"LOOM", 1}, /* the subject of Loom's own tokens */
    {"DN", 0},   /* a client certificate's subject, /DC=org/CN=Bob */
    {NULL, 0},
};
#define METHOD_NAMES "LOOM, DN"

struct rule {
    int method;      /* index in methods */
    char *literal;   /* or NULL: re */
    regex_t re;
    char *account;   /* may hold \1..\9 */
    int line;
};

struct accounts {
    char *path;      /* or NULL: no file */
    struct rule *rules;
    size_t n;
    struct accounts_policy pol;
};

static struct {
    pthread_rwlock_t lock;
    struct accounts *cur;
    unsigned gen;
} A = {PTHREAD_RWLOCK_INITIALIZER, NULL, 0};

static const struct accounts_policy default_policy = {
    1000, 0, 1, LOOM_TOKEN_TTL_DEFAULT_MAX};

void accounts_destroy(struct accounts *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n; i++) {
        if (a->rules[i].literal)
            free(a->rules[i].literal);
        else
            regfree(&a->rules[i].re);
        free(a->rules[i].account);
    }
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

/* One line's three fields into r. A line that begins with a quote is a
 * grid-mapfile's: "DN" ACCOUNT, method DN. */
static int parse_rule(const char *file, int line, char *text, struct rule *r,
                      struct loom_error *err)
{
    char *f[4] = {0};
    unsigned quoted = 0;
    int n, g, rc, mapfile = text[0] == '"';

    n = split_fields(file, line, text, mapfile ? f + 1 : f, mapfile ? 3 : 4,
                     &quoted, err);
    if (n < 0)
        return -1;
    if (mapfile) {
        f[0] = "DN";
        quoted <<= 1;
        n++;
    }
    if (n != 3)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: expected METHOD "
                              "IDENTITY ACCOUNT%s, got %d field%s", file,
                              line, mapfile ? " (or \"DN\" ACCOUNT)" : "",
                              n - mapfile, n - mapfile == 1 ? "" : "s");
    for (r->method = 0; methods[r->method].name; r->method++)
        if (!strcmp(methods[r->method].name, f[0]))
            break;
    if (!methods[r->method].name)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown method '%s' "
                              "(known: " METHOD_NAMES ")", file, line, f[0]);
    if (strchr(f[2], ','))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s': a list "
                              "of accounts is not taken; give one", file,
                              line, f[2]);
    g = max_group(f[2]);
    if (g < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s': a "
                              "backslash must be followed by a group "
                              "number 1 to 9", file, line, f[2]);
    r->line = line;
    /* a quoted identity is a literal, whatever it looks like */
    if (!(quoted & 2) && f[1][0] == '/' && strlen(f[1]) >= 2 &&
        f[1][strlen(f[1]) - 1] == '/') {
        char pat[LINE_MAX_ + 4];
        const char *unbounded;
        snprintf(pat, sizeof(pat), "^(%.*s)$", (int)strlen(f[1]) - 2,
                 f[1] + 1);
        if ((unbounded = re_unbounded(pat)))
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: regular "
                                  "expression %s: %s", file, line, f[1],
                                  unbounded);
        /* the whole identity: wrapped in ^( )$, so \1 is group 2 inside */
        if ((rc = regcomp(&r->re, pat, REG_EXTENDED)) != 0) {
            char why[200];
            regerror(rc, &r->re, why, sizeof(why));
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: regular "
                                  "expression %s: %s", file, line, f[1],
                                  why);
        }
        if ((size_t)g + 1 > r->re.re_nsub) {
            regfree(&r->re);
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s' "
                                  "names group %d, but %s has %zu", file,
                                  line, f[2], g, f[1], r->re.re_nsub - 1);
        }
    } else {
        if (g > 0)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s' "
                                  "names a group, but '%s' is not a regular "
                                  "expression (/.../)", file, line, f[2],
                                  f[1]);
        if (!(r->literal = strdup(f[1])))
            return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    if (!(r->account = strdup(f[2]))) {
        if (r->literal)
            free(r->literal);
        else
            regfree(&r->re);
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    }
    return 0;
}

static int read_file(struct accounts *a, FILE *fp, struct loom_error *err)
{
    char buf[LINE_MAX_];
    int line = 0;
    size_t cap = 0;

    while (fgets(buf, sizeof(buf), fp)) {
        char *p = buf, *end;
        line++;
        if (!strchr(buf, '\n') && !feof(fp))
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: line longer "
                                  "than %d bytes", a->path, line,
                                  LINE_MAX_ - 2);
        while (isspace((unsigned char)*p))
            p++;
        end = p + strlen(p);
        while (end > p && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*p || *p == '#')
            continue;
        if (a->n == RULES_MAX)
            return loom_error_set(err, LOOM_EINVAL, "%s:%d: more than %d "
                                  "lines", a->path, line, RULES_MAX);
        if (a->n == cap) {
            struct rule *r = realloc(a->rules, (cap ? cap * 2 : 16) *
                                                   sizeof(*r));
            if (!r)
                return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
            a->rules = r;
            cap = cap ? cap * 2 : 16;
        }
        memset(&a->rules[a->n], 0, sizeof(a->rules[a->n]));
        if (parse_rule(a->path, line, p, &a->rules[a->n], err) < 0)
            return -1;
        a->n++;
    }
    if (ferror(fp))
        return loom_error_set(err, LOOM_EINVAL, "cannot read %s: %s",
                              a->path, strerror(errno));
    return 0;
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
    a->pol = pol ? *pol : default_policy;
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

void accounts_install(struct accounts *a)
{
    struct accounts *old;

    pthread_rwlock_wrlock(&A.lock);
    old = A.cur;
    A.cur = a;
    A.gen++;
    pthread_rwlock_unlock(&A.lock);
    accounts_destroy(old);
}

void accounts_shutdown(void)
{
    accounts_install(NULL);
}

struct accounts_policy accounts_policy(void)
{
    struct accounts_policy p;

    pthread_rwlock_rdlock(&A.lock);
    p = A.cur ? A.cur->pol : default_policy;
    pthread_rwlock_unlock(&A.lock);
    return p;
}

unsigned accounts_generation(void)
{
    unsigned g;

    pthread_rwlock_rdlock(&A.lock);
    g = A.gen;
    pthread_rwlock_unlock(&A.lock);
    return g;
}

/* A name a Unix account may have: 1 to 32 of letters, digits, '_', '.',
 * '-', not beginning with '-'. */
static int name_ok(const char *s)
{
    size_t n = strlen(s);

    if (!n || n > LOOM_ACCOUNT_MAX || *s == '-')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
            return 0;
    return 1;
}

/* Does the account exist? 1, 0, or -1 when the lookup failed (errno). */
static int exists(const char *name, uid_t *uid)
{
    struct passwd pw, *res = NULL;
    char buf[4096];
    int rc;

    if (!name_ok(name))
        return 0;
    rc = getpwnam_r(name, &pw, buf, sizeof(buf), &res);
    if (rc != 0 && rc != ENOENT && rc != ESRCH && rc != EBADF &&
        rc != EPERM) {
        errno = rc;
        return -1;
    }
    if (res && uid)
        *uid = res->pw_uid;
    return res != NULL;
}

/* The template t with \N replaced by group N of the match m of id. */
static int expand(const char *t, const char *id, const regmatch_t *m,
                  char *out, size_t size)
{
    size_t o = 0;

    for (; *t; t++) {
        if (*t == '\\' && t[1] >= '1' && t[1] <= '9') {
            const regmatch_t *g = &m[t[1] - '0' + 1];
            size_t n = g->rm_so >= 0 ? (size_t)(g->rm_eo - g->rm_so) : 0;
            if (o + n >= size)
                return -1;
            memcpy(out + o, id + (n ? g->rm_so : 0), n);
            o += n;
            t++;
            continue;
        }
        if (o + 1 >= size)
            return -1;
        out[o++] = *t;
    }
    out[o] = '\0';
    return 0;
}

/* The line of a that maps identity: its account expanded into out; the
 * line's number, or 0 when none matches (-1: the result is too long). */
static int match(const struct accounts *a, int method, const char *identity,
                 char *out, size_t size)
{
    regmatch_t m[11];

    for (size_t i = 0; a && i < a->n; i++) {
        const struct rule *r = &a->rules[i];
        if (r->method != method)
            continue;
        if (r->literal) {
            if (strcmp(r->literal, identity) != 0)
                continue;
            snprintf(out, size, "%s", r->account);
            return r->line;
        }
        if (regexec(&r->re, identity, 11, m, 0) != 0)
            continue;
        return expand(r->account, identity, m, out, size) < 0 ? -1 : r->line;
    }
    return 0;
}

int accounts_map(const char *method, const char *identity, char *account,
                 size_t size, struct loom_error *err)
{
    char mapped[LOOM_ACCOUNT_MAX * 4 + 1], file[1024];
    int meth, line, ex;

    for (meth = 0; methods[meth].name && strcmp(methods[meth].name, method);
         meth++)
        ;
    if (!methods[meth].name)
        return loom_error_set(err, LOOM_EINTERNAL, "unknown identity method "
                              "'%s'", method);
    pthread_rwlock_rdlock(&A.lock);
    line = match(A.cur, meth, identity, mapped, sizeof(mapped));
    snprintf(file, sizeof(file), "%s", A.cur && A.cur->path ? A.cur->path
                                                            : "");
    pthread_rwlock_unlock(&A.lock);
    if (line < 0)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to an "
                              "account name longer than %d characters (%s)",
                              identity, LOOM_ACCOUNT_MAX, file);
    if (!line && !methods[meth].self)
        return *file ? loom_error_set(err, LOOM_EPERM, "identity '%s' maps "
                                      "to no local account (no %s line of "
                                      "%s matches)", identity, method, file)
                     : loom_error_set(err, LOOM_EPERM, "identity '%s' maps "
                                      "to no local account (no "
                                      "accounts_file is configured)",
                                      identity);
    if (!line) /* the subject is the account, if there is one */
        snprintf(mapped, sizeof(mapped), "%s", identity);
    ex = exists(mapped, NULL);
    if (ex < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "identity '%s': cannot "
                              "look up account %s: %s", identity, mapped,
                              strerror(errno));
    if (!ex && line)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to "
                              "account '%s' (%s:%d), which does not exist",
                              identity, mapped, file, line);
    if (!ex)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to no "
                              "local account (%s%s%s and there is no account "
                              "%s)", identity, *file ? "no line of " : "",
                              *file ? file : "no accounts_file is "
                                             "configured",
                              *file ? " matches" : "", identity);
    if (strlen(mapped) >= size)
        return loom_error_set(err, LOOM_EINTERNAL, "account name too long");
    memcpy(account, mapped, strlen(mapped) + 1);
    return 0;
}

int accounts_may_run(const char *account, struct loom_error *err)
{
    struct accounts_policy p = accounts_policy();
    uid_t uid = 0;
    int ex = exists(account, &uid);

    if (ex <= 0)
        return loom_error_set(err, LOOM_EPERM, "there is no account '%s' to "
                              "run the job as", account);
    if (uid == 0 && !p.allow_root_jobs)
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as root "
                              "(account %s): allow_root_jobs is false",
                              account);
    if (uid != 0 && (long)uid < p.min_uid)
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as account "
                              "%s: its uid %ld is below min_uid %ld (a system "
                              "account)", account, (long)uid, p.min_uid);
    return 0;
}
