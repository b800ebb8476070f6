#!/usr/bin/env bash
# metrics-scale.sh - what a scrape of GET /metrics costs as the jobs grow:
# its latency (p50 and p99 of BENCH_SCRAPES scrapes, one client) and size
# with 10 jobs, then with 100,000 (of BENCH_ACCOUNTS accounts, loaded from
# PostgreSQL at start), and the time loomd's job counts take to follow a
# change. A scrape walks no job (the job table counts its views as they
# change; core/jobcount.c), so the two latencies should be alike. Run from
# a build directory (an optimised one for the figures docs/operator-guide.md
# quotes):
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/metrics-scale.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

JOBS=${BENCH_JOBS:-100000}
ACCOUNTS=${BENCH_ACCOUNTS:-500}
SCRAPES=${BENCH_SCRAPES:-200}
ROWS=()
row() { ROWS+=("$(printf '%-46s %12s %12s %14s' "$@")"); }

# scrape: SCRAPES scrapes; prints "p50_ms p99_ms bytes".
scrape() {
    local i
    for ((i = 0; i < SCRAPES; i++)); do
        curl -s -o "$T/metrics" -w '%{time_total}\n' "$LOOM_URL/metrics"
    done | sort -n | awk -v n="$SCRAPES" '{t[NR] = $1 * 1000}
        END {printf "%.2f %.2f ", t[int(n * 0.5) + 1], t[int(n * 0.99)]}'
    wc -c <"$T/metrics"
}

pg_start || exit 1
loomd_conf '[cluster sim]' 'adaptor = sim' 'nodes = 1000' 'cpus_per_node = 32' \
    'speed = 100' 'unpinned_jobs = yes'
sed -i '1a metrics_accounts = 20' "$T/loom.conf" # after [loomd]
loomd_start || exit 1 # the schema
loomd_stop
load() {
    pg_sql "insert into jobs (id, state, owner, doc)
      select g, s, 'bench', jsonb_build_object('id', g::text,
        'name', 'bench', 'owner', 'bench', 'account', 'acct' || (g % $ACCOUNTS),
        'source', 'local', 'state', s,
        'request', jsonb_build_object('nodes', 1, 'cpus_per_node', 1,
           'memory_mb', 100, 'gpus', 0, 'walltime_s', 3600,
           'features', '[]'::jsonb, 'cluster', 'sim', 'queue', null),
        'command', '[\"true\"]'::jsonb, 'script', null, 'env', '{}'::jsonb,
        'priority', 0, 'cluster', 'sim', 'native_id', null, 'nodes', '[]'::jsonb,
        'submit_time', '2026-11-21T20:00:00Z', 'start_time', null,
        'end_time', null, 'exit_code', case when s = 'completed' then 0 end,
        'reason', null, 'planned_start', null, 'planned_cluster', null,
        'stdout', null, 'stderr', null)::json
      from (select g, case when g % 10 = 0 then 'failed' else 'completed' end s
            from generate_series(1, $1) g) x" >/dev/null
    pg_sql "vacuum analyze jobs" >/dev/null
}

load 10
loomd_start || exit 1
scrape >/dev/null # warm
read -r p50 p99 bytes < <(scrape)
row "GET /metrics, 10 jobs" "p50 ${p50} ms" "p99 ${p99} ms" "$bytes bytes"
loomd_stop

pg_sql "delete from jobs" >/dev/null
load "$JOBS"
loomd_start || exit 1
until [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(token_for admin admin)" "$LOOM_URL/v1/jobs/$JOBS")" = 200 ]; do
    sleep 0.1
done
scrape >/dev/null
read -r p50 p99 bytes < <(scrape)
row "GET /metrics, $JOBS jobs of $ACCOUNTS accounts" "p50 ${p50} ms" "p99 ${p99} ms" "$bytes bytes"
folded=$(grep -c '^loom_jobs{' "$T/metrics")
row "loom_jobs samples (top 20 accounts + other)" "$folded" "" ""
# the counts follow a change: a new job shows at once (as the account
# the admin maps to, or in account="other" when that one is not in the
# top 20: every loaded job has ended, so any live one is the new one)
admin_token || exit 1
t0=$(date +%s%N)
submit '{"name": "one", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "3600"}}' >/dev/null
until curl -s "$LOOM_URL/metrics" | grep -qE '^loom_jobs\{state="(pending|starting|running)",cluster="sim",source="local",account="[^"]+"\} 1$'; do
    sleep 0.01
done
t1=$(date +%s%N)
row "a submit until loom_jobs shows it" "$(( (t1 - t0) / 1000000 )) ms" "" ""
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
row "loomd RSS, $JOBS jobs" "$rss MiB" "" ""
loomd_stop

echo
printf '%-46s %12s %12s %14s\n' "benchmark" "" "" ""
printf '%s\n' "${ROWS[@]}"
