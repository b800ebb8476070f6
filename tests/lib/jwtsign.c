/* jwtsign.c - an issuer of JSON Web Tokens for the tests: written apart
 * from grid/, so that the two check each other. */
/* SPDX-License-Identifier: MIT */
#include "tests/lib/jwtsign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/hmac.h>

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* base64url without padding, appended at out (large enough). */
static char *enc(const unsigned char *in, size_t n, char *out)
{
    size_t i;

    for (i = 0; i + 2 < n; i += 3) {
        unsigned long v = (unsigned long)in[i] << 16 | in[i + 1] << 8 |
                          in[i + 2];
        *out++ = b64[v >> 18 & 63];
        *out++ = b64[v >> 12 & 63];
        *out++ = b64[v >> 6 & 63];
        *out++ = b64[v & 63];
    }
    if (n - i == 1) {
        *out++ = b64[in[i] >> 2];
        *out++ = b64[(in[i] & 3) << 4];
    } else if (n - i == 2) {
        *out++ = b64[in[i] >> 2];
        *out++ = b64[((in[i] & 3) << 4) | in[i + 1] >> 4];
        *out++ = b64[(in[i + 1] & 15) << 2];
    }
    *out = '\0';
    return out;
}

EVP_PKEY *jwts_keygen(const char *type)
{
    if (!strcmp(type, "RSA"))
        return EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
    if (!strcmp(type, "EC"))
        return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!strcmp(type, "Ed25519"))
        return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
    return NULL;
}

/* An ES256 signature: DER from OpenSSL into r || s. */
static int der_to_raw(const unsigned char *der, size_t n, unsigned char *raw)
{
    ECDSA_SIG *s = d2i_ECDSA_SIG(NULL, &der, (long)n);
    const BIGNUM *r, *ss;

    if (!s)
        return -1;
    ECDSA_SIG_get0(s, &r, &ss);
    BN_bn2binpad(r, raw, 32);
    BN_bn2binpad(ss, raw + 32, 32);
    ECDSA_SIG_free(s);
    return 64;
}

static long sign(EVP_PKEY *key, const char *alg, const char *msg,
                 unsigned char *sig, const unsigned char *secret,
                 size_t secret_len)
{
    EVP_MD_CTX *ctx;
    unsigned char der[1024];
    size_t n = sizeof(der);
    unsigned int hn = 0;
    int ed = !strcmp(alg, "EdDSA"), es = !strcmp(alg, "ES256");

    if (!strcmp(alg, "none"))
        return 0;
    if (!strcmp(alg, "HS256"))
        return HMAC(EVP_sha256(), secret, (int)secret_len,
                    (const unsigned char *)msg, strlen(msg), sig, &hn)
                   ? (long)hn : -1;
    if (!(ctx = EVP_MD_CTX_new()))
        return -1;
    if (EVP_DigestSignInit(ctx, NULL, ed ? NULL : EVP_sha256(), NULL,
                           key) != 1 ||
        EVP_DigestSign(ctx, der, &n, (const unsigned char *)msg,
                       strlen(msg)) != 1) {
        EVP_MD_CTX_free(ctx);
        return -1;
    }
    EVP_MD_CTX_free(ctx);
    if (es)
        return der_to_raw(der, n, sig);
    memcpy(sig, der, n);
    return (long)n;
}

char *jwts_sign(EVP_PKEY *key, const char *alg, const char *kid,
                const char *claims, const unsigned char *secret,
                size_t secret_len)
{
    char header[256];
    unsigned char sig[1024];
    size_t cl = strlen(claims), hl;
    char *tok, *p;
    long sl;

    if (kid)
        snprintf(header, sizeof(header),
                 "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", alg, kid);
    else
        snprintf(header, sizeof(header), "{\"alg\":\"%s\",\"typ\":\"JWT\"}",
                 alg);
    hl = strlen(header);
    if (!(tok = malloc((hl + cl) * 2 + 2048)))
        return NULL;
    p = enc((const unsigned char *)header, hl, tok);
    *p++ = '.';
    p = enc((const unsigned char *)claims, cl, p);
    sl = sign(key, alg, tok, sig, secret, secret_len);
    if (sl < 0) {
        free(tok);
        return NULL;
    }
    *p++ = '.';
    enc(sig, (size_t)sl, p);
    return tok;
}

/* A BIGNUM parameter of key, base64url. */
static int bn_param(EVP_PKEY *key, const char *name, char *out, size_t pad)
{
    BIGNUM *bn = NULL;
    unsigned char buf[1024];
    int n;

    if (!EVP_PKEY_get_bn_param(key, name, &bn))
        return -1;
    n = pad ? BN_bn2binpad(bn, buf, (int)pad) : BN_bn2bin(bn, buf);
    BN_free(bn);
    if (n < 0)
        return -1;
    enc(buf, (size_t)n, out);
    return 0;
}

char *jwts_jwk(EVP_PKEY *key, const char *kid)
{
    char a[1500], b[1500], *out = malloc(4096);
    int type = EVP_PKEY_get_base_id(key);

    if (!out)
        return NULL;
    if (type == EVP_PKEY_RSA && !bn_param(key, OSSL_PKEY_PARAM_RSA_N, a, 0) &&
        !bn_param(key, OSSL_PKEY_PARAM_RSA_E, b, 0)) {
        snprintf(out, 4096, "{\"kty\":\"RSA\",\"kid\":\"%s\",\"use\":\"sig\","
                 "\"alg\":\"RS256\",\"n\":\"%s\",\"e\":\"%s\"}", kid, a, b);
        return out;
    }
    if (type == EVP_PKEY_EC &&
        !bn_param(key, OSSL_PKEY_PARAM_EC_PUB_X, a, 32) &&
        !bn_param(key, OSSL_PKEY_PARAM_EC_PUB_Y, b, 32)) {
        snprintf(out, 4096, "{\"kty\":\"EC\",\"kid\":\"%s\",\"use\":\"sig\","
                 "\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"}", kid, a, b);
        return out;
    }
    if (type == EVP_PKEY_ED25519) {
        unsigned char raw[32];
        size_t n = sizeof(raw);
        if (EVP_PKEY_get_raw_public_key(key, raw, &n) == 1) {
            enc(raw, n, a);
            snprintf(out, 4096, "{\"kty\":\"OKP\",\"kid\":\"%s\","
                     "\"use\":\"sig\",\"crv\":\"Ed25519\",\"x\":\"%s\"}",
                     kid, a);
            return out;
        }
    }
    free(out);
    return NULL;
}
