#!/usr/bin/env bash
# 9013-slurm-lost-end.t - slurmctld SIGKILLed right after a Loom job ended
# in Slurm, before it saved that end. Started again on the state it saved,
# Slurm holds the job as running until the job's node fails to report it
# (about a minute), then ends it as a node failure. Loom's jobs are
# submitted --no-requeue, so Slurm does not queue it again by itself (it
# would hold it pending for two minutes, BeginTime, and run it a second
# time, while Loom showed `starting`): Loom shows the job failed with
# Slurm's reason, and the job ran once.
# Loom's polls are held off (poll_s = 3600, reloaded) from the end of the
# job until slurmctld is back, so that Loom sees only what the restarted
# Slurm says: the end it had before the kill is what Slurm forgot.
# The job appends "<loom id> start|end <slurm id> <epoch>" to $T_OUT/marks.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

# marks ID KIND: how many KIND (start|end) marks job ID left.
marks() {
    awk -v id="$1" -v k="$2" '$1 == id && $2 == k { n++ } END { print n + 0 }' \
        "$T_OUT/marks" 2>/dev/null
}

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

# The job runs until $T_OUT/go exists (300 s at most), then ends with 0.
GO=$T_OUT/go
submit "$(python3 -c 'import json, sys
marks, go = sys.argv[1:3]
rec = "echo \"$LOOM_JOB_ID %s $SLURM_JOB_ID $(date +%%s.%%N)\" >>" + marks
wait = ("i=0; while [ ! -e " + go + " ] && [ $i -lt 3000 ]; do sleep 0.1; "
        "i=$((i + 1)); done")
print(json.dumps({"name": "lost-end",
                  "command": ["/bin/sh", "-c",
                              (rec % "start") + "; " + wait + "; " + (rec % "end")],
                  "request": {"cluster": "slurm", "walltime_s": 600}}))' \
    "$T_OUT/marks" "$GO")"
J=$JOB
wait_for '[ "$(field "$J" .state)" = running ] && [ "$(marks "$J" start)" = 1 ]' 60
t_is "$(field "$J" .state)/$(marks "$J" start)" running/1 "the job runs in Slurm"
NAT=$(field "$J" .native_id)

# Slurm saves a change at most ~6 s later: the job, running, is saved.
TS=$(date +%s.%N)
wait_for 'slurm_saved_after "$TS"' 15
t_ok $? "slurmctld saved its state with the job running"

reload 3600
t_ok $? "Loom's polls of the cluster are held off"
touch "$GO"
wait_for '[ "$(sq_state "$NAT")" = COMPLETED ]' 60 0.02
t_is "$(sq_state "$NAT")" COMPLETED "the job ended in Slurm (job $NAT)"
TEND=$(awk -v id="$J" '$1 == id && $2 == "end" { print $4 }' "$T_OUT/marks")
slurm_kill_ctld
t_ok $? "slurmctld is SIGKILLed right after"
slurm_saved_after "$TEND"
t_isnt $? 0 "slurmctld had not saved the job's end"
t_is "$(field "$J" .state)" running "Loom had not seen the end either"

slurm_start_ctld
t_ok $? "slurmctld is started again"
t_diag "Slurm recovered job $NAT as $(sq_state "$NAT") (it ended before the kill)"
reload 0.5
t_ok $? "Loom polls the cluster again"
T1=$(date +%s)

# Slurm finds the job missing from its node within about a minute.
ended() {
    case $(field "$J" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
wait_for ended 150 0.5
t_diag "Loom's state $(($(date +%s) - T1)) s after the restart: $(field "$J" .state)" \
    "(Slurm: $(sq_state "$NAT"))"
t_is "$(field "$J" .state)" failed "Loom shows the job failed, not waiting to start again"
t_like "$(field "$J" .reason)" 'node failure' "... and why: Slurm's node failure"
t_is "$(sq_state "$NAT")" NODE_FAIL "Slurm ended the job (NODE_FAIL), not queued it again"
t_is "$(squeue -h -t all -o %k 2>/dev/null | grep -c -x "loom:$J")" 1 \
    "Slurm has one job for it"
t_is "$(field "$J" .requeues)/$(field "$J" .native_id)" "0/$NAT" \
    "Loom did not submit it again"
t_is "$(marks "$J" start)/$(marks "$J" end)" 1/1 "the job ran once"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
