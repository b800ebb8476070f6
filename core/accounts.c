/* accounts.c - identities mapped to local accounts: the installed
 * accounts file, its lookups, and the [loomd] rules on the accounts jobs
 * run as. The file itself is read by accounts_file.c. */
/* SPDX-License-Identifier: MIT */
#include "core/accounts.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/accounts_priv.h"
#include "core/limits.h"

static struct {
    pthread_rwlock_t lock;
    struct accounts *cur;
    unsigned gen;
} A = {PTHREAD_RWLOCK_INITIALIZER, NULL, 0};

const struct accounts_policy accounts_default_policy = {
    1000, 0, 1, LOOM_TOKEN_TTL_DEFAULT_MAX};

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
    p = A.cur ? A.cur->pol : accounts_default_policy;
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

int accounts_name_ok(const char *s)
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

    if (!accounts_name_ok(name))
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
    case ACCOUNTS_M_LOOM:
        if (!who->subject || k)
            return 0;
        snprintf(id, size, "%s", who->subject);
        return 1;
    case ACCOUNTS_M_SCITOKENS:
        if (!who->iss || !who->sub || k)
            return 0;
        snprintf(id, size, "%s,%s", who->iss, who->sub);
        return 1;
    case ACCOUNTS_M_GROUP:
        if (!who->iss || k >= who->n_groups)
            return 0;
        snprintf(id, size, "%s,%s", who->iss, who->groups[k]);
        return 1;
    default: /* a method of one identity, named by who */
        if (!who->method || k ||
            strcmp(who->method, accounts_methods[meth].name) != 0)
            return 0;
        snprintf(id, size, "%s", who->identity);
        return 1;
    }
}

/* Does rule r match who? 1 with its account expanded into out (and, for
 * a GROUP line, the group into group), 0, or -1 when the account is too
 * long. */
static int rule_match(const struct accounts_rule *r,
                      const struct accounts_who *who, char *out, size_t size,
                      char *group, size_t gsize)
{
    char id[LOOM_IDENTITY_MAX + 2];
    regmatch_t m[11];

    for (size_t k = 0; identity_of(who, r->method, k, id, sizeof(id)); k++) {
        if (r->literal ? strcmp(r->literal, id) != 0
                       : regexec(&r->re, id, 11, m, 0) != 0)
            continue;
        if (r->literal ? (size_t)snprintf(out, size, "%s", r->account) >= size
                       : expand(r->account, id, m, out, size) < 0)
            return -1;
        if (r->method == ACCOUNTS_M_GROUP)
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
        const struct accounts_rule *r = &a->rules[i];
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

/* The method of who's one identity (LOOM for a subject), or -1 for a
 * grid identity (SCITOKENS and GROUP) or an unknown method. */
static int method_of(const struct accounts_who *who)
{
    if (who->subject)
        return ACCOUNTS_M_LOOM;
    return who->method ? accounts_method_find(who->method) : -1;
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
    char file[1024], id[LOOM_IDENTITY_MAX + 2], lines[32] = "line";
    int rc, ex, meth = method_of(who);
    int self = meth >= 0 && accounts_methods[meth].self;

    who_text(who, id, sizeof(id));
    if (meth >= 0 && meth != ACCOUNTS_M_LOOM) /* "no DN line of" */
        snprintf(lines, sizeof(lines), "%s line",
                 accounts_methods[meth].name);
    pthread_rwlock_rdlock(&A.lock);
    rc = map_rules(A.cur, who, out);
    snprintf(file, sizeof(file), "%s", A.cur && A.cur->path ? A.cur->path
                                                            : "");
    pthread_rwlock_unlock(&A.lock);
    if (rc < 0)
        return loom_error_set(err, LOOM_EPERM, "identity '%s' maps to an "
                              "account name longer than %d characters (%s)",
                              id, LOOM_ACCOUNT_MAX, file);
    if (!out->line && !self)
        return *file ? loom_error_set(err, LOOM_EPERM, "identity '%s'%s "
                                      "maps to no local account (no %s of "
                                      "%s matches)", id,
                                      who->n_groups ? " and its groups" : "",
                                      lines, file)
                     : loom_error_set(err, LOOM_EPERM, "identity '%s'%s "
                                      "maps to no local account (no "
                                      "accounts_file is configured)", id,
                                      who->n_groups ? " and its groups" : "");
    /* the identity itself is the account, if there is one of its name (a
     * name too long for an account is none) */
    if (!out->line && strlen(id) <= LOOM_ACCOUNT_MAX)
        snprintf(out->account, sizeof(out->account), "%s", id);
    if (out->line && !out->account[0]) /* only cluster= lines: theirs */
        return 0;
    ex = out->account[0] ? exists(out->account, NULL) : 0;
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
    int meth = accounts_method_find(method);

    if (meth < 0 || meth == ACCOUNTS_M_SCITOKENS || meth == ACCOUNTS_M_GROUP)
        return loom_error_set(err, LOOM_EINTERNAL, "identity method '%s' is "
                              "not mapped by accounts_map", method);
    if (meth == ACCOUNTS_M_LOOM) {
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
    /* its key, its database and its clusters are loomd's alone */
    if (uid != 0 && uid == geteuid())
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as account "
                              "%s: it is loomd's own", account);
    if (uid != 0 && (long)uid < p.min_uid)
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as account "
                              "%s: its uid %ld is below min_uid %ld (a system "
                              "account)", account, (long)uid, p.min_uid);
    return 0;
}

int accounts_may_run_on(const char *account, const char *cluster,
                        struct loom_error *err)
{
    struct passwd pw, *me = NULL;
    char buf[4096];

    if (!strcmp(account, "root"))
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as root "
                              "(account root on cluster %s)", cluster);
    if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &me) == 0 && me &&
        !strcmp(account, me->pw_name))
        return loom_error_set(err, LOOM_EPERM, "jobs may not run as account "
                              "%s on cluster %s: it is loomd's own", account,
                              cluster);
    return 0;
}
