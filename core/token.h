/* token.h - HMAC-SHA256 signed bearer tokens and their key file. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_TOKEN_H
#define LOOM_CORE_TOKEN_H

#include <stddef.h>
#include <time.h>

#include "core/error.h"

/*
 * A token is
 *     "loom1." base64url(payload) "." base64url(HMAC-SHA256(key, signed))
 * where signed is everything before the second '.', base64url has no
 * padding, and payload is compact JSON:
 *     {"sub":"alice","roles":["user"],"iat":1700000000,"exp":1700003600}
 * The key is the content of the key file (binary, at least 32 bytes).
 */

/* Roles, one bit each. */
#define LOOM_ROLE_ADMIN 0x01u
#define LOOM_ROLE_OPERATOR 0x02u
#define LOOM_ROLE_USER 0x04u
#define LOOM_ROLE_GATEWAY 0x08u
#define LOOM_ROLE_SCHEDULER 0x10u
#define LOOM_ROLE_MONITOR 0x20u
#define LOOM_ROLE_READER 0x40u
#define LOOM_ROLE_ALL 0x7fu

#define LOOM_TOKEN_MAX 4096          /* longer tokens are refused unread */
#define LOOM_TOKEN_KEY_MIN 32        /* bytes of key material, at least */
#define LOOM_TOKEN_KEY_MAX 4096      /* a longer key file is refused */
#define LOOM_TOKEN_SUBJECT_MAX 128   /* characters of a subject */
#define LOOM_TOKEN_TTL_MAX 315576000L /* 10 years of 365.25 days, in s */
#define LOOM_TOKEN_SKEW_S 60 /* a token issued (or valid from) this far
                                ahead of the server's clock is still taken:
                                clocks differ a little */
#define LOOM_TOKEN_TTL_DEFAULT_MAX (31L * 86400) /* loomd's default
                                   max_token_ttl_s: longer lifetimes are
                                   refused */

#define LOOM_IDENTITY_MAX 511 /* characters of an identity as a request
                                 carries it: a Loom subject, a grid
                                 token's "ISSUER,SUBJECT", or a client
                                 certificate's DN */

struct token_claims {
    char subject[LOOM_IDENTITY_MAX + 1]; /* a Loom token's: at most
                                            LOOM_TOKEN_SUBJECT_MAX */
    unsigned roles; /* LOOM_ROLE_* bits, never 0 in a verified token */
    time_t issued;
    time_t expires;
};

/* The role bit named name ("admin", "operator", "user", "gateway",
 * "scheduler", "monitor", "reader"), or 0 for an unknown name or NULL.
 * Thread-safe. */
unsigned token_role_parse(const char *name);

/* The name of one role bit, or NULL when bit is not exactly one known
 * role. Returns a static string. Thread-safe. */
const char *token_role_name(unsigned bit);

/* Write the names of the roles in roles, comma-separated in bit order
 * ("admin,user"), into buf of size bytes (always terminated). Returns the
 * length written, or -1 when it did not fit. Thread-safe. */
int token_roles_format(unsigned roles, char *buf, size_t size);

/* Whether subject is acceptable in a token: 1 to 128 printable ASCII
 * characters (space included), without '"', '\'' or '\\', not beginning
 * with "https://" (grid identities, ISSUER,SUBJECT, do: the two never
 * meet). Returns 1 or 0. Thread-safe. */
int token_subject_valid(const char *subject);

/* Read the key file at path into a new buffer: *key (free it with
 * token_key_free) and its length *len. With create=1 a missing file is
 * created with 32 bytes from RAND_bytes and mode 0600 (O_CREAT|O_EXCL, so
 * a racing creator is not overwritten). Refuses, with LOOM_EINVAL and a
 * message naming path, a file that is not a regular file, that group or
 * others may read or write, that is shorter than 32 or longer than 4096
 * bytes, or that cannot be read. On error *key is NULL and nothing was
 * left behind (a half-written new file is removed). Thread-safe. */
int token_key_load(const char *path, int create, unsigned char **key,
                   size_t *len, struct loom_error *err);

/* Wipe len bytes of key with OPENSSL_cleanse and free it. NULL-safe. */
void token_key_free(unsigned char *key, size_t len);

/* Sign a new token for subject with roles (non-zero, known bits only),
 * issued at now and expiring ttl_s seconds later (1 s to 10 years).
 * Returns a new string (the caller frees it; it is a credential, so wipe
 * it with OPENSSL_cleanse first where that matters) or NULL with err
 * (LOOM_EINVAL for a bad subject, roles or ttl; LOOM_EINTERNAL when
 * OpenSSL or malloc fails). key is borrowed. Thread-safe. */
char *token_create(const unsigned char *key, size_t keylen,
                   const char *subject, unsigned roles, long ttl_s,
                   time_t now, struct loom_error *err);

/* Check token against key at time now and fill *out (may be NULL) with its
 * claims. Returns 0, or -1 with err kind LOOM_EAUTH and one sentence:
 * malformed, bad signature, expired or unknown role. A token longer than
 * LOOM_TOKEN_MAX bytes is refused before any work; the signature is
 * compared in constant time and checked before the payload is parsed.
 * Does not allocate (besides what HMAC() does inside OpenSSL); a few
 * microseconds. On error *out is zeroed. Thread-safe. */
int token_verify(const unsigned char *key, size_t keylen, const char *token,
                 time_t now, struct token_claims *out,
                 struct loom_error *err);

#endif
