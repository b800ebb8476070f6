#!/usr/bin/env bash
# 1102-standby-stop.t - the active loomd stalled (SIGSTOP) for 10 s with
# local jobs running and more waiting: it keeps its database connection and
# its advisory lock, so the standby takes over only by the lease (the
# heartbeat stops moving), ending the stalled one's sessions. Once
# continued, the old loomd finds itself fenced and comes back as a standby:
# after SIGCONT its log shows no adaptor operation and no commit tried, no
# local job ran twice, and writes sent to it are redirected to the new
# active loomd. Both run as loomd's account, the jobs as the admin token's
# test account. The takeover time is printed.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/standby.sh"

STOP_S=10
N_FIRST=8 # local jobs before the stall: 2 nodes, 3 s each
N_LATER=4 # submitted to b while a is stopped

# The jobs write their ids and who they ran as in $W.
W=$T/w
mkdir -m 1777 "$W"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
$(sim_cluster 4 1)
EOF
loomd_start || t_bail "loomd a did not start"
A_PID=$LOOMD_PID
t_cleanup 'kill -CONT $A_PID 2>/dev/null'
admin_token || t_bail "no admin token"
peer_start b || t_bail "loomd b did not start"
B=${PEER_URL[b]}
wait_for 'role "$B" >/dev/null; [ "$ROLE/$ACTIVE_URL" = "standby/$LOOM_URL" ]' 30
role "$B" >/dev/null
t_is "$ROLE/$ACTIVE_URL" "standby/$LOOM_URL" "b stands by and names a, the active one"
t_is "$(ps -o user= -p "$A_PID")/$(ps -o user= -p "${PEER_PID[b]}")" \
    "$LOOM_SERVICE_USER/$LOOM_SERVICE_USER" "a and b run as $LOOM_SERVICE_USER"
EPOCH_A=$(pg_sql "SELECT epoch FROM leader")

job() { # job KEY URL: a local job (3 s) and a simulated one (2 s)
    local url=$2
    LOOM_URL=$url api POST /v1/jobs "{\"name\": \"stop-$1\",
        \"command\": [\"/bin/sh\", \"-c\",
            \"echo \$LOOM_JOB_ID \$(id -un) >> $W/starts; sleep 3\"],
        \"request\": {\"cluster\": \"local\", \"walltime_s\": 120}}" \
        -H "Idempotency-Key: stop-$1" >/dev/null
    [ "$STATUS" = 201 ] || return 1
    LOOM_URL=$url api POST /v1/jobs "{\"name\": \"stop-sim-$1\",
        \"command\": [\"/bin/true\"], \"env\": {\"LOOM_SIM_RUNTIME_S\": \"2\"},
        \"request\": {\"cluster\": \"sim\", \"walltime_s\": 120}}" \
        -H "Idempotency-Key: stop-sim-$1" >/dev/null
    [ "$STATUS" = 201 ]
}
ok=0
for ((i = 0; i < N_FIRST; i++)); do job "$i" "$LOOM_URL" || ok=1; done
t_ok $ok "a took $N_FIRST local and $N_FIRST simulated jobs"
starts() { cat "$W/starts" 2>/dev/null | wc -l; }
wait_for '[ "$(starts)" -ge 2 ]' 60
t_ok "$( [ "$(starts)" -ge 2 ] && [ "$(starts)" -lt $N_FIRST ] && echo 0 || echo 1)" \
    "a runs local jobs and has more waiting ($(starts) of $N_FIRST started)"

# ---- a stalls ---------------------------------------------------------------
T_STOP=$(now_s)
kill -STOP "$A_PID"
wait_role "$B" active 60
T_ACTIVE=$(now_s)
role "$B" >/dev/null
t_is "$ROLE/$ACTIVE_URL" "active/$B" "b takes over from the stalled a"
t_diag "takeover: b active $(python3 -c "print('%.2f' % ($T_ACTIVE - $T_STOP))") s after a was stopped (lease 3 s)"
EPOCH_B=$(pg_sql "SELECT epoch FROM leader")
t_ok "$( [ "$EPOCH_B" -gt "$EPOCH_A" ] && echo 0 || echo 1)" \
    "the epoch moved on past a's ($EPOCH_A -> $EPOCH_B)"
t_is "$(pg_sql "SELECT string_agg(a.application_name, ' ') FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND l.classid = 1280266061 AND l.objid = 2 AND l.granted")" \
    "loomd/$ACTIVE_ID" "b's session alone holds the lock (a's was ended)"

ok=0
for ((i = N_FIRST; i < N_FIRST + N_LATER; i++)); do job "$i" "$B" || ok=1; done
t_ok $ok "b takes $N_LATER more of each while a is stopped"

# The stall lasts STOP_S, whatever the takeover took.
left=$(python3 -c "print(max(0.0, $T_STOP + $STOP_S - $(now_s)))")
sleep "$left"
MARK=$(wc -l <"$T/loomd.log")
kill -CONT "$A_PID"

# ---- a comes back: fenced, then a standby -------------------------------------
wait_role "$LOOM_URL" standby 60
role "$LOOM_URL" >/dev/null
t_is "$ROLE/$ACTIVE_URL" "standby/$B" "a comes back as a standby and names b"
t_ok "$(alive "$A_PID" && echo 0 || echo 1)" "... as the same process"

N=$((N_FIRST + N_LATER))
done_in() {
    pg_sql "SELECT count(*) FROM jobs WHERE doc->'request'->>'cluster' = '$1' AND state = 'completed'"
}
wait_for '[ "$(done_in local)/$(done_in sim)" = "$N/$N" ]' 120 0.5
t_is "$(done_in local)/$(done_in sim)" "$N/$N" "every job completed: $N local, $N simulated"
t_is "$(starts)" "$N" "$N local processes ran"
cut -d' ' -f1 "$W/starts" | sort >"$T/started"
t_is "$(uniq -d "$T/started" | wc -l)" 0 "no local job ran twice"
pg_sql "SELECT id FROM jobs WHERE doc->'request'->>'cluster' = 'local'" | sort >"$T/local.ids"
t_is "$(comm -3 "$T/started" "$T/local.ids" | wc -l)" 0 \
    "the processes are those of the local jobs, one each"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$T_USER" \
    "they ran as $T_USER, the admin token's account"
t_is "$(pg_sql "SELECT count(*) || ' ' || count(DISTINCT idem_key) FROM jobs")" \
    "$((2 * N)) $((2 * N))" "no job twice in PostgreSQL"

# What a did after SIGCONT: it saw the lease gone and stood by.
tail -n +"$((MARK + 1))" "$T/loomd.log" >"$T/a.after"
t_like "$(cat "$T/a.after")" 'leader: fenced' "a's log: it found itself fenced"
t_is "$(grep -cE 'cluster=[a-z]+ (started|re-attached)|: started on|adopted|[a-z]+ sent$|state set to' "$T/a.after")" \
    0 "a's log: no adaptor operation after SIGCONT" ||
    t_diag "$(grep -E 'cluster=[a-z]+ (started|re-attached)|: started on|adopted|[a-z]+ sent$|state set to' "$T/a.after" | head -5)"
t_is "$(grep -c 'refused by the write fence' "$T/a.after")" 0 \
    "a's log: no commit tried (none refused by the database's fence)"

# A write sent to a now goes to b.
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cluster": "sim"}}' \
    -D "$T/a.headers" >/dev/null
t_is "$STATUS" 307 "a submit to a is redirected"
t_like "$(tr -d '\r' <"$T/a.headers" | grep -i '^location:')" "$B/v1/jobs" \
    "... to b"
t_like "$(tr -d '\r' <"$T/a.headers" | grep -i '^x-request-id:')" \
    '^[Xx]-[Rr]equest-[Ii]d: [0-9a-f]{8}-[0-9]+$' "... with its request id"
# a counts what it answered under the route's pattern
t_is "$(curl -s "$LOOM_URL/metrics" |
        grep -c '^loom_http_request_seconds_count{method="POST",route="/v1/jobs",code="3xx"} 1$')" \
    1 "a's /metrics counts the 307 under the route /v1/jobs"

loomd_stop
t_is $? 0 "a stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
peer_stop b
t_is $? 0 "b stops with status 0" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd-b.log" | head -40)"
t_done
