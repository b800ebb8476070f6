/* core_vec.c - growing arrays: what they held stays, new elements are
 * zero, below and above the size from which a grown array is new memory. */
/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>

#include "core/vec.h"
#include "tests/lib/tap.h"

/* Grow an array of longs filled 1..n to need, and check it. */
static void grow_check(size_t n, size_t need, const char *what)
{
    long *v = NULL;
    size_t cap = 0;
    size_t bad_kept = 0, bad_zero = 0;

    if (vec_grow((void **)&v, &cap, n, sizeof(*v), 4) < 0) {
        ok(0, "%s: the first growth", what);
        return;
    }
    for (size_t i = 0; i < n; i++)
        v[i] = (long)i + 1;
    is_int(vec_grow((void **)&v, &cap, need, sizeof(*v), 4), 0,
           "%s: grows", what);
    ok(cap >= need && cap % 4 == 0 && ((cap / 4) & (cap / 4 - 1)) == 0,
       "%s: to a doubling of the first size (%zu for %zu)", what, cap, need);
    for (size_t i = 0; i < cap; i++) {
        if (i < n && v[i] != (long)i + 1)
            bad_kept++;
        if (i >= n && v[i] != 0)
            bad_zero++;
    }
    is_int(bad_kept, 0, "%s: every element it held is kept", what);
    is_int(bad_zero, 0, "%s: every new element is zero", what);
    free(v);
}

int main(void)
{
    long *v = NULL, *before;
    size_t cap = 0;

    grow_check(3, 100, "small");
    grow_check(1000, 40000, "from small to large (320 KB)");
    grow_check(40000, 200000, "large to larger");

    is_int(vec_grow((void **)&v, &cap, 10, sizeof(*v), 0), 0,
           "no first size: grows from 1");
    is_int(cap, 16, "no first size: doubles from 1 (16 for 10)");
    before = v;
    is_int(vec_grow((void **)&v, &cap, 16, sizeof(*v), 0), 0,
           "room enough: nothing to do");
    ok(v == before && cap == 16, "room enough: the array stays");
    is_int(vec_grow((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v), 0), -1,
           "a size past memory is refused");
    ok(v == before && cap == 16, "refused: the array and its size stay");
    is_int(vec_grow((void **)&v, &cap, SIZE_MAX, 1, 0), -1,
           "a count no doubling reaches is refused");
    ok(v == before && cap == 16, "refused: the array and its size stay");
    free(v);
    return done_testing();
}
