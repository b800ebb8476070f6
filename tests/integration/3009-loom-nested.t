#!/usr/bin/env bash
# 3009-loom-nested.t - the nested fabric end to end: loomd A federates
# loomd B (adaptor loom) and a real Slurm directly (adaptor slurmrest); B
# federates a real Grid Engine cell (gridengine pack) and a local cluster,
# each a section of A's own (one section, one inner cluster). A job of A
# pinned to B's Grid Engine cluster runs in Grid Engine as its account
# (qacct); one cancelled through A leaves Grid Engine; a job of A's Slurm
# runs in Slurm as its account (squeue); a job of B's local cluster runs
# there. B killed, both of its clusters are unreachable in A, and a job of
# A's local cluster and one of A's Slurm are placed and completed as fast
# as with B alive (the median of three, as a ratio to the same with B up).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"

# Placing and completing a job of A's, B dead, may take at most this many
# times as long as with B alive (the medians of three): B's requests fail
# at once (connection refused) on the server thread's curl loop, so the
# ratio stays near 1; the bound leaves room for a loaded machine.
MAX_RATIO=3

# ge_job ID: "STATE OWNER" of the job in qstat ("" once it is gone; qstat
# shows 12 characters of an owner: ACC is shorter).
ge_job() {
    qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j { print $5, $4; exit }'
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
export LOOM_SLURM_JWT=1
slurm_start 2 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
ge_start 1 || t_bail "Grid Engine did not start"
read -r H N1 <<<"$GE_NODES"
t_account ACC nest
pg_start || t_bail "no PostgreSQL"

# ---- loomd B: Grid Engine and a local cluster ----------------------------------
accounts_default </dev/null
inner_conf <<EOF || t_bail "cannot write B's configuration"
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2
EOF
printf 'LOOM admin %s\nLOOM %s %s\n' "$T_USER" "$ACC" "$ACC" >"$BD/accounts"
inner_start || t_bail "loomd B did not start"
inner_tokens "$ACC" || t_bail "no tokens of B"

# ---- loomd A: B's two clusters, Slurm, a local cluster --------------------------
map_account "$ACC" "$ACC"
loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2
$(slurm_restd_section)
[cluster bge]
adaptor = loom
url = $B_URL
cluster = ge
token_file = $T/a-control.token
token_dir = $A_TOKENS
timeout_s = 2
poll_s = 0.5
[cluster blocal]
adaptor = loom
url = $B_URL
cluster = local
token_file = $T/a-control.token
token_dir = $A_TOKENS
timeout_s = 2
poll_s = 0.3
EOF
loomd_start || t_bail "loomd A did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)

for c in local slurm bge blocal; do
    wait_for 'cluster_state '$c'; [ "$STATE" = up ]' 60
    t_is "$STATE" up "cluster $c is up in A"
done
api GET '/v1/nodes?cluster=bge' >/dev/null
t_is "$(py '" ".join(sorted(n["name"] for n in d["items"]))' "$BODY")" \
    "$(printf '%s\n' "$H" "$N1" | sort | paste -sd' ')" \
    "A lists B's Grid Engine exec hosts as the nodes of bge"
api GET '/v1/nodes?cluster=slurm' >/dev/null
t_is "$(py '" ".join(sorted(n["name"] for n in d["items"]))' "$BODY")" \
    "n1 n2" "and Slurm's nodes as those of slurm"

# ---- a job pinned to B's Grid Engine ---------------------------------------------
TOKEN=$USER_TOKEN submit '{"name": "ge", "command": ["/bin/sh", "-c",
    "id -un; exit 6"], "request": {"cluster": "bge", "walltime_s": 300}}' ||
    t_bail "no job"
J1=$JOB
wait_for '[ "$(job_state "$J1")" = failed ]' 120
t_is "$(job_state "$J1")/$(field "$J1" .exit_code)" failed/6 \
    "job $J1 ended in A with its exit code from Grid Engine, 6"
NB=$(field "$J1" .native_id)
bapi GET "/v1/jobs/$NB" >/dev/null
NG=$(jget "$BODY" .native_id)
t_is "$(jget "$BODY" .cluster)" ge "it is B's job $NB, of B's cluster ge"
t_like "$NG" '^[0-9]+$' "B's job $NB is Grid Engine job $NG"
wait_for '[ -n "$(qacct -j "$NG" 2>/dev/null)" ]' 30
t_is "$(qacct -j "$NG" 2>/dev/null | awk '$1 == "owner" { print $2 }')" \
    "$ACC" "qacct: Grid Engine ran job $NG as $ACC"
t_is "$(qacct -j "$NG" 2>/dev/null | awk '$1 == "exit_status" { print $2 }')" \
    6 "qacct: with exit status 6"
t_is "$(head -n 1 "$T/home/$ACC/loom-$J1.out" 2>/dev/null)" "$ACC" \
    "its output, named for A's id: id -un says $ACC"

# ---- cancelled through A, it leaves Grid Engine --------------------------------
TOKEN=$USER_TOKEN submit '{"name": "long", "command": ["sleep", "300"],
    "request": {"cluster": "bge", "walltime_s": 600}}' || t_bail "no job"
J2=$JOB
wait_for '[ "$(job_state "$J2")" = running ]' 120
t_is "$(job_state "$J2")" running "job $J2 placed by A runs"
bapi GET "/v1/jobs/$(field "$J2" .native_id)" >/dev/null
NG2=$(jget "$BODY" .native_id)
t_is "$(ge_job "$NG2")" "r $ACC" "qstat: Grid Engine runs it (job $NG2) as $ACC"
TOKEN=$USER_TOKEN api DELETE "/v1/jobs/$J2" >/dev/null
t_is "$STATUS" 202 "cancel through A: 202"
ge_wait_job_gone "$NG2" 60
t_is "$(ge_job "$NG2")" "" "qstat: the job left Grid Engine"
wait_for '[ "$(job_state "$J2")" = cancelled ]' 60
t_is "$(job_state "$J2")" cancelled "A shows it cancelled"

# ---- a job of B's local cluster, a job of A's Slurm ------------------------------
TOKEN=$USER_TOKEN submit '{"command": ["/bin/sh", "-c", "exit 2"],
    "request": {"cluster": "blocal"}}' || t_bail "no job"
J3=$JOB
wait_for '[ "$(job_state "$J3")" = failed ]' 60
t_is "$(job_state "$J3")/$(field "$J3" .exit_code)" failed/2 \
    "job $J3 ran on B's local cluster, its exit code back in A"
bapi GET "/v1/jobs/$(field "$J3" .native_id)" >/dev/null
t_is "$(jget "$BODY" .cluster)/$(jget "$BODY" .account)" "local/$ACC" \
    "B ran it on its cluster local as $ACC"

TOKEN=$USER_TOKEN submit '{"command": ["/bin/sh", "-c", "id -un; exit 4"],
    "request": {"cluster": "slurm"}}' || t_bail "no job"
J4=$JOB
wait_for '[ "$(job_state "$J4")" = failed ]' 60
t_is "$(job_state "$J4")/$(field "$J4" .exit_code)" failed/4 \
    "job $J4 ran in Slurm, its exit code back in A"
NS=$(field "$J4" .native_id)
t_is "$(squeue -h -t all -j "$NS" -o '%u %T' 2>/dev/null)" "$ACC FAILED" \
    "squeue: Slurm ran job $NS as $ACC, and it failed"
t_is "$(head -n 1 "$T/home/$ACC/loom-$J4.out" 2>/dev/null)" "$ACC" \
    "its output says $ACC"

# ---- B killed: its clusters unreachable, A's others as fast ---------------------
# run_ms CLUSTER: ms from a job's submission to A's record of it completed.
run_ms() {
    local t0
    t0=${EPOCHREALTIME/[.,]/}
    TOKEN=$USER_TOKEN submit '{"command": ["/bin/true"],
        "request": {"cluster": "'"$1"'"}}' || return 1
    wait_for '[ "$(job_state "$JOB")" = completed ]' 60 0.05 || return 1
    echo $(((${EPOCHREALTIME/[.,]/} - t0) / 1000))
}
# median3 CLUSTER: the median of three run_ms (nothing when one failed).
median3() {
    local a b c
    a=$(run_ms "$1") && b=$(run_ms "$1") && c=$(run_ms "$1") || return 1
    printf '%s\n' "$a" "$b" "$c" | sort -n | sed -n 2p
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

UP_LOCAL=$(median3 local)
UP_SLURM=$(median3 slurm)
t_like "$UP_LOCAL/$UP_SLURM" '^[0-9]+/[0-9]+$' \
    "B alive: jobs of local and slurm complete (medians $UP_LOCAL, $UP_SLURM ms)"

inner_kill9
for c in bge blocal; do
    wait_for 'cluster_state '$c'; [ "$STATE" = unreachable ]' 60
    t_is "$STATE" unreachable "B killed: cluster $c is unreachable in A"
    t_like "$ERR" "cannot reach" "its error says B cannot be reached"
done
DOWN_LOCAL=$(median3 local)
DOWN_SLURM=$(median3 slurm)
t_like "$DOWN_LOCAL/$DOWN_SLURM" '^[0-9]+/[0-9]+$' \
    "B dead: jobs of local and slurm complete (medians $DOWN_LOCAL, $DOWN_SLURM ms)"
for c in local slurm; do
    up=UP_${c^^} down=DOWN_${c^^}
    r=$(ratio "${!down}" "${!up}")
    t_diag "cluster $c: ${!down} ms with B dead, ${!up} ms alive: ratio $r"
    t_ok "$(awk -v r="$r" -v m=$MAX_RATIO 'BEGIN { print !(r < m) }')" \
        "cluster $c: a job with B dead takes $r times as long (< $MAX_RATIO)"
done
cluster_state local
t_is "$STATE" up "A's local cluster stays up"
cluster_state slurm
t_is "$STATE" up "A's Slurm stays up"

t_done
