#!/usr/bin/env bash
# 9008-statedir-full.t - loomd's state_dir (the local cluster's job
# directories: spec.json, the run directory with pid.json and exit.json;
# loomd.pid; core/settings.c, docs/internals/local-executor.md) on a small
# tmpfs that fills up. A job submitted meanwhile is accepted (the database
# holds it) and waits, pending, with a reason that says what failed on
# what and why, tried again every START_RETRY_S (2 s), not in a loop; a
# job that ends meanwhile keeps its exit code (its supervisor waits for
# space to record it); loomd runs on, serves, and starts again on the full
# disk (saying that it cannot write its pid file). When space returns the
# waiting jobs run, once each, as the test's account.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

[ "$(id -u)" = 0 ] || t_bail "this test mounts a tmpfs: it must run as root"
t_tmpfs "$T/state" 8m || t_bail "cannot mount a tmpfs on $T/state"
W=$T/w
mkdir -m 1777 "$W"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 4 1)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"

# A job that appends "ID ACCOUNT" to $W/starts, then runs REST.
mark_job() {
    printf '{"name": "%s", "command": ["/bin/sh", "-c", "echo $LOOM_JOB_ID $(id -un) >> %s/starts; %s"], "request": {"cluster": "local", "walltime_s": 300}}' \
        "$1" "$W" "$2"
}
starts_of() { awk -v id="$1" '$1 == id' "$W/starts" 2>/dev/null | wc -l; }

submit "$(mark_job before 'exit 0')" || t_bail "no submit"
BEFORE=$JOB
wait_for '[ "$(job_state "$BEFORE")" = completed ]' 60
t_is "$(job_state "$BEFORE")" completed "a job runs while there is space"

# A job that runs across the full time: it ends (exit 4) once the disk is
# full (the file $W/full), 120 s at most.
submit "$(mark_job across 'i=0; while [ ! -e '"$W"'/full ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i + 1)); done; exit 4')" ||
    t_bail "no submit"
ACROSS=$JOB
wait_for '[ "$(job_state "$ACROSS")" = running ] && [ "$(starts_of "$ACROSS")" = 1 ]' 60
t_is "$(job_state "$ACROSS")" running "the job that ends on the full disk runs"

# ---- the state_dir fills up -------------------------------------------------------
dd if=/dev/zero of="$T/state/filler" bs=64k >/dev/null 2>&1
t_is "$(df --output=avail -k "$T/state" | tail -n 1 | tr -d ' ')" 0 \
    "the state_dir's file system is full"
touch "$W/full"

IDS=()
for i in 1 2 3; do
    submit "$(mark_job "full-$i" 'exit 0')"
    t_is "$STATUS" 201 "a submit on the full state_dir is accepted ($i)"
    IDS+=("$JOB")
done
FIRST=${IDS[0]}
# The reason names the file, the cluster and the cause.
wait_for '[[ $(field "$FIRST" .reason) == *"No space left on device"* ]]' 60
t_is "$(job_state "$FIRST")" pending "a job that cannot start for want of space waits, pending"
t_like "$(field "$FIRST" .reason)" \
    "^cluster local: start job $FIRST: (write|mkdir) $T/state/clusters/local/jobs/$FIRST(/spec\\.json)?: No space left on device\$" \
    "... its reason says what failed, on what, and why"
t_is "$(starts_of "$FIRST")" 0 "... and it did not run"

# Tried again every START_RETRY_S (2 s), not in a loop: the shortest time
# between two tries of one job, from the times of loomd's log lines (a
# slow machine makes it longer, never shorter).
tries() {
    grep "thread=sched job=$1 cluster=local start failed: .*No space left on device" \
        "$T/loomd.log" | cut -d' ' -f1
}
wait_for '[ "$(tries "$FIRST" | wc -l)" -ge 3 ]' 60
t_ok $? "the start of a waiting job is tried again ($(tries "$FIRST" | wc -l) tries)"
GAP=$(tries "$FIRST" | python3 -c 'import datetime, sys
t = [datetime.datetime.fromisoformat(l.strip().replace("Z", "+00:00")).timestamp()
     for l in sys.stdin if l.strip()]
print("%.2f" % min(b - a for a, b in zip(t, t[1:])))')
t_ok "$(python3 -c "import sys; sys.exit(0 if $GAP >= 1.9 else 1)"; echo $?)" \
    "... every 2 s, not in a loop (shortest gap $GAP s)"

# The job that ended meanwhile is seen running while its supervisor waits
# to record its end.
t_is "$(job_state "$ACROSS")" running "the job that ended on the full disk is not taken for lost"

api GET /v1/jobs >/dev/null
t_is "$STATUS/$(py 'len(d["items"])' "$BODY")" 200/5 "reads are served on the full disk"
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd runs on"

# ---- a restart on the full disk ----------------------------------------------------
loomd_stop
t_is $? 0 "loomd stops with status 0 on the full disk"
# Its pid file gone, and the page it held taken too.
rm -f "$T/state/loomd.pid"
dd if=/dev/zero of="$T/state/filler2" bs=4k >/dev/null 2>&1
loomd_start
t_ok $? "loomd starts again on the full disk"
t_ok "$(grep -q "cannot write $T/state/loomd.pid: No space left on device; loomd runs on without it" "$T/loomd.log"; echo $?)" \
    "... and says that it cannot write its pid file"
wait_for '[[ $(field "$FIRST" .reason) == *"No space left on device"* ]]' 60
t_is "$(job_state "$FIRST")" pending "the waiting job waits on after the restart"

# ---- space returns ---------------------------------------------------------------
rm -f "$T/state/filler" "$T/state/filler2"
for id in "${IDS[@]}"; do
    wait_for '[ "$(job_state "$id")" = completed ]' 60
    t_is "$(job_state "$id")/$(starts_of "$id")" completed/1 \
        "space back: job $id ran, once, and completed"
done
wait_for '[ "$(job_state "$ACROSS")" = failed ]' 60
api GET "/v1/jobs/$ACROSS" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["reason"]]' "$BODY")" \
    '["failed", 4, "exited with code 4"]' \
    "the job that ended on the full disk keeps its exit code 4"
t_is "$(starts_of "$ACROSS")" 1 "... and ran once"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$ALICE" "the jobs ran as $ALICE"
submit "$(mark_job after 'exit 0')"
AFTER=$JOB
wait_for '[ "$(job_state "$AFTER")" = completed ]' 60
t_is "$(job_state "$AFTER")/$(starts_of "$AFTER")" completed/1 "a new job runs at once"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
