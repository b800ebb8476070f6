#!/usr/bin/env bash
# 3201-slurm-commands.t - Slurm's commands over Loom (loom-slurm called
# sbatch, squeue, scancel, scontrol, sinfo, sacct, sacctmgr, srun), run as
# real accounts that loomd knows by their uid on its listen_peer socket,
# against a fabric of a local cluster and a real Slurm: the invocations
# and output formats ARC-CE, Snakemake 7.21 and Toil 5.9 use
# (docs/slurm-commands.md), checked in Loom's API for who ran what where.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
t_account ALICE alice || t_bail "cannot make an account"
t_account BOB bob || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"
AH=$T/home/$ALICE

# ---- identity: the peer's uid on the socket, nothing without a token on TCP ----
t_is "$(stat -c %a "$PEER_SOCK")" 666 "the listen_peer socket has listen_peer_mode (0666)"
t_is "$(curl -s -o /dev/null -w '%{http_code}' "$LOOM_URL/v1/jobs")" 401 \
    "on TCP a request without a token is refused (401)"
OUT=$(as_user "$ALICE" sbatch --parsable --wrap 'id -un; echo in $PWD' 2>&1)
t_like "$OUT" '^[0-9]+$' "sbatch --parsable --wrap prints the job id alone ($OUT)"
J1=$OUT
wait_for 'ended "$J1"' 60
job "$J1"
t_is "$(py '[d["state"], d["owner"], d["account"], d["source"], d["name"]]' "$BODY")" \
    "[\"completed\", \"$ALICE\", \"$ALICE\", \"local\", \"wrap\"]" \
    "the job is $ALICE's by its uid alone (owner, account), named wrap"
t_is "$(jget "$BODY" .stdout)" "$AH/slurm-$J1.out" "its output is slurm-%j.out in the directory sbatch ran in"
t_is "$(cat "$AH/slurm-$J1.out" 2>&1)" "$ALICE
in $AH" "it ran as $ALICE in that directory"

OUT=$(setpriv --reuid=54321 --regid=54321 --clear-groups -- curl -s \
    --unix-socket "$PEER_SOCK" http://loom/v1/jobs 2>&1)
t_like "$OUT" '"code":"forbidden","message":"uid 54321 has no account name on this host' \
    "a uid without a name gets 403, naming the uid"
OUT=$(curl -s --unix-socket "$PEER_SOCK" -H "Authorization: Bearer $TOKEN" \
    "http://loom/v1/jobs/$J1")
t_is "$(jget "$OUT" .account)" "$ALICE" "a token on the socket still decides (the admin sees alice's job)"
t_like "$(curl -s "$LOOM_URL/metrics" | grep '^loom_auth_verifications_total{kind="peer",result="ok"}')" ' [1-9][0-9]*$' \
    "loom_auth_verifications_total counts the peer identities"

# ---- sbatch: the output ARC and Snakemake read, options, -M, SBATCH_* ----------
cat >"$T/job.sh" <<'EOS'
#!/bin/sh
#SBATCH -J from-script
#SBATCH --time=10:00
#SBATCH -o out-%j.txt
echo "$SLURM_JOB_NAME${LOOM_JOB_ID:+ loom}"
exit 3
EOS
chmod 0644 "$T/job.sh"
OUT=$(as_user "$ALICE" sbatch -J from-cli -M slurm --mem=200 -c 2 "$T/job.sh" 2>&1)
t_like "$OUT" '^Submitted batch job [0-9]+ on cluster slurm$' "sbatch -M slurm: 'Submitted batch job N on cluster slurm'"
J2=${OUT#Submitted batch job }
J2=${J2%% *}
wait_for 'ended "$J2"' 60
job "$J2"
t_is "$(py '[d["state"], d["exit_code"], d["cluster"], d["account"], d["name"], d["request"]["walltime_s"], d["request"]["memory_mb"], d["request"]["cpus_per_node"], d["output"]]' "$BODY")" \
    "[\"failed\", 3, \"slurm\", \"$ALICE\", \"from-cli\", 600, 200, 2, \"out-%j.txt\"]" \
    "the options win over the script's directives (-J), the directives fill the rest; it ran in Slurm as $ALICE"
OUT=$(as_user "$ALICE" env SBATCH_JOB_NAME=from-env SBATCH_TIMELIMIT=7 sbatch --hold --wrap true 2>&1)
J3=${OUT#Submitted batch job }
t_is "$(field "$J3" .name)/$(field "$J3" .request.walltime_s)/$(field "$J3" .state)" \
    "from-env/420/held" "SBATCH_JOB_NAME and SBATCH_TIMELIMIT are read; -H submits it held"

# ---- refused, never ignored ---------------------------------------------------
OUT=$(as_user "$ALICE" sbatch --mail-type=END --wrap true 2>&1)
t_is "$?/$OUT" "1/sbatch: error: --mail-type=END is not supported by Loom: Loom's job request has no such field (see docs/slurm-commands.md)" \
    "an sbatch option Loom has no field for is refused, named, exit 1 as Slurm's"
OUT=$(as_user "$ALICE" sbatch --wrap true --gres=fpga:1 2>&1)
t_like "$?/$OUT" "^1/sbatch: error: --gres=fpga:1: Loom takes gpu or gpu:N only" \
    "a value Loom cannot take is refused by the directive reader's own message"
OUT=$(as_user "$ALICE" sbatch -A someone-else --wrap true 2>&1)
t_like "$?/$OUT" "^1/sbatch: error: --account someone-else: Loom has no Slurm accounts" \
    "-A of another account is refused"
printf 'echo no shebang\n' >"$T/bad.sh"
chmod 0644 "$T/bad.sh"
OUT=$(as_user "$ALICE" sbatch "$T/bad.sh" 2>&1)
t_like "$?/$OUT" "^1/sbatch: error: This does not look like a batch script" \
    "a script without #! is refused as sbatch refuses it"
OUT=$(as_user "$ALICE" srun hostname 2>&1)
t_like "$?/$OUT" "^1/srun: error: srun is not supported by Loom outside a job" \
    "srun outside a job says it cannot"

# ---- squeue: ARC's and Toil's formats ------------------------------------------
OUT=$(as_user "$ALICE" sbatch --parsable -t 5 --wrap 'sleep 300' 2>&1)
J4=$OUT
wait_for '[ "$(job_state "$J4")" = running ]' 60
t_is "$(as_user "$ALICE" squeue -a -h -o '%i:%T' -t all -j "$J4,$J2,$J3")" \
    "$J2:FAILED
$J3:PENDING
$J4:RUNNING" "squeue -a -h -o %i:%T -t all -j LIST (ARC): each job with its state"
OUT=$(as_user "$ALICE" squeue -h --format '%i %t %M')
t_like "$OUT" "^$J3 PD 0:00
$J4 R [0-9]+:[0-9][0-9]\$" "squeue -h --format '%i %t %M' (Toil): the queue, short states, time used"
OUT=$(as_user "$ALICE" squeue -j "$J3" -o '%.10i %.12r %u')
t_is "$OUT" "     JOBID       REASON USER
$(printf '%10s %12s %s' "$J3" JobHeldUser "$ALICE")" "squeue -o with widths: a header, right-justified columns, the held job's reason JobHeldUser"
t_is "$(as_user "$BOB" squeue -h -t all -o %i)" "" "bob sees none of alice's jobs"
OUT=$(as_user "$ALICE" squeue -h -j 999999 -o %i 2>&1)
t_is "$?/$OUT" "1/squeue: error: slurm_load_jobs error: Invalid job id specified" \
    "squeue -j of an unknown job fails as Slurm's does"
OUT=$(as_user "$ALICE" squeue -t BOGUS 2>&1)
t_like "$?/$OUT" "^1/squeue: error: --states: 'BOGUS' is not a list of job states" \
    "an unknown state is refused, naming the states"
OUT=$(as_user "$ALICE" squeue -o '%Y' 2>&1)
t_like "$?/$OUT" "^1/squeue: error: format: %Y is not a field" "an unknown format letter is refused"

# ---- scontrol: show, hold, release, update -------------------------------------
OUT=$(as_user "$ALICE" scontrol show jobid -dd "$J4")
t_like "$OUT" "JobState=RUNNING" "scontrol show jobid -dd (Snakemake): JobState=RUNNING"
t_like "$(as_user "$ALICE" scontrol -o show job "$J2")" "^JobId=$J2 .* ExitCode=3:0 .*StartTime=[0-9-]+T[0-9:]+ EndTime=[0-9-]+T[0-9:]+ .*NumCPUs=2 " \
    "scontrol -o show job (ARC): one line, ExitCode=3:0, start and end, NumCPUs"
as_user "$ALICE" scontrol update JobId="$J3" TimeLimit=2:00 JobName=renamed
t_is "$?/$(field "$J3" .request.walltime_s)/$(field "$J3" .name)" "0/120/renamed" \
    "scontrol update JobId= TimeLimit= JobName= changes the held job"
OUT=$(as_user "$ALICE" scontrol update JobId="$J3" Nice=5 2>&1)
t_like "$?/$OUT" "^1/scontrol: error: update: Nice cannot be changed by Loom" \
    "an update Loom cannot make is refused, naming it"
as_user "$ALICE" scontrol release "$J3"
wait_for 'ended "$J3"' 60
t_is "$(job_state "$J3")" completed "scontrol release lets the held job run to the end"
t_like "$(as_user "$ALICE" scontrol show config)" "SchedulerTimeSlice += 30 sec" \
    "scontrol show config has the lines Toil reads (SchedulerTimeSlice = 30 sec)"
t_like "$(as_user "$ALICE" scontrol show node --oneliner | head -n 1)" "^NodeName=local/n1 .*CPUTot=2 .*State=" \
    "scontrol show node --oneliner (ARC): a node a line"

# ---- scancel --------------------------------------------------------------------
OUT=$(as_user "$BOB" scancel "$J4" 2>&1)
t_like "$?/$OUT" "^1/scancel: error: Kill job error on job id $J4: " "bob cannot cancel alice's job"
as_user "$ALICE" scancel "$J4"
t_is "$?" 0 "scancel ID (ARC, Snakemake, Toil) exits 0"
wait_for 'ended "$J4"' 60
t_is "$(job_state "$J4")" cancelled "... and the job is cancelled"

# ---- sacct: Snakemake's, Toil's and ARC's queries --------------------------------
t_is "$(as_user "$ALICE" sacct -P -n --format=JobIdRaw,State -j "$J1")" "$J1|COMPLETED
$J1.batch|COMPLETED" "sacct -P -n --format=JobIdRaw,State -j ID (Snakemake): the job and its batch step"
t_is "$(as_user "$ALICE" sacct -n -j "$J2,$J4" --format JobIDRaw,State,ExitCode -P -S 1970-01-01 | grep -v '\.')" \
    "$J2|FAILED|3:0
$J4|CANCELLED|0:15" "sacct -n -j LIST --format JobIDRaw,State,ExitCode -P -S 1970-01-01 (Toil): exit codes, a cancel as signal 15"
t_is "$(as_user "$ALICE" sacct -j "$J2" -o ExitCode -P -n | head -n 1)" "3:0" \
    "sacct -j ID -o ExitCode -P -n (ARC)"
t_like "$(as_user "$ALICE" sacct -j "$J2.batch" -o NCPUS,Start,End,UserCPU,SystemCPU -P -n | tail -n 1)" \
    '^2\|[0-9-]+T[0-9:]+\|[0-9-]+T[0-9:]+\|Unknown\|Unknown$' "sacct -j ID.batch -o NCPUS,Start,End,UserCPU,SystemCPU -P -n (ARC): the step's line; cpu times Loom does not know (a job on Slurm) are Unknown"
t_is "$(as_user "$ALICE" sacct -nu "$ALICE" -o Account%20 | head -n1 | tr -d ' ')" "$ALICE" \
    "sacct -nu USER -o Account%20 (Snakemake's account guess): the account"
OUT=$(as_user "$ALICE" sacct -j "$J2" -X)
t_like "$OUT" "^JobID +JobName +Partition +Account +AllocCPUS +State +ExitCode
-+ -+ -+ -+ -+ -+ -+
$J2 +from-cli +\(any\) +${ALICE:0:9}\+ +2 +FAILED +3:0 *\$" "sacct -X: the default columns, underlined, the job alone, a value cut to its width with a +"

# ---- sinfo, sacctmgr -------------------------------------------------------------
t_is "$(as_user "$ALICE" sinfo -o %P)" "PARTITION
default
debug" "sinfo -o %P (Snakemake): the fabric's queue names, none marked default"
t_like "$(as_user "$ALICE" sinfo -a -h -o 'PartitionName=%P TotalCPUs=%C TotalNodes=%D MaxTime=%l')" \
    "PartitionName=default TotalCPUs=[0-9]+/[0-9]+/0/4 TotalNodes=2 MaxTime=infinite" \
    "sinfo -a -h -o (ARC): cpus as A/I/O/T, nodes, time limit"
t_is "$(as_user "$ALICE" sacctmgr -n -s list user "$ALICE" format=account%20 | tr -d ' ')" "$ALICE" \
    "sacctmgr -n -s list user USER format=account%20 (Snakemake): the user's one account"

# ---- arrays and states ------------------------------------------------------------
OUT=$(as_user "$ALICE" sbatch --parsable --array=1-3 --wrap 'echo $SLURM_ARRAY_TASK_ID' 2>&1)
JA=$OUT
wait_for '[ "$(job_state "$JA")" = completed ]' 60
t_is "$(as_user "$ALICE" sacct -X -n -P -o JobID,State -j "$JA" | sort)" "${JA}_1|COMPLETED
${JA}_2|COMPLETED
${JA}_3|COMPLETED" "an array's tasks are ID_N, each COMPLETED"
t_is "$(cat "$AH/slurm-${JA}_2.out" 2>&1)" 2 "a task's output is slurm-%A_%a.out"
OUT=$(as_user "$ALICE" sbatch --parsable -t 0:02 --wrap 'sleep 60' 2>&1)
JT=$OUT
wait_for 'ended "$JT"' 60
t_is "$(as_user "$ALICE" sacct -X -n -P -o State -j "$JT")" TIMEOUT "a job past its walltime is TIMEOUT"

t_done
