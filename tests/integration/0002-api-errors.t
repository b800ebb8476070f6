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
[cluster local]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2
EOF
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
api DELETE "/v1/jobs/$ALICE_JOB" >/dev/null
err_is 403 forbidden "bob cancels alice's job"
api POST "/v1/jobs/$ALICE_JOB/hold" '{}' >/dev/null
err_is 403 forbidden "bob holds alice's job"
api POST "/v1/jobs/$ALICE_JOB/suspend" '{}' >/dev/null
err_is 403 forbidden "bob suspends alice's job"
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
