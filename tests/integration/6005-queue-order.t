#!/usr/bin/env bash
# 6005-queue-order.t - the waiting queue the scheduler keeps from one cycle
# to the next: what each waiting job shows follows every change, without a
# full rebuild. One sim cluster of one node (speed 1) under a reservation
# (which, unlike a sim job, outlives a restart); five jobs wait for it to
# end, planning depth 3:
# - positions 1-3, the other two "beyond the planning depth";
# - a cancel closes the gap, a job moves into the depth and gets a planned
#   start and the reason of a planned job;
# - a hold takes a job out, a release puts it back in its place by submit
#   time (not at the end);
# - a reload that makes the planning depth shallower, one that deepens it,
#   then one that switches to the priority policy: a later job of higher
#   priority goes first;
# - the scheduler switched off and on again: what the jobs show is redone;
# - a restart (SIGTERM) rebuilds the same queue;
# - when the node frees, the jobs run one at a time in queue order.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# conf POLICY DEPTH
conf() {
    loomd_conf <<EOF
[scheduler]
policy = $1
backfill = easy
depth = $2
interval_s = 1

[cluster q]
adaptor = sim
nodes = 1
cpus_per_node = 1
memory_mb = 1024
speed = 1
poll_s = 0.2
unpinned_jobs = yes
EOF
}
# sim_job NAME WALLTIME RUNTIME [PRIORITY]: JOB is its id.
sim_job() {
    submit "{\"name\":\"$1\",\"command\":[\"true\"],\"priority\":${4:-0},\"request\":{\"nodes\":1,\"walltime_s\":$2},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"$3\"}}"
}
# positions ID...: "pos:reason-kind" of each job, space-separated (pos "-"
# when none; kind: planned, beyond, other).
positions() {
    local id out=()
    for id in "$@"; do
        job "$id"
        out+=("$(py '(str(d["queue_position"]) if d["queue_position"] else "-") + ":" + ("beyond" if "beyond the planning depth" in (d["reason"] or "") else "planned" if d["reason"] == "waiting for resources" and d["planned_start"] else "other")' "$BODY")")
    done
    echo "${out[*]}"
}
# expect WHAT ID...=WANT: wait (30 s at most) for positions ID... to say WANT.
# (wait_for evaluates its command in a function of its own, where "$@" is
# its own arguments: the ids go through EXPECT_IDS.)
expect() {
    local what=$1 want=${!#} got
    EXPECT_IDS=("${@:2:$(($# - 2))}")
    wait_for '[ "$(positions "${EXPECT_IDS[@]}")" = "$want" ]' 30
    got=$(positions "${EXPECT_IDS[@]}")
    t_is "$got" "$want" "$what"
}

pg_start || t_bail "no PostgreSQL"
conf fifo 3
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

api POST /v1/reservations "{\"cluster\":\"q\",\"nodes\":[\"q/n1\"],\"start\":\"$(at 2)\",\"duration_s\":3600}" >/dev/null
t_is "$STATUS" 201 "the one node is reserved for an hour"
R=$(jget "$BODY" .id)
J=()
for i in 1 2 3 4 5; do
    sim_job "j$i" 10 1 || t_bail "no j$i"
    J+=("$JOB")
    sleep 1.1 # distinct submit times: FIFO order is by them
done
expect "five wait: 1-3 planned, 4 and 5 beyond the depth of 3" \
    "${J[@]}" "1:planned 2:planned 3:planned -:beyond -:beyond"
job "${J[3]}"
t_is "$(jget "$BODY" .reason)" "waiting: beyond the planning depth" \
    "... the reason says so, and names no depth (a new depth changes only the jobs that cross it)"

api DELETE "/v1/jobs/${J[1]}" >/dev/null
t_is "$STATUS" 200 "cancel j2"
expect "the gap closes: j4 moves into the depth and is planned" \
    "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" "1:planned 2:planned 3:planned -:beyond"

api POST "/v1/jobs/${J[0]}/hold" '{}' >/dev/null
t_is "$STATUS" 200 "hold j1"
expect "j1 held: j3 first, j5 comes into the depth" \
    "${J[2]}" "${J[3]}" "${J[4]}" "1:planned 2:planned 3:planned"
t_is "$(field "${J[0]}" .state)" held "... j1 is held"

api POST "/v1/jobs/${J[0]}/release" '{}' >/dev/null
t_is "$STATUS" 200 "release j1"
expect "j1 released: back first by its submit time, j5 beyond again" \
    "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" "1:planned 2:planned 3:planned -:beyond"

conf fifo 2
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with depth 2"
expect "... j4 goes beyond the depth too" \
    "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" "1:planned 2:planned -:beyond -:beyond"
job "${J[4]}"
t_is "$(jget "$BODY" .reason)" "waiting: beyond the planning depth" \
    "... and j5, beyond both depths, shows what it showed"

conf fifo 10
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with depth 10"
expect "... every waiting job is planned" \
    "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" "1:planned 2:planned 3:planned 4:planned"

conf priority 10
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with the priority policy"
sim_job urgent 10 1 100 || t_bail "no urgent job"
U=$JOB
expect "a later job of priority 100 goes first, the others keep their order" \
    "$U" "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" \
    "1:planned 2:planned 3:planned 4:planned 5:planned"
job "$U"
t_ok "$(py '0 if d["priority_factors"] and d["priority_factors"]["priority"] > 0 else 1' "$BODY")" \
    "... and shows its priority factors"

api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "the scheduler off"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
t_is "$STATUS" 200 "... and on again"
expect "... the queue is the same" \
    "$U" "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" \
    "1:planned 2:planned 3:planned 4:planned 5:planned"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
loomd_start || t_bail "loomd did not start again"
expect "after a restart the same queue" \
    "$U" "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}" \
    "1:planned 2:planned 3:planned 4:planned 5:planned"

api DELETE "/v1/reservations/$R" >/dev/null
t_is "$STATUS" 200 "cancel the reservation"
ORDER=("$U" "${J[0]}" "${J[2]}" "${J[3]}" "${J[4]}")
wait_for '[ "$(field "${ORDER[4]}" .state)" = completed ]' 30
t_is "$(field "${ORDER[4]}" .state)" completed "all five ran"
starts=()
for id in "${ORDER[@]}"; do
    jinfo "$id"
    starts+=("$J_START")
done
t_ok "$(python3 -c 'import sys
s = [int(x) for x in sys.argv[1:]]
sys.exit(0 if s == sorted(s) else 1)' "${starts[@]}" 2>/dev/null; echo $?)" \
    "they started one at a time in queue order (${starts[*]})"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
