#!/usr/bin/env bash
# 9013-slurm-lost-end.t - slurmctld SIGKILLed right after two Loom jobs
# ended in Slurm, before it saved those ends. Started again on the state it
# saved, Slurm holds the jobs as running until their nodes fail to report
# them (about a minute), then ends them as node failures. Loom's jobs are
# submitted --no-requeue, so Slurm does not queue them again by itself (it
# would hold them pending for two minutes, BeginTime, and run them a second
# time, while Loom showed `starting`): Loom decides. The job with `requeue`
# true is submitted again once (requeues 1, an event) and runs exactly
# twice; the one with `requeue` false fails with Slurm's reason and ran
# once. Last, a job Slurm requeues by itself (scontrol requeue) shows
# `starting` with a reason that says so.
# Loom's polls are held off (poll_s = 3600, reloaded) from the end of the
# job until slurmctld is back, so that Loom sees only what the restarted
# Slurm says: the end it had before the kill is what Slurm forgot.
# The job appends "<loom id> start|end <slurm id> <epoch>" to $T_OUT/marks.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/marks.sh"

# conf POLL_S: loom.conf with the Slurm cluster polled every POLL_S.
conf() {
    loomd_conf <<EOF
$(slurm_pack_section poll_s="$1")
EOF
}

# reload POLL_S: the same, applied by a running loomd.
reload() {
    conf "$1" && api POST /v1/runtime/reload '{}' >/dev/null &&
        [ "$STATUS" = 200 ]
}

# sq_state NATIVE: Slurm's state of that job (RUNNING, PENDING, ...).
sq_state() {
    squeue -h -t all -j "$1" -o %T 2>/dev/null
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
conf 0.5 || t_bail "no loom.conf"
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the job of this test runs as $ALICE"
: >"$T_OUT/marks" && chmod 0666 "$T_OUT/marks" # the job appends to it
cluster_state slurm
t_is "$STATE" up "the Slurm cluster is up"

# spec NAME REQUEUE: a job that runs until $T_OUT/go exists (300 s at most),
# then ends with 0.
GO=$T_OUT/go
spec() {
    python3 -c 'import json, sys
marks, go, name, requeue = sys.argv[1:5]
rec = "echo \"$LOOM_JOB_ID %s $SLURM_JOB_ID $(date +%%s.%%N)\" >>" + marks
wait = ("i=0; while [ ! -e " + go + " ] && [ $i -lt 3000 ]; do sleep 0.1; "
        "i=$((i + 1)); done")
print(json.dumps({"name": name, "requeue": requeue == "true",
                  "command": ["/bin/sh", "-c",
                              (rec % "start") + "; " + wait + "; " + (rec % "end")],
                  "request": {"cluster": "slurm", "walltime_s": 600}}))' \
        "$T_OUT/marks" "$GO" "$1" "$2"
}
submit "$(spec again true)"
J=$JOB
submit "$(spec once false)"
K=$JOB
runs() {
    [ "$(field "$J" .state)/$(field "$K" .state)" = running/running ] &&
        [ "$(marks "$J" start)/$(marks "$K" start)" = 1/1 ]
}
wait_for runs 60
t_is "$(field "$J" .state)/$(marks "$J" start)/$(field "$K" .state)/$(marks "$K" start)" \
    running/1/running/1 "both jobs run in Slurm"
NAT=$(field "$J" .native_id)
NATK=$(field "$K" .native_id)

# Slurm saves a change at most ~6 s later: the jobs, running, are saved.
TS=$(date +%s.%N)
wait_for 'slurm_saved_after "$TS"' 15
t_ok $? "slurmctld saved its state with the jobs running"

reload 3600
t_ok $? "Loom's polls of the cluster are held off"
touch "$GO"
wait_for '[ "$(sq_state "$NAT")/$(sq_state "$NATK")" = COMPLETED/COMPLETED ]' 60 0.02
t_is "$(sq_state "$NAT")/$(sq_state "$NATK")" COMPLETED/COMPLETED \
    "the jobs ended in Slurm (jobs $NAT, $NATK)"
TEND=$(awk '$2 == "end" && $4 > t { t = $4 } END { print t }' "$T_OUT/marks")
slurm_kill_ctld
t_ok $? "slurmctld is SIGKILLed right after"
slurm_saved_after "$TEND"
t_isnt $? 0 "slurmctld had not saved the jobs' ends"
t_is "$(field "$J" .state)/$(field "$K" .state)" running/running \
    "Loom had not seen the ends either"

slurm_start_ctld
t_ok $? "slurmctld is started again"
t_diag "Slurm recovered jobs $NAT, $NATK as $(sq_state "$NAT"), $(sq_state "$NATK")" \
    "(they ended before the kill)"
reload 0.5
t_ok $? "Loom polls the cluster again"
T1=$(date +%s)

# Slurm finds the jobs missing from their nodes within about a minute.
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
wait_for 'ended "$K"' 150 0.5
t_diag "Loom's state of $K $(($(date +%s) - T1)) s after the restart:" \
    "$(field "$K" .state) (Slurm: $(sq_state "$NATK"))"
t_is "$(sq_state "$NATK")" NODE_FAIL "Slurm ended job $NATK (NODE_FAIL), not queued it again"
t_is "$(field "$K" .state)" failed "requeue false: Loom shows the job failed"
t_like "$(field "$K" .reason)" 'node failure' "... and why: Slurm's node failure"
t_is "$(field "$K" .requeues)/$(field "$K" .native_id)" "0/$NATK" \
    "... and did not submit it again"
t_is "$(squeue -h -t all -o %k 2>/dev/null | grep -c -x "loom:$K")" 1 \
    "Slurm has one job for it"
t_is "$(marks "$K" start)/$(marks "$K" end)" 1/1 "it ran once"

wait_for '[ "$(field "$J" .requeues)" = 1 ]' 150 0.5
t_is "$(sq_state "$NAT")" NODE_FAIL "Slurm ended job $NAT (NODE_FAIL) too"
t_is "$(field "$J" .requeues)" 1 "requeue true: Loom queued the job again"
wait_for 'ended "$J"' 120 0.5
t_is "$(field "$J" .state)/$(field "$J" .exit_code)" completed/0 \
    "... and it ran to its end"
t_isnt "$(field "$J" .native_id)" "$NAT" "... as another Slurm job"
t_is "$(squeue -h -t all -o %k 2>/dev/null | grep -c -x "loom:$J")" 2 \
    "Slurm has two jobs for it"
t_is "$(marks "$J" start)/$(marks "$J" end)" 2/2 "it ran exactly twice"
t_like "$(pg_sql "SELECT message FROM events WHERE kind = 'job' AND subject = 'job $J'")" \
    "^requeued: cluster slurm ended job $NAT by a node failure \(node failure: " \
    "the event log says why it was queued again"
t_is "$(awk -v j="$J" '$1 == j && $2 == "start" { print $3 }' "$T_OUT/marks" | sort -u | wc -l)" 2 \
    "its two runs were two Slurm jobs"

# A job Slurm queues again by itself (an admin's requeue: Loom's jobs are
# --no-requeue, so the admin allows it first) shows starting, and why.
submit '{"name": "by-slurm", "command": ["/bin/sleep", "300"],
         "request": {"cluster": "slurm", "walltime_s": 600}}'
L=$JOB
wait_for '[ "$(field "$L" .state)" = running ]' 60
t_is "$(field "$L" .state)" running "another job runs"
NATL=$(field "$L" .native_id)
scontrol update jobid="$NATL" requeue=1 >/dev/null 2>&1 &&
    scontrol requeue "$NATL" >/dev/null 2>&1
t_ok $? "an admin has Slurm requeue it (job $NATL)"
wait_for '[ "$(field "$L" .state)" = starting ]' 60 0.5
t_is "$(field "$L" .state)/$(field "$L" .requeues)" starting/0 \
    "Loom shows it starting again, not a requeue of its own"
t_like "$(field "$L" .reason)" "^requeued by cluster slurm \(job $NATL\): " \
    "... and why"
api DELETE "/v1/jobs/$L" >/dev/null
wait_for 'ended "$L"' 60 0.5

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
