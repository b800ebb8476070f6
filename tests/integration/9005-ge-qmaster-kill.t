#!/usr/bin/env bash
# 9005-ge-qmaster-kill.t - 9003 for Grid Engine: sge_qmaster SIGKILLed under
# a load of submits through Loom (two clients go on submitting while it is
# dead), then started again on its spool: every Loom job ran once, in the
# Grid Engine job whose id Loom shows, and no other Grid Engine job ran for
# it; the jobs Loom had not handed over are handed over exactly once. Jobs
# run meanwhile: the qmaster spools every job before it answers qsub, and
# its execd runs them on (Loom does not hand jobs over to a disabled queue,
# so the queue cannot hold them back as 9003's partition does).
# Every job appends "<loom id> start|end <ge job id> <epoch>" to $T_OUT/marks.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/submitload.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

# ge_ids ID: the Grid Engine job ids in the start marks of job ID.
ge_ids() {
    awk -v id="$1" '$1 == id && $2 == "start" { print $3 }' "$T_OUT/marks" |
        paste -sd' '
}

GE_SLOTS=20
ge_available || t_bail "no Grid Engine here: $GE_WHY"
ge_start || t_bail "Grid Engine did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
timeout.jobs = 30
timeout.nodes = 30
timeout.queues = 30
timeout.start = 30
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"
cluster_state ge
t_is "$STATE" up "the Grid Engine cluster is up"

load_start ge JOB_ID

wait_for 'native 10' 60
t_ok $? "Grid Engine has acknowledged 10 jobs while the clients submit"
ge_kill_qmaster
t_ok $? "sge_qmaster is SIGKILLed under the load"
AT_KILL=$(acked)
TABLE=$(table) # what Loom had handed over when it died
declare -A NAT0
while read -r id st nat rq; do NAT0[$id]=$nat; done <<<"$TABLE"
t_diag "at the kill: $AT_KILL jobs acknowledged by Loom, $(awk '$3 != "-"' <<<"$TABLE" | wc -l) by Grid Engine"

wait_for '[ "$(acked)" -ge $((AT_KILL + 10)) ]' 60
t_ok "$([ "$(acked)" -ge $((AT_KILL + 10)) ]; echo $?)" \
    "Loom goes on accepting submits while sge_qmaster is dead"
wait_for 'cluster_state ge; [ "$STATE" != up ]' 120
t_like "$STATE" '^(degraded|unreachable)$' "the cluster is not up without its qmaster"
ge_start_qmaster
t_ok $? "sge_qmaster is started again on its spool"
# Submits go on across the restart; then the clients stop.
RESTART_AT=$(acked)
wait_for '[ "$(acked)" -ge $((RESTART_AT + 4)) ]' 60
load_stop
t_is "$(cat "$T/refused" 2>/dev/null)" "" "every submit was answered 201"

IDS=$(cat "$T"/client.? | sort -n)
N=$(wc -l <<<"$IDS")
t_diag "$N jobs submitted, $AT_KILL before the kill"
wait_for "ended $N" 300 0.5
t_ok $? "every one of the $N jobs ended"
t_is "$(awk '$2 != "completed" { print $1 "=" $2 }' <<<"$TABLE" | paste -sd' ')" "" \
    "every one ended completed"
t_is "$(awk '{ print $1 }' <<<"$TABLE" | sort -n)" "$IDS" \
    "Loom has exactly the jobs its clients were answered 201 for"

# No Grid Engine job is left that could still run (a double): the queue
# is empty.
wait_for '[ -z "$(ge_cmd qstat -u "*")" ]' 60
t_is "$(ge_cmd qstat -u '*')" "" "Grid Engine has no job left"
OK=0 N_KEPT=0 N_NEW=0
while read -r id st nat rq; do
    got="$(ge_ids "$id")/$(marks "$id" start)/$(marks "$id" end)"
    want="$nat/1/1"
    [ "$got" = "$want" ] || {
        t_diag "job $id: Grid Engine jobs that ran it/start marks/end marks: got $got, want $want"
        OK=1
    }
    old=${NAT0[$id]:-}
    if [ -z "$old" ] || [ "$old" = - ]; then # not handed over at the kill
        N_NEW=$((N_NEW + 1))
        got="$rq/$(starts "$id")"
        want=0/1
    else # classic spooling keeps what the qmaster acknowledged
        N_KEPT=$((N_KEPT + 1))
        got="$rq/$(starts "$id")/$nat"
        want="0/1/$old"
    fi
    [ "$got" = "$want" ] || {
        t_diag "job $id (native id at the kill: ${old:--}): requeues/starts by loomd[/native id]: got $got, want $want"
        OK=1
    }
done <<<"$TABLE"
t_is "$((N_NEW + N_KEPT))" "$N" "each of the $N jobs was looked at"
t_ok $OK "each job ran once, in the Grid Engine job Loom shows; kept $N_KEPT, handed over after the restart once $N_NEW"
t_ok "$([ "$N_NEW" -ge 10 ]; echo $?)" "at least 10 jobs were handed over only after the restart ($N_NEW)"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
