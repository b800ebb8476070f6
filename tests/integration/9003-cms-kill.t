#!/usr/bin/env bash
# 9003-cms-kill.t - slurmctld SIGKILLed under a load of submits through
# Loom (two clients go on submitting while it is dead), then restarted:
# every Loom job has exactly one Slurm job (by its comment loom:ID) with the
# native id Loom shows, and ran once; the jobs Slurm had acknowledged are
# kept (requeues 0, same native id) or, when Slurm forgot them, submitted
# again once (requeues 1); the jobs Loom had not handed over yet are handed
# over exactly once. The partition is down until the restart, so that no
# job runs while Slurm may still forget it (a forgotten running job lives on
# in its slurmd and meets its resubmission: 4003 says why).
# Every job appends "<loom id> start|end <slurm id> <epoch>" to $T_OUT/marks.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/submitload.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

# 4 nodes x 25 cpus: Loom hands Slurm as many one-cpu jobs as there are
# cpus (the partition is down: none ends), more than come before a save.
LOOM_SLURM_CPUS=25
slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"
cluster_state slurm
t_is "$STATE" up "the Slurm cluster is up"

scontrol update partitionname=debug state=down
t_is "$(scontrol show partition -o debug | grep -o ' State=[A-Z]*')" " State=DOWN" \
    "the partition is down: Slurm takes jobs and runs none"

load_start slurm SLURM_JOB_ID

# slurmctld saves its state at most every 5 s: the jobs acknowledged before
# a save are kept across the kill, those after it forgotten. Both happen:
# the kill comes after a save and 5 more acknowledged jobs.
wait_for 'native 5' 60
TS=$(date +%s.%N)
wait_for 'slurm_saved_after "$TS"' 10 0.05 || t_diag "(no state save after the first 5 jobs: it came before)"
native 0
AT_SAVE=$(awk '$3 != "-"' <<<"$TABLE" | wc -l)
wait_for "native $((AT_SAVE + 5))" 60
t_ok $? "Slurm has acknowledged $((AT_SAVE + 5)) jobs while the clients submit"
LOG_AT=$(wc -l <"$SLURM_DIR/log/slurmctld.log")
slurm_kill_ctld
t_ok $? "slurmctld is SIGKILLed under the load"
AT_KILL=$(acked)
TABLE=$(table) # what Loom had handed over when it died
declare -A NAT0
while read -r id st nat rq; do NAT0[$id]=$nat; done <<<"$TABLE"
t_diag "at the kill: $AT_KILL jobs acknowledged by Loom, $(awk '$3 != "-"' <<<"$TABLE" | wc -l) by Slurm"

wait_for '[ "$(acked)" -ge $((AT_KILL + 10)) ]' 60
t_ok "$([ "$(acked)" -ge $((AT_KILL + 10)) ]; echo $?)" \
    "Loom goes on accepting submits while slurmctld is dead"
# Its worker runs one op at a time, and each start tried meanwhile waits
# ~4 s for the controller: the polls that would make it unreachable come
# late, so degraded is enough here (4003 sees it turn unreachable).
wait_for 'cluster_state slurm; [ "$STATE" != up ]' 60
t_like "$STATE" '^(degraded|unreachable)$' "the cluster is not up without its controller"
slurm_start_ctld
t_ok $? "slurmctld is started again on its saved state"
# Submits go on across the restart; then the clients stop.
RESTART_AT=$(acked)
wait_for '[ "$(acked)" -ge $((RESTART_AT + 4)) ]' 60
load_stop
scontrol update partitionname=debug state=up
t_is "$(scontrol show partition -o debug | grep -o ' State=[A-Z]*')" " State=UP" \
    "the partition is up again"
t_is "$(cat "$T/refused" 2>/dev/null)" "" "every submit was answered 201"

IDS=$(cat "$T"/client.? | sort -n)
N=$(wc -l <<<"$IDS")
t_diag "$N jobs submitted, $AT_KILL before the kill"
wait_for "ended $N" 300 0.5
t_ok $? "every one of the $N jobs ended"
t_is "$(awk '$2 != "completed" { print $1 "=" $2 }' <<<"$TABLE" | paste -sd' ')" "" \
    "every one ended completed" ||
    for id in $(awk '$2 != "completed" { print $1 }' <<<"$TABLE"); do
        t_diag "job $id: reason $(field "$id" .reason); $(grep "job=$id " "$T/loomd.log" | tail -5)"
    done
t_is "$(awk '{ print $1 }' <<<"$TABLE" | sort -n)" "$IDS" \
    "Loom has exactly the jobs its clients were answered 201 for"

RECOVERED=" $(tail -n +"$((LOG_AT + 1))" "$SLURM_DIR/log/slurmctld.log" |
    sed -n 's/.*Recovered JobId=\([0-9]*\).*/\1/p' | sort -u | paste -sd' ') "
SQ=$(squeue -h -t all -o '%A %k' 2>/dev/null)
OK=0 N_KEPT=0 N_LOST=0 N_NEW=0
while read -r id st nat rq; do
    slurm_ids=$(awk -v c="loom:$id" '$2 == c { print $1 }' <<<"$SQ" | paste -sd' ')
    got="$slurm_ids/$(marks "$id" start)/$(marks "$id" end)"
    want="$nat/1/1"
    [ "$got" = "$want" ] || {
        t_diag "job $id: Slurm jobs/start marks/end marks: got $got, want $want"
        OK=1
    }
    old=${NAT0[$id]:-}
    if [ -z "$old" ] || [ "$old" = - ]; then # not handed over at the kill
        N_NEW=$((N_NEW + 1))
        got="$rq/$(starts "$id")"
        want=0/1
    elif [[ $RECOVERED == *" $old "* ]]; then # Slurm kept it
        N_KEPT=$((N_KEPT + 1))
        got="$rq/$(starts "$id")/$nat"
        want="0/1/$old"
    else # Slurm forgot it: submitted again, once
        N_LOST=$((N_LOST + 1))
        got="$rq/$(starts "$id")"
        want=1/2
    fi
    [ "$got" = "$want" ] || {
        t_diag "job $id (native id at the kill: ${old:--}): requeues/starts by loomd[/native id]: got $got, want $want"
        OK=1
    }
done <<<"$TABLE"
t_is "$((N_NEW + N_KEPT + N_LOST))" "$N" "each of the $N jobs was looked at"
t_ok $OK "each job has one Slurm job, ran once; kept $N_KEPT, forgotten and submitted again once $N_LOST, handed over after the restart once $N_NEW"
t_ok "$([ "$N_NEW" -ge 10 ]; echo $?)" "at least 10 jobs were handed over only after the restart ($N_NEW)"
t_diag "$(grep -c -E 'start: sbatch: Slurm controller unreachable or busy: .*(Connection reset by peer|Unexpected missing socket error)' "$T/loomd.log") start(s) met the controller dying under sbatch"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
