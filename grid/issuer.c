/* issuer.c - the [issuer NAME] sections: read, installed, looked up; the
 * keys of each, and what GET /v1/runtime shows of them. */
/* SPDX-License-Identifier: MIT */
#include "grid/issuer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jsonw.h"
#include "core/log.h"
#include "core/timeutil.h"

#define JWKS_FILE_MAX (1 << 20)
#define GROUP_SCOPES_DEFAULT \
    "compute.read compute.modify compute.create compute.cancel"

static struct {
    pthread_rwlock_t lock;
    struct grid_issuers *cur;
    atomic_uint gen;
} I = {PTHREAD_RWLOCK_INITIALIZER, NULL, 0};

static void issuer_fini(struct grid_issuer *is)
{
    strv_fini(&is->audiences);
    strv_fini(&is->gateways);
    free(is->pem_file);
    free(is->jwks_file);
    free(is->jwks_url);
    free(is->jwks_ca_file);
    keyset_unref(is->keys);
    pthread_mutex_destroy(&is->lock);
}

void grid_issuers_free(struct grid_issuers *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        issuer_fini(&set->v[i]);
    free(set->v);
    free(set);
}

void issuers_put(struct grid_issuers *set)
{
    if (set && atomic_fetch_sub(&set->refs, 1) == 1)
        grid_issuers_free(set);
}

struct grid_issuers *issuers_get(void)
{
    struct grid_issuers *s;

    pthread_rwlock_rdlock(&I.lock);
    if ((s = I.cur))
        atomic_fetch_add(&s->refs, 1);
    pthread_rwlock_unlock(&I.lock);
    return s;
}

struct grid_issuer *issuers_find(struct grid_issuers *set, const char *iss)
{
    for (size_t i = 0; set && iss && i < set->n; i++)
        if (!strcmp(set->v[i].url, iss))
            return &set->v[i];
    return NULL;
}

struct grid_keyset *issuer_keys(struct grid_issuer *is)
{
    struct grid_keyset *ks;

    pthread_mutex_lock(&is->lock);
    ks = is->keys ? keyset_ref(is->keys) : NULL;
    pthread_mutex_unlock(&is->lock);
    return ks;
}

void issuer_keys_set(struct grid_issuer *is, struct grid_keyset *ks)
{
    struct grid_keyset *old;

    pthread_mutex_lock(&is->lock);
    old = is->keys;
    is->keys = ks;
    is->keys_at = time(NULL);
    pthread_mutex_unlock(&is->lock);
    keyset_unref(old);
    atomic_fetch_add(&I.gen, 1);
}

unsigned grid_keys_gen(void)
{
    return atomic_load(&I.gen);
}

int grid_enabled(void)
{
    struct grid_issuers *s = issuers_get();
    int on = s && s->n > 0;

    issuers_put(s);
    return on;
}

/* A space-separated list into v. */
static int words(const char *list, struct strv *v)
{
    const char *p = list;

    while (p && *p) {
        size_t n;
        char w[LOOM_GRID_ISSUER_MAX + 1];
        p += strspn(p, " \t");
        n = strcspn(p, " \t");
        if (!n)
            break;
        if (n >= sizeof(w))
            return -1;
        memcpy(w, p, n);
        w[n] = '\0';
        if (strv_push(v, w) < 0)
            return -1;
        p += n;
    }
    return 0;
}

static int dup_opt(struct conf_section *s, const char *key, char **out,
                   struct loom_error *err)
{
    const char *v;

    if (conf_get_str(s, key, NULL, &v, err) < 0)
        return -1;
    if (v && !*v)
        return loom_error_set(err, LOOM_EINVAL, "%s:%d: [issuer %s] %s is "
                              "empty", s->file, s->line, s->name, key);
    if (v && !(*out = strdup(v)))
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    return 0;
}

/* Read a whole small file. */
static char *slurp(const char *path, size_t *len, struct loom_error *err)
{
    FILE *f = fopen(path, "re");
    char *buf = f ? malloc(JWKS_FILE_MAX + 1) : NULL;
    size_t n = 0;

    if (!f) {
        loom_error_set(err, LOOM_EINVAL, "jwks_file %s: %s", path,
                       strerror(errno));
        return NULL;
    }
    if (buf)
        n = fread(buf, 1, JWKS_FILE_MAX + 1, f);
    if (!buf || ferror(f) || n > JWKS_FILE_MAX) {
        loom_error_set(err, LOOM_EINVAL, "jwks_file %s: %s", path,
                       !buf ? "out of memory" : ferror(f) ? "read error"
                                                          : "larger than 1 MiB");
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* The keys of a pem_file or jwks_file, now. */
static int load_keys(struct grid_issuer *is, const char *where,
                     struct loom_error *err)
{
    struct grid_keyset *ks = NULL;
    size_t len;
    char *text;

    if (is->pem_file) {
        ks = keyset_from_pem(is->pem_file, err);
    } else if (is->jwks_file && (text = slurp(is->jwks_file, &len, err))) {
        ks = keyset_from_jwks(text, len, is->jwks_file, NULL, err);
        free(text);
    }
    if (!ks)
        return loom_error_prefix(err, "%s: [issuer %s]", where, is->name);
    is->keys = ks;
    is->keys_at = time(NULL);
    return 0;
}

static int read_one(struct conf_section *s, struct grid_issuer *is,
                    struct loom_error *err)
{
    const char *url, *aud, *claim, *scopes, *gws;
    char where[300];
    int srcs, caps;

    snprintf(where, sizeof(where), "%s:%d", s->file, s->line);
    snprintf(is->name, sizeof(is->name), "%s", s->name);
    if (conf_get_str(s, "url", NULL, &url, err) < 0 ||
        conf_get_str(s, "audiences", NULL, &aud, err) < 0 ||
        dup_opt(s, "pem_file", &is->pem_file, err) < 0 ||
        dup_opt(s, "jwks_file", &is->jwks_file, err) < 0 ||
        dup_opt(s, "jwks_url", &is->jwks_url, err) < 0 ||
        dup_opt(s, "jwks_ca_file", &is->jwks_ca_file, err) < 0 ||
        conf_get_long(s, "jwks_refresh_s", 3600, 1, 7 * 86400,
                      &is->refresh_s, err) < 0 ||
        conf_get_str(s, "groups_claim", "wlcg.groups", &claim, err) < 0 ||
        conf_get_str(s, "group_scopes", GROUP_SCOPES_DEFAULT, &scopes,
                     err) < 0 ||
        conf_get_str(s, "gateways", "", &gws, err) < 0 ||
        conf_check_unused(s, err) < 0)
        return -1;
    if (!url || strncmp(url, "https://", 8) != 0 ||
        strlen(url) > LOOM_GRID_ISSUER_MAX)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] needs url = "
                              "the issuer's https:// URL (its tokens' iss, "
                              "at most %d characters)", where, is->name,
                              LOOM_GRID_ISSUER_MAX);
    snprintf(is->url, sizeof(is->url), "%s", url);
    if (!aud || words(aud, &is->audiences) < 0 || !is->audiences.n)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] needs "
                              "audiences = the aud values its tokens must "
                              "carry for this Loom (space-separated; %s "
                              "only when listed)", where, is->name,
                              WLCG_ANY_AUDIENCE);
    srcs = !!is->pem_file + !!is->jwks_file + !!is->jwks_url;
    if (srcs != 1)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] needs "
                              "exactly one of pem_file, jwks_file and "
                              "jwks_url (got %d)", where, is->name, srcs);
    if (is->jwks_url && strncmp(is->jwks_url, "https://", 8) != 0)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] jwks_url "
                              "must be an https:// URL (got '%s')", where,
                              is->name, is->jwks_url);
    if (is->jwks_ca_file && !is->jwks_url)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] "
                              "jwks_ca_file goes with jwks_url", where,
                              is->name);
    if (strlen(claim) >= sizeof(is->groups_claim) || !*claim)
        return loom_error_set(err, LOOM_EINVAL, "%s: [issuer %s] "
                              "groups_claim must be 1 to %zu characters",
                              where, is->name, sizeof(is->groups_claim) - 1);
    snprintf(is->groups_claim, sizeof(is->groups_claim), "%s", claim);
    grid_scopes_parse(scopes, &is->group_scopes, &caps);
    if (words(gws, &is->gateways) < 0)
        return loom_error_set(err, LOOM_EINTERNAL, "out of memory");
    if (!is->jwks_url && load_keys(is, where, err) < 0)
        return -1;
    return 0;
}

struct grid_issuers *grid_issuers_read(struct conf *cf,
                                       struct loom_error *err)
{
    struct grid_issuers *set = calloc(1, sizeof(*set));
    size_t n = 0;

    for (size_t i = 0; i < cf->n_sections; i++)
        n += !strcmp(cf->sections[i].kind, "issuer");
    if (!set || (n && !(set->v = calloc(n, sizeof(*set->v))))) {
        free(set);
        loom_error_set(err, LOOM_EINTERNAL, "out of memory");
        return NULL;
    }
    atomic_init(&set->refs, 1);
    for (size_t i = 0; i < cf->n_sections; i++) {
        struct conf_section *s = &cf->sections[i];
        struct grid_issuer *is = &set->v[set->n];
        if (strcmp(s->kind, "issuer") != 0)
            continue;
        pthread_mutex_init(&is->lock, NULL);
        set->n++;
        if (read_one(s, is, err) < 0)
            goto error;
        for (size_t k = 0; k + 1 < set->n; k++)
            if (!strcmp(set->v[k].url, is->url)) {
                loom_error_set(err, LOOM_EINVAL, "%s:%d: [issuer %s] has "
                               "the url of [issuer %s]: one section per "
                               "issuer", s->file, s->line, is->name,
                               set->v[k].name);
                goto error;
            }
    }
    return set;
error:
    grid_issuers_free(set);
    return NULL;
}

/* Keys fetched by the old set stay with the same issuer in the new one. */
static void carry_over(struct grid_issuers *old, struct grid_issuers *set)
{
    for (size_t i = 0; old && set && i < set->n; i++) {
        struct grid_issuer *is = &set->v[i], *o;
        if (!is->jwks_url || !(o = issuers_find(old, is->url)) ||
            !o->jwks_url || strcmp(o->jwks_url, is->jwks_url) != 0)
            continue;
        pthread_mutex_lock(&o->lock);
        is->keys = o->keys ? keyset_ref(o->keys) : NULL;
        is->keys_at = o->keys_at;
        is->last_try = o->last_try;
        is->next_fetch = o->keys ? o->next_fetch : 0;
        is->fetches = o->fetches;
        is->failures = o->failures;
        snprintf(is->last_error, sizeof(is->last_error), "%s",
                 o->last_error);
        pthread_mutex_unlock(&o->lock);
    }
}

void grid_issuers_install(struct grid_issuers *set)
{
    struct grid_issuers *old;

    pthread_rwlock_wrlock(&I.lock);
    old = I.cur;
    carry_over(old, set);
    I.cur = set;
    atomic_fetch_add(&I.gen, 1);
    pthread_rwlock_unlock(&I.lock);
    issuers_put(old);
    for (size_t i = 0; set && i < set->n; i++)
        log_info("issuer=%s url=%s keys=%s: %zu", set->v[i].name,
                 set->v[i].url,
                 set->v[i].pem_file ? set->v[i].pem_file
                 : set->v[i].jwks_file ? set->v[i].jwks_file
                                       : set->v[i].jwks_url,
                 set->v[i].keys ? set->v[i].keys->n : 0);
    fetch_wake();
}

int grid_gateway_may_assert(const char *subject, const char *iss,
                            char *issuer_name, size_t size,
                            struct loom_error *err)
{
    struct grid_issuers *set = issuers_get();
    struct grid_issuer *is = issuers_find(set, iss);
    int ok = 0;

    for (size_t i = 0; is && i < is->gateways.n; i++)
        ok |= !strcmp(is->gateways.v[i], subject);
    if (is)
        snprintf(issuer_name, size, "%s", is->name);
    issuers_put(set);
    if (!is)
        return loom_error_field(err, LOOM_EPERM, "grid_identity.issuer",
                                "no [issuer] of loom.conf has url '%.255s'",
                                iss);
    if (!ok)
        return loom_error_field(err, LOOM_EPERM, "grid_identity.issuer",
                                "gateway %s may not submit for identities "
                                "of issuer %s: it is not in that issuer's "
                                "gateways", subject, issuer_name);
    return 0;
}

static void issuer_status(struct jw *w, struct grid_issuer *is)
{
    double now = time_mono();

    pthread_mutex_lock(&is->lock);
    jw_open(w, '{');
    jw_kv_str(w, "name", is->name);
    jw_kv_str(w, "url", is->url);
    jw_kv_str(w, "keys_from", is->pem_file ? "pem_file"
                              : is->jwks_file ? "jwks_file" : "jwks_url");
    jw_key(w, "kids");
    jw_open(w, '[');
    for (size_t i = 0; is->keys && i < is->keys->n; i++)
        jw_str(w, is->keys->keys[i].kid);
    jw_close(w, ']');
    jw_kv_time(w, "keys_at", is->keys_at);
    if (is->jwks_url) {
        jw_kv_int(w, "fetches", (long long)is->fetches);
        jw_kv_int(w, "fetch_failures", (long long)is->failures);
        jw_kv_double(w, "next_fetch_in_s",
                     is->next_fetch > now ? is->next_fetch - now : 0);
        jw_kv_str(w, "last_error", is->last_error[0] ? is->last_error
                                                     : NULL);
    }
    jw_close(w, '}');
    pthread_mutex_unlock(&is->lock);
}

char *grid_status_json(void)
{
    struct grid_issuers *set = issuers_get();
    unsigned long h, m, e, wr, dr, q;
    struct jw w;

    tcache_counts(&h, &m, &e);
    audit_counts(&wr, &dr, &q);
    jw_init(&w);
    jw_open(&w, '{');
    jw_key(&w, "issuers");
    jw_open(&w, '[');
    for (size_t i = 0; set && i < set->n; i++)
        issuer_status(&w, &set->v[i]);
    jw_close(&w, ']');
    jw_key(&w, "token_cache");
    jw_open(&w, '{');
    jw_kv_int(&w, "entries", (long long)e);
    jw_kv_int(&w, "hits", (long long)h);
    jw_kv_int(&w, "misses", (long long)m);
    jw_close(&w, '}');
    jw_key(&w, "audit");
    jw_open(&w, '{');
    jw_kv_int(&w, "written", (long long)wr);
    jw_kv_int(&w, "queued", (long long)q);
    jw_kv_int(&w, "dropped", (long long)dr);
    jw_close(&w, '}');
    jw_close(&w, '}');
    issuers_put(set);
    return jw_finish(&w);
}
