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

/*
 * The accounts file, one mapping a line (HTCondor-CE's mapfile style):
 *
 *     # METHOD  IDENTITY           ACCOUNT
 *     LOOM      alice              alice
 *     LOOM      /^ops-([a-z]+)$/   \1
 *
 *     DN        "/DC=org/DC=example/CN=Bob Smith"  bob
 *     "/DC=org/DC=example/CN=Eve Jones" eve
 *
 * METHOD says which kind of identity the line maps (LOOM: the subject of
 * Loom's own tokens; DN: the subject of a client certificate, in
 * OpenSSL's one-line form; the methods are a table in accounts.c).
 * IDENTITY is a literal, or /ERE/: a POSIX extended regular expression
 * matched against the whole identity, whose groups ACCOUNT may name as
 * \1..\9. Fields are separated by blanks; a field may be quoted ("...",
 * with \" and \\ inside), and a quoted identity is always a literal. A
 * line that begins with a quote is a grid-mapfile's, "DN" ACCOUNT, of
 * method DN. The first line that matches wins. A LOOM identity that no
 * line matches maps to the account of its own name, when there is one; a
 * DN that no line matches maps to none.
 */

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

/* Read the accounts file at path (NULL: none, every identity maps to its
 * own account) with the policy. Returns a new object, or NULL with err
 * naming file:line and what is wrong (an unknown METHOD, a line without
 * three fields, a regular expression that does not compile, a \N beyond
 * its groups). Any thread. */
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

/* Map identity (of method, e.g. "LOOM") to a local account: 0 with its
 * name in account (size bytes), or -1 with a 403 saying why there is
 * none (no line matches and there is no account of that name; a line maps
 * it to an account that does not exist). Any thread. */
int accounts_map(const char *method, const char *identity, char *account,
                 size_t size, struct loom_error *err);

/* May account run jobs under the policy? 0, or -1 with a 403 naming the
 * account and the rule (root: allow_root_jobs; below min_uid; no such
 * account). Any thread. */
int accounts_may_run(const char *account, struct loom_error *err);

#endif
