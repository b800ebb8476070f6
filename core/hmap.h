/* hmap.h - a string-keyed hash map (open addressing) for in-memory indexes. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_HMAP_H
#define LOOM_CORE_HMAP_H

#include <stddef.h>
#include <stdint.h>

/* Keys are copied; values are borrowed pointers. Not thread-safe: owned by
 * one thread, or immutable once published. */
struct hmap {
    struct hmap_slot *slots;
    size_t cap, n;
};

/* The FNV-1a hash of p[0..n) (also for a version or an ETag of a text). */
uint64_t hmap_hash(const void *p, size_t n);
void hmap_init(struct hmap *m);
void hmap_fini(struct hmap *m); /* frees keys, not values */
/* As hmap_fini, and calls value_free on every value. */
void hmap_fini_values(struct hmap *m, void (*value_free)(void *));
/* Insert or replace. 0, or -1 when out of memory. */
int hmap_put(struct hmap *m, const char *key, void *value);
void *hmap_get(const struct hmap *m, const char *key);
/* Remove; returns the old value or NULL. */
void *hmap_del(struct hmap *m, const char *key);
/* Walk: the value in slot i (0 <= i < m->cap), or NULL for an empty slot.
 * The map must not change during a walk. */
void *hmap_slot_value(const struct hmap *m, size_t i);
/* The key in slot i, or NULL for an empty slot. Borrowed from m. */
const char *hmap_slot_key(const struct hmap *m, size_t i);

#endif
