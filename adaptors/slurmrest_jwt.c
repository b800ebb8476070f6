/* slurmrest_jwt.c - HS256 tokens for slurmrestd, as scontrol token makes. */
/* SPDX-License-Identifier: MIT */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

#include "adaptors/slurmrest.h"

/* base64url without padding (RFC 7515), appended at out (room for
 * 4 * ceil(n / 3) + 1 bytes); returns its length. */
static size_t b64url(const unsigned char *in, size_t n, char *out)
{
    int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);

    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (int i = 0; i < len; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    return (size_t)len;
}

char *srest_jwt_sign(const unsigned char *key, size_t key_len,
                     const char *user, time_t iat, time_t exp)
{
    static const char header[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
    json_t *claims = json_pack("{s:I, s:I, s:s}", "exp", (json_int_t)exp,
                               "iat", (json_int_t)iat, "sun", user);
    char *payload = claims ? json_dumps(claims, JSON_COMPACT) : NULL;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    char *tok = NULL;
    size_t n, cap;

    json_decref(claims);
    if (!payload)
        return NULL;
    cap = (sizeof(header) + strlen(payload) + EVP_MAX_MD_SIZE) / 3 * 4 + 16;
    if (!(tok = malloc(cap)))
        goto out;
    n = b64url((const unsigned char *)header, sizeof(header) - 1, tok);
    tok[n++] = '.';
    n += b64url((const unsigned char *)payload, strlen(payload), tok + n);
    if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)tok, n,
              mac, &mac_len)) {
        free(tok);
        tok = NULL;
        goto out;
    }
    tok[n++] = '.';
    b64url(mac, mac_len, tok + n);
out:
    free(payload);
    return tok;
}

/* The token's middle part, decoded into a JSON object, or NULL. */
static json_t *claims_of(const char *token)
{
    const char *a = strchr(token, '.'), *b = a ? strchr(a + 1, '.') : NULL;
    size_t n = b ? (size_t)(b - a - 1) : 0, k;
    char *in = b ? malloc(n + 4) : NULL;
    unsigned char *out = in ? malloc(n + 4) : NULL;
    json_t *j = NULL;
    int len;

    if (!out)
        goto out;
    for (k = 0; k < n; k++)
        in[k] = a[1 + k] == '-' ? '+' : a[1 + k] == '_' ? '/' : a[1 + k];
    while (k % 4)
        in[k++] = '=';
    len = EVP_DecodeBlock(out, (const unsigned char *)in, (int)k);
    if (len > 0) {
        while (len > 0 && out[len - 1] == '\0') /* the padding's zeros */
            len--;
        j = json_loadb((const char *)out, (size_t)len, 0, NULL);
    }
out:
    free(in);
    free(out);
    if (j && !json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

int srest_jwt_claims(const char *token, char **user, time_t *exp,
                     struct loom_error *err)
{
    json_t *c = claims_of(token);
    const char *u = json_string_value(json_object_get(c, "sun"));

    if (!u)
        u = json_string_value(json_object_get(c, "username"));
    if (!c || !u) {
        json_decref(c);
        return loom_error_set(err, LOOM_EINVAL, "not a Slurm JSON Web Token "
                              "(no claim sun or username)");
    }
    *exp = (time_t)json_integer_value(json_object_get(c, "exp"));
    *user = strdup(u);
    json_decref(c);
    return *user ? 0 : loom_error_set(err, LOOM_EINTERNAL, "out of memory");
}
