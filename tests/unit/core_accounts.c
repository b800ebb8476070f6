/* core_accounts.c - the accounts file: LOOM, SCITOKENS and GROUP lines,
 * the first match, cluster= lines. Maps to accounts every system has
 * (nobody, daemon, bin). */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/accounts.h"
#include "tests/lib/tap.h"

#define ISS "https://iam.example.org/atlas"

static char path[] = "/tmp/loom-accounts-XXXXXX";

static int install(const char *text, struct loom_error *err)
{
    FILE *f = fopen(path, "w");
    struct accounts *a;

    fputs(text, f);
    fclose(f);
    if (!(a = accounts_read(path, NULL, err)))
        return -1;
    accounts_install(a);
    return 0;
}

static int map_grid(const char *sub, const char *const *groups, size_t n,
                    struct accounts_map *m, struct loom_error *err)
{
    struct accounts_who w = {.iss = ISS, .sub = sub, .groups = groups,
                             .n_groups = n};

    return accounts_map_who(&w, m, err);
}

int main(void)
{
    static const char *const atlas[] = {"/atlas"};
    static const char *const two[] = {"/cms", "/atlas/prod"};
    static const char *const none[] = {"/lhcb"};
    struct loom_error err;
    struct accounts_map m;
    struct accounts_who w = {.subject = "alice"};
    int fd = mkstemp(path);

    close(fd);
    ok(install("# METHOD IDENTITY ACCOUNT [cluster=...]\n"
               "LOOM alice nobody\n"
               "SCITOKENS " ISS ",pilot-1 daemon\n"
               "SCITOKENS /^https://iam\\.example\\.org/atlas,user-([a-z]+)$/ "
               "\\1\n"
               "GROUP " ISS ",/atlas/prod bin cluster=slurm-a,ge-b\n"
               "GROUP /^" ISS ",/(atlas|cms)$/ nobody\n"
               "GROUP " ISS ",/lhcb lhcbpool cluster=slurm-a\n", &err) == 0,
       "an accounts file with grid lines reads (%s)", err.message);
    is_int(accounts_map_who(&w, &m, &err), 0, "LOOM alice");
    is_str(m.account, "nobody", "... maps to nobody");
    is_int(map_grid("pilot-1", atlas, 1, &m, &err), 0, "SCITOKENS literal");
    is_str(m.account, "daemon", "... ISS,pilot-1 maps to daemon");
    is_str(m.group, "", "... no group mapped it");
    is_int(map_grid("user-bin", NULL, 0, &m, &err), 0, "SCITOKENS regex");
    is_str(m.account, "bin", "... \\1 is the captured name");
    is_int(map_grid("u-9", atlas, 1, &m, &err), 0, "GROUP regex");
    is_str(m.account, "nobody", "... /atlas maps to nobody");
    is_str(m.group, "/atlas", "... the group that mapped");
    is_int(m.n_clusters, 0, "... on every cluster");
    is_int(map_grid("u-9", two, 2, &m, &err), 0,
           "two groups, the second of which a cluster= line names");
    is_str(m.group, "/atlas/prod", "... the first line that matched "
                                   "decides the group");
    is_str(m.account, "nobody", "... elsewhere: /cms's line");
    is_int(m.n_clusters, 2, "... two clusters of their own");
    is_str(accounts_on(&m, "slurm-a"), "bin", "... slurm-a: bin");
    is_str(accounts_on(&m, "ge-b"), "bin", "... ge-b: bin");
    is_str(accounts_on(&m, "local"), "nobody", "... local: nobody");
    is_str(accounts_on(&m, NULL), "nobody", "... not placed: nobody");
    is_int(map_grid("u-9", none, 1, &m, &err), 0,
           "a group mapped only on one cluster");
    is_str(m.account, "", "... no account elsewhere");
    ok(accounts_on(&m, "local") == NULL, "... none on local");
    is_str(accounts_on(&m, "slurm-a"), "lhcbpool",
           "... lhcbpool on slurm-a (not looked up here)");
    ok(map_grid("u-9", NULL, 0, &m, &err) < 0 && err.kind == LOOM_EPERM &&
           strstr(err.message, "identity '" ISS ",u-9' maps to no local "
                               "account"),
       "no line matches: %s", err.message);

    ok(install("SCITOKENS nocomma nobody\n", &err) < 0 &&
           strstr(err.message, ":1: a SCITOKENS identity is ISSUER,SUBJECT"),
       "a SCITOKENS identity without issuer: %s", err.message);
    ok(install("GROUP a,/x nobody clusters=a\n", &err) < 0 &&
           strstr(err.message, "unknown option 'clusters=a' (known: "
                               "cluster=NAME[,NAME...])"),
       "an unknown option: %s", err.message);
    ok(install("GROUP a,/x nobody cluster=a,,b\n", &err) < 0 &&
           strstr(err.message, "a cluster name is 1 to 63 characters"),
       "an empty cluster name: %s", err.message);
    ok(install("DNS a nobody\n", &err) < 0 &&
           strstr(err.message, "unknown method 'DNS' (known: LOOM, "
                               "SCITOKENS, GROUP)"),
       "an unknown method: %s", err.message);
    ok(install("LOOM a nobody cluster=x extra\n", &err) < 0 &&
           strstr(err.message, "got 5 fields"), "five fields: %s",
       err.message);
    accounts_shutdown();
    unlink(path);
    return done_testing();
}
