#!/usr/bin/env bash
# 8201-grid-tokens.t - grid identities: the test is its own token issuer
# (RSA and EC P-256 keys from openssl genpkey, a JWKS file, tokens signed by
# tests/integration/jwt_sign). A gateway token with the scopes
# compute.create, compute.read and compute.cancel and the group /atlas
# submits 100 jobs, which map to the VO's pool account (a GROUP line); it
# reads and cancels them, and another identity sees none. A token with
# only compute.read cannot submit (403 naming the scope); the pending
# limit of a VO gives 429 with Retry-After. Tokens refused with the reason
# (401): expired, not yet valid, a wrong signature, a wrong audience, an
# unknown issuer, an unknown kid, alg none, HS256 signed with the RSA
# public key as the secret, iat in the future, a sub over 255 characters.
# A Loom gateway token submits for a grid identity it names, when the
# issuer lists it. A group with an account of its own on one cluster runs
# there as that account; a VO's running limit holds its next job. The
# audit rows of submits, cancels and denials.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

SIGN=$LOOM_TOP_BUILDDIR/tests/integration/jwt_sign
ISS=https://iam.example.org/atlas
AUD=https://loom.example.org

err_is() {
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" "$1/$2" \
        "$3: HTTP $1, $2" || t_diag "  body: $BODY"
}

t_account POOL atlas   # the VO's pool account
t_account DTEAM dteam  # another VO's, and its account on cluster big

# ---- the issuer: keys, a JWKS file, tokens ---------------------------------
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/rsa.pem" 2>/dev/null &&
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/ec.pem" 2>/dev/null &&
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$T/evil.pem" 2>/dev/null &&
    openssl pkey -in "$T/rsa.pem" -pubout -out "$T/rsa.pub" 2>/dev/null ||
    t_bail "openssl genpkey failed"
printf '{"keys": [%s, %s]}\n' "$("$SIGN" jwk "$T/rsa.pem" rsa-1)" \
    "$("$SIGN" jwk "$T/ec.pem" ec-1)" >"$T/jwks.json"
NOW=$(date +%s)

# claims SUB [EXTRA [IAT_OFFSET EXP_OFFSET [AUD [ISS]]]]: a token's payload.
claims() {
    printf '{"iss":"%s","sub":"%s","aud":"%s","iat":%d,"exp":%d,"wlcg.ver":"1.0"%s}' \
        "${6:-$ISS}" "$1" "${5:-$AUD}" $((NOW + ${3:--10})) \
        $((NOW + ${4:-3600})) "${2:+,$2}"
}
# sign KEY ALG KID CLAIMS: a token.
sign() {
    "$SIGN" sign "$T/$1" "$2" "$3" "$4"
}
GW_CLAIMS='"scope":"compute.create compute.read compute.cancel","wlcg.groups":["/atlas"]'
GATEWAY=$(sign rsa.pem RS256 rsa-1 "$(claims pilot-factory "$GW_CLAIMS")")
READER=$(sign ec.pem ES256 ec-1 "$(claims pilot-factory \
    '"scope":"compute.read","wlcg.groups":["/atlas"]')")
OTHER=$(sign ec.pem ES256 ec-1 "$(claims someone-else "$GW_CLAIMS")")
CMS=$(sign rsa.pem RS256 rsa-1 "$(claims cms-pilot \
    '"scope":"compute.create compute.read","wlcg.groups":["/cms"]')")
DT=$(sign rsa.pem RS256 rsa-1 "$(claims dteam-user \
    '"wlcg.groups":["/dteam"]')") # groups only: group_scopes decide
[ -n "$GATEWAY" ] && [ -n "$READER" ] || t_bail "jwt_sign made no token"

pg_start || t_bail "PostgreSQL did not start"
accounts_default # admin and loomctl: $T_USER
cat >>"$T/accounts" <<EOF
LOOM /^ce-[0-9]\$/ $T_USER
GROUP $ISS,/atlas $POOL
GROUP $ISS,/cms $POOL
GROUP $ISS,/dteam $DTEAM cluster=big
GROUP $ISS,/dteam $POOL
EOF
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
[issuer atlas]
url = $ISS
audiences = $AUD
jwks_file = $T/jwks.json
gateways = ce-1
[limits vo=/cms]
max_pending_jobs = 2
[limits vo=/dteam]
max_running_jobs = 1
$(local_cluster 4 4 4096)
[cluster big]
adaptor = sim
nodes = 1
cpus_per_node = 1
features = big
unpinned_jobs = true
[cluster tiny]
adaptor = sim
nodes = 1
cpus_per_node = 1
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
api GET /v1/runtime >/dev/null
t_is "$(py '[(i["name"], i["kids"]) for i in d["grid"]["issuers"]]' "$BODY")" \
    '[["atlas", ["rsa-1", "ec-1"]]]' "GET /v1/runtime: issuer atlas with the JWKS file's two keys"

# ---- 100 jobs of a gateway token ---------------------------------------------
TOKEN=$GATEWAY
ids=()
for ((i = 1; i <= 100; i++)); do
    submit "{\"name\": \"g$i\", \"command\": [\"/bin/sleep\", \"300\"], \"request\": {\"cluster\": \"local\", \"walltime_s\": 600}}" ||
        break
    ids+=("$JOB")
done
t_is "${#ids[@]}" 100 "the gateway token submits 100 jobs"
api GET "/v1/jobs/${ids[0]}" >/dev/null
t_is "$(py '[d["owner"], d["account"], d["source"], d["vo"], d["submitted_by"], d["grid_identity"]]' "$BODY")" \
    "[\"$ISS,pilot-factory\", \"$POOL\", \"grid\", \"/atlas\", \"$ISS,pilot-factory\", {\"issuer\": \"$ISS\", \"subject\": \"pilot-factory\"}]" \
    "its job: owner ISSUER,SUBJECT, the VO's pool account, source grid, vo /atlas"
api GET "/v1/jobs?limit=1000" >/dev/null
t_is "$(py 'len([j for j in d["items"] if j["account"] == "'"$POOL"'" and j["vo"] == "/atlas"])' "$BODY")" 100 \
    "the gateway lists its 100 jobs, each of account $POOL and vo /atlas"
count_state() { # STATE: how many of the token's jobs are in it
    api GET "/v1/jobs?state=$1&limit=1000" >/dev/null
    jlen "$BODY" .items
}
wait_for "[ \"\$(count_state running)\" = 16 ]" 60
t_is "$(count_state running)" 16 "16 of them run on local's 16 cpus (as $POOL, recorded in the job)"

TOKEN=$OTHER
api GET "/v1/jobs/${ids[0]}" >/dev/null
err_is 404 not_found "another identity of the same VO reads the gateway's job"
api GET "/v1/jobs?limit=1000" >/dev/null
t_is "$(jlen "$BODY" .items)" 0 "... and lists none of them"
api DELETE "/v1/jobs/${ids[1]}" >/dev/null
err_is 404 not_found "... nor cancels one"

TOKEN=$READER
api GET "/v1/jobs/${ids[0]}" >/dev/null
t_is "$STATUS" 200 "the same identity with only compute.read reads the job"
api POST /v1/jobs '{"command": ["/bin/true"]}' >/dev/null
err_is 403 forbidden "... but cannot submit"
t_is "$(jget "$BODY" .error.message)" \
    "the token lacks the scope compute.create, which POST /v1/jobs needs" \
    "... the message names the scope it lacks"
api DELETE "/v1/jobs/${ids[0]}" >/dev/null
t_like "$STATUS $(jget "$BODY" .error.message)" "^403 the token lacks the scope compute.cancel" \
    "... nor cancel (compute.cancel)"
api POST "/v1/jobs/${ids[0]}/hold" '{}' >/dev/null
t_like "$STATUS $(jget "$BODY" .error.message)" "^403 the token lacks the scope compute.modify" \
    "... nor hold (compute.modify)"
api POST /v1/reservations '{"nodes": ["local/n1"], "duration_s": 60}' >/dev/null
err_is 403 forbidden "a grid token makes no reservation"

TOKEN=$GATEWAY
cancelled=0
for id in "${ids[@]}"; do
    api DELETE "/v1/jobs/$id" >/dev/null
    [[ $STATUS == 20[02] ]] && cancelled=$((cancelled + 1))
done
t_is "$cancelled" 100 "the gateway cancels its 100 jobs"
wait_for "[ \"\$(count_state cancelled)\" = 100 ]" 60
t_is "$(count_state cancelled)" 100 "... all 100 end cancelled"

# ---- a VO's pending limit ---------------------------------------------------
TOKEN=$CMS
submit '{"name": "c1", "command": ["/bin/true"], "request": {"cluster": "tiny"}, "env": {"LOOM_SIM_RUNTIME_S": "3600"}}'
C1=$JOB
wait_for "[ \"\$(job_state $C1)\" = running ]"
t_is "$(job_state "$C1")" running "a /cms job runs on tiny, its one node"
submit '{"name": "c2", "command": ["/bin/true"], "request": {"cluster": "tiny"}}' &&
    submit '{"name": "c3", "command": ["/bin/true"], "request": {"cluster": "tiny"}}'
t_is "$STATUS" 201 "two more wait: pending 2, /cms's max_pending_jobs"
api POST /v1/jobs '{"name": "c4", "command": ["/bin/true"], "request": {"cluster": "tiny"}}' -D "$T/h" >/dev/null
err_is 429 too_many_requests "a third pending /cms job"
t_is "$(jget "$BODY" .error.message)" \
    "vo /cms has 2 pending jobs (max_pending_jobs 2): submit again when some have started or ended" \
    "... the message names the VO and the limit"
t_like "$(tr -d '\r' <"$T/h" | grep -i '^Retry-After:')" '^Retry-After: [0-9]+$' "... with Retry-After"
TOKEN=$GATEWAY
submit '{"name": "a1", "command": ["/bin/true"], "request": {"cluster": "local"}}'
t_is "$STATUS" 201 "/atlas (the same pool account) is not limited by /cms's limit"

# ---- refused tokens: 401 with the reason ------------------------------------
refused() { # NAME TOKEN MESSAGE-ERE
    TOKEN=$2
    api GET /v1/jobs >/dev/null
    t_like "$STATUS $(jget "$BODY" .error.message)" "^401 $3" "$1: 401, $3"
}
refused "expired" "$(sign rsa.pem RS256 rsa-1 "$(claims u-expired "" -7200 -3600)")" \
    "token expired at"
refused "not yet valid" "$(sign rsa.pem RS256 rsa-1 "$(claims u-nbf "\"nbf\":$((NOW + 3600))")")" \
    "token not valid yet: nbf is"
refused "a wrong signature" "$(sign evil.pem RS256 rsa-1 "$(claims u-evil "$GW_CLAIMS")")" \
    "bad token signature: the token was altered or not signed with key 'rsa-1'"
refused "a wrong audience" "$(sign rsa.pem RS256 rsa-1 "$(claims u-aud "" -10 3600 https://other.example.org)")" \
    "token refused: its audience https://other.example.org is not one of issuer atlas's audiences here"
refused "the WLCG any audience, not listed" "$(sign rsa.pem RS256 rsa-1 "$(claims u-any "" -10 3600 https://wlcg.cern.ch/jwt/v1/any)")" \
    "token refused: its audience https://wlcg.cern.ch/jwt/v1/any is not one of"
refused "an unknown issuer" "$(sign rsa.pem RS256 rsa-1 "$(claims u-iss "" -10 3600 "$AUD" https://evil.example.org)")" \
    "token refused: unknown issuer 'https://evil.example.org'"
refused "an unknown kid" "$(sign rsa.pem RS256 rsa-9 "$(claims u-kid)")" \
    "token refused: issuer atlas has no key 'rsa-9'"
refused "alg none" "$(sign rsa.pem none rsa-1 "$(claims u-none "$GW_CLAIMS")")" \
    "token refused: alg 'none'"
refused "HS256 with the RSA public key as the secret" \
    "$(sign rsa.pub HS256 rsa-1 "$(claims u-hs "$GW_CLAIMS")")" \
    "token refused: alg 'HS256' is a shared-secret MAC"
refused "iat in the future" "$(sign rsa.pem RS256 rsa-1 "$(claims u-iat "" 3600 7200)")" \
    "the token was issued in the future"
LONG=$(head -c 256 /dev/zero | tr '\0' s)
refused "a sub of 256 characters" "$(sign rsa.pem RS256 rsa-1 "$(claims "$LONG")")" \
    "token refused: its sub is 256 characters"

# ---- a gateway's Loom token submits for a grid identity ----------------------
TOKEN=$(token_for ce-1 gateway)
submit "{\"command\": [\"/bin/true\"], \"grid_identity\": {\"issuer\": \"$ISS\", \"subject\": \"u-77\", \"groups\": [\"/atlas\"]}}"
G1=$JOB
t_is "$(py '[d["owner"], d["submitted_by"], d["account"], d["vo"], d["source"]]' "$BODY")" \
    "[\"$ISS,u-77\", \"ce-1\", \"$POOL\", \"/atlas\", \"grid\"]" \
    "ce-1 submits for $ISS,u-77: owner the identity, submitted_by ce-1, the pool account"
api GET /v1/jobs >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$G1\"]" \
    "ce-1 sees the job it submitted"
TOKEN=$(sign rsa.pem RS256 rsa-1 "$(claims u-77 '"scope":"compute.read","wlcg.groups":["/atlas"]')")
api GET "/v1/jobs/$G1" >/dev/null
t_is "$STATUS" 200 "... and so does the identity it is for, with a token of its own"
TOKEN=$(token_for ce-2 gateway)
api POST /v1/jobs "{\"command\": [\"/bin/true\"], \"grid_identity\": {\"issuer\": \"$ISS\", \"subject\": \"u-77\"}}" >/dev/null
err_is 403 forbidden "ce-2, not in the issuer's gateways, names a grid identity"
t_is "$(jget "$BODY" .error.message)" \
    "gateway ce-2 may not submit for identities of issuer atlas: it is not in that issuer's gateways" \
    "... the message names the issuer and the rule"
api GET "/v1/jobs/$G1" >/dev/null
err_is 404 not_found "... and does not see ce-1's job"
TOKEN=$ADMIN
api POST /v1/jobs "{\"command\": [\"/bin/true\"], \"grid_identity\": {\"issuer\": \"$ISS\", \"subject\": \"x\"}}" >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "403 only a gateway's Loom token may name the grid identity a job is for" \
    "an admin token may not name a grid identity"

# ---- an account of its own on one cluster ------------------------------------
TOKEN=$DT
submit '{"command": ["/bin/true"], "request": {"features": ["big"]}, "env": {"LOOM_SIM_RUNTIME_S": "3600"}}'
D1=$JOB
t_is "$(py '[d["cluster_accounts"], d["vo"]]' "$BODY")" \
    "[{\"big\": \"$DTEAM\", \"*\": \"$POOL\"}, \"/dteam\"]" \
    "a /dteam job (a token of groups only) keeps its account on big and elsewhere"
wait_for "[ \"\$(job_state $D1)\" = running ]"
t_is "$(field "$D1" .cluster)/$(field "$D1" .account)" "big/$DTEAM" \
    "placed on big (the only cluster with the feature), it runs as $DTEAM"
submit '{"command": ["/bin/true"], "request": {"cluster": "local"}}'
D2=$JOB
t_is "$(jget "$BODY" .account)/$(py 'd["cluster_accounts"]' "$BODY")" "$POOL/{}" \
    "a /dteam job pinned to local is to run as $POOL"
wait_for "[ \"\$(field $D2 .reason)\" = 'vo /dteam has 1 running jobs (max_running_jobs)' ]"
t_is "$(field "$D2" .state)/$(field "$D2" .reason)" \
    "pending/vo /dteam has 1 running jobs (max_running_jobs)" \
    "... and waits: /dteam runs its one job (max_running_jobs of [limits vo=/dteam])"

# ---- the audit ---------------------------------------------------------------
audit_count() {
    pg_sql "SELECT count(*) FROM events WHERE $1"
}
# the rows are written in order: wait for the last
wait_for "[ \"\$(audit_count \"kind = 'grid.submit' AND subject = '$ISS,dteam-user'\")\" = 2 ]" 30
t_is "$(audit_count "kind = 'grid.submit' AND subject = '$ISS,dteam-user'")" 2 \
    "the audit has the last submits"
t_is "$(audit_count "kind = 'grid.submit' AND subject = '$ISS,pilot-factory' AND detail->>'vo' = '/atlas' AND detail->>'account' = '$POOL' AND detail->>'job' IS NOT NULL")" \
    101 "101 audit rows of grid.submit by the gateway token, with VO, account and job"
t_is "$(audit_count "kind = 'grid.cancel' AND subject = '$ISS,pilot-factory' AND detail->>'account' = '$POOL'")" \
    100 "100 rows of grid.cancel, with the account"
t_is "$(audit_count "kind = 'grid.submit' AND subject = '$ISS,u-77' AND detail->>'gateway' = 'ce-1'")" \
    1 "the submit of ce-1 for u-77: identity and gateway"
t_is "$(pg_sql "SELECT detail->>'status', detail->>'verified', detail->>'iss' FROM events WHERE kind = 'grid.denied' AND detail->>'sub' = 'u-expired'")" \
    "401|false|$ISS" "the expired token's denial: 401, its claimed iss and sub, unverified"
t_is "$(audit_count "kind = 'grid.denied' AND detail->>'sub' = 'u-hs' AND detail->>'verified' = 'false' AND detail->>'reason' LIKE '%HS256%'")" \
    1 "the HS256 token's denial, with the reason"
t_is "$(audit_count "kind = 'grid.denied' AND detail->>'status' = '403' AND detail->>'reason' LIKE '%lacks the scope compute.create%' AND detail->>'verified' = 'true' AND detail->>'vo' = '/atlas'")" \
    1 "the denial of the submit without compute.create: 403, verified, VO /atlas"
t_is "$(audit_count "kind = 'grid.denied' AND detail->>'status' = '429' AND detail->>'vo' = '/cms' AND detail->>'reason' LIKE 'vo /cms has 2 pending jobs%'")" \
    1 "the 429 of /cms's pending limit"
t_is "$(audit_count "kind = 'grid.denied' AND subject = 'ce-2' AND detail->>'gateway' = 'ce-2'")" \
    1 "ce-2's denial names the gateway"
t_like "$(grep -c 'audit=grid.denied identity=.*(unverified)' "$T/loomd.log")" '^[1-9][0-9]*$' \
    "the log has the denials of unverified tokens too"

loomd_stop
t_is "$?" 0 "loomd stops with status 0"
t_done
