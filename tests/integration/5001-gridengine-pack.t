#!/usr/bin/env bash
# 5001-gridengine-pack.t - the Grid Engine script pack against a real Son of
# Grid Engine cell (tests/lib/gridengine.sh: this host plus one emulated exec
# host), each op run directly the way loomd runs it (clean environment,
# working directory = the state directory), no loomd: nodes, queues, start
# into the chosen queue instances (idempotent), jobs from running to
# completed/failed with the exit code from qacct, cancel, suspend/resume,
# hold/release, drain/down/up, reserve/unreserve, a job submitted with qsub,
# and every op answering 75 once the qmaster is gone.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

# Missing packages fail the test: CI installs them (./bootstrap check).
ge_available || t_bail "no Grid Engine here: $GE_WHY"
ge_start 1 || t_bail "Grid Engine did not start"
read -r H N1 <<<"$GE_NODES"
PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/gridengine
S=$T/state/clusters/ge
mkdir -p "$S"
# The jobs run as ALICE (qsub through loom-runas): their directories are
# hers.
t_account ALICE alice

# op NAME ARGS...: run a pack op as loomd does (minimal environment, the
# cluster's env.* lines, LOOM_*, cwd = state dir, stdin {} unless IN is
# set); sets OUT, ERR and RC. Extra environment: the array OPENV.
OPENV=()
op() {
    local name=$1
    shift
    (cd "$S" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root \
        SGE_ROOT="$SGE_ROOT" SGE_CELL="$SGE_CELL" \
        SGE_QMASTER_PORT="$SGE_QMASTER_PORT" SGE_EXECD_PORT="$SGE_EXECD_PORT" \
        LOOM_GE_PE_MULTI=rr LOOM_CLUSTER=ge LOOM_OP="$name" \
        LOOM_PACK_DIR="$PACK" LOOM_STATE_DIR="$S" "${OPENV[@]}" \
        "$PACK/$name" "$@" <<<"${IN:-{\}}" >"$T/op.out" 2>"$T/op.err")
    RC=$?
    OUT=$(cat "$T/op.out")
    ERR=$(cat "$T/op.err")
    OPENV=()
    IN=
}

# pyq JSON EXPR: EXPR over d (the parsed JSON); "INVALID" when not JSON.
pyq() {
    printf '%s' "$1" | python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("INVALID")
    sys.exit(0)
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r))' "$2"
}

# job_field NATIVE_ID EXPR: EXPR over j = that job in a fresh jobs answer.
job_field() {
    op jobs
    pyq "$OUT" "[$2 for j in d['items'] if j['native_id'] == '$1']"
}

# start_job LOOM_ID NODES SCRIPT_BODY [CPUS]: the files loomd writes (the
# job file mode 0600, the caller's), then the start op for a job of ALICE
# working in $T/jobs/ID (hers); NID = the native id.
start_job() {
    local id=$1 dir=$T/jobs/$1
    mkdir -p "$T/jobs" && install -d -o "$ALICE" -g "$ALICE" "$dir"
    (umask 077 && printf '#!/bin/sh\nexport GREETING='"'"'hello there'"'"'\n%s\n' "$3" >"$S/job-$id.sh")
    OPENV=(LOOM_JOB_ID="$id" LOOM_JOB_NAME="job $id" LOOM_JOB_OWNER=root
        LOOM_JOB_ACCOUNT="$ALICE" LOOM_RUNAS="$LOOM_TOP_BUILDDIR/loom-runas"
        LOOM_JOB_NODES="$2" LOOM_JOB_NNODES="$(awk -F, '{print NF}' <<<"$2")"
        LOOM_JOB_CPUS_PER_NODE="${4:-1}" LOOM_JOB_MEMORY_MB=100 LOOM_JOB_GPUS=0
        LOOM_JOB_WALLTIME_S=120 LOOM_JOB_QUEUE= LOOM_JOB_SCRIPT="$S/job-$id.sh"
        LOOM_JOB_WORKDIR="$dir" LOOM_JOB_STDOUT="$dir/stdout"
        LOOM_JOB_STDERR="$dir/stderr")
    op start "$id"
    NID=$(pyq "$OUT" 'd["native_id"]')
}

# ge_state ID: the job's state letters in qstat ("" once it is gone).
ge_state() {
    qstat -u '*' | awk -v j="$1" '$1 == j { print $5; exit }'
}

# ---- nodes and queues -----------------------------------------------------------
op nodes
t_is "$RC" 0 "nodes: exit 0" || t_diag "$ERR"
t_is "$(pyq "$OUT" 'sorted(n["name"] for n in d["items"])')" \
    "$(python3 -c 'import json, sys; print(json.dumps(sorted(sys.argv[1:])))' $GE_NODES)" \
    "nodes: the exec hosts ($GE_NODES)"
t_is "$(pyq "$OUT" 'sorted(set((n["state"], n["cpus"], n["cpus_alloc"], tuple(n["queues"])) for n in d["items"]))')" \
    '[["idle", 4, 0, ["all.q"]]]' "nodes: idle, 4 cpus (all.q's slots), queue all.q"
op queues
t_is "$(pyq "$OUT" 'd["items"]')" \
    '[{"name": "all.q", "state": "open", "nodes": 2, "max_walltime_s": null}]' \
    "queues: all.q, open, on 2 hosts"
op jobs
t_is "$(pyq "$OUT" 'd')" '{"complete": true, "items": []}' "jobs: none yet, complete"

# ---- start: the chosen instance, idempotent, completed ---------------------------
# go FILE: a loop that waits until $T/FILE exists (60 s at most): a job that
# runs until the test has looked at it.
go() {
    echo "i=0; while [ ! -e $T/$1 ] && [ \$i -lt 300 ]; do sleep 0.2; i=\$((i + 1)); done"
}
start_job 1 "$N1" 'echo "$GREETING from $(hostname) job $LOOM_JOB_ID in $(pwd) as $(id -un)"; '"$(go j1.go)"
t_is "$RC" 0 "start: exit 0" || t_diag "$ERR"
t_like "$NID" '^[0-9]+$' "start answers the Grid Engine job id"
J1=$NID
wait_for '[ "$(ge_state "$J1")" = r ]' 30
t_is "$(qstat -u '*' | awk -v j="$J1" '$1 == j { print $3, $5, $8 }')" \
    "loom-1 r all.q@$N1" "qstat: loom-1 runs in the chosen queue instance all.q@$N1"
t_is "$(qstat -u "$ALICE" | awk -v j="$J1" '$1 == j { print $3, $4 }')" "loom-1 $ALICE" \
    "qstat -u $ALICE lists it as hers: qsub ran as the job's account"
t_is "$(qstat -j "$J1" | awk '$1 == "context:" { print $2, $3 }')" \
    "loom_id=1,loom_name=job 1,loom_owner=root" "the Loom id, name and owner are in the job's context"
start_job 1 "$N1" 'echo second'
t_is "$RC:$NID" "0:$J1" "start again: the same job, nothing submitted"
t_is "$(qstat -u '*' | grep -c ' loom-1 ')" 1 "qstat has one loom-1"
t_is "$(job_field "$J1" '[j["state"], j["loom_id"], j["nodes"]]')" \
    "[[\"running\", \"1\", [\"$N1\"]]]" "jobs: running, loom_id 1, on $N1"
touch "$T/j1.go"
wait_for '[ -z "$(ge_state "$J1")" ]' 60
t_is "$(job_field "$J1" '[j["state"], j["exit_code"], j["reason"]]')" \
    '[["completed", 0, null]]' "jobs: completed with exit code 0 (qacct)"
op jobs
t_like "$(pyq "$OUT" '[j["start_time"] + " " + j["end_time"] for j in d["items"] if j["native_id"] == "'"$J1"'"][0]')" \
    '^20[0-9-]{8}T[0-9:]{8}Z 20[0-9-]{8}T[0-9:]{8}Z$' "jobs: RFC 3339 start and end times"
t_is "$(cat "$T/jobs/1/stdout")" "hello there from $N1 job 1 in $T/jobs/1 as $ALICE" \
    "the job ran its script on $N1, in its workdir, with its env and LOOM_JOB_ID, as $ALICE"
t_is "$(cat "$T/jobs/1/stderr")" "" "and wrote nothing to stderr"
start_job 1 "$N1" 'echo again'
t_like "$RC:$NID" '^0:[0-9]+$' "start after jobs saw it end: accepted" &&
    t_isnt "$NID" "$J1" "  as a new job (Loom runs it again)"
op cancel "$NID"

# ---- exit 3, two hosts, two cpus ---------------------------------------------------
start_job 2 "$H" 'exit 3'
J2=$NID
start_job 3 "$H,$N1" 'cat "$PE_HOSTFILE"; '"$(go j3.go)"
J3=$NID
start_job 4 "$N1" 'echo "$NSLOTS slots"' 2
J4=$NID
wait_for '[ "$(ge_state "$J3")" = r ]' 30
t_is "$(qstat -g t -u '*' | awk -v j="$J3" '$1 == j { print $8 }' | sort | tr '\n' ' ')" \
    "$(printf 'all.q@%s\n' "$H" "$N1" | sort | tr '\n' ' ')" \
    "a job on two nodes runs in both instances"
t_is "$(job_field "$J3" 'sorted(j["nodes"])')" \
    "$(python3 -c 'import json, sys; print(json.dumps([sorted(sys.argv[1:])]))' "$H" "$N1")" \
    "jobs lists both nodes"
touch "$T/j3.go"
wait_for '[ -z "$(ge_state "$J2")$(ge_state "$J3")$(ge_state "$J4")" ]' 60
op jobs
t_is "$(pyq "$OUT" '[[j["state"], j["exit_code"], j["reason"]] for j in d["items"] if j["native_id"] == "'"$J2"'"]')" \
    '[["failed", 3, "exit status 3"]]' "exit 3: failed with exit code 3"
t_is "$(qacct -j "$J2" | awk '$1 == "hostname" { print $2 }')" "$H" \
    "qacct: it ran on the node chosen for it, $H"
t_is "$(awk '{ print $1 }' "$T/jobs/3/stdout" | sort | tr '\n' ' ')" \
    "$(printf '%s\n' "$H" "$N1" | sort | tr '\n' ' ')" "its PE_HOSTFILE names both hosts"
t_is "$(cat "$T/jobs/4/stdout")" "2 slots" "cpus_per_node 2: two slots (smp)"
start_job 10 "$H" 'true' 8
t_is "$RC" 1 "start with more cpus than the node has: refused (1)"
t_like "$ERR" '^gridengine: start: qsub: .*no suitable queues' "  Grid Engine says why (qsub -w e)"

# ---- cancel ----------------------------------------------------------------------------
start_job 5 "$H" 'sleep 60'
J5=$NID
wait_for '[ "$(ge_state "$J5")" = r ]' 30
op jobs
op cancel "$J5"
t_is "$RC:$OUT" "0:{}" "cancel a running job: exit 0, {}"
wait_for '[ -z "$(ge_state "$J5")" ]' 30
t_is "$(job_field "$J5" 'j["state"]')" '["cancelled"]' "jobs: cancelled"
op cancel "$J5"
t_is "$RC" 0 "cancel a job that already ended: success"
op cancel 987654
t_is "$RC" 1 "cancel an unknown job: 1 (permanent)"
t_like "$ERR" '^gridengine: cancel: job 987654: no such job' "with a message"

# ---- suspend, resume ----------------------------------------------------------------------
start_job 6 "$N1" 'sleep 60'
J6=$NID
wait_for '[ "$(ge_state "$J6")" = r ]' 30
op suspend "$J6"
t_is "$RC" 0 "suspend: exit 0" || t_diag "$ERR"
t_is "$(ge_state "$J6")" s "qstat: state s"
t_is "$(job_field "$J6" 'j["state"]')" '["suspended"]' "jobs: suspended"
op resume "$J6"
t_is "$RC" 0 "resume: exit 0"
t_is "$(ge_state "$J6")" r "qstat: r again"
t_is "$(job_field "$J6" 'j["state"]')" '["running"]' "jobs: running again"
op suspend 987654
t_is "$RC" 1 "suspend an unknown job: 1"

# ---- a job submitted with qsub; hold, release ----------------------------------------------
(cd "$T" && printf '#!/bin/sh\nsleep 1\n' >native.sh &&
    qsub -terse -N native -o /dev/null -e /dev/null -pe smp 8 native.sh) >"$T/native.id"
JN=$(cat "$T/native.id")
t_is "$(job_field "$JN" '[j["loom_id"], j["name"], j["owner"], j["state"]]')" \
    '[[null, "native", "root", "pending"]]' "a job qsub submitted: loom_id null, pending"
op hold "$JN"
t_is "$RC" 0 "hold: exit 0"
t_is "$(ge_state "$JN")" hqw "qstat: hqw"
t_is "$(job_field "$JN" 'j["state"]')" '["held"]' "jobs: held"
op release "$JN"
t_is "$RC" 0 "release: exit 0"
t_is "$(ge_state "$JN")" qw "qstat: qw"
t_is "$(job_field "$JN" 'j["state"]')" '["pending"]' "jobs: pending again"
op hold 987654
t_is "$RC" 1 "hold an unknown job: 1"

# ---- drain, down, up ----------------------------------------------------------------------------
IN='{"reason": "fan \"3\" \\ loud"}'
OPENV=(LOOM_REASON='fan "3" \ loud')
op set-node-state "$N1" drain
t_is "$RC" 0 "drain: exit 0" || t_diag "$ERR"
t_is "$(qstat -f -u '*' | awk -v q="all.q@$N1" '$1 == q { print $NF }')" d \
    "qstat -f: all.q@$N1 disabled"
op nodes
t_is "$(pyq "$OUT" '[[n["state"], n["reason"]] for n in d["items"] if n["name"] == "'"$N1"'"]')" \
    '[["draining", "fan \"3\" \\ loud"]]' "nodes: draining (a job runs there), with the reason"
start_job 7 "$N1" 'echo seven'
J7=$NID
t_is "$RC" 0 "start on a drained node: accepted" || t_diag "$ERR"
# One scheduler run later (qconf -tsm: the next run writes its trace to
# common/schedd_runlog), it still waits.
SCHED_LOG=$SGE_ROOT/$SGE_CELL/common/schedd_runlog
rm -f "$SCHED_LOG"
qconf -tsm >/dev/null 2>&1
wait_for '[ -s "$SCHED_LOG" ]' 30
t_is "$([ -s "$SCHED_LOG" ] && echo ran)/$(ge_state "$J7")" ran/qw \
    "  but it waits (qw) while the instance is disabled (a scheduler run later)"
op cancel "$J6"
wait_for '[ -z "$(ge_state "$J6")" ]' 30
op nodes
t_is "$(pyq "$OUT" '[n["state"] for n in d["items"] if n["name"] == "'"$N1"'"]')" '["drained"]' \
    "nodes: drained once the job is gone"
OPENV=(LOOM_REASON='power')
op set-node-state "$N1" down
t_is "$(pyq "$(op nodes; echo "$OUT")" '[[n["state"], n["reason"]] for n in d["items"] if n["name"] == "'"$N1"'"]')" \
    '[["down", "power"]]' "down: nodes says down"
op set-node-state "$N1" up
t_is "$RC" 0 "up: exit 0"
wait_for '[ -z "$(ge_state "$J7")" ]' 30
t_is "$(cat "$T/jobs/7/stdout" 2>&1)" seven "the waiting job ran once the node was up"
t_is "$(qstat -f -u '*' | awk -v q="all.q@$N1" '$1 == q { print NF }')" 5 "qstat -f: all.q@$N1 enabled"
t_is "$(pyq "$(op nodes; echo "$OUT")" '[[n["state"], n["reason"]] for n in d["items"] if n["name"] == "'"$N1"'"]')" \
    '[["idle", null]]' "nodes: idle, no reason"
op set-node-state nosuchhost drain
t_is "$RC" 1 "drain an unknown host: 1"

# ---- reserve, unreserve --------------------------------------------------------------------------
NOW=$(date +%s)
OPENV=(LOOM_RES_NAME=loom-r5 LOOM_RES_NODES="$H,$N1" LOOM_RES_START=$((NOW + 3600))
    LOOM_RES_END=$((NOW + 5400)) LOOM_RES_PURPOSE=maintenance LOOM_RES_OWNER=ops)
op reserve
t_is "$RC" 0 "reserve: exit 0" || t_diag "$ERR"
AR=$(pyq "$OUT" 'd["native_id"]')
t_like "$AR" '^[0-9]+$' "reserve answers the AR id"
qrstat -ar "$AR" -xml >"$T/ar.xml" 2>&1
t_is "$(grep -o 'queue_instance="[^"]*" slots="[0-9]*"' "$T/ar.xml" | sort | tr '\n' ' ')" \
    "$(printf 'queue_instance="all.q@%s" slots="4"\n' "$H" "$N1" | sort | tr '\n' ' ')" \
    "qrstat: every slot of both hosts"
t_is "$(sed -n 's#.*<start_time>\(.*\)</start_time>.*#\1#p' "$T/ar.xml")" \
    "$(TZ=UTC date -d "@$((NOW + 3600))" +%Y-%m-%dT%H:%M:%S)" "qrstat: the start Loom asked for"
t_is "$(qrstat -u '*' | awk -v a="$AR" '$1 == a { print $2 }')" loom-r5 "qrstat: its name"
op unreserve "$AR"
t_is "$RC" 0 "unreserve: exit 0"
t_is "$(qrstat -u '*' | awk -v a="$AR" '$1 == a' | wc -l)" 0 "qrstat: gone"
op unreserve "$AR"
t_is "$RC" 0 "unreserve it again: success (it is gone)"

# ---- qmaster down ----------------------------------------------------------------------------
start_job 8 "$H" 'sleep 60'
J8=$NID
ge_kill_qmaster
for o in nodes jobs queues "cancel $J8" "suspend $J8" "set-node-state $H drain"; do
    s=${EPOCHREALTIME/[.,]/}
    op $o
    ms=$(((${EPOCHREALTIME/[.,]/} - s) / 1000))
    t_is "$RC" 75 "qmaster down: ${o%% *} exits 75 (temporary) after $ms ms"
    t_like "$ERR" "^gridengine: ${o%% *}: Grid Engine qmaster unreachable" "  and says so" ||
        t_diag "$ERR"
done
start_job 9 "$H" 'true'
t_is "$RC" 75 "qmaster down: start exits 75"
t_done
