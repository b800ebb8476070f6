#!/usr/bin/env bash
# slurm-table2.sh - getNodes, getJobs, startJob on a real Slurm, measured
# three ways in one run: the Slurm command called directly, through loomd's
# script adaptor (the pack run by loomd, uncached: loomd's own timing of the
# operation from /metrics), and from loomd's snapshot (GET over HTTP).
#   make bench && LOOM_TOP_SRCDIR=.. LOOM_TOP_BUILDDIR=$PWD \
#       bash ../tests/bench/slurm-table2.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
RUNS=${BENCH_RUNS:-30}

slurm_start 4 || exit 1
pg_start || exit 1
loomd_conf <<EOF2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.25
EOF2
loomd_start || exit 1
admin_token || exit 1

# median_ms CMD...: run CMD $RUNS times, print the median wall time in ms.
median_ms() {
    local i t0 t1
    for ((i = 0; i < RUNS; i++)); do
        t0=${EPOCHREALTIME/[.,]/}
        "$@" >/dev/null 2>&1
        t1=${EPOCHREALTIME/[.,]/}
        echo $((t1 - t0))
    done | sort -n | awk '{a[NR] = $1} END {printf "%.1f", a[int((NR + 1) / 2)] / 1000}'
}

# A few jobs so that squeue has something to list.
for i in 1 2 3 4 5 6; do
    sbatch --parsable -N1 --wrap 'sleep 120' >/dev/null
done

# ---- direct ------------------------------------------------------------------
d_nodes=$(median_ms sinfo -h -N -O 'NodeList:|,StateComplete:|,CPUs:|,CPUsState:|,Memory:|,AllocMem:|,Gres:|,Features:|,Partition:|,Reason:|')
d_jobs=$(median_ms squeue -h -t all -o '%i|%k|%j|%u|%T|%N|%V|%S|%e|%r')
d_start=$(median_ms sbatch --parsable -w n4 -N1 --comment=loom:bench --wrap true)

# ---- the pack run by hand (what the adaptor runs, without loomd) ----------------
PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/slurm
mkdir -p "$T/packstate"
p_nodes=$(LOOM_STATE_DIR=$T/packstate LOOM_CLUSTER=slurm median_ms "$PACK/nodes")
p_jobs=$(LOOM_STATE_DIR=$T/packstate LOOM_CLUSTER=slurm median_ms "$PACK/jobs")

# ---- through loomd's script adaptor: let it poll, then read its timings ---------
sleep $((RUNS / 4 + 2))
for ((i = 0; i < RUNS; i++)); do
    api POST /v1/jobs '{"command":["true"],"request":{"cluster":"slurm"},"name":"b"}' >/dev/null
    sleep 0.05
done
sleep 3
curl -s "$LOOM_URL/metrics" >"$T/metrics"
metric() {
    awk -v op="$1" '$1 ~ "^loom_adaptor_op_seconds\\{cluster=\"slurm\",op=\"" op "\",quantile=\"0.5\"" {printf "%.1f", $2 * 1000}' "$T/metrics"
}
a_nodes=$(metric nodes)
a_jobs=$(metric jobs)
a_start=$(metric start)

# ---- from the snapshot --------------------------------------------------------
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
echo "Slurm $(sinfo -V | awk '{print $2}'), 4 nodes; medians of $RUNS runs in ms"
row "operation" "direct" "pack alone" "loomd adaptor" "adaptor-dir" "snapshot"
row "getNodes" "$d_nodes" "$p_nodes" "$a_nodes" "$(over "$a_nodes" "$d_nodes")" "$s_nodes ($(ratio "$d_nodes" "$s_nodes") faster)"
row "getJobs" "$d_jobs" "$p_jobs" "$a_jobs" "$(over "$a_jobs" "$d_jobs")" "$s_jobs ($(ratio "$d_jobs" "$s_jobs") faster)"
row "startJob" "$d_start" "-" "$a_start" "$(over "$a_start" "$d_start")" "-"
echo "(direct and pack: wall time of one process; adaptor: loomd's timing of the"
echo " operation, spawn to parsed answer; snapshot: p50 over one keep-alive connection)"
t_ok 0 "benchmark ran"
t_done
