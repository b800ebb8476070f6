#!/usr/bin/env bash
# 8001-accounts-privacy.t - who a job runs as and who sees it: identities
# mapped to local accounts (a literal, a regular expression, a reload on
# SIGHUP), 403 for an identity without an account and for root, a system
# account or loomd's own; a user sees only its own jobs and reservations
# (another's is 404, whatever filter), a monitor sees states without
# command or env;
# max_user_priority; the pending, submit-rate and running limits; the
# scheduler role cancels only its own reservations; a newline in a node
# reason makes no second log line.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# err_is STATUS CODE NAME: the last answer has STATUS and an error body
# with CODE.
err_is() {
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" "$1/$2" \
        "$3: HTTP $1, $2" || t_diag "  body: $BODY"
}

# Two accounts of our own, unique to this run (uid >= 1000).
t_account ALICE_U alice
t_account BOB_U bob

pg_start || t_bail "PostgreSQL did not start"
echo "# METHOD IDENTITY ACCOUNT" >"$T/accounts"
accounts_default # admin and loomctl: $T_USER
cat >>"$T/accounts" <<EOF
LOOM alice $ALICE_U
LOOM /^b(o)b\$/ $BOB_U
LOOM rooty root
LOOM sysy daemon
LOOM loomy $LOOM_SERVICE_USER
LOOM clusty $LOOM_SERVICE_USER cluster=local
LOOM clusty $ALICE_U
EOF
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
max_user_priority = 5
[limits]
max_pending_jobs = 3
[limits $BOB_U]
max_submits_per_minute = 2
$(local_cluster 3 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
ALICE=$(token_for alice user)
BOB=$(token_for bob user)
MALLORY=$(token_for mallory user)
MON=$(token_for nagios monitor)
SCHED=$(token_for extsched scheduler)
ROOTY=$(token_for rooty user)
SYSY=$(token_for sysy user)
LOOMY=$(token_for loomy user)
CLUSTY=$(token_for clusty user)

# ---- accounts ------------------------------------------------------------
TOKEN=$ALICE
submit '{"name": "alice-secret", "command": ["/bin/sleep", "60"], "env": {"SECRET": "s3"}}'
A1=$JOB
t_is "$(field "$A1" .owner)/$(field "$A1" .account)" "alice/$ALICE_U" \
    "alice's job: owner alice, account $ALICE_U (a literal line)"
TOKEN=$BOB
submit '{"name": "bob-job", "command": ["/bin/sleep", "60"]}'
B1=$JOB
t_is "$(field "$B1" .account)" "$BOB_U" \
    "bob's job runs as $BOB_U (a regular expression line)"
TOKEN=$MALLORY
api GET /v1/jobs >/dev/null
err_is 403 forbidden "an identity with no account, on any route"
t_is "$(jget "$BODY" .error.message)" \
    "identity 'mallory' maps to no local account (no line of $T/accounts matches and there is no account mallory)" \
    "... the message names the identity and the file"
TOKEN=$ROOTY
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "a submit by an identity mapped to root"
t_is "$(jget "$BODY" .error.message)" \
    "jobs may not run as root (account root): allow_root_jobs is false" \
    "... the message names allow_root_jobs"
TOKEN=$SYSY
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "a submit by an identity mapped to a system account"
t_like "$(jget "$BODY" .error.message)" "account daemon: its uid 1 is below min_uid 1000" \
    "... the message names min_uid"
TOKEN=$LOOMY
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "a submit by an identity mapped to loomd's own account"
t_is "$(jget "$BODY" .error.message)" \
    "jobs may not run as account $LOOM_SERVICE_USER: it is loomd's own" \
    "... the message says so, whatever min_uid"
TOKEN=$CLUSTY
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cluster": "local"}}' >/dev/null
err_is 403 forbidden "a submit by an identity whose cluster= line names loomd's account"
t_is "$(jget "$BODY" .error.message)" \
    "jobs may not run as account $LOOM_SERVICE_USER on cluster local: it is loomd's own" \
    "... the message names the cluster"
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "... and unpinned, where that line could place it"
TOKEN=$MON
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "a monitor token (no account, no submit role) submits"

# A reload on SIGHUP: a regular expression maps ops-NAME to NAME; a bad
# file is refused and the old map stays.
echo 'LOOM /^ops-([a-z0-9-]+)$/ \1' >>"$T/accounts"
kill -HUP "$LOOMD_PID"
OPS=$(token_for "ops-$T_USER" user)
TOKEN=$OPS
wait_for 'api GET /v1/jobs >/dev/null; [ "$STATUS" = 200 ]' 10
t_is "$STATUS" 200 "after SIGHUP, ops-$T_USER maps to $T_USER through \\1"
submit '{"command": ["/bin/true"]}'
t_is "$(field "$JOB" .account)" "$T_USER" "... and its job's account is $T_USER"
cp "$T/accounts" "$T/accounts.good"
echo 'KERBEROS alice alice' >>"$T/accounts"
TOKEN=$ADMIN
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "a reload with an unknown method is refused: 400"
t_like "$(jget "$BODY" .error.message)" "$T/accounts:[0-9]+: unknown method 'KERBEROS'" \
    "... naming file:line and the method"
TOKEN=$OPS
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "... and the old map stays (ops-$T_USER still maps)"
cp "$T/accounts.good" "$T/accounts"

# ---- privacy -------------------------------------------------------------
TOKEN=$BOB
api GET "/v1/jobs/$A1" >/dev/null
err_is 404 not_found "bob reads alice's job"
t_is "$(jget "$BODY" .error.message)" "no job '$A1'" \
    "... the message of a job that does not exist"
api GET "/v1/jobs/999999" >/dev/null
t_is "$(jget "$BODY" .error.message)" "no job '999999'" \
    "... (a job that does not exist says the same)"
for op in cancel hold suspend; do
    if [ $op = cancel ]; then api DELETE "/v1/jobs/$A1" >/dev/null
    else api POST "/v1/jobs/$A1/$op" '{}' >/dev/null; fi
    err_is 404 not_found "bob's $op of alice's job"
done
for q in "" "?owner=alice" "?account=$ALICE_U" "?state=running" "?limit=1000"; do
    api GET "/v1/jobs$q" >/dev/null
    t_is "$(py '[j["owner"] for j in d["items"] if j["owner"] != "bob"]' "$BODY")" "[]" \
        "bob's list /v1/jobs$q shows none of another's jobs"
done
api GET "/v1/jobs?account=$BOB_U" >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$B1\"]" \
    "?account=$BOB_U: bob's own job"
TOKEN=$MON
api GET "/v1/jobs/$A1" >/dev/null
t_is "$STATUS/$(py '[d["state"] in ("starting", "running", "pending"), "command" in d, "env" in d, "script" in d]' "$BODY")" \
    "200/[true, false, false, false]" \
    "a monitor sees alice's job's state, but no command, env or script"
api GET /v1/jobs >/dev/null
t_is "$(py 'sorted(set(k for j in d["items"] for k in ("command", "env", "script") if k in j))' "$BODY")" \
    "[]" "... and no job in its list shows them"
t_like "$(py 'len(d["items"])' "$BODY")" '^[3-9]$' "... but it lists every job"
TOKEN=$ADMIN
api GET "/v1/jobs/$A1" >/dev/null
t_is "$(jget "$BODY" .env.SECRET)" s3 "an admin sees alice's environment"

# reservations: alice's (made by an operator for her subject: a scheduler
# token makes them in the name of its subject) is not bob's to see.
TOKEN=$(token_for alice operator)
api POST /v1/reservations '{"nodes": ["local/n3"], "start": "2031-01-01T00:00:00Z", "duration_s": 60}' >/dev/null
RA=$(jget "$BODY" .id)
t_is "$STATUS" 201 "a reservation owned by alice"
TOKEN=$BOB
api GET "/v1/reservations/$RA" >/dev/null
err_is 404 not_found "bob reads alice's reservation"
api GET "/v1/reservations?owner=alice" >/dev/null
t_is "$(jlen "$BODY" .items)" 0 "bob's ?owner=alice lists none of hers"
TOKEN=$ALICE
api GET "/v1/reservations" >/dev/null
t_is "$(py '[r["id"] for r in d["items"]]' "$BODY")" "[\"$RA\"]" \
    "alice lists her own reservation"

# scheduler token: another's reservation and a maintenance one are not its
TOKEN=$SCHED
api DELETE "/v1/reservations/$RA" >/dev/null
err_is 403 forbidden "the scheduler role cancels another's reservation"
TOKEN=$ADMIN
api POST /v1/reservations '{"nodes": ["local/n3"], "start": "2032-01-01T00:00:00Z", "duration_s": 60, "purpose": "maintenance"}' >/dev/null
RM=$(jget "$BODY" .id)
TOKEN=$SCHED
api DELETE "/v1/reservations/$RM" >/dev/null
err_is 403 forbidden "the scheduler role cancels a maintenance reservation"
api POST /v1/reservations '{"nodes": ["local/n3"], "start": "2033-01-01T00:00:00Z", "duration_s": 60}' >/dev/null
RS=$(jget "$BODY" .id)
api DELETE "/v1/reservations/$RS" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "... but its own: 200, cancelled"
TOKEN=$ADMIN
api DELETE "/v1/reservations/$RA" >/dev/null
t_is "$STATUS" 200 "an admin cancels alice's reservation"

# ---- fair use ------------------------------------------------------------
TOKEN=$ALICE
api POST /v1/jobs '{"command": ["/bin/true"], "priority": 6}' >/dev/null
err_is 403 forbidden "priority 6 above max_user_priority 5"
t_like "$(jget "$BODY" .error.message)" "max_user_priority 5" "... naming it"
api POST /v1/jobs '{"command": ["/bin/true"], "priority": -3}' >/dev/null
t_is "$STATUS" 201 "a lower priority is fine"
TOKEN=$ADMIN
api POST /v1/jobs '{"command": ["/bin/true"], "priority": 50}' >/dev/null
t_is "$STATUS" 201 "an admin may ask for more"

# the submit rate of bob's account: 2 a minute (his first job may be older
# than a minute by now: submit until refused, 3 times at most)
TOKEN=$BOB
took=0
for i in 1 2 3; do
    STATUS=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X POST \
        -H "Authorization: Bearer $BOB" -H 'Content-Type: application/json' \
        --data '{"command": ["/bin/true"]}' "$LOOM_URL/v1/jobs")
    BODY=$(cat "$T/body")
    [ "$STATUS" = 201 ] || break
    took=$((took + 1))
done
t_like "$took" '^[12]$' "bob's account takes 1 or 2 more submits within the minute ($took)"
err_is 429 too_many_requests "then a submit over max_submits_per_minute"
RA_S=$(tr -d '\r' <"$T/hdr" | sed -n 's/^Retry-After: //Ip')
t_like "$RA_S" '^([1-5][0-9]|60|[1-9])$' "... with Retry-After in seconds ($RA_S)"
t_like "$(jget "$BODY" .error.message)" "account $BOB_U .*max_submits_per_minute 2" \
    "... the message names the account and the limit"

# pending: 3 at most for every account; the cluster full of sleepers
TOKEN=$ADMIN
for n in n1 n2 n3; do api PUT "/v1/nodes/local/$n/state" '{"state": "drain", "reason": "fill"}' >/dev/null; done
TOKEN=$ALICE
for i in 1 2 3; do api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null; done
wait_for '[ "$(TOKEN=$ALICE api GET "/v1/jobs?state=pending&owner=alice" >/dev/null; jlen "$BODY" .items)" -ge 3 ]' 10
STATUS=$(curl -s -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X POST \
    -H "Authorization: Bearer $ALICE" -H 'Content-Type: application/json' \
    --data '{"command": ["/bin/true"]}' "$LOOM_URL/v1/jobs")
BODY=$(cat "$T/body")
err_is 429 too_many_requests "a 4th pending job of alice's account"
t_like "$(tr -d '\r' <"$T/hdr" | sed -n 's/^Retry-After: //Ip')" '^[0-9]+$' "... with Retry-After"
t_like "$(jget "$BODY" .error.message)" "account $ALICE_U has 3 pending jobs \\(max_pending_jobs 3\\)" \
    "... naming the account and the limit"

# ---- a newline in a node reason ------------------------------------------
TOKEN=$ADMIN
api PUT /v1/nodes/local/n1/state '{"state": "drain", "reason": "x\n2026-01-01T00:00:00.000Z err thread=main FORGED"}' >/dev/null
wait_for 'grep -q "FORGED" "$T/loomd.log"' 5
t_is "$(grep -c '^2026-01-01T00:00:00.000Z err thread=main FORGED' "$T/loomd.log")" 0 \
    "a newline in a node reason makes no second log line"
t_like "$(grep FORGED "$T/loomd.log" | head -1)" 'reason=x\\n2026' "... it is written \\n"

# ---- the running limit: a reload sets it to 1 for alice's account --------
TOKEN=$ADMIN
api GET "/v1/jobs?owner=alice&state=pending" >/dev/null
for id in $(py '" ".join(j["id"] for j in d["items"])' "$BODY"); do
    api DELETE "/v1/jobs/$id" >/dev/null
done
sed -i "s/^max_pending_jobs = 3\$/max_pending_jobs = 3\nmax_running_jobs = 1/" "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with [limits] max_running_jobs = 1" || t_diag "$BODY"
for n in n1 n2 n3; do api PUT "/v1/nodes/local/$n/state" '{"state": "up"}' >/dev/null; done
TOKEN=$ALICE
submit '{"command": ["/bin/sleep", "60"]}'
A2=$JOB
wait_for '[ "$(job_state "$A2")" = pending ] && field "$A2" .reason | grep -q max_running_jobs' 15
t_is "$(field "$A2" .reason)" "account $ALICE_U has 1 running jobs (max_running_jobs)" \
    "alice's second job waits for her account's running limit"
TOKEN=$ADMIN
submit '{"command": ["/bin/sleep", "60"]}'
wait_for '[ "$(job_state "$JOB")" = running ]' 15
t_is "$(job_state "$JOB")" running "... while another account's job starts on a free node"
TOKEN=$ALICE
api DELETE "/v1/jobs/$A1" >/dev/null
wait_for '[ "$(job_state "$A2")" = running ]' 15
t_is "$(job_state "$A2")" running "once her first job ends, the second starts"

TOKEN=$ADMIN
api GET "/v1/jobs?state=running" >/dev/null
for id in $(py '" ".join(j["id"] for j in d["items"])' "$BODY"); do
    api DELETE "/v1/jobs/$id" >/dev/null
done
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
