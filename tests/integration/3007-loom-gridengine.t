#!/usr/bin/env bash
# 3007-loom-gridengine.t - loomd A federates, through loomd B (adaptor
# loom), a real Grid Engine cell that B drives with its gridengine pack:
# a job of A pinned to B's ge cluster and started by hand on the cell's
# second exec host runs there, in Grid Engine, as its account, and its
# exit code comes back to A; a job placed by A's scheduler is cancelled
# through A and leaves Grid Engine.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"

# ge_job ID: "STATE OWNER" of the job in qstat ("" once it is gone).
ge_job() {
    qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j { print $5, $4; exit }'
}

ge_available || t_bail "no Grid Engine: $GE_WHY"
ge_start 1 || t_bail "Grid Engine did not start"
read -r H N1 <<<"$GE_NODES"
t_account ACC fedge
pg_start || t_bail "no PostgreSQL"

accounts_default </dev/null
inner_conf <<EOF || t_bail "cannot write B's configuration"
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF
printf 'LOOM admin %s\nLOOM %s %s\n' "$T_USER" "$ACC" "$ACC" >"$BD/accounts"
inner_start || t_bail "loomd B did not start"
inner_tokens "$ACC" || t_bail "no tokens of B"

map_account "$ACC" "$ACC"
loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2
[cluster bge]
adaptor = loom
url = $B_URL
cluster = ge
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.5
EOF
loomd_start || t_bail "loomd A did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)

wait_for 'cluster_state bge; [ "$STATE" = up ]' 60
t_is "$STATE" up "B's Grid Engine cluster is up in A"
api GET '/v1/nodes?cluster=bge' >/dev/null
t_is "$(py '" ".join(sorted(n["name"] for n in d["items"]))' "$BODY")" \
    "$(printf '%s\n' "$H" "$N1" | sort | paste -sd' ')" \
    "A lists the cell's exec hosts as its nodes"

# ---- on the host chosen, as its account ------------------------------------------
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
TOKEN=$USER_TOKEN submit '{"name": "who", "command": ["/bin/sh", "-c",
    "id -un; hostname; exit 5"], "request": {"cluster": "bge",
    "walltime_s": 300}}' || t_bail "no job"
J1=$JOB
api POST "/v1/jobs/$J1/start" '{"nodes": ["bge/'"$N1"'"]}' >/dev/null
t_is "$STATUS" 202 "job $J1 started by hand on bge/$N1"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
wait_for '[ "$(job_state "$J1")" = failed ]' 90
t_is "$(job_state "$J1")/$(field "$J1" .exit_code)" failed/5 \
    "it ended in A with its exit code, 5"
t_is "$(field "$J1" .nodes)" "[\"$N1\"]" "on $N1 in A's record"
NB=$(field "$J1" .native_id)
bapi GET "/v1/jobs/$NB" >/dev/null
NG=$(jget "$BODY" .native_id)
t_like "$NG" '^[0-9]+$' "B's job $NB is Grid Engine job $NG"
t_is "$(jget "$BODY" .account)" "$ACC" "B ran it as $ACC"
t_is "$(qacct -j "$NG" 2>/dev/null | awk '$1 == "owner" { print $2 }')" \
    "$ACC" "qacct: Grid Engine ran job $NG as $ACC"
t_is "$(qacct -j "$NG" 2>/dev/null | awk '$1 == "hostname" { print $2 }')" \
    "$N1" "qacct: on $N1, the host A chose"
t_is "$(head -n 1 "$T/home/$ACC/loom-$J1.out" 2>/dev/null)" "$ACC" \
    "its output, named for A's id: it ran as $ACC"

# ---- cancelled through A --------------------------------------------------------
TOKEN=$USER_TOKEN submit '{"name": "long", "command": ["sleep", "300"],
    "request": {"cluster": "bge", "walltime_s": 600}}' || t_bail "no job"
J2=$JOB
wait_for '[ "$(job_state "$J2")" = running ]' 90
t_is "$(job_state "$J2")" running "job $J2 placed by A runs"
bapi GET "/v1/jobs/$(field "$J2" .native_id)" >/dev/null
NG2=$(jget "$BODY" .native_id)
t_is "$(ge_job "$NG2")" "r $ACC" "Grid Engine runs it (job $NG2) as $ACC"
TOKEN=$USER_TOKEN api DELETE "/v1/jobs/$J2" >/dev/null
t_is "$STATUS" 202 "cancel through A: 202"
ge_wait_job_gone "$NG2" 60
t_is "$(ge_job "$NG2")" "" "the job left Grid Engine"
wait_for '[ "$(job_state "$J2")" = cancelled ]' 60
t_is "$(job_state "$J2")" cancelled "A shows it cancelled"

t_done
