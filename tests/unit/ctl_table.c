/* ctl_table.c - unit tests of loomctl's tables and of the rounding of the
 * times that loomctl status shows. */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/ctl/table.h"
#include "tests/lib/tap.h"

typedef int table_f(FILE *out, const json_t *items, time_t now,
                    struct loom_error *err);

/* What table prints for the JSON array text items (a new string). */
static char *print_of(table_f *table, const char *items)
{
    struct loom_error err;
    json_t *a = json_loads(items, 0, NULL);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!a || !f || table(f, a, 0, &err) < 0) {
        if (f)
            fclose(f);
        json_decref(a);
        free(buf);
        return strdup("(failed)");
    }
    fclose(f);
    json_decref(a);
    return buf;
}

static void t_clusters(void)
{
    char *out = print_of(client_table_clusters,
        "[{\"name\":\"local\",\"adaptor\":\"local\",\"model\":"
        "\"disabled-scheduler\",\"unpinned_jobs\":true,\"state\":\"up\","
        "\"nodes\":4,\"last_poll\":null,\"error\":null},"
        "{\"name\":\"sim64\",\"adaptor\":\"sim\",\"model\":"
        "\"disabled-scheduler\",\"unpinned_jobs\":false,\"state\":\"up\","
        "\"nodes\":64,\"last_poll\":null,\"error\":null}]");

    is_str(out,
           "CLUSTER ADAPTOR STATE NODES JOBS   LAST_POLL ERROR\n"
           "local   local   up        4 any    -         -\n"
           "sim64   sim     up       64 pinned -         -\n",
           "clusters: which jobs each takes, no start model");
    free(out);
}

static void t_nodes(void)
{
    char *out = print_of(client_table_nodes,
        "[{\"name\":\"n1\",\"cluster\":\"s\",\"state\":\"reserved\","
        "\"cpus\":4,\"cpus_alloc\":0,\"memory_mb\":8192,\"gpus\":0,"
        "\"features\":[],\"reason\":null,\"reservation\":\"7\"},"
        "{\"name\":\"n2\",\"cluster\":\"s\",\"state\":\"mixed\","
        "\"cpus\":4,\"cpus_alloc\":1,\"memory_mb\":8192,\"gpus\":0,"
        "\"features\":[],\"reason\":null,\"reservation\":\"7\"},"
        "{\"name\":\"n3\",\"cluster\":\"s\",\"state\":\"drained\","
        "\"cpus\":4,\"cpus_alloc\":0,\"memory_mb\":8192,\"gpus\":0,"
        "\"features\":[],\"reason\":\"fan\",\"reservation\":\"7\"},"
        "{\"name\":\"n4\",\"cluster\":\"s\",\"state\":\"idle\","
        "\"cpus\":4,\"cpus_alloc\":0,\"memory_mb\":8192,\"gpus\":0,"
        "\"features\":[],\"reason\":null,\"reservation\":null}]");

    is_str(out,
           "NODE CLUSTER STATE   CPUS(A/T) MEMORY GPUS FEATURES REASON\n"
           "n1   s       resv          0/4   8192    0 -        reservation 7\n"
           "n2   s       mixed         1/4   8192    0 -        reservation 7\n"
           "n3   s       drained       0/4   8192    0 -        fan\n"
           "n4   s       idle          0/4   8192    0 -        -\n",
           "nodes: reserved shows as resv; the reservation is the reason "
           "when there is none of its own");
    free(out);
}

static void t_round_ms(void)
{
    json_t *o = json_loads(
        "{\"uptime_s\":19,\"x\":0.123456,\"scheduler\":{\"cycles\":{"
        "\"count\":10,\"last_ms\":0.1868,\"max_ms\":12.3456,"
        "\"mean_ms\":231.4,\"last_parts_ms\":{\"build\":0.1288,"
        "\"plan\":0.003696,\"apply\":0}}},\"maintenance\":{"
        "\"compare_ms_last\":0.000171,\"compare_ms_max\":9.996,"
        "\"compares\":1}}", 0, NULL);
    char *s;

    ok(o != NULL, "a status object");
    if (!o)
        return;
    client_table_round_ms(o, 0);
    s = json_dumps(o, JSON_COMPACT);
    is_str(s,
           "{\"uptime_s\":19,\"x\":0.123456,\"scheduler\":{\"cycles\":{"
           "\"count\":10,\"last_ms\":\"0.19\",\"max_ms\":\"12.3\","
           "\"mean_ms\":\"231\",\"last_parts_ms\":{\"build\":\"0.13\","
           "\"plan\":\"<0.01\",\"apply\":0}}},\"maintenance\":{"
           "\"compare_ms_last\":\"<0.01\",\"compare_ms_max\":\"10.0\","
           "\"compares\":1}}",
           "times in ms rounded (0.19, 12.3, 231, <0.01); other numbers "
           "as they were");
    free(s);
    json_decref(o);
}

int main(void)
{
    t_clusters();
    t_nodes();
    t_round_ms();
    return done_testing();
}
