/* fuzz_http_target.c - the request target as a client sends it
 * (core/http_target.c): path and query taken apart and %-decoded. */
/* SPDX-License-Identifier: MIT */
#include "core/http.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *raw = fuzz_string(data, size);
    struct http_target t = {0};

    fuzz_quiet();
    if (http_target_parse(raw, &t) == 0) {
        if (t.n_query > HTTP_QUERY_MAX || !t.printable)
            abort();
        for (size_t i = 0; i < t.n_query; i++)
            if (!t.query[i].key || !t.query[i].value)
                abort();
    }
    http_target_fini(&t);
    free(raw);
    return 0;
}
