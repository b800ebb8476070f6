#!/usr/bin/env bash
# sched-scale.sh - the built-in scheduler at fabric scale, in loomd: 16 sim
# clusters x 1,000 nodes x 32 cores, every node busy, 100,000 waiting jobs of
# mixed sizes. Reports the cycle times loomd measures (EASY over the whole
# queue; conservative over the first 10,000), the cycle after one job ends,
# the API's latency while cycles run, and loomd's memory. Prints one table.
# Run from an optimised build directory:
#   make bench && LOOM_TOP_SRCDIR=.. LOOM_TOP_BUILDDIR=$PWD bash ../tests/bench/sched-scale.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

CLUSTERS=${BENCH_CLUSTERS:-16}
NODES=${BENCH_NODES:-1000}
WAITING=${BENCH_WAITING:-100000}
# Each sim cluster is polled every 5 s, as script clusters are by default
# (BENCH_POLL_S=1 polls every second; the row "scheduler off" tells the
# API's tail from polling apart from the one from cycles).
POLL_S=${BENCH_POLL_S:-5}
# The queue's order: fifo (the default) or priority (BENCH_POLICY=priority).
POLICY=${BENCH_POLICY:-fifo}
command -v wrk >/dev/null || { echo "sched-scale.sh: needs wrk" >&2; exit 1; }

ROWS=()
row() { ROWS+=("$(printf '%-50s %14s %14s' "$@")"); }

pg_start || exit 1
loomd_conf '[cluster c0]' 'adaptor = sim' 'nodes = 1'
loomd_start && loomd_stop || exit 1 # the schema
# Every node runs one whole-node job (1 to 2 h left); the waiting jobs ask
# 1 node (60 %), 1-4 nodes (25 %), 4-32 (12 %) or 32-256 (3 %), 1-32 cpus
# per node (whole nodes when several), 5 min to 24 h.
pg_sql "insert into jobs (id, state, owner, doc)
  select g, s, 'u' || (g % 32), json_build_object('id', g::text, 'name', 'b',
    'owner', 'u' || (g % 32), 'source', 'local', 'state', s,
    'request', json_build_object('nodes', n, 'cpus_per_node', c,
       'memory_mb', 100, 'gpus', 0, 'walltime_s', w, 'features', '[]'::json,
       'cluster', null, 'queue', null, 'reservation', null),
    'command', '[\"true\"]'::json, 'script', null,
    'env', json_build_object('LOOM_SIM_RUNTIME_S', w::text), 'priority', 0,
    'cluster', cl, 'native_id', null,
    'nodes', case when cl is null then '[]'::json
                  else json_build_array(nd) end,
    'submit_time', to_char(now() at time zone 'utc' - interval '1 hour',
                           'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
    'start_time', case when cl is null then null else
       to_char(now() at time zone 'utc' - interval '10 minutes',
               'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') end,
    'end_time', null, 'exit_code', null, 'reason', null,
    'stdout', null, 'stderr', null, 'requeues', 0)
  from (select g,
          case when g <= $((CLUSTERS * NODES)) then 'running' else 'pending' end s,
          case when g <= $((CLUSTERS * NODES)) then 'c' || ((g - 1) / $NODES) end cl,
          case when g <= $((CLUSTERS * NODES)) then 'n' || ((g - 1) % $NODES + 1) end nd,
          case when g <= $((CLUSTERS * NODES)) then 1
               when r < 0.60 then 1 when r < 0.85 then 1 + (g % 4)
               when r < 0.97 then 4 + (g % 29) else 32 + (g % 225) end n,
          case when g <= $((CLUSTERS * NODES)) then 32
               when r < 0.60 then 1 + (g % 32) else 32 end c,
          case when g <= $((CLUSTERS * NODES)) then 4200 + (g % 3600)
               else 300 + (g * 7919 % 86100) end w
        from (select g, (g * 2654435761 % 1000) / 1000.0 r
              from generate_series(1, $((CLUSTERS * NODES + WAITING))) g) x) y" \
    >/dev/null || { echo "sched-scale.sh: cannot fill the database" >&2; exit 1; }
pg_sql "vacuum analyze jobs" >/dev/null

# conf BACKFILL DEPTH: loom.conf for the fabric.
conf() {
    local lines=('[scheduler]' "policy = $POLICY" "backfill = $1" "depth = $2"
                 'interval_s = 1') c
    for c in $(seq 0 $((CLUSTERS - 1))); do
        lines+=("[cluster c$c]" 'adaptor = sim' "nodes = $NODES"
                'cpus_per_node = 32' 'memory_mb = 128000' 'speed = 1'
                "poll_s = $POLL_S")
    done
    loomd_conf "${lines[@]}"
}

# cycles: "count last_ms max_ms mean_ms" from /v1/runtime.
cycles() {
    api GET /v1/runtime >/dev/null
    py '" ".join(str(round(d["scheduler"]["cycles"][k], 1)) for k in ("count", "last_ms", "max_ms", "mean_ms"))' "$BODY"
}

# csum: "count sum_ms" of the cycles so far.
csum() {
    api GET /v1/runtime >/dev/null
    py 'str(d["scheduler"]["cycles"]["count"]) + " " + repr(d["scheduler"]["cycles"]["count"] * d["scheduler"]["cycles"]["mean_ms"])' "$BODY"
}

conf easy 1000
t0=$(date +%s%N)
loomd_start || exit 1
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"
wait_for '[ "$(cycles | cut -d" " -f1 | cut -d. -f1)" -ge 3 ]' 120 0.5 ||
    { echo "sched-scale.sh: no cycles" >&2; exit 1; }
t1=$(date +%s%N)
row "start-up to 3 cycles (116,000 jobs, 16,000 nodes)" "$(( (t1 - t0) / 1000000 )) ms" ""
sleep 5
read -r n last max mean < <(cycles)
row "EASY cycle, whole queue (loomd, $n cycles)" "mean $mean ms" "max $max ms"
row "  target" "< 250 ms" ""
# get_latency: "req/s p50 p99" of GET /v1/jobs/{id}, 8 clients for 10 s.
get_latency() {
    wrk --latency -t2 -c"${1:-8}" -d10s -H "$AUTH" "$LOOM_URL/v1/jobs/20000" 2>&1 |
        awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
                              if (v ~ /s$/) return v * 1000; return v }
             /Requests\/sec/ { r = $2 } $1 == "50%" { a = ms($2) } $1 == "99%" { b = ms($2) }
             END { printf "%.0f %.2f %.2f\n", r, a, b }'
}
read -r rps p50 p99 < <(get_latency)
read -r n2 _ _ _ < <(cycles)
row "GET /v1/jobs/{id} while $((n2 - n)) cycles ran (8 clients)" "p50 $p50 ms" "p99 $p99 ms"
read -r rps p50 p99 < <(get_latency 2)
read -r n3 _ _ _ < <(cycles)
row "GET /v1/jobs/{id} while $((n3 - n2)) cycles ran (2 clients)" "p50 $p50 ms" "p99 $p99 ms"
row "  target" "p99 < 5 ms" ""
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
read -r rps p50 p99 < <(get_latency)
row "  the same with the scheduler off (no cycles)" "p50 $p50 ms" "p99 $p99 ms"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
# One running job ends (cancelled): the first cycle after loomd saw the
# end, then the mean of the cycles in the 3 s after it (the queue and the
# plan's picture of running jobs are kept between cycles: these are the
# incremental cycles).
api DELETE /v1/jobs/1 >/dev/null
wait_for '[ "$(field 1 .state)" = cancelled ]' 20 0.02
read -r n1 sum1 < <(csum)
wait_for '[ "$(csum | cut -d" " -f1)" -gt "$n1" ]' 10 0.02
api GET /v1/runtime >/dev/null
last=$(py 'round(d["scheduler"]["cycles"]["last_ms"], 1)' "$BODY")
parts=$(py '" ".join(str(round(d["scheduler"]["cycles"]["last_parts_ms"][k], 1)) for k in ("build", "plan", "apply"))' "$BODY")
read -r p_build p_plan p_apply <<<"$parts"
sleep 3
read -r n2 sum2 < <(csum)
after=$(python3 -c "import sys; n1, s1, n2, s2 = map(float, sys.argv[1:]); print(round((s2 - s1) / (n2 - n1), 1) if n2 > n1 else '-')" "$n1" "$sum1" "$n2" "$sum2")
row "first cycle after one job ended" "$last ms" ""
row "  its parts: build / plan / apply" "$p_build / $p_plan" "/ $p_apply ms"
row "  mean of the $((n2 - n1)) cycles in the 3 s after" "$after ms" ""
row "  target" "< 20 ms" ""
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
row "loomd RSS at that size" "$rss MiB" ""
loomd_stop

conf conservative 10000
loomd_start || exit 1
wait_for '[ "$(cycles | cut -d" " -f1 | cut -d. -f1)" -ge 3 ]' 300 0.5 ||
    { echo "sched-scale.sh: no conservative cycles" >&2; exit 1; }
sleep 5
read -r n last max mean < <(cycles)
row "conservative cycle, depth 10,000 (loomd, $n cycles)" "mean $mean ms" "max $max ms"
row "  target" "< 500 ms" ""
loomd_stop

echo
printf '%-50s %14s %14s\n' "benchmark" "result" ""
printf '%s\n' "${ROWS[@]}"
t_ok 0 "benchmarks ran"
t_done
