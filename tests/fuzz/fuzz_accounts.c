/* fuzz_accounts.c - the accounts file (core/accounts_file.c): its lines,
 * quoting, options and regular expressions, then the mapping of an
 * identity with the map read (core/accounts.c), as a LOOM subject, a DN,
 * and a grid token's subject and group. Input: the identity, a newline,
 * the file. */
/* SPDX-License-Identifier: MIT */
#include "core/accounts.h"
#include "core/limits.h"
#include "tests/fuzz/fuzz.h"

static void check_map(const struct accounts_map *m)
{
    if (strlen(m->account) > LOOM_ACCOUNT_MAX ||
        m->n_clusters > LOOM_ACCOUNT_CLUSTERS_MAX)
        abort();
    for (size_t k = 0; k < m->n_clusters; k++)
        if (strlen(m->clusters[k].account) > LOOM_ACCOUNT_MAX ||
            !strcmp(m->clusters[k].account, m->account))
            abort(); /* a cluster of its own has another account */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t id_len = nl ? (size_t)(nl - data) : size;
    char *id = fuzz_string(data, id_len), acct[LOOM_ACCOUNT_MAX + 1];
    const char *groups[1] = {id};
    struct accounts_who grid = {.iss = "https://iam.example.org",
                                .sub = id, .groups = groups, .n_groups = 1};
    struct accounts_map m;
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
        /* as grid/ gives them: a sub and a group of at most 255 */
        if (strlen(id) <= LOOM_GRID_SUBJECT_MAX &&
            accounts_map_who(&grid, &m, &err) == 0)
            check_map(&m);
        accounts_install(NULL);
    }
    free(id);
    return 0;
}
