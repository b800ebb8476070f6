/* fuzz_job_request.c - the body of POST /v1/jobs (scheduler/job.c
 * job_from_request): a job it takes must render, and the rendering must
 * read back (job_from_doc) to the same rendering, as the store does. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>

#include "core/jsonx.h"
#include "scheduler/job.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct loom_error err;
    struct job *j, *back;
    size_t priv[2], priv2[2];
    char *text, *again;
    json_t *body, *doc;

    fuzz_quiet();
    body = jx_parse_object((const char *)data, size, &err);
    j = body ? job_from_request(body, "fuzz", "nobody", "local", &err) : NULL;
    json_decref(body);
    if (!j)
        return 0;
    j->id = 1; /* as the committer gives them */
    j->submit_time = 1700000000;
    if (!(text = job_render(j, priv)) || priv[0] + priv[1] > strlen(text))
        abort();
    if (!(doc = json_loads(text, 0, NULL)))
        abort(); /* Loom rendered what is not JSON */
    if (!(back = job_from_doc(doc, &err)))
        abort(); /* a job taken does not read back */
    if (!(again = job_render(back, priv2)) || strcmp(text, again) != 0)
        abort(); /* ... or reads back as another */
    free(again);
    job_destroy(back);
    json_decref(doc);
    free(text);
    job_destroy(j);
    return 0;
}
