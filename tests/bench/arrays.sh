#!/usr/bin/env bash
# arrays.sh - a 100,000-task job array: how long its submit takes, durably
# (PostgreSQL with fsync on; the array's row is committed before the 201,
# which the benchmark checks), and how long GET /v1/jobs takes to list it
# (one entry, its tasks compressed), alone and beside the 1,000 tasks of it
# that a sim cluster then runs. Prints one table. Run from an optimised
# build directory:
#   make bench && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/arrays.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

TASKS=${BENCH_TASKS:-100000}
ARRAYS=${BENCH_ARRAYS:-5}   # arrays submitted, one after the other
LISTS=${BENCH_LISTS:-50}    # GET /v1/jobs timed, each

ROWS=()
row() { ROWS+=("$(printf '%-56s %12s %12s %12s' "$@")"); }

# stats: "min median max" (ms) of the numbers (seconds) on stdin.
stats() {
    sort -g | awk '{ v[NR] = $1 * 1000 }
        END { printf "%.2f %.2f %.2f\n", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

pg_start || exit 1
# The harness's PostgreSQL trades durability for speed; a submit's time
# must be that of a real commit.
printf 'fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n' \
    >>"$LOOM_PG_DIR/data/postgresql.conf"
pg_stop && pg_restart_same || exit 1
loomd_conf <<'EOF'
[scheduler]
interval_s = 0.5
[cluster sim]
adaptor = sim
nodes = 1000
cpus_per_node = 1
memory_mb = 4096
speed = 1
EOF
loomd_start || exit 1
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"
# Nothing starts while the submits and the first lists are timed.
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null

: >"$T/submit.times"
for ((k = 0; k < ARRAYS; k++)); do
    BODY=$(curl -s -o "$T/sub.body" -w '%{http_code} %{time_total}' \
        -H "$AUTH" -H 'Content-Type: application/json' \
        --data-binary "{\"name\": \"a$k\", \"array\": \"1-$TASKS\", \"request\": {\"walltime_s\": 600, \"cluster\": \"sim\"}, \"env\": {\"LOOM_SIM_RUNTIME_S\": \"600\"}, \"command\": [\"true\"]}" \
        "$LOOM_URL/v1/jobs")
    read -r code secs <<<"$BODY"
    [ "$code" = 201 ] || { echo "arrays.sh: submit answered $code: $(cat "$T/sub.body")" >&2; exit 1; }
    id=$(jget "$(cat "$T/sub.body")" .id)
    # committed before the 201: the row is there as it is answered
    [ "$(pg_sql "select count(*) from jobs where id = $id and doc->>'array' = '1-$TASKS'")" = 1 ] ||
        { echo "arrays.sh: array $id is not in the database after its 201" >&2; exit 1; }
    echo "$secs" >>"$T/submit.times"
done
read -r mn md mx < <(stats <"$T/submit.times")
row "submit of a $TASKS-task array, durable ($ARRAYS of them)" "min $mn" "median $md" "max $mx ms"
row "  target" "< 2000 ms" "" ""
row "  rows in the jobs table after them" "$(pg_sql "select count(*) from jobs")" "" ""

# list_times: LISTS timed GET /v1/jobs, "min median max" ms (the last
# answer in $T/list.body).
list_times() {
    : >"$T/list.times"
    for ((k = 0; k < LISTS; k++)); do
        curl -s -o "$T/list.body" -w '%{time_total}\n' -H "$AUTH" \
            "$LOOM_URL/v1/jobs" >>"$T/list.times"
    done
    stats <"$T/list.times"
}
items() { py 'len(d["items"])' "$(cat "$T/list.body")"; }
read -r mn md mx < <(list_times)
ITEMS=$(items)
[ "$ITEMS" = "$ARRAYS" ] || { echo "arrays.sh: $ITEMS items listed, not $ARRAYS" >&2; exit 1; }
grep -q "\"array_tasks\":\"1-$TASKS\"" "$T/list.body" ||
    { echo "arrays.sh: the list does not show the tasks compressed" >&2; exit 1; }
row "GET /v1/jobs: $ARRAYS arrays of $TASKS tasks, $ITEMS entries" "min $mn" "median $md" "max $mx ms"
row "  target" "< 20 ms" "" ""
row "  its size" "$(wc -c <"$T/list.body") bytes" "" ""

# The sim cluster runs 1,000 tasks of the first array at once.
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
t0=$(date +%s%N)
wait_for '[ "$(field 1 .array_counts.running)" = 1000 ]' 120 0.2 ||
    { echo "arrays.sh: 1,000 tasks did not start" >&2; exit 1; }
t1=$(date +%s%N)
row "1,000 tasks of it started (a record each) in" "$(( (t1 - t0) / 1000000 )) ms" "" ""
wait_for '[ "$(api GET /v1/jobs >/dev/null; py "len(d[\"items\"])" "$BODY")" = $((ARRAYS + 1000)) ]' 60 0.2
read -r mn md mx < <(list_times)
ITEMS=$(items)
row "GET /v1/jobs: the arrays and 1,000 running tasks ($ITEMS)" "min $mn" "median $md" "max $mx ms"
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
row "loomd RSS" "$rss MiB" "" ""
loomd_stop

echo
printf '%-56s %12s %12s %12s\n' "benchmark" "" "result" ""
printf '%s\n' "${ROWS[@]}"
t_ok 0 "benchmarks ran"
t_done
