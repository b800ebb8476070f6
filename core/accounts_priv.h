/* accounts_priv.h - what accounts.c and accounts_file.c share: the table of
 * methods and a parsed accounts file. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_ACCOUNTS_PRIV_H
#define LOOM_CORE_ACCOUNTS_PRIV_H

#include <regex.h>

#include "core/accounts.h"
#include "core/strv.h"

/* The kinds of identity a line may map, indices in accounts_methods. */
enum { ACCOUNTS_M_LOOM, ACCOUNTS_M_SCITOKENS, ACCOUNTS_M_GROUP,
       ACCOUNTS_M_DN };

/* One method: its name in the file, and whether an identity of it that no
 * line maps is the account of its own name. Ends with a NULL name. */
struct accounts_method {
    const char *name;
    int self;
};
extern const struct accounts_method accounts_methods[];

/* The index of method name in accounts_methods, or -1. */
int accounts_method_find(const char *name);

/* One line of the file. */
struct accounts_rule {
    int method;           /* index in accounts_methods */
    char *literal;        /* or NULL: re */
    regex_t re;           /* the whole identity: ^( )$, so \1 is group 2 */
    char *account;        /* may hold \1..\9 */
    struct strv clusters; /* cluster=: only for jobs on these (none: all) */
    int line;
};

struct accounts {
    char *path;      /* or NULL: no file */
    struct accounts_rule *rules;
    size_t n;
    struct accounts_policy pol;
};

/* The policy without a [loomd] section's keys. */
extern const struct accounts_policy accounts_default_policy;

#endif
