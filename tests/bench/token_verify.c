/* token_verify.c - what verifying a bearer token costs, in microseconds
 * per request: tokens of an outside issuer (RS256 with a 2048-bit key,
 * ES256, EdDSA) the first time each is seen (parsed, signature checked,
 * claims checked, cached) and again (from the cache), beside Loom's own
 * HMAC-SHA256 tokens. One thread; `make bench`, then
 * tests/bench/token_verify [N]. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/conf.h"
#include "core/timeutil.h"
#include "core/token.h"
#include "grid/grid.h"
#include "tests/lib/jwtsign.h"

#define ISS "https://iam.example.org/bench"
#define AUD "https://loom.example.org"

static time_t now;

static char *sign_n(EVP_PKEY *k, const char *alg, const char *kid, int i)
{
    char claims[512];

    snprintf(claims, sizeof(claims), "{\"iss\":\"" ISS "\",\"sub\":\"u-%d\","
             "\"aud\":\"" AUD "\",\"iat\":%ld,\"exp\":%ld,\"wlcg.ver\":"
             "\"1.0\",\"scope\":\"compute.create compute.read\","
             "\"wlcg.groups\":[\"/bench\",\"/bench/prod\"],\"jti\":\"%d\"}",
             i, (long)now - 10, (long)now + 3600, i);
    return jwts_sign(k, alg, kid, claims, NULL, 0);
}

/* Verify each of toks once; microseconds per token. */
static double run(char **toks, int n)
{
    struct loom_error err;
    struct grid_who *w;
    double t0 = time_mono();

    for (int i = 0; i < n; i++) {
        if (grid_verify(toks[i], now, &w, NULL, &err) < 0) {
            fprintf(stderr, "token_verify: %s\n", err.message);
            exit(1);
        }
        grid_who_unref(w);
    }
    return (time_mono() - t0) * 1e6 / n;
}

static void bench(const char *name, EVP_PKEY *k, const char *alg,
                  const char *kid, int n)
{
    char **toks = calloc((size_t)n, sizeof(*toks)), **same;
    double first, cached;

    same = calloc((size_t)n, sizeof(*same));
    for (int i = 0; i < n; i++)
        toks[i] = sign_n(k, alg, kid, i);
    for (int i = 0; i < n; i++)
        same[i] = toks[0];
    first = run(toks, n);  /* each token new: the whole verification */
    cached = run(same, n); /* the same token: from the cache */
    printf("%-7s first sight %8.2f us   cached %6.2f us\n", name, first,
           cached);
    for (int i = 0; i < n; i++)
        free(toks[i]);
    free(toks);
    free(same);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 1000;
    EVP_PKEY *rsa = jwts_keygen("RSA"), *ec = jwts_keygen("EC"),
             *ed = jwts_keygen("Ed25519");
    char dir[] = "/tmp/loom-bench-XXXXXX", path[256], conf[1024];
    char *j1 = jwts_jwk(rsa, "r"), *j2 = jwts_jwk(ec, "e"),
         *j3 = jwts_jwk(ed, "d");
    unsigned char key[32] = "0123456789abcdef0123456789abcdef";
    struct loom_error err;
    struct conf *c;
    char *loom;
    double t0;
    FILE *f;

    now = time(NULL);
    if (n < 1 || !mkdtemp(dir))
        return 2;
    snprintf(path, sizeof(path), "%s/jwks.json", dir);
    f = fopen(path, "w");
    fprintf(f, "{\"keys\":[%s,%s,%s]}", j1, j2, j3);
    fclose(f);
    snprintf(conf, sizeof(conf), "[issuer bench]\nurl = " ISS "\n"
             "audiences = " AUD "\njwks_file = %s\n", path);
    c = conf_parse("bench.conf", conf, &err);
    grid_issuers_install(c ? grid_issuers_read(c, &err) : NULL);
    conf_destroy(c);
    unlink(path);
    rmdir(dir);
    if (!grid_enabled()) {
        fprintf(stderr, "token_verify: %s\n", err.message);
        return 1;
    }
    printf("tokens verified, one thread, %d each (microseconds a token)\n",
           n);
    bench("RS256", rsa, "RS256", "r", n);
    bench("ES256", ec, "ES256", "e", n);
    bench("EdDSA", ed, "EdDSA", "d", n);
    loom = token_create(key, sizeof(key), "alice", LOOM_ROLE_USER, 3600, now,
                        &err);
    t0 = time_mono();
    for (int i = 0; i < n * 10; i++) {
        struct token_claims cl;
        if (token_verify(key, sizeof(key), loom, now, &cl, &err) < 0)
            return 1;
    }
    printf("loom1   HMAC-SHA256 %8.2f us   (Loom's own, no cache)\n",
           (time_mono() - t0) * 1e6 / (n * 10));
    free(loom);
    free(j1);
    free(j2);
    free(j3);
    grid_stop();
    EVP_PKEY_free(rsa);
    EVP_PKEY_free(ec);
    EVP_PKEY_free(ed);
    return 0;
}
