#!/usr/bin/env bash
# replay.sh - the planner on workloads: a synthetic Lublin-Feitelson workload
# (swfgen) and, when it is there, the NASA Ames iPSC/860 trace (Parallel
# Workloads Archive), each replayed by tests/bench/replay under strict FIFO,
# EASY and conservative backfill on 128 nodes. Prints one table side by side
# and exits non-zero when EASY does not beat FIFO on mean bounded slowdown.
# Run from an optimised build directory:
#   make bench && LOOM_TOP_SRCDIR=.. bash ../tests/bench/replay.sh
# The trace is $LOOM_TRACE, else ../shared/data/NASA-iPSC-1993-3.1-cln.swf.gz
# beside the source tree; without it only the synthetic workload runs.
# BENCH_JOBS, BENCH_LOAD, BENCH_SEED and BENCH_DEPTH change the defaults.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
BIN=$LOOM_TOP_BUILDDIR/tests/bench
JOBS=${BENCH_JOBS:-5000}
LOAD=${BENCH_LOAD:-1.0}
SEED=${BENCH_SEED:-1}
DEPTH=${BENCH_DEPTH:-100}
NODES=128
TRACE=${LOOM_TRACE:-$LOOM_TOP_SRCDIR/../shared/data/NASA-iPSC-1993-3.1-cln.swf.gz}
POLICIES=(none easy conservative)

for p in swfgen replay; do
    [ -x "$BIN/$p" ] || { echo "replay.sh: no $BIN/$p; run make bench" >&2; exit 1; }
done
T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# read FILE: the trace as text (gzipped ones unpacked).
read_trace() {
    case $1 in
    *.gz) gzip -dc "$1" ;;
    *) cat "$1" ;;
    esac
}

# offered FILE: sum(run * procs) / (nodes * (last submit - first submit)).
offered() {
    awk -v n=$NODES '!/^;/ && NF >= 18 && $4 >= 0 {
        p = $8 > 0 ? $8 : $5; w += $4 * p
        if (first == "") first = $2; last = $2 }
        END { if (last > first) printf "%.2f", w / (n * (last - first)); else print "?" }' "$1"
}

# run NAME FILE ESTIMATE: replay FILE under each policy into $T/NAME-POLICY.
WORKLOADS=()
run() {
    local name=$1 file=$2 est=$3 b
    for b in "${POLICIES[@]}"; do
        if ! read_trace "$file" | "$BIN/replay" -b "$b" -d "$DEPTH" -c 1 \
            -n $NODES -C 1 -e "$est" >"$T/${name//\//_}-$b"; then
            echo "replay.sh: replay of $name under $b failed" >&2
            exit 1
        fi
    done
    WORKLOADS+=("$name")
}

"$BIN/swfgen" -n $NODES -j "$JOBS" -s "$SEED" -l "$LOAD" >"$T/synthetic.swf" || exit 1
echo "synthetic: swfgen -n $NODES -j $JOBS -s $SEED -l $LOAD (Lublin-Feitelson;" \
     "offered load $(offered "$T/synthetic.swf"); requested time = runtime" \
     "rounded up to a round value)"
run synthetic "$T/synthetic.swf" exact
if [ -r "$TRACE" ]; then
    read_trace "$TRACE" >"$T/nasa.swf"
    echo "nasa: $(basename "$TRACE") (offered load $(offered "$T/nasa.swf");" \
         "no requested times: estimate 2 x runtime, -e x2)"
    run nasa "$T/nasa.swf" x2
    # The trace barely queues (its submit times are start times): the same
    # jobs arriving twice as fast show what backfill does under load.
    awk '/^;/ { print; next } { $2 = int($2 / 2); print }' "$T/nasa.swf" \
        >"$T/nasa2.swf"
    echo "nasa/2: the same trace with inter-arrival times halved (offered" \
         "load $(offered "$T/nasa2.swf"); -e x2)"
    run nasa/2 "$T/nasa2.swf" x2
else
    echo "nasa: no trace at $TRACE; skipped"
fi
echo "fabric: 1 cluster of $NODES nodes x 1 cpu; planning depth $DEPTH" \
     "(conservative: reservations; FIFO and EASY: estimates only)"

# value NAME POLICY KEY
value() { awk -v k="$3" '$1 == k { print $2 }' "$T/${1//\//_}-$2"; }

ROWS=("jobs|jobs" "utilisation|utilisation" "mean wait (s)|mean_wait_s"
      "mean bounded slowdown|mean_bsld" "makespan (s)|makespan_s"
      "planner cycles|cycles" "ms per cycle, mean|cycle_ms_mean"
      "ms per cycle, max|cycle_ms_max")
echo
printf '%-24s' ""
for w in "${WORKLOADS[@]}"; do
    for b in FIFO EASY conservative; do printf ' %14s' "$w"; done
done
printf '\n%-24s' "measure"
for w in "${WORKLOADS[@]}"; do
    for b in FIFO EASY conservative; do printf ' %14s' "$b"; done
done
echo
for row in "${ROWS[@]}"; do
    printf '%-24s' "${row%%|*}"
    for w in "${WORKLOADS[@]}"; do
        for b in "${POLICIES[@]}"; do
            printf ' %14s' "$(value "$w" "$b" "${row##*|}")"
        done
    done
    echo
done

rc=0
for w in "${WORKLOADS[@]}"; do
    fifo=$(value "$w" none mean_bsld)
    easy=$(value "$w" easy mean_bsld)
    if ! awk -v e="$easy" -v f="$fifo" 'BEGIN { exit !(e < f) }'; then
        echo "replay.sh: $w: EASY mean bounded slowdown $easy is not below" \
             "FIFO's $fifo" >&2
        rc=1
    fi
done
exit $rc
