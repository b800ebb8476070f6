#!/usr/bin/env bash
# soak.sh - loomd under a steady load for SOAK_MINUTES (default 60): 50
# submits and 200 reads a second (SOAK_SUBMITS, SOAK_READS) to a local and
# a sim cluster, one job in ten local, with the scheduler and the
# maintenance cycle running (a rule repairs the sim nodes that report a
# drifted kernel, one report every 2 s among half of them). Prints loomd's
# RSS and descriptors after the warm-up (SOAK_WARMUP_S, default 120) and at
# the end, its growth, and the submits and reads done per second and their
# p50 and p99, in the first and the last SOAK_WINDOW_S (default 120) of the
# run. tests/lib/soak.sh and soak.py do the work;
# tests/integration/9009-soak.t is a 3-minute run with bounds.
# SOAK_LEASE_S (default 10) is loomd's lease_s, SOAK_LOG_LEVEL (info) its
# log_level (tests/lib/soak.sh).
# On a shared machine the figures are meaningful as start against end.
# Run as root from a build directory:
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/soak.sh
# Needs PostgreSQL and python3.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/soak.sh"

# The run, in braces and ending with exit: bash reads all of it before it
# begins, so that an edit of this file during the hour cannot end it.
{
MINUTES=${SOAK_MINUTES:-60}
WARMUP=${SOAK_WARMUP_S:-120}
WINDOW=${SOAK_WINDOW_S:-120}

soak_start || { echo "soak.sh: loomd did not start" >&2; exit 1; }
echo "# soak: $MINUTES min, ${SOAK_SUBMITS:-50} submits/s, ${SOAK_READS:-200} reads/s, loomd pid $LOOMD_PID"
soak_run $((MINUTES * 60)) "$WARMUP" "$WINDOW" "${SOAK_SUBMITS:-50}" \
    "${SOAK_READS:-200}" || { echo "soak.sh: the load failed" >&2; exit 1; }
soak_table
api GET /v1/maintenance >/dev/null
echo "maintenance requests: $(py 'len(d["items"])' "$BODY")," \
    "done: $(py 'len([m for m in d["items"] if m["state"] == "done"])' "$BODY")"
loomd_stop
echo "loomd stopped with status $?"
exit
}
