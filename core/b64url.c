/* b64url.c - base64url without padding. */
/* SPDX-License-Identifier: MIT */
#include "core/b64url.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int b64url_encode(const unsigned char *in, size_t n, char *out, size_t size)
{
    size_t need = B64URL_LEN(n), o = 0, i;

    if (need + 1 > size)
        return -1;
    for (i = 0; i + 2 < n; i += 3) {
        unsigned long v = (unsigned long)in[i] << 16 | in[i + 1] << 8 |
                          in[i + 2];
        out[o++] = b64_alphabet[v >> 18 & 63];
        out[o++] = b64_alphabet[v >> 12 & 63];
        out[o++] = b64_alphabet[v >> 6 & 63];
        out[o++] = b64_alphabet[v & 63];
    }
    if (n - i == 1) {
        out[o++] = b64_alphabet[in[i] >> 2];
        out[o++] = b64_alphabet[(in[i] & 3) << 4];
    } else if (n - i == 2) {
        unsigned v = (unsigned)in[i] << 8 | in[i + 1];
        out[o++] = b64_alphabet[v >> 10 & 63];
        out[o++] = b64_alphabet[v >> 4 & 63];
        out[o++] = b64_alphabet[(v & 15) << 2];
    }
    out[o] = '\0';
    return (int)o;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '-')
        return 62;
    if (c == '_')
        return 63;
    return -1;
}

long b64url_decode(const char *in, size_t n, unsigned char *out, size_t size)
{
    unsigned long acc = 0;
    size_t bits = 0, o = 0;

    if (n % 4 == 1 || n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0) > size)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value(in[i]);

        if (v < 0)
            return -1;
        acc = (acc << 6 | (unsigned long)v) & 0xffffff;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    if (acc & ((1ul << bits) - 1))
        return -1;
    return (long)o;
}
