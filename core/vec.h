/* vec.h - growing an array in place: the one helper every growable array
 * of Loom uses. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_VEC_H
#define LOOM_CORE_VEC_H

#include <stddef.h>

/* Make *v (of *cap elements of elem bytes) hold at least need elements,
 * doubling from first (when *cap is 0); new elements are zeroed. 0, or -1
 * when out of memory (*v and *cap unchanged). */
int vec_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first);

#endif
