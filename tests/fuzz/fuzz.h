/* fuzz.h - what the fuzz targets share: quiet logs, the input as a string. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_TESTS_FUZZ_H
#define LOOM_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a NUL-terminated string (a NUL inside ends it early, as it
 * would for the parser's real caller). New; the caller frees it. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);

    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Loom's logs would drown the fuzzer's output: errors only. */
static inline void fuzz_quiet(void)
{
    static int done;

    if (!done)
        log_set_level(LOG_CRIT);
    done = 1;
}

#endif
