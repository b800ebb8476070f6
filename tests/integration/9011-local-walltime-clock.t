#!/usr/bin/env bash
# 9011-local-walltime-clock.t - a local job's walltime under a step of the
# wall clock, an hour forward, then an hour back. It is kept by the job's
# supervisor (adaptors/local_supervise.c), on CLOCK_MONOTONIC; loomd does
# not enforce it. loom-runas is setuid, so a preload given to loomd (9004)
# never reaches the supervisor: here loomd runs its own copy of
# loom-runas (root:loom 4750) from $T/libexec (LOOM_LIBEXECDIR), beside
# which, as loom-runas wants it, "loom-supervise" is a root-owned script
# that runs the build's loom-supervise under libfaketime (Debian's faketime
# package): CLOCK_REALTIME from $T/clock, the monotonic clocks untouched,
# as an NTP step or a hand-set clock does. A job of 30 s walltime stepped
# an hour forward runs on to its end (not killed an hour early); one of
# 20 s stepped an hour back is killed at its walltime (it does not run an
# hour late). Each job's exit.json, written by its supervisor with its own
# wall clock, shows that it saw the step.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

FAKETIME_LIB=
for f in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1; do
    [ -f "$f" ] && FAKETIME_LIB=$f && break
done
[ -n "$FAKETIME_LIB" ] || t_bail "no libfaketime (Debian package faketime; ./bootstrap check installs it)"
[ "$(id -u)" = 0 ] || t_bail "this test installs a setuid loom-runas: it must run as root"

W=$T/w
mkdir -m 1777 "$W"
echo "+0" >"$T/clock"
chmod 0644 "$T/clock"
LX=$T/libexec
mkdir -m 0755 "$LX"
cp "$LOOM_TOP_BUILDDIR/loom-runas" "$LX/loom-runas" &&
    chown "root:$LOOM_SERVICE_USER" "$LX/loom-runas" &&
    chmod 4750 "$LX/loom-runas" || t_bail "cannot install loom-runas in $LX"
# The supervisor keeps its queues and its walltime on CLOCK_MONOTONIC:
# libfaketime's "monotonic fix" is turned off, as for loomd in 9004.
cat >"$LX/loom-supervise" <<EOF
#!/bin/sh
LD_PRELOAD=$FAKETIME_LIB
FAKETIME_TIMESTAMP_FILE=$T/clock
FAKETIME_CACHE_DURATION=1
FAKETIME_DONT_FAKE_MONOTONIC=1
FAKETIME_FORCE_MONOTONIC_FIX=0
ASAN_OPTIONS=verify_asan_link_order=0
export LD_PRELOAD FAKETIME_TIMESTAMP_FILE FAKETIME_CACHE_DURATION \
    FAKETIME_DONT_FAKE_MONOTONIC FAKETIME_FORCE_MONOTONIC_FIX ASAN_OPTIONS
exec $LOOM_TOP_BUILDDIR/loom-supervise "\$@"
EOF
chmod 0755 "$LX/loom-supervise"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
LOOM_LIBEXECDIR=$LX loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# local_job NAME WALLTIME SCRIPT: a local job (JOB).
local_job() {
    submit "{\"name\": \"$1\", \"command\": [\"/bin/sh\", \"-c\", \"$3\"], \"request\": {\"cluster\": \"local\", \"walltime_s\": $2}}"
}
# exit_json ID EXPR: a Python expression over the job's run/exit.json (d),
# as its supervisor wrote it.
exit_json() {
    py "$2" "$(cat "$T/state/clusters/local/jobs/$1/run/exit.json" 2>/dev/null)"
}

# ---- an hour forward --------------------------------------------------------
# FWD waits for $W/go, then runs 3 s more and exits 0: 30 s of walltime.
local_job forward 30 "i=0; while [ ! -e $W/go ] && [ \$i -lt 300 ]; do sleep 0.2; i=\$((i + 1)); done; sleep 3; exit 0" ||
    t_bail "no submit"
FWD=$JOB
wait_for '[ "$(job_state "$FWD")" = running ]' 60
t_is "$(job_state "$FWD")" running "a job of 30 s walltime runs"
echo "+3600" >"$T/clock"
touch "$W/go"
wait_for '[ "$(job_state "$FWD")" = completed ] || [ "$(job_state "$FWD")" = failed ]' 90
t_is "$(job_state "$FWD")/$(field "$FWD" .exit_code)" completed/0 \
    "stepped an hour forward, it runs on to its end: not killed an hour early"
t_ok "$([ "$(exit_json "$FWD" 'd["end_time"] - d["start_time"]')" -ge 3600 ]; echo $?)" \
    "... its supervisor saw the step ($(exit_json "$FWD" 'd["end_time"] - d["start_time"]') s from its start to its end by its wall clock)"

# ---- an hour back -----------------------------------------------------------
# BACK sleeps 300 s with 20 s of walltime; it starts on the clock an hour
# ahead, which then goes back an hour.
local_job back 20 "sleep 300" || t_bail "no submit"
BACK=$JOB
wait_for '[ "$(job_state "$BACK")" = running ]' 60
t_is "$(job_state "$BACK")" running "a job of 20 s walltime runs"
echo "+0" >"$T/clock"
wait_for '[ "$(job_state "$BACK")" = failed ]' 120
t_is "$(job_state "$BACK")/$(field "$BACK" .reason)" "failed/walltime exceeded" \
    "stepped an hour back, it is killed at its walltime: it does not run an hour late"
t_ok "$([ "$(exit_json "$BACK" 'd["end_time"] - d["start_time"]')" -le -3500 ]; echo $?)" \
    "... its supervisor saw the step ($(exit_json "$BACK" 'd["end_time"] - d["start_time"]') s from its start to its end by its wall clock)"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
