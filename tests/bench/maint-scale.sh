#!/usr/bin/env bash
# maint-scale.sh - goal and actual state at fabric scale, in loomd: a sim
# cluster of 10,000 nodes (big) and one of 10 (ten, under a [rule kernel]).
# Imports the goals of all 10,010 nodes (kernel 6.1, cpus 32) in one PUT
# /v1/goal/nodes, posts a kernel report for every node (1,000 of big's say
# 5.10) over keep-alive connections, and reports: the import's time, the
# reports' throughput, the full comparison as loomd measures it (GET
# /v1/runtime: maintenance.compare_ms_last and compare_ms_max), the latency
# of GET /v1/state/diff with 1,000 mismatches, the time from a mismatching
# report to its request being planned (by polling, and from the request's
# history), and loomd's memory. Prints one table. Run from an optimised
# build directory:
#   make bench && LOOM_TOP_SRCDIR=.. LOOM_TOP_BUILDDIR=$PWD bash ../tests/bench/maint-scale.sh
# Needs python3 (standard library only) and curl.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

NODES=${BENCH_NODES:-10000}
BAD=${BENCH_MISMATCHES:-1000}
CLIENTS=${BENCH_CLIENTS:-8}
GETS=${BENCH_GETS:-200}
SAMPLES=${BENCH_SAMPLES:-5}
COMPARE_S=${BENCH_COMPARE_S:-5}
POLL_S=${BENCH_POLL_S:-5}
FIX=$LOOM_TOP_SRCDIR/tests/fixtures/maintenance
CLIENT=$FIX/client.py
((SAMPLES <= 10)) || { echo "maint-scale.sh: at most 10 samples (cluster ten)" >&2; exit 1; }

ROWS=()
row() { ROWS+=("$(printf '%-58s %16s %16s' "$@")"); }
fail() {
    echo "maint-scale.sh: $*" >&2
    exit 1
}
# rt KEY: maintenance.KEY of GET /v1/runtime ("n/a" when absent).
rt() {
    api GET /v1/runtime >/dev/null
    py "(d.get('maintenance') or {}).get('$1', 'n/a')" "$BODY" 2>/dev/null || echo n/a
}
# fmt_ms V: V rounded to 0.1 (V as is when it is not a number).
fmt_ms() {
    python3 -c 'import sys
try:
    print("%.1f ms" % float(sys.argv[1]))
except ValueError:
    print(sys.argv[1])' "$1"
}

pg_start || exit 1
mkdir -p "$T/maint"
cp "$FIX/action.sh" "$T/maint/action.sh" && chmod 0755 "$T/maint/action.sh" ||
    fail "cannot copy the action fixture"
TF=$T/maint/token
loomd_conf <<EOF
[maintenance]
actual_ttl_s = 3600
compare_s = $COMPARE_S
verify_s = 60

[action reinstall]
command = $T/maint/action.sh %c %n %i $TF kernel=6.1
timeout_s = 60
duration_s = 60
fixes = kernel

[rule kernel]
attribute = kernel
when = differs
action = reinstall
cluster = ten
within_s = 600
duration_s = 60
max_nodes = 10

[cluster big]
adaptor = sim
nodes = $NODES
cpus_per_node = 32
memory_mb = 131072
poll_s = $POLL_S

[cluster ten]
adaptor = sim
nodes = 10
cpus_per_node = 32
memory_mb = 131072
poll_s = 1
EOF
loomd_start || exit 1
admin_token || exit 1
MON=$(token_for bench-monitor monitor) && [ -n "$MON" ] || fail "no monitor token"
printf '%s\n' "$MON" >"$TF" && chmod 0600 "$TF" && loom_owns "$T/maint"
printf '%s\n' "$TOKEN" >"$T/admin.token" && chmod 0600 "$T/admin.token"
wait_for 'api GET /v1/clusters >/dev/null; [ "$(py "sum(c[\"nodes\"] for c in d[\"items\"])" "$BODY")" = $((NODES + 10)) ]' 60 0.5 ||
    fail "the clusters do not show $((NODES + 10)) nodes"

# ---- the goal import -------------------------------------------------------------------
python3 -c 'import json, sys
n = int(sys.argv[1])
items = [{"node": "big/n%d" % i, "attributes": {"kernel": "6.1", "cpus": 32}} for i in range(1, n + 1)]
items += [{"node": "ten/n%d" % i, "attributes": {"kernel": "6.1"}} for i in range(1, 11)]
json.dump({"items": items}, sys.stdout, separators=(",", ":"))' "$NODES" >"$T/goal.json"
SIZE=$(stat -c %s "$T/goal.json")
# Not the harness's api: the body is too large for one argument.
read -r code secs < <(curl -s -o "$T/import.out" -w '%{http_code} %{time_total}\n' --max-time 120 \
    -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    --data-binary @"$T/goal.json" "$LOOM_URL/v1/goal/nodes")
[ "$code" = 200 ] || fail "the goal import answered $code: $(head -c 300 "$T/import.out")"
row "goal import, $((NODES + 10)) nodes, one PUT ($((SIZE / 1024)) KiB)" \
    "$(python3 -c "print('%.0f ms' % (float('$secs') * 1000))")" "$(jget "$(cat "$T/import.out")" .nodes) nodes"

# ---- the reports --------------------------------------------------------------------------
python3 -c 'import json, sys
n, bad = int(sys.argv[1]), int(sys.argv[2])
every = max(1, n // bad) if bad else 0
k = 0
for i in range(1, n + 1):
    v = "6.1"
    if every and i % every == 0 and k < bad:
        v, k = "5.10", k + 1
    print(json.dumps({"node": "big/n%d" % i, "attributes": {"kernel": v}}))
for i in range(1, 11):
    print(json.dumps({"node": "ten/n%d" % i, "attributes": {"kernel": "6.1"}}))' "$NODES" "$BAD" >"$T/reports.jsonl"
OUT=$(python3 "$CLIENT" report --url "$LOOM_URL" --token-file "$TF" --threads "$CLIENTS" "$T/reports.jsonl") ||
    fail "reports refused: $OUT"
row "actual reports, $(py 'd["sent"]' "$OUT") POSTs ($CLIENTS keep-alive connections)" \
    "$(py 'd["per_s"]' "$OUT") /s" "$(py 'd["seconds"]' "$OUT") s"

# ---- the full comparison ---------------------------------------------------------------------
wait_for '[ "$(rt mismatches)" = "$BAD" ]' 60 0.5 ||
    fail "loomd does not count $BAD mismatches (maintenance.mismatches: $(rt mismatches))"
# Wait for two periodic comparisons after the last report.
t_sleep $((2 * COMPARE_S + 1))
row "full comparison, $(rt nodes) nodes, $(rt mismatches) mismatches (loomd)" \
    "last $(fmt_ms "$(rt compare_ms_last)")" "max $(fmt_ms "$(rt compare_ms_max)")"
row "  target" "< 200 ms" ""

# ---- GET /v1/state/diff ------------------------------------------------------------------------
OUT=$(python3 "$CLIENT" get --url "$LOOM_URL" --token-file "$T/admin.token" --repeat "$GETS" /v1/state/diff) ||
    fail "GET /v1/state/diff: $OUT"
row "GET /v1/state/diff, $(py 'd["items"]' "$OUT") rows, $(py 'd["bytes"] // 1024' "$OUT") KiB (1 client, $GETS)" \
    "p50 $(py 'd["p50_ms"]' "$OUT") ms" "p99 $(py 'd["p99_ms"]' "$OUT") ms"
OUT=$(python3 "$CLIENT" get --url "$LOOM_URL" --token-file "$T/admin.token" --repeat "$GETS" "/v1/state/diff?node=big/n$((NODES / 2))")
row "GET /v1/state/diff?node=big/n$((NODES / 2)) (1 client, $GETS)" \
    "p50 $(py 'd["p50_ms"]' "$OUT") ms" "p99 $(py 'd["p99_ms"]' "$OUT") ms"

# ---- from a mismatching report to a planned request --------------------------------------------
WALL=() HIST=()
for ((i = 1; i <= SAMPLES; i++)); do
    OUT=$(python3 "$CLIENT" mismatch --url "$LOOM_URL" --token-file "$TF" --node "ten/n$i" \
        --attributes '{"kernel": "5.10"}' --timeout 30) || fail "ten/n$i: $OUT"
    WALL+=("$(py 'd["wall_ms"]' "$OUT")")
    HIST+=("$(py 'd["history_ms"]' "$OUT")")
    sleep 0.5
done
read -r wmed wmax < <(python3 -c 'import statistics, sys
v = sorted(float(x) for x in sys.argv[1:])
print("%.1f %.1f" % (statistics.median(v), v[-1]))' "${WALL[@]}")
row "report -> request planned, polling ($SAMPLES nodes of ten)" "median $wmed ms" "max $wmax ms"
row "report -> planned, from the request's history (1 s resolution)" "$(printf '%s ' "${HIST[@]}" | sed 's/ $//') ms" ""
row "  target" "< 1000 ms" ""
wait_for 'api GET "/v1/maintenance?cluster=ten" >/dev/null; [ "$(py "len([m for m in d[\"items\"] if m[\"state\"] == \"done\"])" "$BODY")" -ge "$SAMPLES" ]' 60 0.5
api GET '/v1/maintenance?cluster=ten' >/dev/null
row "  the $SAMPLES requests ended" "$(py '" ".join(sorted(set(m["state"] for m in d["items"])))' "$BODY")" ""

rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
row "loomd RSS with $((NODES + 10)) goals and reports" "$rss MiB" ""
loomd_stop

echo
printf '%-58s %16s %16s\n' "benchmark" "result" ""
printf '%s\n' "${ROWS[@]}"
t_ok 0 "benchmarks ran"
t_done
