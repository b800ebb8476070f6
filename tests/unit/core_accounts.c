/* core_accounts.c - the accounts file: DN lines, quoted identities,
 * grid-mapfile lines, and what each maps or refuses. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/accounts.h"
#include "tests/lib/tap.h"

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

static void t_dn(void)
{
    struct loom_error err;
    char want[600];

    ok(install("# DNs hold blanks: quoted\n"
               "DN \"/DC=org/DC=example/CN=Bob Smith\" nobody\n"
               "\"/DC=org/DC=example/CN=Eve \\\"Q\\\" Jones\"\troot\n"
               "DN /\\/DC=org\\/DC=ops\\/CN=.*/ daemon\n"
               "LOOM \"alice smith\" nobody\n"
               "DN \"/CN=/x/\" root\n", &err) == 0,
       "DN lines, a grid-mapfile line, a quoted LOOM identity: taken (%s)",
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
        {"\"/CN=Bob\" nobody extra\n", ":1: expected METHOD IDENTITY ACCOUNT "
                                       "(or \"DN\" ACCOUNT), got 3 fields"},
        {"X509 \"/CN=Bob\" nobody\n", ":1: unknown method 'X509' (known: LOOM, "
                                      "DN)"},
        {"\n# c\nDN \"/CN=Bob\"\n", ":3: expected METHOD IDENTITY ACCOUNT, got "
                                    "2 fields"},
        {"DN \"/CN=(x)\" \\1\n", ":1: account '\\1' names a group, but "
                                 "'/CN=(x)' is not a regular expression"},
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
    };
    struct loom_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        ok(install(bad[i].text, &err) < 0 && strstr(err.message, bad[i].msg),
           "refused: %s", bad[i].msg);
        if (!strstr(err.message, bad[i].msg))
            printf("#   got: %s\n", err.message);
    }
}

int main(void)
{
    int fd = mkstemp(path);

    if (fd < 0)
        return 1;
    close(fd);
    t_dn();
    t_bounded_regex();
    t_refused();
    accounts_shutdown();
    unlink(path);
    return done_testing();
}
