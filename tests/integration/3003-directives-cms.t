#!/usr/bin/env bash
# 3003-directives-cms.t - job scripts with directives on the real cluster
# systems, through one loomd: a #$ script runs on Slurm and a #SBATCH
# script on Grid Engine, each with its directives applied through Loom's
# request (squeue and qstat show them in the CMS's own terms); and a
# script whose directives loomctl's options override runs as Loom chose,
# the CMS not applying the script's own lines again (they reach it as
# #LOOM-SBATCH and #LOOM-$). A script's output file and working directory
# (#SBATCH -o and --chdir on Slurm, #$ -o and -cwd on Grid Engine) are
# where its directives say, written by the job's account, dirio-XXXXXX,
# which this test makes. A job that loomctl export writes out as a Slurm
# and as a Grid Engine script runs on each with the same working
# directory, output and error files and environment; and one with a
# priority, no requeue, a hold and a dependency keeps all four there.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
slurm_start 2 || t_bail "Slurm did not start"
ge_start 0 || t_bail "Grid Engine did not start"
t_account USR dirio || t_bail "cannot make an account"
UH=$T/home/$USR
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
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
# loomctl submit sends the directory it runs in: one $T_USER, as whom the
# jobs run, may enter
cd "$T/home/$T_USER" || t_bail "cannot enter $T/home/$T_USER"
admin_token || t_bail "no token"

# ctl ARGS...: loomctl; OUT, ERR, RC.
ctl() {
    loomctl "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
# job_file ID CLUSTER: the script the cluster system was given.
job_file() {
    cat "$T/state/clusters/$2/jobs/$1/job.sh" 2>/dev/null
}
# ge_job NATIVE FIELD: the value of FIELD in qstat -j (e.g. "hard
# resource_list:"), "" when it has none.
ge_job() {
    qstat -j "$1" 2>/dev/null | awk -v f="$2" 'index($0, f) == 1 {
        sub(/^[^:]*:[ \t]*/, ""); print; exit }'
}

# loomctl sends the directory it runs in as the job's submit_dir, where a
# #SBATCH script works, as sbatch's do: the jobs' account's home, where it
# may write (a #$ script works there anyway, as Grid Engine's do)
cd "$T/home/$T_USER" || t_bail "cannot enter the home of $T_USER"

# ---- a #$ script on Slurm ------------------------------------------------------
cat >"$T/ge.sh" <<'EOF'
#!/bin/sh
#$ -N getest
#$ -pe smp 2
#$ -l h_rt=0:05:00
echo "getest on $SLURMD_NODENAME with $SLURM_CPUS_PER_TASK cpus"
EOF
ctl submit --cluster slurm "$T/ge.sh"
t_is "$RC" 0 "loomctl submit of a #\$ script to Slurm" || t_diag "$ERR"
J1=$OUT
wait_for '[ "$(field "$J1" .state)" = completed ]' 60
job "$J1"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .name)/$(jget "$BODY" .request.cpus_per_node)/$(jget "$BODY" .request.walltime_s)" \
    "completed/getest/2/300" "it completes: name getest, 2 cpus, 300 s from its directives"
N1=$(jget "$BODY" .native_id)
t_is "$(squeue -h -t all -j "$N1" -o '%j|%C|%l' 2>/dev/null)" "getest|2|5:00" \
    "squeue: name getest, 2 cpus, time limit 5:00"
t_like "$(cat "$(jget "$BODY" .stdout)" 2>/dev/null)" "^getest on n[0-9]+ with 2 cpus$" \
    "... and the job saw them"

# ---- a #SBATCH script on Grid Engine ------------------------------------------------
cat >"$T/sb.sh" <<'EOF'
#!/bin/sh
#SBATCH --job-name=sbtest
#SBATCH --cpus-per-task=2
#SBATCH --time=00:05:00
echo "sbtest in $NSLOTS slots"
sleep 30
EOF
ctl submit --cluster ge "$T/sb.sh"
t_is "$RC" 0 "loomctl submit of a #SBATCH script to Grid Engine" || t_diag "$ERR"
J2=$OUT
wait_for '[ "$(field "$J2" .state)" = running ]' 60
job "$J2"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .name)/$(jget "$BODY" .request.cpus_per_node)/$(jget "$BODY" .request.walltime_s)" \
    "running/sbtest/2/300" "it runs: name sbtest, 2 cpus, 300 s from its directives"
N2=$(jget "$BODY" .native_id)
t_like "$(ge_job "$N2" "hard resource_list:")" "(^|,)h_rt=300(,|$)" \
    "qstat -j: h_rt=300"
t_like "$(ge_job "$N2" "parallel environment:")" "^smp range: 2$" \
    "qstat -j: parallel environment smp, 2 slots"
t_like "$(ge_job "$N2" "context:")" "loom_name=sbtest" \
    "qstat -j: the Loom name in its context"
t_like "$(job_file "$J2" ge)" $'\n#LOOM-SBATCH --job-name=sbtest\n' \
    "Grid Engine got the script with its directives neutralised"
wait_for '[ "$(field "$J2" .state)" = completed ]' 90
t_is "$(field "$J2" .state)" completed "... and it completes"
t_is "$(head -n 1 "$(field "$J2" .stdout)" 2>/dev/null)" "sbtest in 2 slots" \
    "... in 2 slots"

# ---- options win; the CMS does not apply the script's lines again -------------------
cat >"$T/over.sh" <<'EOF'
#!/bin/sh
#SBATCH --job-name=fromscript
#SBATCH --nodes=2
#SBATCH --time=10
sleep 60
EOF
ctl submit --cluster slurm --nodes 1 --time 3 "$T/over.sh"
J3=$OUT
wait_for '[ "$(field "$J3" .state)" = running ]' 60
N3=$(field "$J3" .native_id)
t_is "$(squeue -h -j "$N3" -o '%j|%D|%l' 2>/dev/null)" "fromscript|1|3:00" \
    "squeue: 1 node and 3:00 as loomctl said, not the script's 2 and 10:00"
t_like "$(job_file "$J3" slurm)" $'\n#LOOM-SBATCH --nodes=2\n#LOOM-SBATCH --time=10\n' \
    "sbatch got the script's lines as #LOOM-SBATCH"
ctl cancel "$J3"
cat >"$T/over-ge.sh" <<'EOF'
#!/bin/sh
#$ -pe smp 2
#$ -l h_rt=600
sleep 60
EOF
ctl submit --cluster ge --cpus-per-node 1 --time 2 "$T/over-ge.sh"
J4=$OUT
wait_for '[ "$(field "$J4" .state)" = running ]' 60
N4=$(field "$J4" .native_id)
t_like "$(ge_job "$N4" "hard resource_list:")" "(^|,)h_rt=120(,|$)" \
    "qstat -j: h_rt=120 as loomctl said, not the script's 600"
t_is "$(ge_job "$N4" "parallel environment:")" "" \
    "qstat -j: no parallel environment (1 cpu), not the script's -pe smp 2"
t_like "$(job_file "$J4" ge)" $'\n#LOOM-\\$ -pe smp 2\n#LOOM-\\$ -l h_rt=600\n' \
    "qsub got the script's lines as #LOOM-\$"
ctl cancel "$J4"
wait_for '[ "$(field "$J3" .state)" = cancelled ] && [ "$(field "$J4" .state)" = cancelled ]' 60
t_is "$(field "$J3" .state)/$(field "$J4" .state)" cancelled/cancelled \
    "both are cancelled"

# ---- output files and working directories, as the job's account ---------------------
install -d -m 0755 -o "$USR" -g "$USR" "$UH/w" "$UH/w/sub" || t_bail "cannot make $UH/w"
(umask 077 && token_for "$USR" user >"$T/dirio.token") || t_bail "no token for $USR"
# ctl_in DIR ARGS...: loomctl as $USR, run in DIR; OUT, ERR, RC.
ctl_in() {
    (cd "$1" && shift && "$LOOM_TOP_BUILDDIR/loomctl" --url "$LOOM_URL" \
        --token-file "$T/dirio.token" "$@") >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
cat >"$UH/w/sb-io.sh" <<'EOF'
#!/bin/sh
#SBATCH -o myout-%j.txt
#SBATCH --chdir=sub
id -un
pwd
EOF
ctl_in "$UH/w" submit --cluster slurm sb-io.sh
t_is "$RC" 0 "loomctl submit to Slurm of a script with #SBATCH -o and --chdir" || t_diag "$ERR"
J5=$OUT
wait_for '[ "$(field "$J5" .state)" = completed ]' 60
t_is "$(field "$J5" .state)/$(field "$J5" .workdir)" "completed/$UH/w/sub" \
    "it completes, in sub/ of the directory loomctl ran in"
t_is "$(stat -c %U "$UH/w/sub/myout-$J5.txt" 2>&1)" "$USR" \
    "myout-$J5.txt is in sub/, owned by $USR"
t_is "$(paste -sd' ' "$UH/w/sub/myout-$J5.txt" 2>&1)" "$USR $UH/w/sub" \
    "... and says the job ran as $USR in sub/"
cat >"$UH/w/ge-io.sh" <<'EOF'
#!/bin/sh
#$ -o ge-$JOB_ID.out
#$ -cwd
id -un
pwd
EOF
ctl_in "$UH/w" submit --cluster ge ge-io.sh
t_is "$RC" 0 "loomctl submit to Grid Engine of a script with #\$ -o and -cwd" || t_diag "$ERR"
J6=$OUT
wait_for '[ "$(field "$J6" .state)" = completed ]' 90
t_is "$(field "$J6" .state)/$(field "$J6" .workdir)/$(field "$J6" .output)" \
    "completed/$UH/w/ge-%j.out" \
    "it completes, in the directory loomctl ran in (-cwd), \$JOB_ID as Loom's %j"
t_is "$(stat -c %U "$UH/w/ge-$J6.out" 2>&1)" "$USR" \
    "ge-$J6.out is there, owned by $USR"
t_is "$(paste -sd' ' "$UH/w/ge-$J6.out" 2>&1)" "$USR $UH/w" \
    "... and says the job ran as $USR there"

# ---- loomctl export, then submit: the same files and env on each system -----------
# files ID: "workdir output error env" of a job.
files() {
    job "$1"
    py '"%s %s %s %s" % (d["workdir"], d["output"], d["error"],
        json.dumps(d["env"], sort_keys=True))' "$BODY"
}
ctl_in "$UH/w" submit --cluster slurm --chdir sub --output 'rt-%j.out' \
    --error 'rt-%j.err' --env ROUND="it's back" -- \
    /bin/sh -c 'echo "[$ROUND] $(pwd)"; echo to-stderr >&2'
t_is "$RC" 0 "a job with a working directory, output, error and env" || t_diag "$ERR"
RT=$OUT
t_is "$(files "$RT")" "$UH/w/sub rt-%j.out rt-%j.err {\"ROUND\": \"it's back\"}" \
    "... as asked"
for fmt in slurm gridengine; do
    cl=$([ $fmt = slurm ] && echo slurm || echo ge)
    ctl_in "$UH/w" export --format $fmt "$RT"
    t_is "$RC" 0 "export --format $fmt" || t_diag "$ERR"
    printf '%s\n' "$OUT" >"$T/rt-$fmt.sh"
    chmod 0644 "$T/rt-$fmt.sh"
    ctl_in "$UH/w" submit --cluster $cl "$T/rt-$fmt.sh"
    t_is "$RC" 0 "... submitted to $cl" || { t_diag "$ERR"; cat "$T/rt-$fmt.sh"; }
    J=$OUT
    wait_for '[ "$(field "$J" .state)" = completed ]' 90
    t_is "$(field "$J" .state)/$(files "$J")" "completed/$(files "$RT")" \
        "... it completes on $cl, with the same directory, files and env"
    t_is "$(cat "$UH/w/sub/rt-$J.out" 2>&1)" "[it's back] $UH/w/sub" \
        "... its output file in sub/ says the variable and the directory"
    t_is "$(cat "$UH/w/sub/rt-$J.err" 2>&1)" "to-stderr" \
        "... its error file has its error stream"
    t_is "$(stat -c %U "$UH/w/sub/rt-$J.out" 2>&1)" "$USR" \
        "... written by $USR"
done

# ---- export, then submit: how the job is scheduled ----------------------------------------
# A held job of priority -5, not requeued, waiting for another (held too),
# exported and submitted to each system: the same four; released, each
# waits for that job, then runs there once it has ended.
# sched ID: "priority requeue state dependency" of a job.
sched() {
    job "$1"
    py '"%s %s %s %s" % (d["priority"], d["requeue"], d["state"], d["dependency"])' "$BODY"
}
ctl_in "$UH/w" submit --cluster slurm --hold -- /bin/true
DEP=$OUT
printf '#!/bin/sh\n#SBATCH --no-requeue\necho scheduled\n' >"$T/sch.sh"
chmod 0644 "$T/sch.sh"
ctl_in "$UH/w" submit --cluster slurm --priority -5 --hold \
    --dependency "afterany:$DEP" --chdir sub --output 'sch-%j.out' "$T/sch.sh"
t_is "$RC" 0 "a held job of priority -5, not requeued, waiting for job $DEP" || t_diag "$ERR"
SCH=$OUT
t_is "$(sched "$SCH")" "-5 False held afterany:$DEP" "... as asked"
EXP=
for fmt in slurm gridengine; do
    cl=$([ $fmt = slurm ] && echo slurm || echo ge)
    ctl_in "$UH/w" export --format $fmt "$SCH"
    t_is "$RC" 0 "export --format $fmt" || t_diag "$ERR"
    printf '%s\n' "$OUT" >"$T/sch-$fmt.sh"
    chmod 0644 "$T/sch-$fmt.sh"
    ctl_in "$UH/w" submit --cluster $cl "$T/sch-$fmt.sh"
    t_is "$RC" 0 "... submitted to $cl" || { t_diag "$ERR"; cat "$T/sch-$fmt.sh"; }
    t_is "$(sched "$OUT")" "$(sched "$SCH")" \
        "... the same priority, requeue, hold and dependency on $cl"
    EXP="$EXP $OUT"
done
ctl_in "$UH/w" release $EXP
t_is "$RC" 0 "both released" || t_diag "$ERR"
for J in $EXP; do
    wait_for '[ "$(field "$J" .state)" = pending ]' 30
    t_like "$(field "$J" .state)/$(field "$J" .reason)" "^pending/waiting for job $DEP" \
        "job $J waits for job $DEP"
done
ctl_in "$UH/w" release "$DEP"
for J in $EXP; do
    wait_for '[ "$(field "$J" .state)" = completed ]' 90
    t_is "$(field "$J" .state)/$(field "$J" .cluster)/$(cat "$UH/w/sub/sch-$J.out" 2>&1)" \
        "completed/$(field "$J" .request.cluster)/scheduled" \
        "job $J ran on its cluster once job $DEP had ended, its output where it said"
done
ctl_in "$UH/w" cancel "$SCH"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done

