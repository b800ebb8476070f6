#!/usr/bin/env bash
# 4003-slurm-restart.t - a real slurmctld that goes away under a running
# loomd (script adaptor, the bundled Slurm pack):
#   (a) slurmctld stopped: the cluster turns degraded, then unreachable,
#       with the error in GET /v1/clusters; started again, the cluster is
#       up by itself and the jobs that ran or had finished are still right:
#       none lost, none started twice, none requeued;
#   (b) "a CMS that forgets": a burst of 20 jobs, and slurmctld SIGKILLed
#       and restarted right after it acknowledged them (it batches its state
#       saves, so it forgets the latest: here the second half, which waits
#       in a partition set down): every Loom job ends completed; the
#       ones Slurm lost were submitted again exactly once (requeues 1) and
#       ran once to completion after that; the ones Slurm kept were never
#       submitted twice (requeues 0, the same native id).
# Every job appends "<loom id> start|end <slurm id> <epoch>" to $T_OUT/marks.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }




# jobjson NAME SECS [FILE]: a Slurm job that records its start and end in
# $T_OUT/marks; it runs SECS seconds, or with FILE until FILE exists (SECS
# at most).
jobjson() {
    python3 -c 'import json, sys
name, secs, marks, until = sys.argv[1:5]
rec = "echo \"$LOOM_JOB_ID %s $SLURM_JOB_ID $(date +%%s.%%N)\" >>" + marks
wait = "sleep " + secs
if until:
    wait = ("i=0; while [ ! -e " + until + " ] && [ $i -lt " + secs + "0 ]; "
            "do sleep 0.1; i=$((i + 1)); done")
cmd = (rec % "start") + "; " + wait + "; " + (rec % "end")
print(json.dumps({"name": name, "command": ["/bin/sh", "-c", cmd],
                  "request": {"cluster": "slurm", "walltime_s": 600}}))' \
        "$1" "$2" "$T_OUT/marks" "${3:-}"
}


# marks ID KIND [AFTER]: how many KIND (start|end) marks job ID left (only
# those later than the epoch AFTER, when given).
marks() {
    awk -v id="$1" -v k="$2" -v after="${3:-0}" \
        '$1 == id && $2 == k && $4 + 0 > after + 0 { n++ } END { print n + 0 }' \
        "$T_OUT/marks" 2>/dev/null
}

# comments ID: how many jobs Slurm knows carry the comment loom:ID.
comments() {
    squeue -h -t all -o '%k' 2>/dev/null | grep -c -x "loom:$1"
}

# starts ID: how many times loomd's log says it started job ID.
starts() {
    grep -c "job=$1 cluster=slurm started\$" "$T/loomd.log"
}

# jobs_table FIRST LAST: "id state native_id requeues" per job, one a line.
jobs_table() {
    api GET "/v1/jobs?after=$(($1 - 1))&limit=$(($2 - $1 + 1))" >/dev/null
    printf '%s' "$BODY" | python3 -c 'import json, sys
for j in json.load(sys.stdin)["items"]:
    print(j["id"], j["state"], j["native_id"] or "-", j.get("requeues", "?"))'
}

LOOM_SLURM_CPUS=5 # 4 nodes x 5 cpus: the 20 jobs of (b) fit at once
slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"
: >"$T_OUT/marks" && chmod 0666 "$T_OUT/marks" # its jobs append to it
cluster_state slurm
t_is "$STATE" up "the Slurm cluster is up"

# ---- (a) slurmctld stopped and started again ------------------------------------
submit "$(jobjson fin1 0)"; F1=$JOB
submit "$(jobjson fin2 0)"; F2=$JOB
wait_for '[ "$(field "$F1" .state)/$(field "$F2" .state)" = completed/completed ]' 30
t_is "$(field "$F1" .state)/$(field "$F2" .state)" completed/completed \
    "two short jobs completed before the controller stops"
# None may end before slurmctld is killed: Slurm might not have saved that
# end, and finding the job then missing from its node it would end it as a
# node failure (9013). Each runs until a file says so: the first ends
# while slurmctld is away, the others after it is back.
submit "$(jobjson short-run 120 "$T_OUT/end-away")"; R1=$JOB
submit "$(jobjson long-run1 120 "$T_OUT/end-back")"; R2=$JOB
submit "$(jobjson long-run2 120 "$T_OUT/end-back")"; R3=$JOB
A_IDS="$F1 $F2 $R1 $R2 $R3"
wait_for '[ "$(field "$R1" .state)/$(field "$R2" .state)/$(field "$R3" .state)" = running/running/running ] &&
          [ "$(marks "$R1" start)$(marks "$R2" start)$(marks "$R3" start)" = 111 ]' 30
t_is "$(field "$R1" .state)/$(field "$R2" .state)/$(field "$R3" .state)" \
    running/running/running "three sleep jobs run in Slurm"
declare -A NAT0
for j in $A_IDS; do NAT0[$j]=$(field "$j" .native_id); done
# This part is about a controller that is away, not one that forgets: let
# slurmctld save the running jobs first. A change is saved at most ~6 s
# later (never sooner than 5 s after the previous save): either a save comes
# after now, or there was nothing left to save.
TS=$(date +%s.%N)
wait_for 'slurm_saved_after "$TS"' 7 0.1 || t_diag "(no state save after the jobs ran: it came before)"

slurm_kill_ctld
t_ok $? "slurmctld is killed"
T0=$(now_us)
KILL_A=$(date +%s.%N)
touch "$T_OUT/end-away"
wait_for 'cluster_state slurm; [ "$STATE" != up ]' 30
t_is "$STATE" degraded "without its controller the cluster turns degraded"
t_diag "degraded after $((($(now_us) - T0) / 1000)) ms: $ERR"
t_like "$ERR" '^cluster slurm: (pack [^:]+: )?(jobs|nodes|queues): .*([Uu]nable to contact|unreachable)' \
    "GET /v1/clusters shows the error (controller unreachable)"
wait_for 'cluster_state slurm; [ "$STATE" = unreachable ]' 30
t_is "$STATE" unreachable "after three failed polls it is unreachable"
t_diag "unreachable after $((($(now_us) - T0) / 1000)) ms"
t_like "$ERR" 'cluster slurm: .*([Uu]nable to contact|unreachable)' "... with the error"
api GET "/v1/jobs/$R2" >/dev/null
t_is "$(jget "$BODY" .state)" running "a job that was running is still running for Loom meanwhile"

START_A=$(date +%s.%N)
slurm_start_ctld
t_ok $? "slurmctld is started again"
T1=$(now_us)
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 30
t_is "$STATE/$ERR" up/ "the cluster is up again by itself"
touch "$T_OUT/end-back"
t_diag "up $((($(now_us) - T1) / 1000)) ms after slurmctld answered"
# A job that ended while slurmctld was away is reported by its slurmstepd,
# which retries every 15 s or so.
all_ended() {
    local j
    for j in $A_IDS; do
        case $(field "$j" .state) in completed | failed | cancelled) ;; *) return 1 ;; esac
    done
}
wait_for all_ended 45 0.5
OK=0
for j in $A_IDS; do
    got="$(field "$j" .state)/$(field "$j" .exit_code)/$(field "$j" .requeues)/$(field "$j" .native_id)"
    want="completed/0/0/${NAT0[$j]}"
    [ "$got" = "$want" ] || { t_diag "job $j: got $got, want $want"; OK=1; }
done
t_ok $OK "the five jobs ended completed, exit 0, never requeued, same native ids"
OK=0
for j in $A_IDS; do
    got="$(marks "$j" start)/$(marks "$j" end)/$(comments "$j")"
    [ "$got" = 1/1/1 ] || { t_diag "job $j: starts/ends/Slurm jobs $got, want 1/1/1"; OK=1; }
done
t_ok $OK "none lost, none started twice: each ran once, and Slurm has one job for each"
awk -v id="$R1" -v a="$KILL_A" -v b="$START_A" '$1 == id && $2 == "end" && $4 > a && $4 < b { f = 1 } END { exit !f }' "$T_OUT/marks" &&
    t_diag "(job $R1 ended while slurmctld was away)"

# ---- (b) a controller that forgets what it acknowledged ----------------------------
# slurmctld writes its state at most every 5 s (and a save is due soon
# after a change when the last one is older). So that both cases happen in
# every run: the first half of the burst is given time to be saved (with
# the end of part (a)); the second half is acknowledged, and slurmctld
# killed, right after that save.
N=20
W1=10
wait_for 'slurm_nodes_idle' 30
t_ok $? "Slurm's nodes are idle"
B_IDS=
submit_wave() {
    local i
    for ((i = $1; i <= $2; i++)); do
        submit "$(jobjson "burst$i" 120 "$T_OUT/release")"
        B_IDS="$B_IDS $JOB"
    done
    B_IDS=${B_IDS# }
    FIRST=${B_IDS%% *}
    LAST=${B_IDS##* }
}
# all_native K: the first K jobs of the burst have a native id (TABLE).
all_native() {
    TABLE=$(jobs_table "$FIRST" "$LAST")
    [ "$(awk '$3 != "-"' <<<"$TABLE" | wc -l)" = "$1" ]
}
# running_in_slurm IDS: Slurm runs a job for each of IDS.
running_in_slurm() {
    local rs id
    rs=" $(squeue -h -t R -o '%k' 2>/dev/null | paste -sd' ') "
    for id in $1; do [[ $rs == *" loom:$id "* ]] || return 1; done
}
submit_wave 1 "$W1"
WAVE1=$B_IDS
wait_for 'all_native "$W1" && running_in_slurm "$WAVE1"' 30 0.05
t_ok $? "the first $W1 jobs run in Slurm"
TW=$(date +%s.%N)
if wait_for 'slurm_saved_after "$TW"' 7 0.02; then
    t_diag "slurmctld saved its state $(awk -v t="$TW" -v m="$(stat -c %.9Y "$SLURM_DIR/state/job_state")" 'BEGIN { printf "%.2f", m - t }') s later: the second wave comes now"
else
    t_diag "slurmctld had saved them already: it may save some of the second wave too"
fi
# The second wave must be queued in Slurm, not running, when Slurm forgets
# it: a forgotten job that had started lives on in its slurmd, and since
# slurmctld hands out the forgotten ids again, the resubmitted job meets it
# ("Duplicate jobid", the node drained). The partition is down meanwhile:
# Slurm accepts jobs then but starts none.
scontrol update partitionname=debug state=down
t_is "$(scontrol show partition -o debug | grep -o ' State=[A-Z]*')" " State=DOWN" \
    "the partition is down for the second wave"
submit_wave $((W1 + 1)) "$N"
t_is "$(wc -w <<<"$B_IDS")" $N "$N jobs submitted in all (ids $FIRST..$LAST)"
wait_for 'all_native "$N"' 30 0.02
t_ok $? "Loom has a native id for every one of them"
TK=$(now_us)
LOG_AT=$(wc -l <"$SLURM_DIR/log/slurmctld.log")
slurm_kill_ctld
KILL_EPOCH=$(date +%s.%N)
t_diag "slurmctld SIGKILLed $((($(now_us) - TK) / 1000)) ms after Loom had all native ids," \
    "$(awk -v t="$TW" -v k="$KILL_EPOCH" 'BEGIN { printf "%.2f", k - t }') s after the first wave was running"
declare -A NATB
while read -r id st nat rq; do NATB[$id]=$nat; done <<<"$TABLE"
slurm_start_ctld
t_ok $? "slurmctld is started again"
scontrol update partitionname=debug state=up
touch "$T_OUT/release" # the burst ends now, never before the kill
t_is "$(scontrol show partition -o debug | grep -o ' State=[A-Z]*')" " State=UP" \
    "the partition is up again"
# What it recovered, from its log: "Recovered JobId=N ...".
RECOVERED=" $(tail -n +"$((LOG_AT + 1))" "$SLURM_DIR/log/slurmctld.log" |
    sed -n 's/.*Recovered JobId=\([0-9]*\).*/\1/p' | sort -u | paste -sd' ') "
LOST=
KEPT=
for id in $B_IDS; do
    if [[ $RECOVERED == *" ${NATB[$id]} "* ]]; then
        KEPT="$KEPT $id"
    else
        LOST="$LOST $id"
    fi
done
NLOST=$(wc -w <<<"$LOST")
t_diag "Slurm lost $NLOST of the $N jobs it had acknowledged (Loom ids:${LOST:- none})"
[ "$NLOST" = 0 ] && t_diag "Slurm lost NO job in this run: the checks of lost jobs below hold vacuously"
[ "$NLOST" = "$N" ] && t_diag "Slurm kept no job of the burst in this run: the checks of kept jobs below hold vacuously"

ended() {
    TABLE=$(jobs_table "$FIRST" "$LAST")
    [ "$(awk '$2 ~ /^(completed|failed|cancelled)$/' <<<"$TABLE" | wc -l)" = "$N" ]
}
wait_for ended 60 0.5
t_ok $? "every one of the $N jobs ended"
t_is "$(awk '$2 != "completed" { print $1 "=" $2 }' <<<"$TABLE" | paste -sd' ')" "" \
    "every one ended completed"
SQ=$(SLURM_TIME_FORMAT=%s squeue -h -t all -o '%A %k %V' 2>/dev/null)

OK=0
for id in $KEPT; do
    read -r _ st nat rq <<<"$(grep "^$id " <<<"$TABLE")"
    got="$rq/$nat/$(starts "$id")/$(grep -c " loom:$id " <<<"$SQ ")/$(marks "$id" start)/$(marks "$id" end)"
    want="0/${NATB[$id]}/1/1/1/1"
    [ "$got" = "$want" ] || { t_diag "kept job $id: requeues/native id/starts by loomd/Slurm jobs/start marks/end marks: got $got, want $want"; OK=1; }
done
t_ok $OK "the jobs Slurm kept ($(wc -w <<<"$KEPT")): requeues 0, same native id, submitted once, ran once"

OK=0
SAME=0
for id in $LOST; do
    read -r _ st nat rq <<<"$(grep "^$id " <<<"$TABLE")"
    line=$(awk -v c="loom:$id" '$2 == c' <<<"$SQ")
    nsq=$(grep -c . <<<"$line")
    sub=$(awk '{ print $3 }' <<<"$line" | head -n 1)
    got="$rq/$(starts "$id")/$nsq/$(awk '{ print $1 }' <<<"$line" | head -n 1)/$(marks "$id" start "$KILL_EPOCH")/$(marks "$id" end)/$(marks "$id" end "$KILL_EPOCH")"
    got="$got/$(marks "$id" start)"
    want="1/2/1/$nat/1/1/1/1"
    [ "$got" = "$want" ] || { t_diag "lost job $id: requeues/starts by loomd/Slurm jobs/their native id/start marks after the kill/end marks/end marks after the kill/start marks: got $got, want $want"; OK=1; }
    if [ -z "$sub" ] || awk -v s="$sub" -v k="$KILL_EPOCH" 'BEGIN { exit !(s + 0 < int(k)) }'; then
        t_diag "lost job $id: its Slurm job $nat was submitted at ${sub:-?}, before the restart ($KILL_EPOCH)"
        OK=1
    fi
    [ "$nat" = "${NATB[$id]}" ] && SAME=$((SAME + 1))
done
t_ok $OK "the jobs Slurm lost ($NLOST): requeued once, submitted again once after the restart, ran once to completion after that"
[ "$SAME" = 0 ] ||
    t_diag "$SAME lost job(s) got back the same Slurm job id: slurmctld reuses the ids it forgot"
[ "$T_FAILED" = 0 ] ||
    t_diag "marks of the burst (loom-id start|end slurm-id epoch), kill at $KILL_EPOCH:" \
        "$(awk -v f="$FIRST" '$1 >= f' "$T_OUT/marks" | sort -n -k1,1 -k4,4)"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
