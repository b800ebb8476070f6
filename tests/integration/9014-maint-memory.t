#!/usr/bin/env bash
# 9014-maint-memory.t - ended maintenance requests leave loomd's memory
# [maintenance] request_memory_s after they ended (2 s here) and are read
# from PostgreSQL from then on: GET /v1/maintenance/{id}, the list and its
# filters answer the same before and after, a DELETE of one is still 409
# naming its state, loom_maintenance_requests still counts it, and a
# restart answers the same. A failed request stays in memory while the
# rules' back-off counts it: until its action has been done on its node.
# A start reads light the requests that ended request_memory_s ago and
# that the back-off counts not: never loaded, counted as gone, and every
# answer about them (a DELETE through the maintenance thread too) as from
# a start that loaded them all; one that ended lately, a failure the
# back-off counts and a done one after it are read in full and stay.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[maintenance]
request_memory_s = 2
[action ok]
command = /bin/true
duration_s = 30
[action bad]
command = /bin/false
duration_s = 30
$(sim_cluster 4 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# mreq NODE ACTION [WINDOW]: a request on sim/NODE; its id in $MR.
mreq() {
    api POST /v1/maintenance "$(printf '{"cluster": "sim", "nodes": ["%s"], %s%s}' \
        "$1" "\"action\": \"$2\", \"reason\": \"9014\"" "${3:+, \"window\": $3}")" \
        >/dev/null
    [ "$STATUS" = 201 ] || t_diag "POST /v1/maintenance: $STATUS $BODY"
    MR=$(jget "$BODY" .id)
}
mstate() {
    api GET "/v1/maintenance/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
# answers: every answer about the requests, one a line.
answers() {
    local id q
    for id in $DONE $FAILED $CANCELLED $MORE; do
        api GET "/v1/maintenance/$id" >/dev/null
        echo "GET $id: $STATUS $BODY"
    done
    for q in "" "?state=done" "?state=failed&action=bad" \
        "?cluster=sim&state=cancelled" "?action=ok"; do
        api GET "/v1/maintenance$q" >/dev/null
        echo "list $q: $STATUS $BODY"
    done
    for id in $DONE $FAILED $CANCELLED; do
        api DELETE "/v1/maintenance/$id" >/dev/null
        echo "DELETE $id: $STATUS $(jget "$BODY" .error.message 2>/dev/null)"
    done
    api GET /v1/maintenance/999 >/dev/null
    echo "GET 999: $STATUS"
    api GET /metrics >/dev/null
    grep '^loom_maintenance_requests' <<<"$BODY" | sort
}

mreq n1 ok
DONE=$MR
mreq n2 bad
FAILED=$MR
mreq n3 ok '{"not_before": "2099-01-01T00:00:00Z", "duration_s": 60}'
CANCELLED=$MR
api DELETE "/v1/maintenance/$CANCELLED" >/dev/null
wait_for '[ "$(mstate "$DONE")/$(mstate "$FAILED")" = done/failed ]' 60
t_is "$(mstate "$DONE")/$(mstate "$FAILED")/$(mstate "$CANCELLED")" \
    done/failed/cancelled "three requests ended: done, failed, cancelled"
answers >"$T/before"
t_is "$(runtime_counter .maintenance.requests)" 3 "GET /v1/runtime counts 3 requests"

wait_for '[ "$(runtime_counter .maintenance.in_memory)" = 1 ]' 30
t_is "$(runtime_counter .maintenance.in_memory)/$(runtime_counter .maintenance.requests)" 1/3 \
    "the done and the cancelled left memory; the failed stays (back-off)"
answers >"$T/after"
t_is "$(cat "$T/after")" "$(cat "$T/before")" \
    "every answer about them is the same after they left memory"
t_like "$(grep "^DELETE $DONE:" "$T/after")" "409 maintenance request $DONE is done" \
    "a DELETE of one that left memory is 409 with its state"
t_like "$(grep '^list ?state=done:' "$T/after")" "\"id\":\"$DONE\"" \
    "the list with ?state=done shows the one that left memory"

# its action done on its node: the failure counts no more
sed -i 's|^command = /bin/false$|command = /bin/true|' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "the action bad succeeds from a reload on" || t_diag "$BODY"
mreq n2 bad
wait_for '[ "$(mstate "$MR")" = done ]' 60
wait_for '[ "$(runtime_counter .maintenance.in_memory)" = 0 ]' 30
t_is "$(runtime_counter .maintenance.in_memory)/$(runtime_counter .maintenance.requests)" 0/4 \
    "once its action was done on its node, the failed one leaves memory too"
api GET "/v1/maintenance/$FAILED" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/failed \
    "... and is read from the database"
answers >"$T/final"

loomd_stop
loomd_start || t_bail "loomd did not start again"
t_is "$(runtime_counter .maintenance.in_memory)/$(runtime_counter .maintenance.requests)" 0/4 \
    "after a restart the ended requests are not held in memory"
answers >"$T/restarted"
t_is "$(cat "$T/restarted")" "$(cat "$T/final")" \
    "the answers are the same after a restart"

# ---- a light start: those that ended long ago are never loaded -------------
# Four more end: F2 (bad on n3 and n4) fails and D2 (bad on n3) is done
# after it: the back-off counts F2 (n4 has had no bad done since) and so
# keeps D2; YOUNG (ok on n1) is done just before the restart, LAST (ok on
# n2, the highest id) before it. All but YOUNG are made an hour old. A
# start with request_memory_s = 0 reads and keeps every one: its answers
# are those of a start without light reading. One with 600 reads light
# the four the back-off counts not (DONE, FAILED, CANCELLED, LAST), and in
# full the four others: of those it lets MR4 (done after FAILED) go at
# once and keeps F2, D2 and YOUNG.
bad_command() {
    sed -i "/^\[action bad\]/,/^command/ s|^command = .*|command = $1|" "$T/loom.conf"
    api POST /v1/runtime/reload '{}' >/dev/null
    [ "$STATUS" = 200 ] || t_diag "reload: $STATUS $BODY"
}
bad_command /bin/false
api POST /v1/maintenance '{"cluster": "sim", "nodes": ["n3", "n4"], "action": "bad", "reason": "9014"}' >/dev/null
F2=$(jget "$BODY" .id)
wait_for '[ "$(mstate "$F2")" = failed ]' 60
bad_command /bin/true
mreq n3 bad
D2=$MR
wait_for '[ "$(mstate "$D2")" = done ]' 60
mreq n1 ok
YOUNG=$MR
mreq n2 ok
LAST=$MR
wait_for '[ "$(mstate "$YOUNG")/$(mstate "$LAST")" = done/done ]' 60
t_is "$(mstate "$F2")/$(mstate "$D2")/$(mstate "$YOUNG")/$(mstate "$LAST")" \
    failed/done/done/done "four more ended: F2 failed, D2, YOUNG and LAST done"
MORE="$F2 $D2 $YOUNG $LAST"
loomd_stop
OLD=$(at -3600)
pg_sql "UPDATE maintenance SET doc = regexp_replace(doc::text,
            '\"time\":\"[^\"]*\"', '\"time\":\"$OLD\"', 'g')::json
        WHERE id <> $YOUNG" >/dev/null
t_is "$(pg_sql "SELECT count(*) FROM maintenance WHERE doc->'history'->-1->>'time' = '$OLD'")" 7 \
    "seven requests ended an hour ago"

sed -i 's/^request_memory_s = 2$/request_memory_s = 0/' "$T/loom.conf"
loomd_start || t_bail "loomd did not start with request_memory_s = 0"
t_is "$(runtime_counter .maintenance.in_memory)/$(runtime_counter .maintenance.requests)" 8/8 \
    "request_memory_s = 0: all 8 are in memory"
answers >"$T/full"
loomd_stop

sed -i 's/^request_memory_s = 0$/request_memory_s = 600/' "$T/loom.conf"
loomd_start || t_bail "loomd did not start with request_memory_s = 600"
t_like "$(grep 'maintenance: [0-9]* request(s)' "$T/loomd.log" | tail -n 1)" \
    "maintenance: 8 request\(s\), 0 open, 3 in memory; 4 ended before 600 s ago left in the database" \
    "request_memory_s = 600: 4 are read light, 4 in full"
t_is "$(runtime_counter .maintenance.in_memory)/$(runtime_counter .maintenance.requests)" 3/8 \
    "in memory: F2, D2 (the back-off counts F2) and YOUNG"
answers >"$T/light"
while IFS= read -r b && IFS= read -r a <&3; do
    t_is "$a" "$b" "the same after a light start: ${b:0:40}"
done <"$T/full" 3<"$T/light"
t_is "$(wc -l <"$T/light")" "$(wc -l <"$T/full")" "... every one of $(wc -l <"$T/full") answers"

# ids go on after the highest, read light or not, and after the highest
# a reservation names (a request whose reservation was committed but not
# itself: its row deleted here)
mreq n1 ok
t_is "$MR" $((LAST + 1)) "a new request takes the id after LAST's, read light"
NEWEST=$MR
wait_for '[ "$(mstate "$NEWEST")" = done ]' 60
loomd_stop
pg_sql "DELETE FROM maintenance WHERE id = $NEWEST" >/dev/null
loomd_start || t_bail "loomd did not start again"
mreq n1 ok
t_is "$MR" $((NEWEST + 1)) "after the request its reservation names, the next id"
t_done
