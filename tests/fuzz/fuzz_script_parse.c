/* fuzz_script_parse.c - what a script pack answers (adaptors/
 * script_parse.c): the nodes, jobs and queues lists, from JSON. The first
 * byte chooses the list. */
/* SPDX-License-Identifier: MIT */
#include <jansson.h>

#include "adaptors/adaptor.h"
#include "adaptors/script.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cl_node_list nodes = {0};
    struct cl_job_list jobs = {0};
    struct cl_queue_list queues = {0};
    struct loom_error err;
    json_t *j;
    int complete = 0;

    fuzz_quiet();
    if (size < 1)
        return 0;
    j = json_loadb((const char *)data + 1, size - 1, JSON_DECODE_ANY, NULL);
    if (!j)
        return 0;
    switch (data[0] % 3) {
    case 0: script_parse_nodes(j, &nodes, &err); break;
    case 1: script_parse_jobs(j, &jobs, &complete, &err); break;
    default: script_parse_queues(j, &queues, &err); break;
    }
    cl_node_list_fini(&nodes);
    cl_job_list_fini(&jobs);
    cl_queue_list_fini(&queues);
    json_decref(j);
    return 0;
}
