#!/usr/bin/env bash
# slurm-table2.sh - getNodes, getJobs, startJob on a real Slurm, measured
# three ways in one run: the Slurm command called directly, through loomd's
# script adaptor (the pack run by loomd, uncached: loomd's own timing of the
# operation from /metrics), and from loomd's snapshot (GET over HTTP).
#   make bench && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD \
#       bash ../../tests/bench/slurm-table2.sh
# (from build/release; BENCH_RUNS=30 runs each; LOOM_SCRIPTS_DIR=DIR benches
# the packs in DIR instead of the tree's, e.g. an older copy).
# SPDX-License-Identifier: MIT
#
# Like with like: "direct" is the very command the pack runs for the op
# (the formats of its lib/formats.sh; for startJob the sbatch its start
# builds for these jobs: 1 CPU, no memory, 1 h), on the same jobs, and one
# command per op because the pack needs no more here (a poll that sees a job
# newly finished other than COMPLETED adds one scontrol: none does here).
# Each way runs alone (direct and "pack alone" before loomd starts, loomd's
# polls in a quiet window of their own, its starts spaced out) and in
# loomd's rhythm: a poll every 0.25 s runs jobs, then nodes; starts come
# 0.3 s apart. Run back to back instead, every way would look faster (warm
# caches), a process-heavy one most.
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
RUNS=${BENCH_RUNS:-30}
POLL_S=0.25
START_GAP_S=0.3
export LOOM_SCRIPTS_DIR=${LOOM_SCRIPTS_DIR:-$LOOM_TOP_SRCDIR/adaptors/scripts}
PACK=$LOOM_SCRIPTS_DIR/slurm
. "$PACK/lib/formats.sh"

slurm_start 4 || exit 1

# nap SECONDS: sleep without a process (read times out on a FIFO we hold
# open), so that no sleep(1) exits while the next command is timed.
mkfifo "$T/nap"
exec 9<>"$T/nap"
nap() { read -r -t "$1" -u 9; }

# wall_us CMD...: run CMD; print its wall time in microseconds.
wall_us() {
    local t0 t1
    t0=${EPOCHREALTIME/[.,]/}
    "$@" >/dev/null 2>&1 </dev/null
    t1=${EPOCHREALTIME/[.,]/}
    echo $((t1 - t0))
}

# median: the median of the numbers (microseconds) on stdin, in ms.
median() {
    sort -n | awk '{a[NR] = $1} END {printf "%.1f", a[int((NR + 1) / 2)] / 1000}'
}

# polls WAY...: $RUNS polls of each way as loomd makes them, $POLL_S apart:
# WAY_jobs, then WAY_nodes; the ways take turns (so that a machine busy
# for a while slows all alike). Times in $T/WAY.jobs, $T/WAY.nodes.
polls() {
    local i w
    for w in "$@"; do
        : >"$T/$w.jobs"
        : >"$T/$w.nodes"
    done
    for ((i = 0; i < RUNS; i++)); do
        for w in "$@"; do
            nap "$POLL_S"
            wall_us "${w}_jobs" >>"$T/$w.jobs"
            wall_us "${w}_nodes" >>"$T/$w.nodes"
        done
    done
}

# A few jobs so that squeue has something to list.
for i in 1 2 3 4 5 6; do
    sbatch --parsable -N1 -o /dev/null --wrap 'sleep 300' >/dev/null
done

# ---- direct: the commands the pack runs ----------------------------------------
# startJob first, so that every way of getJobs lists the same jobs.
D=$T/direct
mkdir -p "$D"
printf '#!/bin/sh\nexec true\n' >"$D/job.sh"
chmod 0755 "$D/job.sh"
direct_start() {
    sbatch --parsable --comment="bench-$i" --job-name=b --nodelist=n4 \
        --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=60 \
        --chdir="$D" --output="$D/stdout" --error="$D/stderr" "$D/job.sh"
}
for ((i = 0; i < RUNS; i++)); do
    nap "$START_GAP_S"
    wall_us direct_start
done >"$T/t.start"
d_start=$(median <"$T/t.start")
JOBS_FMT=$(jobs_format)
direct_jobs() { SLURM_TIME_FORMAT=%s squeue -h -t all -o "$JOBS_FMT"; }
direct_nodes() { sinfo -h -N -O "$NODES_FORMAT"; }
# ... and the pack run by hand: what the adaptor runs, without loomd.
mkdir -p "$T/packstate"
pack_jobs() { LOOM_STATE_DIR=$T/packstate LOOM_CLUSTER=slurm "$PACK/jobs"; }
pack_nodes() { LOOM_STATE_DIR=$T/packstate LOOM_CLUSTER=slurm "$PACK/nodes"; }
polls direct pack
d_jobs=$(median <"$T/direct.jobs")
d_nodes=$(median <"$T/direct.nodes")
p_jobs=$(median <"$T/pack.jobs")
p_nodes=$(median <"$T/pack.nodes")
njobs=$(squeue -h -t all | wc -l)

# ---- through loomd's script adaptor: let it poll, then read its timings --------
pg_start || exit 1
loomd_conf <<EOF2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = $POLL_S
EOF2
loomd_start || exit 1
admin_token || exit 1
metric() {
    awk -v op="$1" '$1 ~ "^loom_adaptor_op_seconds\\{cluster=\"slurm\",op=\"" op "\",quantile=\"0.5\"" {printf "%.1f", $2 * 1000}' "$T/metrics"
}
# Polls only, on the jobs the direct commands saw: about 4 a second.
sleep "$(awk -v n="$RUNS" -v p="$POLL_S" 'BEGIN { print int(n * p + 2.5) }')"
curl -s "$LOOM_URL/metrics" >"$T/metrics"
a_nodes=$(metric nodes)
a_jobs=$(metric jobs)
for ((i = 0; i < RUNS; i++)); do
    api POST /v1/jobs '{"command":["true"],"request":{"cluster":"slurm"},"name":"b"}' >/dev/null
    sleep "$START_GAP_S"
done
for ((i = 0; i < 100; i++)); do # every job started (a few wait for CPUs)
    curl -s "$LOOM_URL/metrics" >"$T/metrics"
    [ "$(awk '$1 == "loom_adaptor_op_seconds_count{cluster=\"slurm\",op=\"start\"}" { print $2 }' "$T/metrics")" = "$RUNS" ] && break
    sleep 0.2
done
curl -s "$LOOM_URL/metrics" >"$T/metrics"
a_start=$(metric start)
n_start=$(awk '$1 == "loom_adaptor_op_seconds_count{cluster=\"slurm\",op=\"start\"}" { print $2 }' "$T/metrics")

# ---- from the snapshot ---------------------------------------------------------
# wrk on one keep-alive connection: the server's latency, not curl's start.
wrk_p50() {
    wrk -t1 -c1 -d3s --latency -H "Authorization: Bearer $TOKEN" "$1" |
        awk 'function ms(v) { if (v ~ /us$/) return v / 1000;
                              if (v ~ /ms$/) return v + 0; return v * 1000 }
             $1 == "50%" { printf "%.2f", ms($2) }'
}
command -v wrk >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
s_nodes=$(wrk_p50 "$LOOM_URL/v1/nodes?cluster=slurm")
s_jobs=$(wrk_p50 "$LOOM_URL/v1/jobs?cluster=slurm")

row() {
    printf '%-10s %10s %12s %14s %12s %12s\n' "$@"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.0fx", a / b; else print "-" }'; }
over() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }
echo
echo "Slurm $(sinfo -V | awk '{print $2}'), 4 nodes, $njobs jobs; medians of $RUNS runs in ms"
row "operation" "direct" "pack alone" "loomd adaptor" "adaptor-dir" "snapshot"
row "getNodes" "$d_nodes" "$p_nodes" "$a_nodes" "$(over "$a_nodes" "$d_nodes")" "$s_nodes ($(ratio "$d_nodes" "$s_nodes") faster)"
row "getJobs" "$d_jobs" "$p_jobs" "$a_jobs" "$(over "$a_jobs" "$d_jobs")" "$s_jobs ($(ratio "$d_jobs" "$s_jobs") faster)"
row "startJob" "$d_start" "-" "$a_start" "$(over "$a_start" "$d_start")" "-"
echo "(direct: what the pack runs: sinfo -h -N -O ...; SLURM_TIME_FORMAT=%s squeue"
echo " -h -t all -o ...; sbatch --parsable --nodelist=n4 ... job.sh. direct and pack:"
echo " wall time of one process, before loomd started; adaptor: loomd's timing of"
echo " the operation, spawn to parsed answer, over its quiet polls and ${n_start:-0}"
echo " starts; snapshot: p50 over one keep-alive connection)"
t_ok 0 "benchmark ran"
t_done
