/* jwt_sign.c - the tests' own token issuer, on the command line:
 *
 *   jwt_sign sign KEY.pem ALG KID CLAIMS   print a token (KID "-": none;
 *                                          ALG HS256: KEY.pem's bytes are
 *                                          the HMAC secret; none: unsigned)
 *   jwt_sign jwk KEY.pem KID               print the public key as a JWK
 *
 * KEY.pem is a private key as `openssl genpkey` writes it; CLAIMS is the
 * JSON payload, used as is. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/pem.h>

#include "tests/lib/jwtsign.h"

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = malloc(65536);

    *n = f && buf ? fread(buf, 1, 65536, f) : 0;
    if (f)
        fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    EVP_PKEY *key = NULL;
    char *out = NULL;
    FILE *f;

    if (argc < 4 || (strcmp(argv[1], "sign") && strcmp(argv[1], "jwk")) ||
        (!strcmp(argv[1], "sign") && argc != 6)) {
        fprintf(stderr, "usage: jwt_sign sign KEY.pem ALG KID CLAIMS | "
                        "jwt_sign jwk KEY.pem KID\n");
        return 2;
    }
    if (!strcmp(argv[1], "sign") && !strcmp(argv[3], "HS256")) {
        size_t n;
        unsigned char *secret = slurp(argv[2], &n);
        out = jwts_sign(NULL, "HS256", strcmp(argv[4], "-") ? argv[4] : NULL,
                        argv[5], secret, n);
        free(secret);
    } else {
        if (!(f = fopen(argv[2], "r")) ||
            !(key = PEM_read_PrivateKey(f, NULL, NULL, NULL))) {
            fprintf(stderr, "jwt_sign: no private key in %s\n", argv[2]);
            return 1;
        }
        fclose(f);
        out = !strcmp(argv[1], "jwk")
                  ? jwts_jwk(key, argv[3])
                  : jwts_sign(key, argv[3],
                              strcmp(argv[4], "-") ? argv[4] : NULL, argv[5],
                              NULL, 0);
    }
    if (!out) {
        fprintf(stderr, "jwt_sign: failed\n");
        return 1;
    }
    printf("%s\n", out);
    free(out);
    EVP_PKEY_free(key);
    return 0;
}
