/* jwk.c - an issuer's public keys: a JWKS document (RFC 7517) or one PEM
 * key, as OpenSSL keys. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>

#include "core/b64url.h"
#include "grid/jwt.h"

#define JWKS_KEYS_MAX 64
#define RSA_MIN_BITS 2048
#define FIELD_MAX 1024 /* decoded bytes of n (RSA up to 8192 bits) */

struct grid_keyset *keyset_ref(struct grid_keyset *ks)
{
    atomic_fetch_add(&ks->refs, 1);
    return ks;
}

void keyset_unref(struct grid_keyset *ks)
{
    if (!ks || atomic_fetch_sub(&ks->refs, 1) != 1)
        return;
    for (size_t i = 0; i < ks->n; i++)
        EVP_PKEY_free(ks->keys[i].pkey);
    free(ks->keys);
    free(ks);
}

const struct grid_key *keyset_find(const struct grid_keyset *ks,
                                   const char *kid)
{
    for (size_t i = 0; ks && i < ks->n; i++)
        if (!ks->keys[i].kid[0] || (kid && !strcmp(ks->keys[i].kid, kid)))
            return &ks->keys[i];
    /* a token that names no key: the one key, when there is one */
    return ks && !kid && ks->n == 1 ? &ks->keys[0] : NULL;
}

static struct grid_keyset *keyset_new(size_t cap)
{
    struct grid_keyset *ks = calloc(1, sizeof(*ks));

    if (ks && !(ks->keys = calloc(cap ? cap : 1, sizeof(*ks->keys)))) {
        free(ks);
        return NULL;
    }
    if (ks)
        atomic_init(&ks->refs, 1);
    return ks;
}

/* A base64url member of a JWK into buf; its length, or -1. */
static long field(json_t *jwk, const char *name, unsigned char *buf,
                  size_t size)
{
    const char *s = json_string_value(json_object_get(jwk, name));

    return s ? b64url_decode(s, strlen(s), buf, size) : -1;
}

static int str_is(json_t *o, const char *k, const char *want)
{
    const char *v = json_string_value(json_object_get(o, k));

    return v && !strcmp(v, want);
}

/* Is k an EC key on P-256? */
static int on_p256(EVP_PKEY *k)
{
    char name[64];

    return EVP_PKEY_get_utf8_string_param(k, OSSL_PKEY_PARAM_GROUP_NAME,
                                          name, sizeof(name), NULL) == 1 &&
           !strcmp(name, "prime256v1");
}

static EVP_PKEY *from_params(const char *type, OSSL_PARAM_BLD *b)
{
    OSSL_PARAM *p = b ? OSSL_PARAM_BLD_to_param(b) : NULL;
    EVP_PKEY_CTX *ctx = p ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL)
                          : NULL;
    EVP_PKEY *k = NULL;

    if (!ctx || EVP_PKEY_fromdata_init(ctx) != 1 ||
        EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, p) != 1)
        k = NULL;
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(p);
    return k;
}

static EVP_PKEY *rsa_key(json_t *jwk, const char **why)
{
    unsigned char n[FIELD_MAX], e[16];
    long nl = field(jwk, "n", n, sizeof(n)), el = field(jwk, "e", e,
                                                        sizeof(e));
    OSSL_PARAM_BLD *b = OSSL_PARAM_BLD_new();
    BIGNUM *bn = NULL, *be = NULL;
    EVP_PKEY *k = NULL;

    *why = "its n or e is not base64url";
    if (nl > 0 && el > 0 && b && (bn = BN_bin2bn(n, (int)nl, NULL)) &&
        (be = BN_bin2bn(e, (int)el, NULL)) &&
        OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, bn) &&
        OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, be))
        k = from_params("RSA", b);
    if (k && EVP_PKEY_get_bits(k) < RSA_MIN_BITS) {
        *why = "an RSA key under 2048 bits";
        EVP_PKEY_free(k);
        k = NULL;
    }
    BN_free(bn);
    BN_free(be);
    OSSL_PARAM_BLD_free(b);
    return k;
}

/* A P-256 point, checked to be on the curve. */
static EVP_PKEY *ec_key(json_t *jwk, const char **why)
{
    unsigned char pt[65], x[40], y[40];
    OSSL_PARAM_BLD *b;
    EVP_PKEY_CTX *chk;
    EVP_PKEY *k = NULL;

    *why = "an EC key that is not on curve P-256 (x and y of 32 bytes)";
    if (!str_is(jwk, "crv", "P-256") ||
        field(jwk, "x", x, sizeof(x)) != 32 ||
        field(jwk, "y", y, sizeof(y)) != 32)
        return NULL;
    pt[0] = 0x04;
    memcpy(pt + 1, x, 32);
    memcpy(pt + 33, y, 32);
    b = OSSL_PARAM_BLD_new();
    if (b && OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
                                             "prime256v1", 0) &&
        OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY, pt,
                                         sizeof(pt)))
        k = from_params("EC", b);
    OSSL_PARAM_BLD_free(b);
    chk = k ? EVP_PKEY_CTX_new_from_pkey(NULL, k, NULL) : NULL;
    if (k && (!chk || EVP_PKEY_public_check(chk) != 1)) {
        EVP_PKEY_free(k);
        k = NULL;
    }
    EVP_PKEY_CTX_free(chk);
    return k;
}

static EVP_PKEY *ed_key(json_t *jwk, const char **why)
{
    unsigned char x[40];

    *why = "an OKP key that is not Ed25519 (x of 32 bytes)";
    if (!str_is(jwk, "crv", "Ed25519") || field(jwk, "x", x, sizeof(x)) != 32)
        return NULL;
    return EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, x, 32);
}

/* One JWK into k: 1, 0 when it is skipped (another type, use or
 * algorithm), -1 when it is broken (why says how). */
static int one_key(json_t *jwk, struct grid_key *k, const char **why)
{
    const char *kty = json_string_value(json_object_get(jwk, "kty"));
    const char *kid = json_string_value(json_object_get(jwk, "kid"));
    const char *use = json_string_value(json_object_get(jwk, "use"));
    const char *alg = json_string_value(json_object_get(jwk, "alg"));

    if (!json_is_object(jwk) || !kty) {
        *why = "a key without kty";
        return -1;
    }
    if (!kid || !*kid || strlen(kid) > JWT_KID_MAX) {
        *why = "a key without a kid of 1 to 128 characters";
        return -1;
    }
    if (use && strcmp(use, "sig") != 0)
        return 0;
    if (!strcmp(kty, "RSA"))
        k->alg = JWT_RS256;
    else if (!strcmp(kty, "EC"))
        k->alg = JWT_ES256;
    else if (!strcmp(kty, "OKP"))
        k->alg = JWT_EDDSA;
    else
        return 0;
    if (alg && strcmp(alg, jwt_alg_name(k->alg)) != 0)
        return 0; /* RS384, ES512, ...: not taken */
    k->pkey = k->alg == JWT_RS256 ? rsa_key(jwk, why)
              : k->alg == JWT_ES256 ? ec_key(jwk, why) : ed_key(jwk, why);
    ERR_clear_error();
    if (!k->pkey)
        return -1;
    snprintf(k->kid, sizeof(k->kid), "%s", kid);
    return 1;
}

struct grid_keyset *keyset_from_jwks(const char *text, size_t len,
                                     const char *what, size_t *skipped,
                                     struct loom_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    json_t *keys = json_object_get(doc, "keys"), *jwk;
    struct grid_keyset *ks = NULL;
    const char *why = "";
    size_t i, skip = 0;

    if (!doc || !json_is_array(keys)) {
        loom_error_set(err, LOOM_EINVAL, "%s is not a JWKS document (an "
                       "object with a \"keys\" array)%s%s", what,
                       doc ? "" : ": ", doc ? "" : je.text);
        goto out;
    }
    if (json_array_size(keys) > JWKS_KEYS_MAX) {
        loom_error_set(err, LOOM_EINVAL, "%s has more than %d keys", what,
                       JWKS_KEYS_MAX);
        goto out;
    }
    if (!(ks = keyset_new(json_array_size(keys)))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto out;
    }
    json_array_foreach(keys, i, jwk) {
        struct grid_key *k = &ks->keys[ks->n];
        int rc = one_key(jwk, k, &why);
        if (rc < 0) {
            loom_error_set(err, LOOM_EINVAL, "%s: key %zu: %s", what, i + 1,
                           why);
            keyset_unref(ks);
            ks = NULL;
            goto out;
        }
        if (rc == 0 || keyset_find(ks, k->kid)) { /* a kid once */
            EVP_PKEY_free(k->pkey);
            memset(k, 0, sizeof(*k));
            skip++;
            continue;
        }
        ks->n++;
    }
    if (!ks->n) {
        loom_error_set(err, LOOM_EINVAL, "%s holds no key Loom can use (RSA "
                       "for RS256, EC P-256 for ES256, Ed25519 for EdDSA, "
                       "with use \"sig\")", what);
        keyset_unref(ks);
        ks = NULL;
    }
out:
    if (skipped)
        *skipped = skip;
    json_decref(doc);
    return ks;
}

struct grid_keyset *keyset_from_pem(const char *path, struct loom_error *err)
{
    FILE *f = fopen(path, "re");
    struct grid_keyset *ks;
    EVP_PKEY *k;
    int type;

    if (!f) {
        loom_error_set(err, LOOM_EINVAL, "pem_file %s: %s", path,
                       strerror(errno));
        return NULL;
    }
    k = PEM_read_PUBKEY(f, NULL, NULL, NULL);
    fclose(f);
    ERR_clear_error();
    if (!k) {
        loom_error_set(err, LOOM_EINVAL, "pem_file %s holds no public key "
                       "(-----BEGIN PUBLIC KEY-----)", path);
        return NULL;
    }
    type = EVP_PKEY_get_base_id(k);
    if ((type == EVP_PKEY_RSA && EVP_PKEY_get_bits(k) < RSA_MIN_BITS) ||
        (type == EVP_PKEY_EC && !on_p256(k)) ||
        (type != EVP_PKEY_RSA && type != EVP_PKEY_EC &&
         type != EVP_PKEY_ED25519)) {
        EVP_PKEY_free(k);
        loom_error_set(err, LOOM_EINVAL, "pem_file %s: the key must be RSA "
                       "of 2048 bits or more, EC P-256 or Ed25519", path);
        return NULL;
    }
    if (!(ks = keyset_new(1))) {
        EVP_PKEY_free(k);
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    ks->keys[0].pkey = k;
    ks->keys[0].alg = type == EVP_PKEY_RSA ? JWT_RS256
                      : type == EVP_PKEY_EC ? JWT_ES256 : JWT_EDDSA;
    ks->n = 1;
    return ks;
}
