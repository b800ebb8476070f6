#!/usr/bin/env bash
# 1005-backup-restore.t - the backup and restore the operator guide
# describes: pg_dump of the loom database (custom format) while loomd
# runs, pg_restore into a fresh database, and loomd started on that one
# has every job with its state, its reservations, goals and maintenance
# requests, replays an Idempotency-Key, and numbers new jobs after the
# old ones.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf '[cluster sim]' 'adaptor = sim' 'nodes = 4' 'speed = 100' 'poll_s = 0.2' 'unpinned_jobs = yes'
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}
submit '{"name": "done", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "1"}}' \
    -H 'Idempotency-Key: backup-1'
DONE=$JOB
submit '{"name": "failed", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "1", "LOOM_SIM_EXIT_CODE": "3"}}'
FAILED=$JOB
# a job that waits for the whole cluster while a long one runs: held
submit '{"name": "long", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "100000"}}'
LONG=$JOB
wait_for '[ "$(job_state "$LONG")" = running ]' 60
submit '{"name": "held", "command": ["/bin/true"], "request": {"nodes": 4, "cpus_per_node": 32}, "env": {"LOOM_SIM_RUNTIME_S": "1"}}'
HELD=$JOB
api POST "/v1/jobs/$HELD/hold" >/dev/null
t_is "$STATUS" 200 "the wide job is held while it waits"
api DELETE "/v1/jobs/$LONG" >/dev/null
wait_for 'ended "$DONE" && ended "$FAILED" && ended "$LONG"' 60
t_is "$(job_state "$DONE")/$(job_state "$FAILED")/$(job_state "$HELD")/$(job_state "$LONG")" \
    completed/failed/held/cancelled "four jobs: completed, failed, held, cancelled"
api POST /v1/reservations '{"cluster": "sim", "nodes": ["sim/n4"], "start": "2031-01-01T00:00:00Z", "duration_s": 600, "reason": "kept"}' >/dev/null
t_is "$STATUS" 201 "a reservation"
RESV=$(jget "$BODY" .id)
api PUT /v1/goal/nodes/sim/n1 '{"attributes": {"kernel": "6.1"}}' >/dev/null
t_is "$STATUS" 200 "a goal"
wait_for 'api GET /v1/state/diff >/dev/null; [ "$(jlen "$BODY" .items)" = 1 ]' 30
t_is "$(jget "$BODY" .items.0.attribute)" kernel "... and its mismatch"
api GET /v1/jobs >/dev/null
BEFORE=$(py '[(j["id"], j["state"], j["name"], j["account"]) for j in d["items"]]' "$BODY")

# ---- the backup, while loomd runs ---------------------------------------
"$PG_BIN/pg_dump" -h "$LOOM_PG_DIR" -U postgres -Fc -f "$T/loom.dump" loom 2>"$T/pg_dump.err"
t_is $? 0 "pg_dump -Fc of the loom database while loomd runs" || t_diag "$(cat "$T/pg_dump.err")"
loomd_stop
t_is $? 0 "loomd stops"

# ---- the restore, into a fresh database ---------------------------------------
"$PG_BIN/createdb" -h "$LOOM_PG_DIR" -U postgres loom_restored
t_is $? 0 "a fresh database"
"$PG_BIN/pg_restore" -h "$LOOM_PG_DIR" -U postgres -d loom_restored --no-owner \
    --exit-on-error "$T/loom.dump" 2>"$T/pg_restore.err"
t_is $? 0 "pg_restore into it" || t_diag "$(cat "$T/pg_restore.err")"
sed -i "s|^database = .*|database = host=$LOOM_PG_DIR dbname=loom_restored user=postgres|" "$T/loom.conf"
loomd_start || t_bail "loomd did not start on the restored database"
N_MIGR=$(ls "$LOOM_TOP_SRCDIR"/sql/[0-9]*.sql | wc -l)
t_is "$(grep -c 'migration applied' "$T/loomd.log")" "$N_MIGR" \
    "no migration runs again on the restored database (only the first start's $N_MIGR)"

api GET /v1/jobs >/dev/null
t_is "$(py '[(j["id"], j["state"], j["name"], j["account"]) for j in d["items"]]' "$BODY")" "$BEFORE" \
    "every job, with its id, state, name and account"
t_is "$(py 'sorted(set(j["account"] for j in d["items"]))' "$BODY")" "[\"$T_USER\"]" \
    "... $T_USER, the account the admin maps to, for each"
t_is "$(job_state "$HELD")" held "the held job is still held"
t_is "$(field "$FAILED" .exit_code)" 3 "the failed job keeps its exit code"
api GET "/v1/reservations/$RESV" >/dev/null
t_is "$STATUS/$(jget "$BODY" .reason)/$(jget "$BODY" .state)" 200/kept/planned "the reservation"
api GET /v1/goal/nodes/sim/n1 >/dev/null
t_is "$(jget "$BODY" .attributes.kernel)" 6.1 "the goal"
api POST /v1/jobs '{"name": "done", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "1"}}' \
    -H 'Idempotency-Key: backup-1' >/dev/null
t_is "$STATUS/$(jget "$BODY" .id)" "200/$DONE" "the Idempotency-Key replays the job it made before the backup"
submit '{"name": "new", "command": ["/bin/true"], "env": {"LOOM_SIM_RUNTIME_S": "1"}}'
t_is "$JOB" $((HELD + 1)) "a new job is numbered after the old ones"
api POST "/v1/jobs/$HELD/release" >/dev/null
wait_for 'ended "$HELD"' 60
t_is "$(job_state "$HELD")" completed "the released job runs on the restored loomd"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
