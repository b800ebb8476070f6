/* issuer.h - the configured issuers as grid/ keeps them, with their keys
 * and the state of their fetches. Private to grid/. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_GRID_ISSUER_H
#define LOOM_GRID_ISSUER_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "core/strv.h"
#include "grid/grid.h"
#include "grid/jwt.h"

#define WLCG_ANY_AUDIENCE "https://wlcg.cern.ch/jwt/v1/any"
#define KID_FETCH_MIN_S 60 /* an unknown kid fetches at most this often */

struct grid_issuer {
    char name[GRID_ISSUER_NAME_MAX + 1];
    char url[LOOM_GRID_ISSUER_MAX + 1]; /* what its tokens' iss is */
    struct strv audiences;  /* aud values taken */
    char *pem_file, *jwks_file, *jwks_url, *jwks_ca_file; /* one of the
                                                              first three */
    long refresh_s;         /* jwks_url: fetched this often */
    char groups_claim[64];  /* default wlcg.groups */
    unsigned group_scopes;  /* what a token without capabilities may do */
    struct strv gateways;   /* Loom gateway subjects that may submit for
                               its identities */
    /* its keys and their fetches, under lock */
    pthread_mutex_t lock;
    struct grid_keyset *keys; /* or NULL: none yet */
    time_t keys_at;           /* when they were read or fetched */
    double next_fetch;        /* time_mono() of the next periodic fetch */
    double last_try;          /* time_mono() of the last fetch, or 0 */
    int want;                 /* an unknown kid asked for a fetch */
    char last_error[700];     /* of the last fetch, "" when it worked */
    unsigned long fetches, failures;
};

/* A configuration's issuers, shared by reference. */
struct grid_issuers {
    atomic_int refs;
    size_t n;
    struct grid_issuer *v;
};

/* The installed set (a reference; issuers_put it), never NULL after the
 * first install (an empty set then). */
struct grid_issuers *issuers_get(void);
void issuers_put(struct grid_issuers *set); /* NULL-safe */
/* The issuer whose url is iss, or NULL. Borrowed from set. */
struct grid_issuer *issuers_find(struct grid_issuers *set, const char *iss);
/* The issuer's keys (a reference, or NULL when there are none yet). */
struct grid_keyset *issuer_keys(struct grid_issuer *is);
/* Replace the issuer's keys (takes ks) and count a key change. */
void issuer_keys_set(struct grid_issuer *is, struct grid_keyset *ks);
/* Changes with every install and every change of any issuer's keys: a
 * cached verification is good while it stays the same. */
unsigned grid_keys_gen(void);

/* fetch.c: wake the fetcher (an unknown kid, or a new set). */
void fetch_wake(void);
int fetch_start(struct loom_error *err);
void fetch_stop(void);

/* tcache.c: the verified-token cache. */
struct grid_who *tcache_get(const unsigned char md[32], time_t now);
void tcache_put(const unsigned char md[32], struct grid_who *w);
void tcache_counts(unsigned long *hits, unsigned long *misses,
                   unsigned long *entries);
void tcache_clear(void);

/* audit.c */
int audit_start(const char *conninfo, struct loom_error *err);
void audit_stop(void);
void audit_counts(unsigned long *written, unsigned long *dropped,
                  unsigned long *queued);

#endif
