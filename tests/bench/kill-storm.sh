#!/usr/bin/env bash
# kill-storm.sh - tests/integration/9006-loomd-kill-storm.t at full size:
# 10,000 keyed submits (8 clients x 1,250) to a local, a simulated and a
# real Slurm cluster, loomd SIGKILLed at 55 random points of the storm and
# started again after each; nothing acknowledged lost, nothing doubled in
# PostgreSQL, in Slurm or in the jobs' processes. Prints the test's TAP
# and its duration. LOOM_KILL_STORM_JOBS (per client) and
# LOOM_KILL_STORM_KILLS change the size. Run as root from a build directory:
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/kill-storm.sh
# Needs what the test needs (PostgreSQL, Slurm, python3).
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
export LOOM_TOP_SRCDIR LOOM_TOP_BUILDDIR
export LOOM_KILL_STORM_JOBS=${LOOM_KILL_STORM_JOBS:-1250}
export LOOM_KILL_STORM_KILLS=${LOOM_KILL_STORM_KILLS:-55}

start=$SECONDS
bash "$LOOM_TOP_SRCDIR/tests/integration/9006-loomd-kill-storm.t"
rc=$?
echo "# kill-storm: $((8 * LOOM_KILL_STORM_JOBS)) submits, $LOOM_KILL_STORM_KILLS kills: $((SECONDS - start)) s, status $rc"
exit "$rc"
