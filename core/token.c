/* token.c - signing and verifying bearer tokens; the token key file. */
/* SPDX-License-Identifier: MIT */
#include "core/token.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "core/b64url.h"
#include "core/fdread.h"

#define PREFIX "loom1."
#define PREFIX_LEN (sizeof(PREFIX) - 1)
#define MAC_LEN 32
#define MAC_B64_LEN 43        /* 32 bytes in base64url without padding */
#define PAYLOAD_MAX 1024      /* what token_create ever writes */
#define TIME_MAX 253402300799LL /* 9999-12-31T23:59:59Z */

static const char *const role_names[] = {
    "admin", "operator", "user", "gateway", "scheduler", "monitor", "reader",
};
#define N_ROLES (sizeof(role_names) / sizeof(role_names[0]))

unsigned token_role_parse(const char *name)
{
    for (size_t i = 0; name && i < N_ROLES; i++)
        if (strcmp(name, role_names[i]) == 0)
            return 1u << i;
    return 0;
}

const char *token_role_name(unsigned bit)
{
    for (size_t i = 0; i < N_ROLES; i++)
        if (bit == 1u << i)
            return role_names[i];
    return NULL;
}

int token_roles_format(unsigned roles, char *buf, size_t size)
{
    size_t len = 0;

    if (size == 0)
        return -1;
    buf[0] = '\0';
    for (size_t i = 0; i < N_ROLES; i++) {
        int n;

        if (!(roles & (1u << i)))
            continue;
        n = snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                     role_names[i]);
        if (n < 0 || (size_t)n >= size - len)
            return -1;
        len += (size_t)n;
    }
    return (int)len;
}

static int subject_char_ok(unsigned char c)
{
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '\\';
}

static int subject_valid_n(const char *s, size_t n)
{
    if (n < 1 || n > LOOM_TOKEN_SUBJECT_MAX)
        return 0;
    if (n >= 8 && !strncmp(s, "https://", 8))
        return 0; /* the form of a grid identity, ISSUER,SUBJECT */
    for (size_t i = 0; i < n; i++)
        if (!subject_char_ok((unsigned char)s[i]))
            return 0;
    return 1;
}

int token_subject_valid(const char *subject)
{
    return subject &&
           subject_valid_n(subject,
                           strnlen(subject, LOOM_TOKEN_SUBJECT_MAX + 1));
}

/* The key file -------------------------------------------------------- */

static int key_create(const char *path, struct loom_error *err)
{
    unsigned char fresh[LOOM_TOKEN_KEY_MIN];
    ssize_t n;
    int fd, rc = -1;

    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
              0600);
    if (fd < 0) {
        if (errno == EEXIST)
            return 0; /* someone else was quicker: read theirs */
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s: cannot create: %s", path,
                              strerror(errno));
    }
    if (RAND_bytes(fresh, sizeof(fresh)) != 1) {
        loom_error_set(err, LOOM_EINTERNAL,
                       "token key file %s: no random bytes from OpenSSL",
                       path);
        goto out;
    }
    n = write(fd, fresh, sizeof(fresh));
    if (n != (ssize_t)sizeof(fresh) || fsync(fd) < 0) {
        loom_error_set(err, LOOM_EINVAL, "token key file %s: cannot write: %s",
                       path, n < 0 ? strerror(errno) : "short write");
        goto out;
    }
    rc = 0;
out:
    OPENSSL_cleanse(fresh, sizeof(fresh));
    if (close(fd) < 0 && rc == 0)
        rc = loom_error_set(err, LOOM_EINVAL,
                            "token key file %s: cannot write: %s", path,
                            strerror(errno));
    if (rc < 0)
        unlink(path);
    return rc;
}

static int key_check_stat(const char *path, const struct stat *st,
                          struct loom_error *err)
{
    if (!S_ISREG(st->st_mode))
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s is not a regular file", path);
    if (st->st_mode & 077)
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s may be read or written by "
                              "group or others (mode %04o); chmod 600 it",
                              path, (unsigned)(st->st_mode & 07777));
    if (st->st_size < LOOM_TOKEN_KEY_MIN)
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s is too short: %lld bytes, "
                              "at least %d needed",
                              path, (long long)st->st_size,
                              LOOM_TOKEN_KEY_MIN);
    if (st->st_size > LOOM_TOKEN_KEY_MAX)
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s is larger than %d bytes",
                              path, LOOM_TOKEN_KEY_MAX);
    return 0;
}

static int key_read(const char *path, unsigned char **key, size_t *len,
                    struct loom_error *err)
{
    unsigned char *buf = NULL;
    struct stat st;
    ssize_t n;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return loom_error_set(err, LOOM_EINVAL,
                              "token key file %s: cannot open: %s", path,
                              strerror(errno));
    if (fstat(fd, &st) < 0) {
        loom_error_set(err, LOOM_EINVAL, "token key file %s: %s", path,
                       strerror(errno));
        goto error;
    }
    if (key_check_stat(path, &st, err) < 0)
        goto error;
    buf = malloc(LOOM_TOKEN_KEY_MAX + 1);
    if (!buf) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        goto error;
    }
    n = fd_read_all(fd, buf, LOOM_TOKEN_KEY_MAX + 1);
    if (n < 0) {
        loom_error_set(err, LOOM_EINVAL, "token key file %s: cannot read: %s",
                       path, strerror(errno));
        goto error;
    }
    if (n < LOOM_TOKEN_KEY_MIN || n > LOOM_TOKEN_KEY_MAX) {
        loom_error_set(err, LOOM_EINVAL,
                       "token key file %s changed size while being read",
                       path);
        goto error;
    }
    close(fd);
    *key = buf;
    *len = (size_t)n;
    return 0;
error:
    token_key_free(buf, LOOM_TOKEN_KEY_MAX + 1);
    close(fd);
    return -1;
}

int token_key_load(const char *path, int create, unsigned char **key,
                   size_t *len, struct loom_error *err)
{
    *key = NULL;
    *len = 0;
    if (create && access(path, F_OK) < 0 && errno == ENOENT &&
        key_create(path, err) < 0)
        return -1;
    return key_read(path, key, len, err);
}

void token_key_free(unsigned char *key, size_t len)
{
    if (!key)
        return;
    OPENSSL_cleanse(key, len);
    free(key);
}

/* Creating ------------------------------------------------------------ */

/* HMAC-SHA256 of n bytes of msg into mac[MAC_LEN]. */
static int sign(const unsigned char *key, size_t keylen, const char *msg,
                size_t n, unsigned char *mac)
{
    unsigned int maclen = 0;

    if (keylen > INT_MAX ||
        !HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg, n,
              mac, &maclen) ||
        maclen != MAC_LEN)
        return -1;
    return 0;
}

/* Append to buf at *len; -1 when it does not fit. */
static int put(char *buf, size_t size, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= size - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

static int payload_write(char *buf, size_t size, const char *subject,
                         unsigned roles, long long iat, long long exp)
{
    size_t len = 0;
    int first = 1;

    if (put(buf, size, &len, "{\"sub\":\"%s\",\"roles\":[", subject) < 0)
        return -1;
    for (size_t i = 0; i < N_ROLES; i++) {
        if (!(roles & (1u << i)))
            continue;
        if (put(buf, size, &len, "%s\"%s\"", first ? "" : ",",
                role_names[i]) < 0)
            return -1;
        first = 0;
    }
    if (put(buf, size, &len, "],\"iat\":%lld,\"exp\":%lld}", iat, exp) < 0)
        return -1;
    return (int)len;
}

static int create_check(const char *subject, unsigned roles, long ttl_s,
                        time_t now, struct loom_error *err)
{
    if (!token_subject_valid(subject))
        return loom_error_field(err, LOOM_EINVAL, "subject",
                                "a token subject must be 1 to %d printable "
                                "characters without quotes or backslashes, "
                                "not beginning with https:// (the form of "
                                "grid identities)", LOOM_TOKEN_SUBJECT_MAX);
    if (!roles || (roles & ~LOOM_ROLE_ALL))
        return loom_error_field(err, LOOM_EINVAL, "roles",
                                "a token needs at least one known role");
    if (ttl_s < 1 || ttl_s > LOOM_TOKEN_TTL_MAX)
        return loom_error_field(err, LOOM_EINVAL, "ttl",
                                "a token lifetime must be from 1 s to 10 "
                                "years (%ld s), not %ld s",
                                LOOM_TOKEN_TTL_MAX, ttl_s);
    if (now < 0 || (long long)now + ttl_s > TIME_MAX)
        return loom_error_set(err, LOOM_EINVAL,
                              "the token's expiry is out of range");
    return 0;
}

char *token_create(const unsigned char *key, size_t keylen,
                   const char *subject, unsigned roles, long ttl_s,
                   time_t now, struct loom_error *err)
{
    char payload[PAYLOAD_MAX], *tok = NULL;
    unsigned char mac[MAC_LEN];
    size_t size = 0, slen;
    int plen, blen;

    if (create_check(subject, roles, ttl_s, now, err) < 0)
        return NULL;
    plen = payload_write(payload, sizeof(payload), subject, roles,
                         (long long)now, (long long)now + ttl_s);
    if (plen >= 0)
        size = PREFIX_LEN + ((size_t)plen + 2) / 3 * 4 + 1 + MAC_B64_LEN + 1;
    if (plen < 0 || !(tok = malloc(size))) {
        loom_error_set(err, LOOM_EINTERNAL, "cannot build the token payload");
        return NULL;
    }
    memcpy(tok, PREFIX, PREFIX_LEN);
    blen = b64url_encode((unsigned char *)payload, (size_t)plen,
                         tok + PREFIX_LEN, size - PREFIX_LEN);
    slen = PREFIX_LEN + (size_t)(blen < 0 ? 0 : blen);
    if (blen < 0 || sign(key, keylen, tok, slen, mac) < 0) {
        free(tok);
        loom_error_set(err, LOOM_EINTERNAL,
                       "cannot sign the token (OpenSSL HMAC failed)");
        return NULL;
    }
    tok[slen] = '.';
    b64url_encode(mac, MAC_LEN, tok + slen + 1, size - slen - 1);
    return tok;
}

/* Verifying ----------------------------------------------------------- */

/* A reader of the compact JSON payload: an object with exactly the members
 * sub, roles, iat and exp, in any order, strings without escapes. Anything
 * else is malformed: the version in the prefix changes if this does. */
struct cursor {
    const char *p, *end;
};

struct parsed {
    const char *sub;
    size_t sub_len;
    unsigned roles;
    long long iat, exp;
    unsigned seen; /* bit per member */
    char bad_role[33];
};

static void skip_ws(struct cursor *c)
{
    while (c->p < c->end &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static int eat(struct cursor *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

static int get_string(struct cursor *c, const char **s, size_t *n)
{
    if (!eat(c, '"'))
        return -1;
    *s = c->p;
    while (c->p < c->end && *c->p != '"') {
        if ((unsigned char)*c->p < 0x20 || *c->p == '\\')
            return -1;
        c->p++;
    }
    if (c->p >= c->end)
        return -1;
    *n = (size_t)(c->p - *s);
    c->p++;
    return 0;
}

static int get_time(struct cursor *c, long long *v)
{
    long long x = 0;
    int digits = 0;

    skip_ws(c);
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        if (++digits > 12 || (digits == 2 && x == 0))
            return -1; /* too large, or a leading zero */
        x = x * 10 + (*c->p++ - '0');
    }
    if (!digits || x > TIME_MAX)
        return -1;
    *v = x;
    return 0;
}

static void note_bad_role(struct parsed *p, const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n && i < sizeof(p->bad_role) - 1; i++)
        p->bad_role[i] = subject_char_ok((unsigned char)s[i]) ? s[i] : '?';
    p->bad_role[i] = '\0';
}

/* Returns 0, -1 when malformed, -2 for an unknown role name. */
static int get_roles(struct cursor *c, struct parsed *p)
{
    if (!eat(c, '['))
        return -1;
    if (eat(c, ']'))
        return 0;
    do {
        char name[16];
        const char *s;
        size_t n;
        unsigned bit = 0;

        if (get_string(c, &s, &n) < 0)
            return -1;
        if (n < sizeof(name)) {
            memcpy(name, s, n);
            name[n] = '\0';
            bit = token_role_parse(name);
        }
        if (!bit) {
            note_bad_role(p, s, n);
            return -2;
        }
        p->roles |= bit;
    } while (eat(c, ','));
    return eat(c, ']') ? 0 : -1;
}

static int key_is(const char *k, size_t n, const char *want)
{
    return n == strlen(want) && memcmp(k, want, n) == 0;
}

static int get_member(struct cursor *c, struct parsed *p)
{
    const char *k;
    size_t n;

    if (get_string(c, &k, &n) < 0 || !eat(c, ':'))
        return -1;
    if (key_is(k, n, "sub") && !(p->seen & 1)) {
        p->seen |= 1;
        return get_string(c, &p->sub, &p->sub_len);
    }
    if (key_is(k, n, "roles") && !(p->seen & 2)) {
        p->seen |= 2;
        return get_roles(c, p);
    }
    if (key_is(k, n, "iat") && !(p->seen & 4)) {
        p->seen |= 4;
        return get_time(c, &p->iat);
    }
    if (key_is(k, n, "exp") && !(p->seen & 8)) {
        p->seen |= 8;
        return get_time(c, &p->exp);
    }
    return -1; /* unknown or repeated member */
}

static int payload_parse(const char *buf, size_t n, struct parsed *p)
{
    struct cursor c = { buf, buf + n };
    int rc;

    memset(p, 0, sizeof(*p));
    if (!eat(&c, '{'))
        return -1;
    do {
        rc = get_member(&c, p);
        if (rc < 0)
            return rc;
    } while (eat(&c, ','));
    if (!eat(&c, '}'))
        return -1;
    skip_ws(&c);
    return c.p == c.end && p->seen == 15 ? 0 : -1;
}

static int malformed(struct loom_error *err, const char *why)
{
    return loom_error_set(err, LOOM_EAUTH, "malformed token: %s", why);
}

/* Check the prefix and the signature; on success *dot is the offset of the
 * '.' before the signature. */
static int check_signature(const unsigned char *key, size_t keylen,
                           const char *token, size_t len, size_t *dot,
                           struct loom_error *err)
{
    unsigned char mac[MAC_LEN], sig[MAC_LEN];
    const char *d;

    if (len < PREFIX_LEN || memcmp(token, PREFIX, PREFIX_LEN) != 0)
        return malformed(err, "it does not start with 'loom1.'");
    d = memchr(token + PREFIX_LEN, '.', len - PREFIX_LEN);
    if (!d || d == token + PREFIX_LEN)
        return malformed(err, "expected 'loom1.PAYLOAD.SIGNATURE'");
    *dot = (size_t)(d - token);
    if (len - *dot - 1 != MAC_B64_LEN ||
        b64url_decode(d + 1, MAC_B64_LEN, sig, sizeof(sig)) != MAC_LEN)
        return malformed(err, "the signature is not 43 base64url "
                              "characters");
    if (sign(key, keylen, token, *dot, mac) < 0)
        return loom_error_set(err, LOOM_EAUTH,
                              "cannot check the token (OpenSSL HMAC "
                              "failed)");
    if (CRYPTO_memcmp(mac, sig, MAC_LEN) != 0)
        return loom_error_set(err, LOOM_EAUTH,
                              "bad token signature: the token was altered "
                              "or signed with another key");
    return 0;
}

static int check_claims(const struct parsed *p, time_t now,
                        struct loom_error *err)
{
    char when[32];
    time_t exp = (time_t)p->exp;
    struct tm tm;

    if (!subject_valid_n(p->sub, p->sub_len))
        return malformed(err, "the subject is empty, too long or has "
                              "forbidden characters");
    if (!p->roles)
        return malformed(err, "it carries no role");
    if (p->iat > p->exp)
        return malformed(err, "it expires before it was issued");
    if ((long long)now >= p->exp) {
        if (!gmtime_r(&exp, &tm) ||
            !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
            snprintf(when, sizeof(when), "%lld", p->exp);
        return loom_error_set(err, LOOM_EAUTH, "token expired at %s", when);
    }
    return 0;
}

int token_verify(const unsigned char *key, size_t keylen, const char *token,
                 time_t now, struct token_claims *out,
                 struct loom_error *err)
{
    unsigned char buf[LOOM_TOKEN_MAX];
    struct parsed p;
    size_t len, dot = 0;
    long n;
    int rc;

    if (out)
        memset(out, 0, sizeof(*out));
    if (!token)
        return malformed(err, "no token");
    len = strnlen(token, LOOM_TOKEN_MAX + 1);
    if (len > LOOM_TOKEN_MAX)
        return malformed(err, "longer than 4096 bytes");
    if (check_signature(key, keylen, token, len, &dot, err) < 0)
        return -1;
    n = b64url_decode(token + PREFIX_LEN, dot - PREFIX_LEN, buf,
                      sizeof(buf));
    if (n < 0)
        return malformed(err, "the payload is not base64url");
    rc = payload_parse((const char *)buf, (size_t)n, &p);
    if (rc == -2)
        return loom_error_set(err, LOOM_EAUTH,
                              "token names an unknown role '%s'",
                              p.bad_role);
    if (rc < 0)
        return malformed(err, "the payload is not the expected JSON");
    if (check_claims(&p, now, err) < 0)
        return -1;
    if (out) {
        memcpy(out->subject, p.sub, p.sub_len);
        out->subject[p.sub_len] = '\0';
        out->roles = p.roles;
        out->issued = (time_t)p.iat;
        out->expires = (time_t)p.exp;
    }
    return 0;
}
