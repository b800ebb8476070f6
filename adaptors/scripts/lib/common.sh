# common.sh - what every op of a bundled pack shares.
# SPDX-License-Identifier: MIT
#
# What every op of a bundled pack shares: the protocol's exit
# statuses, a temporary directory, running a CMS command with its output
# kept, and awk with the JSON helpers.
#
# The bundled library of the pbs, lsf and condor packs, installed as
# $(pkgdatadir)/scripts/lib next to them. An op sets PACK_DIR (its own
# directory), PACK_NAME and SHARED_LIB (this directory:
# ${LOOM_PACK_LIB:-$PACK_DIR/../lib}), then sources this; a pack's own
# helpers and parsers stay in its lib/. Pathname expansion is off (set -f):
# no word a CMS prints is a pattern.
#
#   fail STATUS MSG...  MSG on stderr (its first line is what Loom shows),
#                       then exit STATUS: 1 permanent, 2 not supported,
#                       75 temporary (the CMS is down or busy).
#   run CMD ARGS...     CMD's stdout in $TMPD/out, stderr in $TMPD/err,
#                       stdin /dev/null; returns CMD's status (127 when
#                       CMD is not there).
#   said                the first non-empty line CMD wrote (stderr, else
#                       stdout), for messages.
#   awkf FILE.awk... -- AWK ARGS: awk with json.awk and time.awk of this
#                       library and the named parsers of the pack's lib/
#                       ($LOOM_AWK, default awk).
#   shq WORD            WORD quoted for sh ('it'\''s').
#   tz_offset           seconds east of UTC of the local time zone now.
#   run_submit CMD...   run, but with LC_ALL as loomd gave it: sbatch (under
#                       Slurm's qsub) and bsub copy their environment into
#                       the job.
#   run_submit_as FILE CMD...
#                       run_submit as the job's account (LOOM_JOB_ACCOUNT,
#                       through loom-runas: LOOM_RUNAS), in LOOM_JOB_WORKDIR
#                       when set, with FILE on stdin; loom-runas ends CMD
#                       after LOOM_TIMEOUT_S seconds (loomd cannot signal
#                       the account's processes).
#   mark_cancelled ID / cancelled_file: the native ids this pack cancelled,
#                       one a line, in $LOOM_STATE_DIR (so that `jobs` can
#                       tell "cancelled" from "failed" where the CMS cannot).
#   not_found, prune_cancelled, valid_name, num: see their comments.

set -u -f
PACK_LC_ALL=${LC_ALL-}
PACK_LC_ALL_SET=${LC_ALL+set}
LC_ALL=C # awk on bytes; the CMS's messages in English
export LC_ALL
AWK=${LOOM_AWK:-awk}
LIB=$PACK_DIR/lib

fail() {
    st=$1
    shift
    printf '%s\n' "$*" >&2
    exit "$st"
}

TMPD=$(mktemp -d "${TMPDIR:-/tmp}/loom-$PACK_NAME.XXXXXX") ||
    fail 75 "cannot make a temporary directory in ${TMPDIR:-/tmp}"
trap 'rm -rf "$TMPD"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
trap 'exit 129' HUP

run() {
    "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
}

run_submit() {
    (
        if [ -n "$PACK_LC_ALL_SET" ]; then
            LC_ALL=$PACK_LC_ALL
            export LC_ALL
        else
            unset LC_ALL
        fi
        "$@" >"$TMPD/out" 2>"$TMPD/err" </dev/null
    )
}

run_submit_as() {
    _in=$1
    shift
    [ -n "${LOOM_JOB_ACCOUNT:-}" ] || fail 1 "no account to run as (LOOM_JOB_ACCOUNT)"
    [ -n "${LOOM_RUNAS:-}" ] || fail 1 "no loom-runas (LOOM_RUNAS)"
    if [ -n "${LOOM_JOB_WORKDIR:-}" ]; then
        set -- -C "$LOOM_JOB_WORKDIR" -t "${LOOM_TIMEOUT_S:-30}" -- "$@"
    else
        set -- -t "${LOOM_TIMEOUT_S:-30}" -- "$@"
    fi
    (
        if [ -n "$PACK_LC_ALL_SET" ]; then
            LC_ALL=$PACK_LC_ALL
            export LC_ALL
        else
            unset LC_ALL
        fi
        "$LOOM_RUNAS" run "$LOOM_JOB_ACCOUNT" "$@" >"$TMPD/out" \
            2>"$TMPD/err" <"$_in"
    )
}

said() {
    s=$(grep -v '^[[:space:]]*$' "$TMPD/err" 2>/dev/null | head -n 1)
    [ -n "$s" ] || s=$(grep -v '^[[:space:]]*$' "$TMPD/out" 2>/dev/null | head -n 1)
    printf '%s' "${s:-no message}"
}

# said_matches ERE: 0 when the last command's messages match ERE (case
# ignored).
said_matches() {
    grep -qiE "$1" "$TMPD/err" "$TMPD/out" 2>/dev/null
}

# fail_cmd WHAT STATUS TEMPORARY_ERE: exit for a failed command: 75 when its
# messages match TEMPORARY_ERE (the CMS is down or busy: trying again later
# may work), else 1.
fail_cmd() {
    if said_matches "$3"; then
        fail 75 "$1 failed (status $2): $(said)"
    fi
    fail 1 "$1 failed (status $2): $(said)"
}

# not_found STATUS CMD: exit 1 with a clear message when CMD was not found.
not_found() {
    [ "$1" = 127 ] || [ "$1" = 126 ] || return 0
    fail 1 "$2: command not found or not executable (PATH=$PATH); set the" \
        "cluster's env.$BIN_VAR to the directory of the $PACK_NAME commands"
}

awkf() {
    af="-f $SHARED_LIB/json.awk -f $SHARED_LIB/time.awk"
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        af="$af -f $LIB/$1"
        shift
    done
    [ $# -gt 0 ] && shift
    # shellcheck disable=SC2086 # af holds options, lib paths have no blanks
    "$AWK" $af "$@"
}

shq() {
    printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}

tz_offset() {
    z=$(date +%z 2>/dev/null)
    case $z in
    [+-][0-9][0-9][0-9][0-9]) ;;
    *) echo 0; return ;;
    esac
    h=${z#?}
    m=${h#??}
    h=${h%??}
    o=$(( (${h#0} + 0) * 3600 + (${m#0} + 0) * 60 ))
    case $z in -*) o=$((-o)) ;; esac
    echo "$o"
}

cancelled_file() {
    if [ -n "${LOOM_STATE_DIR:-}" ] && [ -d "$LOOM_STATE_DIR" ]; then
        echo "$LOOM_STATE_DIR/$PACK_NAME-cancelled"
    else
        echo /dev/null
    fi
}

mark_cancelled() {
    f=$(cancelled_file)
    [ "$f" = /dev/null ] || printf '%s\n' "$1" >>"$f"
}

# prune_cancelled KEEP: the cancelled ids still listed by the CMS (KEEP, a
# file the jobs parser wrote) replace the list, so it does not grow.
prune_cancelled() {
    f=$(cancelled_file)
    [ "$f" != /dev/null ] && [ -f "$f" ] || return 0
    cp "$1" "$f.new" 2>/dev/null && mv -f "$f.new" "$f"
}

# valid_name WORD: a host or job id we pass to a CMS command (no blanks,
# quotes or shell metacharacters).
valid_name() {
    case $1 in
    "" | -* | *[!A-Za-z0-9._@:/+%#\[\]-]*) return 1 ;;
    esac
    return 0
}

# num WORD DEFAULT: WORD when it is a non-negative integer, else DEFAULT.
num() {
    case $1 in
    "" | *[!0-9]*) echo "$2" ;;
    *) echo "$1" ;;
    esac
}
