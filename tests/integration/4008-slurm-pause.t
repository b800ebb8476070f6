#!/usr/bin/env bash
# 4008-slurm-pause.t - pausing a node of a real Slurm through the slurm
# pack: the job running there is suspended in Slurm (squeue shows S) and
# stops counting; the node shows paused; a job submitted with sbatch
# directly onto the paused node (Slurm's own scheduler starts it) is
# suspended too; unpause resumes both (squeue R) and they run to
# completion with exit 0.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

count() { cat "$T_OUT/${1:-count}" 2>/dev/null || echo 0; }
# squeue_state [ID]: the job's compact state in Slurm (R, S, CD, ...), or "".
squeue_state() { squeue -h -j "${1:-$NATIVE}" -o '%t' 2>/dev/null; }

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# The job runs as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the job of this test runs as $ALICE"

# It counts to 40, one every quarter of a second, into $T_OUT/count.
submit "{\"name\": \"count\", \"request\": {\"cluster\": \"slurm\"}, \"command\": [\"/bin/sh\", \"-c\", \"i=0; while [ \$i -lt 40 ]; do i=\$((i + 1)); echo \$i > $T_OUT/count.tmp; mv $T_OUT/count.tmp $T_OUT/count; sleep 0.25; done\"]}"
J=$JOB
wait_for '[ "$(field "$J" .state)" = running ] && [ "$(count)" -ge 2 ]' 60
job "$J"
NODE=$(jget "$BODY" .nodes.0)
NATIVE=$(jget "$BODY" .native_id)
t_is "$(squeue_state)/$(field "$J" .state)" R/running "the job runs in Slurm on $NODE (job $NATIVE, at $(count))"

api PUT "/v1/nodes/slurm/$NODE/state" '{"state": "pause", "reason": "desk in use"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/paused "PUT state pause: 200, the node shows paused" || t_diag "$BODY"
wait_for '[ "$(squeue_state)" = S ]' 30
t_is "$(squeue_state)" S "squeue shows the job SUSPENDED (S)"
wait_for '[ "$(field "$J" .state)" = suspended ]' 30
t_is "$(field "$J" .state)" suspended "Loom shows it suspended"
C1=$(count)
t_sleep 1
t_is "$(count)" "$C1" "its counter stops (at $C1 of 40)"
api GET "/v1/nodes/slurm/$NODE" >/dev/null
t_is "$(jget "$BODY" .state)" paused "GET /v1/nodes/slurm/$NODE: paused"

# Slurm's node is not drained: a job sbatch puts there directly runs,
# and Loom suspends it.
OWN=$(sbatch --parsable -w "$NODE" -J own -o /dev/null --wrap "i=0; while [ \$i -lt 20 ]; do i=\$((i + 1)); echo \$i > $T_OUT/own.tmp; mv $T_OUT/own.tmp $T_OUT/own; sleep 0.25; done")
t_like "$OWN" '^[0-9]+$' "sbatch -w $NODE: Slurm job $OWN"
wait_for '[ "$(squeue_state "$OWN")" = S ]' 60
t_is "$(squeue_state "$OWN")" S "the job Slurm started on the paused node is suspended (S), at $(count own)"
wait_for 'api GET "/v1/jobs?cluster=slurm&state=suspended" >/dev/null; grep -q "\"native_id\":\"$OWN\"" <<<"$BODY"' 30
t_ok $? "Loom shows it suspended"

api PUT "/v1/nodes/slurm/$NODE/state" '{"state": "resume"}' >/dev/null
t_is "$STATUS" 200 "PUT state resume: 200" || t_diag "$BODY"
wait_for '[ "$(squeue_state)" = R ]' 30
t_is "$(squeue_state)" R "squeue shows the job running again (R)"
wait_for '[ "$(squeue_state "$OWN")" = R ]' 30
t_is "$(squeue_state "$OWN")" R "the sbatch job is resumed too (R, at $(count own))"
wait_for '[ "$(field "$J" .state)" = completed ]' 60
job "$J"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)/$(count)" completed/0/40 \
    "it runs to completion with exit 0, having counted to 40"
wait_for '[ "$(count own)" = 20 ] && [ -z "$(squeue_state "$OWN")" ]' 60
t_is "$(count own)/$(squeue_state "$OWN")" 20/ "the sbatch job completes, having counted to 20"
api GET "/v1/nodes/slurm/$NODE" >/dev/null
t_like "$(jget "$BODY" .state)" '^(idle|mixed|allocated)$' "the node takes jobs again ($(jget "$BODY" .state))"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
