#!/usr/bin/env bash
# web.sh - what open dashboards cost the API: the p99 of core.sh's read
# load (GET /v1/jobs/{id}, 8 clients, wrk) without and with 20 dashboards
# open (tests/bench/dashboards.mjs: the page's own data layer in Node,
# each with one view's watches: fabric, jobs, timeline, goal versus
# actual), while sim jobs start and end so that the dashboards have
# something to fetch. Rounds alternate without and with; the medians are
# compared, printed as a ratio (target: below 1.05). The dashboards run on
# this machine too (niced, so that they yield to loomd and wrk); as the
# read load saturates the machine, the CPU they take from wrk shows as
# fewer requests, not only as latency: so the benchmark also measures
# loomd's own CPU time per second with and without the dashboards, with no
# read load, which is what they cost loomd itself.
# Run from a build directory:
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/web.sh
# Needs wrk (installed when missing and running as root) and node.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

READ_S=${BENCH_READ_S:-10}
ROUNDS=${BENCH_ROUNDS:-5}
DASHBOARDS=${BENCH_DASHBOARDS:-20}
CLIENTS=8

command -v node >/dev/null || { echo "web.sh: needs node" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
    [ "$(id -u)" = 0 ] || { echo "web.sh: needs wrk" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null ||
        { echo "web.sh: cannot install wrk" >&2; exit 1; }
fi

# wrk_p99: run core.sh's read load; print "req/s p99_ms".
wrk_p99() {
    wrk --latency -t2 -c$CLIENTS -d${READ_S}s -H "Authorization: Bearer $TOKEN" \
        "$LOOM_URL/v1/jobs/1" >"$T/wrk.out" 2>&1
    awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
                          if (v ~ /s$/) return v * 1000; return v }
         /Requests\/sec/ { rps = $2 } $1 == "99%" { p99 = ms($2) }
         END { printf "%.0f %.3f\n", rps, p99 }' "$T/wrk.out"
}
# cpu_ms PID: the process's CPU time (user + system) so far, in ms.
cpu_ms() {
    awk -v hz="$(getconf CLK_TCK)" '{ print int(($14 + $15) * 1000 / hz) }' "/proc/$1/stat"
}
# cpu_rate SECS: loomd's CPU ms per second over SECS seconds.
cpu_rate() {
    local c0 c1
    c0=$(cpu_ms "$LOOMD_PID")
    t_sleep "$1"
    c1=$(cpu_ms "$LOOMD_PID")
    echo $(((c1 - c0) / $1))
}
# dash_start: the dashboards, niced; waits until all are live.
dash_start() {
    nice -n 19 node "$LOOM_TOP_SRCDIR/tests/bench/dashboards.mjs" "$T/web" "$LOOM_URL" "$TOKEN" \
        "$DASHBOARDS" >"$T/dash.out" 2>&1 &
    DASH=$!
    wait_for "grep -q '^live' '$T/dash.out'" 60 || { cat "$T/dash.out" >&2; exit 1; }
}
dash_stop() {
    kill "$DASH" 2>/dev/null
    wait "$DASH" 2>/dev/null
}
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

pg_start || exit 1
loomd_conf <<'EOF2'
[cluster local]
adaptor = local
nodes = 4
[cluster sim1000]
adaptor = sim
nodes = 1000
cpus_per_node = 32
speed = 1
EOF2
loomd_start || exit 1
admin_token || exit 1
api POST /v1/jobs '{"command":["sleep","600"],"request":{"cluster":"sim1000"}}' >/dev/null

# Jobs that start and end all along (one every 2 s, 6 s each, for an
# hour at most): events and fetches for the dashboards in every round.
(for ((i = 0; i < 1800; i++)); do
    curl -s -o /dev/null -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d '{"command":["true"],"request":{"cluster":"sim1000","nodes":8},"env":{"LOOM_SIM_RUNTIME_S":"6"}}' \
        "$LOOM_URL/v1/jobs"
    sleep 2
done) &
TRICKLE=$!
t_cleanup "kill $TRICKLE 2>/dev/null"

# The page's modules, where Node takes them as ES modules.
mkdir -p "$T/web"
cp "$LOOM_TOP_SRCDIR"/core/web/*.js "$T/web/" && echo '{"type": "module"}' >"$T/web/package.json"

# loomd's CPU without read load: jobs trickling, then also the dashboards
cpu_idle=$(cpu_rate 10)
dash_start
cpu_dash=$(cpu_rate 10)
dash_stop

base=() with=() base_rps=() with_rps=() ratios=()
for ((r = 1; r <= ROUNDS; r++)); do
    read -r rps p99 < <(wrk_p99)
    base+=("$p99")
    base_rps+=("$rps")
    dash_start
    read -r rps p99 < <(wrk_p99)
    with+=("$p99")
    with_rps+=("$rps")
    dash_stop
    ratios+=("$(awk -v a="${with[-1]}" -v b="${base[-1]}" 'BEGIN { printf "%.3f", a / b }')")
    echo "# round $r: p99 ${base[-1]} ms without, ${with[-1]} ms with $DASHBOARDS dashboards, ratio ${ratios[-1]} ($(tail -n 1 "$T/dash.out"))"
done
kill "$TRICKLE" 2>/dev/null

mb=$(median "${base[@]}")
mw=$(median "${with[@]}")
printf '\n%-58s %12s %12s\n' "GET /v1/jobs/{id}, 8 clients, median of $ROUNDS rounds" "req/s" "p99 ms"
printf '%-58s %12s %12s\n' "no dashboard open" "$(median "${base_rps[@]}")" "$mb"
printf '%-58s %12s %12s\n' "$DASHBOARDS dashboards open (event streams and their fetches)" "$(median "${with_rps[@]}")" "$mw"
ratio=$(awk -v a="$mw" -v b="$mb" 'BEGIN { printf "%.3f", a / b }')
printf '%-58s %12s %12s\n' "p99 with / without, of the medians (target < 1.05)" "" "$ratio"
printf '%-58s %12s %12s\n' "p99 with / without, median of the rounds' ratios" "" "$(median "${ratios[@]}")"
printf '\n%-58s %25s\n' "loomd's CPU time, no read load, jobs starting and ending" "ms per second"
printf '%-58s %25s\n' "no dashboard open" "$cpu_idle"
printf '%-58s %25s\n' "$DASHBOARDS dashboards open" "$cpu_dash"
t_ok 0 "benchmark ran"
t_done
