#!/usr/bin/env bash
# local-confine.sh - what confinement costs the local executor: submit-to-
# running latency and local jobs started per second on a confined cluster
# beside the same cluster with confine = no, in one run on one loomd, with
# their ratios. Jobs run as an account this script makes (bench-XXXXXX).
#   latency:    BENCH_LAT jobs (default 20) one after another, alternating
#               the clusters: from the POST to the first look that finds the
#               job running or ended (looks every 10 ms); the median.
#   throughput: BENCH_JOBS jobs (default 100) submitted with the scheduler
#               off, then started at once: jobs per second until the last
#               has started.
# Run from a build directory (an optimised one gives the figures to quote):
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/local-confine.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

LAT=${BENCH_LAT:-20}
JOBS=${BENCH_JOBS:-100}

t_account USER_ bench || exit 1
pg_start || exit 1
loomd_conf <<EOF
[cluster conf]
adaptor = local
nodes = $JOBS
cpus_per_node = 1
poll_s = 0.05

[cluster free]
adaptor = local
nodes = $JOBS
cpus_per_node = 1
poll_s = 0.05
confine = no
EOF
map_account bench "$USER_"
loomd_start || exit 1
admin_token || exit 1
ADMIN=$TOKEN
BT=$(token_for bench user) || exit 1
TOKEN=$BT
api GET /v1/clusters/conf >/dev/null
C1=$(jget "$BODY" .confinement)
api GET /v1/clusters/free >/dev/null
C2=$(jget "$BODY" .unconfined_reason)
echo "# cluster conf: confinement $C1; cluster free: unconfined ($C2)"

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }

# latency CLUSTER: microseconds from the POST to the job seen started.
latency() {
    local t0 st
    t0=$(now_us)
    submit "{\"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"$1\"}}" || return 1
    while :; do
        st=$(job_state "$JOB")
        case $st in pending | starting | "") sleep 0.01 ;; *) break ;; esac
    done
    echo $(($(now_us) - t0))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$T/lat.conf"
: >"$T/lat.free"
for ((i = 0; i < LAT; i++)); do
    latency conf >>"$T/lat.conf" || exit 1
    latency free >>"$T/lat.free" || exit 1
done
LC=$(median <"$T/lat.conf")
LF=$(median <"$T/lat.free")

# started CLUSTER: jobs of CLUSTER no longer pending or starting.
started() {
    api GET "/v1/jobs?cluster=$1&limit=100000" >/dev/null
    py "sum(1 for j in d['items'] if j['state'] not in ('pending', 'starting'))" "$BODY"
}

# rate CLUSTER: jobs started per second, BENCH_JOBS of them at once.
rate() {
    local before t0 t1
    TOKEN=$ADMIN
    api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
    [ "$STATUS" = 200 ] || { echo "scheduler off: $STATUS $BODY" >&2; return 1; }
    TOKEN=$BT
    before=$(started "$1")
    for ((i = 0; i < JOBS; i++)); do
        submit "{\"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"$1\"}}" || return 1
    done
    TOKEN=$ADMIN
    t0=$(now_us)
    api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
    wait_for "[ \"\$(started $1)\" -ge $((before + JOBS)) ]" 600 0.05 || return 1
    t1=$(now_us)
    TOKEN=$BT
    awk -v n="$JOBS" -v us="$((t1 - t0))" 'BEGIN { printf "%.1f", n / (us / 1e6) }'
}

RC=$(rate conf) || exit 1
RF=$(rate free) || exit 1

printf '%-44s %12s %12s %8s\n' "" "confined" "unconfined" "ratio"
printf '%-44s %12.1f %12.1f %8.2f\n' "submit to running, median of $LAT (ms)" \
    "$(awk -v v="$LC" 'BEGIN { print v / 1000 }')" \
    "$(awk -v v="$LF" 'BEGIN { print v / 1000 }')" \
    "$(awk -v a="$LC" -v b="$LF" 'BEGIN { print a / b }')"
printf '%-44s %12.1f %12.1f %8.2f\n' "jobs started per second ($JOBS at once)" \
    "$RC" "$RF" "$(awk -v a="$RC" -v b="$RF" 'BEGIN { print a / b }')"
loomd_stop
