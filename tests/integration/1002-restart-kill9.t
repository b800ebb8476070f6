#!/usr/bin/env bash
# 1002-restart-kill9.t - durability across kill -9 of loomd: every
# acknowledged job is kept with its state, a running local job is adopted
# (not started twice) and its end collected, pending jobs run afterwards,
# held stays held, and Idempotency-Keys still replay.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

lines() {
    if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi
}

# A shell job that appends a line to FILE when it starts, then runs REST.
sh_job() {
    local name=$1 file=$2 rest=$3
    printf '{"name": "%s", "command": ["/bin/sh", "-c", "echo started >> %s; %s"], "request": {"cluster": "local"}}' \
        "$name" "$file" "$rest"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
# The jobs run as the account the admin token maps to ($T_USER): they
# write in $T_OUT.

# A job that failed with exit code 3 before the crash.
submit '{"name": "three", "command": ["/bin/sh", "-c", "exit 3"], "request": {"cluster": "local"}}'
THREE=$JOB
wait_for '[ "$(job_state "$THREE")" = failed ]' 30
t_is "$(job_state "$THREE")" failed "the exit-3 job failed before the crash"

# Two long jobs take both cpus. They run until the test lets them end (the
# file go; 60 s at most), so that they outlive loomd's crash and restart.
HOLD='i=0; while [ ! -e '"$T"'/go ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done'
submit "$(sh_job long "$T_OUT/long.start" "$HOLD; exit 7")"
LONG=$JOB
submit "$(sh_job long2 "$T_OUT/long2.start" "$HOLD")"
LONG2=$JOB
wait_for '[ "$(job_state "$LONG")" = running ] && [ "$(job_state "$LONG2")" = running ] && [ -s "$T_OUT/long.start" ] && [ -s "$T_OUT/long2.start" ]' 30
t_ok $? "both long jobs run and have written their start lines"

# Pending jobs behind them, two with an Idempotency-Key, one held.
P1_BODY=$(sh_job p1 "$T_OUT/p1.start" 'exit 0')
submit "$P1_BODY" -H 'Idempotency-Key: restart-p1'
P1=$JOB
submit "$(sh_job p2 "$T_OUT/p2.start" 'exit 0')" -H 'Idempotency-Key: restart-p2'
P2=$JOB
submit "$(sh_job held "$T_OUT/held.start" 'exit 0')"
HELD=$JOB
api POST "/v1/jobs/$HELD/hold" '{}' >/dev/null
t_is "$STATUS" 200 "hold of a pending job" || t_diag "$BODY"
t_is "$(job_state "$P1")/$(job_state "$P2")/$(job_state "$HELD")" pending/pending/held \
    "p1 and p2 pending, the third held"

api GET /v1/jobs >/dev/null
BEFORE=$BODY
N_BEFORE=$(py 'len(d["items"])' "$BEFORE")
t_is "$N_BEFORE" 6 "six jobs acknowledged before the crash"

# ---- crash ---------------------------------------------------------------------
OLD_PID=$LOOMD_PID
loomd_kill9
! alive "$OLD_PID"
t_ok $? "loomd is killed (SIGKILL)"
t_is "$(lines "$T_OUT/long.start")" 1 "the long job ran on without loomd"
loomd_start || t_bail "loomd did not start again"
t_like "$(grep -c 'starting, configuration' "$T/loomd.log")" '^2$' "loomd started a second time"

# ---- what survived ------------------------------------------------------------
api GET /v1/jobs >/dev/null
t_is "$(py 'sorted(j["id"] for j in d["items"])' "$BODY")" \
    "$(py 'sorted(j["id"] for j in d["items"])' "$BEFORE")" \
    "every acknowledged job is still there"
api GET "/v1/jobs/$THREE" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 3]' \
    "the finished job keeps failed and exit_code 3"
t_is "$(job_state "$HELD")" held "the held job is still held"
t_is "$(job_state "$LONG")" running "the long job is running, not pending"
# The re-attachment runs in the server thread once loomd is up.
wait_for 'grep -qE "job=$LONG cluster=local re-attached|cluster=local job=$LONG: exists, adopted" "$T/loomd.log"' 30
t_ok $? "the long job was adopted, not started again (log)" ||
    t_diag "$(grep "job=$LONG" "$T/loomd.log")"

touch "$T/go"
wait_for '[ "$(job_state "$LONG")" = failed ]' 30
api GET "/v1/jobs/$LONG" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 7]' \
    "the adopted job's end is collected: failed, exit_code 7"
t_is "$(lines "$T_OUT/long.start")" 1 "the adopted job started exactly once"
wait_for '[ "$(job_state "$LONG2")" = completed ]' 30
api GET "/v1/jobs/$LONG2" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["completed", 0]' \
    "the second long job completed with exit_code 0"
t_is "$(lines "$T_OUT/long2.start")" 1 "the second long job started exactly once"

wait_for '[ "$(job_state "$P1")" = completed ] && [ "$(job_state "$P2")" = completed ]' 30
t_is "$(job_state "$P1")/$(job_state "$P2")" completed/completed \
    "the pending jobs ran after the restart"
t_is "$(lines "$T_OUT/p1.start")/$(lines "$T_OUT/p2.start")" 1/1 "each of them once"
t_is "$(job_state "$HELD")/$(lines "$T_OUT/held.start")" held/0 \
    "the held job did not run"

# ---- idempotency after the crash -------------------------------------------------
api POST /v1/jobs "$P1_BODY" -H 'Idempotency-Key: restart-p1' >/dev/null
t_is "$STATUS" 200 "replay of an Idempotency-Key after the restart: 200"
t_is "$(jget "$BODY" .id 2>/dev/null)" "$P1" "the replay returns the same job"
api POST /v1/jobs '{"command": ["/bin/true"]}' -H 'Idempotency-Key: restart-p2' >/dev/null
t_is "$STATUS" 409 "the key with another body: 409"

# New ids go on after the old ones.
submit '{"name": "after", "command": ["/bin/true"], "request": {"cluster": "local"}}'
t_ok "$( ((JOB > HELD)) && echo 0 || echo 1)" "a new job gets a new id ($JOB > $HELD)"

api POST "/v1/jobs/$HELD/release" '{}' >/dev/null
t_is "$STATUS" 200 "release of the held job"
wait_for '[ "$(job_state "$HELD")" = completed ]' 30
t_is "$(job_state "$HELD")/$(lines "$T_OUT/held.start")" completed/1 \
    "released, it runs once"

# The database holds the same.
t_is "$(pg_sql "SELECT count(*) FROM jobs")" 7 "seven rows in the jobs table"
t_is "$(pg_sql "SELECT state || ' ' || (doc->>'exit_code') FROM jobs WHERE id = $LONG")" \
    "failed 7" "the adopted job's end is in the database"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
