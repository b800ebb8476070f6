#!/usr/bin/env bash
# 5002-gridengine-accounts.t - the Grid Engine pack submits each job as its
# own account on a real Grid Engine cell: jobs of two test accounts (alice,
# bob) run as them, in their homes, and qstat -u lists them as theirs;
# each one's own suspend, resume and cancel through Loom reach her job in
# Grid Engine, and so do hold and release of a job she submitted with
# qsub herself (loomd's account is a manager of the cell).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

ge_available || t_bail "no Grid Engine: $GE_WHY"
ge_start || t_bail "Grid Engine did not start"
t_account ALICE alice
t_account BOB bob
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
TA=$(token_for "$ALICE" user) && TB=$(token_for "$BOB" user) ||
    t_bail "no tokens"
TOKEN=$TA

# ge_job ID: "STATE OWNER" of the job in qstat ("" once it is gone).
ge_job() {
    qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j { print $5, $4; exit }'
}

api GET /v1/clusters/ge >/dev/null
t_is "$(jget "$BODY" .runs_as_user)/$(jget "$BODY" .single_account)" true/null \
    "GET /v1/clusters: the gridengine pack runs each job as its own account"

# ---- alice's and bob's jobs run as alice and bob --------------------------------
TOKEN=$TA submit '{"name":"who","command":["/bin/sh","-c","id -un; pwd"],"request":{"cluster":"ge"}}'
JA=$JOB
TOKEN=$TB submit '{"name":"who","command":["/bin/sh","-c","id -un; pwd"],"request":{"cluster":"ge"}}'
JB=$JOB
wait_for '[ "$(field "$JA" .state)/$(TOKEN=$TB field "$JB" .state)" = completed/completed ]' 60
t_is "$(field "$JA" .state)/$(TOKEN=$TB field "$JB" .state)" completed/completed "both jobs completed"
t_is "$(field "$JA" .stdout)" "$T/home/$ALICE/loom-$JA.out" \
    "alice's job writes loom-ID.out in her home"
t_is "$(cat "$T/home/$ALICE/loom-$JA.out" 2>&1 | paste -sd' ')" "$ALICE $T/home/$ALICE" \
    "alice's job ran as $ALICE, in her home"
t_is "$(cat "$T/home/$BOB/loom-$JB.out" 2>&1 | paste -sd' ')" "$BOB $T/home/$BOB" \
    "bob's job ran as $BOB, in his home"
t_is "$(qacct -j "$(field "$JA" .native_id)" 2>/dev/null | awk '$1 == "owner" { print $2 }')" \
    "$ALICE" "qacct: the owner of alice's job is $ALICE"

# ---- her suspend, resume and cancel reach her job in Grid Engine ---------------------
TOKEN=$TA submit '{"name":"long","command":["sleep","300"],"request":{"cluster":"ge"}}'
JL=$JOB
wait_for '[ "$(field "$JL" .state)" = running ]' 30
NL=$(field "$JL" .native_id)
# Loom shows a job running from Grid Engine's t (transferring to the host).
wait_for '[ "$(ge_job "$NL")" = "r $ALICE" ]' 30
t_is "$(ge_job "$NL")" "r $ALICE" "a long job of alice's runs in Grid Engine as $ALICE"
t_like "$(qstat -u "$ALICE" | awk -v j="$NL" '$1 == j { print $1 }')" "^$NL\$" \
    "qstat -u $ALICE lists it as hers"
api POST "/v1/jobs/$JL/suspend" >/dev/null
t_is "$STATUS" 202 "alice suspends it through Loom"
wait_for '[ "$(ge_job "$NL")" = "s $ALICE" ]' 30
t_is "$(ge_job "$NL")" "s $ALICE" "Grid Engine suspended it (s)"
wait_for '[ "$(field "$JL" .state)" = suspended ]' 30
t_is "$(field "$JL" .state)" suspended "Loom shows it suspended"
api POST "/v1/jobs/$JL/resume" >/dev/null
t_is "$STATUS" 202 "alice resumes it through Loom"
wait_for '[ "$(ge_job "$NL")" = "r $ALICE" ]' 30
t_is "$(ge_job "$NL")" "r $ALICE" "resumed through Loom, it runs again"
api DELETE "/v1/jobs/$JL" >/dev/null
t_is "$STATUS" 202 "alice cancels it through Loom"
wait_for '[ -z "$(ge_job "$NL")" ]' 30
t_is "$(ge_job "$NL")" "" "Grid Engine deleted it"
wait_for '[ "$(field "$JL" .state)" = cancelled ]' 30
t_is "$(field "$JL" .state)" cancelled "Loom shows it cancelled"

# ---- hold and release of a job she submitted to Grid Engine herself -----------------
AT=$(date -d '+1 hour' +%Y%m%d%H%M)
NAT=$(cd "$T/home/$ALICE" && printf 'true\n' | setpriv --reuid="$ALICE" \
    --regid="$ALICE" --init-groups -- qsub -terse -N hers -a "$AT" \
    -o /dev/null -e /dev/null 2>&1)
t_like "$NAT" '^[0-9]+$' "alice submits a job with qsub herself"
t_is "$(ge_job "$NAT")" "qw $ALICE" "... which is hers in Grid Engine, waiting"
find_native() {
    api GET "/v1/jobs?cluster=ge" >/dev/null
    JN=$(py "[j['id'] for j in d['items'] if j['native_id'] == '$NAT'][0]" "$BODY" 2>/dev/null)
    [ -n "$JN" ]
}
wait_for find_native 30
t_is "$(field "$JN" .source)/$(field "$JN" .owner)" "cluster/$ALICE" \
    "Loom shows it, owned by $ALICE"
api POST "/v1/jobs/$JN/hold" >/dev/null
t_is "$STATUS" 202 "alice holds it through Loom"
wait_for '[ "$(ge_job "$NAT")" = "hqw $ALICE" ]' 30
t_is "$(ge_job "$NAT")" "hqw $ALICE" "Grid Engine holds it (hqw)"
api POST "/v1/jobs/$JN/release" >/dev/null
wait_for '[ "$(ge_job "$NAT")" = "qw $ALICE" ]' 30
t_is "$(ge_job "$NAT")" "qw $ALICE" "released through Loom, it waits again (qw)"
api DELETE "/v1/jobs/$JN" >/dev/null
wait_for '[ -z "$(ge_job "$NAT")" ]' 30
t_is "$(ge_job "$NAT")" "" "cancelled through Loom: Grid Engine deleted it"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
