#!/usr/bin/env bash
# 6004-held-for-loom.t - native jobs that a real Slurm and a real Grid Engine
# hold for Loom (hold_for_loom = yes): a job submitted held (sbatch -H,
# qsub -h) appears pending in Loom's queue with its size, Loom's scheduler
# places it like its own, the cluster releases it onto the nodes Loom chose,
# and it runs and completes there. Without the key (3002) such jobs stay
# held for their users.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

slurm_available || t_bail "no Slurm here: $SLURM_WHY"
ge_available || t_bail "no Grid Engine here: $GE_WHY"
slurm_start 4 || t_bail "Slurm did not start"
ge_start 1 || t_bail "Grid Engine did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[scheduler]
backfill = easy
interval_s = 1
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
hold_for_loom = yes
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
hold_for_loom = yes
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"

# loom_id_of NATIVE CLUSTER: the Loom id of a cluster's job, or "".
loom_id_of() {
    api GET "/v1/jobs?cluster=$2" >/dev/null
    py '" ".join(j["id"] for j in d["items"] if j["native_id"] == "'"$1"'")' "$BODY"
}
ge_hosts() {
    qstat -g t -u '*' 2>/dev/null | awk -v j="$1" '$1 == j && $8 ~ /@/ {
        sub(/^[^@]*@/, "", $8); print $8 }' | sort -u | paste -sd,
}
mkdir -p "$T/native"

# ---- Slurm: sbatch -H ------------------------------------------------------------
NS=$(sbatch --parsable -H -N 1 -c 2 -t 5 -J held-s -o "$T/native/s.out" \
    --wrap 'echo ran on $SLURMD_NODENAME; sleep 2')
t_like "$NS" '^[0-9]+$' "sbatch -H: a job its user holds ($NS)"
wait_for '[ -n "$(loom_id_of "$NS" slurm)" ]' 30
JS=$(loom_id_of "$NS" slurm)
t_like "$JS" '^[0-9]+$' "it appears in /v1/jobs (job $JS)"
job "$JS"
t_is "$(jget "$BODY" .source)/$(jget "$BODY" .held_for_loom)/$(jget "$BODY" .request.cpus_per_node)/$(jget "$BODY" .request.walltime_s)/$(jget "$BODY" .request.cluster)" \
    "cluster/true/2/300/slurm" \
    "held for Loom: source cluster, its size from Slurm (2 cpus, 5 min), pinned to its cluster"
wait_for '[ "$(field "$JS" .state)" = completed ]' 60
job "$JS"
t_is "$(jget "$BODY" .state)" completed "Loom started it and it completed" ||
    t_diag "$BODY" "squeue: $(squeue -h -j "$NS" -o '%t %r %N' 2>&1)"
NODE=$(jget "$BODY" .nodes.0)
t_like "$(cat "$T/native/s.out" 2>/dev/null)" "^ran on $NODE\$" \
    "it ran on the node Loom chose ($NODE)"
t_like "$(jget "$BODY" .start_time)" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$' \
    "its start time is recorded"
t_like "$(cat "$T/loomd.log")" "native job $NS held for Loom" \
    "the log says the held job was taken into Loom's queue"

# Two held jobs that fill the cluster's cpus twice: Loom runs them two
# waves, never over-committing (each asks 4 nodes x 2 cpus: all of Slurm).
# Each runs until the test lets it end (the file go.a or go.b; 50 s at most).
held_job() {
    sbatch --parsable -H -N 4 -c 2 -t 5 -J "held-$1" -o /dev/null \
        --wrap "i=0; while [ ! -e $T/native/go.$1 ] && [ \$i -lt 250 ]; do sleep 0.2; i=\$((i + 1)); done"
}
NA=$(held_job a)
NB=$(held_job b)
wait_for '[ -n "$(loom_id_of "$NA" slurm)" ] && [ -n "$(loom_id_of "$NB" slurm)" ]' 30
JA=$(loom_id_of "$NA" slurm)
JB=$(loom_id_of "$NB" slurm)
# ab: "STATE-A STATE-B"; WHY: the reason of a pending one.
ab() {
    job "$JA"
    AB=$(jget "$BODY" .state) WHY=$(jget "$BODY" .reason)
    job "$JB"
    AB="$AB $(jget "$BODY" .state)"
    [ "${AB#* }" = pending ] && WHY=$(jget "$BODY" .reason)
    [[ $AB == *running* ]]
}
wait_for 'ab' 60
case $AB in
"running pending") FIRST=a SECOND=b ;;
"pending running") FIRST=b SECOND=a ;;
*) FIRST= SECOND= ;;
esac
t_is "$AB" "$([ "$FIRST" = b ] && echo "pending running" || echo "running pending")" \
    "two whole-cluster held jobs: one runs, the other waits ($AB)"
wait_for 'ab; [ "$WHY" != null ]' 30
t_is "$WHY" "waiting for resources" "... saying why it waits"
touch "$T/native/go.$FIRST"
WANT=$([ "$FIRST" = b ] && echo "running completed" || echo "completed running")
wait_for 'ab; [ "$AB" = "$WANT" ]' 60
t_is "$AB" "$WANT" "... once the first completed, the second runs"
J1=$JA J2=$JB
[ "$FIRST" = b ] && J1=$JB J2=$JA
t_ok "$(e1=$(epoch "$(field "$J1" .end_time)"); s2=$(epoch "$(field "$J2" .start_time)")
    [ "$e1" != - ] && [ "$s2" != - ] && ((s2 >= e1)) && echo 0 || echo 1)" \
    "... it started no earlier than the first ended: never both running"
touch "$T/native/go.$SECOND"
wait_for 'ab; [ "$AB" = "completed completed" ]' 60
t_is "$AB" "completed completed" "... and completes"

# ---- Grid Engine: qsub -h -----------------------------------------------------------
printf '#!/bin/sh\necho ran; sleep 3\n' >"$T/native/job.sh"
NG=$(cd "$T/native" && qsub -terse -h -N held-g -o "$T/native/g.out" -e /dev/null job.sh 2>&1)
t_like "$NG" '^[0-9]+$' "qsub -h: a job its user holds ($NG)"
wait_for '[ -n "$(loom_id_of "$NG" ge)" ]' 30
JG=$(loom_id_of "$NG" ge)
t_is "$(field "$JG" .held_for_loom)/$(field "$JG" .request.cpus_per_node)/$(field "$JG" .request.cluster)" \
    "true/1/ge" "it appears held for Loom, 1 slot, pinned to ge"
wait_for '[ "$(field "$JG" .state)" = running ]' 60
job "$JG"
GNODE=$(jget "$BODY" .nodes.0)
t_is "$(ge_hosts "$NG")" "$GNODE" "Grid Engine runs it in the host Loom chose ($GNODE)" ||
    t_diag "qstat: $(qstat -u '*' 2>&1)"
wait_for '[ "$(field "$JG" .state)" = completed ]' 60
t_is "$(field "$JG" .state)" completed "and it completes"
t_is "$(cat "$T/native/g.out" 2>/dev/null)" ran "its output is there"

loomd_stop
t_is "$?" 0 "loomd stops with status 0"
t_done
