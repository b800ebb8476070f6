# local.sh - helpers for the tests of the local executor: what the kernel
# says of a job's processes and cgroups (the accounts they run as are the
# harness's: t_account).
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh:
#   . "$LOOM_TOP_SRCDIR/tests/lib/local.sh"
#
# cgroups:  frozen PID: 1 when the cgroup loomd froze PID in is frozen (v2
#           cgroup.events, else the v1 freezer), 0 when not, "none" when
#           PID is in no freezable cgroup of loomd's. job_cgroup ID
#           HIERARCHY: the job's cgroup directory in a hierarchy
#           ("unified", "memory", "cpu", "pids", "freezer") from the
#           cluster's cgroups file; job_procs ID: the pids in the job's
#           cgroup, one a line.
# Processes: pstate PID: the one-letter state in /proc, or "gone".

pstate() {
    awk '/^State:/{print $2; f=1} END{if (!f) print "gone"}' \
        "/proc/$1/status" 2>/dev/null || echo gone
}

# The mount point of a cgroup hierarchy ("unified" or a v1 controller).
cg_mount() {
    if [ "$1" = unified ]; then
        awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
            /proc/self/mountinfo | head -n 1
    else
        awk -v c="$1" '{ for (i = 7; i <= NF; i++) if ($i == "-") {
            if ($(i + 1) == "cgroup" && ("," $(i + 3) ",") ~ ("," c ",")) print $5; break } }' \
            /proc/self/mountinfo | head -n 1
    fi
}

frozen() {
    local line path v2 v1 ev
    v2=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
    v1=$(awk -F: '$2 ~ /(^|,)freezer(,|$)/ { print $3 }' "/proc/$1/cgroup" 2>/dev/null)
    if [[ $v2 == */loom.jobs/* ]]; then
        ev=$(cat "$(cg_mount unified)$v2/cgroup.events" 2>/dev/null)
        [[ $ev == *"frozen 1"* ]] && echo 1 || echo 0
    elif [[ $v1 == */loom.jobs/* ]]; then
        [ "$(cat "$(cg_mount freezer)$v1/freezer.state" 2>/dev/null)" = FROZEN ] &&
            echo 1 || echo 0
    else
        echo none
    fi
}

# job_cgroup ID HIERARCHY [CLUSTER]: see above (the first cluster's file
# when CLUSTER is not given).
job_cgroup() {
    local f=$T/state/clusters/${3:-*}/cgroups d
    d=$(awk -v h="$2" '$1 == h || ("," $1 ",") ~ ("," h ",") { print $2; exit }' $f 2>/dev/null)
    [ -n "$d" ] && echo "$d/$1"
}

job_procs() {
    local d
    d=$(job_cgroup "$1" unified "${2:-*}")
    [ -n "$d" ] || d=$(job_cgroup "$1" freezer "${2:-*}")
    cat "$d/cgroup.procs" 2>/dev/null
}
