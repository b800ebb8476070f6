#!/usr/bin/env bash
# 9014-maint-memory.t - ended maintenance requests leave loomd's memory
# [maintenance] request_memory_s after they ended (2 s here) and are read
# from PostgreSQL from then on: GET /v1/maintenance/{id}, the list and its
# filters answer the same before and after, a DELETE of one is still 409
# naming its state, loom_maintenance_requests still counts it, and a
# restart answers the same. A failed request stays in memory while the
# rules' back-off counts it: until its action has been done on its node.
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
    for id in $DONE $FAILED $CANCELLED; do
        api GET "/v1/maintenance/$id" >/dev/null
        echo "GET $id: $STATUS $BODY"
    done
    for q in "" "?state=done" "?state=failed&action=bad" \
        "?cluster=sim&state=cancelled" "?action=ok"; do
        api GET "/v1/maintenance$q" >/dev/null
        echo "list $q: $STATUS $BODY"
    done
    api DELETE "/v1/maintenance/$DONE" >/dev/null
    echo "DELETE $DONE: $STATUS $(jget "$BODY" .error.message 2>/dev/null)"
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
t_like "$(grep '^DELETE' "$T/after")" "409 maintenance request $DONE is done" \
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
t_done
