#!/usr/bin/env bash
# 2004-local-confine.t - the local executor confines each job in cgroups of
# its own, checked in the kernel's files: /v1/clusters says what is
# enforced (and that confine = no is unconfined, and why); a job's setsid
# and double-forked children do not outlive its walltime or its cancel
# (counted in its cgroup and by ps -u); memory_mb is a hard limit (an
# over-allocating job ends "out of memory (memory_mb 50)"); a 1-cpu job
# cannot use 2 cpus; suspend freezes every process of the job and resume
# thaws them. Jobs run as carol-XXXXXX, an account this test makes.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# jstr TEXT: TEXT as a JSON string.
jstr() {
    python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"
}

# gone ID: nothing of the job left, in its cgroup nor of the account (its
# supervisor may take a moment to exit after writing its end).
gone() {
    [ "$(job_procs "$1" | wc -l)" = 0 ] && [ "$(account_procs "$CAROL" | wc -l)" = 0 ]
}

# The CPU time the job's cgroup used, in microseconds: cpu.stat of its v2
# cgroup (there with or without the cpu controller), else its processes'
# utime + stime.
cpu_usec() {
    local d
    d=$(job_cgroup "$1" unified)
    if [ -n "$d" ] && [ -r "$d/cpu.stat" ]; then
        awk '$1 == "usage_usec" { print $2 }' "$d/cpu.stat"
        return
    fi
    local p t=0 hz
    hz=$(getconf CLK_TCK)
    for p in $(job_procs "$1"); do
        t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0)))
    done
    echo $((t * 1000000 / hz))
}

# CPUs the job used over SECS seconds (two decimals).
cpus_used() {
    local u0 u1 t0 t1
    u0=$(cpu_usec "$1") t0=${EPOCHREALTIME/[.,]/}
    t_sleep "$2"
    u1=$(cpu_usec "$1") t1=${EPOCHREALTIME/[.,]/}
    awk -v u="$((u1 - u0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.2f", u / t }'
}

# cpu_grows JOB USEC: 0 once the job has used USEC more microseconds of cpu
# (60 s at most). On a loaded machine a job's share of the cpus is anyone's
# guess; that it runs at all is not.
cpu_grows() {
    local u0
    u0=$(cpu_usec "$1")
    wait_for "[ \$((\$(cpu_usec $1) - $u0)) -ge $2 ]" 60
}

t_account CAROL carol || t_bail "cannot make an account"
CH=$T/home/$CAROL

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster box]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2

[cluster loose]
adaptor = local
nodes = 1
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2
confine = no
EOF
map_account carol "$CAROL"
loomd_start || t_bail "loomd did not start"
TOKEN=$(token_for carol user) || t_bail "no token for carol"

# ---- what the clusters say ---------------------------------------------------------
api GET /v1/clusters/box >/dev/null
t_is "$(py 'sorted(d["confinement"])' "$BODY")" '["cpu", "freeze", "kill", "memory", "oom", "pids"]' \
    "a confined cluster lists its features"
t_is "$(py '[d["unconfined"]] + [d["confinement"][k] in ("v1", "v2") for k in ("memory", "cpu", "freeze", "kill", "oom")]' "$BODY")" \
    '[false, true, true, true, true, true]' \
    "... each of memory, cpu, freeze, kill, oom given by cgroup v1 or v2 here ($(jget "$BODY" .confinement))"
api GET /v1/clusters/loose >/dev/null
t_is "$(py '[d["unconfined"], d["unconfined_reason"], d["confinement"]]' "$BODY")" \
    '[true, "confine = no", null]' "confine = no: unconfined, and why"
t_like "$(grep 'cluster=loose: unconfined' "$T/loomd.log")" 'unconfined: confine = no: jobs run without cgroups' \
    "... which loomd's log says at start"

# ---- setsid and double-forked children ---------------------------------------------
ESCAPE=$(jstr 'setsid sleep 600 & (setsid sh -c "sleep 600 & sleep 600" &); sleep 600')
submit "{\"name\": \"wall\", \"request\": {\"cluster\": \"box\", \"walltime_s\": 6}, \"command\": [\"/bin/sh\", \"-c\", $ESCAPE]}"
WALL=$JOB
# the shell, its sleep, the setsid sleep, the double fork's sh and its two
# sleeps, and the supervisor: 7, in three sessions or more. Both counts come
# from one look (NP processes in NS sessions): the walltime ends them all.
look() {
    local p
    p=$(job_procs "$WALL" | paste -sd, -)
    NP=$(tr ',' '\n' <<<"$p" | grep -c .)
    NS=0
    [ -z "$p" ] || NS=$(ps -o sid= -p "$p" | sort -u | wc -l)
}
wait_for 'look; [ "$NP" -ge 7 ] && [ "$NS" -ge 3 ]' 30
t_ok "$([ "$NP" -ge 7 ]; echo $?)" "the job runs with its escapees in its cgroup ($NP processes)"
t_ok "$([ "$NS" -ge 3 ]; echo $?)" "... in three sessions or more (setsid: $NS)"
wait_for 'ended "$WALL"' 60
job "$WALL"
t_is "$(py '[d["state"], d["reason"]]' "$BODY")" '["failed", "walltime exceeded"]' \
    "at its walltime it fails: walltime exceeded"
wait_for 'gone "$WALL"' 10
t_is "$(job_procs "$WALL" | wc -l)" 0 "no process is left in its cgroup"
t_is "$(account_procs "$CAROL" | wc -l)" 0 "ps -u $CAROL counts none"
wait_for '[ ! -d "$(job_cgroup "$WALL" unified)" ] && [ ! -d "$(job_cgroup "$WALL" memory)" ]' 30
t_ok $? "its cgroups are removed once its end is reported"

submit "{\"name\": \"cancel\", \"request\": {\"cluster\": \"box\"}, \"command\": [\"/bin/sh\", \"-c\", $ESCAPE]}"
CAN=$JOB
wait_for '[ "$(job_procs "$CAN" | wc -l)" -ge 7 ]' 30
t_ok $? "a second job runs with its escapees"
api DELETE "/v1/jobs/$CAN" >/dev/null
wait_for 'ended "$CAN"' 30
t_is "$(job_state "$CAN")" cancelled "cancelled"
wait_for 'gone "$CAN"' 10
t_is "$(job_procs "$CAN" | wc -l)/$(account_procs "$CAROL" | wc -l)" 0/0 \
    "nothing is left: in its cgroup, nor of $CAROL"

# ---- memory ---------------------------------------------------------------------------
# The job waits for the file go in its home (its working directory), so
# that its cgroup is there to look at; then it allocates 100 MiB.
HOG=$(jstr 'while [ ! -e go ]; do sleep 0.1; done; exec /usr/bin/python3 -c "import time; b = bytearray(100 << 20); time.sleep(5); print(\"survived\")"')
submit "{\"name\": \"hog\", \"request\": {\"cluster\": \"box\", \"memory_mb\": 50}, \"command\": [\"/bin/sh\", \"-c\", $HOG]}"
HOG=$JOB
wait_for '[ "$(job_state "$HOG")" = running ]' 30
LIM=$(cat "$(job_cgroup "$HOG" memory)/memory.limit_in_bytes" 2>/dev/null ||
    cat "$(job_cgroup "$HOG" unified)/memory.max" 2>/dev/null)
t_is "$LIM" $((50 << 20)) "its memory cgroup's limit is 50 MiB"
touch "$CH/go"
wait_for 'ended "$HOG"' 60
job "$HOG"
t_is "$(py '[d["state"], d["reason"]]' "$BODY")" '["failed", "out of memory (memory_mb 50)"]' \
    "allocating twice its memory_mb: failed, out of memory (memory_mb 50)"
t_is "$(cat "$CH/loom-$HOG.out")" "" "it did not survive"

# ---- cpu -------------------------------------------------------------------------------
BURN='while :; do :; done'
submit "{\"name\": \"burn\", \"request\": {\"cluster\": \"box\", \"cpus_per_node\": 1}, \"command\": [\"/bin/sh\", \"-c\", \"$BURN & $BURN\"]}"
BURNJ=$JOB
wait_for '[ "$(job_procs "$BURNJ" | wc -l)" -ge 3 ]' 30
Q=$(cat "$(job_cgroup "$BURNJ" cpu)/cpu.cfs_quota_us" 2>/dev/null ||
    cat "$(job_cgroup "$BURNJ" unified)/cpu.max" 2>/dev/null)
t_like "$Q" '^100000( 100000)?$' "its cpu cgroup's quota is one cpu (100 ms per 100 ms)"
cpu_grows "$BURNJ" 200000
t_ok $? "the busy job uses cpu (200 ms of it)"
USED=$(cpus_used "$BURNJ" 2)
t_ok "$(awk -v u="$USED" 'BEGIN { exit !(u <= 1.25) }'; echo $?)" \
    "two busy loops of a 1-cpu job use at most one cpu (with room: $USED)"

# ---- suspend and resume ------------------------------------------------------------
PROCS=$(job_procs "$BURNJ" | paste -sd' ')
api POST "/v1/jobs/$BURNJ/suspend" '{}' >/dev/null
t_is "$STATUS" 202 "suspend the busy job"
wait_for '[ "$(for p in $PROCS; do frozen $p; done | sort -u)" = 1 ]' 30
t_is "$(for p in $PROCS; do frozen "$p"; done | sort -u)" 1 "every process of it is frozen ($PROCS)"
STATES=$(for p in $PROCS; do pstate "$p"; done | sort -u | paste -sd' ')
t_like "$STATES" '^[SD]( [SD])?$' "... /proc shows them asleep, none running (v2 freezer: S; v1: D): $STATES"
USED=$(cpus_used "$BURNJ" 1)
t_ok "$(awk -v u="$USED" 'BEGIN { exit !(u < 0.02) }'; echo $?)" "frozen, it uses no cpu ($USED)"
api POST "/v1/jobs/$BURNJ/resume" '{}' >/dev/null
t_is "$STATUS" 202 "resume it"
wait_for '[ "$(for p in $PROCS; do frozen $p; done | sort -u)" = 0 ]' 30
t_is "$(for p in $PROCS; do frozen "$p"; done | sort -u)" 0 "every process is thawed"
cpu_grows "$BURNJ" 200000
t_ok $? "and it uses cpu again (200 ms of it)"
api DELETE "/v1/jobs/$BURNJ" >/dev/null
wait_for 'ended "$BURNJ"' 30
wait_for 'gone "$BURNJ"' 10
t_is "$(job_state "$BURNJ")/$(account_procs "$CAROL" | wc -l)" cancelled/0 "cancelled, nothing left"

# ---- unconfined --------------------------------------------------------------------
submit '{"name": "loose", "request": {"cluster": "loose"}, "command": ["/bin/sh", "-c", "id -un"]}'
LOOSE=$JOB
wait_for 'ended "$LOOSE"' 30
t_is "$(job_state "$LOOSE")/$(cat "$CH/loom-$LOOSE.out")" "completed/$CAROL" \
    "an unconfined cluster runs the job as its account too"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
