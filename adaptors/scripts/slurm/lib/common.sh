# common.sh - sourced by every op of Loom's Slurm pack (POSIX sh).
# SPDX-License-Identifier: MIT
#
# Sets PACK_LIB (this directory), OP (the op's name), OUT and ERR (scratch
# files for a Slurm command's stdout and stderr: in $LOOM_STATE_DIR, which
# is also the working directory, reused from run to run so that an op costs
# no mktemp/rm; a private temp dir when run by hand without it) and gives:
#   fail STATUS MESSAGE   print MESSAGE on stderr, exit STATUS
#   out_kept              exit 75 when the state directory is full: what a
#                         Slurm command wrote to $OUT or $ERR may be cut
#                         short, for Slurm's commands exit 0 when their
#                         output could not be written (a squeue cut short
#                         would read as jobs gone, an empty one as no job
#                         to adopt). Before $OUT or $ERR is read.
#   slurm_fail CMD RC     map CMD's failure (stderr in $ERR) to exit 75
#                         (controller unreachable or busy, or out_kept) or
#                         1, and exit
#   jawk PROGRAM ARGS...  out_kept, then awk with json.awk, hostlist.awk
#                         and PROGRAM.awk (its status: 0, 3, or exit 75)
#   err_text              out_kept, then ERRTXT = the contents of $ERR (no
#                         fork)
# Slurm commands get SLURM_TIME_FORMAT=%s (epoch seconds) on their own
# command line, never exported: a job that sbatch submits inherits our
# environment.

case $0 in
*/*) PACK_LIB=${0%/*}/lib ;;
*) PACK_LIB=./lib ;;
esac
OP=${0##*/}
if [ -n "${LOOM_STATE_DIR:-}" ]; then
    [ -d "$LOOM_STATE_DIR" ] && [ -w "$LOOM_STATE_DIR" ] || {
        echo "$OP: the state directory $LOOM_STATE_DIR is not a writable directory" >&2
        exit 75
    }
    OUT=$LOOM_STATE_DIR/.slurm-$OP.out
    ERR=$LOOM_STATE_DIR/.slurm-$OP.err
else
    PACK_TMP=$(mktemp -d "${TMPDIR:-/tmp}/loom-slurm.XXXXXX") || exit 75
    trap 'rm -rf "$PACK_TMP"' EXIT
    OUT=$PACK_TMP/out
    ERR=$PACK_TMP/err
fi

fail() {
    printf '%s\n' "$2" >&2
    exit "$1"
}

# Whether one more byte fits: the probe is left empty, so that it holds no
# page of the file system between two ops (a tmpfs gives a file's freed
# page back to the next write, whatever else is full).
out_kept() {
    [ -n "${LOOM_STATE_DIR:-}" ] || return 0
    _probe=$LOOM_STATE_DIR/.slurm-$OP.room
    if : >"$_probe" && printf x >>"$_probe" 2>/dev/null; then
        : >"$_probe"
        return 0
    fi
    : >"$_probe" 2>/dev/null
    fail 75 "$OP: the state directory $LOOM_STATE_DIR is full (no space left on device): Slurm's answer cannot be kept there"
}

# Slurm's commands retry a missing configuration file for 60 s.
if [ -n "${SLURM_CONF:-}" ] && [ ! -r "$SLURM_CONF" ]; then
    fail 75 "$OP: SLURM_CONF=$SLURM_CONF: no such readable file"
fi

# jawk's status is awk's when 0 or 3 (jobs.awk: exit codes wanted); any
# other (awk's 2 would read as "not supported") is a temporary failure.
jawk() {
    out_kept
    _p=$1
    shift
    LC_ALL=C awk -f "$PACK_LIB/json.awk" -f "$PACK_LIB/hostlist.awk" \
        -f "$PACK_LIB/$_p.awk" "$@"
    _st=$?
    case $_st in
    0 | 3) return "$_st" ;;
    esac
    fail 75 "$OP: awk failed with status $_st on Slurm's output ($PACK_LIB/$_p.awk)"
}

slurm_fail() {
    out_kept
    _r=$(LC_ALL=C awk -v cmd="$1" -v rc="$2" -f "$PACK_LIB/error.awk" "$ERR")
    _code=${_r%%"	"*}
    _msg=${_r#*"	"}
    case $_code in
    1 | 75 | "?") ;;
    *)
        _code=75
        _msg="$1: failed with status $2 (and its message could not be read)"
        ;;
    esac
    if [ "$_code" = "?" ]; then
        case $(scontrol ping 2>/dev/null) in
        *"is UP"*) _code=1 ;;
        *)
            _code=75
            _msg="$_msg (the Slurm controller does not answer scontrol ping)"
            ;;
        esac
    fi
    fail "$_code" "$_msg"
}

err_text() {
    out_kept
    ERRTXT=
    while IFS= read -r _l || [ -n "$_l" ]; do
        ERRTXT="$ERRTXT$_l
"
    done <"$ERR"
}

# need_arg VALUE WHAT: a missing argument is a permanent failure.
need_arg() {
    [ -n "$1" ] || fail 1 "$OP: missing argument: $2"
}
