#!/usr/bin/env bash
# 0002-api-errors.t - every error path of the REST API answers with its
# status and the error body {"error": {"code", "message", ("field")}}, and
# the daemon survives all of it.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# err_is STATUS CODE NAME [FIELD]: the last answer has STATUS and the error
# body with CODE, a message and (when given) FIELD.
err_is() {
    local want=$1 code=$2 name=$3 field=${4-} got
    t_is "$STATUS" "$want" "$name: HTTP $want" || t_diag "  body: $BODY"
    got=$(printf '%s' "$BODY" | python3 -c 'import json, sys
try:
    e = json.load(sys.stdin)["error"]
    print("%s\t%s" % (e["code"] if len(e["message"]) >= 5 else "(no message)",
                      e.get("field", "(no field)")))
except Exception as x:
    print("(no error body: %s)" % x)')
    if [ "${got%%$'\t'*}" = "$code" ]; then
        t_ok 0 "$name: error body with code $code and a message"
    else
        t_ok 1 "$name: error body with code $code and a message"
        t_diag "  body: $BODY"
    fi
    if [ -n "$field" ]; then
        t_is "${got#*$'\t'}" "$field" "$name: error.field names $field"
    fi
}

# raw METHOD PATH CONTENT-TYPE FILE [CURL ARGS]: like api, with any content
# type and the body from FILE.
raw() {
    rm -f "$T/raw.body"
    STATUS=$(curl -s -o "$T/raw.body" -w '%{http_code}' -X "$1" \
        --max-time 30 -H "Authorization: Bearer $TOKEN" \
        -H "Content-Type: $3" --data-binary "@$4" "${@:5}" "$LOOM_URL$2") || true
    STATUS=${STATUS:-000}
    BODY=$(cat "$T/raw.body" 2>/dev/null)
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
# the users' jobs run as the test's account, $T_USER (no privilege)
for u in alice bob sam; do map_account "$u" "$T_USER"; done
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
READER=$(token_for rita reader) || t_bail "no reader token"
ALICE=$(token_for alice user) || t_bail "no user token"
BOB=$(token_for bob user) || t_bail "no user token"
SHORT=$(token_for sam user 1) || t_bail "no short token"
SHORT_MADE=${EPOCHREALTIME/[.,]/}

JOB='{"command": ["/bin/true"]}'

# ---- 401 -------------------------------------------------------------------
TOKEN=
api GET /v1/jobs >/dev/null
err_is 401 unauthenticated "no token"
TOKEN=garbage.not-a-token
api GET /v1/jobs >/dev/null
err_is 401 unauthenticated "garbage token"
# one character of the signature changed (not the last one, whose low bits
# may be padding)
i=$((${#ADMIN} - 5))
c=A
[ "${ADMIN:i:1}" = A ] && c=B
TOKEN="${ADMIN:0:i}$c${ADMIN:i+1}"
api GET /v1/jobs >/dev/null
err_is 401 unauthenticated "token with a bad signature"
TOKEN=$SHORT
# The token lives 1 s (whole seconds): 2.2 s after it was made it is over.
while ((${EPOCHREALTIME/[.,]/} < SHORT_MADE + 2200000)); do sleep 0.1; done
api GET /v1/jobs >/dev/null
err_is 401 unauthenticated "expired token"
t_like "$(jget "$BODY" .error.message 2>/dev/null)" 'expire' \
    "expired token: the message says it expired"

# ---- 403 -------------------------------------------------------------------
TOKEN=$READER
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "a reader may list jobs"
api POST /v1/jobs "$JOB" >/dev/null
err_is 403 forbidden "reader submits a job"
TOKEN=$ALICE
api POST /v1/runtime/reload '{}' >/dev/null
err_is 403 forbidden "user reloads the configuration"
api POST /v1/runtime/shutdown '{}' >/dev/null
err_is 403 forbidden "user shuts the daemon down"
api POST /v1/jobs '{"command": ["/bin/sleep", "300"]}' >/dev/null
t_is "$STATUS" 201 "alice submits a job" || t_diag "$BODY"
ALICE_JOB=$(jget "$BODY" .id)
TOKEN=$BOB
# another's job is, to a user, one that does not exist (private_data)
api DELETE "/v1/jobs/$ALICE_JOB" >/dev/null
err_is 404 not_found "bob cancels alice's job"
t_is "$(jget "$BODY" .error.message)" "no job $ALICE_JOB" \
    "... with the message of a job that does not exist"
api POST "/v1/jobs/$ALICE_JOB/hold" '{}' >/dev/null
err_is 404 not_found "bob holds alice's job"
t_is "$(jget "$BODY" .error.message)" "no job $ALICE_JOB" \
    "... with the message of a job that does not exist"
api POST "/v1/jobs/$ALICE_JOB/suspend" '{}' >/dev/null
err_is 404 not_found "bob suspends alice's job"
t_is "$(jget "$BODY" .error.message)" "no job $ALICE_JOB" \
    "... with the message of a job that does not exist"
api POST "/v1/jobs/$ALICE_JOB/start" '{"cluster": "local", "nodes": ["n2"]}' >/dev/null
err_is 403 forbidden "a user calls the scheduler's start"
api PUT /v1/nodes/local/n1/state '{"state": "drain", "reason": "bob"}' >/dev/null
err_is 403 forbidden "a user drains a node"
TOKEN=$READER
api DELETE "/v1/jobs/$ALICE_JOB" >/dev/null
err_is 403 forbidden "a reader cancels alice's job"
TOKEN=$BOB
TOKEN=$ALICE
wait_for '[ "$(job_state "$ALICE_JOB")" = running ]' 30
api DELETE "/v1/jobs/$ALICE_JOB" >/dev/null
t_is "$STATUS" 202 "alice cancels her own running job: 202" || t_diag "$BODY"
TOKEN=$ADMIN
wait_for '[ "$(job_state "$ALICE_JOB")" = cancelled ]' 30
t_is "$(job_state "$ALICE_JOB")" cancelled "alice's job ends cancelled"

# ---- 404 -------------------------------------------------------------------
api GET /v1/jobs/999999 >/dev/null
err_is 404 not_found "unknown job id"
api GET /v1/jobs/not-a-number >/dev/null
err_is 404 not_found "job id that is not a number"
api DELETE /v1/jobs/999999 >/dev/null
err_is 404 not_found "cancel of an unknown job"
api GET /v1/nodes/local/n99 >/dev/null
err_is 404 not_found "unknown node"
api GET /v1/nodes/nocluster/n1 >/dev/null
err_is 404 not_found "node of an unknown cluster"
api GET /v1/clusters/nocluster >/dev/null
err_is 404 not_found "unknown cluster"
api GET /v1/bogus >/dev/null
err_is 404 not_found "unknown path under /v1"
api GET /nothing/here >/dev/null
err_is 404 not_found "unknown path outside /v1"
api POST "/v1/jobs/$ALICE_JOB/frobnicate" '{}' >/dev/null
err_is 404 not_found "unknown job operation"
api PUT /v1/nodes/local/n99/state '{"state": "drain"}' >/dev/null
err_is 404 not_found "state of an unknown node"
api PUT /v1/nodes/nocluster/n1/state '{"state": "drain"}' >/dev/null
err_is 404 not_found "state of a node of an unknown cluster"

# ---- 400 -------------------------------------------------------------------
api POST /v1/jobs '{"command": ["/bin/true"' >/dev/null
err_is 400 invalid_request "malformed JSON"
api POST /v1/jobs '[1, 2]' >/dev/null
err_is 400 invalid_request "a JSON array instead of an object"
api POST /v1/jobs '{"command": ["/bin/true"], "bogus": 1}' >/dev/null
err_is 400 invalid_request "unknown top-level field" bogus
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"bogus": 1}}' >/dev/null
err_is 400 invalid_request "unknown field inside request" request.bogus
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"nodes": "two"}}' >/dev/null
err_is 400 invalid_request "request.nodes of the wrong type" request.nodes
api POST /v1/jobs '{"command": "/bin/true"}' >/dev/null
err_is 400 invalid_request "command as a string" command
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"nodes": 0}}' >/dev/null
err_is 400 invalid_request "zero nodes" request.nodes
api POST /v1/jobs '{"command": ["/bin/true"], "script": "#!/bin/sh\ntrue\n"}' >/dev/null
err_is 400 invalid_request "both command and script"
api POST /v1/jobs '{"name": "nothing to run"}' >/dev/null
err_is 400 invalid_request "neither command nor script"
api POST /v1/jobs '{"command": ["/bin/true"], "env": {"1BAD": "x"}}' >/dev/null
err_is 400 invalid_request "bad environment variable name" env.1BAD
api POST /v1/jobs '' >/dev/null
err_is 400 invalid_request "empty body"
api POST /v1/jobs '{"command": ["/bin/true"], "command": ["/bin/false"]}' >/dev/null
err_is 400 invalid_request "a duplicate key"
api POST /v1/jobs "$(printf '{"command": ["/bin/\xff"]}')" >/dev/null
err_is 400 invalid_request "invalid UTF-8"
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"nodes": 100000000000000000000000}}' >/dev/null
err_is 400 invalid_request "an integer too large for JSON parsing"
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"walltime_s": -5}}' >/dev/null
err_is 400 invalid_request "a negative walltime" request.walltime_s
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"features": ["a", 7]}}' >/dev/null
err_is 400 invalid_request "a feature that is not a string" 'request.features[1]'
python3 -c 'import sys; sys.stdout.write("{\"command\": " + "[" * 200000 + "]" * 200000 + "}")' >"$T/deep.json"
raw POST /v1/jobs application/json "$T/deep.json"
err_is 400 invalid_request "JSON nested 200,000 deep"
api POST /v1/runtime/scheduler '{"enabled": "yes"}' >/dev/null
err_is 400 invalid_request "scheduler switch of the wrong type" enabled
api PUT /v1/nodes/local/n1/state '{"state": "sideways"}' >/dev/null
err_is 400 invalid_request "node state that does not exist" state

# ---- query parameters: every route takes its own, each checked -------------
# err_names STATUS CODE NAME ERE [FIELD]: err_is, and the message matches
# ERE (the culprit, and what is allowed).
err_names() {
    err_is "$1" "$2" "$3" "${5-}"
    t_like "$(jget "$BODY" .error.message 2>/dev/null)" "$4" \
        "$3: the message names it" || t_diag "  body: $BODY"
}
JOB_STATES='pending, held, starting, running, suspended, completed, failed and cancelled'
api GET '/v1/jobs?state=bogus' >/dev/null
err_names 400 invalid_request "?state=bogus" "'bogus' is not a job state; the job states are $JOB_STATES" state
api GET '/v1/jobs?state=PENDING' >/dev/null
err_names 400 invalid_request "?state=PENDING (states are lower case)" "'PENDING' is not a job state" state
api GET '/v1/jobs?state=%00' >/dev/null
err_names 400 invalid_request "?state=%00" 'query parameter state has a control character' state
api GET '/v1/jobs?stat=running' >/dev/null
err_names 400 invalid_request "an unknown parameter ?stat=" \
    "unknown query parameter 'stat': GET /v1/jobs takes cluster, state, owner, account, name, nodelist, limit, after, fields, id, queue and user" stat
api GET '/v1/jobs?fields=id,queue' >/dev/null
err_names 400 invalid_request "?fields= with a name that is no member of a job" \
    "query parameter fields: no field 'queue'; the fields are id,name,comment,owner,.*,dependency,loom_id\$" fields
api GET '/v1/jobs?state=running&state=pending' >/dev/null
err_names 400 invalid_request "a repeated parameter" 'query parameter state is given twice' state
api GET '/v1/jobs?owner=' >/dev/null
err_names 400 invalid_request "an empty value" 'query parameter owner needs a value' owner
api GET '/v1/jobs?owner' >/dev/null
err_names 400 invalid_request "a parameter without '='" 'query parameter owner needs a value' owner
api GET '/v1/jobs?owner=al%01ice' >/dev/null
err_names 400 invalid_request "an owner with a control character" 'query parameter owner has a control character' owner
api GET '/v1/jobs?owner=%ff' >/dev/null
err_names 400 invalid_request "an owner that is not UTF-8" 'owner has a control character or is not UTF-8' owner
api GET '/v1/jobs?owner=50%' >/dev/null
err_names 400 invalid_request "a '%' without two hex digits" "query parameter owner has a '%' without two hex digits" owner
api GET '/v1/jobs?owner=r%26d%20team' >/dev/null
t_is "$STATUS" 200 "an owner that needs escaping is text like any other"
api GET '/v1/jobs?cluster=nowhere' >/dev/null
err_names 400 invalid_request "?cluster= of no cluster" "there is no cluster 'nowhere'; the clusters are local" cluster
api GET '/v1/jobs?limit=0' >/dev/null
err_names 400 invalid_request "?limit=0" "limit must be a whole number from 1 to 100000, not '0'" limit
api GET '/v1/jobs?limit=100001' >/dev/null
err_names 400 invalid_request "?limit=100001" "from 1 to 100000, not '100001'" limit
api GET '/v1/jobs?limit=010' >/dev/null
err_names 400 invalid_request "?limit=010" "not '010'" limit
api GET '/v1/jobs?after=013' >/dev/null
err_names 400 invalid_request "?after=013" "after must be a job id or 0, not '013'" after
api GET '/v1/jobs?after=-1' >/dev/null
err_names 400 invalid_request "?after=-1" "not '-1'" after
api GET '/v1/jobs?after=0&limit=1' >/dev/null
t_is "$STATUS" 200 "?after=0&limit=1 is fine"
api GET '/v1/nodes?state=busy' >/dev/null
err_names 400 invalid_request "?state= of no node state" \
    "'busy' is not a node state; the node states are idle, mixed, allocated, reserved, draining, drained, down, maint, paused and unknown" state
api GET '/v1/nodes?cluster=nowhere' >/dev/null
err_names 400 invalid_request "/v1/nodes?cluster= of no cluster" "there is no cluster 'nowhere'" cluster
api GET '/v1/queues?cluster=nowhere' >/dev/null
err_names 400 invalid_request "/v1/queues?cluster= of no cluster" "there is no cluster 'nowhere'" cluster
api GET /v1/queues/nowhere >/dev/null
err_names 404 not_found "/v1/queues/{cluster} of no cluster" "no cluster 'nowhere'"
api GET '/v1/reservations?state=open' >/dev/null
err_names 400 invalid_request "/v1/reservations?state=open" \
    "'open' is not a reservation state; the reservation states are planned, active, done and cancelled" state
api GET '/v1/reservations?purpose=fun' >/dev/null
err_names 400 invalid_request "/v1/reservations?purpose=fun" "'fun' is not a reservation purpose; the reservation purposes are user and maintenance" purpose
api GET '/v1/maintenance?state=open' >/dev/null
err_names 400 invalid_request "/v1/maintenance?state=open" \
    "'open' is not a maintenance request state; the maintenance request states are requested, planned, draining, in-progress, verifying, done, failed and cancelled" state
api GET '/v1/maintenance?action=%0a' >/dev/null
err_names 400 invalid_request "/v1/maintenance?action= with a newline" 'action has a control character' action
api GET '/v1/state/diff?node=n1' >/dev/null
err_names 400 invalid_request "?node= a bare name without ?cluster=" "node 'n1' is a name without its cluster" node
api GET '/v1/state/diff?node=other/n1&cluster=local' >/dev/null
err_names 400 invalid_request "?node= of another cluster than ?cluster=" 'node other/n1 is of cluster other, not local' node
api GET '/v1/state/diff?node=local/n9' >/dev/null
err_names 400 invalid_request "?node= of no node" 'there is no node local/n9' node
api GET '/v1/state/diff?node=n1&cluster=local' >/dev/null
t_is "$STATUS" 200 "?node=NAME&cluster=C is a node too" || t_diag "$BODY"
api GET '/v1/state/diff?node=local/n1' >/dev/null
t_is "$STATUS" 200 "?node=ID as GET /v1/nodes hands it out" || t_diag "$BODY"
api GET '/v1/state/diff?attribute=kernel&attribute=os' >/dev/null
err_names 400 invalid_request "/v1/state/diff: a repeated ?attribute=" 'attribute is given twice' attribute
api GET '/v1/jobs/1?limit=1' >/dev/null
err_names 400 invalid_request "one job takes no parameters" \
    "unknown query parameter 'limit': GET /v1/jobs/1 takes no query parameters" limit
# Every route refuses what it does not take, before it acts: the list
# ends with the shutdown, which would stop loomd if it were not refused.
for route in 'GET /v1/clusters' 'GET /v1/clusters/local' 'GET /v1/nodes' \
    'GET /v1/nodes/local/n1' 'PUT /v1/nodes/local/n1/state' \
    'GET /v1/queues' 'GET /v1/queues/local' 'GET /v1/queues/local/default' \
    'GET /v1/jobs' 'GET /v1/jobs/1' 'POST /v1/jobs' 'DELETE /v1/jobs/1' \
    'POST /v1/jobs/1/hold' 'POST /v1/jobs/1/start' 'GET /v1/reservations' \
    'GET /v1/reservations/1' 'POST /v1/reservations' \
    'DELETE /v1/reservations/1' 'GET /v1/maintenance' \
    'GET /v1/maintenance/1' 'POST /v1/maintenance' \
    'DELETE /v1/maintenance/1' 'GET /v1/state/diff' 'GET /v1/goal/nodes' \
    'PUT /v1/goal/nodes' 'GET /v1/goal/nodes/local/n1' \
    'PUT /v1/goal/nodes/local/n1' 'GET /v1/actual/nodes/local/n1' \
    'POST /v1/actual/nodes/local/n1' 'GET /v1/runtime' \
    'POST /v1/runtime/reload' 'POST /v1/runtime/scheduler' \
    'GET /metrics' 'GET /healthz' 'POST /v1/runtime/shutdown'; do
    api ${route% *} "${route#* }?bogus=1" '{}' >/dev/null
    err_names 400 invalid_request "$route?bogus=1" \
        "unknown query parameter 'bogus': ${route% *} ${route#* } takes " bogus
done
alive "$LOOMD_PID"
t_ok $? "loomd runs on after POST /v1/runtime/shutdown?bogus=1"

# ---- ids: [1-9][0-9]* within int64, else 404 ---------------------------------
api GET "/v1/jobs/$ALICE_JOB" >/dev/null
t_is "$STATUS" 200 "GET /v1/jobs/$ALICE_JOB (for the ids below)"
for bad in "0$ALICE_JOB" "%2b$ALICE_JOB" "+$ALICE_JOB" "$ALICE_JOB%20" \
    "${ALICE_JOB}x" 99999999999999999999; do
    api GET "/v1/jobs/$bad" >/dev/null
    err_names 404 not_found "GET /v1/jobs/$bad" "no job '"
done
api GET "/v1/jobs/$ALICE_JOB%00" >/dev/null
err_names 404 not_found "GET /v1/jobs/$ALICE_JOB%00 (an escaped NUL)" "no such resource: /v1/jobs/$ALICE_JOB%00"
api GET "/v1/jobs/$ALICE_JOB%2Fhold" >/dev/null
err_names 404 not_found "GET /v1/jobs/$ALICE_JOB%2Fhold (an escaped '/')" "no such resource: /v1/jobs/$ALICE_JOB%2Fhold"
api POST "/v1/jobs/$ALICE_JOB%2Fhold" '{}' >/dev/null
err_names 404 not_found "POST /v1/jobs/$ALICE_JOB%2Fhold is not /hold" "no such resource"
api DELETE "/v1/jobs/0$ALICE_JOB" >/dev/null
err_names 404 not_found "DELETE /v1/jobs/0$ALICE_JOB" "no job '0$ALICE_JOB'"
api POST "/v1/jobs/0$ALICE_JOB/hold" '{}' >/dev/null
err_names 404 not_found "POST /v1/jobs/0$ALICE_JOB/hold" "no job '0$ALICE_JOB'"
api POST /v1/reservations '{"nodes": ["local/n2"], "start": "2031-01-01T00:00:00Z", "duration_s": 60}' >/dev/null
t_is "$STATUS" 201 "a reservation for the ids below" || t_diag "$BODY"
RESV=$(jget "$BODY" .id)
api GET "/v1/reservations/$RESV" >/dev/null
t_is "$STATUS" 200 "GET /v1/reservations/$RESV"
api GET "/v1/reservations/0$RESV" >/dev/null
err_names 404 not_found "GET /v1/reservations/0$RESV" "there is no reservation '0$RESV'"
api DELETE "/v1/reservations/0$RESV" >/dev/null
err_names 404 not_found "DELETE /v1/reservations/0$RESV" "there is no reservation '0$RESV'"
api POST /v1/jobs "{\"command\": [\"/bin/true\"], \"request\": {\"reservation\": \"0$RESV\"}}" >/dev/null
err_names 400 invalid_request "request.reservation 0$RESV" "'0$RESV' is not a reservation id" request.reservation
api POST /v1/maintenance '{"nodes": ["local/n2"], "action": "node-off", "window": {"start": "2032-01-01T00:00:00Z", "duration_s": 60}}' >/dev/null
t_is "$STATUS" 201 "a maintenance request for the ids below" || t_diag "$BODY"
MREQ=$(jget "$BODY" .id)
api GET "/v1/maintenance/$MREQ" >/dev/null
t_is "$STATUS" 200 "GET /v1/maintenance/$MREQ"
api GET "/v1/maintenance/0$MREQ" >/dev/null
err_names 404 not_found "GET /v1/maintenance/0$MREQ" "there is no maintenance request '0$MREQ'"
api DELETE "/v1/maintenance/%2b$MREQ" >/dev/null
err_names 404 not_found "DELETE /v1/maintenance/%2b$MREQ" "there is no maintenance request '\+$MREQ'"

# ---- node ids: as GET /v1/nodes hands them out, or names with the cluster ---
api POST /v1/reservations '{"cluster": "local", "nodes": ["n1"], "start": "2031-02-01T00:00:00Z", "duration_s": 60}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .nodes 2>/dev/null)" '201/["local/n1"]' \
    "a reservation takes a bare name with its cluster" || t_diag "$BODY"
api POST /v1/reservations '{"cluster": "local", "nodes": ["other/n1"], "start": "2031-03-01T00:00:00Z", "duration_s": 60}' >/dev/null
err_names 400 invalid_request "a reservation: a node id of another cluster" 'node other/n1 is of cluster other, not local' nodes
api POST /v1/reservations '{"nodes": ["n1"], "start": "2031-03-01T00:00:00Z", "duration_s": 60}' >/dev/null
err_names 400 invalid_request "a reservation: a bare name without a cluster" "node 'n1' is a name without its cluster" nodes
api POST /v1/maintenance '{"cluster": "local", "nodes": ["n1"], "action": "node-off", "window": {"start": "2032-02-01T00:00:00Z", "duration_s": 60}}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .nodes 2>/dev/null)" '201/["local/n1"]' \
    "a maintenance request takes a bare name with its cluster" || t_diag "$BODY"
api POST /v1/maintenance '{"cluster": "local", "nodes": ["other/n1"], "action": "node-off"}' >/dev/null
err_names 400 invalid_request "a maintenance request: a node id of another cluster" 'node other/n1 is of cluster other, not local' nodes
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "the scheduler off, for starts by hand"
submit '{"command": ["/bin/true"], "request": {"cluster": "local"}}'
START_JOB=$JOB
api POST "/v1/jobs/$START_JOB/start" '{"cluster": "local", "nodes": ["other/n1"]}' >/dev/null
err_names 400 invalid_request "start: a node id of another cluster" 'node other/n1 is of cluster other, not local' nodes
api POST "/v1/jobs/$START_JOB/start" '{"nodes": ["n1"]}' >/dev/null
err_names 400 invalid_request "start: a bare name without a cluster" "node 'n1' is a name without its cluster" nodes
api POST "/v1/jobs/$START_JOB/start" '{"cluster": "local", "nodes": ["n9"]}' >/dev/null
err_names 404 not_found "start: a node the cluster does not have" "cluster local has no node 'n9'" nodes
api POST "/v1/jobs/$START_JOB/start" '{"nodes": ["local/n1"]}' >/dev/null
t_is "$STATUS" 202 "start takes the node id GET /v1/nodes hands out" || t_diag "$BODY"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
t_is "$STATUS" 200 "the scheduler on again"
wait_for '[ "$(job_state "$START_JOB")" = completed ]' 30
t_is "$(job_state "$START_JOB")" completed "the job started by its node id ran"

# ---- goal values: the attributes the cluster reports have a domain ----------
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"state": "bogus"}}' >/dev/null
err_names 400 invalid_request "goal state bogus" \
    "goal attribute 'state': 'bogus' is not a goal state; the goal states are up, down and drained" attributes.state
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"state": 1}}' >/dev/null
err_names 400 invalid_request "goal state a number" "goal attribute 'state' must be a string" attributes.state
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"cpus": "lots"}}' >/dev/null
err_names 400 invalid_request "goal cpus lots" "goal attribute 'cpus' must be a whole number" attributes.cpus
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"memory_mb": -1}}' >/dev/null
err_names 400 invalid_request "goal memory_mb -1" "goal attribute 'memory_mb' must be a whole number" attributes.memory_mb
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"gpus": "01"}}' >/dev/null
err_names 400 invalid_request "goal gpus 01 (never equal to the cluster's 1)" "goal attribute 'gpus' must be a whole number" attributes.gpus
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"features": "ib"}}' >/dev/null
err_names 400 invalid_request "goal features a string" "goal attribute 'features' must be a list" attributes.features
api PUT /v1/goal/nodes '{"items": [{"node": "local/n1", "attributes": {"state": "sideways"}}]}' >/dev/null
err_names 400 invalid_request "goal import of state sideways" "'sideways' is not a goal state" 'items[0].attributes.state'
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"state": "up", "cpus": "1", "memory_mb": 1024, "features": [], "kernel": "any text"}}' >/dev/null
t_is "$STATUS" 200 "a goal within the domains is taken" || t_diag "$BODY"
api PUT /v1/goal/nodes/local/n1 '{"attributes": {}}' >/dev/null

# ---- limits: as loomctl knows them (core/limits.h) -------------------------
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"memory_mb": 0}}' >/dev/null
err_names 400 invalid_request "memory_mb 0 means nothing" \
    "field 'request.memory_mb' must be from 1 to 1099511627776 \(got 0\)" request.memory_mb
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"walltime_s": 31622401}}' >/dev/null
err_names 400 invalid_request "a walltime over 366 days" "must be from 1 to 31622400" request.walltime_s

# ---- 409 -------------------------------------------------------------------
api POST /v1/jobs '{"command": ["/bin/true"], "name": "idem-a"}' \
    -H 'Idempotency-Key: key-0002' >/dev/null
t_is "$STATUS" 201 "first use of an Idempotency-Key" || t_diag "$BODY"
IDEM_JOB=$(jget "$BODY" .id)
api POST /v1/jobs '{"command": ["/bin/true"], "name": "idem-a"}' \
    -H 'Idempotency-Key: key-0002' >/dev/null
t_is "$STATUS" 200 "replay with the same body: 200"
t_is "$(jget "$BODY" .id 2>/dev/null)" "$IDEM_JOB" "replay: the same job"
api POST /v1/jobs '{"command": ["/bin/true"], "name": "idem-b"}' \
    -H 'Idempotency-Key: key-0002' >/dev/null
err_is 409 conflict "Idempotency-Key reused with another body"
TOKEN=$BOB
api POST /v1/jobs '{"command": ["/bin/true"], "name": "idem-b"}' \
    -H 'Idempotency-Key: key-0002' >/dev/null
t_is "$STATUS" 201 "another user's use of the same key is his own: 201" ||
    t_diag "$BODY"
BOB_ID=$(jget "$BODY" .id 2>/dev/null)
t_is "$(jget "$BODY" .owner 2>/dev/null)/$([[ $BOB_ID =~ ^[0-9]+$ && $BOB_ID != "$IDEM_JOB" ]] && echo new)" \
    bob/new "... and a job of his own (job $BOB_ID, not $IDEM_JOB)"
TOKEN=$ADMIN
wait_for '[ "$(job_state "$IDEM_JOB")" = completed ]' 30
t_is "$(job_state "$IDEM_JOB")" completed "the /bin/true job completed"
api DELETE "/v1/jobs/$IDEM_JOB" >/dev/null
err_is 409 conflict "cancel of a finished job"
api POST "/v1/jobs/$IDEM_JOB/release" '{}' >/dev/null
err_is 409 conflict "release of a job that is not held"

# ---- 413, 415 ----------------------------------------------------------------
python3 -c 'import sys; sys.stdout.write("{\"command\": [\"/bin/true\"], \"name\": \"" + "a" * (2 << 20) + "\"}")' >"$T/big.json"
raw POST /v1/jobs application/json "$T/big.json"
err_is 413 too_large "a 2 MiB body"
raw POST /v1/jobs application/json "$T/big.json" -H 'Transfer-Encoding: chunked'
err_is 413 too_large "a 2 MiB body, chunked (no Content-Length)"
echo '{"command": ["/bin/true"]}' >"$T/small.json"
raw POST /v1/jobs text/plain "$T/small.json"
err_is 415 unsupported_media_type "Content-Type text/plain"
raw POST /v1/jobs application/json "$T/small.json"
t_is "$STATUS" 201 "the same body as application/json is accepted" ||
    t_diag "$BODY"

# ---- 422 -------------------------------------------------------------------
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"nodes": 3}}' >/dev/null
err_is 422 unprocessable "more nodes than any cluster has"
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cpus_per_node": 64}}' >/dev/null
err_is 422 unprocessable "more cpus per node than any node has"
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cluster": "nowhere"}}' >/dev/null
err_is 422 unprocessable "a pinned cluster that does not exist" request.cluster

# ---- still alive -------------------------------------------------------------
TOKEN=
api GET /healthz >/dev/null
t_is "$STATUS" 200 "/healthz still answers"
alive "$LOOMD_PID"
t_ok $? "loomd is still running"
TOKEN=$ADMIN
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "the API still answers"
if grep -qE 'ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:' "$T/loomd.log"; then
    t_ok 1 "no sanitizer report in the log"
    t_diag "$(grep -A20 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
else
    t_ok 0 "no sanitizer report in the log"
fi
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
