#!/usr/bin/env bash
# 9004-clock-step.t - loomd's wall clock stepped an hour forward, then an
# hour back (libfaketime, Debian's faketime package: CLOCK_REALTIME only,
# the monotonic clocks untouched, as an NTP step or a hand-set clock does).
# A reservation starts when the wall clock reaches its start: its job
# starts then, not an hour late after the step forward, not an hour early
# after the step back. A job's walltime is a duration: a simulated job
# neither ends at its walltime an hour early after the step forward nor
# runs an hour late after the step back. The reservations and jobs are on
# a sim cluster, whose clock runs in loomd; a local job's walltime is kept
# by its supervisor on CLOCK_MONOTONIC (loom-runas is setuid: the preload
# never reaches it): 9011-local-walltime-clock.t steps the supervisor's.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

FAKETIME_LIB=
for f in /usr/lib/*/faketime/libfaketimeMT.so.1 /usr/lib/faketime/libfaketimeMT.so.1; do
    [ -f "$f" ] && FAKETIME_LIB=$f && break
done
[ -n "$FAKETIME_LIB" ] || t_bail "no libfaketime (Debian package faketime; ./bootstrap check installs it)"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(sim_cluster 4 4 8192)
EOF
# loomd reads the offset from $T/clock (re-read once a second). Its
# queues wait on condition variables of CLOCK_MONOTONIC, which
# libfaketime's "monotonic fix" (on by default with this glibc) would time
# out at once: it is turned off.
echo "+0" >"$T/clock"
LD_PRELOAD=$FAKETIME_LIB FAKETIME_TIMESTAMP_FILE=$T/clock \
    FAKETIME_CACHE_DURATION=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
    FAKETIME_FORCE_MONOTONIC_FIX=0 \
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    loomd_start || t_bail "loomd did not start under libfaketime"
# The tokens are made outside (by loomctl, on the true clock): long enough
# to outlive the step forward.
TOKEN=$(token_for admin admin 86400) || t_bail "no token"

# loomd_now: loomd's wall clock, from its Date header (whole seconds).
loomd_now() {
    epoch "$(curl -sI --max-time 10 "$LOOM_URL/healthz" | tr -d '\r' |
        sed -n 's/^[Dd]ate: //p')"
}
# step OFFSET: set loomd's clock to the true one plus OFFSET seconds, and
# wait until loomd's Date header shows it.
step() {
    STEP=$1
    echo "+$STEP" >"$T/clock"
    wait_for 'd=$(( $(loomd_now) - $(date +%s) - STEP )); [ "$d" -ge -2 ] && [ "$d" -le 2 ]' 30
}
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
# resv START: a reservation of one sim node from epoch START, 600 s (RESV).
resv() {
    api POST /v1/reservations "{\"cluster\": \"sim\", \"count\": 1, \"start\": \"$(iso "$1")\", \"duration_s\": 600, \"reason\": \"clock\"}" >/dev/null
    RESV=$(jget "$BODY" .id 2>/dev/null)
    [ "$STATUS" = 201 ] && [ -n "$RESV" ] || { t_diag "reservation: $STATUS $BODY"; return 1; }
}
# in_resv ID: a 5-second simulated job in reservation ID (JOB).
in_resv() {
    submit "{\"command\": [\"/bin/true\"], \"env\": {\"LOOM_SIM_RUNTIME_S\": \"5\"}, \"request\": {\"cluster\": \"sim\", \"reservation\": \"$1\", \"walltime_s\": 60}}"
}
# sim_job RUNTIME WALLTIME: a simulated job (JOB).
sim_job() {
    submit "{\"command\": [\"/bin/true\"], \"env\": {\"LOOM_SIM_RUNTIME_S\": \"$1\"}, \"request\": {\"cluster\": \"sim\", \"walltime_s\": $2}}"
}
started_at() { epoch "$(field "$1" .start_time)"; }

t_is "$(( $(loomd_now) - $(date +%s) >= -2 && $(loomd_now) - $(date +%s) <= 2 ))" 1 \
    "loomd's clock is the true one to begin with"

# ---- an hour forward ---------------------------------------------------------------
NOW=$(loomd_now)
resv $((NOW + 3600 + 30)) || t_bail "no reservation"
R1=$RESV
R1_START=$(epoch "$(jget "$BODY" .start)")
in_resv "$R1" || t_bail "no job"
J1=$JOB
# A job killed at its walltime of 40 minutes (LONG: its runtime is two
# hours), and one at its walltime of 20 s (KILLED).
sim_job 7200 2400 || t_bail "no job"
LONG=$JOB
sim_job 3600 20 || t_bail "no job"
KILLED=$JOB
wait_for '[ "$(job_state "$LONG")" = running ] && [ "$(job_state "$KILLED")" = running ]' 60
t_is "$(job_state "$LONG")/$(job_state "$KILLED")/$(job_state "$J1")" running/running/pending \
    "the two jobs run, the one in the reservation an hour away waits"

step 3600
t_ok $? "loomd's clock is stepped an hour forward"
t_ok "$([ "$(loomd_now)" -lt "$R1_START" ]; echo $?)" \
    "... the reservation's start is still ahead ($((R1_START - $(loomd_now))) s)"
wait_for '[ "$(job_state "$J1")" != pending ]' 120
STARTED=$(started_at "$J1")
t_ok "$([ "$STARTED" -ge "$R1_START" ] && [ "$STARTED" -le $((R1_START + 60)) ]; echo $?)" \
    "the job in the reservation starts at its start by the new clock, not an hour late ($((STARTED - R1_START)) s after it)"
api GET "/v1/reservations/$R1" >/dev/null
t_is "$(jget "$BODY" .state)" active "the reservation is active"
# KILLED's 20 s pass by the true time: it is killed at its walltime; LONG
# has 40 minutes of it less what the test took so far.
wait_for '[ "$(job_state "$KILLED")" = failed ]' 120
t_is "$(job_state "$KILLED")/$(field "$KILLED" .reason)" "failed/walltime exceeded" \
    "a job at its walltime is killed"
polls_pass sim 2
t_is "$(job_state "$LONG")" running \
    "a job some 40 minutes from its walltime is not killed an hour early"

# ---- an hour back -----------------------------------------------------------------
NOW=$(loomd_now)
resv $((NOW + 20)) || t_bail "no reservation"
R2=$RESV
R2_START=$(epoch "$(jget "$BODY" .start)")
in_resv "$R2" || t_bail "no job"
J2=$JOB
sim_job 20 60 || t_bail "no job"
SHORT=$JOB
wait_for '[ "$(job_state "$SHORT")" = running ]' 60
t_is "$(job_state "$SHORT")/$(job_state "$J2")" running/pending \
    "a 20-second job runs; the job in a reservation 20 s away waits"

step 0
t_ok $? "loomd's clock is stepped back an hour"
# A third reservation, 30 s away by the clock stepped back: once its job
# has started, 30 s have passed, and the one that was 20 s away before the
# step (an hour and 20 s now) must not have begun.
NOW=$(loomd_now)
resv $((NOW + 30)) || t_bail "no reservation"
R3=$RESV
R3_START=$(epoch "$(jget "$BODY" .start)")
in_resv "$R3" || t_bail "no job"
J3=$JOB
wait_for '[ "$(job_state "$J3")" != pending ]' 120
STARTED=$(started_at "$J3")
t_ok "$([ "$STARTED" -ge "$R3_START" ] && [ "$STARTED" -le $((R3_START + 60)) ]; echo $?)" \
    "the job of a reservation made after the step starts at its start ($((STARTED - R3_START)) s after it)"
t_is "$(job_state "$J2")" pending \
    "the job of the reservation an hour away by the stepped-back clock does not start an hour early"
api GET "/v1/reservations/$R2" >/dev/null
t_is "$(jget "$BODY" .state)" planned "... its reservation is still planned"
# The 20-second job ends 20 s after its start by the true time (it had run
# 20 s of them by now): not an hour later.
wait_for '[ "$(job_state "$SHORT")" = completed ]' 60
t_is "$(job_state "$SHORT")" completed "the 20-second job ends after its runtime, not an hour late"
t_is "$(job_state "$LONG")" running "the job some 40 minutes from its walltime still runs"

t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd runs on"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
