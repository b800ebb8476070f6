/* opstats.h - how long each cluster's adaptor operations take. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_OPSTATS_H
#define LOOM_CORE_OPSTATS_H

#include <stddef.h>

/* Record one call of op on cluster that took seconds (ok = it succeeded).
 * Any thread. Clusters and ops are kept by name (at most 64 pairs). */
void opstats_record(const char *cluster, const char *op, double seconds,
                    int ok);

/* Append Prometheus text for every pair, each family whole with its HELP
 * and TYPE: the summary loom_adaptor_op_seconds (quantiles 0.5 and 0.99
 * over the last 256 calls, _sum and _count), then the counter
 * loom_adaptor_op_failures_total. Nothing before the first call. Returns
 * the bytes written (as snprintf, never past n). */
size_t opstats_render(char *out, size_t n);

#endif
