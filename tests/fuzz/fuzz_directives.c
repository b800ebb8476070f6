/* fuzz_directives.c - a job script's #SBATCH, #$ and #PBS lines
 * (core/directives*.c): read into a request in strict or warn mode (the
 * first byte chooses), then the copies a cluster system gets. What the
 * neutralised copy holds, Loom reads no directive from. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>

#include "core/directives.h"
#include "tests/fuzz/fuzz.h"

/* body {"script": script} with its directives applied in mode: 0 or -1,
 * with the record and the warnings (new, or NULL). */
static int apply(const char *script, enum directives_mode mode,
                 json_t **rec, json_t **warns)
{
    json_t *body = json_pack("{s:s}", "script", script);
    struct loom_error err = {0};
    int rc;

    if (!body) /* not UTF-8: the API refuses such a body before */
        return -2;
    rc = directives_apply(body, mode, rec, warns, &err);
    if (rc < 0 && (err.kind == LOOM_OK || !err.message[0]))
        abort(); /* a refusal says why */
    json_decref(body);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum directives_mode mode;
    json_t *rec = NULL, *warns = NULL;
    char *script, *copy;

    fuzz_quiet();
    if (size < 1 || size > 65536)
        return 0;
    mode = data[0] & 1 ? DIRECTIVES_WARN : DIRECTIVES_STRICT;
    script = fuzz_string(data + 1, size - 1);
    if (apply(script, mode, &rec, &warns) == -2) {
        free(script);
        return 0;
    }
    json_decref(rec);
    json_decref(warns);
    rec = warns = NULL;
    if (!(copy = directives_neutralise(script)))
        abort();
    if (apply(copy, DIRECTIVES_STRICT, &rec, &warns) != 0 || rec || warns)
        abort(); /* sbatch or qsub would read a directive a second time */
    free(copy);
    if (!(copy = directives_strip(script)))
        abort();
    free(copy);
    free(script);
    return 0;
}
