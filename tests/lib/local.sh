# local.sh - helpers for the tests of the local executor: Unix accounts of
# their own, and what the kernel says of a job's processes and cgroups.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh:
#   . "$LOOM_TOP_SRCDIR/tests/lib/local.sh"
#
# Accounts: t_account VAR PREFIX makes a new account PREFIX-<6 random>
#           (uid from 1000 up, its own group, home $T/home/NAME made by
#           useradd, shell /bin/sh), sets VAR to its name, and removes it
#           when the test ends, after killing its processes (by pid). Call
#           it in the test's shell, not in $(...): the removal is
#           registered there. useradd and userdel are tried again while
#           another test holds /etc/passwd's lock.
# cgroups:  frozen PID: 1 when the cgroup loomd froze PID in is frozen (v2
#           cgroup.events, else the v1 freezer), 0 when not, "none" when
#           PID is in no freezable cgroup of loomd's. job_cgroup ID
#           HIERARCHY: the job's cgroup directory in a hierarchy
#           ("unified", "memory", "cpu", "pids", "freezer") from the
#           cluster's cgroups file; job_procs ID: the pids in the job's
#           cgroup, one a line. account_procs NAME: the pids of NAME's
#           processes, one a line.
# Processes: pstate PID: the one-letter state in /proc, or "gone".

T_ACCOUNTS=()

# t_account VAR PREFIX: see above. Fails (status 1, a diagnostic) when
# useradd does.
t_account() {
    local name end rc rnd=
    while [ ${#rnd} -lt 6 ]; do
        rnd=$rnd$(head -c 64 /dev/urandom | tr -dc 'a-z0-9')
    done
    name="$2-${rnd:0:6}"
    mkdir -p "$T/home" && chmod 0755 "$T/home" || return 1
    end=$((SECONDS + 60))
    while :; do
        useradd -m -d "$T/home/$name" -s /bin/sh -U -K UID_MIN=1000 \
            "$name" >"$T/useradd.out" 2>&1
        rc=$?
        # 10: cannot lock /etc/passwd (another test holds it)
        [ "$rc" = 10 ] && ((SECONDS < end)) || break
        sleep 0.2
    done
    if [ "$rc" != 0 ]; then
        t_diag "useradd $name failed ($rc): $(cat "$T/useradd.out")"
        return 1
    fi
    [ ${#T_ACCOUNTS[@]} -gt 0 ] || t_cleanup t_accounts_remove
    T_ACCOUNTS+=("$name")
    printf -v "$1" '%s' "$name"
}

# Kill the test accounts' processes (by pid, until none is left) and
# remove the accounts.
t_accounts_remove() {
    local name pids i end
    for name in "${T_ACCOUNTS[@]}"; do
        for ((i = 0; i < 50; i++)); do
            pids=$(account_procs "$name")
            [ -n "$pids" ] || break
            kill -KILL $pids 2>/dev/null
            sleep 0.1
        done
        end=$((SECONDS + 60))
        while ! userdel "$name" >"$T/userdel.out" 2>&1; do
            grep -q 'lock' "$T/userdel.out" && ((SECONDS < end)) || {
                echo "# userdel $name: $(cat "$T/userdel.out")" >&2
                break
            }
            sleep 0.2
        done
    done
}

account_procs() {
    ps -o pid= -u "$1" 2>/dev/null | tr -d ' '
}

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
