/* opstats.c - adaptor operations into the metrics of their cluster. */
/* SPDX-License-Identifier: MIT */
#include "core/opstats.h"

#include "core/metrics.h"

void opstats_record(const char *cluster, const char *op, double seconds,
                    int ok)
{
    const char *v[] = {cluster, op};

    metrics_observe(METRICS_ADAPTOR_OP_SECONDS, v, seconds);
    /* every pair has its failures counted, zero included */
    metrics_add(METRICS_ADAPTOR_OP_FAILURES, v, ok ? 0 : 1);
}

void opstats_record_own(const char *cluster, const char *op, double seconds)
{
    const char *v[] = {cluster, op};

    metrics_observe(METRICS_ADAPTOR_OWN_SECONDS, v, seconds > 0 ? seconds
                                                                : 0);
}
