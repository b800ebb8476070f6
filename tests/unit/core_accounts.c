/* core_accounts.c - the accounts file: LOOM, SCITOKENS, GROUP and DN lines,
 * quoted identities, grid-mapfile lines, the first match, cluster= lines,
 * and what each maps or refuses. Maps to accounts every system has
 * (nobody, daemon, bin, root). */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/accounts.h"
#include "tests/lib/tap.h"

#define ISS "https://iam.example.org/atlas"

static char path[] = "/tmp/loom-accounts-XXXXXX";

/* Install the accounts file of text; 0, or -1 with err. */
static int install(const char *text, struct loom_error *err)
{
    struct accounts *a;
    FILE *f = fopen(path, "w");

    if (!f || fputs(text, f) == EOF || fclose(f) != 0)
        return loom_error_set(err, LOOM_EINTERNAL, "cannot write %s", path);
    loom_error_clear(err);
    if (!(a = accounts_read(path, NULL, err)))
        return -1;
    accounts_install(a);
    return 0;
}

/* What method and identity map to: the account, or "!" and the error. */
static const char *map(const char *method, const char *id)
{
    static char out[600];
    struct loom_error err;
    char acct[LOOM_ACCOUNT_MAX + 1];

    if (accounts_map(method, id, acct, sizeof(acct), &err) < 0)
        snprintf(out, sizeof(out), "!%s", err.message);
    else
        snprintf(out, sizeof(out), "%s", acct);
    return out;
}

static int map_grid(const char *sub, const char *const *groups, size_t n,
                    struct accounts_map *m, struct loom_error *err)
{
    struct accounts_who w = {.iss = ISS, .sub = sub, .groups = groups,
                             .n_groups = n};

    return accounts_map_who(&w, m, err);
}

static void t_grid(void)
{
    static const char *const atlas[] = {"/atlas"};
    static const char *const two[] = {"/cms", "/atlas/prod"};
    static const char *const none[] = {"/lhcb"};
    struct loom_error err;
    struct accounts_map m;
    struct accounts_who w = {.subject = "alice"};

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
                               "account (no line of "),
       "no line matches: %s", err.message);
    is_str(map("SCITOKENS", ISS ",pilot-1"), "!identity method 'SCITOKENS' "
           "is not mapped by accounts_map", "accounts_map takes no grid "
           "identity (it has groups): accounts_map_who does");
}

static void t_dn(void)
{
    struct loom_error err;
    struct accounts_map m;
    struct accounts_who w = {.method = "DN"};
    char want[600];

    ok(install("# DNs hold blanks: quoted\n"
               "DN \"/DC=org/DC=example/CN=Bob Smith\" nobody\n"
               "\"/DC=org/DC=example/CN=Eve \\\"Q\\\" Jones\"\troot\n"
               "DN /\\/DC=org\\/DC=ops\\/CN=.*/ daemon\n"
               "LOOM \"alice smith\" nobody\n"
               "DN \"/CN=/x/\" root\n"
               "\"/DC=org/CN=Carol\" bin cluster=slurm-a\n"
               "DN \"/DC=org/CN=Carol\" daemon\n"
               "DN \"/DC=org/CN=Dan\" dpool cluster=ge-b\n", &err) == 0,
       "DN lines, grid-mapfile lines, a quoted LOOM identity: taken (%s)",
       err.message);
    is_str(map("DN", "/DC=org/DC=example/CN=Bob Smith"), "nobody",
           "a quoted DN maps to its account");
    is_str(map("DN", "/DC=org/DC=example/CN=Eve \"Q\" Jones"), "root",
           "a grid-mapfile line, \\\" inside the quotes: a quote");
    is_str(map("DN", "/DC=org/DC=ops/CN=Anyone"), "daemon",
           "an unquoted /ERE/ over a DN");
    is_str(map("DN", "/CN=/x/"), "root",
           "a quoted identity is a literal even when it looks like /ERE/");
    snprintf(want, sizeof(want), "!identity '/DC=org/DC=example/CN=Bob' maps "
             "to no local account (no DN line of %s matches)", path);
    is_str(map("DN", "/DC=org/DC=example/CN=Bob"), want,
           "a DN no line maps: no account, naming the DN and the file");
    ok(!strncmp(map("DN", "nobody"), "!identity 'nobody' maps to no local "
                "account (no DN line of ", 49),
       "a DN is never an account itself, even one named like an account");
    is_str(map("LOOM", "alice smith"), "nobody",
           "a quoted LOOM identity with a blank");
    is_str(map("LOOM", "nobody"), "nobody",
           "a LOOM subject no line maps: the account of its own name");
    snprintf(want, sizeof(want), "!identity 'nobodynobodynobodynobodynobody"
             "nobody' maps to no local account (no line of %s matches and "
             "there is no account nobodynobodynobodynobodynobodynobody)",
             path);
    is_str(map("LOOM", "nobodynobodynobodynobodynobodynobody"), want,
           "a subject longer than an account name is no account, not one "
           "cut short");

    /* a grid-mapfile line takes cluster= as any other */
    w.identity = "/DC=org/CN=Carol";
    is_int(accounts_map_who(&w, &m, &err), 0, "a DN with a cluster= "
           "grid-mapfile line (%s)", err.message);
    is_str(accounts_on(&m, "slurm-a"), "bin", "... slurm-a: bin");
    is_str(accounts_on(&m, "ge-b"), "daemon", "... elsewhere: daemon");
    is_str(map("DN", "/DC=org/CN=Carol"), "daemon",
           "accounts_map: the account of every other cluster");
    w.identity = "/DC=org/CN=Dan";
    is_int(accounts_map_who(&w, &m, &err), 0, "a DN only a cluster= line "
           "maps (%s)", err.message);
    is_str(accounts_on(&m, "ge-b"), "dpool", "... ge-b: dpool (not looked "
           "up here)");
    ok(accounts_on(&m, NULL) == NULL, "... none elsewhere");
    ok(strstr(map("DN", "/DC=org/CN=Dan"), "!identity '/DC=org/CN=Dan' "
              "has accounts only on the clusters of cluster= lines") != NULL,
       "accounts_map: no account of every cluster, said so");
}

static void t_bounded_regex(void)
{
    struct loom_error err;

    ok(install("LOOM /^(ops|adm)-([a-z]{1,16})[0-9]*$/ \\2\n"
               "DN /\\/DC=org\\/CN=[^/]+([[:blank:]][A-Z][a-z]+){0,3}/ nobody\n"
               "LOOM /a{3,}b{,4}c{2,5}[{]x/ nobody\n", &err) == 0,
       "regular expressions of everyday size and bounds: taken (%s)",
       err.message);
    is_str(map("LOOM", "adm-nobody"), "nobody", "... and they match");
    is_str(map("DN", "/DC=org/CN=Bob Smith Jones"), "nobody",
           "... a bounded repetition of a group too");
}

static void t_refused(void)
{
    static const struct {
        const char *text, *msg;
    } bad[] = {
        {"DN \"/CN=Bob nobody\n", ":1: a quote is not closed"},
        {"DN \"/CN=Bob\"x nobody\n", ":1: a blank must follow a closing quote"},
        {"DN \"/CN=Bob\" a,b\n", ":1: account 'a,b': a list of accounts is "
                                 "not taken; give one"},
        {"\"/CN=Bob\" nobody extra\n", ":1: unknown option 'extra' (known: "
                                       "cluster=NAME[,NAME...])"},
        {"\"/CN=Bob\" nobody cluster=a extra\n",
         ":1: expected METHOD IDENTITY ACCOUNT [cluster=NAME,...] (or \"DN\" "
         "ACCOUNT), got 4 fields"},
        {"\"/CN=Bob\"\n", ":1: expected METHOD IDENTITY ACCOUNT "
                          "[cluster=NAME,...] (or \"DN\" ACCOUNT), got 1 "
                          "field"},
        {"X509 \"/CN=Bob\" nobody\n", ":1: unknown method 'X509' (known: LOOM, "
                                      "SCITOKENS, GROUP, DN)"},
        {"DNS a nobody\n", ":1: unknown method 'DNS' (known: LOOM, SCITOKENS, "
                           "GROUP, DN)"},
        {"\n# c\nDN \"/CN=Bob\"\n", ":3: expected METHOD IDENTITY ACCOUNT "
                                    "[cluster=NAME,...], got 2 fields"},
        {"LOOM a nobody cluster=x extra\n", ":1: expected METHOD IDENTITY "
                                            "ACCOUNT [cluster=NAME,...], got "
                                            "5 fields"},
        {"DN \"/CN=(x)\" \\1\n", ":1: account '\\1' names a group, but "
                                 "'/CN=(x)' is not a regular expression"},
        {"SCITOKENS nocomma nobody\n", ":1: a SCITOKENS identity is "
                                       "ISSUER,SUBJECT"},
        {"GROUP \"/atlas/\" nobody\n", ":1: a GROUP identity is ISSUER,GROUP "
                                       "(or a /regular expression/), not "
                                       "'/atlas/'"},
        {"GROUP a,/x nobody clusters=a\n", ":1: unknown option 'clusters=a' "
                                           "(known: cluster=NAME[,NAME...])"},
        {"GROUP a,/x nobody cluster=a,,b\n", "a cluster name is 1 to 63 "
                                             "characters"},
        /* what would take glibc's regcomp unbounded memory or regexec
         * unbounded time */
        {"LOOM /^o++++++++++++++++++++++++++++++ps$/ x\n",
         ":1: regular expression /^o+++++++++++++++++++++++++++++"
         "+ps$/: a repetition follows a repetition"},
        {"LOOM /((((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+)+)+/ x\n",
         "/: it is too complex"},
        {"LOOM /((a{200}){200})/ x\n", "/: it is too complex"},
        {"LOOM /a{256}/ x\n", "/a{256}/: a bound above 255"},
        {"LOOM /a{2}{3}/ x\n", ": a repetition follows a repetition"},
        {"LOOM /(a*)*\\1/ x\n", ": back-references (\\1 to \\9) are not "
                                  "taken"},
        {"GROUP /(a|b)*\\1/ x cluster=c\n", ": back-references (\\1 to \\9) "
                                            "are not taken"},
    };
    struct loom_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ok(install(bad[i].text, &err) < 0 && strstr(err.message, bad[i].msg),
           "refused: %s", bad[i].msg);
        if (!strstr(err.message, bad[i].msg))
            printf("#   got: %s\n", err.message);
    }
}

/* accounts_parse: the same parser over text in memory, NUL bytes and
 * all. */
static void t_parse(void)
{
    static const char text[] = "DN \"/CN=A\" nobody cluster=x\n"
                               "\"/CN=B\" daemon\n";
    struct loom_error err;
    struct accounts *a;

    a = accounts_parse("mem", text, sizeof(text) - 1, NULL, &err);
    ok(a != NULL, "accounts_parse takes what accounts_read takes");
    accounts_destroy(a);
    a = accounts_parse("mem", "LOOM a\0b nobody\n", 16, NULL, &err);
    ok(!a && !strcmp(err.message, "mem:1: a NUL byte in the line"),
       "a NUL byte in a line is refused: %s", a ? "taken" : err.message);
    accounts_destroy(a);
    a = accounts_parse("mem", "LOOM a nobody\nLOOM b\0", 21, NULL, &err);
    ok(!a && !strcmp(err.message, "mem:2: a NUL byte in the line"),
       "... the last line's too: %s", a ? "taken" : err.message);
    accounts_destroy(a);
    a = accounts_parse("mem", "", 0, NULL, &err);
    ok(a != NULL, "an empty text is an empty map");
    accounts_destroy(a);
}

int main(void)
{
    int fd = mkstemp(path);

    if (fd < 0)
        return 1;
    close(fd);
    t_grid();
    t_dn();
    t_bounded_regex();
    t_refused();
    t_parse();
    accounts_shutdown();
    unlink(path);
    return done_testing();
}
