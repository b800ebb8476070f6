/* fuzz_accounts.c - the accounts file (core/accounts.c): its lines,
 * quoting and regular expressions, then the mapping of an identity with
 * the map read. Input: the identity, a newline, the file. */
/* SPDX-License-Identifier: MIT */
#include "core/accounts.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t id_len = nl ? (size_t)(nl - data) : size;
    char *id = fuzz_string(data, id_len), acct[LOOM_ACCOUNT_MAX + 1];
    struct loom_error err;
    struct accounts *a;

    fuzz_quiet();
    a = accounts_parse("<fuzz>", nl ? (const char *)nl + 1 : "",
                       nl ? size - id_len - 1 : 0, NULL, &err);
    if (a) {
        accounts_install(a);
        if (accounts_map("DN", id, acct, sizeof(acct), &err) == 0 &&
            strlen(acct) > LOOM_ACCOUNT_MAX)
            abort();
        if (accounts_map("LOOM", id, acct, sizeof(acct), &err) == 0 &&
            strlen(acct) > LOOM_ACCOUNT_MAX)
            abort();
        accounts_install(NULL);
    }
    free(id);
    return 0;
}
