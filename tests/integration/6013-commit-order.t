#!/usr/bin/env bash
# 6013-commit-order.t - submits are written on several connections at once,
# and answered in the order of their ids: a later submit whose transaction
# commits while an earlier one still waits is neither answered nor shown
# until the earlier one is done. The earlier one's write is held up by a
# session that inserts a row with the same Idempotency-Key and keeps its
# transaction open: when that session rolls back, both are written and
# answered 201 in order; when it commits, the earlier write fails on the
# key (409) and only it fails; when the earlier write's connection is cut,
# only it fails (503), its key is free again, and the later one is
# answered 201 and shown.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<'EOF'
[cluster sim]
adaptor = sim
nodes = 2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "the scheduler is switched off" || t_diag "$BODY"
BODY_JOB='{"command": ["true"], "request": {"cluster": "sim"}}'
submit "$BODY_JOB" -H "Idempotency-Key: first" || t_bail "the first submit failed"
t_is "$JOB" 1 "a first job"
# whom loomd files an Idempotency-Key under
OWNER=$(pg_sql "select idem_owner from jobs where id = 1")
t_isnt "$OWNER" "" "its key is filed under its submitter ($OWNER)"

# bg_submit NAME: POST /v1/jobs in the background, with Idempotency-Key
# NAME; its status and body go to $T/sub.NAME.
bg_submit() {
    curl -s -o "$T/sub.$1.body" -w '%{http_code}\n' --max-time 60 \
        -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -H "Idempotency-Key: $1" --data-binary "$BODY_JOB" \
        "$LOOM_URL/v1/jobs" >"$T/sub.$1" 2>/dev/null &
    CURLS+=($!)
}
CURLS=()
# waiting_writes: loomd's inserts waiting for a lock.
waiting_writes() {
    pg_sql "select count(*) from pg_stat_activity where wait_event_type = 'Lock'
            and query like '%INSERT INTO jobs%'"
}
# stored KEY: the ids of the rows with Idempotency-Key KEY.
stored() {
    pg_sql "select coalesce(string_agg(id::text, ' ' order by id), '')
            from jobs where idem_key = '$1'"
}
# block KEY ID: a session inserts row ID with Idempotency-Key KEY and
# keeps its transaction open until end_block says how to end it; loomd's
# insert of a job with that key waits for it. Its PID in BLOCKER.
block() {
    rm -f "$T/blocked" "$T/end"
    ( { printf '%s\n' "BEGIN;" \
            "INSERT INTO jobs (id, state, owner, idem_owner, idem_key, doc)
             VALUES ($2, 'completed', 'blocker', '$OWNER', '$1', '{}');" \
            "\\! touch $T/blocked"
        while [ ! -e "$T/end" ]; do sleep 0.1; done
        cat "$T/end"; } |
        "$PG_BIN/psql" -X -q -h "$LOOM_PG_DIR" -U postgres -d loom >/dev/null 2>&1 ) &
    BLOCKER=$!
    t_cleanup "echo ROLLBACK\\; >$T/end; kill $BLOCKER 2>/dev/null"
    wait_for '[ -e "$T/blocked" ]' 30
}
# end_block COMMIT|ROLLBACK: end the blocking session's transaction.
end_block() {
    echo "$1;" >"$T/end.tmp" && mv "$T/end.tmp" "$T/end"
    wait "$BLOCKER"
}
# held_up A B: submit A, whose write then waits for the blocking session,
# and B, written and committed on another connection meanwhile.
held_up() {
    bg_submit "$1"
    wait_for '[ "$(waiting_writes)" = 1 ]' 30
    t_is "$(waiting_writes)" 1 "$1: its write waits for the session with its key"
    bg_submit "$2"
    wait_for "[ -n \"\$(stored $2)\" ]" 30
    t_like "$(stored "$2")" '^[0-9]+$' "$2, submitted after it, is committed meanwhile"
    t_is "$(cat "$T/sub.$1" "$T/sub.$2" 2>/dev/null | tr -d '\n')" "" \
        "... and neither is answered"
    api GET "/v1/jobs/$(stored "$2")" >/dev/null
    t_is "$STATUS" 404 "... nor is $2 shown while a smaller id is not done"
}

# ---- the earlier write goes through: both answered, in order ----------------
block c0 1000000 || t_bail "the blocking session did not start"
held_up c0 c1
end_block ROLLBACK
wait "${CURLS[@]}"
CURLS=()
t_is "$(cat "$T/sub.c0") $(cat "$T/sub.c1")" "201 201" \
    "once it lets go, both are answered 201"
t_is "$(jget "$(cat "$T/sub.c0.body")" .id) $(jget "$(cat "$T/sub.c1.body")" .id)" \
    "2 3" "... with their ids in the order they were sent"
t_is "$(stored c0) $(stored c1)" "2 3" "... and both are stored"

# ---- the earlier write fails on its key: it alone is refused ----------------
block d0 1000000 || t_bail "the blocking session did not start"
held_up d0 d1
end_block COMMIT
wait "${CURLS[@]}"
CURLS=()
t_is "$(cat "$T/sub.d0")" 409 "the session commits its key: the earlier submit is refused (409)"
t_like "$(cat "$T/sub.d0.body")" 'idempotency key already used' \
    "... saying its key is used" || t_diag "$(cat "$T/sub.d0.body")"
t_is "$(cat "$T/sub.d1")" 201 "the later one is answered 201"
D1=$(jget "$(cat "$T/sub.d1.body")" .id)
t_is "$D1" 5 "... with the id it was given"
t_is "$(stored d0)" 1000000 "the refused job is not stored (only the session's row)"
api GET /v1/jobs/4 >/dev/null
t_is "$STATUS" 404 "... nor shown"
api GET "/v1/jobs/$D1" >/dev/null
t_is "$STATUS" 200 "the later one is shown"

# ---- the earlier write's connection is cut: it alone fails --------------------
block e0 1000001 || t_bail "the blocking session did not start"
held_up e0 e1
pg_sql "select pg_terminate_backend(pid) from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%INSERT INTO jobs%'" >/dev/null
wait_for '[ -s "$T/sub.e0" ] && [ -s "$T/sub.e1" ]' 30
t_is "$(cat "$T/sub.e0")" 503 "the submit whose write was cut is answered 503"
t_like "$(cat "$T/sub.e0.body")" '"code":"unavailable".*retry' \
    "... saying the database is unavailable and to retry" ||
    t_diag "$(cat "$T/sub.e0.body")"
t_is "$(cat "$T/sub.e1")" 201 "the later one is answered 201"
E1=$(jget "$(cat "$T/sub.e1.body")" .id)
t_is "$E1" 7 "... with the id it was given"
end_block ROLLBACK
wait "${CURLS[@]}"
CURLS=()
t_is "$(stored e0)" "" "the failed one is not stored"
api GET /v1/jobs >/dev/null
t_is "$(py '" ".join(i["id"] for i in d["items"])' "$BODY")" "1 2 3 5 7" \
    "the list shows the answered jobs, not the refused or failed ones" ||
    t_diag "$BODY"
wait_for 'submit "$BODY_JOB" -H "Idempotency-Key: e0"' 30
t_is "$STATUS" 201 "the failed one's key is accepted again"
t_is "$(stored e0)" "$JOB" "... and stored"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
