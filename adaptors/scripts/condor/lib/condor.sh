# condor.sh - the condor pack's own shell helpers.
# SPDX-License-Identifier: MIT
#
# The condor pack's own helpers: where the commands are, which
# schedd and pool, what an error message means, the ClassAd attributes the
# parsers read.
#
# Sourced after common.sh. Environment (the cluster's env.* settings):
#   LOOM_CONDOR_BIN        directory of the HTCondor tools (default: PATH)
#   LOOM_CONDOR_SCHEDD     a schedd name for -name (default: the local one)
#   LOOM_CONDOR_POOL       a central manager for -pool (default: the
#                          configured one)
#   LOOM_CONDOR_HISTORY_S  how far back `jobs` reads condor_history (3600 s)
#   CONDOR_CONFIG          HTCondor's own, passed through

BIN_VAR=LOOM_CONDOR_BIN

condor_bin() {
    if [ -n "${LOOM_CONDOR_BIN:-}" ]; then
        printf '%s/%s' "${LOOM_CONDOR_BIN%/}" "$1"
    else
        printf '%s' "$1"
    fi
}

CONDOR_STATUS=$(condor_bin condor_status)
CONDOR_Q=$(condor_bin condor_q)
CONDOR_HISTORY=$(condor_bin condor_history)
CONDOR_SUBMIT=$(condor_bin condor_submit)
CONDOR_RM=$(condor_bin condor_rm)
CONDOR_HOLD=$(condor_bin condor_hold)
CONDOR_RELEASE=$(condor_bin condor_release)
CONDOR_SUSPEND=$(condor_bin condor_suspend)
CONDOR_CONTINUE=$(condor_bin condor_continue)
CONDOR_OFF=$(condor_bin condor_off)
CONDOR_ON=$(condor_bin condor_on)
CONDOR_DRAIN=$(condor_bin condor_drain)

# Arguments naming the schedd (condor_q, condor_history, condor_submit,
# condor_rm, ...) and the pool (condor_status, condor_drain, condor_on/off).
set_condor_args() {
    SCHEDD_ARGS=
    POOL_ARGS=
    if [ -n "${LOOM_CONDOR_SCHEDD:-}" ]; then
        valid_name "$LOOM_CONDOR_SCHEDD" || fail 1 "env.LOOM_CONDOR_SCHEDD is not a schedd name"
        SCHEDD_ARGS="-name $LOOM_CONDOR_SCHEDD"
    fi
    if [ -n "${LOOM_CONDOR_POOL:-}" ]; then
        valid_name "$LOOM_CONDOR_POOL" || fail 1 "env.LOOM_CONDOR_POOL is not a host[:port]"
        POOL_ARGS="-pool $LOOM_CONDOR_POOL"
    fi
}
set_condor_args

# The slot attributes nodes.awk reads, free text last (-af:t: tab-separated,
# "undefined" for a missing attribute).
SLOT_ATTRS="Name Machine State Activity SlotType Cpus TotalSlotCpus Memory TotalSlotMemory Gpus TotalSlotGpus DrainReason"
# The job attributes jobs.awk reads; the last is the reason (free text).
JOB_ATTRS="ClusterId ProcId JobStatus Owner LoomId QDate JobStartDate JobCurrentStartDate CompletionDate EnteredCurrentStatus ExitCode ExitBySignal ExitSignal RemoteHost LastRemoteHost Out Err JobBatchName Cmd"
JOB_REASON='ifThenElse(JobStatus == 5, HoldReason, RemoveReason)'

# condor_temporary: 0 when the last command's messages say that a daemon
# (schedd, collector) is unreachable or busy.
CONDOR_TEMPORARY="failed to connect|can't connect|cannot connect|connection refused|can't find address|couldn't contact|failed to fetch ads|unable to locate|timed? ?out|secman|communicate with|try again|no route to host|temporarily"
condor_temporary() {
    said_matches "$CONDOR_TEMPORARY"
}

# condor_gone: 0 when the last command said the job is not (or no longer)
# in the queue.
CONDOR_GONE='not found|couldn.t find|does not exist|no such job|already marked for removal'
condor_gone() {
    said_matches "$CONDOR_GONE"
}

condor_failed() {
    fail_cmd "$1" "$2" "$CONDOR_TEMPORARY"
}

# condor_job_id ID: exit 1 unless ID is CLUSTER.PROC.
condor_job_id() {
    case ${1:-} in
    *.* ) ;;
    *) fail 1 "'${1:-}' is not an HTCondor job id (cluster.proc)" ;;
    esac
    case ${1:-} in
    *[!0-9.]* | .* | *. | *.*.*) fail 1 "'${1:-}' is not an HTCondor job id (cluster.proc)" ;;
    esac
}

# condor_jobs_query FILE ARGS...: condor_q -allusers ARGS -af:t (the job
# attributes) into FILE. Exits 75/1 when condor_q fails.
condor_jobs_query() {
    f=$1
    shift
    # shellcheck disable=SC2086 # SCHEDD_ARGS and JOB_ATTRS are word lists
    run "$CONDOR_Q" $SCHEDD_ARGS -allusers "$@" -af:t $JOB_ATTRS "$JOB_REASON"
    st=$?
    not_found "$st" "$CONDOR_Q"
    [ "$st" = 0 ] || fail 75 "condor_q failed (status $st): $(said)"
    mv "$TMPD/out" "$f"
}

# condor_history_query FILE ARGS...: condor_history ARGS -af:t (the job
# attributes) into FILE; no history file reads as no jobs.
condor_history_query() {
    f=$1
    shift
    # shellcheck disable=SC2086
    run "$CONDOR_HISTORY" $SCHEDD_ARGS "$@" -af:t $JOB_ATTRS "$JOB_REASON"
    st=$?
    not_found "$st" "$CONDOR_HISTORY"
    if [ "$st" != 0 ]; then
        if grep -qi 'history file' "$TMPD/err" && ! condor_temporary; then
            : >"$TMPD/out"
        else
            fail 75 "condor_history failed (status $st): $(said)"
        fi
    fi
    mv "$TMPD/out" "$f"
}

# condor_simple WHAT CMD ARGS...: run a command; answer {} when it worked.
condor_simple() {
    what=$1
    shift
    run "$@"
    st=$?
    not_found "$st" "$1"
    [ "$st" = 0 ] || condor_failed "$what" "$st"
    echo '{}'
    exit 0
}
