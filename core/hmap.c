/* hmap.c - open-addressing string hash map with tombstone-free deletion. */
/* SPDX-License-Identifier: MIT */
#include "core/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hmap_slot {
    char *key;
    void *value;
    uint64_t hash;
};

uint64_t hmap_hash(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

static uint64_t hash_str(const char *s)
{
    return hmap_hash(s, strlen(s)) | 1; /* 0 marks an empty slot */
}

void hmap_init(struct hmap *m)
{
    memset(m, 0, sizeof(*m));
}

void hmap_fini(struct hmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].hash)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

void hmap_fini_values(struct hmap *m, void (*value_free)(void *))
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].hash)
            value_free(m->slots[i].value);
    hmap_fini(m);
}

static size_t find_slot(const struct hmap *m, const char *key, uint64_t h)
{
    size_t i = h & (m->cap - 1);

    while (m->slots[i].hash &&
           (m->slots[i].hash != h || strcmp(m->slots[i].key, key) != 0))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static int grow(struct hmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 16;
    struct hmap_slot *old = m->slots, *slots = calloc(cap, sizeof(*slots));
    size_t old_cap = m->cap;

    if (!slots)
        return -1;
    m->slots = slots;
    m->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].hash)
            m->slots[find_slot(m, old[i].key, old[i].hash)] = old[i];
    free(old);
    return 0;
}

int hmap_put(struct hmap *m, const char *key, void *value)
{
    uint64_t h = hash_str(key);
    size_t i;

    if ((m->n + 1) * 4 > m->cap * 3 && grow(m) < 0)
        return -1;
    i = find_slot(m, key, h);
    if (!m->slots[i].hash) {
        char *k = strdup(key);
        if (!k)
            return -1;
        m->slots[i].key = k;
        m->slots[i].hash = h;
        m->n++;
    }
    m->slots[i].value = value;
    return 0;
}

void *hmap_get(const struct hmap *m, const char *key)
{
    size_t i;

    if (!m->cap)
        return NULL;
    i = find_slot(m, key, hash_str(key));
    return m->slots[i].hash ? m->slots[i].value : NULL;
}

void *hmap_del(struct hmap *m, const char *key)
{
    size_t i, j;
    void *old;

    if (!m->cap)
        return NULL;
    i = find_slot(m, key, hash_str(key));
    if (!m->slots[i].hash)
        return NULL;
    old = m->slots[i].value;
    free(m->slots[i].key);
    m->slots[i].key = NULL;
    m->slots[i].hash = 0;
    m->n--;
    /* Re-insert the rest of the cluster so lookups never stop early. */
    for (j = (i + 1) & (m->cap - 1); m->slots[j].hash;
         j = (j + 1) & (m->cap - 1)) {
        struct hmap_slot s = m->slots[j];
        m->slots[j].hash = 0;
        m->slots[find_slot(m, s.key, s.hash)] = s;
    }
    return old;
}

void *hmap_slot_value(const struct hmap *m, size_t i)
{
    return i < m->cap && m->slots[i].hash ? m->slots[i].value : NULL;
}

const char *hmap_slot_key(const struct hmap *m, size_t i)
{
    return i < m->cap && m->slots[i].hash ? m->slots[i].key : NULL;
}
