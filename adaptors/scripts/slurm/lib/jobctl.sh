# jobctl.sh - shared by cancel, suspend, resume, hold and release: run one
# Slurm command on the native job id given as $1. SPDX-License-Identifier: MIT
#
# job_ctl OK_PATTERN CMD... : run CMD with the id appended; success when it
# exits 0, or when its stderr matches the shell pattern OK_PATTERN (the
# wanted end state is already there: resuming a running job); else exit 75
# or 1 (lib/error.awk).

JOB=${1:-}
need_arg "$JOB" "the native job id"
case $JOB in
*[!0-9_]*) fail 1 "$OP: not a Slurm job id: $JOB" ;;
esac

job_ctl() {
    _ok=$1
    shift
    "$@" "$JOB" >"$OUT" 2>"$ERR" && exit 0
    _rc=$?
    if [ -n "$_ok" ]; then
        err_text
        # shellcheck disable=SC2254 # _ok is a pattern
        case $ERRTXT in
        $_ok) exit 0 ;;
        esac
    fi
    slurm_fail "$1" "$_rc"
}
