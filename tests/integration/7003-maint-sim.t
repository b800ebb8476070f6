#!/usr/bin/env bash
# 7003-maint-sim.t - goal and actual state at some scale, on sim clusters:
# sa (200 nodes, under a [rule kernel] with max_percent = 5) and sb (10
# nodes, no rule of its own):
# - one PUT /v1/goal/nodes imports the goals of all 210 nodes;
# - every node of sa reports kernel 5.10 at once: never more than 10
#   requests (5 % of 200) are open, and the rule goes on past the first 10;
#   sb's mismatches are only reported (the rule is for cluster sa);
# - /v1/state/diff: values compare as text (6.1 = "6.1") and lists as sets;
#   cluster attributes (cpus, state) come from the cluster; the filters
#   ?cluster=, ?attribute= and ?node=, alone and together;
# - clearing sa's goals stops the rule;
# - after a restart with actual_ttl_s = 3: since is kept, reports older
#   than 3 s are "unknown", and a fresh report is known for 3 s only.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

FIX=$LOOM_TOP_SRCDIR/tests/fixtures/maintenance
OPEN='("requested", "planned", "draining", "in-progress", "verifying")'

now_ms() { echo $((${EPOCHREALTIME/[.,]/} / 1000)); }
# diff_rows QUERY: the rows of GET /v1/state/diff?QUERY, sorted, as
# "node attribute goal actual action maintenance" lines ("HTTP STATUS"
# when the answer is not 200). Goals and actual values as JSON.
diff_rows() {
    api GET "/v1/state/diff?$1" >/dev/null
    [ "$STATUS" = 200 ] || { echo "HTTP $STATUS"; return; }
    py '"\n".join(sorted(" ".join(v if isinstance(v, str) else json.dumps(v) for v in (r["node"], r["attribute"], r["goal"], r["actual"], r["action"], r["maintenance"])) for r in d["items"]))' "$BODY"
}
# mcount: "OPEN DONE TOTAL" of cluster sa's maintenance requests.
mcount() {
    api GET '/v1/maintenance?cluster=sa' >/dev/null
    py "'%d %d %d' % (len([m for m in d['items'] if m['state'] in $OPEN]), len([m for m in d['items'] if m['state'] == 'done']), len(d['items']))" "$BODY" 2>/dev/null
}
# conf TTL: loom.conf with actual_ttl_s = TTL.
conf() {
    loomd_conf <<EOF
[scheduler]
interval_s = 1

[maintenance]
actual_ttl_s = $1
compare_s = 1
verify_s = 20

[action reinstall]
command = $T/maint/action.sh --sleep 1 --hold $T/maint/release %c %n %i $TF kernel=6.1
timeout_s = 30
duration_s = 60
fixes = kernel

[rule kernel]
attribute = kernel
when = differs
action = reinstall
cluster = sa
within_s = 600
duration_s = 60
max_nodes = 1000
max_percent = 5

[cluster sa]
adaptor = sim
nodes = 200
cpus_per_node = 32
memory_mb = 131072
poll_s = 1

[cluster sb]
adaptor = sim
nodes = 10
cpus_per_node = 32
memory_mb = 131072
poll_s = 1
EOF
}

pg_start || t_bail "PostgreSQL did not start"
mkdir -p "$T/maint"
cp "$FIX/action.sh" "$T/maint/action.sh" && chmod 0755 "$T/maint/action.sh" ||
    t_bail "cannot copy the action fixture"
TF=$T/maint/token
conf 3600
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
MON=$(token_for nagios monitor) && [ -n "$MON" ] || t_bail "no monitor token"
printf '%s\n' "$MON" >"$TF" && chmod 0600 "$TF" && loom_owns "$T/maint"
wait_for 'api GET /v1/nodes >/dev/null; [ "$(jlen "$BODY" .items)" = 210 ]' 30
t_is "$(jlen "$BODY" .items)" 210 "210 sim nodes (sa: 200, sb: 10)"

# ---- one import for every node ---------------------------------------------------
python3 -c 'import json
items = [{"node": "sa/n%d" % i, "attributes": {"kernel": "6.1"}} for i in range(1, 201)]
for i in range(1, 11):
    a = {"kernel": "6.1", "os_image": "deb12", "cpus": 32}
    if i == 5:
        a["kernel"] = 6.1            # a number: compares as text with "6.1"
    if i in (6, 7):
        a["modules"] = ["x", "y"]
    if i == 8:
        a["health"] = "ok"
    if i == 9:
        a["cpus"] = 64
    if i == 10:
        a["state"] = "up"
    items.append({"node": "sb/n%d" % i, "attributes": a})
print(json.dumps({"items": items}))' >"$T/goal.json"
api PUT /v1/goal/nodes "$(cat "$T/goal.json")" >/dev/null
t_is "$STATUS/$(jget "$BODY" .nodes)" 200/210 "PUT /v1/goal/nodes imports the goals of 210 nodes in one request" ||
    t_diag "$BODY"
api GET /v1/goal/nodes >/dev/null
t_is "$(py 'len([g for g in d["items"] if g.get("attributes")])' "$BODY")" 210 "GET /v1/goal/nodes lists 210 goals"
api GET /v1/goal/nodes/sb/n5 >/dev/null
t_is "$(py 'd["attributes"]' "$BODY")" '{"kernel": 6.1, "os_image": "deb12", "cpus": 32}' \
    "sb/n5's goal as imported (kernel the number 6.1)"

# ---- every node of sa mismatches at once ----------------------------------------------
python3 -c 'import json
for i in range(1, 201):
    print(json.dumps({"node": "sa/n%d" % i, "attributes": {"kernel": "5.10"}}))
for i in range(1, 11):
    a = {"kernel": "5.10" if i <= 4 else "6.1"}
    if i == 6:
        a["modules"] = ["y", "x"]    # the goal as a set
    if i == 7:
        a["modules"] = ["x"]
    print(json.dumps({"node": "sb/n%d" % i, "attributes": a}))' >"$T/reports.jsonl"
OUT=$(python3 "$FIX/client.py" report --url "$LOOM_URL" --token-file "$TF" --threads 8 "$T/reports.jsonl")
t_is "$(py '[d["sent"], d["ok"]]' "$OUT")" '[210, 210]' "210 reports posted at once (8 connections), all taken" ||
    t_diag "$OUT"
# The actions hold (--hold) until the test has seen 10 requests open: the
# first 10 stay open together, and the rule has to wait for them.
peak=0 over= samples=0 held=
t_end=$((SECONDS + 120))
while ((SECONDS < t_end)); do
    read -r o dn tot < <(mcount)
    [ -n "$o" ] || { sleep 0.2; continue; }
    samples=$((samples + 1))
    ((o > peak)) && peak=$o
    ((o > 10)) && over="$over $o"
    # Three more looks with 10 open, then the actions may end.
    if [ ! -e "$T/maint/release" ] && ((peak >= 10)); then
        held=$((held + 1))
        ((held > 3)) && touch "$T/maint/release"
    fi
    ((dn >= 30)) && break
    sleep 0.2
done
touch "$T/maint/release"
t_is "$over" "" "max_percent = 5: never more than 10 of sa's 200 nodes in maintenance ($samples samples)"
t_is "$peak" 10 "... and the limit is used: 10 open at once"
t_ok "$( ((dn > 10)) && echo 0 || echo 1)" "... the rule goes on past the first 10 ($dn done)"
api GET '/v1/maintenance?cluster=sa' >/dev/null
t_is "$(py 'sorted(set((m["rule"], m["action"], len(m["nodes"]), m["nodes"][0].split("/")[0]) for m in d["items"]))' "$BODY")" \
    '[["kernel", "reinstall", 1, "sa"]]' "... every request: rule kernel, action reinstall, one node of sa"
t_is "$(py 'len(d["items"]) == len(set(m["nodes"][0] for m in d["items"]))' "$BODY")" true \
    "... each node once"
api GET '/v1/maintenance?cluster=sb' >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/0 "sb's kernel mismatches are only reported: no request (the rule is for sa)"

# ---- the diff and its filters, on sb ---------------------------------------------------
SB_ALL="sb/n1 kernel 6.1 5.10 null null
sb/n1 os_image deb12 unknown null null
sb/n10 os_image deb12 unknown null null
sb/n2 kernel 6.1 5.10 null null
sb/n2 os_image deb12 unknown null null
sb/n3 kernel 6.1 5.10 null null
sb/n3 os_image deb12 unknown null null
sb/n4 kernel 6.1 5.10 null null
sb/n4 os_image deb12 unknown null null
sb/n5 os_image deb12 unknown null null
sb/n6 os_image deb12 unknown null null
sb/n7 modules [\"x\", \"y\"] [\"x\"] null null
sb/n7 os_image deb12 unknown null null
sb/n8 health ok unknown null null
sb/n8 os_image deb12 unknown null null
sb/n9 cpus 64 32 null null
sb/n9 os_image deb12 unknown null null"
t_is "$(diff_rows cluster=sb)" "$SB_ALL" \
    "?cluster=sb: 17 rows (kernel 6.1 = number 6.1, modules compare as sets, cpus from the cluster)"
api GET '/v1/state/diff?cluster=sb' >/dev/null
t_is "$(py 'sorted(set(r["cluster"] for r in d["items"]))' "$BODY")" '["sb"]' "... all of cluster sb"
t_is "$(diff_rows 'cluster=sb&attribute=kernel')" "$(grep ' kernel ' <<<"$SB_ALL")" \
    "?cluster=sb&attribute=kernel: sb/n1 to n4"
t_is "$(diff_rows attribute=os_image)" "$(grep ' os_image ' <<<"$SB_ALL")" \
    "?attribute=os_image: the 10 sb nodes (no other node has that goal)"
t_is "$(diff_rows node=sb/n7)" "$(grep '^sb/n7 ' <<<"$SB_ALL")" "?node=sb/n7: modules and os_image"
t_is "$(diff_rows node=sb/n5)" "sb/n5 os_image deb12 unknown null null" "?node=sb/n5: only os_image"
t_is "$(diff_rows 'node=sb/n9&attribute=cpus')" "sb/n9 cpus 64 32 null null" "?node=sb/n9&attribute=cpus"
t_is "$(diff_rows 'cluster=sb&attribute=kernel&node=sb/n9')" "" "?cluster=sb&attribute=kernel&node=sb/n9: none"
t_is "$(diff_rows 'cluster=sa&attribute=os_image')" "" "?cluster=sa&attribute=os_image: none"
api GET /v1/actual/nodes/sb/n9 >/dev/null
t_is "$(py '[d["attributes"]["cpus"]["value"], d["attributes"]["cpus"]["source"]]' "$BODY")" '[32, "cluster"]' \
    "GET /v1/actual/nodes/sb/n9: cpus 32 from the cluster"
api PUT /v1/nodes/sb/n10/state '{"state":"drain","reason":"7003"}' >/dev/null
t_is "$STATUS" 200 "drain sb/n10 (goal state up)"
wait_for '[ "$(diff_rows "node=sb/n10&attribute=state")" != "" ]' 30
t_is "$(diff_rows 'node=sb/n10&attribute=state')" "sb/n10 state up drained null null" \
    "... the diff shows state: goal up, actual drained"
api PUT /v1/nodes/sb/n10/state '{"state":"up"}' >/dev/null
wait_for '[ "$(diff_rows "node=sb/n10&attribute=state")" = "" ]' 30
t_is "$(diff_rows 'node=sb/n10&attribute=state')" "" "... up again: the row is gone"

# ---- clearing sa's goals stops the rule -------------------------------------------------
python3 -c 'import json
print(json.dumps({"items": [{"node": "sa/n%d" % i, "attributes": {}} for i in range(1, 201)]}))' >"$T/clear.json"
api PUT /v1/goal/nodes "$(cat "$T/clear.json")" >/dev/null
t_is "$STATUS/$(jget "$BODY" .nodes)" 200/200 "an import of {} for sa's 200 nodes clears their goals"
# Committed by the maintenance thread before it answered: from here on its
# rule has no goal to make a request for.
read -r o dn tot < <(mcount)
wait_for 'read -r o dn tot2 < <(mcount); [ "$o" = 0 ]' 60
read -r o dn tot2 < <(mcount)
t_is "$o" 0 "the open requests end ($dn done)"
t_is "$tot2" "$tot" "... and the rule makes no new one ($tot requests in all)"
t_is "$(diff_rows cluster=sa)" "" "no mismatch is left on sa"
api GET /v1/goal/nodes >/dev/null
t_is "$(py 'len([g for g in d["items"] if g.get("attributes")])' "$BODY")" 10 "10 goals are left (sb's)"

# ---- a restart with actual_ttl_s = 3 ---------------------------------------------------------
api GET '/v1/state/diff?node=sb/n2&attribute=os_image' >/dev/null
SINCE=$(jget "$BODY" .items.0.since)
t_like "$SINCE" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
    "sb/n2's os_image mismatch is there since $SINCE"
loomd_stop
t_is $? 0 "loomd stops with status 0"
conf 3
loomd_start || t_bail "loomd did not start with actual_ttl_s = 3"
api GET '/v1/state/diff?node=sb/n2&attribute=os_image' >/dev/null
t_is "$(jget "$BODY" .items.0.since)" "$SINCE" "after the restart its since is the same"
wait_for '[ "$(diff_rows "node=sb/n6&attribute=kernel")" != "" ]' 30
t_is "$(diff_rows 'cluster=sb&attribute=kernel')" "$(for i in 1 10 2 3 4 5 6 7 8 9; do
    echo "sb/n$i kernel 6.1 unknown null null"; done)" \
    "actual_ttl_s = 3: the kernel reports, older, are unknown now on every sb node"
t_is "$(diff_rows 'node=sb/n6&attribute=modules')" "sb/n6 modules [\"x\", \"y\"] unknown null null" \
    "... so is sb/n6's modules"
# A fresh report is known while it is younger than 3 s: a look (the report,
# then the diff) that took less than 2 s from the report's start to the
# diff's answer must find the mismatch gone (times in the API are whole
# seconds: a report may count as up to 1 s older). A look that took
# longer, on a busy machine, proves nothing and is made again.
tries=0 inlooks=0 gone= statuses=
while ((tries < 10 && inlooks == 0)); do
    tries=$((tries + 1))
    T0=$(now_ms)
    TOKEN=$MON api POST /v1/actual/nodes/sb/n8 '{"attributes":{"health":"ok"}}' >/dev/null
    statuses="$statuses $STATUS"
    d=$(diff_rows 'node=sb/n8&attribute=health')
    (($(now_ms) - T0 < 2000)) || continue
    inlooks=1
    gone=${d:-gone}
done
t_is "$statuses" "$(printf ' 200%.0s' $(seq "$tries"))" "fresh reports of health ok for sb/n8: 200"
t_is "$inlooks/$gone" 1/gone "... its health mismatch is gone while the report is fresh ($tries looks)"
wait_for '[ -n "$(diff_rows "node=sb/n8&attribute=health")" ]' 30
T2=$(now_ms)
t_is "$(diff_rows 'node=sb/n8&attribute=health')" "sb/n8 health ok unknown null null" \
    "... and back as unknown once the report is older than 3 s"
t_ok "$( ((T2 - T0 >= 2000)) && echo 0 || echo 1)" \
    "... not before the report was 2 s old ($((T2 - T0)) ms after it)"

# PostgreSQL down: writes get 503 and are not kept; reads go on; loomd
# reconnects by itself and the same writes land.
pg_kill || t_diag "pg_kill: the server took long to die"
api PUT /v1/goal/nodes/sb/n3 '{"attributes":{"kernel":"7.0"}}' >/dev/null
t_is "$STATUS" 503 "PostgreSQL down: PUT goal is 503" || t_diag "$BODY"
TOKEN=$MON api POST /v1/actual/nodes/sb/n3 '{"attributes":{"kernel":"7.0"}}' >/dev/null
t_is "$STATUS" 503 "... a report is 503" || t_diag "$BODY"
api GET '/v1/state/diff?node=sb/n3&attribute=kernel' >/dev/null
t_is "$STATUS/$(jget "$BODY" .items.0.goal)" 200/6.1 "... the diff is served, the goal unchanged"
pg_restart_same || t_bail "PostgreSQL did not start again"
wait_for 'api PUT /v1/goal/nodes/sb/n3 "{\"attributes\":{\"kernel\":\"7.0\"}}" >/dev/null; [ "$STATUS" = 200 ]' 30
t_is "$STATUS" 200 "PostgreSQL back: the same PUT goal is 200"
t_is "$(pg_sql "select attrs->>'kernel' from goal_nodes where node = 'sb/n3'")" 7.0 \
    "... and it is in the database"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
