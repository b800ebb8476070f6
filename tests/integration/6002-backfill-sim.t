#!/usr/bin/env bash
# 6002-backfill-sim.t - the built-in scheduler on sim clusters (speed 1, so
# that a walltime is real seconds), one loomd per [scheduler] setting:
# - backfill = easy: a wide job at the head waits for a running job; short
#   jobs that end before its planned start pass it, a long one does not;
#   its planned_start never moves later and it starts no later than that;
#   a long job that delays only the second waiting job passes (EASY
#   protects the first alone).
# - backfill = conservative: the same, but that long job waits (every
#   waiting job is protected).
# - backfill = none: nothing passes the head.
# - policy = priority, backfill = easy: advance reservations (fixed and
#   flexible windows, 201/409/403, list, get, delete): jobs never run on
#   reserved nodes during the window, a job with request.reservation runs
#   there inside it; a job no cluster could ever run is a 422; a job
#   without a pin goes to the cluster that can start it first; a higher
#   priority puts a job first in the queue, with its priority factors.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# ---- helpers -----------------------------------------------------------------

# sim_job NAME CLUSTER NODES WALLTIME RUNTIME [MORE REQUEST JSON]: submit a
# 1-cpu sim job; JOB is its id.
sim_job() {
    local pin=
    [ "$2" = - ] || pin="\"cluster\":\"$2\","
    submit "{\"name\":\"$1\",\"command\":[\"true\"],\"request\":{$pin\"nodes\":$3,\"walltime_s\":$4${6:+,$6}},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"$5\"}}"
}
running() { [ "$(field "$1" .state)" = running ]; }
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
# cancel_all: cancel every job that has not ended; wait until all have.
cancel_all() {
    local id
    api GET "/v1/jobs?limit=100000" >/dev/null
    for id in $(py '" ".join(j["id"] for j in d["items"] if j["state"] in ("pending", "held", "starting", "running", "suspended"))' "$BODY"); do
        api DELETE "/v1/jobs/$id" >/dev/null
    done
    wait_for 'api GET "/v1/jobs?limit=100000" >/dev/null; [ "$(py "len([j for j in d[\"items\"] if j[\"state\"] not in (\"completed\", \"failed\", \"cancelled\")])" "$BODY")" = 0 ]' 30
}
# conf POLICY BACKFILL [MORE SCHEDULER KEYS]: loom.conf with the clusters of
# the backfill scenarios (a and b: 4 nodes of 1 cpu each), the reservation
# cluster r (4 nodes) and two clusters c1, c2 (2 nodes each, feature xc).
# Every one takes jobs that do not name it (unpinned_jobs), as the
# scenarios place jobs without a pin across them.
conf() {
    loomd_conf <<EOF
[scheduler]
policy = $1
backfill = $2
interval_s = 1
${3:-}

[cluster a]
adaptor = sim
nodes = 4
cpus_per_node = 1
memory_mb = 1024
speed = 1
poll_s = 0.2
unpinned_jobs = yes

[cluster b]
adaptor = sim
nodes = 4
cpus_per_node = 1
memory_mb = 1024
speed = 1
poll_s = 0.2
unpinned_jobs = yes

[cluster r]
adaptor = sim
nodes = 4
cpus_per_node = 1
memory_mb = 1024
speed = 1
poll_s = 0.2
unpinned_jobs = yes

[cluster c1]
adaptor = sim
nodes = 2
cpus_per_node = 1
memory_mb = 1024
features = xc
speed = 1
poll_s = 0.2
unpinned_jobs = yes

[cluster c2]
adaptor = sim
nodes = 2
cpus_per_node = 1
memory_mb = 1024
features = xc
speed = 1
poll_s = 0.2
unpinned_jobs = yes
EOF
}
# the users' jobs run as the test's account, $T_USER (no privilege)
accounts_default # makes $T_USER
for u in bob; do map_account "$u" "$T_USER"; done
# restart_with POLICY BACKFILL [KEYS]: stop loomd (checking its status) and
# start it on a new configuration.
restart_with() {
    if [ -n "$LOOMD_PID" ]; then
        cancel_all
        loomd_stop
        t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
            t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
    fi
    conf "$@"
    loomd_start || t_bail "loomd did not start with policy $1, backfill $2"
    [ -n "${TOKEN:-}" ] || admin_token || t_bail "no admin token"
    api GET /v1/runtime >/dev/null
    t_diag "policy $1, backfill $2: GET /v1/runtime says policy $(jget "$BODY" .scheduler.policy)"
}

# ---- the backfill scenario, run under each backfill setting --------------------
#
# Cluster a (4 nodes): R holds 3 nodes (walltime 30, runs 20 s). W asks for
# all 4: it waits, planned for R's expected end (R's start + 30 s). S1 and
# S2 (1 node, walltime 8) end long before: they pass W on the 4th node. L
# (1 node, walltime 600) would still run at W's start: it waits.
# Cluster b (4 nodes): Rb holds 3 nodes (walltime 30, runs 20 s). Wb and
# W2b ask for 2 nodes each: both could start at Rb's expected end, Wb on
# two of Rb's nodes, W2b on the third and the free 4th one. X (1 node,
# walltime 600) on the 4th node delays W2b but not Wb: EASY starts it (it
# protects the first waiting job only), conservative does not.
backfill_scenario() {
    local mode=$1 p t_end pmax moved
    sim_job "$mode-R" a 3 30 20
    R=$JOB
    [ "$mode" = none ] || { sim_job "$mode-Rb" b 3 30 20; RB=$JOB; }
    wait_for 'running "$R"' 30
    t_ok $? "$mode: R runs on 3 of cluster a's 4 nodes"
    if [ "$mode" != none ]; then
        wait_for 'running "$RB"' 30
        t_ok $? "$mode: Rb runs on 3 of cluster b's 4 nodes"
    fi
    jinfo "$R"
    R_START=$J_START
    sim_job "$mode-W" a 4 20 2
    W=$JOB
    if [ "$mode" != none ]; then
        sim_job "$mode-Wb" b 2 20 2
        WB=$JOB
        sim_job "$mode-W2b" b 2 20 2
        W2B=$JOB
    fi
    sim_job "$mode-S1" a 1 8 2
    S1=$JOB
    sim_job "$mode-L" a 1 600 600
    L=$JOB
    sim_job "$mode-S2" a 1 8 2
    S2=$JOB
    [ "$mode" = none ] || { sim_job "$mode-X" b 1 600 600; X=$JOB; }

    wait_for 'jinfo "$W"; [ "$J_PLAN" != - ]' 30
    P0=$J_PLAN
    t_is "$J_STATE/$J_PCL" "pending/a" "$mode: the wide job W waits, planned on cluster a"
    t_ok "$([ "$P0" != - ] && ((P0 >= R_START + 28 && P0 <= R_START + 32)) && echo 0 || echo 1)" \
        "$mode: W's planned_start ($P0) is R's expected end, start + walltime ($R_START + 30)"
    t_is "$J_QPOS" 1 "$mode: W is first in the queue (queue_position 1)"
    t_is "$(field "$W" .reason)" "waiting for resources" "$mode: W says why it waits"
    if [ "$mode" != none ]; then
        jinfo "$WB"
        t_is "$J_QPOS/$J_PCL" "2/b" "$mode: Wb is second (queue_position 2), planned on b"
        PB=$J_PLAN
    fi

    # Watch W until it starts: its planned start must never move later.
    pmax=$P0 moved=
    t_end=$((SECONDS + 90))
    while ((SECONDS < t_end)); do
        jinfo "$W"
        [ "$J_STATE" = pending ] || break
        if [ "$J_PLAN" != - ] && ((J_PLAN > pmax)); then
            pmax=$J_PLAN
            moved="$moved $J_PLAN"
        fi
        sleep 0.3
    done
    jinfo "$W"
    W_START=$J_START
    t_like "$J_STATE" '^(starting|running|completed)$' "$mode: W started ($J_STATE)"
    t_is "$moved" "" "$mode: W's planned_start never moved later than $P0"
    t_ok "$([ "$W_START" != - ] && ((W_START <= P0)) && echo 0 || echo 1)" \
        "$mode: W started ($W_START) no later than its planned start ($P0)"
    t_is "$J_NODES" "n1,n2,n3,n4" "$mode: W runs on all 4 nodes of a"

    jinfo "$S1"
    S1_STATE=$J_STATE S1_START=$J_START S1_END=$J_END
    jinfo "$S2"
    S2_STATE=$J_STATE S2_START=$J_START S2_END=$J_END
    if [ "$mode" = none ]; then
        t_ok "$([ "$S1_START" = - ] || ((S1_START >= W_START)) && echo 0 || echo 1)" \
            "none: S1 did not pass the head W (started $S1_START, W $W_START)"
        t_ok "$([ "$S2_START" = - ] || ((S2_START >= W_START)) && echo 0 || echo 1)" \
            "none: S2 did not pass the head W either (started $S2_START)"
    else
        t_ok "$([ "$S1_END" != - ] && ((S1_START < W_START && S1_END <= W_START)) && echo 0 || echo 1)" \
            "$mode: S1 was backfilled: started and ended ($S1_START-$S1_END) before W started ($W_START)"
        t_ok "$([ "$S2_END" != - ] && ((S2_START < W_START && S2_END <= W_START)) && echo 0 || echo 1)" \
            "$mode: S2 too ($S2_START-$S2_END), passing L that waits"
        t_is "$S1_STATE/$S2_STATE" completed/completed "$mode: both completed"
    fi
    jinfo "$L"
    t_ok "$([ "$J_START" = - ] || ((J_START >= W_START)) && echo 0 || echo 1)" \
        "$mode: the long job L, which would still run at W's start, did not pass W (started $J_START)"

    [ "$mode" = none ] && return 0
    # Cluster b: Wb and W2b start once Rb ends.
    wait_for 'jinfo "$W2B"; [ "$J_START" != - ]' 30
    W2B_START=$J_START
    t_ok "$([ "$W2B_START" != - ] && echo 0 || echo 1)" "$mode: W2b started ($W2B_START)"
    jinfo "$WB"
    t_ok "$([ "$J_START" != - ] && [ "$PB" != - ] && ((J_START <= PB)) && echo 0 || echo 1)" \
        "$mode: Wb started ($J_START) no later than planned ($PB)"
    WB_START=$J_START
    jinfo "$X"
    if [ "$mode" = easy ]; then
        t_ok "$([ "$J_START" != - ] && ((J_START < WB_START)) && echo 0 || echo 1)" \
            "easy: X (delays only the second waiting job) started ($J_START) before Wb ($WB_START)"
    else
        t_ok "$([ "$J_START" = - ] || ((J_START >= W2B_START)) && echo 0 || echo 1)" \
            "conservative: X, which would delay W2b, did not start before W2b (X $J_START, W2b $W2B_START)"
    fi
}

pg_start || t_bail "PostgreSQL did not start"
restart_with fifo easy
wait_for 'api GET /v1/nodes >/dev/null; [ "$(py "len(d[\"items\"])" "$BODY")" = 16 ]' 30
backfill_scenario easy

restart_with fifo conservative
backfill_scenario conservative

restart_with fifo none
backfill_scenario none

# ---- policy priority: reservations, 422, cross-cluster, priorities ----------------
restart_with priority easy "weight_priority = 1000
weight_age = 0
weight_fairshare = 0
weight_size = 0"

# 422: no cluster could ever run it.
sim_job big - 100 60 1 >/dev/null 2>&1
t_is "$STATUS" 422 "a job asking for 100 nodes (the largest cluster has 4): 422" || t_diag "$BODY"
t_is "$(jget "$BODY" .error.code)" unprocessable "... code unprocessable"
submit '{"command":["true"],"request":{"cpus_per_node":2}}' >/dev/null 2>&1
t_is "$STATUS" 422 "a job asking for 2 cpus per node (all nodes have 1): 422"
submit '{"command":["true"],"request":{"features":["nope"]}}' >/dev/null 2>&1
t_is "$STATUS" 422 "a job asking for a feature no node has: 422"

# Roles.
READER=$(token_for rita reader)
USERT=$(token_for bob user)
OPER=$(token_for olga operator)
TOKEN=$READER api GET /v1/reservations >/dev/null
t_is "$STATUS/$(py 'type(d.get("items")).__name__' "$BODY")" 200/list "a reader lists reservations: {\"items\": [...]}"
RVBODY="{\"cluster\":\"r\",\"nodes\":[\"r/n1\",\"r/n2\"],\"start\":\"$(at 600)\",\"duration_s\":60}"
SAVE=$TOKEN
TOKEN=$READER api POST /v1/reservations "$RVBODY" >/dev/null
t_is "$STATUS" 403 "a reader may not create a reservation: 403"
TOKEN=$USERT api POST /v1/reservations "$RVBODY" >/dev/null
t_is "$STATUS" 403 "a user may not create a reservation: 403"
TOKEN=$OPER api POST /v1/reservations "$RVBODY" >/dev/null
t_is "$STATUS" 201 "an operator may: 201" || t_diag "$BODY"
OPRV=$(jget "$BODY" .id)
t_is "$(jget "$BODY" .owner)" olga "... owned by the operator"
TOKEN=$USERT api DELETE "/v1/reservations/$OPRV" >/dev/null
t_is "$STATUS" 403 "a user may not cancel it: 403"
TOKEN=$OPER api DELETE "/v1/reservations/$OPRV" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "the operator cancels it: 200, state cancelled"
TOKEN=$SAVE
api POST /v1/reservations '{"cluster":"r","nodes":["r/n1"],"start":"'"$(at 60)"'","duration_s":60,"bogus":1}' >/dev/null
t_is "$STATUS" 400 "an unknown field in a reservation: 400"
api POST /v1/reservations '{"cluster":"zz","nodes":["zz/n1"],"start":"'"$(at 60)"'","duration_s":60}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)/$(jget "$BODY" .error.message)" \
    "404/cluster/there is no cluster named 'zz'" "a reservation on a cluster that does not exist: 404, naming it"
api GET /v1/reservations/999999 >/dev/null
t_is "$STATUS" 404 "GET of a reservation that does not exist: 404"

# A fixed window on r/n1 and r/n2 from 20 s from now (the job of the
# reservation is looked at before it), for 14 s.
RS_ISO=$(at 20)
api POST /v1/reservations "{\"cluster\":\"r\",\"nodes\":[\"r/n1\",\"r/n2\"],\"start\":\"$RS_ISO\",\"duration_s\":14,\"reason\":\"test window\"}" >/dev/null
t_is "$STATUS" 201 "a fixed reservation of r/n1 and r/n2: 201" || t_diag "$BODY"
RV=$(jget "$BODY" .id)
RS=$(epoch "$(jget "$BODY" .start)")
RE=$(epoch "$(jget "$BODY" .end)")
t_is "$(py '[d["purpose"], d["owner"], d["cluster"], sorted(d["nodes"]), d["state"], d["reason"]]' "$BODY")" \
    '["user", "admin", "r", ["r/n1", "r/n2"], "planned", "test window"]' \
    "... purpose user (the default), owner, cluster, nodes, state planned, reason"
t_is "$RS/$((RE - RS))" "$(epoch "$RS_ISO")/14" "... start as asked, end = start + 14 s"
api GET /v1/reservations >/dev/null
t_is "$(py "[r['id'] for r in d['items'] if r['id'] == '$RV']" "$BODY")" "[\"$RV\"]" "GET /v1/reservations lists it"
api GET "/v1/reservations/$RV" >/dev/null
t_is "$STATUS/$(jget "$BODY" .id)" "200/$RV" "GET /v1/reservations/$RV"

# Jobs submitted after it: walltime 30 (they would run into the window, so
# never on n1/n2 before its end), and a job of the reservation.
OUT=
for i in 1 2 3 4 5 6; do
    sim_job "rv-out-$i" r 1 30 2
    OUT="$OUT $JOB"
done
sim_job rv-in - 2 10 3 "\"reservation\":\"$RV\""
IN=$JOB
t_is "$(field "$IN" .request.reservation)" "$RV" "a job may give request.reservation"
wait_for 'jinfo "$IN"; [ "$J_PLAN" != - ]' 30
t_is "$J_STATE/$J_PCL" "pending/r" "the job of the reservation waits, planned on r"
t_ok "$([ "$J_PLAN" != - ] && ((J_PLAN >= RS && J_PLAN <= RS + 1)) && echo 0 || echo 1)" \
    "... planned for the window's start ($J_PLAN, window $RS)"
# bob (a user) may not put a job into admin's reservation.
TOKEN=$USERT submit "{\"command\":[\"true\"],\"request\":{\"reservation\":\"$RV\"}}" >/dev/null 2>&1
t_is "$STATUS" 403 "a user who does not own the reservation may not submit into it: 403"
TOKEN=$SAVE
wait_for '[ "$(api GET "/v1/reservations/$RV" >/dev/null; jget "$BODY" .state)" = active ]' 40
api GET "/v1/reservations/$RV" >/dev/null
t_is "$(jget "$BODY" .state)" active "at its start the reservation is active"
DURING=
for i in 1 2 3; do
    sim_job "rv-during-$i" r 1 4 1
    DURING="$DURING $JOB"
done
wait_for 'jinfo "$IN"; [ "$J_STATE" = completed ]' 30
t_is "$J_STATE/$J_CLUSTER/$J_NODES" "completed/r/n1,n2" "the job of the reservation ran on its nodes, n1 and n2"
t_ok "$([ "$J_START" != - ] && ((J_START >= RS && J_END <= RE)) && echo 0 || echo 1)" \
    "... inside its window ($J_START-$J_END in $RS-$RE)"
for id in $OUT $DURING; do
    wait_for 'ended "$id"' 60
done
bad=
for id in $OUT $DURING; do
    jinfo "$id"
    wt=$(field "$id" .request.walltime_s)
    [ "$J_STATE" = completed ] || bad="$bad [$id $J_STATE]"
    case ",$J_NODES," in
    *,n1,* | *,n2,*)
        # On a reserved node: only wholly outside the window, and (as
        # placed) not planned to run into it.
        if ((J_START < RE && J_END > RS)) || ((J_START < RE && J_START + wt > RS)); then
            bad="$bad [$id on $J_NODES $J_START-$J_END walltime $wt]"
        fi
        ;;
    esac
done
t_is "$(wc -w <<<"$OUT $DURING")$bad" 9 \
    "the 9 jobs submitted after it completed, none on n1/n2 during (or into) the window"
wait_for '[ "$(api GET "/v1/reservations/$RV" >/dev/null; jget "$BODY" .state)" = done ]' 30
api GET "/v1/reservations/$RV" >/dev/null
t_is "$(jget "$BODY" .state)" done "after its end the reservation is done"

# A fixed window that overlaps a running job's expected end: 409.
sim_job long r 1 120 120
LONG=$JOB
wait_for 'running "$LONG"' 30
LN=$(field "$LONG" .nodes.0)
api POST /v1/reservations "{\"cluster\":\"r\",\"nodes\":[\"r/$LN\"],\"start\":\"$(at 20)\",\"duration_s\":10}" >/dev/null
t_is "$STATUS" 409 "a fixed reservation of r/$LN while a job runs there until start + walltime: 409" || t_diag "$BODY"
t_is "$(jget "$BODY" .error.code)" conflict "... code conflict"
# The other three nodes, from 3 s from now for 300 s.
OTHERS=$(for n in n1 n2 n3 n4; do [ "$n" = "$LN" ] || printf '"r/%s",' "$n"; done)
OTHERS=[${OTHERS%,}]
api POST /v1/reservations "{\"cluster\":\"r\",\"nodes\":$OTHERS,\"start\":\"$(at 3)\",\"duration_s\":300,\"purpose\":\"maintenance\",\"reason\":\"fans\"}" >/dev/null
t_is "$STATUS" 201 "a maintenance reservation of the other three r nodes: 201" || t_diag "$BODY"
RV2=$(jget "$BODY" .id)
t_is "$(jget "$BODY" .purpose)" maintenance "... purpose maintenance"
ONE=$(py 'd["nodes"][0]' "$BODY")
api POST /v1/reservations "{\"cluster\":\"r\",\"nodes\":[\"$ONE\"],\"start\":\"$(at 30)\",\"duration_s\":10}" >/dev/null
t_is "$STATUS" 409 "a fixed reservation overlapping another reservation: 409" || t_diag "$BODY"
# Flexible: the earliest window of 20 s on one r node, by a deadline.
api POST /v1/reservations "{\"cluster\":\"r\",\"count\":1,\"not_before\":\"$(at 0)\",\"deadline\":\"$(at 60)\",\"duration_s\":20}" >/dev/null
t_is "$STATUS" 409 "a flexible window that cannot end by its deadline (every node busy or reserved): 409" || t_diag "$BODY"
LSTART=$(epoch "$(field "$LONG" .start_time)")
api POST /v1/reservations "{\"cluster\":\"r\",\"count\":1,\"not_before\":\"$(at 0)\",\"deadline\":\"$(at 600)\",\"duration_s\":20}" >/dev/null
t_is "$STATUS" 201 "a flexible window of 20 s on any one r node by a deadline 10 min away: 201" || t_diag "$BODY"
FLEX=$(jget "$BODY" .id)
FS=$(epoch "$(jget "$BODY" .start)")
FE=$(epoch "$(jget "$BODY" .end)")
t_is "$(jget "$BODY" .nodes)" "[\"r/$LN\"]" "... on r/$LN, the node whose job ends first"
t_ok "$([ "$FS" != - ] && ((FS >= LSTART + 118 && FS <= LSTART + 122 && FE - FS == 20)) && echo 0 || echo 1)" \
    "... from that job's expected end ($LSTART + 120), for 20 s ($FS-$FE)"
api DELETE "/v1/reservations/$FLEX" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "DELETE of the flexible one: 200, cancelled"
# Neither start nor not_before nor deadline: as soon as possible, as with
# not_before now; start with not_before is refused.
api POST /v1/reservations "{\"cluster\":\"r\",\"count\":1,\"duration_s\":20}" >/dev/null
t_is "$STATUS" 201 "a window with neither start nor not_before nor deadline: 201" || t_diag "$BODY"
ASAP=$(jget "$BODY" .id)
AS=$(epoch "$(jget "$BODY" .start)")
t_is "$(jget "$BODY" .nodes)" "[\"r/$LN\"]" "... on r/$LN, as the flexible one"
t_ok "$([ "$AS" != - ] && ((AS >= LSTART + 118 && AS <= LSTART + 122)) && echo 0 || echo 1)" \
    "... from that job's expected end ($LSTART + 120: $AS)"
api DELETE "/v1/reservations/$ASAP" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "... DELETE: 200, cancelled"
api POST /v1/reservations "{\"cluster\":\"r\",\"count\":1,\"start\":\"$(at 600)\",\"not_before\":\"$(at 0)\",\"duration_s\":20}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" "400/a reservation has a fixed window (start) or a flexible one (not_before and/or deadline), not both" \
    "start and not_before together: 400"
# A job of 3 nodes fits only on the reserved ones: it waits; DELETE frees them.
sim_job three r 3 60 2
THREE=$JOB
wait_for '[ "$(field "$THREE" .reason)" != null ]' 30
jinfo "$THREE"
t_is "$J_STATE" pending "a 3-node job waits: the 3 free nodes are reserved"
t_ok "$([ "$J_PLAN" = - ] || ((J_PLAN >= $(date +%s) + 100)) && echo 0 || echo 1)" \
    "... not planned before the reservation ends (planned_start $J_PLAN)"
api DELETE "/v1/reservations/$RV2" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "DELETE /v1/reservations/$RV2: 200, cancelled"
wait_for 'jinfo "$THREE"; [ "$J_START" != - ]' 30
t_is "$J_NODES" "$(py '",".join(sorted(n.split("/")[1] for n in d))' "$OTHERS")" \
    "then the 3-node job starts on the freed nodes"
api GET "/v1/reservations/$RV2" >/dev/null
t_is "$(jget "$BODY" .state)" cancelled "GET shows it cancelled"
api DELETE "/v1/reservations/$RV2" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled \
    "a second DELETE changes nothing: 200, cancelled"
api DELETE "/v1/jobs/$LONG" >/dev/null
wait_for 'ended "$LONG" && ended "$THREE"' 30

# ---- cross-cluster: the cluster that can start the job first --------------------
sim_job fill-c1 c1 2 300 300
F1=$JOB
wait_for 'running "$F1"' 30
sim_job u1 - 1 30 2 '"features":["xc"]'
U1=$JOB
wait_for 'jinfo "$U1"; [ "$J_START" != - ]' 30
t_is "$J_CLUSTER" c2 "c1 full: a job without a pin (feature xc) starts on c2 at once"
wait_for 'ended "$U1"' 30
sim_job fill-c2 c2 2 20 15
F2=$JOB
wait_for 'running "$F2"' 30
F2S=$(epoch "$(field "$F2" .start_time)")
sim_job u2 - 2 20 2 '"features":["xc"]'
U2=$JOB
wait_for 'jinfo "$U2"; [ "$J_PCL" != - ]' 30
t_is "$J_STATE/$J_PCL" pending/c2 \
    "both full: a job without a pin is planned on c2, which frees first (c1's job: walltime 300, c2's: 20)"
t_ok "$([ "$J_PLAN" != - ] && ((J_PLAN <= F2S + 21)) && echo 0 || echo 1)" \
    "... for when c2's job is expected to end ($J_PLAN <= $F2S + 20)"
wait_for 'jinfo "$U2"; [ "$J_START" != - ]' 60
t_is "$J_CLUSTER/$J_NODES" c2/n1,n2 "... and runs there"

# ---- priority: a higher priority goes first ---------------------------------------
wait_for 'ended "$U2"' 30
sim_job fill2-c2 c2 2 20 15
F3=$JOB
wait_for 'running "$F3"' 30
sim_job p-low c2 2 10 1 >/dev/null
PL=$JOB
submit "{\"name\":\"p-high\",\"command\":[\"true\"],\"priority\":100,\"request\":{\"cluster\":\"c2\",\"nodes\":2,\"walltime_s\":10},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"1\"}}"
PH=$JOB
wait_for 'jinfo "$PL"; [ "$J_QPOS" = 2 ]' 30
t_is "$J_QPOS" 2 "policy priority: the earlier job of priority 0 is second in the queue"
jinfo "$PH"
t_is "$J_QPOS" 1 "... the later one of priority 100 first"
job "$PH"
PFH=$(jget "$BODY" .priority_factors)
job "$PL"
PFL=$(jget "$BODY" .priority_factors)
t_is "$(py 'sorted(d)' "$PFH")" '["age", "fairshare", "priority", "size", "total"]' \
    "priority_factors: age, fairshare, size, priority, total" || t_diag "$PFH"
t_ok "$(python3 -c 'import json, sys
h, l = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.exit(0 if h["priority"] > l["priority"] and h["total"] > l["total"] else 1)' "$PFH" "$PFL" 2>/dev/null; echo $?)" \
    "... the higher priority shows in its priority factor and total ($PFH vs $PFL)"
wait_for 'ended "$PL"' 60
jinfo "$PH"
PH_START=$J_START PH_END=$J_END
jinfo "$PL"
t_ok "$([ "$PH_START" != - ] && [ "$J_START" != - ] && ((PH_START <= J_START && PH_END <= J_START)) && echo 0 || echo 1)" \
    "the higher-priority job ran first ($PH_START-$PH_END), then the other ($J_START)"

cancel_all
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
