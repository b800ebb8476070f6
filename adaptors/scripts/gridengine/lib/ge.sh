# ge.sh - shared helpers of the Grid Engine script pack (POSIX sh, sourced).
# SPDX-License-Identifier: MIT
#
# Every op sources this file first. It sets:
#   GE_BIN    the real Grid Engine binaries (LOOM_GE_BIN, default
#             /usr/lib/gridengine): Debian's /usr/bin/q* are wrapper scripts
#             that cost 60-110 ms a call, the binaries 5-10 ms.
#   GE_LIB    this directory (the awk programs live here).
#   GE_STATE  the cluster's state directory (LOOM_STATE_DIR, else "."):
#             gridengine.jobs (jobs seen, see jobs.awk) and gridengine.nodes
#             (drain reasons: Grid Engine has no reason field).
#   GE_QUEUE  the queue Loom places jobs in (LOOM_GE_QUEUE, default all.q).
#   GE_OUT, GE_ERR  where ge_run leaves a command's output (files in the
#             state directory, overwritten by the next run of the same op).
# and exports TZ=UTC: Grid Engine's clients print and read times in local
# time, so with UTC the pack needs no time-zone arithmetic.

GE_BIN=${LOOM_GE_BIN:-/usr/lib/gridengine}
GE_LIB=${LOOM_PACK_DIR:-${0%/*}}/lib
GE_STATE=${LOOM_STATE_DIR:-.}
GE_QUEUE=${LOOM_GE_QUEUE:-all.q}
GE_OP=${LOOM_OP:-${0##*/}}
GE_OUT=$GE_STATE/.gridengine.$GE_OP.out
GE_ERR=$GE_STATE/.gridengine.$GE_OP.err
: "${SGE_ROOT:=/var/lib/gridengine}"
: "${SGE_CELL:=default}"
TZ=UTC
export SGE_ROOT SGE_CELL TZ

# ge_die STATUS MESSAGE: the message (first line of stderr, what Loom
# shows) and the exit status (1 permanent, 2 not supported, 75 temporary).
ge_die() {
    printf 'gridengine: %s: %s\n' "$GE_OP" "$2" >&2
    exit "$1"
}

# ge_said: the first line a failed command printed that says something
# (Grid Engine writes errors to stdout or stderr, depending on the command).
ge_said() {
    awk 'NF && !/^Exiting\.?$/ { sub(/^(error|ERROR|Unable to run job): */, "");
         print; exit }' "$GE_ERR" "$GE_OUT" 2>/dev/null
}

# ge_fail WHAT: exit after a failed Grid Engine command: 75 when the
# qmaster could not be reached (try again later), else 1.
ge_fail() {
    _said=$(ge_said)
    if grep -Eiq 'commlib error|unable to (contact|send message to) qmaster|can.t connect|connection refused|got send error|got select error|gdi request|qmaster is not alive|timed out|timeout' \
        "$GE_ERR" "$GE_OUT" 2>/dev/null; then
        ge_die 75 "Grid Engine qmaster unreachable ($1): ${_said:-no answer}"
    fi
    ge_die 1 "$1: ${_said:-failed}"
}

# ge_run CMD ARGS...: run a Grid Engine command, stdout in GE_OUT, stderr in
# GE_ERR; returns its exit status.
ge_run() {
    _c=$1
    shift
    "$GE_BIN/$_c" "$@" >"$GE_OUT" 2>"$GE_ERR"
}

# ge_must CMD ARGS...: ge_run, and exit through ge_fail when it fails.
ge_must() {
    ge_run "$@" || ge_fail "$1"
}

# ge_native_id ID: refuse anything but a Grid Engine job or AR number
# (also keeps option-like words away from the commands).
ge_native_id() {
    case $1 in
    '' | *[!0-9]*) ge_die 1 "'$1' is not a Grid Engine id" ;;
    esac
}

# ge_state_add LINE: append one line to gridengine.jobs (see jobs.awk).
ge_state_add() {
    printf '%s\n' "$1" >>"$GE_STATE/gridengine.jobs"
}
