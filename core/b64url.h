/* b64url.h - base64url without padding (RFC 4648 section 5), as tokens
 * use it: Loom's own and the JSON Web Tokens of outside issuers. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_B64URL_H
#define LOOM_CORE_B64URL_H

#include <stddef.h>

/* Characters that n bytes encode to (no terminator counted). */
#define B64URL_LEN(n) ((n) / 3 * 4 + ((n) % 3 ? (n) % 3 + 1 : 0))

/* Encode n bytes into out (size bytes, terminated). Returns the length or
 * -1 when out is too small. Thread-safe. */
int b64url_encode(const unsigned char *in, size_t n, char *out, size_t size);

/* Decode n characters into out (size bytes). Strict: no padding, no other
 * characters, and unused low bits of the last character must be zero, so
 * every byte string has exactly one encoding. Returns the number of bytes
 * or -1 (also when out is too small). Thread-safe. */
long b64url_decode(const char *in, size_t n, unsigned char *out,
                   size_t size);

#endif
