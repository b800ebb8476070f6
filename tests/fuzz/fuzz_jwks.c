/* fuzz_jwks.c - an issuer's JWKS document (grid/jwk.c), as a jwks_file or
 * a jwks_url serves it: the keys read, then each asked to verify a token
 * of its own algorithm (grid/jwt.c), which none of them signed. */
/* SPDX-License-Identifier: MIT */
#include "grid/jwt.h"
#include "tests/fuzz/fuzz.h"

/* {"alg":X,"typ":"JWT"}.{"sub":"x"}.AAAA: a signature no key made. */
static const char *const tokens[] = {
    [JWT_RS256] = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.AAAA",
    [JWT_ES256] = "eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.AAAA",
    [JWT_EDDSA] = "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ4In0.AAAA",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct loom_error err;
    struct grid_keyset *ks;
    size_t skipped = 0;

    fuzz_quiet();
    ks = keyset_from_jwks((const char *)data, size, "<fuzz>", &skipped,
                          &err);
    if (!ks)
        return 0;
    if (!ks->n) /* a key set holds a key */
        abort();
    for (size_t i = 0; i < ks->n; i++) {
        const struct grid_key *k = &ks->keys[i];
        struct jwt j;
        if (!k->pkey || k->alg < JWT_RS256 || k->alg > JWT_EDDSA ||
            keyset_find(ks, k->kid) != &ks->keys[i])
            abort(); /* each key usable, its kid once */
        if (jwt_parse(tokens[k->alg], &j, &err) < 0)
            abort();
        if (jwt_verify_sig(&j, k, &err) == 0)
            abort(); /* no key verifies a signature it did not make */
        jwt_fini(&j);
    }
    keyset_unref(ks);
    return 0;
}
