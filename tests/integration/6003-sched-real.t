#!/usr/bin/env bash
# 6003-sched-real.t - Loom's built-in scheduler ([scheduler] policy fifo,
# backfill easy) over a real Slurm (4 nodes of 2 cpus), a real Grid Engine
# cell (this host plus one emulated exec host, 4 slots each) and the local
# executor (2 nodes of 1 cpu):
# - a wide job at the head (all 4 Slurm nodes) waits behind a running one;
#   small jobs on Slurm, Grid Engine and local are backfilled: they start,
#   run (their output) and finish while it waits, a long one does not pass
#   it; it starts no later than its planned start, which never moves later;
# - an advance reservation of slurm/n1 and slurm/n2 keeps them free: jobs
#   submitted meanwhile land on other nodes (Loom's view and squeue's), and
#   a job of the reservation runs there inside its window; DELETE cancels;
# - cross-cluster placement: Slurm full, a job without a pin runs on Grid
#   Engine; both full, it is planned on, and runs on, the one that frees
#   first.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

# rjob NAME CLUSTER NODES CPUS WALLTIME SHELL-COMMAND [MORE REQUEST JSON]
rjob() {
    local pin=
    [ "$2" = - ] || pin="\"cluster\":\"$2\","
    submit "$(python3 -c 'import json, sys
n, pin, nodes, cpus, wt, cmd, more = sys.argv[1:8]
r = {"nodes": int(nodes), "cpus_per_node": int(cpus), "walltime_s": int(wt)}
if pin != "-":
    r["cluster"] = pin
if more:
    r.update(json.loads("{" + more + "}"))
print(json.dumps({"name": n, "command": ["/bin/sh", "-c", cmd], "request": r}))' \
        "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}")"
}
running() { [ "$(field "$1" .state)" = running ]; }
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
# ok_if EXPR: 0 when the arithmetic EXPR holds (and names no "-").
ok_if() {
    case $1 in *-\ * | *\ -* | -*) echo 1; return ;; esac
    (($1)) 2>/dev/null && echo 0 || echo 1
}
out_of() { cat "$(field "$1" .stdout)" 2>&1; }

# Missing packages fail the test: CI installs them (./bootstrap check).
# hold FILE SECS: a shell loop that waits until the file $T/FILE exists,
# SECS seconds at most: a job that runs until the test lets it end.
hold() {
    echo "i=0; while [ ! -e $T/$1 ] && [ \$i -lt $(($2 * 5)) ]; do sleep 0.2; i=\$((i + 1)); done"
}

slurm_available || t_bail "no Slurm here: $SLURM_WHY"
ge_available || t_bail "no Grid Engine here: $GE_WHY"
slurm_start 4 || t_bail "Slurm did not start"
ge_start 1 || t_bail "Grid Engine did not start"
read -r GH GN1 <<<"$GE_NODES"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[scheduler]
policy = fifo
backfill = easy
interval_s = 1

[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
env.LOOM_GE_PE_MULTI = rr
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"
clusters() {
    api GET /v1/clusters >/dev/null
    py '" ".join("%s:%s/%s" % (c["name"], c["state"], c["nodes"]) for c in d["items"])' "$BODY"
}
wait_for '[ "$(clusters)" = "local:up/2 slurm:up/4 ge:up/2" ]' 60
t_is "$(clusters)" "local:up/2 slurm:up/4 ge:up/2" "local, slurm (4 nodes) and ge (2 hosts) are up"

# ---- backfill around a wide job at the head ------------------------------------
# It runs until the small jobs have ended (the file rj.go; 50 s at most).
rjob rj slurm 1 2 60 "$(hold rj.go 50)"
RJ=$JOB
wait_for 'running "$RJ"' 30
jinfo "$RJ"
t_is "$J_STATE" running "a job of walltime 60 s runs on slurm/$J_NODES"
RJ_START=$J_START RJ_NODE=$J_NODES
rjob wide slurm 4 2 60 'echo wide on $SLURMD_NODENAME; sleep 3'
W=$JOB
rjob s1 slurm 1 2 20 'echo s1 on $SLURMD_NODENAME; sleep 2'
S1=$JOB
rjob long slurm 1 2 600 'sleep 300'
L=$JOB
rjob s2 slurm 1 2 20 'echo s2 on $SLURMD_NODENAME; sleep 2'
S2=$JOB
rjob s3 slurm 1 2 20 'echo s3 on $SLURMD_NODENAME; sleep 2'
S3=$JOB
rjob s-ge ge 1 1 20 'echo s-ge on $(hostname); sleep 2'
SG=$JOB
rjob s-local local 1 1 20 'echo s-local on $LOOM_NODE; sleep 2'
SL=$JOB
wait_for 'jinfo "$W"; [ "$J_PLAN" != - ]' 30
P0=$J_PLAN
t_is "$J_STATE/$J_PCL/$J_QPOS" pending/slurm/1 \
    "the wide job (all 4 Slurm nodes) waits at the head, planned on slurm"
t_ok "$(ok_if "$P0 >= RJ_START + 57 && $P0 <= RJ_START + 63")" \
    "... for the running job's expected end ($P0 ~ $RJ_START + 60)"
# Watch W while it waits; once the small jobs have ended, let the running
# job end.
pmax=$P0 moved=
t_end=$((SECONDS + 120))
while ((SECONDS < t_end)); do
    jinfo "$W"
    [ "$J_STATE" = pending ] || break
    if [ "$J_PLAN" != - ] && ((J_PLAN > pmax)); then
        pmax=$J_PLAN
        moved="$moved $J_PLAN"
    fi
    if [ ! -e "$T/rj.go" ]; then
        left=0
        for id in $S1 $S2 $S3 $SG $SL; do ended "$id" || left=$((left + 1)); done
        [ "$left" = 0 ] && touch "$T/rj.go"
    fi
    sleep 0.3
done
touch "$T/rj.go"
wait_for 'jinfo "$W"; [ "$J_START" != - ]' 30
W_START=$J_START
t_like "$J_STATE" '^(running|completed)$' "the wide job started ($J_STATE) once the running job ended"
t_is "$moved" "" "... its planned_start never moved later than $P0"
t_ok "$(ok_if "$W_START <= $P0")" "... it started ($W_START) no later than planned ($P0)"
wait_for 'ended "$W"' 60
t_is "$(field "$W" .state)/$(jinfo "$W"; echo "$J_NODES")" completed/n1,n2,n3,n4 \
    "... and completed on all 4 Slurm nodes"
bad= n=0
for id in $S1 $S2 $S3 $SG $SL; do
    n=$((n + 1))
    jinfo "$id"
    [ "$J_STATE" = completed ] && [ "$(ok_if "$J_START < $W_START && $J_END <= $W_START")" = 0 ] ||
        bad="$bad [$id $J_STATE $J_START-$J_END]"
done
t_is "$n$bad" 5 "the 5 small jobs (3 on Slurm, 1 on Grid Engine, 1 local) started and finished while the wide one waited"
for id in $S1 $S2 $S3; do
    jinfo "$id"
    t_is "$(out_of "$id")" "$(field "$id" .name) on $J_NODES" \
        "$(field "$id" .name) really ran on Slurm, on the node Loom chose ($J_NODES)"
done
t_like "$(out_of "$SG")" "^s-ge on " "s-ge really ran on Grid Engine"
t_is "$(out_of "$SL")" "s-local on $(field "$SL" .nodes.0)" "s-local really ran"
jinfo "$L"
t_ok "$([ "$J_START" = - ] && echo 0 || ok_if "$J_START >= $W_START")" \
    "the long job (walltime 600 s) did not pass the wide one (started $J_START)"
api DELETE "/v1/jobs/$L" >/dev/null
wait_for 'ended "$L"' 30
wait_for 'slurm_nodes_idle' 30
t_ok $? "Slurm is idle again"

# ---- an advance reservation of slurm/n1 and slurm/n2 --------------------------
api POST /v1/reservations "{\"cluster\":\"slurm\",\"nodes\":[\"slurm/n1\",\"slurm/n2\"],\"start\":\"$(at 5)\",\"duration_s\":90,\"reason\":\"6003\"}" >/dev/null
t_is "$STATUS" 201 "reserve slurm/n1 and slurm/n2 from 5 s from now for 90 s: 201" || t_diag "$BODY"
RV=$(jget "$BODY" .id)
RS=$(epoch "$(jget "$BODY" .start)")
RE=$(epoch "$(jget "$BODY" .end)")
t_is "$(py 'sorted(d["nodes"])' "$BODY")/$(jget "$BODY" .state)" '["slurm/n1", "slurm/n2"]/planned' \
    "... its nodes, state planned"
OUT=
for i in 1 2 3 4; do
    rjob "rv-out-$i" slurm 1 2 120 "echo rv-out-$i on \$SLURMD_NODENAME; sleep 3"
    OUT="$OUT $JOB"
done
for i in 1 2; do
    rjob "rv-any-$i" - 1 2 120 'sleep 3'
    OUT="$OUT $JOB"
done
rjob rv-in - 2 2 30 'echo in on $SLURMD_NODENAME; sleep 2' "\"reservation\":\"$RV\""
IN=$JOB
# squeue sampled until they all ended: nothing but the reservation's own
# job ever runs on n1 or n2.
busy=
samples=0
t_end=$((SECONDS + 60))
while ((SECONDS < t_end)); do
    s=$(squeue -h -t R,CG -w n1,n2 -o '%k' 2>/dev/null | grep -v "^loom:$IN\$" | paste -sd' ')
    [ -z "$s" ] || busy="$busy [$s]"
    samples=$((samples + 1))
    left=0
    for id in $OUT $IN; do ended "$id" || left=$((left + 1)); done
    [ "$left" = 0 ] && break
    sleep 0.3
done
t_is "$busy" "" "squeue: no other job ran on n1 or n2 ($samples samples)"
bad= n=0
for id in $OUT; do
    n=$((n + 1))
    jinfo "$id"
    [ "$J_STATE" = completed ] || bad="$bad [$id $J_STATE]"
    if [ "$J_CLUSTER" = slurm ]; then
        case ",$J_NODES," in *,n1,* | *,n2,*) bad="$bad [$id on slurm/$J_NODES]" ;; esac
    fi
done
t_is "$n$bad" 6 "the 6 jobs submitted meanwhile completed elsewhere (slurm/n3, slurm/n4 or another cluster)"
t_is "$(for id in $OUT; do jinfo "$id"; echo "$J_CLUSTER/$J_NODES"; done | sort -u | paste -sd' ' |
    grep -Ec 'slurm/n[12]')" 0 "... none on slurm/n1 or slurm/n2"
jinfo "$IN"
t_is "$J_STATE/$J_CLUSTER/$J_NODES" completed/slurm/n1,n2 \
    "the job of the reservation ran on slurm/n1 and slurm/n2"
t_ok "$(ok_if "$J_START >= $RS && $J_START < $RE")" "... inside the window ($J_START in $RS-$RE)"
t_like "$(out_of "$IN")" '^in on n[12]$' "... really (its output)"
api DELETE "/v1/reservations/$RV" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "DELETE the reservation: 200, cancelled"
rjob after slurm 4 2 60 'true'
A=$JOB
wait_for 'ended "$A"' 60
t_is "$(field "$A" .state)" completed "then a job of all 4 Slurm nodes runs again"

# ---- cross-cluster placement ---------------------------------------------------------
rjob fill-slurm slurm 4 2 300 'sleep 120'
F1=$JOB
wait_for 'running "$F1"' 30
t_is "$(field "$F1" .state)" running "Slurm is full (a job on all 4 nodes, walltime 300 s)"
# 2 nodes x 2 cpus: Slurm or Grid Engine (local nodes have 1 cpu).
rjob u1 - 2 2 60 'sleep 1'
U1=$JOB
wait_for 'jinfo "$U1"; [ "$J_START" != - ]' 30
t_is "$J_CLUSTER" ge "a job without a pin (2 nodes x 2 cpus) starts on Grid Engine at once"
wait_for 'ended "$U1"' 30
t_is "$(field "$U1" .state)" completed "... and completes"
# They run until the test has looked at the next job (the file ge.go; 25 s
# at most).
rjob fill-ge-1 ge 1 4 30 "$(hold ge.go 25)"
G1=$JOB
rjob fill-ge-2 ge 1 4 30 "$(hold ge.go 25)"
G2=$JOB
wait_for 'running "$G1" && running "$G2"' 30
t_is "$(field "$G1" .state)/$(field "$G2" .state)" running/running \
    "Grid Engine is full too (4 slots on each host, walltime 30 s)"
G_START=$(epoch "$(field "$G2" .start_time)")
rjob u2 - 2 2 60 'echo u2 on $(hostname)'
U2=$JOB
wait_for 'jinfo "$U2"; [ "$J_PCL" != - ]' 30
t_is "$J_STATE/$J_PCL" pending/ge \
    "both full: a job without a pin is planned on Grid Engine, which frees first (30 s against 300 s)"
t_ok "$(ok_if "$J_PLAN <= $G_START + 32")" "... for when its jobs are expected to end ($J_PLAN)"
touch "$T/ge.go"
wait_for 'jinfo "$U2"; [ "$J_START" != - ]' 60
t_is "$J_CLUSTER" ge "... and runs there"
wait_for 'ended "$U2"' 30
t_is "$(field "$U2" .state)" completed "... to completion"
api DELETE "/v1/jobs/$F1" >/dev/null
wait_for 'ended "$F1"' 30

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
