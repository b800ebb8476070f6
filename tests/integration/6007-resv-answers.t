#!/usr/bin/env bash
# 6007-resv-answers.t - what a reservation that cannot be had answers, on a
# sim cluster of 64 nodes (speed 1: walltimes are real seconds):
# - one that could never fit (more nodes than the cluster has, a feature
#   no node has) is a 422 naming the count and the cluster's size, or the
#   feature;
# - a fixed window that runs into a job or another reservation is a 409
#   naming each, its nodes and until when, and that "force" takes the
#   window anyway (named nodes);
# - a node idle inside an active reservation shows reserved (and loomctl
#   nodes resv), names it, and is found by ?state=reserved; running a job
#   of the reservation it shows mixed and still names it; the reservation
#   cancelled, it is idle again.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[scheduler]
interval_s = 1

[cluster s]
adaptor = sim
nodes = 64
cpus_per_node = 4
memory_mb = 8192
features = ib
speed = 1
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# iso EPOCH: the RFC 3339 time of EPOCH.
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }

# ---- never ---------------------------------------------------------------------
api POST /v1/reservations "{\"cluster\":\"s\",\"count\":100,\"start\":\"$(at 60)\",\"duration_s\":60}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 422/count "100 nodes of a 64-node cluster: 422 on count"
t_is "$(jget "$BODY" .error.message)" \
    "the reservation asks for 100 nodes; cluster s has 64" "... naming the count and the cluster's size"
api POST /v1/reservations "{\"cluster\":\"s\",\"count\":2,\"features\":[\"ib\",\"gpu\"],\"not_before\":\"$(at 0)\",\"duration_s\":60}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 422/features "a feature no node has: 422 on features"
t_is "$(jget "$BODY" .error.message)" \
    "no node of cluster s has the feature 'gpu'" "... naming the feature"
api POST /v1/reservations "{\"cluster\":\"s\",\"count\":65,\"features\":[\"ib\"],\"start\":\"$(at 60)\",\"duration_s\":60}" >/dev/null
t_is "$STATUS" 422 "65 nodes with feature ib (64 have it): 422"
t_is "$(jget "$BODY" .error.message)" \
    "the reservation asks for 65 nodes; cluster s has 64 with the features asked for" \
    "... naming how many have the features"

# ---- a fixed window in the way of a job and a reservation -----------------------
submit '{"name": "busy", "command": ["/bin/true"], "request": {"cluster": "s", "walltime_s": 600}, "env": {"LOOM_SIM_RUNTIME_S": "600"}}'
BUSY=$JOB
wait_for '[ "$(field "$BUSY" .state)" = running ]' 30
t_is "$(field "$BUSY" .state)" running "a 600 s job runs"
JN=$(field "$BUSY" .nodes.0)
JEND=$(iso $(($(epoch "$(field "$BUSY" .start_time)") + 600)))
OTHER=n64
[ "$JN" = n64 ] && OTHER=n63
NOW=$(date +%s)
R1S=$(iso $((NOW + 300)))
R1E=$(iso $((NOW + 900)))
api POST /v1/reservations "{\"nodes\":[\"s/$OTHER\"],\"start\":\"$R1S\",\"duration_s\":600}" >/dev/null
t_is "$STATUS" 201 "a reservation of s/$OTHER from 300 s on" || t_diag "$BODY"
R1=$(jget "$BODY" .id)
WS=$(iso $((NOW + 120)))
WE=$(iso $((NOW + 720)))
api POST /v1/reservations "{\"nodes\":[\"s/$JN\",\"s/$OTHER\"],\"start\":\"$WS\",\"duration_s\":600}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.code)" 409/conflict \
    "a fixed window on s/$JN and s/$OTHER from 120 s on: 409"
t_is "$(jget "$BODY" .error.message)" \
    "no window for the reservation on cluster s: from $WS to $WE, job $BUSY holds $JN until $JEND; reservation $R1 holds $OTHER from $R1S until $R1E; a maintenance request with \"force\": true (admin) takes the window anyway, cancelling the jobs in the way" \
    "... naming the job and the reservation, their nodes, until when, and force"
api POST /v1/reservations "{\"cluster\":\"s\",\"count\":64,\"start\":\"$WS\",\"duration_s\":600}" >/dev/null
t_is "$STATUS" 409 "a fixed window on all 64 nodes: 409"
t_is "$(jget "$BODY" .error.message)" \
    "no window for the reservation on cluster s: from $WS to $WE, job $BUSY holds $JN until $JEND; reservation $R1 holds $OTHER from $R1S until $R1E" \
    "... naming what is in the way (no force: it takes named nodes)"

# ---- an active reservation shows on its nodes ------------------------------------
RN=n10
[ "$JN" = n10 ] && RN=n11
# nget NODE PATH: a field of node s/NODE.
nget() {
    api GET "/v1/nodes/s/$1" >/dev/null
    jget "$BODY" "$2" 2>/dev/null
}
t_is "$(nget "$RN" .state)/$(nget "$RN" .reservation)" idle/null \
    "s/$RN is idle, in no reservation"
api POST /v1/reservations "{\"nodes\":[\"s/$RN\"],\"start\":\"$(at 0)\",\"duration_s\":600,\"reason\":\"bench\"}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 201/active "a reservation of s/$RN from now: 201, active" ||
    t_diag "$BODY"
R2=$(jget "$BODY" .id)
wait_for '[ "$(nget "$RN" .state)" = reserved ]' 30
t_is "$(nget "$RN" .state)/$(nget "$RN" .reservation)" "reserved/$R2" \
    "GET /v1/nodes/s/$RN: state reserved, naming reservation $R2"
api GET '/v1/nodes?state=reserved' >/dev/null
t_is "$STATUS/$(py '[n["id"] for n in d["items"]]' "$BODY")" "200/[\"s/$RN\"]" \
    "GET /v1/nodes?state=reserved lists s/$RN alone"
OUT=$(loomctl nodes --cluster s --state reserved 2>&1)
t_is "$OUT" "NODE CLUSTER STATE CPUS(A/T) MEMORY GPUS FEATURES REASON
$RN  s       resv        0/4   8192    0 ib       reservation $R2" \
    "loomctl nodes shows resv, as sinfo does, and the reservation as its reason"
t_is "$(nget "$OTHER" .state)/$(nget "$OTHER" .reservation)" idle/null \
    "s/$OTHER, reserved from 300 s on (planned), is idle"

submit "{\"name\": \"inside\", \"command\": [\"/bin/true\"], \"request\": {\"reservation\": \"$R2\", \"walltime_s\": 60}, \"env\": {\"LOOM_SIM_RUNTIME_S\": \"60\"}}"
IN=$JOB
wait_for '[ "$(field "$IN" .state)" = running ] && [ "$(nget "$RN" .state)" = mixed ]' 30
t_is "$(field "$IN" .state)/$(field "$IN" .cluster)/$(field "$IN" .nodes.0)" "running/s/$RN" \
    "a job of the reservation (no pin) runs on s/$RN"
t_is "$(nget "$RN" .state)/$(nget "$RN" .reservation)" "mixed/$R2" \
    "... the node shows mixed, as usual, still naming reservation $R2"
api DELETE "/v1/jobs/$IN" >/dev/null
api DELETE "/v1/reservations/$R2" >/dev/null
t_is "$STATUS" 200 "the reservation cancelled"
wait_for '[ "$(nget "$RN" .state)/$(nget "$RN" .reservation)" = idle/null ]' 30
t_is "$(nget "$RN" .state)/$(nget "$RN" .reservation)" idle/null \
    "... s/$RN is idle again, in no reservation"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
