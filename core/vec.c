/* vec.c - growing an array in place. */
/* SPDX-License-Identifier: MIT */
#include "core/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* From this size up, a grown array is new memory from calloc, which
 * glibc gives from pages not touched yet: its empty tail costs no
 * resident memory until it is used (realloc and a memset would touch
 * every page of it). Below it, realloc and memset are cheaper. */
#define VEC_FRESH_BYTES (256 * 1024)

int vec_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t n = *cap ? *cap : (first ? first : 1);
    void *nv;

    if (need <= *cap)
        return 0;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return -1;
        n *= 2;
    }
    if (elem && n > SIZE_MAX / elem)
        return -1;
    if (n * elem >= VEC_FRESH_BYTES) {
        nv = calloc(n, elem);
        if (!nv)
            return -1;
        if (*cap)
            memcpy(nv, *v, *cap * elem);
        free(*v);
    } else {
        nv = realloc(*v, n * elem);
        if (!nv)
            return -1;
        memset((char *)nv + *cap * elem, 0, (n - *cap) * elem);
    }
    *v = nv;
    *cap = n;
    return 0;
}
