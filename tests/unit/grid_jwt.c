/* grid_jwt.c - tokens of outside issuers: verified, refused with the
 * reason, cached; key sets from JWKS and PEM; scopes. The tokens come from
 * tests/lib/jwtsign.c, written apart from grid/. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "core/conf.h"
#include "grid/grid.h"
#include "grid/jwt.h"
#include "tests/lib/jwtsign.h"
#include "tests/lib/tap.h"

#define ISS "https://iam.example.org/atlas"
#define AUD "https://loom.example.org"

static char dir[] = "/tmp/loom-grid-XXXXXX";
static EVP_PKEY *rsa, *ec, *ed, *other;
static time_t now;

static void write_file(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* The claims of a good token, with what differs spliced in. */
static char *claims(const char *iss, const char *sub, const char *aud,
                    long iat, long exp, const char *extra)
{
    static char buf[4096];

    snprintf(buf, sizeof(buf), "{\"iss\":\"%s\",\"sub\":\"%s\",\"aud\":%s,"
             "\"iat\":%ld,\"exp\":%ld,\"wlcg.ver\":\"1.0\"%s%s}", iss, sub,
             aud, (long)now + iat, (long)now + exp, extra ? "," : "",
             extra ? extra : "");
    return buf;
}

static char *good(EVP_PKEY *k, const char *alg, const char *kid,
                  const char *extra)
{
    return jwts_sign(k, alg, kid,
                     claims(ISS, "u-1", "\"" AUD "\"", -10, 3600, extra),
                     NULL, 0);
}

/* Verify tok: 0 or -1; the message in err. */
static int check(char *tok, struct grid_who **w, struct loom_error *err)
{
    int rc;

    *w = NULL;
    rc = tok ? grid_verify(tok, now, w, NULL, err) : -1;
    free(tok);
    return rc;
}

static void refused(char *tok, const char *want, const char *name)
{
    struct loom_error err = {0};
    struct grid_who *w;
    int rc = check(tok, &w, &err);

    ok(rc < 0 && err.kind == LOOM_EAUTH && strstr(err.message, want),
       "%s: %s", name, err.message);
    grid_who_unref(w);
}

static void install(const char *text)
{
    struct loom_error err;
    struct conf *c = conf_parse("t.conf", text, &err);
    struct grid_issuers *set = c ? grid_issuers_read(c, &err) : NULL;

    if (!set)
        printf("# install: %s\n", err.message);
    grid_issuers_install(set);
    conf_destroy(c);
}

static void t_verify(void)
{
    struct loom_error err;
    struct grid_who *w;
    char conf[1024], jwks[8192], *a, *b, *c;
    char big[300];

    a = jwts_jwk(rsa, "r1");
    b = jwts_jwk(ec, "e1");
    c = jwts_jwk(ed, "d1");
    snprintf(jwks, sizeof(jwks), "{\"keys\":[%s,%s,%s]}", a, b, c);
    free(a);
    free(b);
    free(c);
    write_file("jwks.json", jwks);
    snprintf(conf, sizeof(conf), "[issuer atlas]\nurl = %s\naudiences = %s "
             "https://wlcg.cern.ch/jwt/v1/any\njwks_file = %s/jwks.json\n"
             "group_scopes = compute.read\n", ISS, AUD, dir);
    install(conf);
    ok(grid_enabled(), "an issuer is configured");

    is_int(check(good(rsa, "RS256", "r1", "\"scope\":\"compute.create "
                      "compute.read\",\"wlcg.groups\":[\"/atlas\","
                      "\"/atlas/prod\"]"), &w, &err), 0,
           "RS256 verifies (%s)", w ? "" : err.message);
    if (w) {
        is_str(w->identity, ISS ",u-1", "identity is ISS,SUB");
        is_str(w->issuer, "atlas", "the issuer's section name");
        is_int(w->n_groups, 2, "two groups");
        is_str(w->n_groups > 1 ? w->groups[1] : "", "/atlas/prod",
               "groups in their order");
        is_int(w->scopes, GRID_SCOPE_CREATE | GRID_SCOPE_READ,
               "scopes create and read");
        ok(w->capabilities, "compute.* are capabilities");
        grid_who_unref(w);
    }
    is_int(check(good(ec, "ES256", "e1", NULL), &w, &err), 0,
           "ES256 verifies (%s)", w ? "" : err.message);
    if (w)
        is_int(w->scopes, GRID_SCOPE_READ, "no capabilities: group_scopes");
    grid_who_unref(w);
    is_int(check(good(ed, "EdDSA", "d1", NULL), &w, &err), 0,
           "EdDSA verifies (%s)", w ? "" : err.message);
    grid_who_unref(w);
    is_int(check(jwts_sign(rsa, "RS256", "r1",
                           claims(ISS, "u-1", "[\"x\",\"https://wlcg.cern.ch"
                                  "/jwt/v1/any\"]", -10, 3600, NULL),
                           NULL, 0), &w, &err), 0,
           "the WLCG any audience in an array, when listed (%s)",
           w ? "" : err.message);
    grid_who_unref(w);
    is_int(check(jwts_sign(rsa, "RS256", "r1",
                           "{\"iss\":\"" ISS "\",\"sub\":\"u\",\"aud\":\""
                           AUD "\",\"iat\":1,\"exp\":99999999999,\"ver\":"
                           "\"scitoken:2.0\"}", NULL, 0), &w, &err), 0,
           "a SciTokens 2.0 token (ver, no wlcg.ver) is taken (%s)",
           w ? "" : err.message);
    grid_who_unref(w);

    /* refusals, each naming why */
    refused(jwts_sign(rsa, "RS256", "r1",
                      claims(ISS, "u-1", "\"" AUD "\"", -7200, -10, NULL),
                      NULL, 0), "token expired at", "expired");
    refused(good(rsa, "RS256", "r1", "\"nbf\":9999999999"),
            "token not valid yet: nbf", "not yet valid");
    refused(jwts_sign(rsa, "RS256", "r1",
                      claims(ISS, "u-1", "\"" AUD "\"", 3600, 7200, NULL),
                      NULL, 0), "issued in the future", "iat in the future");
    is_int(check(jwts_sign(rsa, "RS256", "r1",
                           claims(ISS, "u-1", "\"" AUD "\"", 30, 7200, NULL),
                           NULL, 0), &w, &err), 0,
           "iat 30 s ahead is within the skew");
    grid_who_unref(w);
    refused(jwts_sign(rsa, "RS256", "r1",
                      claims(ISS, "u-1", "\"https://other\"", -10, 3600,
                             NULL), NULL, 0),
            "audience https://other is not one of issuer atlas's",
            "wrong audience");
    refused(jwts_sign(rsa, "RS256", "r1",
                      claims("https://evil.example", "u-1", "\"" AUD "\"",
                             -10, 3600, NULL), NULL, 0),
            "unknown issuer 'https://evil.example'", "unknown issuer");
    refused(good(rsa, "RS256", "r9", NULL), "issuer atlas has no key 'r9'",
            "unknown kid");
    refused(good(other, "RS256", "r1", NULL), "bad token signature",
            "signed with another key under a known kid");
    refused(good(NULL, "none", NULL, NULL), "alg 'none'", "alg none");
    {
        BIO *m = BIO_new(BIO_s_mem());
        char *pem;
        long n;
        PEM_write_bio_PUBKEY(m, rsa);
        n = BIO_get_mem_data(m, &pem);
        refused(jwts_sign(NULL, "HS256", "r1",
                          claims(ISS, "u-1", "\"" AUD "\"", -10, 3600, NULL),
                          (unsigned char *)pem, (size_t)n),
                "alg 'HS256' is a shared-secret MAC",
                "HS256 with the RSA public key as the secret");
        BIO_free(m);
    }
    refused(good(ec, "RS256", "e1", NULL), "but key 'e1' signs ES256",
            "alg RS256 with an EC key's kid");
    memset(big, 'x', 256);
    big[256] = '\0';
    refused(jwts_sign(rsa, "RS256", "r1",
                      claims(ISS, big, "\"" AUD "\"", -10, 3600, NULL), NULL,
                      0), "its sub is 256 characters", "sub too long");
    big[255] = '\0';
    is_int(check(jwts_sign(rsa, "RS256", "r1",
                           claims(ISS, big, "\"" AUD "\"", -10, 3600, NULL),
                           NULL, 0), &w, &err), 0,
           "a sub of 255 characters is taken");
    grid_who_unref(w);
    refused(jwts_sign(rsa, "RS256", "r1",
                      "{\"iss\":\"" ISS "\",\"sub\":\"u\",\"aud\":\"" AUD
                      "\",\"iat\":1,\"exp\":99999999999}", NULL, 0),
            "neither wlcg.ver", "no profile version");
    refused(good(rsa, "RS256", "r1", "\"wlcg.ver\":\"2.0\""),
            "malformed token", "a duplicate claim (wlcg.ver twice)");
    refused(jwts_sign(rsa, "RS256", "r1",
                      "{\"iss\":\"" ISS "\",\"sub\":\"u\",\"aud\":\"" AUD
                      "\",\"iat\":1,\"exp\":99999999999,\"wlcg.ver\":"
                      "\"2.0\"}", NULL, 0),
            "wlcg.ver '2.0' is not a version 1.x", "wlcg.ver 2.0");
    refused(good(rsa, "RS256", "r1", "\"wlcg.groups\":[\"atlas\"]"),
            "wlcg.groups entry 1 is not a group", "a malformed group");
    refused(strdup("a.b"), "malformed token: expected", "two parts");
    refused(strdup("eyJhbGciOiJSUzI1NiJ9.e30.AAAA"),
            "unknown issuer '(no iss)'", "a payload without claims");
    refused(strdup("eyJhbGciOiJSUzI1NiJ9.bm90IGpzb24.AAAA"),
            "its payload is not a JSON object", "a payload that is no JSON");
}

static void t_cache(void)
{
    struct loom_error err;
    struct grid_who *w;
    unsigned long h0, h1;
    char *tok = good(rsa, "RS256", "r1", NULL), *copy = strdup(tok);
    char *status;

    grid_verify(tok, now, &w, NULL, &err);
    grid_who_unref(w);
    status = grid_status_json();
    h0 = strstr(status, "\"hits\":") ? strtoul(strstr(status, "\"hits\":")
                                                   + 7, NULL, 10) : 0;
    free(status);
    is_int(grid_verify(copy, now, &w, NULL, &err), 0, "the same token again");
    grid_who_unref(w);
    status = grid_status_json();
    h1 = strstr(status, "\"hits\":") ? strtoul(strstr(status, "\"hits\":")
                                                   + 7, NULL, 10) : 0;
    free(status);
    is_int(h1, h0 + 1, "... comes from the cache");
    is_int(grid_verify(tok, now + 7200, &w, NULL, &err), -1,
           "a cached token is refused once it has expired");
    ok(strstr(err.message, "token expired"), "... as expired (%s)",
       err.message);
    free(tok);
    free(copy);
}

static void t_keys(void)
{
    struct loom_error err;
    struct grid_keyset *ks;
    EVP_PKEY *small = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)1024);
    char *j = jwts_jwk(small, "s"), doc[4096];
    size_t skipped = 0;

    snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", j);
    ks = keyset_from_jwks(doc, strlen(doc), "x", NULL, &err);
    ok(!ks && strstr(err.message, "under 2048 bits"),
       "a 1024-bit RSA key is refused: %s", err.message);
    free(j);
    EVP_PKEY_free(small);
    snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"h\","
             "\"k\":\"AAAA\"},{\"kty\":\"RSA\",\"kid\":\"enc\",\"use\":"
             "\"enc\",\"n\":\"AQAB\",\"e\":\"AQAB\"}]}");
    ks = keyset_from_jwks(doc, strlen(doc), "x", &skipped, &err);
    ok(!ks && strstr(err.message, "holds no key Loom can use"),
       "symmetric and encryption keys are skipped: %s", err.message);
    is_int(skipped, 2, "two skipped");
    ks = keyset_from_jwks("[]", 2, "doc.json", NULL, &err);
    ok(!ks && strstr(err.message, "doc.json is not a JWKS"),
       "not a JWKS: %s", err.message);
    snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"EC\",\"kid\":\"e\","
             "\"crv\":\"P-256\",\"x\":\"%s\",\"y\":\"%s\"}]}",
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
             "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAE");
    ks = keyset_from_jwks(doc, strlen(doc), "x", NULL, &err);
    ok(!ks && strstr(err.message, "not on curve P-256"),
       "a point off the curve is refused: %s", err.message);
}

static void t_scopes(void)
{
    unsigned b;
    int caps;

    grid_scopes_parse("openid compute.read storage.read:/x", &b, &caps);
    is_int(b, GRID_SCOPE_READ, "compute.read among others");
    ok(caps, "storage.read:/x is a capability");
    grid_scopes_parse("openid wlcg.groups offline_access", &b, &caps);
    ok(!b && !caps, "no capability in openid wlcg.groups offline_access");
    grid_scopes_parse("compute.creates compute.cancel", &b, &caps);
    is_int(b, GRID_SCOPE_CANCEL, "compute.creates is not compute.create");
    is_int(grid_scope_needed("GET", "clusters", 1, NULL), GRID_SCOPE_READ,
           "GET needs compute.read");
    is_int(grid_scope_needed("POST", "jobs", 1, NULL), GRID_SCOPE_CREATE,
           "POST /v1/jobs needs compute.create");
    is_int(grid_scope_needed("DELETE", "jobs", 2, NULL), GRID_SCOPE_CANCEL,
           "DELETE /v1/jobs/ID needs compute.cancel");
    is_int(grid_scope_needed("POST", "jobs", 3, "suspend"),
           GRID_SCOPE_MODIFY, "suspend needs compute.modify");
    is_int(grid_scope_needed("POST", "jobs", 3, "start"), 0,
           "start: no scope grants it");
    is_int(grid_scope_needed("POST", "reservations", 1, NULL), 0,
           "a reservation: no scope grants it");
}

static void t_config(void)
{
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"[issuer a]\naudiences = x\njwks_url = https://a/j\n",
         "needs url = the issuer's https:// URL"},
        {"[issuer a]\nurl = https://a\njwks_url = https://a/j\n",
         "needs audiences"},
        {"[issuer a]\nurl = https://a\naudiences = x\n",
         "exactly one of pem_file, jwks_file and jwks_url (got 0)"},
        {"[issuer a]\nurl = https://a\naudiences = x\njwks_url = http://a/j\n",
         "jwks_url must be an https:// URL"},
        {"[issuer a]\nurl = https://a\naudiences = x\njwks_url = https://a/j"
         "\n[issuer b]\nurl = https://a\naudiences = x\n"
         "jwks_url = https://a/k\n", "has the url of [issuer a]"},
        {"[issuer a]\nurl = https://a\naudiences = x\njwks_url = https://a/j"
         "\nkid = 3\n", "unknown key 'kid'"},
        {"[issuer a]\nurl = https://a\naudiences = x\npem_file = /nonexistent"
         "\n", "pem_file /nonexistent"},
    };
    struct loom_error err;

    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct conf *c = conf_parse("t.conf", bad[i].text, &err);
        struct grid_issuers *set = c ? grid_issuers_read(c, &err) : NULL;
        ok(!set && strstr(err.message, bad[i].want), "refused: %s",
           err.message);
        grid_issuers_free(set);
        conf_destroy(c);
    }
}

int main(void)
{
    char path[256];

    now = time(NULL);
    if (!mkdtemp(dir))
        return 1;
    rsa = jwts_keygen("RSA");
    ec = jwts_keygen("EC");
    ed = jwts_keygen("Ed25519");
    other = jwts_keygen("RSA");
    t_config();
    t_verify();
    t_cache();
    t_keys();
    t_scopes();
    grid_stop();
    snprintf(path, sizeof(path), "%s/jwks.json", dir);
    unlink(path);
    rmdir(dir);
    EVP_PKEY_free(rsa);
    EVP_PKEY_free(ec);
    EVP_PKEY_free(ed);
    EVP_PKEY_free(other);
    return done_testing();
}
