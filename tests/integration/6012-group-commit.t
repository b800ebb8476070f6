#!/usr/bin/env bash
# 6012-group-commit.t - submits are written on up to two connections at
# once (COMMIT_CONNS), each write one transaction; the submits that come
# while both wait go together in the next transaction. With the jobs
# table locked, two submits' writes wait, each on its own connection;
# six more submits, each answered only after its own commit, are then
# written in one transaction (the commit metrics count three), every one in
# the order of their ids, acknowledged in the database and shown. When a
# write fails (its connection cut while it waits), it alone is answered
# 503: the writes beside it and the submits taken behind it are written
# once the table is free, with the ids they were given; the failed one is
# neither stored nor shown (not even once a later id is committed), and
# its Idempotency-Key is free again. Eight clients that connect at once
# each have a thread of their own: all eight submits are taken while the
# writes wait.
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
# Nothing starts: the only writes are the submits'.
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "the scheduler is switched off" || t_diag "$BODY"
BODY_JOB='{"command": ["true"], "request": {"cluster": "sim"}}'
submit "$BODY_JOB" || t_bail "the first submit failed"
t_is "$JOB" 1 "a first job, committed alone"

# metric NAME: the value of loomd's metric NAME (no labels).
metric() {
    api GET /metrics >/dev/null
    awk -v n="$1" '$1 == n { print $2 }' <<<"$BODY"
}
# pending: the jobs the scheduler thread holds pending (committed or not).
pending() {
    api GET /v1/runtime >/dev/null
    jget "$BODY" .scheduler.jobs.pending
}
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
# waiting_writes: loomd's statements waiting for a lock on the jobs table.
waiting_writes() {
    pg_sql "select count(*) from pg_stat_activity where wait_event_type = 'Lock'
            and query like '%INSERT INTO jobs%'"
}
# lock_jobs: a session that holds the jobs table against writes until
# $T/unlock exists; its PID in LOCKER.
lock_jobs() {
    rm -f "$T/unlock" "$T/locked"
    ( { printf '%s\n' "BEGIN;" "LOCK TABLE jobs IN SHARE MODE;" "\\! touch $T/locked"
        while [ ! -e "$T/unlock" ]; do sleep 0.1; done
        echo "COMMIT;"; } |
        "$PG_BIN/psql" -X -q -h "$LOOM_PG_DIR" -U postgres -d loom >/dev/null 2>&1 ) &
    LOCKER=$!
    t_cleanup "touch $T/unlock; kill $LOCKER 2>/dev/null"
    wait_for '[ -e "$T/locked" ]' 30
}
# all_handed N: the scheduler thread holds N jobs pending, and has ended
# the turn that took the last of them (a second answer comes from a later
# turn).
all_handed() {
    [ "$(pending)" = "$1" ] && [ "$(pending)" = "$1" ]
}

# ---- two writes wait, six more submits go together ------------------------------
lock_jobs || t_bail "cannot lock the jobs table"
# one after the other, each taken before the next is sent: a connection
# thread that waits for an answer serves no other connection meanwhile
for k in 0 1; do
    bg_submit "a$k"
    wait_for "[ \"\$(waiting_writes)\" = $((k + 1)) ]" 30
done
t_is "$(waiting_writes)" 2 "two submits' writes wait for the lock, each on its own connection"
for k in 2 3 4 5 6 7; do
    bg_submit "a$k"
    wait_for "all_handed $((2 + k))" 30
done
t_is "$(pending)" 9 "six more submits are taken while they wait"
t_is "$(waiting_writes)" 2 "... and wait for a connection"
COMMITS=$(metric loom_db_commit_jobs_count)
JOBS=$(metric loom_db_commit_jobs_sum)
t_is "$(cat "$T"/sub.a? 2>/dev/null | tr -d '\n')" "" "none is answered before its commit"
touch "$T/unlock"
wait "${CURLS[@]}" "$LOCKER"
CURLS=()
IDS=
for k in 0 1 2 3 4 5 6 7; do
    [ "$(cat "$T/sub.a$k")" = 201 ] || t_diag "a$k: $(cat "$T/sub.a$k") $(cat "$T/sub.a$k.body" 2>/dev/null)"
    IDS="$IDS $(jget "$(cat "$T/sub.a$k.body" 2>/dev/null)" .id 2>/dev/null)"
done
t_is "$(cat "$T"/sub.a? | sort | uniq -c | tr -s ' ')" " 8 201" \
    "all eight are answered 201"
t_is "$(echo $IDS)" "2 3 4 5 6 7 8 9" "their ids are 2 to 9, in the order they were sent"
t_is "$(( $(metric loom_db_commit_jobs_count) - COMMITS ))/$(( $(metric loom_db_commit_jobs_sum) - JOBS ))" \
    "3/8" "written in three transactions: the two that waited, then the six together"
t_is "$(pg_sql "select string_agg(id::text, ' ' order by id) from jobs where idem_key like 'a%'")" \
    "2 3 4 5 6 7 8 9" "every acknowledged job is in the database"
api GET /v1/jobs >/dev/null
t_is "$(py 'len(d["items"])' "$BODY")" 9 "the list shows the nine jobs"

# ---- a failed write: it alone fails -------------------------------------------
lock_jobs || t_bail "cannot lock the jobs table"
for k in 0 1; do
    bg_submit "b$k"
    wait_for "[ \"\$(waiting_writes)\" = $((k + 1)) ]" 30
done
t_is "$(waiting_writes)" 2 "two submits' writes wait for the lock again"
for k in 2 3 4 5; do
    bg_submit "b$k"
    wait_for "all_handed $((10 + k))" 30
done
t_is "$(pending)" 15 "four more are taken behind them"
# the first write's connection is cut: the oldest statement waiting
pg_sql "select pg_terminate_backend(pid) from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%INSERT INTO jobs%'
        order by query_start limit 1" >/dev/null
wait_for '[ -s "$T/sub.b0" ]' 30
t_is "$(cat "$T/sub.b0")" 503 "the submit whose write failed is answered 503"
t_like "$(cat "$T/sub.b0.body")" '"code":"unavailable".*retry' \
    "... saying the database is unavailable and to retry" ||
    t_diag "$(cat "$T/sub.b0.body")"
wait_for '[ "$(waiting_writes)" = 2 ]' 30
t_is "$(waiting_writes)" 2 "the four behind it are written next, beside the other one, and wait for the lock"
t_is "$(cat "$T"/sub.b[1-5] 2>/dev/null | tr -d '\n')" "" "... unanswered"
touch "$T/unlock"
wait "${CURLS[@]}" "$LOCKER"
t_is "$(cat "$T"/sub.b[1-5] | sort | uniq -c | tr -s ' ')" " 5 201" \
    "once the lock goes they are written: 201"
IDS=
for k in 1 2 3 4 5; do
    IDS="$IDS $(jget "$(cat "$T/sub.b$k.body" 2>/dev/null)" .id 2>/dev/null)"
done
t_is "$(echo $IDS)" "11 12 13 14 15" "... with the ids they were given, in order"
t_is "$(pg_sql "select string_agg(idem_key, ' ' order by id) from jobs where idem_key like 'b%'")" \
    "b1 b2 b3 b4 b5" "they are in the database, the failed one is not"
api GET /v1/jobs >/dev/null
t_is "$(py '" ".join(i["id"] for i in d["items"])' "$BODY")" \
    "1 2 3 4 5 6 7 8 9 11 12 13 14 15" "the list shows them, not the failed one" ||
    t_diag "$BODY"
wait_for 'submit "$BODY_JOB" -H "Idempotency-Key: b0"' 30
t_is "$STATUS" 201 "the failed one's key is accepted again"
t_is "$(pg_sql "select count(*) from jobs where idem_key = 'b0'")" 1 "... and stored"

# ---- eight clients that connect at once are all taken ----------------------------
# A handler holds its pool thread while its submit waits for the commit,
# and with it the other connections on that thread: eight connections
# opened together must be on eight threads, or some submits would wait
# unread behind the others.
P0=$(pending)
lock_jobs || t_bail "cannot lock the jobs table"
python3 - "$PORT" "$TOKEN" "$BODY_JOB" >"$T/eight.out" 2>&1 <<'EOF' &
import socket, sys
port, token, body = int(sys.argv[1]), sys.argv[2], sys.argv[3].encode()
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(8)]
req = (b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
       token.encode() + b"\r\nContent-Type: application/json\r\n"
       b"Connection: close\r\nContent-Length: " + str(len(body)).encode() +
       b"\r\n\r\n" + body)
for c in conns:
    c.sendall(req)
for c in conns:  # each answer, read to the close
    c.settimeout(60)
    out = b"".join(iter(lambda: c.recv(65536), b""))
    print(out.split(b"\r\n", 1)[0].decode())
EOF
EIGHT=$!
wait_for "all_handed $((P0 + 8))" 30
t_is "$(pending)" $((P0 + 8)) \
    "eight clients connected at once: their eight submits are all taken while the writes wait"
# taken is not yet sent: the turns reach their connections a moment later.
# Eight that come together may go in fewer turns than there are
# connections (one of eight): at least one write, and never more than the
# two connections, waits for the lock.
wait_for '[ "$(waiting_writes)" -ge 1 ]' 30
W8=$(waiting_writes)
t_ok "$( ((W8 >= 1 && W8 <= 2)) && echo 0 || echo 1)" \
    "... their writes wait for the lock on 1 or 2 connections ($W8)"
touch "$T/unlock"
wait "$EIGHT" "$LOCKER"
t_is "$(sort "$T/eight.out" | uniq -c | tr -s ' ')" " 8 HTTP/1.1 201 Created" \
    "once the lock goes all eight are answered 201"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
