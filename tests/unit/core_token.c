/* core_token.c - unit tests of signed tokens and the token key file. */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/error.h"
#include "core/token.h"
#include "tests/lib/tap.h"

static const time_t NOW = 1763755200; /* 2025-11-21T20:00:00Z */
static char dir[256];

/* base64url without padding, done independently of token.c. */
static void b64url(const unsigned char *in, size_t n, char *out)
{
    int len = EVP_EncodeBlock((unsigned char *)out, in, (int)n);

    while (len > 0 && out[len - 1] == '=')
        len--;
    out[len] = '\0';
    for (char *p = out; *p; p++)
        *p = *p == '+' ? '-' : *p == '/' ? '_' : *p;
}

/* Sign an arbitrary payload the way the token format says. */
static void forge(const unsigned char *key, size_t keylen, const char *payload,
                  char *out)
{
    unsigned char mac[32];
    unsigned int maclen;
    size_t n;

    memcpy(out, "loom1.", 6);
    b64url((const unsigned char *)payload, strlen(payload), out + 6);
    n = strlen(out);
    HMAC(EVP_sha256(), key, (int)keylen, (unsigned char *)out, n, mac,
         &maclen);
    out[n] = '.';
    b64url(mac, sizeof(mac), out + n + 1);
}

static void write_file(const char *path, const void *data, size_t n,
                       mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

    if (fd < 0 || write(fd, data, n) != (ssize_t)n)
        perror(path);
    fchmod(fd, mode);
    close(fd);
}

static int refused(const unsigned char *key, size_t keylen, const char *tok,
                   time_t now, const char *want)
{
    struct loom_error err = { 0 };
    struct token_claims cl;
    int rc = token_verify(key, keylen, tok, now, &cl, &err);

    if (rc == 0) {
        printf("#   accepted: %.60s\n", tok);
        return 0;
    }
    if (err.kind != LOOM_EAUTH || !strstr(err.message, want)) {
        printf("#   kind %d, message '%s', want '%s'\n", err.kind,
               err.message, want);
        return 0;
    }
    return cl.subject[0] == '\0' && cl.roles == 0;
}

static void test_roles(void)
{
    char buf[128];

    is_int(token_role_parse("admin"), LOOM_ROLE_ADMIN, "role admin");
    is_int(token_role_parse("reader"), LOOM_ROLE_READER, "role reader");
    is_int(token_role_parse("wizard"), 0, "unknown role name is 0");
    is_int(token_role_parse(NULL), 0, "NULL role name is 0");
    is_str(token_role_name(LOOM_ROLE_GATEWAY), "gateway", "name of gateway");
    ok(token_role_name(LOOM_ROLE_ADMIN | LOOM_ROLE_USER) == NULL,
       "two bits have no single name");
    token_roles_format(LOOM_ROLE_ADMIN | LOOM_ROLE_MONITOR, buf, sizeof(buf));
    is_str(buf, "admin,monitor", "roles formatted in bit order");
    ok(token_roles_format(LOOM_ROLE_ALL, buf, 8) == -1,
       "roles_format reports a short buffer");
}

static void test_key_file(unsigned char **key, size_t *len)
{
    char path[300], other[300];
    unsigned char *again = NULL, small[16] = { 1 }, big[64] = { 2 };
    struct loom_error err = { 0 };
    struct stat st;
    size_t again_len = 0;

    snprintf(path, sizeof(path), "%s/token.key", dir);
    ok(token_key_load(path, 0, key, len, &err) == -1 && !*key,
       "a missing key file is an error without create");
    ok(strstr(err.message, path) != NULL, "message names the path: %s",
       err.message);
    ok(token_key_load(path, 1, key, len, &err) == 0, "key file created");
    is_int(*len, 32, "new key has 32 bytes");
    ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600,
       "new key file has mode 0600 (got %04o)", (unsigned)st.st_mode & 07777);
    ok(token_key_load(path, 1, &again, &again_len, &err) == 0 &&
           again_len == *len && memcmp(again, *key, *len) == 0,
       "an existing key file is read, not replaced");
    token_key_free(again, again_len);

    snprintf(other, sizeof(other), "%s/open.key", dir);
    write_file(other, big, sizeof(big), 0644);
    again = NULL;
    ok(token_key_load(other, 0, &again, &again_len, &err) == -1 &&
           err.kind == LOOM_EINVAL && !again,
       "a key file with mode 0644 is refused");
    ok(strstr(err.message, other) && strstr(err.message, "0644"),
       "message names path and mode: %s", err.message);
    ok(token_key_load(other, 1, &again, &again_len, &err) == -1,
       "mode 0644 refused with create=1 as well");

    snprintf(other, sizeof(other), "%s/short.key", dir);
    write_file(other, small, sizeof(small), 0600);
    ok(token_key_load(other, 0, &again, &again_len, &err) == -1 &&
           strstr(err.message, "too short"),
       "a 16-byte key is refused: %s", err.message);
    ok(token_key_load(dir, 0, &again, &again_len, &err) == -1 &&
           strstr(err.message, "not a regular file"),
       "a directory is refused: %s", err.message);
    /* NULL-safe: a crash here ends the program before its plan, which
     * the TAP driver reports as an error (no test point could say more). */
    token_key_free(NULL, 0);
}

static void test_round_trip(const unsigned char *key, size_t len)
{
    struct loom_error err = { 0 };
    struct token_claims cl;
    char *tok;

    tok = token_create(key, len, "alice", LOOM_ROLE_USER | LOOM_ROLE_READER,
                       3600, NOW, &err);
    ok(tok && strncmp(tok, "loom1.", 6) == 0, "token created: %.40s...",
       tok ? tok : err.message);
    ok(tok && !strchr(tok, '=') && !strchr(tok, '+') && !strchr(tok, '/'),
       "base64url without padding");
    ok(token_verify(key, len, tok, NOW + 10, &cl, &err) == 0,
       "token verifies (%s)", err.message);
    is_str(cl.subject, "alice", "subject survives");
    is_int(cl.roles, LOOM_ROLE_USER | LOOM_ROLE_READER, "roles survive");
    is_int(cl.issued, NOW, "issued time");
    is_int(cl.expires, NOW + 3600, "expiry time");
    ok(token_verify(key, len, tok, NOW + 3599, NULL, &err) == 0,
       "valid one second before expiry, out may be NULL");
    ok(refused(key, len, tok, NOW + 3600, "token expired at"),
       "refused at its expiry time");
    ok(refused(key, len, tok, NOW + 86400, "expired"),
       "expired token refused");
    free(tok);

    tok = token_create(key, len, "CN=Jane Doe/O=Grid", LOOM_ROLE_ALL, 1,
                       NOW, &err);
    ok(tok && token_verify(key, len, tok, NOW, &cl, &err) == 0 &&
           strcmp(cl.subject, "CN=Jane Doe/O=Grid") == 0 &&
           cl.roles == LOOM_ROLE_ALL,
       "all roles, a subject with spaces and '=', ttl 1 s");
    free(tok);
}

static void test_tampering(const unsigned char *key, size_t len)
{
    unsigned char other[32];
    struct loom_error err = { 0 };
    char *tok, *tok2, forged[1024], *dot;
    size_t n;

    tok = token_create(key, len, "bob", LOOM_ROLE_USER, 600, NOW, &err);
    tok2 = token_create(key, len, "bob", LOOM_ROLE_ADMIN, 600, NOW, &err);
    /* Tampered payload: the admin payload with the user signature. */
    dot = strrchr(tok2, '.');
    n = (size_t)(dot - tok2);
    snprintf(forged, sizeof(forged), "%.*s%s", (int)n, tok2,
             strrchr(tok, '.'));
    ok(refused(key, len, forged, NOW, "bad token signature"),
       "payload swapped for another one is refused");
    snprintf(forged, sizeof(forged), "%s", tok);
    forged[8] = forged[8] == 'A' ? 'B' : 'A';
    ok(refused(key, len, forged, NOW, "token"),
       "one payload character changed is refused");

    /* Tampered signature: a changed character, and the last character's
     * unused bits set (same bytes under a lax decoder). */
    snprintf(forged, sizeof(forged), "%s", tok);
    n = strlen(forged);
    forged[n - 5] = forged[n - 5] == 'x' ? 'y' : 'x';
    ok(refused(key, len, forged, NOW, "bad token signature"),
       "a changed signature character is refused");
    snprintf(forged, sizeof(forged), "%s", tok);
    forged[n - 1] = forged[n - 1] == 'A' ? 'B' : forged[n - 1] ^ 1;
    ok(refused(key, len, forged, NOW, "token"),
       "a non-canonical last signature character is refused");
    forged[n - 1] = '\0';
    ok(refused(key, len, forged, NOW, "malformed"),
       "a truncated signature is refused");

    memset(other, 0x5a, sizeof(other));
    ok(refused(other, sizeof(other), tok, NOW, "bad token signature"),
       "a token signed with another key is refused");
    free(tok);
    free(tok2);
}

static void test_malformed(const unsigned char *key, size_t len)
{
    char *big = malloc(5001), forged[2048];

    ok(refused(key, len, "", NOW, "malformed"), "empty string refused");
    ok(refused(key, len, NULL, NOW, "malformed"), "NULL refused");
    ok(refused(key, len, "loom1.", NOW, "malformed"), "'loom1.' refused");
    ok(refused(key, len, "loom1..", NOW, "malformed"), "'loom1..' refused");
    ok(refused(key, len, "garbage", NOW, "malformed"), "garbage refused");
    ok(refused(key, len, "loom1.abc.def", NOW, "malformed"),
       "short signature refused");
    ok(refused(key, len,
               "loom2.eyJ9.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", NOW,
               "loom1."),
       "another version refused");
    memset(big, 'a', 5000);
    big[5000] = '\0';
    ok(refused(key, len, big, NOW, "longer than 4096"),
       "a 5000-byte token refused before any work");
    free(big);

    forge(key, len,
          "{\"sub\":\"eve\",\"roles\":[\"user\",\"wizard\"],\"iat\":1,"
          "\"exp\":9999999999}", forged);
    ok(refused(key, len, forged, NOW, "unknown role 'wizard'"),
       "a correctly signed token with an unknown role is refused");
    forge(key, len, "not json", forged);
    ok(refused(key, len, forged, NOW, "malformed"), "signed non-JSON refused");
    forge(key, len,
          "{\"sub\":\"eve\",\"roles\":[\"user\"],\"iat\":1,\"exp\":9999999999,"
          "\"x\":1}", forged);
    ok(refused(key, len, forged, NOW, "malformed"), "an extra member refused");
    forge(key, len, "{\"sub\":\"eve\",\"roles\":[\"user\"],\"iat\":1}", forged);
    ok(refused(key, len, forged, NOW, "malformed"), "missing exp refused");
    forge(key, len,
          "{\"sub\":\"e\\\"ve\",\"roles\":[\"user\"],\"iat\":1,"
          "\"exp\":9999999999}", forged);
    ok(refused(key, len, forged, NOW, "malformed"), "an escaped quote refused");
    forge(key, len,
          "{\"sub\":\"eve\",\"roles\":[],\"iat\":1,\"exp\":9999999999}",
          forged);
    ok(refused(key, len, forged, NOW, "no role"), "an empty role list refused");
    forge(key, len,
          " { \"exp\" : 9999999999 , \"roles\" : [ \"monitor\" ] , "
          "\"iat\" : 1 , \"sub\" : \"mon\" } ", forged);
    ok(token_verify(key, len, forged, NOW, NULL, NULL) == 0,
       "whitespace and another member order are accepted");
}

static void test_create_errors(const unsigned char *key, size_t len)
{
    struct loom_error err = { 0 };
    char long_sub[200], *tok;

    memset(long_sub, 'x', 129);
    long_sub[129] = '\0';
    ok(!token_create(key, len, "", LOOM_ROLE_USER, 60, NOW, &err) &&
           err.kind == LOOM_EINVAL,
       "empty subject refused: %s", err.message);
    ok(!token_create(key, len, long_sub, LOOM_ROLE_USER, 60, NOW, &err),
       "129-character subject refused");
    long_sub[128] = '\0';
    tok = token_create(key, len, long_sub, LOOM_ROLE_USER, 60, NOW, &err);
    ok(tok != NULL, "128-character subject accepted");
    free(tok);
    ok(!token_create(key, len, "a\"b", LOOM_ROLE_USER, 60, NOW, &err),
       "subject with a quote refused");
    ok(!token_create(key, len, "a\nb", LOOM_ROLE_USER, 60, NOW, &err),
       "subject with a newline refused");
    ok(!token_create(key, len, "https://iam.example,u1", LOOM_ROLE_USER, 60,
                     NOW, &err) && strstr(err.message, "https://"),
       "a subject in the form of a grid identity refused: %s", err.message);
    tok = token_create(key, len, "http-user", LOOM_ROLE_USER, 60, NOW, &err);
    ok(tok != NULL, "a subject beginning with http- is fine");
    free(tok);
    ok(!token_create(key, len, "alice", 0, 60, NOW, &err) &&
           strstr(err.message, "role"),
       "no roles refused: %s", err.message);
    ok(!token_create(key, len, "alice", 0x100, 60, NOW, &err),
       "unknown role bit refused");
    ok(!token_create(key, len, "alice", LOOM_ROLE_USER, 0, NOW, &err),
       "ttl 0 refused");
    ok(!token_create(key, len, "alice", LOOM_ROLE_USER,
                     LOOM_TOKEN_TTL_MAX + 1, NOW, &err),
       "ttl over 10 years refused: %s", err.message);
}

/* Many verifications of one token in a row all succeed: nothing in the
 * path keeps state that wears out (a cache, a counter). What a
 * verification costs is measured by tests/bench/token_verify, beside
 * outside issuers' tokens; a unit test asserts no time, which a loaded
 * machine would break. */
static void test_repeat(const unsigned char *key, size_t len)
{
    struct token_claims cl;
    char *tok = token_create(key, len, "speed", LOOM_ROLE_READER, 60, NOW,
                             NULL);
    int n = 20000, bad = 0;

    for (int i = 0; i < n; i++)
        bad += token_verify(key, len, tok, NOW, &cl, NULL) != 0;
    ok(bad == 0, "%d verifications of one token in a row: %d refused", n,
       bad);
    free(tok);
}

int main(void)
{
    unsigned char *key = NULL;
    size_t len = 0;
    char path[300];
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/loom-token-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_roles();
    test_key_file(&key, &len);
    if (key) {
        test_round_trip(key, len);
        test_tampering(key, len);
        test_malformed(key, len);
        test_create_errors(key, len);
        test_repeat(key, len);
    }
    token_key_free(key, len);
    const char *names[] = { "token.key", "open.key", "short.key" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return done_testing();
}
