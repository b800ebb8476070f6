#!/usr/bin/env bash
# 1003-pg-down.t - PostgreSQL dies under a running loomd: submits answer 503
# with Retry-After, reads go on from the snapshot, and when the database is
# back loomd reconnects by itself and records what happened meanwhile.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

JOB='{"command": ["/bin/true"], "request": {"cluster": "local"}}'
api POST /v1/jobs "$JOB" >/dev/null
t_is "$STATUS" 201 "a submit with the database up: 201"
FIRST=$(jget "$BODY" .id)
wait_for '[ "$(job_state "$FIRST")" = completed ]' 30

# A job that runs across the outage: until the test lets it end (the file
# across.go, created once the database is down; 60 s at most).
api POST /v1/jobs '{"name": "across", "command": ["/bin/sh", "-c", "i=0; while [ ! -e '"$T"'/across.go ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done; exit 5"], "request": {"cluster": "local"}}' >/dev/null
ACROSS=$(jget "$BODY" .id)
wait_for '[ "$(job_state "$ACROSS")" = running ]' 30
t_is "$(job_state "$ACROSS")" running "the job that will run across the outage runs"

# ---- database down -------------------------------------------------------------
pg_kill || t_diag "pg_kill: the server took long to die"
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd survives the database's death"

rm -f "$T/h"
api POST /v1/jobs "$JOB" -D "$T/h" >/dev/null
t_is "$STATUS" 503 "POST /v1/jobs with the database down: 503" || t_diag "$BODY"
t_is "$(jget "$BODY" .error.code 2>/dev/null)" unavailable "503: the error body"
# Which of the two answers comes depends on whether loomd's lease ran out
# (it then stands fenced until the database is back) before the submit.
t_like "$(jget "$BODY" .error.message 2>/dev/null)" \
    '^(database unavailable: the job was not accepted|the request: not done: this loomd is fenced \(database unavailable: .*\)); retry later$' \
    "503: the message says why (the database) and what to do (retry)"
t_like "$(grep -i '^Retry-After:' "$T/h" | tr -d '\r')" '^[Rr]etry-[Aa]fter: *[0-9]+$' \
    "503: a Retry-After header"
api POST /v1/jobs "$JOB" -H 'Idempotency-Key: down-1' >/dev/null
t_is "$STATUS" 503 "a second submit (with an Idempotency-Key) while down: 503"

api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "GET /v1/jobs while down: 200 from the snapshot"
t_is "$(py 'sorted(j["id"] for j in d["items"])' "$BODY")" "[\"$FIRST\", \"$ACROSS\"]" \
    "the list holds the acknowledged jobs only, not the refused ones"
api GET /v1/nodes >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/2 "GET /v1/nodes while down: 200"
api GET /v1/maintenance >/dev/null
t_is "$STATUS" 200 "GET /v1/maintenance while down: 200 from the snapshot"
api GET "/v1/jobs/$FIRST" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/completed "GET /v1/jobs/ID while down"
TOKEN_SAVED=$TOKEN
TOKEN=
api GET /healthz >/dev/null
t_is "$STATUS" 200 "/healthz while down"
TOKEN=$TOKEN_SAVED

# The job ends while the database is down.
touch "$T/across.go"
wait_for '[ "$(job_state "$ACROSS")" = failed ]' 30
t_is "$(job_state "$ACROSS")" failed "its end is seen while the database is down"

# ---- database back -------------------------------------------------------------
pg_restart_same || t_bail "PostgreSQL did not start again"
wait_for 'api POST /v1/jobs "$JOB" -H "Idempotency-Key: back-1" >/dev/null; [ "$STATUS" = 201 ]' 60
t_is "$STATUS" 201 "loomd reconnects by itself: POST /v1/jobs answers 201 again"
BACK=$(jget "$BODY" .id)
api POST /v1/jobs "$JOB" -H 'Idempotency-Key: down-1' >/dev/null
t_is "$STATUS" 201 "a key refused while down is new afterwards: 201"
wait_for '[ "$(job_state "$BACK")" = completed ]' 30
t_is "$(job_state "$BACK")" completed "a job submitted after the outage runs"

api GET "/v1/jobs/$ACROSS" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 5]' \
    "the job across the outage: failed, exit_code 5"
# ... and it is in the database, not only in memory.
wait_for '[ "$(pg_sql "SELECT state || '"' '"' || (doc->>'"'exit_code'"') FROM jobs WHERE id = $ACROSS")" = "failed 5" ]' 30
t_is "$(pg_sql "SELECT state || ' ' || (doc->>'exit_code') FROM jobs WHERE id = $ACROSS")" \
    "failed 5" "its end is recorded in the database"
t_ok "$(grep -qE 'commit of .* failed' "$T/loomd.log"; echo $?)" \
    "the failed commits are logged"

# A restart of loomd shows the same.
loomd_stop
t_is $? 0 "loomd stops with status 0"
loomd_start || t_bail "loomd did not start again"
api GET "/v1/jobs/$ACROSS" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 5]' \
    "after a restart of loomd: failed, exit_code 5"
api GET /v1/jobs >/dev/null
t_is "$(jlen "$BODY" .items)" 4 "after a restart of loomd: the four acknowledged jobs"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
