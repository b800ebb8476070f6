#!/usr/bin/env bash
# 3204-arc-ce.t - Loom behind an unmodified ARC-CE: A-REX 6.17 (Debian's
# nordugrid-arc-arex) with its own slurm back-end, first against a real
# Slurm (the baseline: the same arc.conf, certificates and mapping work),
# then with slurm_bin_path on Loom's Slurm commands and a loomd whose
# fabric is a real Grid Engine cell. In both, a job the ARC client submits
# runs as the account the CE maps the certificate to; arcstat follows it to
# Finished, arcget fetches its output, and arckill reaches a running job.
# Through Loom, the job runs in Grid Engine (qacct) as that account.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/arc.sh"

arc_available || t_bail "no ARC-CE: $ARC_WHY"
slurm_available || t_bail "no Slurm: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
t_account GRID grid || t_bail "cannot make an account"
arc_setup || t_bail "cannot set up the CE's certificates"

# hello JOBNAME: a job that says who and where it ran; long JOBNAME: one
# that runs until it is killed.
cat >"$ARC_DIR/client/hello.xrsl" <<'EOF'
&(executable="/bin/sh")(arguments="-c" "id -un; echo ran in $PWD; echo hello from the grid")
 (stdout="out.txt")(stderr="err.txt")(jobname="hello")(walltime="10 minutes")
EOF
cat >"$ARC_DIR/client/long.xrsl" <<'EOF'
&(executable="/bin/sleep")(arguments="600")(stdout="out.txt")(jobname="long")
 (walltime="20 minutes")
EOF

# submit FILE: arcsub it to our CE; JOBURL is the job's URL.
submit_arc() {
    local out
    out=$(arc arcsub -C "https://localhost:$ARC_PORT/arex" \
        -j "$ARC_DIR/client/jobs.dat" "$1" 2>&1)
    JOBURL=$(printf '%s\n' "$out" | sed -n 's/^Job submitted with jobid: //p')
    [ -n "$JOBURL" ] || t_diag "arcsub $1: $out"
}

# fetched URL DIR: arcget the job's outputs into DIR; prints out.txt.
fetched() {
    rm -rf "$2"
    arc arcget -j "$ARC_DIR/client/jobs.dat" -D "$2" "$1" >"$2.log" 2>&1 ||
        { cat "$2.log"; return 1; }
    cat "$2"/*/out.txt
}

# ---- baseline: A-REX's slurm back-end on a real Slurm ----------------------
slurm_start 2 || t_bail "Slurm did not start"
# slurm_use_sacct = no: this Slurm keeps no accounting (no slurmdbd);
# through Loom the back-end asks sacct, as it does by default.
arc_conf "$GRID" debug "lrms = slurm" "slurm_bin_path = /usr/bin" \
    "slurm_use_sacct = no" "slurm_wakeupperiod = 5"
arc_start SLURM_CONF="$SLURM_CONF" || t_bail "A-REX did not start"
OUT=$(arc arcproxy 2>&1)
t_like "$OUT" 'Proxy generation succeeded' "arcproxy makes the test user's proxy" ||
    t_bail "no proxy: $OUT"

submit_arc "$ARC_DIR/client/hello.xrsl"
S1=$JOBURL
t_like "$S1" "^https://localhost:$ARC_PORT/arex/" "arcsub: A-REX takes a job"
submit_arc "$ARC_DIR/client/long.xrsl"
S2=$JOBURL
wait_for '[ -n "$(arc_local "$S1")" ] && [ -n "$(arc_local "$S2")" ]' 120
N1=$(arc_local "$S1")
N2=$(arc_local "$S2")
t_like "$N1/$N2" '^[0-9]+/[0-9]+$' "A-REX submitted both with sbatch (Slurm jobs $N1, $N2)"
sq() { squeue -h -t all -j "$1" -o '%T %u' 2>/dev/null; }
wait_for '[ "$(sq "$N2")" = "RUNNING $GRID" ]' 120
t_is "$(sq "$N2")" "RUNNING $GRID" "the long job runs in Slurm as $GRID, the mapped account"
OUT=$(arc arckill -k -j "$ARC_DIR/client/jobs.dat" "$S2" 2>&1)
t_like "$OUT" 'successfully killed: 1' "arckill takes the kill"
wait_for '[ "$(sq "$N2")" = "CANCELLED $GRID" ]' 120
t_is "$(sq "$N2")" "CANCELLED $GRID" "arckill reached Slurm: the job is cancelled"
wait_for '[ "$(arc_state "$S1")" = Finished ]' 300 2
t_is "$(arc_state "$S1")" Finished "arcstat follows the hello job to Finished"
t_is "$(sq "$N1")" "COMPLETED $GRID" "it completed in Slurm as $GRID"
t_is "$(fetched "$S1" "$ARC_DIR/client/got1" | sed 's/ in .*/ in/' | paste -sd' ')" \
    "$GRID ran in hello from the grid" "arcget fetches its output: it ran as $GRID"
wait_for '[ "$(arc_state "$S2")" = Killed ]' 300 2
t_is "$(arc_state "$S2")" Killed "arcstat shows the long job Killed"
arc_stop

# ---- Loom: the same back-end on Loom's commands, Grid Engine behind ----------
slurm_stop
ge_start || t_bail "Grid Engine did not start"
slurmcmds_setup || t_bail "cannot set up the commands"
pg_start || t_bail "no PostgreSQL"
map_account "$GRID" "$GRID"
loomd_conf <<EOF2 || t_bail "no loom.conf"
listen_peer = unix:$PEER_SOCK
listen_peer_root_role = operator
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
api GET /v1/queues >/dev/null
GEQ=$(py '[q["name"] for q in d["items"] if q.get("cluster") == "ge"][0]' "$BODY")
t_isnt "$GEQ" "" "Loom lists the Grid Engine cell's queue ($GEQ)"
# Where the commands find loomd: an installation's /etc/loom/slurm.conf;
# here a file of the test's, named in A-REX's environment.
printf 'url = unix:%s\n' "$PEER_SOCK" >"$T/loom-slurm.conf"
chmod 0644 "$T/loom-slurm.conf"
arc_conf "$GRID" "$GEQ" "lrms = slurm" "slurm_bin_path = $SC" \
    "slurm_wakeupperiod = 5"
arc_start LOOM_SLURM_CONF="$T/loom-slurm.conf" || t_bail "A-REX did not start on Loom"

submit_arc "$ARC_DIR/client/hello.xrsl"
L1=$JOBURL
t_like "$L1" "^https://localhost:$ARC_PORT/arex/" "arcsub: A-REX takes a job for Loom"
submit_arc "$ARC_DIR/client/long.xrsl"
L2=$JOBURL
wait_for '[ -n "$(arc_local "$L1")" ] && [ -n "$(arc_local "$L2")" ]' 120
J1=$(arc_local "$L1")
J2=$(arc_local "$L2")
t_like "$J1/$J2" '^[0-9]+/[0-9]+$' "A-REX submitted both with Loom's sbatch (Loom jobs $J1, $J2)"
job "$J2"
t_is "$(py '[d["owner"], d["account"], d["source"]]' "$BODY")" \
    "[\"$GRID\", \"$GRID\", \"local\"]" "Loom knows the long job as $GRID's, by the uid that ran sbatch"
t_is "$(py '[d["name"], d["request"]["queue"], d["priority"], d["requeue"]]' "$BODY")" \
    "[\"long\", \"$GEQ\", -50, false]" \
    "ARC's #SBATCH lines: -J, -p, --nice=50 (priority -50), --no-requeue (requeue false)"
t_is "$(env -u LOOM_URL LOOM_SLURM_CONF="$T/loom-slurm.conf" "$SC/scontrol" -o \
    show job "$J2" | grep -o 'Requeue=[01]')" Requeue=0 \
    "scontrol, as root: Requeue=0"
wait_for '[ "$(field "$J2" .state)" = running ]' 120
t_is "$(field "$J2" .cluster)/$(field "$J2" .state)" ge/running "it runs on the Grid Engine cluster"
NG2=$(field "$J2" .native_id)
geq() { qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j { print $5, $4; exit }'; }
wait_for '[ "$(geq "$NG2")" = "r $GRID" ]' 60
t_is "$(geq "$NG2")" "r $GRID" "Grid Engine runs it (job $NG2) as $GRID"
OUT=$(arc arckill -k -j "$ARC_DIR/client/jobs.dat" "$L2" 2>&1)
t_like "$OUT" 'successfully killed: 1' "arckill takes the kill"
wait_for '[ "$(field "$J2" .state)" = cancelled ]' 120
t_is "$(field "$J2" .state)" cancelled "arckill reached Loom: the job is cancelled"
wait_for '[ -z "$(geq "$NG2")" ]' 60
t_is "$(geq "$NG2")" "" "... and Grid Engine deleted it"
wait_for '[ "$(arc_state "$L1")" = Finished ]' 300 2
t_is "$(arc_state "$L1")" Finished "arcstat follows the hello job to Finished"
job "$J1"
t_is "$(py '[d["state"], d["cluster"], d["owner"], d["account"]]' "$BODY")" \
    "[\"completed\", \"ge\", \"$GRID\", \"$GRID\"]" "in Loom it completed on Grid Engine as $GRID"
NG1=$(jget "$BODY" .native_id)
t_is "$(qacct -j "$NG1" 2>/dev/null | awk '$1 == "owner" { print $2 }')" "$GRID" \
    "qacct: Grid Engine ran it (job $NG1) as $GRID"
t_is "$(fetched "$L1" "$ARC_DIR/client/got2" | sed 's/ in .*/ in/' | paste -sd' ')" \
    "$GRID ran in hello from the grid" "arcget fetches its output: it ran as $GRID"
wait_for '[ "$(arc_state "$L2")" = Killed ]' 300 2
t_is "$(arc_state "$L2")" Killed "arcstat shows the long job Killed"

arc_stop

# ---- root without listen_peer_root_role: refused, saying why ---------------
loomd_stop
sed -i '/^listen_peer_root_role/d' "$T/loom.conf" && loom_owns "$T/loom.conf"
loomd_start || t_bail "loomd did not start again"
OUT=$(env -u LOOM_URL LOOM_SLURM_CONF="$T/loom-slurm.conf" "$SC/squeue" 2>&1)
t_like "$OUT" "uid 0 \(root\) may not act on the listen_peer socket: loom.conf's listen_peer_root_role is none" \
    "without listen_peer_root_role, root's squeue is refused, saying why"
t_is "$(curl -s "$LOOM_URL/metrics" | awk '/^loom_auth_denials_total\{/ &&
    /kind="peer"/ && /reason="role"/ { print $NF }')" 1 \
    "... and counted as a denial for its role"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
