#!/usr/bin/env bash
# 4004-slurm-accounts.t - the Slurm pack submits each job as its own account
# on a real Slurm: jobs of two test accounts (alice, bob) run as them, work
# and write in their homes, and squeue -u lists them as theirs; each one's
# own cancel, suspend and resume through Loom reach her job in Slurm, and
# so do hold and release of a job she submitted with sbatch herself
# (loomd's account is the SlurmUser, an administrator). The job file Loom
# writes stays loomd's alone (mode 0700).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
t_account ALICE alice
t_account BOB bob
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
TA=$(token_for "$ALICE" user) && TB=$(token_for "$BOB" user) ||
    t_bail "no tokens"
TOKEN=$TA

# sq NATIVE FORMAT: squeue's FORMAT of that job, finished ones included.
sq() { squeue -h -t all -j "$1" -o "$2" 2>/dev/null; }

api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .runs_as_user)/$(jget "$BODY" .single_account)" true/null \
    "GET /v1/clusters: the slurm pack runs each job as its own account"

# ---- alice's and bob's jobs run as alice and bob --------------------------------
TOKEN=$TA submit '{"name":"who","command":["/bin/sh","-c","id -un; pwd"],"request":{"cluster":"slurm"}}'
JA=$JOB
TOKEN=$TB submit '{"name":"who","command":["/bin/sh","-c","id -un; pwd"],"request":{"cluster":"slurm"}}'
JB=$JOB
wait_for '[ "$(field "$JA" .state)/$(TOKEN=$TB field "$JB" .state)" = completed/completed ]' 60
t_is "$(field "$JA" .state)/$(TOKEN=$TB field "$JB" .state)" completed/completed "both jobs completed"
t_is "$(field "$JA" .stdout)" "$T/home/$ALICE/loom-$JA.out" \
    "alice's job writes loom-ID.out in her home"
t_is "$(cat "$T/home/$ALICE/loom-$JA.out" 2>&1 | paste -sd' ')" "$ALICE $T/home/$ALICE" \
    "alice's job ran as $ALICE, in her home"
t_is "$(cat "$T/home/$BOB/loom-$JB.out" 2>&1 | paste -sd' ')" "$BOB $T/home/$BOB" \
    "bob's job ran as $BOB, in his home"
NA=$(field "$JA" .native_id)
NB=$(TOKEN=$TB field "$JB" .native_id)
t_is "$(squeue -h -t all -u "$ALICE" -o '%i %u %k')" "$NA $ALICE loom:$JA" \
    "squeue -u $ALICE lists alice's job, and only it, as hers"
t_is "$(squeue -h -t all -u "$BOB" -o '%i %u %k')" "$NB $BOB loom:$JB" \
    "squeue -u $BOB lists bob's job as his"
t_is "$(stat -c '%U %a' "$T/state/clusters/slurm/jobs/$JA/job.sh")" \
    "$LOOM_SERVICE_USER 700" "the job file Loom wrote is loomd's alone (mode 0700)"

# ---- her cancel, suspend and resume reach her job in Slurm --------------------------
TOKEN=$TA submit '{"name":"long","command":["sleep","300"],"request":{"cluster":"slurm"}}'
JL=$JOB
wait_for '[ "$(field "$JL" .state)" = running ]' 30
NL=$(field "$JL" .native_id)
t_is "$(sq "$NL" '%T %u')" "RUNNING $ALICE" "a long job of alice's runs in Slurm as $ALICE"
api POST "/v1/jobs/$JL/suspend" >/dev/null
t_is "$STATUS" 202 "alice suspends it through Loom"
wait_for '[ "$(sq "$NL" %T)" = SUSPENDED ]' 30
t_is "$(sq "$NL" %T)" SUSPENDED "Slurm suspended it"
wait_for '[ "$(field "$JL" .state)" = suspended ]' 30
t_is "$(field "$JL" .state)" suspended "Loom shows it suspended"
api POST "/v1/jobs/$JL/resume" >/dev/null
t_is "$STATUS" 202 "alice resumes it through Loom"
wait_for '[ "$(sq "$NL" %T)" = RUNNING ]' 30
t_is "$(sq "$NL" %T)" RUNNING "resumed through Loom, it runs again in Slurm"
api DELETE "/v1/jobs/$JL" >/dev/null
t_is "$STATUS" 202 "alice cancels it through Loom"
wait_for '[ "$(sq "$NL" %T)" = CANCELLED ]' 30
t_is "$(sq "$NL" %T)" CANCELLED "Slurm cancelled it"
wait_for '[ "$(field "$JL" .state)" = cancelled ]' 30
t_is "$(field "$JL" .state)" cancelled "Loom shows it cancelled"

# ---- hold and release of a job she submitted to Slurm herself ------------------------
NAT=$(cd "$T/home/$ALICE" && setpriv --reuid="$ALICE" --regid="$ALICE" \
    --init-groups -- sbatch --parsable --begin=now+3600 -J hers -o /dev/null \
    --wrap true 2>&1)
t_like "$NAT" '^[0-9]+$' "alice submits a job with sbatch herself"
t_is "$(sq "$NAT" %u)" "$ALICE" "... which is hers in Slurm"
find_native() {
    api GET "/v1/jobs?cluster=slurm&state=pending" >/dev/null
    JN=$(py "[j['id'] for j in d['items'] if j['native_id'] == '$NAT'][0]" "$BODY" 2>/dev/null)
    [ -n "$JN" ]
}
wait_for find_native 30
t_is "$(field "$JN" .source)/$(field "$JN" .owner)" "cluster/$ALICE" \
    "Loom shows it, owned by $ALICE"
api POST "/v1/jobs/$JN/hold" >/dev/null
t_is "$STATUS" 202 "alice holds it through Loom"
prio() { scontrol show job -o "$NAT" | grep -o ' Priority=[0-9]*' | cut -d= -f2; }
wait_for '[ "$(prio)" = 0 ]' 30
t_is "$(prio)" 0 "Slurm holds it (priority 0): loomd's account may, as the SlurmUser"
api POST "/v1/jobs/$JN/release" >/dev/null
wait_for '[ "$(prio)" != 0 ]' 30
t_ok $? "released through Loom, Slurm no longer holds it (priority $(prio))"
api DELETE "/v1/jobs/$JN" >/dev/null
wait_for '[ "$(sq "$NAT" %T)" = CANCELLED ]' 30
t_is "$(sq "$NAT" %T)" CANCELLED "cancelled through Loom"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
