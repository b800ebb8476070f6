/* core_metrics.c - the recorded families as Prometheus text: histograms,
 * escaping, the ceiling of series; jobs counted by the job table's builder
 * with the accounts beyond the top N folded into "other". */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/jobcount.h"
#include "core/metrics.h"
#include "core/snapshot.h"
#include "tests/lib/tap.h"

static char *render(void)
{
    struct metrics_out o = {0};

    metrics_render(&o);
    jobcount_render(&o);
    return o.p;
}

/* The value of the sample line that begins with prefix, or -1. */
static double value(const char *text, const char *prefix)
{
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
        if (!strncmp(p, prefix, strlen(prefix)) && p[strlen(prefix)] == ' ')
            return atof(p + strlen(prefix) + 1);
    return -1;
}

static struct jview *view(int64_t id, const char *state, const char *account)
{
    return jview_create(id, state, "local", "alice", NULL, account, "c1",
                        strdup("{}"), NULL);
}

int main(void)
{
    const char *v[3] = {"GET", "/v1/jobs/{id}", "2xx"};
    const char *odd[2] = {"c\"1\\\n", "jobs"};
    const char *attrs[3] = {"kernel", "os_image", "bios"};
    double n[3] = {5, 2, 1};
    struct jobtab_builder b;
    char name[32], *t;

    metrics_observe(METRICS_HTTP_SECONDS, v, 0.0003);
    metrics_observe(METRICS_HTTP_SECONDS, v, 0.02);
    metrics_observe(METRICS_HTTP_SECONDS, v, 100);
    metrics_add(METRICS_ADAPTOR_OP_FAILURES, odd, 2);
    metrics_replace(METRICS_MISMATCHES, attrs, n, 3);
    t = render();
    ok(strstr(t, "# HELP loom_http_request_seconds ") &&
           strstr(t, "# TYPE loom_http_request_seconds histogram\n"),
       "a histogram: HELP and TYPE");
    is_int(value(t, "loom_http_request_seconds_bucket{method=\"GET\","
                    "route=\"/v1/jobs/{id}\",code=\"2xx\",le=\"0.0001\"}"),
           0, "le 0.0001: none");
    is_int(value(t, "loom_http_request_seconds_bucket{method=\"GET\","
                    "route=\"/v1/jobs/{id}\",code=\"2xx\",le=\"0.0005\"}"),
           1, "le 0.0005: one");
    is_int(value(t, "loom_http_request_seconds_bucket{method=\"GET\","
                    "route=\"/v1/jobs/{id}\",code=\"2xx\",le=\"60\"}"),
           2, "le 60: two (cumulative)");
    is_int(value(t, "loom_http_request_seconds_bucket{method=\"GET\","
                    "route=\"/v1/jobs/{id}\",code=\"2xx\",le=\"+Inf\"}"),
           3, "le +Inf: all three");
    is_int(value(t, "loom_http_request_seconds_count{method=\"GET\","
                    "route=\"/v1/jobs/{id}\",code=\"2xx\"}"),
           3, "_count");
    ok(value(t, "loom_http_request_seconds_sum{method=\"GET\","
                "route=\"/v1/jobs/{id}\",code=\"2xx\"}") > 100.02,
       "_sum");
    is_int(value(t, "loom_adaptor_op_failures_total{cluster=\"c\\\"1\\\\\\n\","
                    "op=\"jobs\"}"),
           2, "a label value with \", \\ and a newline, escaped");
    is_int(value(t, "loom_sched_cycle_seconds_count"), 0,
           "a family without labels shows its zero series");
    is_int(value(t, "loom_maintenance_requests{state=\"in-progress\"}"), 0,
           "every maintenance state, zeros included");
    is_int(value(t, "loom_auth_verifications_total{kind=\"certificate\","
                    "result=\"ok\"}"),
           0, "every kind of credential, zeros included");
    is_int(value(t, "loom_mismatches{attribute=\"kernel\"}"), 5,
           "gauges replaced whole");
    free(t);

    for (int i = 0; i < 200; i++) {
        const char *lv[1] = {name};
        snprintf(name, sizeof(name), "attr%d", i);
        metrics_add(METRICS_MISMATCHES, lv, 1);
    }
    t = render();
    ok(value(t, "loom_mismatches{attribute=\"other\"}") > 100,
       "past the ceiling, new series count as \"other\"");
    is_int(value(t, "loom_mismatches{attribute=\"attr199\"}"), -1,
           "... and have none of their own");
    free(t);

    /* jobs: alice has 3, bob 2, carol 1; the top 2 keep their names */
    jobcount_top_set(2);
    jobtab_builder_init(&b);
    jobtab_builder_set(&b, view(1, "pending", "alice"));
    jobtab_builder_set(&b, view(2, "pending", "alice"));
    jobtab_builder_set(&b, view(3, "running", "alice"));
    jobtab_builder_set(&b, view(4, "pending", "bob"));
    jobtab_builder_set(&b, view(5, "pending", "bob"));
    jobtab_builder_set(&b, view(6, "pending", "carol"));
    jobtab_builder_set(&b, view(2, "completed", "alice"));
    jobtab_builder_set(&b, view(7, "pending", "dave"));
    jobtab_builder_clear(&b, 7);
    t = render();
    is_int(value(t, "loom_jobs{state=\"pending\",cluster=\"c1\","
                    "source=\"local\",account=\"alice\"}"),
           1, "alice: one pending (the other completed)");
    is_int(value(t, "loom_jobs{state=\"completed\",cluster=\"c1\","
                    "source=\"local\",account=\"alice\"}"),
           1, "alice: one completed");
    is_int(value(t, "loom_jobs{state=\"pending\",cluster=\"c1\","
                    "source=\"local\",account=\"bob\"}"),
           2, "bob: two pending");
    is_int(value(t, "loom_jobs{state=\"pending\",cluster=\"c1\","
                    "source=\"local\",account=\"other\"}"),
           1, "carol (third) and dave (gone) fold into other: 1");
    is_int(value(t, "loom_jobs{state=\"held\",cluster=\"c1\","
                    "source=\"local\",account=\"bob\"}"),
           0, "every state, zeros included");
    is_int(value(t, "loom_jobs{state=\"pending\",cluster=\"c1\","
                    "source=\"local\",account=\"carol\"}"),
           -1, "carol has no series of her own");
    free(t);
    jobcount_top_set(20);
    t = render();
    is_int(value(t, "loom_jobs{state=\"pending\",cluster=\"c1\","
                    "source=\"local\",account=\"carol\"}"),
           1, "with a top 20, carol has her own");
    free(t);
    jobtab_builder_fini(&b);
    metrics_reset();
    jobcount_reset();
    return done_testing();
}
