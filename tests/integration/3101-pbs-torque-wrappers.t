#!/usr/bin/env bash
# 3101-pbs-torque-wrappers.t - the pbs pack against Slurm's Torque wrappers
# (Debian's slurm-wlm-torque) on a private, real Slurm.
# SPDX-License-Identifier: MIT
#
# There is no Torque or OpenPBS to run here; Slurm's wrappers are the only
# live PBS command line. They are unpacked into $T, never installed:
# slurm-wlm-torque conflicts with gridengine-client. The .deb is fetched
# once with `apt-get download` (the version of the installed slurm-client)
# and kept in /var/cache/loom-tests/ (LOOM_TEST_CACHE). The wrappers need
# the perl modules of libslurm-perl and libslurmdb-perl (bootstrap installs
# them, with libswitch-perl).
#
# What the wrappers cover, so what this test runs live:
#   pbsnodes -a, -o -N, -c   nodes, set-node-state drain/down/up
#   qstat -f, qstat -Q -f    jobs, queues (and the flavor: auto-detected)
#   qsub -h -N -o -e -l      start, in the "release" mode: the resource
#                            request names the nodes (sbatch -w), then qrls;
#                            qsub runs as the job's account (a test account,
#                            through loom-runas, the wrapper on a pipe)
#   qhold -h u, qrls -h u    hold, release (Slurm priority 0)
#   qdel                     cancel (nothing said for an ended job: the pack
#                            asks qstat -f)
# What they do not cover: qrun (so start's default "qrun -H" mode, Torque's
# and OpenPBS's way, is refused with a clear message), qsig (suspend and
# resume answer "not supported", status 2), qmove, pbs_rsub. Those, and the
# Torque/OpenPBS output formats, are tested against recorded output only
# (tests/unit/packs_pbs.t).
#
# Each op runs as loomd runs it: env -i with PATH=/usr/local/bin:/usr/bin:
# /bin, HOME, the cluster's env.* (here LOOM_PBS_BIN, SLURM_CONF) and the
# LOOM_* variables, in the cluster's state directory.

if [ -z "${LOOM_TOP_SRCDIR:-}" ]; then
    LOOM_TOP_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/pbs
CACHE=${LOOM_TEST_CACHE:-/var/cache/loom-tests}
STATE=$T/state/clusters/pbs-wrappers
WORK=$STATE/jobs

slurm_available || t_bail "no Slurm: $SLURM_WHY"
# (Loading them needs a slurm.conf: look for the files.)
perl -e 'for my $m ("Slurm.pm", "Slurmdb.pm") {
    exit 1 unless grep { -f "$_/$m" } @INC }' ||
    t_bail "the wrappers need perl's Slurm and Slurmdb modules:" \
        "apt-get install libslurm-perl libslurmdb-perl libswitch-perl (./bootstrap check does it)"

# fetch_wrappers: the slurm-wlm-torque .deb of the installed Slurm, from the
# cache or downloaded into it (through a temporary directory and a rename,
# so that two runs at once do not see half a file). Prints its path.
fetch_wrappers() {
    local ver deb tmp
    ver=$(dpkg-query -W -f '${Version}' slurm-client 2>/dev/null) || return 1
    deb="$CACHE/slurm-wlm-torque_${ver//:/%3a}_all.deb"
    if [ ! -s "$deb" ]; then
        mkdir -p "$CACHE" || return 1
        tmp=$(mktemp -d "$CACHE/.download.XXXXXX") || return 1
        if ! (cd "$tmp" && apt-get download -q "slurm-wlm-torque=$ver") \
            >"$T/apt-download.log" 2>&1; then
            t_diag "apt-get download slurm-wlm-torque=$ver failed:" \
                "$(tail -n 5 "$T/apt-download.log")"
            rm -rf "$tmp"
            return 1
        fi
        mv -f "$tmp"/slurm-wlm-torque_*.deb "$deb" && rm -rf "$tmp" || return 1
    fi
    echo "$deb"
}

DEB=$(fetch_wrappers) || t_bail "cannot get the slurm-wlm-torque package"
mkdir -p "$T/torque" && dpkg -x "$DEB" "$T/torque" ||
    t_bail "dpkg -x $DEB failed"
BIN=$T/torque/usr/bin
for b in sbatch salloc srun; do # qsub runs $FindBin::Bin/sbatch
    ln -s "$(command -v "$b")" "$BIN/$b" || t_bail "no $b"
done
mkdir -p "$WORK"
t_account ALICE alice # the jobs' account

slurm_start 4 || t_bail "Slurm did not start"

# pack OP ARGS...: run one op as loomd does (extra NAME=VALUE words in the
# array EXTRA). Sets RC, OUT (stdout) and ERR (stderr).
EXTRA=()
pack() {
    local op=$1
    shift
    OUT=$(cd "$STATE" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" \
        LOOM_PBS_BIN="$BIN" SLURM_CONF="$SLURM_CONF" LOOM_CLUSTER=pbs-wrappers \
        LOOM_OP="$op" LOOM_PACK_DIR="$PACK" LOOM_STATE_DIR="$STATE" \
        "${EXTRA[@]}" "$PACK/$op" "$@" </dev/null 2>"$T/pack.err")
    RC=$?
    ERR=$(cat "$T/pack.err")
}

# is_json TEXT: TEXT is one JSON document.
is_json() {
    python3 -c 'import json, sys; json.loads(sys.argv[1])' "$1" 2>/dev/null
}

# jq_py EXPR: evaluate a python expression on the last answer (d).
jq_py() {
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
def job(loom):
    for j in d["items"]:
        if j.get("loom_id") == loom:
            return j
    return {}
def node(name):
    for n in d["items"]:
        if n["name"] == name:
            return n
    return {}
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
' "$OUT" "$1"
}

# start_job ID NODES CPUS SCRIPT: the job files as loomd writes them (the
# job file mode 0600, the caller's), then the start op for a job of ALICE
# working in $WORK/ID (hers), with the NAME=VALUE words of MORE added.
# Sets NATIVE.
MORE=()
start_job() {
    local id=$1 nodes=$2 cpus=$3 n
    install -d -o "$ALICE" -g "$ALICE" "$WORK/$id"
    (umask 077 && printf '#!/bin/sh\n%s\n' "$4" >"$STATE/job-$id.sh")
    n=$(tr ',' '\n' <<<"$nodes" | grep -c .)
    EXTRA=(LOOM_JOB_ID="$id" LOOM_JOB_NAME="job$id" LOOM_JOB_OWNER=root
        LOOM_JOB_ACCOUNT="$ALICE" LOOM_RUNAS="$LOOM_TOP_BUILDDIR/loom-runas"
        LOOM_JOB_NODES="$nodes" LOOM_JOB_NNODES="$n"
        LOOM_JOB_CPUS_PER_NODE="$cpus" LOOM_JOB_MEMORY_MB=100 LOOM_JOB_GPUS=0
        LOOM_JOB_WALLTIME_S=300 LOOM_JOB_QUEUE=
        LOOM_JOB_SCRIPT="$STATE/job-$id.sh" LOOM_JOB_WORKDIR="$WORK/$id"
        LOOM_JOB_STDOUT="$WORK/$id/stdout" LOOM_JOB_STDERR="$WORK/$id/stderr"
        "${MORE[@]}")
    pack start "$id"
    EXTRA=()
    NATIVE=$(jq_py 'd["native_id"]' 2>/dev/null)
}

# wait_job LOOM_ID STATE SECS: poll the jobs op until the job is in STATE.
wait_job() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        pack jobs
        [ "$RC" = 0 ] && [ "$(jq_py "job('$1').get('state')")" = "$2" ] && return 0
        sleep 0.1
    done
    t_diag "job $1 is not $2 after $3 s: $OUT $ERR" "$(squeue -t all 2>&1)"
    return 1
}

# wait_node NAME STATE SECS
wait_node() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        pack nodes
        [ "$RC" = 0 ] && [ "$(jq_py "node('$1').get('state')")" = "$2" ] && return 0
        sleep 0.1
    done
    t_diag "node $1 is not $2 after $3 s: $OUT $ERR" "$(sinfo -N 2>&1)"
    return 1
}

# --- the cluster as the wrappers show it ---------------------------------

pack nodes
t_is "$RC" 0 "nodes: pbsnodes -a answers"
t_ok "$(is_json "$OUT"; echo $?)" "nodes: the answer is JSON"
t_is "$(jq_py '[n["name"] for n in d["items"]]')" '["n1", "n2", "n3", "n4"]' \
    "nodes: n1..n4"
t_is "$(jq_py 'sorted(set(n["state"] for n in d["items"]))')" '["idle"]' \
    "nodes: all idle"
t_is "$(jq_py '[node("n1")["cpus"], node("n1")["memory_mb"]]')" '[2, 2048]' \
    "nodes: cpus from np, memory from the wrappers' availmem"

pack queues
t_is "$RC" 0 "queues: qstat -Q -f answers"
t_is "$(jq_py 'd["items"]')" \
    '[{"name": "debug", "state": "open", "nodes": 4, "max_walltime_s": null}]' \
    "queues: the debug partition, open, 4 nodes"

pack jobs
t_is "$RC" 0 "jobs: qstat -f with no job (the wrappers exit 153) answers"
t_is "$OUT" '{"complete":true,"items":[]}' "jobs: an empty, complete list"

# --- start: qsub -h with the nodes named, then qrls ----------------------

start_job 101 n2 1 'echo "job 101 in $(pwd)"; sleep 60'
t_is "$RC" 0 "start: 101 on n2 (stderr: $ERR)"
t_like "$NATIVE" '^[0-9]+$' "start: answers the Slurm job id"
N101=$NATIVE
wait_job 101 running 15
t_ok $? "jobs: 101 runs"
t_is "$(jq_py "job('101')['nodes']")" '["n2"]' "jobs: 101 runs on n2, as asked"
t_is "$(jq_py "[job('101')['native_id'], job('101')['name']]")" \
    "[\"$N101\", \"loom-101\"]" "jobs: native id and the name loom-101"
t_is "$(squeue -h -j "$N101" -o %N)" n2 "squeue agrees: n2"

start_job 101 n3 1 'sleep 60'
t_is "$RC/$NATIVE" "0/$N101" "start again: the same job, not a second one"
t_is "$(squeue -h -n loom-101 -o %i | wc -l)" 1 "squeue: one job named loom-101"

start_job 102 n3,n4 2 'sleep 60'
t_is "$RC" 0 "start: 102 on n3 and n4 with 2 cpus each"
N102=$NATIVE
wait_job 102 running 15
t_ok $? "jobs: 102 runs"
t_is "$(jq_py "job('102')['nodes']")" '["n3", "n4"]' "jobs: 102 on n3 and n4"
t_is "$(squeue -h -j "$N102" -o '%N %C')" 'n[3-4] 4' "squeue agrees: n[3-4], 4 cpus"

pack nodes
t_is "$(jq_py '[node(n)["state"] for n in ("n1", "n2", "n3", "n4")]')" \
    '["idle", "mixed", "allocated", "allocated"]' \
    "nodes: n2 mixed (1 of 2 cpus), n3 and n4 allocated"

# --- hold and release of a pending job ------------------------------------

start_job 103 n2 2 'sleep 60'
t_is "$RC" 0 "start: 103 on n2 with 2 cpus (n2 has 1 free: it waits)"
N103=$NATIVE
wait_job 103 pending 10
t_ok $? "jobs: 103 pending"
pack hold "$N103"
t_is "$RC" 0 "hold: qhold -h u (stderr: $ERR)"
wait_job 103 held 10
t_ok $? "jobs: 103 held (Q with priority 0)"
pack release "$N103"
t_is "$RC" 0 "release: qrls -h u (stderr: $ERR)"
wait_job 103 pending 10
t_ok $? "jobs: 103 pending again"

# --- cancel -----------------------------------------------------------------

pack cancel "$N103"
t_is "$RC" 0 "cancel: a pending job"
wait_job 103 cancelled 10
t_ok $? "jobs: 103 cancelled"
pack cancel "$N101"
t_is "$RC" 0 "cancel: a running job"
wait_job 101 cancelled 10
t_ok $? "jobs: 101 cancelled (the pack noted its qdel; the wrappers show C)"
t_like "$(jq_py "job('101')['end_time']")" '^[0-9]+$' "jobs: 101 has an end time"
pack cancel "$N101"
t_is "$RC" 0 "cancel: again, of the ended job: success"
pack cancel 999999
t_is "$RC" 0 "cancel: a job Slurm does not know counts as ended"

# --- a job that ends by itself ----------------------------------------------

start_job 104 n1 1 'echo "job 104 in $(pwd) as $(id -un)"'
t_is "$RC" 0 "start: 104 on n1"
N104=$NATIVE
t_is "$(squeue -h -u "$ALICE" -t all -o '%i %u' | grep "^$N104 ")" "$N104 $ALICE" \
    "squeue -u $ALICE lists it as hers: qsub ran as the job's account"
wait_job 104 completed 20
t_ok $? "jobs: 104 completed"
t_is "$(cat "$WORK/104/stdout" 2>&1)" "job 104 in $WORK/104 as $ALICE" \
    "104 ran its script (carried in the wrapper) in its directory, as $ALICE; stdout where Loom asked"
t_is "$(jq_py "[job('104')['nodes'], job('104')['exit_code']]")" '[["n1"], null]' \
    "jobs: on n1; the wrappers give no exit status"

# --- node state ---------------------------------------------------------------

EXTRA=(LOOM_REASON='loom: "firmware" update')
pack set-node-state n1 drain
EXTRA=()
t_is "$RC" 0 "set-node-state n1 drain: pbsnodes -o -N (stderr: $ERR)"
wait_node n1 drained 10
t_ok $? "nodes: n1 drained"
t_is "$(jq_py 'node("n1")["reason"]')" 'loom: "firmware" update' \
    "nodes: the reason, quotes and all"
t_is "$(sinfo -h -n n1 -o %T)" drained "sinfo agrees"
pack set-node-state n1 up
t_is "$RC" 0 "set-node-state n1 up: pbsnodes -c"
wait_node n1 idle 10
t_ok $? "nodes: n1 idle again"
pack set-node-state n1 sideways
t_is "$RC" 1 "set-node-state: an unknown state is a permanent failure"
pack set-node-state nX down
t_is "$RC" 1 "set-node-state: an unknown node is a permanent failure"

# --- what the wrappers do not have ------------------------------------------

pack suspend "$N102"
t_is "$RC" 2 "suspend: not supported (no qsig): status 2"
pack resume "$N102"
t_is "$RC" 2 "resume: not supported: status 2"
MORE=(LOOM_PBS_RUN=qrun)
start_job 105 n1 1 'true'
MORE=()
t_is "$RC" 1 "start with env.LOOM_PBS_RUN = qrun: refused (the wrappers have no qrun)"
t_like "$ERR" 'no qrun' "start: the message says why"
t_is "$(squeue -h -n loom-105 -o %i | wc -l)" 0 "start: nothing was submitted"


# --- Slurm's controller gone: temporary failures ----------------------------

pack cancel "$N102"
wait_job 102 cancelled 10 # its processes gone before slurmctld is
slurm_kill_ctld
pack jobs
t_is "$RC" 75 "jobs: slurmctld down is a temporary failure (75)"
t_like "$ERR" 'qstat -f failed' "jobs: the message names the command"
pack nodes
t_is "$RC" 75 "nodes: slurmctld down: 75"
pack hold 102
t_is "$RC" 75 "hold: slurmctld down: 75 (stderr: $ERR)"

t_done
