/* verify.c - a token of an outside issuer verified: its issuer and key,
 * its signature, its claims; the result cached. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "core/domain.h"
#include "core/log.h"
#include "core/timeutil.h"
#include "core/token.h"
#include "grid/issuer.h"

#define GROUPS_BYTES 4096 /* of a token's groups, kept */

struct grid_who *grid_who_ref(struct grid_who *w)
{
    atomic_fetch_add(&w->refs, 1);
    return w;
}

void grid_who_unref(struct grid_who *w)
{
    if (w && atomic_fetch_sub(&w->refs, 1) == 1)
        free(w); /* one allocation: the groups follow it */
}

int grid_token_is_jwt(const char *token)
{
    const char *d1 = strchr(token, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : 0;

    return strncmp(token, "loom1.", 6) != 0 && d1 && d2 && d1 > token &&
           !strchr(d2 + 1, '.');
}

static const char *when(time_t t, char buf[32])
{
    time_format(t, buf);
    return buf;
}

/* A NumericDate claim (seconds, maybe with a fraction): 1, 0 when absent,
 * -1 when it is not a number in range. */
static int num_date(json_t *claims, const char *k, time_t *out)
{
    json_t *v = json_object_get(claims, k);
    double d;

    if (!v)
        return 0;
    if (!json_is_number(v))
        return -1;
    d = json_number_value(v);
    if (d < 0 || d > 253402300799.0)
        return -1;
    *out = (time_t)d;
    return 1;
}

/* Is one of the token's audiences one the issuer takes? */
static int aud_ok(json_t *aud, const struct grid_issuer *is,
                  struct loom_error *err)
{
    char list[512] = "";
    size_t i, o = 0;
    json_t *a;

    if (!aud)
        return loom_error_set(err, LOOM_EAUTH, "token refused: it has no "
                              "aud (audience)");
    if (!json_is_string(aud) && !json_is_array(aud))
        return loom_error_set(err, LOOM_EAUTH, "token refused: its aud is "
                              "neither a string nor an array of strings");
    for (size_t k = 0; k < is->audiences.n; k++) {
        if (json_is_string(aud) &&
            !strcmp(json_string_value(aud), is->audiences.v[k]))
            return 0;
        json_array_foreach(aud, i, a)
            if (json_is_string(a) &&
                !strcmp(json_string_value(a), is->audiences.v[k]))
                return 0;
        o += (size_t)snprintf(list + o, o < sizeof(list) ? sizeof(list) - o
                                                         : 0,
                              "%s%s", k ? ", " : "", is->audiences.v[k]);
        if (o >= sizeof(list))
            o = sizeof(list) - 1;
    }
    return loom_error_set(err, LOOM_EAUTH, "token refused: its audience "
                          "%.200s is not one of issuer %s's audiences here "
                          "(%s)", json_is_string(aud) ? json_string_value(aud)
                                                      : "(a list)",
                          is->name, list);
}

/* wlcg.ver 1.x (WLCG profile), or ver scitoken:2.0 (SciTokens). */
static int version_ok(json_t *c, struct loom_error *err)
{
    json_t *wv = json_object_get(c, "wlcg.ver");
    const char *w = json_string_value(wv),
               *v = json_string_value(json_object_get(c, "ver"));

    if (wv) { /* MAJOR 1, any MINOR: "1.0", "1.3" */
        if (w && !strncmp(w, "1.", 2) && w[2] &&
            strspn(w + 2, "0123456789") == strlen(w + 2))
            return 0;
        return loom_error_set(err, LOOM_EAUTH, "token refused: wlcg.ver "
                              "'%.20s' is not a version 1.x of the WLCG "
                              "profile", w ? w : "(not a string)");
    }
    if (v && (!strcmp(v, "scitoken:2.0") || !strcmp(v, "scitokens:2.0")))
        return 0;
    return loom_error_set(err, LOOM_EAUTH, "token refused: it has neither "
                          "wlcg.ver (WLCG profile 1.x) nor ver scitoken:2.0 "
                          "(SciTokens)");
}

static int sub_ok(const char *sub, struct loom_error *err)
{
    size_t n;

    if (!sub)
        return loom_error_set(err, LOOM_EAUTH, "token refused: it has no "
                              "sub (subject)");
    n = strlen(sub);
    if (!n || n > LOOM_GRID_SUBJECT_MAX)
        return loom_error_set(err, LOOM_EAUTH, "token refused: its sub is "
                              "%zu characters; the WLCG profile allows 1 to "
                              "%d", n, LOOM_GRID_SUBJECT_MAX);
    for (; *sub; sub++)
        if ((unsigned char)*sub < 0x20 || (unsigned char)*sub >= 0x7f)
            return loom_error_set(err, LOOM_EAUTH, "token refused: its sub "
                                  "is not printable ASCII");
    return 0;
}

/* The times: exp, nbf, iat, with the skew Loom's own tokens get. */
static int times_ok(json_t *c, time_t now, time_t *iat, time_t *exp,
                    struct loom_error *err)
{
    time_t nbf = 0;
    char t[32];
    int rc;

    if ((rc = num_date(c, "exp", exp)) <= 0)
        return loom_error_set(err, LOOM_EAUTH, "token refused: %s exp",
                              rc ? "it has a bad" : "it has no");
    if ((rc = num_date(c, "iat", iat)) <= 0)
        return loom_error_set(err, LOOM_EAUTH, "token refused: %s iat",
                              rc ? "it has a bad" : "it has no");
    if ((rc = num_date(c, "nbf", &nbf)) < 0)
        return loom_error_set(err, LOOM_EAUTH, "token refused: it has a bad "
                              "nbf");
    if (now >= *exp)
        return loom_error_set(err, LOOM_EAUTH, "token expired at %s",
                              when(*exp, t));
    if (rc && nbf > now + LOOM_TOKEN_SKEW_S)
        return loom_error_set(err, LOOM_EAUTH, "token not valid yet: nbf "
                              "is %s, %lld s ahead of this server's clock "
                              "(at most %d s are allowed)", when(nbf, t),
                              (long long)(nbf - now), LOOM_TOKEN_SKEW_S);
    if (*iat > now + LOOM_TOKEN_SKEW_S)
        return loom_error_set(err, LOOM_EAUTH, "the token was issued in the "
                              "future (iat is %lld s ahead of this server's "
                              "clock; at most %d s are allowed)",
                              (long long)(*iat - now), LOOM_TOKEN_SKEW_S);
    return 0;
}

/* The verified claims as a grid_who (one allocation with its groups). */
static struct grid_who *who_new(const struct jwt *j,
                                const struct grid_issuer *is, time_t iat,
                                time_t exp, struct loom_error *err)
{
    json_t *g = json_object_get(j->claims, is->groups_claim), *v;
    const char *scope = json_string_value(json_object_get(j->claims,
                                                          "scope"));
    size_t n = json_array_size(g), bytes = 0, i;
    struct grid_who *w;
    char *p;

    if (g && !json_is_array(g)) {
        loom_error_set(err, LOOM_EAUTH, "token refused: its %s is not an "
                       "array of groups", is->groups_claim);
        return NULL;
    }
    if (n > LOOM_GRID_GROUPS_MAX) {
        loom_error_set(err, LOOM_EAUTH, "token refused: it names more than "
                       "%d groups", LOOM_GRID_GROUPS_MAX);
        return NULL;
    }
    json_array_foreach(g, i, v) {
        if (!json_is_string(v) || !domain_group_valid(json_string_value(v))) {
            loom_error_set(err, LOOM_EAUTH, "token refused: %s entry %zu is "
                           "not a group (/vo or /vo/sub, letters, digits, "
                           "'_', '.', '-')", is->groups_claim, i + 1);
            return NULL;
        }
        bytes += strlen(json_string_value(v)) + 1;
    }
    if (bytes > GROUPS_BYTES) {
        loom_error_set(err, LOOM_EAUTH, "token refused: its groups are "
                       "longer than %d bytes", GROUPS_BYTES);
        return NULL;
    }
    if (!(w = calloc(1, sizeof(*w) + n * sizeof(char *) + bytes))) {
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    atomic_init(&w->refs, 1);
    snprintf(w->issuer, sizeof(w->issuer), "%s", is->name);
    snprintf(w->iss, sizeof(w->iss), "%s", j->iss);
    snprintf(w->sub, sizeof(w->sub), "%s", j->sub);
    snprintf(w->identity, sizeof(w->identity), "%s,%s", j->iss, j->sub);
    w->groups = (const char **)(w + 1);
    p = (char *)(w->groups + n);
    json_array_foreach(g, i, v) {
        size_t len = strlen(json_string_value(v)) + 1;
        memcpy(p, json_string_value(v), len);
        w->groups[w->n_groups++] = p;
        p += len;
    }
    grid_scopes_parse(scope, &w->scopes, &w->capabilities);
    if (!w->capabilities) /* WLCG 2.2.3: groups decide, as configured */
        w->scopes = is->group_scopes;
    w->iat = iat;
    w->exp = exp;
    return w;
}

/* An unknown kid: fetch the issuer's keys again, at most once a minute. */
static void want_keys(struct grid_issuer *is)
{
    if (!is->jwks_url)
        return;
    pthread_mutex_lock(&is->lock);
    is->want = 1;
    pthread_mutex_unlock(&is->lock);
    fetch_wake();
}

static int verify_new(const char *token, time_t now, struct grid_who **out,
                      struct grid_claimed *claimed, struct loom_error *err)
{
    struct grid_issuers *set = NULL;
    struct grid_keyset *ks = NULL;
    const struct grid_key *key;
    struct grid_issuer *is;
    time_t iat = 0, exp = 0;
    struct jwt j;
    int rc = -1;

    if (jwt_parse(token, &j, err) < 0)
        goto out;
    set = issuers_get();
    if (!(is = issuers_find(set, j.iss))) {
        loom_error_set(err, LOOM_EAUTH, "token refused: unknown issuer "
                       "'%.255s' (no [issuer] of loom.conf has that url)",
                       j.iss ? j.iss : "(no iss)");
        goto out;
    }
    if (!(ks = issuer_keys(is))) {
        pthread_mutex_lock(&is->lock);
        loom_error_set(err, LOOM_EAUTH, "token refused: issuer %s has no "
                       "keys yet (%s%s)", is->name,
                       is->last_error[0] ? "last fetch: " : "the first "
                       "fetch of its jwks_url is under way",
                       is->last_error);
        pthread_mutex_unlock(&is->lock);
        want_keys(is);
        goto out;
    }
    if (!(key = keyset_find(ks, j.kid))) {
        loom_error_set(err, LOOM_EAUTH, "token refused: issuer %s has no "
                       "key '%.128s'%s", is->name, j.kid ? j.kid : "",
                       j.kid ? "" : " (the token names none, and the "
                                    "issuer has several)");
        want_keys(is);
        goto out;
    }
    if (jwt_verify_sig(&j, key, err) < 0 ||
        times_ok(j.claims, now, &iat, &exp, err) < 0 ||
        aud_ok(json_object_get(j.claims, "aud"), is, err) < 0 ||
        sub_ok(j.sub, err) < 0 || version_ok(j.claims, err) < 0)
        goto out;
    if (!(*out = who_new(&j, is, iat, exp, err)))
        goto out;
    rc = 0;
out:
    if (rc < 0 && claimed) {
        snprintf(claimed->iss, sizeof(claimed->iss), "%.255s",
                 j.iss ? j.iss : "");
        snprintf(claimed->sub, sizeof(claimed->sub), "%.255s",
                 j.sub ? j.sub : "");
    }
    keyset_unref(ks);
    issuers_put(set);
    jwt_fini(&j);
    return rc;
}

int grid_verify(const char *token, time_t now, struct grid_who **out,
                struct grid_claimed *claimed, struct loom_error *err)
{
    unsigned char md[32];
    unsigned int mdlen = 0;
    size_t len = strnlen(token, JWT_MAX + 1);

    *out = NULL;
    if (claimed)
        claimed->iss[0] = claimed->sub[0] = '\0';
    if (len <= JWT_MAX &&
        EVP_Digest(token, len, md, &mdlen, EVP_sha256(), NULL) == 1 &&
        (*out = tcache_get(md, now)))
        return 0;
    if (verify_new(token, now, out, claimed, err) < 0)
        return -1;
    if (mdlen == 32)
        tcache_put(md, *out);
    return 0;
}
