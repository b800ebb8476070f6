# lsf.sh - the lsf pack's own shell helpers.
# SPDX-License-Identifier: MIT
#
# The lsf pack's own helpers: where the commands are, what an
# error message means, and jobs by native id or by Loom id.
#
# Sourced after common.sh. Environment (the cluster's env.* settings):
#   LOOM_LSF_BIN   directory of the LSF commands ($LSF_BINDIR; default PATH)
#   LSF_ENVDIR     where lsf.conf is (LSF's own; needed unless /etc/lsf.conf)
#   LSB_NTRIES     how often a command tries to reach mbatchd; LSF's default
#                  is for ever, this pack's 3 (a poll must end)

BIN_VAR=LOOM_LSF_BIN
LSB_NTRIES=${LSB_NTRIES:-3}
export LSB_NTRIES

lsf_bin() {
    if [ -n "${LOOM_LSF_BIN:-}" ]; then
        printf '%s/%s' "${LOOM_LSF_BIN%/}" "$1"
    else
        printf '%s' "$1"
    fi
}

BHOSTS=$(lsf_bin bhosts)
LSHOSTS=$(lsf_bin lshosts)
BJOBS=$(lsf_bin bjobs)
BQUEUES=$(lsf_bin bqueues)
BSUB=$(lsf_bin bsub)
BKILL=$(lsf_bin bkill)
BSTOP=$(lsf_bin bstop)
BRESUME=$(lsf_bin bresume)
BADMIN=$(lsf_bin badmin)
BRSVADD=$(lsf_bin brsvadd)
BRSVDEL=$(lsf_bin brsvdel)

# The bjobs fields the jobs parser reads, in its order; the job name last
# (it may hold the delimiter).
BJOBS_FORMAT="jobid stat user queue exit_code submit_time start_time finish_time exec_host output_file error_file job_name delimiter=';'"

# lsf_temporary: 0 when the last command's messages say that LSF is down or
# busy, so that trying again later may work.
LSF_TEMPORARY='lsf is down|not responding|cannot connect|connection refused|timed? ?out|lim is down|please wait|try again|failed in an lsf library call|lsb_init|unable to contact|communication|master lim|mbatchd'
lsf_temporary() {
    said_matches "$LSF_TEMPORARY"
}

# lsf_gone: 0 when the last command said the job is not, or no longer, known.
LSF_GONE='no matching job found|has already finished|no job found|is not found|job not found'
lsf_gone() {
    said_matches "$LSF_GONE"
}

# lsf_failed WHAT STATUS: exit for a failed command: 75 when LSF is
# unreachable, else 1.
lsf_failed() {
    fail_cmd "$1" "$2" "$LSF_TEMPORARY"
}

# lsf_job_id ID: exit 1 unless ID looks like an LSF job id (123, 123[4]).
lsf_job_id() {
    case ${1:-} in
    "" | *[!]0-9[]*) fail 1 "'${1:-}' is not an LSF job id" ;;
    esac
}

# lsf_bjobs ARGS...: bjobs -o (the fields above) -noheader ARGS into
# $TMPD/bjobs. 0; 3 when bjobs found no job; 4 on another failure.
lsf_bjobs() {
    run "$BJOBS" -o "$BJOBS_FORMAT" -noheader "$@"
    st=$?
    not_found "$st" "$BJOBS"
    mv "$TMPD/out" "$TMPD/bjobs"
    : >"$TMPD/out"
    if grep -qiE 'no (unfinished |matching )?job (found|.*found)|is not found' "$TMPD/err"; then
        [ -s "$TMPD/bjobs" ] && return 0
        return 3
    fi
    [ "$st" = 0 ] && return 0
    BJOBS_STATUS=$st
    return 4
}

# lsf_job_lines: $TMPD/bjobs as lines "native<TAB>state<TAB>loom id<TAB>LSF stat".
lsf_job_lines() {
    awkf jobs.awk -- -v MODE=list -v TZOFF=0 -v NOW=0 \
        -v CANCELLED=/dev/null "$TMPD/bjobs"
}

# lsf_stat ID: LSF's status of job ID (PEND, PSUSP, RUN, ...), or nothing
# when LSF does not know it. Exits 75/1 when bjobs fails.
lsf_stat() {
    lsf_bjobs "$1"
    case $? in
    0) lsf_job_lines | "$AWK" -F '\t' -v id="$1" '$1 == id { print $4; exit }' ;;
    3) ;;
    *) lsf_failed "bjobs $1" "${BJOBS_STATUS:-?}" ;;
    esac
}

# lsf_simple WHAT CMD ARGS...: run a command; answer {} when it worked.
lsf_simple() {
    what=$1
    shift
    run "$@"
    st=$?
    not_found "$st" "$1"
    [ "$st" = 0 ] || lsf_failed "$what" "$st"
    echo '{}'
    exit 0
}
