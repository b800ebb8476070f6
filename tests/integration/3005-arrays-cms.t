#!/usr/bin/env bash
# 3005-arrays-cms.t - arrays and dependencies across the real cluster
# systems, through one loomd: the same #SBATCH --array=1-6 script runs on
# the local executor, on Slurm and on Grid Engine, each task printing its
# index from $SLURM_ARRAY_TASK_ID and $SGE_TASK_ID; an array that names no
# cluster spreads over several; and an afterok chain Slurm -> Grid Engine
# -> Slurm runs in order. The jobs run as $T_USER, the account admin's and
# loomctl's jobs run as, and say so.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
slurm_start 2 || t_bail "Slurm did not start"
ge_start 0 || t_bail "Grid Engine did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[scheduler]
interval_s = 0.5
[cluster local]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.5
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# loomctl submit sends the directory it runs in: one $T_USER may enter
cd "$T/home/$T_USER" || t_bail "cannot enter $T/home/$T_USER"
admin_token || t_bail "no token"
t_cleanup 'touch "$T/go"'

ctl() {
    loomctl "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
# out ID: the first line of the job's standard output.
out() {
    head -n 1 "$(field "$1" .stdout)" 2>/dev/null
}
# lines ID: its standard output on one line.
lines() {
    tr '\n' ' ' <"$(field "$1" .stdout)" 2>/dev/null
}

# ---- the same script on each cluster ----------------------------------------------
cat >"$T/arr.sh" <<'EOF'
#!/bin/sh
#SBATCH --job-name=arr
#SBATCH --array=1-6
#SBATCH --time=5
echo "task $SLURM_ARRAY_TASK_ID $SGE_TASK_ID of $SLURM_ARRAY_JOB_ID as $(id -un)"
EOF
for CL in local slurm ge; do
    ctl submit --cluster "$CL" "$T/arr.sh"
    t_is "$RC" 0 "loomctl submit --cluster $CL of the #SBATCH --array=1-6 script" ||
        t_diag "$ERR"
    eval "A_$CL=\$OUT"
done
for CL in local slurm ge; do
    eval "A=\$A_$CL"
    wait_for '[ "$(job_state "$A")" = completed ]' 120
    job "$A"
    t_is "$(jget "$BODY" .state)/$(py 'd["array_counts"]["completed"]' "$BODY")" completed/6 \
        "on $CL: the array completes, its 6 tasks with it"
    got=
    for i in 1 2 3 4 5 6; do
        got="$got$(out "${A}_$i")|"
    done
    want=
    for i in 1 2 3 4 5 6; do
        want="${want}task $i $i of $A as $T_USER|"
    done
    t_is "$got" "$want" \
        "on $CL: each task printed its index from \$SLURM_ARRAY_TASK_ID and \$SGE_TASK_ID, running as $T_USER"
    t_is "$(for i in 1 2 3 4 5 6; do field "${A}_$i" .cluster; done | sort -u | tr '\n' ' ')" \
        "$CL " "on $CL: every task ran there"
done
N=$(field "${A_slurm}_2" .native_id)
t_like "$(squeue -h -t all -j "$N" -o '%j' 2>/dev/null)" "^arr$" \
    "Slurm knows task 2 as a job of its own (squeue, job $N)"

# ---- an array that names no cluster spreads ---------------------------------------
submit "{\"name\": \"spread\", \"array\": \"1-6\", \"request\": {\"walltime_s\": 300}, \"script\": \"#!/bin/sh\\ni=0; while [ ! -e $T/go ] && [ \$i -lt 600 ]; do sleep 0.2; i=\$((i+1)); done\\n\"}"
S=$JOB
wait_for '[ "$(field "$S" .array_counts.running)" = 6 ]' 120
t_is "$(field "$S" .array_counts.running)" 6 "all 6 tasks of an array without a cluster run at once"
CLS=$(for i in 1 2 3 4 5 6; do field "${S}_$i" .cluster; done | sort -u | tr '\n' ' ')
t_like "$CLS" "^[a-z]+ [a-z]+ " "... spread over more than one cluster ($CLS)"
touch "$T/go"
wait_for '[ "$(job_state "$S")" = completed ]' 120
t_is "$(job_state "$S")" completed "... and they complete"

# ---- an afterok chain: Slurm, then Grid Engine, then Slurm --------------------------
STEP='{"name": "%s", "request": {"cluster": "%s", "walltime_s": 300}, %s"script": "#!/bin/sh\\ndate +%%s%%N\\nsleep 3\\ndate +%%s%%N\\n"}'
submit "$(printf "$STEP" c1 slurm '')"
C1=$JOB
submit "$(printf "$STEP" c2 ge "\"dependency\": \"afterok:$C1\", ")"
C2=$JOB
t_is "$(jget "$BODY" .reason)" "waiting for job $C1 to complete (afterok)" \
    "the Grid Engine step waits for the Slurm one, naming it"
submit "$(printf "$STEP" c3 slurm "\"dependency\": \"afterok:$C2\", ")"
C3=$JOB
wait_for '[ "$(job_state "$C3")" = completed ]' 180
t_is "$(job_state "$C1")/$(job_state "$C2")/$(job_state "$C3")" completed/completed/completed \
    "all three steps complete"
t_is "$(field "$C1" .cluster)/$(field "$C2" .cluster)/$(field "$C3" .cluster)" slurm/ge/slurm \
    "... on Slurm, Grid Engine, Slurm"
read -r B1 E1 < <(lines "$C1")
read -r B2 E2 < <(lines "$C2")
read -r B3 E3 < <(lines "$C3")
t_ok "$([ "$B2" -ge "$E1" ] && [ "$B3" -ge "$E2" ]; echo $?)" \
    "in order: each began after the one before had ended ($B1-$E1, $B2-$E2, $B3-$E3)"
t_ok "$([ "$(epoch "$(field "$C2" .start_time)")" -ge "$(epoch "$(field "$C1" .end_time)")" ] &&
        [ "$(epoch "$(field "$C3" .start_time)")" -ge "$(epoch "$(field "$C2" .end_time)")" ]; echo $?)" \
    "... and Loom's start and end times say so"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
