/* jwtsign.h - an issuer of JSON Web Tokens for the tests and benchmarks:
 * keys made or read with OpenSSL, tokens signed, public keys as JWKs. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_TESTS_JWTSIGN_H
#define LOOM_TESTS_JWTSIGN_H

#include <openssl/evp.h>

/* A new key: "RSA" (2048 bits), "EC" (P-256) or "Ed25519". NULL on
 * failure. */
EVP_PKEY *jwts_keygen(const char *type);

/* A token "HEADER.PAYLOAD.SIGNATURE" of claims (JSON text, used as is),
 * header {"alg": alg, "typ": "JWT", "kid": kid (when not NULL)}. alg
 * RS256, ES256 or EdDSA sign with key; HS256 signs with the bytes of
 * secret (secret_len) as an HMAC key; "none" leaves the signature empty.
 * A new string, or NULL. */
char *jwts_sign(EVP_PKEY *key, const char *alg, const char *kid,
                const char *claims, const unsigned char *secret,
                size_t secret_len);

/* The public part of key as a JWK {"kty", "kid", "use": "sig", ...}; a new
 * string, or NULL. */
char *jwts_jwk(EVP_PKEY *key, const char *kid);

#endif
