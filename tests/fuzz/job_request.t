#!/usr/bin/env bash
# job_request.t - fuzz the job request of POST /v1/jobs (scheduler/job.c
# job_from_request), rendered and read back; tests/fuzz/fuzz_job_request.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target job_request
