#!/usr/bin/env bash
# 8302-tls-client-certs.t - client certificates on HTTPS, with a CA of the
# test's own: a certificate whose DN maps to a test account (a
# grid-mapfile line) submits a job that records the DN as its owner and
# runs as that account; its RFC 3820 proxy acts as the same DN; another
# mapped DN does not see that job; refused with 401 saying why: a
# certificate from another CA, an expired one, a revoked one (CRL), one
# revoked after start (the reload reads the CRL again), a proxy once
# tls_proxy_certs = no; an unmapped DN is 403 naming it; with
# tls_client_cert = require a token alone is 401 over HTTPS, a token with
# a certificate acts as the token; a DN only a cluster= line maps runs
# there as that account; a grid token (an outside issuer's) with a
# certificate acts as the grid token, a refused grid token is 401 though
# the certificate is good, and a good grid token with a revoked
# certificate is 401; loomctl and libdrmaa (Debian's python3-drmaa) with a
# certificate over HTTPS.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/pki.sh"

# err_is STATUS CODE NAME: the last answer has STATUS and an error body
# with CODE.
err_is() {
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" "$1/$2" \
        "$3: HTTP $1, $2" || t_diag "  body: $BODY"
}

# Two accounts of our own, unique to this run (uid >= 1000).
t_account BOB_U bob
t_account DAVE_U dave

P=$T/pki
pki_make "$P" || t_bail "cannot make the test CA"
pki_user "$P" bob "Bob Smith" && pki_user "$P" dave "Dave" &&
    pki_user "$P" eve "Eve Unmapped" &&
    pki_user "$P" old "Old Timer" -startdate 20200101000000Z \
        -enddate 20210101000000Z &&
    pki_user "$P" carol "Carol" && pki_revoke "$P" carol &&
    pki_proxy "$P" bobproxy bob && pki_other_user "$P" mallory "Mallory" &&
    pki_user "$P" frank "Frank" ||
    t_bail "cannot make the test's certificates"
BOB_DN="/DC=org/DC=loom-test/CN=Bob Smith"
DAVE_DN="/DC=org/DC=loom-test/CN=Dave"

# An outside issuer of grid tokens (tests/integration/jwt_sign signs them).
SIGN=$LOOM_TOP_BUILDDIR/tests/integration/jwt_sign
ISS=https://iam.example.org/test
AUD=https://loom.example.org
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$T/ec.pem" 2>/dev/null &&
    openssl pkey -in "$T/ec.pem" -pubout -out "$T/ec.pub" 2>/dev/null ||
    t_bail "openssl genpkey failed"
NOW=$(date +%s)
# grid_token SUB SCOPE [EXP_OFFSET]: a token of the issuer.
grid_token() {
    "$SIGN" sign "$T/ec.pem" ES256 - "$(printf '{"iss":"%s","sub":"%s","aud":"%s","iat":%d,"exp":%d,"wlcg.ver":"1.0","scope":"%s"}' \
        "$ISS" "$1" "$AUD" $((NOW - 10)) $((NOW + ${3:-3600})) "$2")"
}

pg_start || t_bail "PostgreSQL did not start"
TPORT=$(free_port)
HTTPS=https://127.0.0.1:$TPORT
accounts_default # admin and loomctl: $T_USER
cat >>"$T/accounts" <<EOF
# a grid-mapfile line, and the DN method
"$BOB_DN" $BOB_U
DN   "$DAVE_DN"   $DAVE_U
DN "/DC=org/DC=loom-test/CN=Carol" $DAVE_U
DN "/DC=org/DC=loom-test/CN=Old Timer" $DAVE_U
# only on cluster local
"/DC=org/DC=loom-test/CN=Frank" $DAVE_U cluster=local
SCITOKENS $ISS,pilot $DAVE_U
EOF
loomd_conf <<EOF
[issuer test]
url = $ISS
audiences = $AUD
pem_file = $T/ec.pub
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
EOF
TLS_KEYS="listen_tls = 127.0.0.1:$TPORT
tls_cert_file = $P/server.pem
tls_key_file = $P/server.key
tls_client_ca_dir = $P/ca"
# tls_keys [KEY = VALUE...]: the TLS keys of [loomd], and the ones given.
tls_keys() {
    local tmp=$T/loom.conf.new
    awk -v keys="$TLS_KEYS" -v more="$(printf '%s\n' "$@")" '
        /^(listen_tls|tls_)/ { next }
        { print }
        /^\[loomd\]$/ { print keys; if (more != "") print more }' \
        "$T/loom.conf" >"$tmp" && mv "$tmp" "$T/loom.conf" &&
        chmod 0600 "$T/loom.conf" && loom_owns "$T/loom.conf"
}
tls_keys
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# as NAME METHOD PATH [JSON]: a request over HTTPS with NAME's certificate
# (NAME.pem and NAME.key, or the proxy file NAME.pem alone); no token.
as() {
    local name=$1 method=$2 path=$3 key=()
    shift 3
    [ -f "$P/$name.key" ] && [ "$name" != bobproxy ] && key=(--key "$P/$name.key")
    STATUS=$(curl -s -o "$T/as.body" -w '%{http_code}' --max-time 30 \
        --cacert "$P/root.pem" --cert "$P/$name.pem" "${key[@]}" \
        -X "$method" -H 'Content-Type: application/json' \
        ${1:+--data-binary "$1"} "$HTTPS$path") || true
    BODY=$(cat "$T/as.body" 2>/dev/null)
}

JOBREQ='{"name":"dn-job","command":["/bin/sh","-c","id -un"],"request":{"cluster":"local"}}'

# ---- a mapped DN submits, and owns its job ----------------------------------
as bob POST /v1/jobs "$JOBREQ"
t_is "$STATUS" 201 "Bob's certificate, no token: the submit is taken"
BOB_JOB=$(jget "$BODY" .id)
t_is "$(jget "$BODY" .owner)" "$BOB_DN" "the job's owner is Bob's DN"
t_is "$(jget "$BODY" .account)" "$BOB_U" "... and it runs as $BOB_U (the grid-mapfile line)"
t_is "$(jget "$BODY" .source)" local "... a user submitting for itself: source local"
wait_for '[ "$(job_state "$BOB_JOB")" = completed ]' 60
t_is "$(job_state "$BOB_JOB")" completed "Bob's job completed"
as bob GET "/v1/jobs/$BOB_JOB"
t_is "$STATUS/$(jget "$BODY" .id)" "200/$BOB_JOB" "Bob sees his job"
as bobproxy GET "/v1/jobs?owner=$(python3 -c 'import sys, urllib.parse
print(urllib.parse.quote(sys.argv[1], safe=""))' "$BOB_DN")"
t_is "$STATUS/$(jget "$BODY" .items.0.id)/$(jlen "$BODY" .items)" "200/$BOB_JOB/1" \
    "Bob's proxy certificate acts as Bob's DN: it lists his job"
as bobproxy POST /v1/jobs "$JOBREQ"
t_is "$STATUS/$(jget "$BODY" .owner)" "201/$BOB_DN" \
    "a job submitted with the proxy is owned by the end entity's DN"
as dave GET "/v1/jobs/$BOB_JOB"
err_is 404 not_found "Dave (another mapped DN) asks for Bob's job"
as dave GET /v1/jobs
t_is "$STATUS/$(jlen "$BODY" .items)" 200/0 "Dave's list has none of Bob's jobs"
as dave POST /v1/jobs '{"command":["/bin/true"],"request":{"cluster":"local"}}'
t_is "$STATUS/$(jget "$BODY" .account)" "201/$DAVE_U" "Dave submits as $DAVE_U (a DN line)"
as bob POST "/v1/runtime/reload" '{}'
err_is 403 forbidden "a certificate identity has the role user: no runtime control"

# ---- refused --------------------------------------------------------------
as eve GET /v1/jobs
err_is 403 forbidden "Eve's certificate verifies, but her DN maps to no account"
t_like "$(jget "$BODY" .error.message)" \
    "identity '/DC=org/DC=loom-test/CN=Eve Unmapped' maps to no local account \\(no DN line of $T/accounts matches\\)" \
    "... the answer names the DN"
as mallory GET /v1/jobs
err_is 401 unauthenticated "a certificate from a CA that tls_client_ca_dir lacks"
t_like "$(jget "$BODY" .error.message)" \
    '^client certificate /DC=org/DC=elsewhere/CN=Mallory: unable to get local issuer certificate' \
    "... saying so"
as old GET /v1/jobs
err_is 401 unauthenticated "an expired certificate (its DN is mapped)"
t_like "$(jget "$BODY" .error.message)" \
    '^client certificate /DC=org/DC=loom-test/CN=Old Timer: certificate has expired' \
    "... saying so"
as carol GET /v1/jobs
err_is 401 unauthenticated "a revoked certificate (in the intermediate's CRL; its DN is mapped)"
t_like "$(jget "$BODY" .error.message)" \
    '^client certificate /DC=org/DC=loom-test/CN=Carol: certificate revoked' \
    "... saying so"
STATUS=$(curl -s -o "$T/x.body" -w '%{http_code}' --cacert "$P/root.pem" \
    -H "Authorization: Bearer $TOKEN" --cert "$P/carol.pem" \
    --key "$P/carol.key" "$HTTPS/v1/jobs")
t_is "$STATUS" 401 "a revoked certificate with a good token: still 401"
STATUS=$(curl -s -o "$T/x.body" -w '%{http_code}' --cacert "$P/root.pem" \
    "$HTTPS/v1/jobs")
t_is "$STATUS/$(jget "$(cat "$T/x.body")" .error.message)" \
    "401/a bearer token (Authorization: Bearer <token>) or a client certificate is required" \
    "neither token nor certificate: 401 naming both"
t_like "$(cat "$T/loomd.log")" 'refused client certificate /DC=org/DC=loom-test/CN=Carol: certificate revoked' \
    "the log says which certificate was refused and why"

# ---- a DN with cluster= lines; a grid token with a certificate ----------------
as frank POST /v1/jobs "$JOBREQ"
t_is "$STATUS/$(jget "$BODY" .account)" "201/$DAVE_U" \
    "Frank's DN, mapped only on cluster local (a grid-mapfile line with cluster=): runs there as $DAVE_U"
as frank POST /v1/jobs '{"command":["/bin/true"]}'
err_is 403 forbidden "... a job of Frank's that names no cluster"
t_like "$(jget "$BODY" .error.message)" \
    "identity '/DC=org/DC=loom-test/CN=Frank' has an account only on some clusters" \
    "... saying the DN has accounts only on some clusters"
# grid CURL_ARGS...: a request over HTTPS with the curl arguments given.
grid() {
    STATUS=$(curl -s -o "$T/g.body" -w '%{http_code}' --max-time 30 \
        --cacert "$P/root.pem" -H 'Content-Type: application/json' "$@") || true
    BODY=$(cat "$T/g.body" 2>/dev/null)
}
GRID=$(grid_token pilot "compute.create compute.read")
[ -n "$GRID" ] || t_bail "jwt_sign made no token"
grid -H "Authorization: Bearer $GRID" --cert "$P/bob.pem" --key "$P/bob.key" \
    --data-binary "$JOBREQ" "$HTTPS/v1/jobs"
t_is "$STATUS/$(jget "$BODY" .owner)/$(jget "$BODY" .source)/$(jget "$BODY" .account)" \
    "201/$ISS,pilot/grid/$DAVE_U" \
    "a grid token with Bob's certificate: the token wins (its identity, source grid, its SCITOKENS line's account)"
GRID_JOB=$(jget "$BODY" .id)
as bob GET "/v1/jobs/$GRID_JOB"
err_is 404 not_found "... the job is not Bob's"
grid -H "Authorization: Bearer $(grid_token pilot compute.read)" \
    --cert "$P/bob.pem" --key "$P/bob.key" --data-binary "$JOBREQ" "$HTTPS/v1/jobs"
err_is 403 forbidden "a grid token without compute.create, with Bob's certificate: its scopes hold"
grid -H "Authorization: Bearer $(grid_token pilot compute.create -20)" \
    --cert "$P/bob.pem" --key "$P/bob.key" "$HTTPS/v1/jobs"
err_is 401 unauthenticated "an expired grid token with Bob's good certificate: the token decides"
t_like "$(jget "$BODY" .error.message)" '^token expired' "... saying the token expired"
grid -H "Authorization: Bearer $GRID" --cert "$P/carol.pem" --key "$P/carol.key" \
    "$HTTPS/v1/jobs"
err_is 401 unauthenticated "a good grid token with Carol's revoked certificate"
t_like "$(jget "$BODY" .error.message)" 'CN=Carol: certificate revoked' \
    "... the certificate is checked first"

# ---- revoked after start: the reload reads the CRL again ---------------------
pki_revoke "$P" dave || t_bail "cannot revoke Dave's certificate"
as dave GET /v1/jobs
t_is "$STATUS" 200 "Dave, revoked in a CRL loomd has not read yet: still served"
kill -HUP "$LOOMD_PID"
wait_for 'as dave GET /v1/jobs; [ "$STATUS" = 401 ]'
err_is 401 unauthenticated "after SIGHUP: Dave's certificate is refused"
t_like "$(jget "$BODY" .error.message)" 'CN=Dave: certificate revoked' "... as revoked"

# ---- no proxies ------------------------------------------------------------
tls_keys "tls_proxy_certs = no"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with tls_proxy_certs = no"
as bobproxy GET /v1/jobs
err_is 401 unauthenticated "then Bob's proxy certificate"
t_like "$(jget "$BODY" .error.message)" 'proxy certificates not allowed' "... saying why"
as bob GET /v1/jobs
t_is "$STATUS" 200 "... while Bob's own certificate is served"

# ---- require ---------------------------------------------------------------
tls_keys "tls_client_cert = require"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with tls_client_cert = require"
STATUS=$(curl -s -o "$T/x.body" -w '%{http_code}' --cacert "$P/root.pem" \
    -H "Authorization: Bearer $TOKEN" "$HTTPS/v1/clusters")
t_is "$STATUS" 401 "over HTTPS a token without a certificate: 401"
t_like "$(jget "$(cat "$T/x.body")" .error.message)" \
    '^a client certificate is required \(tls_client_cert = require\)' "... saying so"
STATUS=$(curl -s -o "$T/x.body" -w '%{http_code}' --cacert "$P/root.pem" \
    -H "Authorization: Bearer $TOKEN" --cert "$P/bob.pem" --key "$P/bob.key" \
    -X POST "$HTTPS/v1/runtime/reload")
t_is "$STATUS" 200 "a token (admin) with Bob's certificate acts as the token: it may reload"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "plain HTTP with a token is served as before"
as bob GET /v1/jobs
t_is "$STATUS" 200 "Bob's certificate alone is served"

a_bad_conf() {
    local out
    tls_keys "$@"
    out=$(api POST /v1/runtime/reload '{}')
    jget "$out" .error.message
}
t_like "$(a_bad_conf 'tls_client_cert = sometimes')" \
    'tls_client_cert must be optional or require' \
    "tls_client_cert = sometimes: the reload is refused, naming the values"
TLS_KEYS=$(grep -v tls_client_ca_dir <<<"$TLS_KEYS")
t_like "$(a_bad_conf 'tls_crl_dir = /nonexistent')" \
    'tls_crl_dir needs tls_client_ca_dir' "tls_crl_dir without a CA directory: refused"
TLS_KEYS="$TLS_KEYS
tls_client_ca_dir = $T"
t_like "$(a_bad_conf)" \
    "tls_client_ca_dir $T holds no CA certificate \\(files named HASH.N\\): run 'openssl rehash $T'" \
    "a CA directory that is not hashed: refused, saying what to run"
TLS_KEYS=$(grep -v tls_client_ca_dir <<<"$TLS_KEYS")
TLS_KEYS="$TLS_KEYS
tls_client_ca_dir = $P/ca"
tls_keys
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "the good keys again: reloaded"

# ---- loomctl and libdrmaa with a certificate ---------------------------------
OUT=$("$LOOM_TOP_BUILDDIR/loomctl" --url "$HTTPS" --cacert "$P/root.pem" \
    --cert "$P/bobproxy.pem" submit --cluster local -- /bin/true 2>&1)
t_like "$OUT" '^[0-9]+$' "loomctl --cert PROXYFILE (no token): submit prints the job's id"
t_is "$(field "$OUT" .owner)/$(field "$OUT" .account)" "$BOB_DN/$BOB_U" \
    "... a job of Bob's DN, run as $BOB_U"
OUT=$(LOOM_URL=$HTTPS LOOM_CA_FILE=$P/root.pem LOOM_CERT_FILE=$P/bob.pem \
    LOOM_KEY_FILE=$P/bob.key "$LOOM_TOP_BUILDDIR/loomctl" jobs 2>&1)
t_like "$OUT" "^JOBID" "loomctl with LOOM_CERT_FILE and LOOM_KEY_FILE: lists Bob's jobs"

LIB=$LOOM_TOP_BUILDDIR/grid/drmaa/.libs/libdrmaa.so.1
PY=/usr/bin/python3
"$PY" -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("drmaa") is None)' 2>/dev/null ||
    t_bail "python3-drmaa is not installed (apt-get install python3-drmaa; ./bootstrap check does it)"
PRELOAD=$(ldd "$LIB" | awk '/libasan/ {print $3}')
OUT=$(env -u LOOM_TOKEN_FILE DRMAA_LIBRARY_PATH="$LIB" LOOM_URL="$HTTPS" \
    LOOM_CA_FILE="$P/root.pem" LOOM_CERT_FILE="$P/bob.pem" LOOM_KEY_FILE="$P/bob.key" \
    ${PRELOAD:+LD_PRELOAD=$PRELOAD} ASAN_OPTIONS=detect_leaks=0 \
    timeout 120 "$PY" -c '
import drmaa
with drmaa.Session() as s:
    jt = s.createJobTemplate()
    jt.remoteCommand = "/bin/true"
    jt.nativeSpecification = "--cluster=local"
    jid = s.runJob(jt)
    info = s.wait(jid, 60)
    print(jid, info.exitStatus)
' 2>"$T/drmaa.err")
t_like "$OUT" '^[0-9]+ 0$' "libdrmaa over HTTPS with Bob's certificate, no token: a job ran, exit 0" ||
    t_diag "$(cat "$T/drmaa.err")"
t_is "$(field "${OUT%% *}" .owner)" "$BOB_DN" "... owned by Bob's DN"
OUT=$(env -u LOOM_TOKEN_FILE -u LOOM_CA_FILE DRMAA_LIBRARY_PATH="$LIB" \
    LOOM_URL="$HTTPS" LOOM_CERT_FILE="$P/bob.pem" LOOM_KEY_FILE="$P/bob.key" \
    ${PRELOAD:+LD_PRELOAD=$PRELOAD} ASAN_OPTIONS=detect_leaks=0 \
    timeout 120 "$PY" -c '
import drmaa
try:
    drmaa.Session().initialize()
except drmaa.errors.DrmaaException as e:
    print(e)
' 2>&1)
t_like "$OUT" 'cannot verify the server at https://127\.0\.0\.1' \
    "libdrmaa without the test's CA: drmaa_init fails, saying it cannot verify the server"

loomd_stop
t_is "$?" 0 "loomd stops cleanly (exit 0)"
t_done
