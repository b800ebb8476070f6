/* vec.c - growing an array in place. */
/* SPDX-License-Identifier: MIT */
#include "core/vec.h"

#include <stdlib.h>
#include <string.h>

int vec_grow(void **v, size_t *cap, size_t need, size_t elem, size_t first)
{
    size_t n = *cap ? *cap : (first ? first : 1);
    void *nv;

    if (need <= *cap)
        return 0;
    while (n < need)
        n *= 2;
    nv = realloc(*v, n * elem);
    if (!nv)
        return -1;
    memset((char *)nv + *cap * elem, 0, (n - *cap) * elem);
    *v = nv;
    *cap = n;
    return 0;
}
