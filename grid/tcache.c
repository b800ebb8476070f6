/* tcache.c - tokens of outside issuers verified before, by the SHA-256 of
 * the token: a bounded, direct-mapped table (a token that collides with
 * another only costs a verification). */
/* SPDX-License-Identifier: MIT */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "grid/issuer.h"

#define SLOTS 8192  /* tokens kept at most */
#define SHARDS 64   /* locks, by slot */

struct slot {
    unsigned char md[32];
    struct grid_who *w; /* or NULL: empty */
    unsigned gen;       /* grid_keys_gen() when it was verified */
};

static struct {
    struct slot s[SLOTS];
    pthread_mutex_t lock[SHARDS];
    atomic_ulong hits, misses, entries;
} C;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
    for (size_t i = 0; i < SHARDS; i++)
        pthread_mutex_init(&C.lock[i], NULL);
}

static size_t slot_of(const unsigned char md[32])
{
    pthread_once(&once, init);
    return ((size_t)md[0] << 16 | (size_t)md[1] << 8 | md[2]) % SLOTS;
}

struct grid_who *tcache_get(const unsigned char md[32], time_t now)
{
    size_t i = slot_of(md);
    pthread_mutex_t *l = &C.lock[i % SHARDS];
    struct grid_who *w = NULL, *drop = NULL;
    struct slot *s = &C.s[i];

    pthread_mutex_lock(l);
    if (s->w && !memcmp(s->md, md, 32)) {
        if (now < s->w->exp && s->gen == grid_keys_gen()) {
            w = grid_who_ref(s->w);
        } else { /* expired, or the keys changed: verify it again */
            drop = s->w;
            s->w = NULL;
            atomic_fetch_sub(&C.entries, 1);
        }
    }
    pthread_mutex_unlock(l);
    grid_who_unref(drop);
    atomic_fetch_add(w ? &C.hits : &C.misses, 1);
    return w;
}

void tcache_put(const unsigned char md[32], struct grid_who *w)
{
    size_t i = slot_of(md);
    pthread_mutex_t *l = &C.lock[i % SHARDS];
    struct slot *s = &C.s[i];
    struct grid_who *old;

    pthread_mutex_lock(l);
    old = s->w;
    memcpy(s->md, md, 32);
    s->w = grid_who_ref(w);
    s->gen = grid_keys_gen();
    if (!old)
        atomic_fetch_add(&C.entries, 1);
    pthread_mutex_unlock(l);
    grid_who_unref(old);
}

void tcache_counts(unsigned long *hits, unsigned long *misses,
                   unsigned long *entries)
{
    *hits = atomic_load(&C.hits);
    *misses = atomic_load(&C.misses);
    *entries = atomic_load(&C.entries);
}

void tcache_clear(void)
{
    pthread_once(&once, init);
    for (size_t i = 0; i < SLOTS; i++) {
        pthread_mutex_t *l = &C.lock[i % SHARDS];
        struct grid_who *w;
        pthread_mutex_lock(l);
        w = C.s[i].w;
        C.s[i].w = NULL;
        pthread_mutex_unlock(l);
        if (w) {
            atomic_fetch_sub(&C.entries, 1);
            grid_who_unref(w);
        }
    }
}
