/* fuzz_token.c - Loom's bearer tokens (core/token.c): the token as sent,
 * and, so that the payload's JSON parser is reached past the signature, a
 * payload signed here with the fuzzer's key. The first byte chooses. */
/* SPDX-License-Identifier: MIT */
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/token.h"
#include "tests/fuzz/fuzz.h"

static const unsigned char key[32] = "fuzz-key-fuzz-key-fuzz-key-fuzz";

/* base64url without padding of n bytes of in, into out (4n/3+4 bytes). */
static size_t b64url(const unsigned char *in, size_t n, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                            "abcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;

    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 |
                     (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        out[o++] = a[v >> 18 & 63];
        out[o++] = a[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = a[v >> 6 & 63];
        if (i + 2 < n)
            out[o++] = a[v & 63];
    }
    out[o] = '\0';
    return o;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct token_claims claims;
    struct loom_error err;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned mac_len = 0;
    char *tok;
    size_t n;

    fuzz_quiet();
    if (size < 1 || size > LOOM_TOKEN_MAX)
        return 0;
    if (data[0] & 1) { /* as sent */
        tok = fuzz_string(data + 1, size - 1);
    } else {           /* "loom1." payload "." signature, signed here */
        tok = malloc(6 + 4 * size / 3 + 8 + 48);
        if (!tok)
            abort();
        memcpy(tok, "loom1.", 6);
        n = 6 + b64url(data + 1, size - 1, tok + 6);
        HMAC(EVP_sha256(), key, sizeof(key), (unsigned char *)tok, n, mac,
             &mac_len);
        tok[n++] = '.';
        b64url(mac, mac_len, tok + n);
    }
    if (token_verify(key, sizeof(key), tok, 1700000000, &claims, &err) == 0 &&
        (!claims.roles || strlen(claims.subject) > LOOM_TOKEN_SUBJECT_MAX))
        abort(); /* a verified token has roles and a bounded subject */
    free(tok);
    return 0;
}
