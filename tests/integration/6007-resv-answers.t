#!/usr/bin/env bash
# 6007-resv-answers.t - what a reservation that cannot be had answers, on a
# sim cluster of 64 nodes (speed 1: walltimes are real seconds):
# - one that could never fit (more nodes than the cluster has, a feature
#   no node has) is a 422 naming the count and the cluster's size, or the
#   feature;
# - a fixed window that runs into a job or another reservation is a 409
#   naming each, its nodes and until when, and that "force" takes the
#   window anyway (named nodes).
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
wait_for '[ "$(field "$BUSY" .state)" = running ]' 10
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

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
