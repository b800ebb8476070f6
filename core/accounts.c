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

#include "core/limits.h"
#include "core/strv.h"

#define LINE_MAX_ 4096
#define RULES_MAX 10000

/* The kinds of identity a line may map (a certificate's DN joins them):
 * a Loom subject, a grid token's "ISSUER,SUBJECT", one of its groups as
 * "ISSUER,GROUP". */
enum { M_LOOM, M_SCITOKENS, M_GROUP };
static const char *const methods[] = {"LOOM", "SCITOKENS", "GROUP", NULL};
#define METHOD_NAMES "LOOM, SCITOKENS, GROUP"

struct rule {
    int method;      /* index in methods */
    char *literal;   /* or NULL: re */
    regex_t re;
    char *account;   /* may hold \1..\9 */
    struct strv clusters; /* cluster=: only for jobs on these (none: all) */
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
        strv_fini(&a->rules[i].clusters);
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

/* The option of a line's fourth field: cluster=NAME[,NAME...]. */
static int parse_option(const char *file, int line, const char *opt,
                        struct rule *r, struct loom_error *err)
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

/* One line's fields into r. */
static int parse_rule(const char *file, int line, char *text, struct rule *r,
                      struct loom_error *err)
{
    char *f[5] = {0}, *p = text;
    int n = 0, g, rc;

    /* fields split by blanks */
    while (n < 5) {
        p += strspn(p, " \t");
        if (!*p)
            break;
        f[n++] = p;
        p += strcspn(p, " \t");
        if (*p)
            *p++ = '\0';
    }
    if (n != 3 && n != 4)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: expected METHOD "
                              "IDENTITY ACCOUNT [cluster=NAME,...], got %d "
                              "field%s", file, line, n == 5 ? 5 : n,
                              n == 1 ? "" : "s");
    for (r->method = 0; methods[r->method]; r->method++)
        if (!strcmp(methods[r->method], f[0]))
            break;
    if (!methods[r->method])
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: unknown method '%s' "
                              "(known: " METHOD_NAMES ")", file, line, f[0]);
    if ((r->method == M_SCITOKENS || r->method == M_GROUP) &&
        f[1][0] != '/' && !strchr(f[1], ','))
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: a %s identity is "
                              "ISSUER,%s (or a /regular expression/), not "
                              "'%s'", file, line, f[0],
                              r->method == M_GROUP ? "GROUP" : "SUBJECT",
                              f[1]);
    if (n == 4 && parse_option(file, line, f[3], r, err) < 0)
        return -1;
    g = max_group(f[2]);
    if (g < 0)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: account '%s': a "
                              "backslash must be followed by a group "
                              "number 1 to 9", file, line, f[2]);
    r->line = line;
    if (f[1][0] == '/' && strlen(f[1]) >= 2 && f[1][strlen(f[1]) - 1] == '/') {
        char pat[LINE_MAX_ + 4];
        snprintf(pat, sizeof(pat), "^(%.*s)$", (int)strlen(f[1]) - 2,
                 f[1] + 1);
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
        if (parse_rule(a->path, line, p, &a->rules[a->n], err) < 0) {
            strv_fini(&a->rules[a->n].clusters);
            return -1;
        }
        a->n++;
    }
    if (ferror(fp))
        return loom_error_set(err, LOOM_EINVAL, "cannot read %s: %s",
                              a->path, strerror(errno));
    return 0;
}

struct accounts *accounts_read(const char *path,
                               const struct accounts_policy *pol,
                               struct loom_error *err)
{
    struct accounts *a = calloc(1, sizeof(*a));
    FILE *fp;

    if (!a || (path && !(a->path = strdup(path)))) {
        free(a);
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    a->pol = pol ? *pol : default_policy;
    if (!path)
        return a;
    if (!(fp = fopen(path, "re"))) {
        loom_error_set(err, LOOM_EINVAL, "accounts_file %s: %s", path,
                       strerror(errno));
        accounts_destroy(a);
        return NULL;
    }
    if (read_file(a, fp, err) < 0) {
        fclose(fp);
        accounts_destroy(a);
        return NULL;
    }
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

/* The identities who has for a line of method meth: into id (size
 * bytes) the k-th of them; 0 when there is no k-th. */
static int identity_of(const struct accounts_who *who, int meth, size_t k,
                       char *id, size_t size)
{
    switch (meth) {
    case M_LOOM:
        if (!who->subject || k)
            return 0;
        snprintf(id, size, "%s", who->subject);
        return 1;
    case M_SCITOKENS:
        if (!who->iss || !who->sub || k)
            return 0;
        snprintf(id, size, "%s,%s", who->iss, who->sub);
        return 1;
    case M_GROUP:
        if (!who->iss || k >= who->n_groups)
            return 0;
        snprintf(id, size, "%s,%s", who->iss, who->groups[k]);
        return 1;
    default: /* a method of one identity, named by who */
        if (!who->method || strcmp(who->method, methods[meth]) != 0 || k)
            return 0;
        snprintf(id, size, "%s", who->identity);
        return 1;
    }
}

/* Does rule r match who? 1 with its account expanded into out (and, for
 * a GROUP line, the group into group), 0, or -1 when the account is too
 * long. */
static int rule_match(const struct rule *r, const struct accounts_who *who,
                      char *out, size_t size, char *group, size_t gsize)
{
    char id[LOOM_GRID_IDENTITY_MAX + 2];
    regmatch_t m[11];

    for (size_t k = 0; identity_of(who, r->method, k, id, sizeof(id)); k++) {
        if (r->literal ? strcmp(r->literal, id) != 0
                       : regexec(&r->re, id, 11, m, 0) != 0)
            continue;
        if (r->literal ? (size_t)snprintf(out, size, "%s", r->account) >= size
                       : expand(r->account, id, m, out, size) < 0)
            return -1;
        if (r->method == M_GROUP)
            snprintf(group, gsize, "%s", who->groups[k]);
        return 1;
    }
    return 0;
}

/* The lines of a that map who, into out (zeroed first): 0, or -1 when an
 * account is too long. */
static int map_rules(const struct accounts *a, const struct accounts_who *who,
                     struct accounts_map *out)
{
    char acc[LOOM_ACCOUNT_MAX + 1], grp[sizeof(out->group)] = "";
    size_t keep = 0;

    memset(out, 0, sizeof(*out));
    for (size_t i = 0; a && i < a->n; i++) {
        const struct rule *r = &a->rules[i];
        int rc = rule_match(r, who, acc, sizeof(acc), grp, sizeof(grp));
        if (rc < 0)
            return -1;
        if (!rc)
            continue;
        if (!out->line) { /* the first line that matches */
            out->line = r->line;
            snprintf(out->group, sizeof(out->group), "%s", grp);
        }
        if (!r->clusters.n) { /* every other cluster: done */
            snprintf(out->account, sizeof(out->account), "%s", acc);
            break;
        }
        for (size_t c = 0; c < r->clusters.n; c++) {
            size_t k;
            for (k = 0; k < out->n_clusters &&
                        strcmp(out->clusters[k].cluster, r->clusters.v[c]);
                 k++)
                ;
            if (k < out->n_clusters ||
                out->n_clusters == LOOM_ACCOUNT_CLUSTERS_MAX)
                continue; /* an earlier line said it */
            snprintf(out->clusters[k].cluster,
                     sizeof(out->clusters[k].cluster), "%s", r->clusters.v[c]);
            snprintf(out->clusters[k].account,
                     sizeof(out->clusters[k].account), "%s", acc);
            out->n_clusters++;
        }
    }
    /* a cluster whose account is the one of every cluster is no exception */
    for (size_t k = 0; k < out->n_clusters; k++)
        if (strcmp(out->clusters[k].account, out->account) != 0)
            out->clusters[keep++] = out->clusters[k];
    out->n_clusters = keep;
    return 0;
}

const char *accounts_on(const struct accounts_map *m, const char *cluster)
{
    for (size_t k = 0; cluster && k < m->n_clusters; k++)
        if (!strcmp(m->clusters[k].cluster, cluster))
            return m->clusters[k].account;
    return m->account[0] ? m->account : NULL;
}

/* The identity of who, for messages. */
static void who_text(const struct accounts_who *who, char *buf, size_t size)
{
    if (who->subject)
        snprintf(buf, size, "%s", who->subject);
    else if (who->iss)
        snprintf(buf, size, "%s,%s", who->iss, who->sub ? who->sub : "");
    else
        snprintf(buf, size, "%s", who->identity ? who->identity : "");
}

int accounts_map_who(const struct accounts_who *who, struct accounts_map *out,
                     struct loom_error *err)
{
    char file[1024], id[LOOM_GRID_IDENTITY_MAX + 2];
    int rc, ex;

    who_text(who, id, sizeof(id));
    pthread_rwlock_rdlock(&A.lock);
    rc = map_rules(A.cur, who, out);
    snprintf(file, sizeof(file), "%s", A.cur && A.cur->path ? A.cur->path
                                                            : "");
    pthread_rwlock_unlock(&A.lock);
    if (rc < 0)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to an "
                              "account name longer than %d characters (%s)",
                              id, LOOM_ACCOUNT_MAX, file);
    if (!out->line && who->subject) /* the subject is the account, if any */
        snprintf(out->account, sizeof(out->account), "%.*s",
                 LOOM_ACCOUNT_MAX, who->subject);
    if (!out->line && !who->subject)
        return loom_error_set(err, LOOM_EPERM, "identity '%s'%s maps to no "
                              "local account (%s%s%s)", id,
                              who->n_groups ? " and its groups" : "",
                              *file ? "no line of " : "no accounts_file is "
                                                      "configured",
                              file, *file ? " matches" : "");
    if (!out->account[0]) /* only cluster= lines: the clusters' accounts */
        return 0;
    ex = exists(out->account, NULL);
    if (ex < 0)
        return loom_error_set(err, LOOM_EUNAVAIL, "identity '%s': cannot "
                              "look up account %s: %s", id, out->account,
                              strerror(errno));
    if (!ex && out->line)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to "
                              "account '%s' (%s:%d), which does not exist",
                              id, out->account, file, out->line);
    if (!ex)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to no "
                              "local account (%s%s%s and there is no account "
                              "%s)", id, *file ? "no line of " : "",
                              *file ? file : "no accounts_file is "
                                             "configured",
                              *file ? " matches" : "", id);
    return 0;
}

int accounts_map(const char *method, const char *identity, char *account,
                 size_t size, struct loom_error *err)
{
    struct accounts_who who = {0};
    struct accounts_map m;
    int meth;

    for (meth = 0; methods[meth] && strcmp(methods[meth], method); meth++)
        ;
    if (!methods[meth] || meth == M_SCITOKENS || meth == M_GROUP)
        return loom_error_set(err, LOOM_EINTERNAL, "identity method '%s' is "
                              "not mapped by accounts_map", method);
    if (meth == M_LOOM) {
        who.subject = identity;
    } else {
        who.method = method;
        who.identity = identity;
    }
    if (accounts_map_who(&who, &m, err) < 0)
        return -1;
    if (!m.account[0])
        return loom_error_set(err, LOOM_EPERM, "identity '%s' has accounts "
                              "only on the clusters of cluster= lines (line "
                              "%d of the accounts file)", identity, m.line);
    if (strlen(m.account) >= size)
        return loom_error_set(err, LOOM_EINTERNAL, "account name too long");
    memcpy(account, m.account, strlen(m.account) + 1);
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
