/* accounts.h - who a job runs as: authenticated identities mapped to local
 * Unix accounts (the accounts_file), and the [loomd] rules on accounts and
 * on who sees whose jobs. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_ACCOUNTS_H
#define LOOM_CORE_ACCOUNTS_H

#include <stddef.h>

#include "core/error.h"
#include "core/token.h"

#define LOOM_ACCOUNT_MAX 32 /* characters of a Unix account name */
#define LOOM_ACCOUNT_CLUSTERS_MAX 32 /* clusters with an account of their
                                        own, for one identity */

/*
 * The accounts file, one mapping a line (HTCondor-CE's mapfile style):
 *
 *     # METHOD  IDENTITY           ACCOUNT
 *     LOOM      alice              alice
 *     LOOM      /^ops-([a-z]+)$/   \1
 *
 *     SCITOKENS https://iam.example/,pilot-7  pilot
 *     GROUP     https://iam.example/,/atlas    atlas001  cluster=slurm-a
 *     DN        "/DC=org/DC=example/CN=Bob Smith"  bob
 *     "/DC=org/DC=example/CN=Eve Jones" eve
 *
 * METHOD says which kind of identity the line maps (the methods are a
 * table in accounts_file.c):
 *   LOOM       the subject of Loom's own tokens;
 *   SCITOKENS  a token of an outside issuer: "ISSUER,SUBJECT" (its iss and
 *              sub, as HTCondor-CE writes them);
 *   GROUP      a group of such a token: "ISSUER,GROUP" (an entry of its
 *              groups claim, wlcg.groups: "https://iam.example/,/atlas");
 *   DN         the subject of a client certificate, in OpenSSL's one-line
 *              form (/DC=org/DC=example/CN=Bob Smith).
 * IDENTITY is a literal, or /ERE/: a POSIX extended regular expression
 * matched against the whole identity, whose groups ACCOUNT may name as
 * \1..\9. Fields are separated by blanks; a field may be quoted ("...",
 * with \" and \\ inside), and a quoted identity is always a literal. A
 * line that begins with a quote is a grid-mapfile's, "DN" ACCOUNT, of
 * method DN. The first line that matches wins (a GROUP line matches when
 * one of the token's groups does, the first in the token's order). A LOOM
 * identity that no line matches maps to the account of its own name, when
 * there is one; an identity of another method that no line matches maps
 * to none.
 *
 * A last field, cluster=NAME[,NAME...], makes a line hold only for jobs
 * on those clusters, where accounts differ between clusters: an identity's
 * account on cluster C is the first line that matches it and names C or no
 * cluster; its account elsewhere, the first that matches and names none.
 * An account of a cluster= line is that cluster's: it is not looked up on
 * this machine.
 */

/* What an identity maps to. */
struct accounts_map {
    char account[LOOM_ACCOUNT_MAX + 1]; /* on every cluster without a line
                                           of its own; "" when only
                                           cluster= lines map it */
    size_t n_clusters; /* clusters where it differs from account */
    struct {
        char cluster[64];
        char account[LOOM_ACCOUNT_MAX + 1];
    } clusters[LOOM_ACCOUNT_CLUSTERS_MAX];
    char group[256]; /* the group a GROUP line mapped, or "" */
    int line;        /* the first line that mapped it (0: none, the LOOM
                        subject's own account) */
};

/* Who to map: a Loom token's subject, a grid identity, or the one
 * identity of another method. */
struct accounts_who {
    const char *subject;       /* LOOM; NULL for a grid identity */
    const char *iss, *sub;     /* SCITOKENS */
    const char *const *groups; /* GROUP, in the token's order */
    size_t n_groups;
    const char *method, *identity; /* another method's (DN) */
};

/* The rules of [loomd] on accounts and on who sees what. */
struct accounts_policy {
    long min_uid;        /* accounts below it run no job (default 1000) */
    int allow_root_jobs; /* uid 0 may run jobs (default 0) */
    int private_data;    /* users and gateways see only their own jobs and
                            reservations (default 1) */
    long max_token_ttl_s; /* a token's lifetime (exp - iat) at most
                             (default 31 days) */
};


/* A parsed accounts file and the policy, immutable once built. */
struct accounts;

/* Read the accounts file at path (NULL: none, a LOOM subject maps to the
 * account of its name and any other identity to none) with the policy.
 * Returns a new object, or NULL with err naming file:line and what is
 * wrong (an unknown METHOD or option, a line without three or four
 * fields, a quote not closed, a regular expression that does not compile
 * or is beyond bounds, a \N beyond its groups). Any thread. */
struct accounts *accounts_read(const char *path,
                               const struct accounts_policy *pol,
                               struct loom_error *err);
/* The same from text (len bytes, which may hold NUL bytes), called name
 * in messages (tests and the fuzz target). */
struct accounts *accounts_parse(const char *name, const char *text,
                                size_t len,
                                const struct accounts_policy *pol,
                                struct loom_error *err);
void accounts_destroy(struct accounts *a); /* NULL-safe */

/* Make a the map every later lookup uses (takes it); the previous one is
 * freed once no lookup uses it. Any thread. */
void accounts_install(struct accounts *a_take);
/* Free the installed map (at shutdown). */
void accounts_shutdown(void);

/* The policy in force (a copy). Any thread. */
struct accounts_policy accounts_policy(void);
/* A number that changes with every install (for callers that cache a
 * lookup). */
unsigned accounts_generation(void);

/* Map identity (of a method of one identity: "LOOM" or "DN") to a local
 * account: 0 with its name in account (size bytes), or -1 with a 403
 * saying why there is none (no line matches and, for LOOM, there is no
 * account of that name; a line maps it to an account that does not exist;
 * only cluster= lines map it). Any thread. */
int accounts_map(const char *method, const char *identity, char *account,
                 size_t size, struct loom_error *err);

/* Map who (see above) into *out: 0, or -1 with a 403 naming the identity
 * and why it has no account (no line matches and, for a LOOM subject, there
 * is no account of its name; the line's account does not exist here).
 * Any thread. */
int accounts_map_who(const struct accounts_who *who, struct accounts_map *out,
                     struct loom_error *err);
/* The account of m for a job on cluster (NULL: not placed yet), or NULL
 * when m has none there. Borrowed from m. */
const char *accounts_on(const struct accounts_map *m, const char *cluster);

/* A name a Unix account may have: 1 to 32 of letters, digits, '_', '.',
 * '-', not beginning with '-'. */
int accounts_name_ok(const char *name);
/* May account run jobs under the policy? 0, or -1 with a 403 naming the
 * account and the rule (root: allow_root_jobs; loomd's own account, which
 * never may; below min_uid; no such account). Any thread. */
int accounts_may_run(const char *account, struct loom_error *err);
/* May a cluster= line's account (an account of that cluster, which this
 * machine may not know) run jobs on cluster? Not root, and not the name of
 * loomd's own account (on a cluster run beside loomd, such as Slurm with
 * loom as its SlurmUser, it is loomd). 0, or -1 with a 403. Any thread. */
int accounts_may_run_on(const char *account, const char *cluster,
                        struct loom_error *err);

#endif
