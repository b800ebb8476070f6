/* jwt.c - a JSON Web Token taken apart, and its signature checked with
 * OpenSSL's EVP interface. */
/* SPDX-License-Identifier: MIT */
#include "grid/jwt.h"

#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>

#include "core/b64url.h"

#define PART_MAX 12288 /* decoded bytes of a header or payload */

const char *jwt_alg_name(enum jwt_alg a)
{
    switch (a) {
    case JWT_RS256: return "RS256";
    case JWT_ES256: return "ES256";
    case JWT_EDDSA: return "EdDSA";
    default: return "none";
    }
}

void jwt_fini(struct jwt *j)
{
    if (!j)
        return;
    json_decref(j->header);
    json_decref(j->claims);
    j->header = j->claims = NULL;
}

/* One base64url part holding a JSON object. */
static json_t *part_json(const char *p, size_t n, const char *what,
                         struct loom_error *err)
{
    unsigned char buf[PART_MAX];
    json_error_t je;
    json_t *v;
    long len = b64url_decode(p, n, buf, sizeof(buf));

    if (len < 0) {
        loom_error_set(err, LOOM_EAUTH, "malformed token: its %s is not "
                       "base64url (without padding) of at most %d bytes",
                       what, PART_MAX);
        return NULL;
    }
    v = json_loadb((const char *)buf, (size_t)len,
                   JSON_REJECT_DUPLICATES, &je);
    if (!v || !json_is_object(v)) {
        json_decref(v);
        loom_error_set(err, LOOM_EAUTH, "malformed token: its %s is not a "
                       "JSON object%s%s", what, v ? "" : ": ",
                       v ? "" : je.text);
        return NULL;
    }
    return v;
}

static const char *str_member(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* The header's algorithm: refused ones name why. */
static int alg_of(const char *a, enum jwt_alg *out, struct loom_error *err)
{
    if (!a)
        return loom_error_set(err, LOOM_EAUTH, "malformed token: its header "
                              "has no alg");
    if (!strcmp(a, "RS256"))
        *out = JWT_RS256;
    else if (!strcmp(a, "ES256"))
        *out = JWT_ES256;
    else if (!strcmp(a, "EdDSA"))
        *out = JWT_EDDSA;
    else if (!strcasecmp(a, "none"))
        return loom_error_set(err, LOOM_EAUTH, "token refused: alg '%.20s': "
                              "an unsigned token is never taken", a);
    else if (!strncmp(a, "HS", 2))
        return loom_error_set(err, LOOM_EAUTH, "token refused: alg '%.20s' "
                              "is a shared-secret MAC; an issuer's token must "
                              "be signed with its private key (RS256, ES256 "
                              "or EdDSA)", a);
    else
        return loom_error_set(err, LOOM_EAUTH, "token refused: alg '%.20s' "
                              "is not taken (RS256, ES256 or EdDSA)", a);
    return 0;
}

int jwt_parse(const char *token, struct jwt *j, struct loom_error *err)
{
    const char *d1, *d2, *s;
    size_t len;
    long n;

    memset(j, 0, sizeof(*j));
    len = strnlen(token, JWT_MAX + 1);
    if (len > JWT_MAX)
        return loom_error_set(err, LOOM_EAUTH, "malformed token: longer "
                              "than %d bytes", JWT_MAX);
    d1 = memchr(token, '.', len);
    d2 = d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - token)) : NULL;
    if (!d1 || !d2 || memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - token)))
        return loom_error_set(err, LOOM_EAUTH, "malformed token: expected "
                              "'loom1.PAYLOAD.SIGNATURE' (Loom's own) or "
                              "'HEADER.PAYLOAD.SIGNATURE' (a JSON Web Token "
                              "of an outside issuer)");
    if (!(j->header = part_json(token, (size_t)(d1 - token), "header", err)))
        return -1;
    if (!(j->claims = part_json(d1 + 1, (size_t)(d2 - d1 - 1), "payload",
                                err)))
        return -1;
    j->iss = str_member(j->claims, "iss");
    j->sub = str_member(j->claims, "sub");
    j->kid = str_member(j->header, "kid");
    if (alg_of(str_member(j->header, "alg"), &j->alg, err) < 0)
        return -1;
    if (json_object_get(j->header, "crit"))
        return loom_error_set(err, LOOM_EAUTH, "token refused: its header "
                              "has 'crit' extensions, which Loom does not "
                              "know");
    if (json_object_get(j->header, "kid") && !j->kid)
        return loom_error_set(err, LOOM_EAUTH, "malformed token: its kid is "
                              "not a string");
    s = d2 + 1;
    n = b64url_decode(s, len - (size_t)(s - token), j->sig, sizeof(j->sig));
    if (n <= 0)
        return loom_error_set(err, LOOM_EAUTH, "malformed token: its "
                              "signature is not base64url of 1 to %d bytes",
                              JWT_SIG_MAX);
    j->sig_len = (size_t)n;
    j->signed_part = token;
    j->signed_len = (size_t)(d2 - token);
    return 0;
}

/* What the key's type signs. */
static enum jwt_alg key_alg(EVP_PKEY *k)
{
    switch (EVP_PKEY_get_base_id(k)) {
    case EVP_PKEY_RSA: return JWT_RS256;
    case EVP_PKEY_EC: return JWT_ES256;
    case EVP_PKEY_ED25519: return JWT_EDDSA;
    default: return JWT_ALG_NONE;
    }
}

/* JWS's ES256 signature is r || s, 32 bytes each; OpenSSL wants DER. */
static int es256_der(const unsigned char *sig, size_t n, unsigned char *der,
                     size_t size)
{
    ECDSA_SIG *es = ECDSA_SIG_new();
    BIGNUM *r = BN_bin2bn(sig, 32, NULL), *s = BN_bin2bn(sig + 32, 32, NULL);
    unsigned char *p = der;
    int len = -1;

    if (n != 64 || !es || !r || !s || !ECDSA_SIG_set0(es, r, s)) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(es);
        return -1;
    }
    if (i2d_ECDSA_SIG(es, NULL) <= (int)size)
        len = i2d_ECDSA_SIG(es, &p);
    ECDSA_SIG_free(es);
    return len;
}

int jwt_verify_sig(const struct jwt *j, const struct grid_key *key,
                   struct loom_error *err)
{
    EVP_MD_CTX *ctx;
    const unsigned char *sig = j->sig;
    unsigned char der[80];
    size_t sig_len = j->sig_len;
    int rc = 0, len;

    if (key->alg != j->alg || key_alg(key->pkey) != j->alg)
        return loom_error_set(err, LOOM_EAUTH, "token refused: it says alg "
                              "%s, but key '%s' signs %s",
                              jwt_alg_name(j->alg), key->kid,
                              jwt_alg_name(key->alg));
    if (j->alg == JWT_ES256) {
        if ((len = es256_der(j->sig, j->sig_len, der, sizeof(der))) < 0)
            return loom_error_set(err, LOOM_EAUTH, "bad token signature: an "
                                  "ES256 signature is 64 bytes, not %zu",
                                  j->sig_len);
        sig = der;
        sig_len = (size_t)len;
    } else if (j->alg == JWT_EDDSA && j->sig_len != 64) {
        return loom_error_set(err, LOOM_EAUTH, "bad token signature: an "
                              "EdDSA signature is 64 bytes, not %zu",
                              j->sig_len);
    }
    if (!(ctx = EVP_MD_CTX_new()))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (EVP_DigestVerifyInit(ctx, NULL,
                             j->alg == JWT_EDDSA ? NULL : EVP_sha256(), NULL,
                             key->pkey) != 1)
        rc = loom_error_set(err, LOOM_EAUTH, "cannot check the token's "
                            "signature (OpenSSL refused key '%s')",
                            key->kid);
    else if (EVP_DigestVerify(ctx, sig, sig_len,
                              (const unsigned char *)j->signed_part,
                              j->signed_len) != 1)
        rc = loom_error_set(err, LOOM_EAUTH, "bad token signature: the token "
                            "was altered or not signed with key '%s'",
                            key->kid);
    EVP_MD_CTX_free(ctx);
    if (rc < 0)
        ERR_clear_error(); /* the thread's queue would grow with each */
    return rc;
}
