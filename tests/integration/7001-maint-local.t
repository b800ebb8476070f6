#!/usr/bin/env bash
# 7001-maint-local.t - goal state, actual state and maintenance requests on
# the local executor (3 nodes of 2 cpus), with an [action reinstall] whose
# command (tests/fixtures/maintenance/action.sh) posts the node's new
# kernel, and a [rule kernel] (when = differs, max_nodes = 1):
# - bad input: unknown fields (400), unknown nodes (404), an import naming
#   an unknown node changes nothing (404), a report without the monitor
#   role (403), a report of what the cluster reports itself (400);
# - a goal of kernel 6.1 and a report of 5.10 for a node with a running job:
#   a request of the rule appears at once, the mismatch shows in
#   /v1/state/diff (and loomctl diff) with its action and request; the node
#   drains (jobs submitted meanwhile land elsewhere), the job completes, the
#   action runs (node maint), verification passes, the request is done, the
#   node idle and taking jobs, the mismatch gone, the reservation done;
# - windows: a flexible one is placed after a long job's walltime; one open
#   request per node and action; DELETE frees the nodes; a fixed one that
#   conflicts is a 409 naming the job in the way and force; force (admin
#   only) cancels the job, whose reason names the request; a node-off in
#   progress can be cancelled;
# - a failing action leaves the node drained, the request failed;
# - kill -9 of loomd while an action runs: the request resumes and is done;
# - max_nodes = 1: every node mismatching at once, never more than one open
#   request of the rule; all are repaired in turn (goal set by loomctl goal
#   import).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

FIX=$LOOM_TOP_SRCDIR/tests/fixtures/maintenance
OPEN='("requested", "planned", "draining", "in-progress", "verifying")'

# ok_if EXPR: 0 when the arithmetic EXPR holds (and names no "-").
ok_if() {
    case $1 in *-\ * | *\ -* | -*) echo 1; return ;; esac
    (($1)) 2>/dev/null && echo 0 || echo 1
}
# ep TIME: epoch seconds of an RFC 3339 time; "-" when empty or not a time
# (date takes "" for midnight).
ep() {
    if [ -n "$1" ]; then epoch "$1"; else echo -; fi
}
now_ms() { echo $((${EPOCHREALTIME/[.,]/} / 1000)); }
# iso EPOCH: the RFC 3339 time of EPOCH.
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
running() { [ "$(field "$1" .state)" = running ]; }
# ljob NAME CPUS WALLTIME SHELL-COMMAND: a job pinned to cluster local.
ljob() {
    submit "{\"name\":\"$1\",\"command\":[\"/bin/sh\",\"-c\",\"$4\"],\"request\":{\"cluster\":\"local\",\"cpus_per_node\":$2,\"walltime_s\":$3}}"
}
# nstate NAME: the state of node local/NAME.
nstate() {
    api GET "/v1/nodes/local/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
nreason() {
    api GET "/v1/nodes/local/$1" >/dev/null
    jget "$BODY" .reason 2>/dev/null
}
# mreq ID: GET /v1/maintenance/ID (STATUS, BODY); mstate ID: its state.
mreq() { api GET "/v1/maintenance/$1" >/dev/null; }
mstate() {
    api GET "/v1/maintenance/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
# mhist: the states of the history of the request in BODY, "requested"
# (when listed) left out.
mhist() {
    py '" ".join(h["state"] for h in d.get("history") or [] if h["state"] != "requested")' "$BODY" 2>/dev/null
}
# open_req NODE_ID: the ids of NODE_ID's open requests.
open_req() {
    api GET /v1/maintenance >/dev/null
    py "' '.join(m['id'] for m in d['items'] if '$1' in m['nodes'] and m['state'] in $OPEN)" "$BODY" 2>/dev/null
}
# report NODE JSON-ATTRIBUTES [TOKEN]: POST the node's actual state.
report() {
    TOKEN=${3:-$MON} api POST "/v1/actual/nodes/local/$1" "{\"attributes\":$2}" >/dev/null
}
# diff_rows QUERY: the rows of GET /v1/state/diff?QUERY as
# "node attribute goal actual action maintenance" lines ("HTTP STATUS" when
# the answer is not 200).
diff_rows() {
    api GET "/v1/state/diff?$1" >/dev/null
    [ "$STATUS" = 200 ] || { echo "HTTP $STATUS"; return; }
    py '"\n".join(" ".join(str(r.get(k)) for k in ("node", "attribute", "goal", "actual", "action", "maintenance")) for r in d["items"])' "$BODY"
}
# ticks_pass N: the maintenance thread has compared the nodes N more times
# (the local cluster's polls make it compare every tick): its rules and
# requests had N ticks since the call. 0 when they had.
ticks_pass() { turns_pass .maintenance.compares "$1"; }
# starts ID NODE: how many times the action of request ID started on NODE.
starts() {
    grep -c " start local/$2 id=$1 " "$T/maint/actions.log" 2>/dev/null
}
# watched AWK-CONDITION: "COUNT STATES" of the samples the actions took of
# their node's state (action.sh --watch: fields $1 id, $2 pid, $3 node, $4
# state) that meet the condition: how many, and the states seen (sorted,
# each once).
watched() {
    local n s
    n=$(awk "$1" "$T/maint/states" 2>/dev/null | wc -l)
    s=$(awk "$1"' { print $4 }' "$T/maint/states" 2>/dev/null | sort -u | paste -sd' ')
    echo "$n $s"
}

pg_start || t_bail "PostgreSQL did not start"
mkdir -p "$T/maint"
# The fixture is copied into $T: a path without blanks, and its mode is ours.
cp "$FIX/action.sh" "$T/maint/action.sh" && chmod 0755 "$T/maint/action.sh" ||
    t_bail "cannot copy the action fixture"
A=$T/maint/action.sh
TF=$T/maint/token
loomd_conf <<EOF
[scheduler]
interval_s = 1

[maintenance]
actual_ttl_s = 3600
compare_s = 5
verify_s = 20

[action reinstall]
command = $A --sleep 2 --watch $T/maint/states --hold $T/maint/release %c %n %i $TF kernel=6.1
timeout_s = 30
duration_s = 60
fixes = kernel

[action broken]
command = $A --exit 3 %c %n %i $TF
timeout_s = 30
duration_s = 30

[action slow]
command = $A --sleep 2 --watch $T/maint/states --hold $T/maint/slow.go %c %n %i $TF firmware=2
timeout_s = 60
duration_s = 60
fixes = firmware

[rule kernel]
attribute = kernel
when = differs
action = reinstall
within_s = 600
duration_s = 60
max_nodes = 1

[cluster local]
adaptor = local
nodes = 3
cpus_per_node = 2
memory_mb = 1024
poll_s = 1
EOF
# the users' jobs run as the test's account, $T_USER (no privilege)
for u in bob; do map_account "$u" "$T_USER"; done
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
MON=$(token_for nagios monitor) && [ -n "$MON" ] || t_bail "no monitor token"
printf '%s\n' "$MON" >"$TF" && chmod 0600 "$TF" && loom_owns "$T/maint"
OPER=$(token_for olga operator)
USERT=$(token_for bob user)
READER=$(token_for rita reader)

api GET '/v1/nodes?cluster=local' >/dev/null
t_is "$(py '" ".join(sorted(n["id"] for n in d["items"]))' "$BODY")" \
    "local/n1 local/n2 local/n3" "the local cluster has nodes local/n1, n2 and n3"

# ---- bad input -------------------------------------------------------------------
api PUT /v1/goal/nodes/local/n1 '{"attributes":{"kernel":"6.1"},"bogus":1}' >/dev/null
t_is "$STATUS" 400 "PUT goal with an unknown field: 400" || t_diag "$BODY"
api PUT /v1/goal/nodes/local/n9 '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 404 "PUT goal of a node that does not exist (local/n9): 404" || t_diag "$BODY"
api PUT /v1/goal/nodes/zz/n1 '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 404 "PUT goal of a node of a cluster that does not exist: 404"
TOKEN=$OPER api PUT /v1/goal/nodes/local/n1 '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 403 "PUT goal needs the admin role (an operator: 403)"
api PUT /v1/goal/nodes '{"items":[{"node":"local/n1","attributes":{"kernel":"6.1"}},{"node":"local/n9","attributes":{"kernel":"6.1"}}]}' >/dev/null
t_is "$STATUS" 404 "a goal import naming one unknown node: 404" || t_diag "$BODY"
t_like "$(jget "$BODY" .error.message)" 'local/n9' "... the answer names it"
api GET /v1/goal/nodes >/dev/null
t_is "$STATUS/$(py '[g["node"] for g in d["items"] if g.get("attributes")]' "$BODY")" "200/[]" \
    "... and nothing was imported (local/n1 has no goal)"
report n1 '{"kernel":"5.10"}' "$USERT"
t_is "$STATUS" 403 "a report with a user token (no monitor role): 403"
report n1 '{"kernel":"5.10"}' "$READER"
t_is "$STATUS" 403 "a report with a reader token: 403"
TOKEN=$MON api POST /v1/actual/nodes/local/n1 '{"attributes":{"kernel":"5.10"},"bogus":1}' >/dev/null
t_is "$STATUS" 400 "a report with an unknown field: 400"
report n1 '{"cpus":4}'
t_is "$STATUS" 400 "a report of cpus, which the cluster reports itself: 400"
TOKEN=$MON api POST /v1/actual/nodes/local/n1 "{\"attributes\":{\"kernel\":\"5.10\"},\"time\":\"$(at 3600)\"}" >/dev/null
t_is "$STATUS" 400 "a report dated an hour from now: 400"
report n9 '{"kernel":"5.10"}'
t_is "$STATUS" 404 "a report of a node that does not exist: 404"
api POST /v1/maintenance '{"nodes":["local/n1"],"action":"node-off","reason":"x","window":{"duration_s":30},"bogus":true}' >/dev/null
t_is "$STATUS" 400 "POST /v1/maintenance with an unknown field: 400"
api POST /v1/maintenance '{"nodes":["local/n1"],"action":"node-off","reason":"x"}' >/dev/null
t_is "$STATUS" 400 "a node-off request without duration_s: 400"
TOKEN=$USERT api POST /v1/maintenance '{"nodes":["local/n1"],"action":"node-off","reason":"x","window":{"duration_s":30}}' >/dev/null
t_is "$STATUS" 403 "POST /v1/maintenance with a user token: 403"
api GET /v1/maintenance/999999 >/dev/null
t_is "$STATUS" 404 "GET of a request that does not exist: 404"
api GET /v1/maintenance >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/0 "no request was made by any of that"

# ---- a kernel mismatch on a node with a running job --------------------------------
# A 1-cpu job leaves a cpu free on its node: only the drain keeps new jobs off.
# It runs until the test lets it end (the file busy.go; 100 s at most).
ljob busy 1 120 'i=0; while [ ! -e '"$T"'/maint/busy.go ] && [ $i -lt 500 ]; do sleep 0.2; i=$((i + 1)); done; echo busy-done'
BUSY=$JOB
wait_for 'running "$BUSY"' 30
t_is "$(field "$BUSY" .state)" running "a job (1 cpu, walltime 120 s, until the test lets it end) runs"
N=$(field "$BUSY" .nodes.0)
BUSY_START=$(ep "$(field "$BUSY" .start_time)")
t_like "$N" '^n[123]$' "... on local/$N"

api PUT "/v1/goal/nodes/local/$N" '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 200 "PUT goal kernel=6.1 for local/$N: 200" || t_diag "$BODY"
t_is "$(py '[d["node"], d["attributes"], bool(d.get("updated"))]' "$BODY")" \
    "[\"local/$N\", {\"kernel\": \"6.1\"}, true]" "... the answer is the stored goal"
api GET "/v1/goal/nodes/local/$N" >/dev/null
t_is "$STATUS/$(py 'd["attributes"]' "$BODY")" '200/{"kernel": "6.1"}' "GET the node's goal"
wait_for '[ -n "$(diff_rows "node=local/$N")" ]' 30
t_is "$(diff_rows "node=local/$N" | cut -d' ' -f1-4,6)" "local/$N kernel 6.1 unknown None" \
    "never reported: the diff shows kernel actual unknown, no request"
ticks_pass 3
t_ok $? "... the maintenance thread ticks on (3 comparisons)"
api GET /v1/maintenance >/dev/null
t_is "$(jlen "$BODY" .items)" 0 "the rule (when = differs) made no request for the unknown value meanwhile"

T_REP=$(now_ms)
report "$N" '{"kernel":"5.10"}'
t_is "$STATUS" 200 "a monitor reports kernel=5.10 for local/$N" || t_diag "$BODY"
wait_for '[ -n "$(open_req "local/$N")" ]' 30
MID=$(open_req "local/$N")
T_SEEN=$(now_ms)
t_like "$MID" '^[0-9]+$' "a maintenance request appears (id $MID)"
mreq "$MID"
H0=$(ep "$(py '(d.get("history") or [{}])[0].get("time") or ""' "$BODY" 2>/dev/null)")
t_ok "$(ok_if "$H0 >= T_REP / 1000")" "... made after the report (at $H0, the report at $((T_REP / 1000)))"
MREQ=$BODY
t_is "$(py '[d["cluster"], d["nodes"], d["action"], d["rule"], d["owner"], d["error"]]' "$MREQ")" \
    "[\"local\", [\"local/$N\"], \"reinstall\", \"kernel\", \"loom\", null]" \
    "... cluster local, its node, action reinstall, rule kernel, owner loom, no error"
t_like "$(jget "$MREQ" .reason)" 'kernel' "... its reason names the attribute ($(jget "$MREQ" .reason))"
t_like "$(jget "$MREQ" .state)" '^(planned|draining)$' "... state $(jget "$MREQ" .state)"
RID=$(jget "$MREQ" .reservation)
t_like "$RID" '^[0-9]+$' "... with a reservation ($RID)"
MS=$(ep "$(jget "$MREQ" .start)")
ME=$(ep "$(jget "$MREQ" .end)")
MW=-
[ "$MS" = - ] || [ "$ME" = - ] || MW=$((ME - MS))
t_is "$(jget "$MREQ" .window.duration_s)/$MW" 60/60 "... a window of the rule's 60 s"
DL=$(ep "$(jget "$MREQ" .window.deadline)")
t_ok "$(ok_if "$DL >= T_REP / 1000 + 595 && $DL <= T_SEEN / 1000 + 605")" \
    "... deadline the report's time + within_s (600 s): $DL"
t_ok "$(ok_if "$MS <= BUSY_START + 121 && $ME <= DL")" \
    "... planned no later than the running job's walltime ($MS <= $BUSY_START + 120)"
t_is "$(py '(d.get("history") or [{}])[0].get("state")' "$MREQ" | sed 's/^requested$/planned/')" planned \
    "... its history begins with planned"
api GET "/v1/reservations/$RID" >/dev/null
t_is "$(py '[d["purpose"], d["nodes"], d["state"]]' "$BODY")" "[\"maintenance\", [\"local/$N\"], \"planned\"]" \
    "the reservation: purpose maintenance, the node, planned"

t_is "$(diff_rows "node=local/$N")" "local/$N kernel 6.1 5.10 reinstall $MID" \
    "GET /v1/state/diff: kernel, goal 6.1, actual 5.10, action reinstall, request $MID"
api GET "/v1/state/diff?node=local/$N" >/dev/null
t_like "$(jget "$BODY" .items.0.since)" '^20[0-9-]+T[0-9:]+Z$' "... with since ($(jget "$BODY" .items.0.since))"
t_is "$(jget "$BODY" .items.0.cluster)" local "... and the cluster"
api GET "/v1/actual/nodes/local/$N" >/dev/null
t_is "$(py '[d["node"], d["attributes"]["kernel"]["value"], d["attributes"]["kernel"]["source"], d["attributes"]["state"]["source"]]' "$BODY")" \
    "[\"local/$N\", \"5.10\", \"report\", \"cluster\"]" \
    "GET /v1/actual: kernel 5.10 from the report, state from the cluster"
OUT=$(loomctl diff --cluster local 2>&1)
t_like "$OUT" "local/$N +kernel +6\.1 +5\.10" "loomctl diff lists the mismatch side by side" ||
    t_diag "$OUT"

wait_for '[[ $(nstate "$N") =~ ^(draining|drained|maint)$ ]]' 30
t_is "$(nstate "$N")" draining "local/$N is draining (its job still runs)"
t_like "$(nreason "$N")" "loom maintenance $MID" "... with the reason loom maintenance $MID"
# Five 1-cpu jobs: 4 cpus are free on the two other nodes, 1 on local/$N.
MEANWHILE=
for i in 1 2 3 4 5; do
    ljob "meanwhile-$i" 1 20 'sleep 3'
    MEANWHILE="$MEANWHILE $JOB"
done
on_n=
t_end=$((SECONDS + 60))
while ((SECONDS < t_end)); do
    left=0
    for id in $MEANWHILE; do
        job "$id"
        [ "$(py '"local/" + d["nodes"][0] if d["nodes"] else ""' "$BODY")" = "local/$N" ] &&
            on_n="$on_n $id"
        case $(jget "$BODY" .state) in completed | failed | cancelled) ;; *) left=$((left + 1)) ;; esac
    done
    [ "$left" = 0 ] && break
    sleep 0.3
done
t_is "$(wc -w <<<"$MEANWHILE")$on_n" 5 "5 jobs submitted meanwhile: none on local/$N"
bad=
for id in $MEANWHILE; do [ "$(field "$id" .state)" = completed ] || bad="$bad $id"; done
t_is "$bad" "" "... they completed on the other nodes"
touch "$T/maint/busy.go" # the busy job may end now

# Follow the request to its end. A look reads the request, the node, the
# request again: when both reads say in-progress, the node was read while
# the request was in progress. The action holds (--hold) until three such
# looks were taken.
looks=0 seen=
t_end=$((SECONDS + 90))
while ((SECONDS < t_end)); do
    st=$(mstate "$MID")
    ns=$(nstate "$N")
    st2=$(mstate "$MID")
    if [ "$st" = in-progress ] && [ "$st2" = in-progress ]; then
        looks=$((looks + 1))
        case " $seen " in *" $ns "*) ;; *) seen="$seen${seen:+ }$ns" ;; esac
    fi
    [ "$looks" -lt 3 ] || touch "$T/maint/release"
    case $st2 in done | failed | cancelled) break ;; esac
    sleep 0.2
done
touch "$T/maint/release" # the requests that follow do not hold
wait_for 'ended "$BUSY"' 30
job "$BUSY"
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["completed", 0]' \
    "the running job completed with exit code 0 (not killed)"
BUSY_END=$(ep "$(jget "$BODY" .end_time)")
mreq "$MID"
t_is "$(jget "$BODY" .state)" done "the request is done" || t_diag "$BODY"
t_is "$(mhist)" "planned draining in-progress verifying done" \
    "... its history: planned, draining, in-progress, verifying, done"
IP=$(ep "$(py '[h["time"] for h in d["history"] if h["state"] == "in-progress"][0]' "$BODY" 2>/dev/null)")
t_ok "$(ok_if "$IP >= BUSY_END")" "... in-progress ($IP) only after the job ended ($BUSY_END)"
t_is "$((looks >= 3))/$seen" 1/maint \
    "while in progress, local/$N showed maint, never idle ($looks looks)"
read -r wn ws <<<"$(watched "\$1 == $MID")"
t_is "$((wn >= 1))/$ws" 1/maint \
    "... and to its action, in each of the $wn looks it took while it ran (--watch)"
t_is "$(jget "$BODY" .error)" null "... no error"
t_like "$(jget "$BODY" .output)" "action on local/$N for maintenance $MID" \
    "the request keeps the action's output"
t_is "$(starts "$MID" "$N")" 1 "the action ran once"
t_like "$(grep " start local/$N id=$MID " "$T/maint/actions.log" 2>/dev/null)" \
    "env=local/$N/$MID url=[^ ]+" "... with LOOM_CLUSTER, LOOM_NODE, LOOM_MAINTENANCE_ID and LOOM_URL"
t_like "$(grep " start local/$N id=$MID " "$T/maint/actions.log" 2>/dev/null)" 'pid=([0-9]+) pgid=\1 ' \
    "... in a process group of its own"
wait_for '[ "$(nstate "$N")" = idle ]' 30
t_is "$(nstate "$N")/$(nreason "$N")" idle/null "local/$N is idle again, no reason"
t_is "$(diff_rows "node=local/$N")" "" "the mismatch is gone from /v1/state/diff"
api GET "/v1/actual/nodes/local/$N" >/dev/null
t_is "$(py 'd["attributes"]["kernel"]["value"]' "$BODY")" 6.1 "the action's report: kernel 6.1"
api GET '/v1/reservations?purpose=maintenance' >/dev/null
t_is "$(py "[[r['state'], r['purpose']] for r in d['items'] if r['id'] == '$RID']" "$BODY")" \
    '[["done", "maintenance"]]' "GET /v1/reservations?purpose=maintenance: its reservation is done"
api GET '/v1/maintenance?cluster=local&state=done' >/dev/null
t_is "$(py "[m['id'] for m in d['items'] if m['id'] == '$MID']" "$BODY")" "[\"$MID\"]" \
    "GET /v1/maintenance?cluster=local&state=done lists it"
# The three run until all three run (the file whole.go; 50 s at most): one
# that had ended already would free its node for the next.
WHOLE='i=0; while [ ! -e '"$T"'/maint/whole.go ] && [ $i -lt 250 ]; do sleep 0.2; i=$((i + 1)); done'
ljob whole 2 60 "$WHOLE"
W1=$JOB
ljob whole 2 60 "$WHOLE"
W2=$JOB
ljob whole 2 60 "$WHOLE"
W3=$JOB
wait_for 'running "$W1" && running "$W2" && running "$W3"' 30
touch "$T/maint/whole.go"
wait_for 'ended "$W1" && ended "$W2" && ended "$W3"' 30
t_is "$(for id in $W1 $W2 $W3; do field "$id" .nodes.0; done | sort | paste -sd' ')" "n1 n2 n3" \
    "three whole-node jobs ran on the three nodes at once: local/$N takes jobs again"

# ---- windows on a node busy with a long job --------------------------------------------
ljob long 2 120 'sleep 100'
LONG=$JOB
wait_for 'running "$LONG"' 30
X=$(field "$LONG" .nodes.0)
LSTART=$(ep "$(field "$LONG" .start_time)")
t_is "$(field "$LONG" .state)" running "a long job (walltime 120 s, sleep 100) holds local/$X"
api POST /v1/maintenance "{\"nodes\":[\"local/$X\"],\"action\":\"node-off\",\"reason\":\"fans\",\"window\":{\"not_before\":\"$(at 5)\",\"duration_s\":30}}" >/dev/null
t_is "$STATUS" 201 "a flexible node-off window on local/$X (not_before in 5 s, 30 s): 201" || t_diag "$BODY"
B1=$(jget "$BODY" .id)
S=$(ep "$(jget "$BODY" .start)")
E=$(ep "$(jget "$BODY" .end)")
WIN=-
[ "$S" = - ] || [ "$E" = - ] || WIN=$((E - S))
t_ok "$(ok_if "$S >= LSTART + 119 && $S <= LSTART + 125 && $WIN == 30")" \
    "... placed after the job's start + walltime ($S-$E, job $LSTART + 120)"
t_is "$(py '[d["state"], d["action"], d["owner"], d["rule"], d["cancelled_jobs"]]' "$BODY")" \
    '["planned", "node-off", "admin", null, []]' "... planned, node-off, owner admin, no rule, no job cancelled"
RB1=$(jget "$BODY" .reservation)
api GET "/v1/reservations/$RB1" >/dev/null
t_is "$(jget "$BODY" .purpose)/$(jget "$BODY" .state)/$(ep "$(jget "$BODY" .start)")" "maintenance/planned/$S" \
    "... its reservation: maintenance, planned, same start"
ticks_pass 2
t_is "$?/$(nstate "$X")" 0/allocated "... a window later than now: local/$X is not drained (2 ticks later)"
api POST /v1/maintenance "{\"nodes\":[\"local/$X\"],\"action\":\"node-off\",\"reason\":\"again\",\"window\":{\"duration_s\":30}}" >/dev/null
t_is "$STATUS" 409 "a second open node-off request for local/$X: 409"
api DELETE "/v1/maintenance/$B1" >/dev/null
t_is "$STATUS" 200 "DELETE the planned request: 200" || t_diag "$BODY"
t_is "$(mstate "$B1")" cancelled "... it is cancelled"
api GET "/v1/reservations/$RB1" >/dev/null
t_is "$(jget "$BODY" .state)" cancelled "... and so is its reservation"

api POST /v1/maintenance "{\"nodes\":[\"local/$X\"],\"action\":\"node-off\",\"reason\":\"asap\",\"window\":{\"duration_s\":30}}" >/dev/null
t_is "$STATUS" 201 "a node-off window as soon as possible on local/$X: 201" || t_diag "$BODY"
B2=$(jget "$BODY" .id)
RB2=$(jget "$BODY" .reservation)
S=$(ep "$(jget "$BODY" .start)")
t_ok "$(ok_if "$S >= LSTART + 119 && $S <= LSTART + 125")" "... planned for the job's start + walltime ($S)"
wait_for '[ "$(nstate "$X")" = draining ]' 30
t_is "$(nstate "$X")" draining "... local/$X drains at once (its job runs on)"
api DELETE "/v1/maintenance/$B2" >/dev/null
t_is "$STATUS/$(mstate "$B2")" 200/cancelled "DELETE of the draining request: 200, cancelled"
wait_for '[ "$(nstate "$X")" = allocated ]' 30
t_is "$(nstate "$X")" allocated "... local/$X is back up (allocated to its job)"
api GET "/v1/reservations/$RB2" >/dev/null
t_is "$(jget "$BODY" .state)" cancelled "... its reservation cancelled"
t_is "$(field "$LONG" .state)" running "... the long job runs on"

FS=$(($(date +%s) + 10))
FIXED="{\"nodes\":[\"local/$X\"],\"action\":\"node-off\",\"reason\":\"psu\",\"window\":{\"start\":\"$(iso "$FS")\",\"duration_s\":30}"
api POST /v1/maintenance "$FIXED}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.code)" 409/conflict \
    "a fixed window in 10 s on local/$X, where the job runs until its walltime: 409" || t_diag "$BODY"
t_is "$(jget "$BODY" .error.message)" \
    "no window for the reservation on cluster local: from $(iso "$FS") to $(iso $((FS + 30))), job $LONG holds $X until $(iso $((LSTART + 120))); \"force\": true (admin) takes the window anyway, cancelling the jobs in the way" \
    "... naming the job in the way, its node, until when, and force"
TOKEN=$OPER api POST /v1/maintenance "$FIXED,\"force\":true}" >/dev/null
t_is "$STATUS" 403 "... force by an operator: 403 (admin only)"
api POST /v1/maintenance "$FIXED,\"force\":true}" >/dev/null
t_is "$STATUS" 201 "... force by an admin: 201" || t_diag "$BODY"
D=$(jget "$BODY" .id)
t_is "$(py '[j["id"] if isinstance(j, dict) else str(j) for j in d["cancelled_jobs"]]' "$BODY")" "[\"$LONG\"]" \
    "... cancelled_jobs names the long job"
wait_for 'ended "$LONG"' 30
t_is "$(field "$LONG" .state)" cancelled "the long job ends cancelled"
t_is "$(field "$LONG" .reason)" "cancelled by maintenance $D (forced window)" \
    "... its reason says by which maintenance"
wait_for '[ "$(mstate "$D")" = in-progress ] && [ "$(nstate "$X")" = maint ]' 60
t_is "$(mstate "$D")/$(nstate "$X")" in-progress/maint "at the window's start: in-progress, local/$X maint"
api DELETE "/v1/maintenance/$D" >/dev/null
t_is "$STATUS" 200 "DELETE of the node-off request in progress: 200" || t_diag "$BODY"
t_is "$(mstate "$D")" cancelled "... cancelled"
wait_for '[ "$(nstate "$X")" = idle ]' 30
t_is "$(nstate "$X")" idle "... local/$X is back"

# ---- an action that fails ---------------------------------------------------------------
api POST /v1/maintenance "{\"nodes\":[\"local/$X\"],\"action\":\"broken\",\"reason\":\"try\"}" >/dev/null
t_is "$STATUS" 201 "a request with the action broken (exits 3): 201" || t_diag "$BODY"
F=$(jget "$BODY" .id)
RF=$(jget "$BODY" .reservation)
t_is "$(jget "$BODY" .window.duration_s)" 30 "... the window is the action's duration_s"
wait_for 'case $(mstate "$F") in done | failed | cancelled) true ;; *) false ;; esac' 60
mreq "$F"
t_is "$(jget "$BODY" .state)" failed "the request failed"
t_is "$(jget "$BODY" .error)" \
    "node $X: the action exited with status 3: action on local/$X fails with status 3" \
    "... with the action's exit status and what it said as the error"
t_like "$(mhist)" 'in-progress failed$' "... after in-progress"
t_like "$(jget "$BODY" .output)" 'fails with status 3' "... the output has what the action printed"
wait_for '[ "$(nstate "$X")" = drained ]' 30
t_is "$(nstate "$X")" drained "local/$X stays out: drained"
t_like "$(nreason "$X")" "loom maintenance $F failed" "... reason loom maintenance $F failed: ..."
api GET "/v1/reservations/$RF" >/dev/null
t_is "$(jget "$BODY" .state)" done "... the reservation ended early: done"
ljob after-fail 1 20 'true'
AF=$JOB
wait_for 'ended "$AF"' 30
AFN=$(field "$AF" .nodes.0)
t_is "$(field "$AF" .state)/$([[ $AFN =~ ^n[123]$ && $AFN != "$X" ]] && echo elsewhere)" completed/elsewhere \
    "a job submitted then does not run on local/$X (it ran on local/$AFN)"
api PUT "/v1/nodes/local/$X/state" '{"state":"up"}' >/dev/null
t_is "$STATUS" 200 "an admin puts local/$X back up"
wait_for '[ "$(nstate "$X")" = idle ]' 30
t_is "$(nstate "$X")" idle "... idle"

# ---- kill -9 of loomd while an action runs -----------------------------------------------
Z=$X
api PUT "/v1/goal/nodes/local/$Z" '{"attributes":{"firmware":"2"}}' >/dev/null
t_is "$STATUS" 200 "goal firmware=2 for local/$Z"
api POST /v1/maintenance "{\"nodes\":[\"local/$Z\"],\"action\":\"slow\",\"reason\":\"firmware 2\"}" >/dev/null
t_is "$STATUS" 201 "a request with the action slow (it holds, fixes firmware): 201" || t_diag "$BODY"
G=$(jget "$BODY" .id)
wait_for '[ "$(mstate "$G")" = in-progress ] && [ "$(starts "$G" "$Z")" = 1 ]' 30
t_is "$(mstate "$G")/$(starts "$G" "$Z")" in-progress/1 "it is in progress, its action started"
APID=$(grep " start local/$Z id=$G " "$T/maint/actions.log" | sed -n 's/.* pid=\([0-9]*\) pgid=\([0-9]*\) .*/\1 \2/p')
OLD_PID=$LOOMD_PID
loomd_kill9
! alive "$OLD_PID"
t_ok $? "loomd is killed (SIGKILL) while the action runs"
# The orphaned action would report after loomd is back; stop it, so that
# only a resumed action can make the request pass.
read -r apid apgid <<<"$APID"
if [ -n "$apid" ] && [ "$apid" = "$apgid" ]; then
    kill -KILL -- "-$apid" 2>/dev/null
elif [ -n "$apid" ]; then
    kill -KILL $(awk -v p="$apid" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null) "$apid" 2>/dev/null
fi
touch "$T/maint/slow.go" # the action run again does not hold
loomd_start || t_bail "loomd did not start again"
wait_for 'case $(mstate "$G") in done | failed | cancelled) true ;; *) false ;; esac' 60
mreq "$G"
t_is "$(jget "$BODY" .state)" done "after the restart the request resumed and is done" || t_diag "$BODY"
t_like "$(mhist)" 'in-progress (in-progress )?verifying done$' "... its history goes on from in-progress"
t_is "$(starts "$G" "$Z")" 2 "the action ran again after the restart (2 starts)"
P2=$(grep " start local/$Z id=$G " "$T/maint/actions.log" | sed -n '2s/.* pid=\([0-9]*\) pgid=.*/\1/p')
read -r wn ws <<<"$(watched "\$1 == $G && \$2 == ${P2:-0}")"
t_is "$((wn >= 1))/$ws" 1/maint \
    "... and to that run, local/$Z showed maint in each of its $wn looks (--watch)"
api GET "/v1/actual/nodes/local/$Z" >/dev/null
t_is "$(py 'd["attributes"]["firmware"]["value"]' "$BODY")" 2 "firmware 2 reported"
wait_for '[ "$(nstate "$Z")" = idle ]' 30
t_is "$(nstate "$Z")" idle "local/$Z is idle again"

# ---- max_nodes = 1 with every node mismatching at once ------------------------------------
printf '{"local/n1": {"kernel": "6.1"}, "local/n2": {"kernel": "6.1"}, "local/n3": {"kernel": "6.1"}}\n' >"$T/goal.json"
OUT=$(loomctl goal import "$T/goal.json" 2>&1)
t_is "$?" 0 "loomctl goal import FILE" || t_diag "$OUT"
api GET /v1/goal/nodes >/dev/null
t_is "$(py 'sorted([g["node"], g["attributes"]] for g in d["items"] if g.get("attributes"))' "$BODY")" \
    '[["local/n1", {"kernel": "6.1"}], ["local/n2", {"kernel": "6.1"}], ["local/n3", {"kernel": "6.1"}]]' \
    "... every node's goal is kernel 6.1"
api GET /v1/maintenance >/dev/null
MAXID=$(py 'max([int(m["id"]) for m in d["items"]] or [0])' "$BODY")
pids=
for n in n1 n2 n3; do
    curl -s -o /dev/null --max-time 10 -X POST -H "Authorization: Bearer $MON" \
        -H 'Content-Type: application/json' --data-binary '{"attributes":{"kernel":"5.10"}}' \
        "$LOOM_URL/v1/actual/nodes/local/$n" &
    pids="$pids $!"
done
wait $pids # not a bare wait: loomd is a child of this shell too
peak=0 samples=0 done_nodes=
t_end=$((SECONDS + 120))
while ((SECONDS < t_end)); do
    api GET /v1/maintenance >/dev/null
    read -r o dn < <(py "str(len([m for m in d['items'] if int(m['id']) > $MAXID and m['rule'] == 'kernel' and m['state'] in $OPEN])) + ' ' + ','.join(sorted(m['nodes'][0] for m in d['items'] if int(m['id']) > $MAXID and m['state'] == 'done'))" "$BODY")
    samples=$((samples + 1))
    ((o > peak)) && peak=$o
    done_nodes=$dn
    [ "$done_nodes" = "local/n1,local/n2,local/n3" ] && break
    sleep 0.2
done
t_is "$peak" 1 "every node reports kernel 5.10 at once: never more than 1 open request ($samples samples)"
t_is "$done_nodes" "local/n1,local/n2,local/n3" "... and all three were repaired in turn"
api GET /v1/maintenance >/dev/null
t_is "$(py "sorted(set((m['rule'], m['action'], m['state']) for m in d['items'] if int(m['id']) > $MAXID))" "$BODY")" \
    '[["kernel", "reinstall", "done"]]' "... by requests of the rule kernel, all done"
# From their histories: each began no earlier than the one before was done.
t_is "$(py "(lambda s: [i for i in range(1, len(s)) if s[i][0] < s[i - 1][1]])(sorted((m['history'][0]['time'], [h['time'] for h in m['history'] if h['state'] == 'done'][0]) for m in d['items'] if int(m['id']) > $MAXID))" "$BODY")" \
    "[]" "... one after the other: each was made once the one before was done"
read -r wn ws <<<"$(watched "\$1 > $MAXID")"
t_is "$((wn >= 3))/$ws" 1/maint \
    "... and each node showed maint to its action in each of their $wn looks (--watch)"
t_is "$(diff_rows "cluster=local&attribute=kernel")" "" "no kernel mismatch is left"
t_ok "$(ok_if "$(pg_sql "select count(*) from events where message ~* '(limit|max_nodes)'") >= 1")" \
    "the event log says a request waited for the limit" ||
    t_diag "$(pg_sql "select kind || ' ' || coalesce(subject, '-') || ' ' || message from events order by id desc limit 15")"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
