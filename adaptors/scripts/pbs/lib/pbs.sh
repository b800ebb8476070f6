# pbs.sh - the pbs pack's own shell helpers.
# SPDX-License-Identifier: MIT
#
# The pbs pack's own helpers: where the commands are, which PBS
# this is, what an error message means, and jobs by native or Loom id.
#
# Sourced after common.sh. Environment (the cluster's env.* settings):
#   LOOM_PBS_BIN      directory of the PBS commands (default: PATH, which
#                     Loom sets to /usr/local/bin:/usr/bin:/bin)
#   LOOM_PBS_FLAVOR   torque | openpbs | slurm (Slurm's Torque wrappers) |
#                     auto (default: asks `qstat --version`)
#   PBS_DEFAULT, PBS_SERVER, ... are the CMS's own and passed through.

BIN_VAR=LOOM_PBS_BIN

pbs_bin() {
    if [ -n "${LOOM_PBS_BIN:-}" ]; then
        printf '%s/%s' "${LOOM_PBS_BIN%/}" "$1"
    else
        printf '%s' "$1"
    fi
}

PBSNODES=$(pbs_bin pbsnodes)
QSTAT=$(pbs_bin qstat)
QSUB=$(pbs_bin qsub)
QDEL=$(pbs_bin qdel)
QHOLD=$(pbs_bin qhold)
QRLS=$(pbs_bin qrls)
QRUN=$(pbs_bin qrun)
QMOVE=$(pbs_bin qmove)
QSIG=$(pbs_bin qsig)
PBS_RSUB=$(pbs_bin pbs_rsub)
PBS_RDEL=$(pbs_bin pbs_rdel)

# pbs_flavor: FLAVOR=torque|openpbs|slurm, from LOOM_PBS_FLAVOR or, for
# auto, from `qstat --version`: OpenPBS prints "pbs_version = 22.05.11",
# Torque "Version: 6.1.3"; Slurm's perl wrapper rejects the option
# ("Unknown option: version"); a qstat that mentions Slurm is the wrapper.
pbs_flavor() {
    case ${LOOM_PBS_FLAVOR:-auto} in
    torque | openpbs | slurm)
        FLAVOR=$LOOM_PBS_FLAVOR
        return 0
        ;;
    auto) ;;
    *) fail 1 "env.LOOM_PBS_FLAVOR must be torque, openpbs, slurm or auto" \
        "(got '$LOOM_PBS_FLAVOR')" ;;
    esac
    run "$QSTAT" --version
    st=$?
    not_found "$st" "$QSTAT"
    if grep -q 'pbs_version' "$TMPD/out" "$TMPD/err"; then
        FLAVOR=openpbs
    elif [ "$st" = 0 ] && grep -qi 'version' "$TMPD/out" "$TMPD/err"; then
        FLAVOR=torque
    elif grep -q '^Unknown option: version' "$TMPD/err"; then
        FLAVOR=slurm # perl's Getopt::Long
    else
        p=$(command -v "$QSTAT" 2>/dev/null)
        if [ -n "$p" ] && grep -q 'Slurm' "$p" 2>/dev/null; then
            FLAVOR=slurm
        else
            FLAVOR=torque
        fi
    fi
}

# pbs_temporary: 0 when the last command's messages say that the server is
# unreachable or busy, so that trying again later may work.
PBS_TEMPORARY='cannot connect|connection refused|could not connect|communication failure|timed? ?out|no route to host|network is unreachable|unable to (contact|communicate)|server .*(down|not available|unavailable)|errno=150(10|31)|problem loading|unable to contact slurm|temporarily unavailable|try again|end of file'
pbs_temporary() {
    said_matches "$PBS_TEMPORARY"
}

# pbs_gone: 0 when the last command said the job is not (or no longer) known.
PBS_GONE='unknown job|invalid job id|job has finished|has already finished|does not exist|no such job|job not found'
pbs_gone() {
    said_matches "$PBS_GONE"
}

# pbs_failed WHAT STATUS: exit for a failed job or node command: 75 when
# the server is unreachable, else 1.
pbs_failed() {
    fail_cmd "$1" "$2" "$PBS_TEMPORARY"
}

# pbs_qstat_f [ID]: `qstat -f` (OpenPBS: -x too, for finished jobs kept in
# the history) into $TMPD/qstat. 0; 3 when the server knows no such job
# (Torque and the Slurm wrappers exit 153 when nothing matched); 4 on any
# other failure (the messages are in $TMPD/err).
pbs_qstat_f() {
    if [ "$FLAVOR" = openpbs ]; then
        run "$QSTAT" -x -f "$@"
    else
        run "$QSTAT" -f "$@"
    fi
    st=$?
    not_found "$st" "$QSTAT"
    if [ "$st" = 0 ]; then
        mv "$TMPD/out" "$TMPD/qstat"
        return 0
    fi
    if [ "$st" = 153 ] && [ ! -s "$TMPD/out" ] && [ $# = 0 ]; then
        : >"$TMPD/qstat"
        return 0
    fi
    if [ $# -gt 0 ] && pbs_gone; then
        return 3
    fi
    if [ "$st" = 153 ] && [ $# -gt 0 ] && ! pbs_temporary; then
        return 3
    fi
    QSTAT_STATUS=$st
    return 4
}

# pbs_job_list: $TMPD/qstat as lines "native<TAB>state<TAB>loom id".
pbs_job_list() {
    awkf jobs.awk -- -v MODE=list -v FLAVOR="$FLAVOR" -v TZOFF=0 \
        -v CANCELLED=/dev/null "$TMPD/qstat"
}

# pbs_find_loom ID: "native<TAB>state" of the job that carries Loom id ID
# (one not yet finished first), or nothing.
pbs_find_loom() {
    pbs_job_list | "$AWK" -F '\t' -v id="$1" '
        $3 == id { if ($2 ~ /^(completed|failed|cancelled)$/) done = $1 "\t" $2
                   else if (live == "") live = $1 "\t" $2 }
        END { if (live != "") print live; else if (done != "") print done }'
}

# pbs_job_id ID: exit 1 unless ID looks like a PBS job id.
pbs_job_id() {
    valid_name "$1" || fail 1 "'$1' is not a PBS job id"
}

# pbs_simple WHAT CMD ARGS...: run a job or node command; answer {} when
# it worked, else exit as pbs_failed says.
pbs_simple() {
    what=$1
    shift
    run "$@"
    st=$?
    not_found "$st" "$1"
    [ "$st" = 0 ] || pbs_failed "$what" "$st"
    echo '{}'
    exit 0
}

# pbs_state_of ID: the protocol state of job ID in $TMPD/qstat (after
# pbs_qstat_f ID), or nothing.
pbs_state_of() {
    pbs_job_list | "$AWK" -F '\t' -v id="$1" '
        $1 == id || index($1, id ".") == 1 || index(id, $1 ".") == 1 {
            print $2; exit }'
}
