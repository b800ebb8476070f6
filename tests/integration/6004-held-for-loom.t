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

slurm_available || t_bail "no Slurm: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
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
wait_for '[ -n "$(loom_id_of "$NS" slurm)" ]' 20
JS=$(loom_id_of "$NS" slurm)
t_like "$JS" '^[0-9]+$' "it appears in /v1/jobs (job $JS)"
job "$JS"
t_is "$(jget "$BODY" .source)/$(jget "$BODY" .held_for_loom)/$(jget "$BODY" .request.cpus_per_node)/$(jget "$BODY" .request.walltime_s)/$(jget "$BODY" .request.cluster)" \
    "cluster/true/2/300/slurm" \
    "held for Loom: source cluster, its size from Slurm (2 cpus, 5 min), pinned to its cluster"
wait_for '[ "$(field "$JS" .state)" = completed ]' 40
job "$JS"
t_is "$(jget "$BODY" .state)" completed "Loom started it and it completed" ||
    t_diag "$BODY" "squeue: $(squeue -h -j "$NS" -o '%t %r %N' 2>&1)"
NODE=$(jget "$BODY" .nodes.0)
t_like "$(cat "$T/native/s.out" 2>/dev/null)" "^ran on $NODE\$" \
    "it ran on the node Loom chose ($NODE)"
t_like "$(jget "$BODY" .start_time)" '^20' "its start time is recorded"
t_like "$(cat "$T/loomd.log")" "native job $NS held for Loom" \
    "the log says the held job was taken into Loom's queue"

# Two held jobs that fill the cluster's cpus twice: Loom runs them two
# waves, never over-committing (each asks 4 nodes x 2 cpus: all of Slurm).
NA=$(sbatch --parsable -H -N 4 -c 2 -t 5 -J held-a -o /dev/null --wrap 'sleep 3')
NB=$(sbatch --parsable -H -N 4 -c 2 -t 5 -J held-b -o /dev/null --wrap 'sleep 3')
wait_for '[ -n "$(loom_id_of "$NA" slurm)" ] && [ -n "$(loom_id_of "$NB" slurm)" ]' 20
JA=$(loom_id_of "$NA" slurm)
JB=$(loom_id_of "$NB" slurm)
both=0
for _ in $(seq 1 80); do
    a=$(field "$JA" .state)
    b=$(field "$JB" .state)
    [ "$a" = running ] && [ "$b" = running ] && both=1
    [ "$a" = completed ] && [ "$b" = completed ] && break
    sleep 0.25
done
t_is "$(field "$JA" .state)/$(field "$JB" .state)" completed/completed \
    "two whole-cluster held jobs both complete"
t_is "$both" 0 "... one after the other, never both running"
t_like "$(field "$JB" .planned_start)$(field "$JB" .reason)" '.' \
    "the second one showed why it waited"

# ---- Grid Engine: qsub -h -----------------------------------------------------------
printf '#!/bin/sh\necho ran; sleep 3\n' >"$T/native/job.sh"
NG=$(cd "$T/native" && qsub -terse -h -N held-g -o "$T/native/g.out" -e /dev/null job.sh 2>&1)
t_like "$NG" '^[0-9]+$' "qsub -h: a job its user holds ($NG)"
wait_for '[ -n "$(loom_id_of "$NG" ge)" ]' 20
JG=$(loom_id_of "$NG" ge)
t_is "$(field "$JG" .held_for_loom)/$(field "$JG" .request.cpus_per_node)/$(field "$JG" .request.cluster)" \
    "true/1/ge" "it appears held for Loom, 1 slot, pinned to ge"
wait_for '[ "$(field "$JG" .state)" = running ]' 30
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
