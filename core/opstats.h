/* opstats.h - how long each cluster's adaptor operations take. */
/* SPDX-License-Identifier: MIT */
#ifndef LOOM_CORE_OPSTATS_H
#define LOOM_CORE_OPSTATS_H

/* Record one call of op on cluster that took seconds (ok = it succeeded):
 * the histogram loom_adaptor_op_seconds and the counter
 * loom_adaptor_op_failures_total of GET /metrics (core/metrics.h). Any
 * thread. */
void opstats_record(const char *cluster, const char *op, double seconds,
                    int ok);

/* Record Loom's own part of a call of op on cluster that went to its
 * cluster system over HTTP: the call's time less the requests' own
 * (struct adaptor_call's cms_s), in the histogram
 * loom_adaptor_own_seconds. Any thread. */
void opstats_record_own(const char *cluster, const char *op,
                        double seconds);

#endif
