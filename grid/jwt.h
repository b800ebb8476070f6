/* jwt.h - JSON Web Tokens (RFC 7519) signed by outside issuers: taking
 * one apart and checking its signature; the keys that sign them. Private
 * to grid/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_GRID_JWT_H
#define LOOM_GRID_JWT_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>

#include <openssl/evp.h>

#include "core/error.h"

#define JWT_MAX 16384   /* bytes of a token; longer ones are refused */
#define JWT_SIG_MAX 1024 /* bytes of a signature (RSA up to 8192 bits) */
#define JWT_KID_MAX 128  /* characters of a key id */

/* The signature algorithms taken (RFC 7518): RSASSA-PKCS1-v1_5 with
 * SHA-256, ECDSA on P-256 with SHA-256, Ed25519. Never "none", never an
 * HMAC: an issuer signs with a private key, a relying party holds only
 * public ones. */
enum jwt_alg { JWT_ALG_NONE = 0, JWT_RS256, JWT_ES256, JWT_EDDSA };
const char *jwt_alg_name(enum jwt_alg a);

/* A token taken apart; nothing in it is verified yet. */
struct jwt {
    json_t *header;  /* owned */
    json_t *claims;  /* owned */
    enum jwt_alg alg;
    const char *kid; /* the header's, or NULL (borrowed from header) */
    const char *iss, *sub; /* as claimed, or NULL (borrowed from claims) */
    const char *signed_part; /* "HEADER.PAYLOAD" in the token (borrowed) */
    size_t signed_len;
    unsigned char sig[JWT_SIG_MAX];
    size_t sig_len;
};

/* Take token apart into j (zeroed first; finish it with jwt_fini even on
 * error). -1 with a 401 naming what is wrong: not three base64url parts,
 * a header or payload that is not a JSON object (duplicate members
 * included), an algorithm that is refused ("none", HS256, ...) or
 * unknown, a "crit" header. iss and sub are filled when the payload
 * could be read, also on the errors after it (for the audit of a denial:
 * they are unverified). Thread-safe. */
int jwt_parse(const char *token, struct jwt *j, struct loom_error *err);
void jwt_fini(struct jwt *j);

/* One public key of an issuer. */
struct grid_key {
    char kid[JWT_KID_MAX + 1]; /* "" for the key of a pem_file: it signs
                                  whatever kid a token names */
    enum jwt_alg alg;          /* what the key's type signs */
    EVP_PKEY *pkey;
};

/* An issuer's keys, immutable once built, shared by reference. */
struct grid_keyset {
    atomic_int refs;
    size_t n;
    struct grid_key *keys;
};

/* The keys of a JWKS document (RFC 7517) in text (len bytes); what names
 * its source in messages. Keys of other types or uses, or for other
 * algorithms, are skipped (*skipped counts them; may be NULL); RSA keys
 * under 2048 bits are refused. NULL with a 400 naming what when it is not
 * a JWKS or holds no usable key. Thread-safe. */
struct grid_keyset *keyset_from_jwks(const char *text, size_t len,
                                     const char *what, size_t *skipped,
                                     struct loom_error *err);
/* The one public key of a PEM file (SubjectPublicKeyInfo). */
struct grid_keyset *keyset_from_pem(const char *path, struct loom_error *err);
struct grid_keyset *keyset_ref(struct grid_keyset *ks);
void keyset_unref(struct grid_keyset *ks); /* NULL-safe */
/* The key for kid (NULL: the token named none) or NULL. Borrowed. */
const struct grid_key *keyset_find(const struct grid_keyset *ks,
                                   const char *kid);

/* Does j's signature verify with key? 0, or -1 with a 401: the key's type
 * does not sign j's algorithm, or the signature is wrong. Thread-safe
 * (keys are only read). */
int jwt_verify_sig(const struct jwt *j, const struct grid_key *key,
                   struct loom_error *err);

#endif
