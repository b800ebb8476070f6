/* fuzz_jwt.c - tokens of outside issuers (grid/jwt.c, grid/verify.c): the
 * token as sent, and, so that the claims' checks (aud, times, profile,
 * sub, groups, scopes) are reached past the signature, claims signed here
 * by the issuer's key. The first byte chooses. The issuer is configured
 * once, its key below: a key for this test and nothing else. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "core/conf.h"
#include "grid/grid.h"
#include "tests/fuzz/fuzz.h"
#include "tests/lib/jwtsign.h"

#define NOW 1700000000

static const char key_pem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgcBzHDhtUkDIS8Cx7\n"
    "LMxqXlozxn4nl2vk1b8tuCbwQS+hRANCAAQGUkBWWwQAg5KzVzWf+xBDVm3KzjPF\n"
    "XgqnaJmSjG4LHW3+iMBUZjGs+2QIuQ/gpcAYOxJ6m8uuiGLWdJlARLIm\n"
    "-----END PRIVATE KEY-----\n";

static EVP_PKEY *key;
static char pub_path[] = "/tmp/loom-fuzz-jwt-XXXXXX";

static void cleanup(void)
{
    unlink(pub_path);
}

/* The key, its public half in a pem_file, an [issuer] that names it. */
static void setup(void)
{
    BIO *b = BIO_new_mem_buf(key_pem, -1);
    char conf[512];
    struct loom_error err;
    struct conf *c;
    struct grid_issuers *set;
    FILE *f;
    int fd;

    key = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
    BIO_free(b);
    if (!key || (fd = mkstemp(pub_path)) < 0 || !(f = fdopen(fd, "w")) ||
        !PEM_write_PUBKEY(f, key) || fclose(f) != 0)
        abort();
    atexit(cleanup);
    snprintf(conf, sizeof(conf), "[issuer fuzz]\n"
             "url = https://iam.example.org/fuzz\n"
             "audiences = https://loom.example.org "
             "https://wlcg.cern.ch/jwt/v1/any\n"
             "pem_file = %s\n", pub_path);
    c = conf_parse("<fuzz>", conf, &err);
    set = c ? grid_issuers_read(c, &err) : NULL;
    if (!set) {
        fprintf(stderr, "fuzz_jwt: %s\n", err.message);
        abort();
    }
    grid_issuers_install(set);
    conf_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct grid_claimed claimed;
    struct loom_error err;
    struct grid_who *w = NULL;
    char *in, *tok;

    fuzz_quiet();
    if (!key)
        setup();
    if (size < 1 || size > 16384)
        return 0;
    in = fuzz_string(data + 1, size - 1);
    if (data[0] & 1) { /* as sent */
        tok = in;
        in = NULL;
    } else { /* the claims, signed ES256 by the issuer's key */
        tok = jwts_sign(key, "ES256", NULL, in, NULL, 0);
        if (!tok)
            abort();
    }
    if (grid_token_is_jwt(tok) &&
        grid_verify(tok, NOW, &w, &claimed, &err) == 0) {
        /* what a verified token is, whatever it claimed */
        if (strcmp(w->issuer, "fuzz") != 0 ||
            strcmp(w->iss, "https://iam.example.org/fuzz") != 0 ||
            !w->sub[0] || w->n_groups > LOOM_GRID_GROUPS_MAX ||
            (w->scopes & ~GRID_SCOPE_ALL) || w->exp <= NOW)
            abort();
        for (size_t i = 0; i < w->n_groups; i++)
            if (!w->groups[i] || strlen(w->groups[i]) > LOOM_GRID_GROUP_MAX)
                abort();
        grid_who_unref(w);
    }
    free(tok);
    free(in);
    return 0;
}
