#!/usr/bin/env bash
# 4001-slurm-pack.t - every op of the Slurm script pack against a real,
# private Slurm 22.05 (tests/lib/slurm.sh, 4 nodes), run directly as loomd
# would run it (minimal environment, the cluster's state directory, the
# request on stdin and in LOOM_* variables): nodes, queues, start pinned to
# a node (and idempotent) as the job's account (a test account, through
# loom-runas, the script on sbatch's stdin), jobs (running ->
# completed/failed with exit codes, Loom ids, native jobs), cancel, suspend/resume, hold/release,
# drain/down/up, reserve/unreserve, and exit status 75 while slurmctld is
# down.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

# Missing packages fail the test: CI installs them (./bootstrap check).
slurm_available || t_bail "no Slurm here: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"

PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/slurm
CL=$T/state/clusters/slurm-a
mkdir -p "$CL"
# The jobs run as ALICE: they work and write in her home, as loomd has
# them do.
t_account ALICE alice
H=$T/home/$ALICE

# op OP [ARGS...]: run the pack's OP as loomd does. The request is $REQ
# (default {}) on stdin; OPENV adds variables. Sets RC, OUT and ERRTXT.
OPENV=()
op() {
    local o=$1 req=${REQ:-'{}'}
    shift
    OUT=$(cd "$CL" && printf '%s' "$req" | env -i PATH=/usr/local/bin:/usr/bin:/bin \
        HOME="$HOME" SLURM_CONF="$SLURM_CONF" LOOM_CLUSTER=slurm-a LOOM_OP="$o" \
        LOOM_PACK_DIR="$PACK" LOOM_STATE_DIR="$CL" "${OPENV[@]}" \
        "$PACK/$o" "$@" 2>"$T/op.err")
    RC=$?
    ERRTXT=$(cat "$T/op.err")
}

# op_ok OP ARGS...: op, and one test point: it exits 0 with valid JSON (or
# nothing, for the ops that may answer nothing).
op_ok() {
    local what="$*"
    op "$@"
    if [ "$RC" = 0 ] && { [ -z "$OUT" ] || printf '%s' "$OUT" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>/dev/null; }; then
        t_ok 0 "$what: exit 0"
    else
        t_ok 1 "$what: exit 0"
        t_diag "status $RC; stdout: $OUT" "stderr: $ERRTXT"
    fi
}

# start_job ID NODES CPUS BODY [NAME]: op start for a Loom job of ALICE
# whose script (mode 0600, the caller's, as loomd's) runs BODY; NATIVE is
# the answer's native_id. It works in her home, its output in
# loom-ID.out and loom-ID.err there. JOBENV: more variables (env takes the
# last of a name).
JOBENV=()
start_job() {
    local id=$1 nodes=$2 cpus=$3 body=$4 name=${5:-job$1} d=$CL/jobs/$1
    mkdir -p "$d"
    (umask 077 && printf '#!/bin/sh\nexport LOOM_JOB_ID=%s\n%s\n' "$id" "$body" >"$d/script")
    OPENV=(LOOM_JOB_ID="$id" LOOM_JOB_NAME="$name" LOOM_JOB_OWNER=alice
        LOOM_JOB_ACCOUNT="$ALICE" LOOM_RUNAS="$LOOM_TOP_BUILDDIR/loom-runas"
        LOOM_JOB_NODES="$nodes" LOOM_JOB_NNODES=$(($(tr -cd , <<<"$nodes" | wc -c) + 1))
        LOOM_JOB_CPUS_PER_NODE="$cpus" LOOM_JOB_MEMORY_MB=100 LOOM_JOB_GPUS=0
        LOOM_JOB_WALLTIME_S=90 LOOM_JOB_QUEUE= LOOM_JOB_SCRIPT="$d/script"
        LOOM_JOB_WORKDIR="$H" LOOM_JOB_STDOUT="$H/loom-$id.out"
        LOOM_JOB_STDERR="$H/loom-$id.err" "${JOBENV[@]}")
    REQ="{\"loom_id\": \"$id\", \"name\": \"$name\", \"script\": \"...\", \"nodes\": [\"${nodes//,/\", \"}\"]}"
    op start "$id"
    OPENV=()
    REQ=
    NATIVE=$(jget "$OUT" .native_id 2>/dev/null)
    [ "$RC" = 0 ] && [ -n "$NATIVE" ] || t_diag "start $id: status $RC: $OUT $ERRTXT"
}

# jobs_now: JOBS = a fresh answer of the jobs op.
jobs_now() {
    op jobs
    JOBS=$OUT
}

# jobfield KEY VALUE FIELD: FIELD of the job whose KEY is VALUE in a fresh
# jobs answer.
jobfield() {
    op jobs
    py "[i for i in d[\"items\"] if i[\"$1\"] == \"$2\"][0][\"$3\"]" "$OUT" 2>/dev/null
}

# loomjob ID EXPR: EXPR over the item i of Loom job ID in JOBS.
loomjob() {
    py "[$2 for i in d[\"items\"] if i[\"loom_id\"] == \"$1\"][0]" "$JOBS"
}

jobstate() { jobfield loom_id "$1" state; }

nodefield() {
    op nodes
    py "[n for n in d[\"items\"] if n[\"name\"] == \"$1\"][0][\"$2\"]" "$OUT" 2>/dev/null
}

sq() { squeue -h -j "$1" -o "$2" 2>/dev/null; }

# ---- nodes and queues ---------------------------------------------------------
op_ok nodes
t_is "$(py '[(n["name"], n["state"], n["cpus"], n["memory_mb"], n["queues"]) for n in d["items"]]' "$OUT")" \
    '[["n1", "idle", 2, 2048, ["debug"]], ["n2", "idle", 2, 2048, ["debug"]], ["n3", "idle", 2, 2048, ["debug"]], ["n4", "idle", 2, 2048, ["debug"]]]' \
    "nodes: n1..n4 idle, 2 cpus, 2048 MB, in debug"
op_ok queues
t_is "$(py 'd["items"]' "$OUT")" '[{"name": "debug", "state": "open", "nodes": 4, "max_walltime_s": null}]' \
    "queues: debug, open, 4 nodes"
OPENV=(LOOM_PARTITION=debug)
op nodes
OPENV=()
t_is "$(py 'len(d["items"])' "$OUT")" 4 "nodes with env.LOOM_PARTITION=debug: its 4 nodes"
OUT=$(cd "$CL" && env -i PATH=/usr/bin:/bin SLURM_CONF="$T/nonexistent" LOOM_STATE_DIR="$CL" \
    "$PACK/nodes" 2>&1 </dev/null)
t_is "$?: $OUT" "75: nodes: SLURM_CONF=$T/nonexistent: no such readable file" \
    "a SLURM_CONF that does not exist: 75 at once (Slurm would retry for 60 s)"

# ---- start on the node Loom chose; idempotent ---------------------------------------
# It runs until the test has looked at it (the file j101.go; 60 s at most).
start_job 101 n3 1 'echo "ran on $SLURMD_NODENAME as $LOOM_JOB_ID by $(id -un) in $PWD"
i=0; while [ ! -e '"$T"'/j101.go ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done'
t_is "$RC" 0 "start 101 on n3: exit 0"
J101=$NATIVE
t_like "$J101" '^[0-9]+$' "start answers a native id"
start_job 101 n3 1 'echo second submit'
t_is "$NATIVE" "$J101" "start again with the same Loom id: the same native id"
t_is "$(squeue -h -t all -o '%k' | grep -c '^loom:101$')" 1 "Slurm holds one job with comment loom:101"
t_is "$(squeue -h -u "$ALICE" -t all -o '%i %u %k')" "$J101 $ALICE loom:101" \
    "squeue -u $ALICE lists it as hers: sbatch ran as the job's account"
wait_for '[ "$(jobstate 101)" = running ]' 30
jobs_now
t_is "$(loomjob 101 'i["state"]')" running "jobs: 101 runs"
t_is "$(loomjob 101 '[i["native_id"], i["name"], i["nodes"], i["end_time"], i["exit_code"]]')" \
    "[\"$J101\", \"job101\", [\"n3\"], null, null]" "jobs: native id, name, nodes [n3] while it runs"
t_is "$(scontrol show job -o "$J101" | grep -o ' NodeList=[^ ]*')" " NodeList=n3" "scontrol: it runs on n3"
t_is "$(scontrol show job -o "$J101" | grep -Eo ' (TimeLimit|MinMemoryNode|NumCPUs)=[^ ]*' | tr -d '\n')" \
    " TimeLimit=00:02:00 NumCPUs=1 MinMemoryNode=100M" "90 s walltime -> 2 minutes; 1 cpu; 100 MB"
touch "$T/j101.go"
wait_for '[ "$(jobstate 101)" = completed ]' 60
jobs_now
t_is "$(loomjob 101 '[i["state"], i["exit_code"]]')" '["completed", 0]' "jobs: 101 completed with exit code 0"
t_is "$(cat "$H/loom-101.out")" "ran on n3 as 101 by $ALICE in $H" \
    "its stdout file: it ran on n3 (SLURMD_NODENAME) as $ALICE, in her home"
t_is "$(stat -c '%U %a' "$CL/jobs/101/script")" "root 600" \
    "the job file stays its writer's alone (mode 0600): sbatch read it on stdin"
t_like "$(loomjob 101 i)" \
    '"submit_time": [0-9]+, "start_time": [0-9]+, "end_time": [0-9]+' "jobs: submit, start and end times"

# ---- exit 3 -> failed; two nodes; a % in the output path --------------------------------
start_job 102 n1,n2 1 'exit 3'
JOBENV=(LOOM_JOB_STDOUT="$H/out%j.txt")
start_job 107 n4 1 'echo percent'
JOBENV=()
wait_for 'case $(jobstate 102) in failed|completed) true ;; *) false ;; esac' 30
jobs_now
t_is "$(loomjob 102 '[i["state"], i["exit_code"], i["nodes"]]')" \
    '["failed", 3, ["n1", "n2"]]' "jobs: a job exiting 3 on n1,n2 failed with exit_code 3"
wait_for '[ "$(jobstate 107)" = completed ]' 30
t_is "$(cat "$H/out%j.txt" 2>&1)" percent "a % in the stdout path is kept as it is"
t_like "$(cat "$CL/slurm-exit-codes" 2>/dev/null)" "(^|
)$(loomjob 102 'i["native_id"]') 3:0" "the pack keeps its exit code in the state dir"

# ---- a job submitted to Slurm directly -------------------------------------------------------
NATIVEJOB=$(sbatch --parsable -J 'native "one"' -o /dev/null --wrap 'sleep 1')
jobs_now
t_is "$(py "[[i[\"loom_id\"], i[\"name\"], i[\"owner\"]] for i in d[\"items\"] if i[\"native_id\"] == \"$NATIVEJOB\"][0]" "$JOBS")" \
    '[null, "native \"one\"", "root"]' "jobs: a native sbatch job, loom_id null"
t_is "$(py 'd["complete"]' "$JOBS")" true "jobs: complete answers"

# ---- cancel -----------------------------------------------------------------------------------
start_job 103 n4 1 'sleep 60'
J103=$NATIVE
wait_for '[ "$(jobstate 103)" = running ]' 30
op_ok cancel "$J103"
wait_for '[ "$(jobstate 103)" = cancelled ]' 30
t_is "$(jobstate 103)" cancelled "jobs: cancelled"
op_ok cancel "$J103"
t_is "$RC" 0 "cancel of a job that ended succeeds"
op cancel 999999
t_is "$RC" 1 "cancel of a job id Slurm never gave: exit 1"
t_like "$ERRTXT" 'no job 999999' "... saying so"

# ---- suspend / resume ------------------------------------------------------------------------
start_job 104 n1 1 'sleep 60'
J104=$NATIVE
wait_for '[ "$(jobstate 104)" = running ]' 30
op_ok suspend "$J104"
t_is "$(sq "$J104" %t)" S "squeue: S"
t_is "$(jobstate 104)" suspended "jobs: suspended"
op_ok suspend "$J104"
op_ok resume "$J104"
t_is "$(sq "$J104" %t)" R "squeue: R again"
t_is "$(jobstate 104)" running "jobs: running again"
op_ok resume "$J104"

# ---- hold / release: a job waiting for a busy node ---------------------------------------------------
start_job 105 n2 2 'sleep 60'
J105=$NATIVE
wait_for '[ "$(jobstate 105)" = running ]' 30
start_job 106 n2 1 'echo ran; sleep 1'
J106=$NATIVE
t_is "$(jobstate 106)" pending "a job for the busy n2 pends"
op_ok hold "$J106"
jobs_now
t_is "$(loomjob 106 '[i["state"], i["reason"]]')" \
    '["held", "JobHeldAdmin"]' "jobs: held (JobHeldAdmin)"
op_ok release "$J106"
t_is "$(jobstate 106)" pending "jobs: pending again after release"
op_ok cancel "$J105"
wait_for '[ "$(jobstate 106)" = completed ]' 30
t_is "$(jobfield loom_id 106 nodes)" '["n2"]' "once n2 is free it ran there"
op hold "$J106"
t_is "$RC" 1 "hold of a finished job: exit 1"
t_like "$ERRTXT" 'already finished' "... with Slurm's reason"

# ---- drain, down, up ---------------------------------------------------------------------------------
OPENV=(LOOM_REASON='disk "a\b" check')
REQ='{"reason": "disk \"a\\b\" check"}'
op_ok set-node-state n4 drain
OPENV=()
REQ=
wait_for '[ "$(nodefield n4 state)" = drained ]' 30
t_is "$(nodefield n4 state)" drained "nodes: n4 drained"
op nodes
t_is "$(py '[n["reason"] for n in d["items"] if n["name"] == "n4"][0]' "$OUT")" 'disk "a\b" check' "nodes: with Loom's reason"
t_is "$(sinfo -h -N -n n4 -o %t)" drain "sinfo: n4 drain"
op_ok set-node-state n4 up
wait_for '[ "$(nodefield n4 state)" = idle ]' 30
t_is "$(nodefield n4 state)" idle "nodes: n4 idle again"
op_ok set-node-state n4 up
op_ok set-node-state n4 down
wait_for '[ "$(nodefield n4 state)" = down ]' 30
t_is "$(nodefield n4 state)" down "nodes: n4 down"
op_ok set-node-state n4 up
wait_for '[ "$(nodefield n4 state)" = idle ]' 30
t_is "$(nodefield n4 state)" idle "nodes: n4 up again"
op set-node-state n9 drain
t_is "$RC" 1 "set-node-state of an unknown node: exit 1"
op set-node-state n4 sideways
t_is "$RC" 1 "set-node-state to an unknown state: exit 1"

# ---- reservations -----------------------------------------------------------------------------------
NOW=$(date +%s)
OPENV=(LOOM_RES_NAME=loom-r1 LOOM_RES_NODES=n4 LOOM_RES_START=$NOW
    LOOM_RES_END=$((NOW + 600)) LOOM_RES_PURPOSE=maintenance LOOM_RES_OWNER=ops)
op_ok reserve
OPENV=()
t_is "$(jget "$OUT" .native_id)" loom-r1 "reserve: the reservation's name"
RES=$(scontrol show reservation -o loom-r1 2>&1)
t_like "$RES" 'Nodes=n4 ' "scontrol: loom-r1 holds n4"
t_like "$RES" 'Flags=MAINT,IGNORE_JOBS' "scontrol: a maint reservation"
t_like "$RES" " Users=$(id -un) " "... for the pack's account, not the owner's (ops)"
wait_for '[ "$(nodefield n4 state)" = maint ]' 30
t_is "$(nodefield n4 state)" maint "nodes: n4 maint once it is active"
op_ok unreserve loom-r1
t_like "$(scontrol show reservation -o loom-r1 2>&1)" 'not found|invalid|No reservations' "scontrol: loom-r1 is gone"
op_ok unreserve loom-r1
OPENV=(LOOM_RES_NAME=loom-r2 LOOM_RES_NODES=n3,n4 LOOM_RES_START=$((NOW + 3600))
    LOOM_RES_END=$((NOW + 7200)) LOOM_RES_PURPOSE=user LOOM_RES_OWNER=$ALICE)
op_ok reserve
OPENV=()
RES=$(SLURM_TIME_FORMAT=%s scontrol show reservation -o loom-r2 2>&1)
t_like "$RES" "StartTime=$((NOW + 3599))|StartTime=$((NOW + 3600))|StartTime=$((NOW + 3601))" \
    "a user reservation starts when asked (+/- 1 s)"
t_like "$RES" 'Nodes=n\[3-4\] .*Flags=IGNORE_JOBS,' "... on n3,n4, not maint"
t_like "$RES" " Users=$ALICE " "... for the owner's account"
op_ok unreserve loom-r2

# ---- slurmctld down: temporary failures ----------------------------------------------------------------
slurm_kill_ctld
t_ok $? "slurmctld killed"
# Each op takes ~4 s to give up on the controller: run them side by side.
down_op() {
    local name=$1
    shift
    (
        op "$@"
        printf '%s\n%s\n' "$RC" "$ERRTXT" >"$T/down.$name"
    ) &
}
down_op nodes nodes
down_op jobs jobs
down_op queues queues
OPENV=(LOOM_JOB_ID=199 LOOM_JOB_NODES=n1 LOOM_JOB_NNODES=1 LOOM_JOB_SCRIPT="$CL/jobs/101/script"
    LOOM_JOB_ACCOUNT="$ALICE" LOOM_RUNAS="$LOOM_TOP_BUILDDIR/loom-runas")
down_op start start 199
OPENV=()
down_op cancel cancel "$J104"
down_op suspend suspend "$J104"
down_op drain set-node-state n1 drain
wait
for o in nodes jobs queues start cancel suspend drain; do
    t_is "$(head -n 1 "$T/down.$o")" 75 "controller down: $o exits 75"
    t_like "$(sed -n 2p "$T/down.$o")" 'unreachable|does not answer' "... saying the controller is unreachable"
done
slurm_start_ctld
t_ok $? "slurmctld started again on its state"
op_ok jobs
t_is "$(jobfield loom_id 102 exit_code)" 3 "jobs: the jobs are still there (102: exit 3)"
op_ok nodes
t_is "$(jobstate 104)" running "104 still runs"
op_ok cancel "$J104"

t_done
