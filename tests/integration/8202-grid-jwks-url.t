#!/usr/bin/env bash
# 8202-grid-jwks-url.t - issuers' keys fetched from a jwks_url (a tiny
# HTTPS server of the test's own, with a certificate of its own): fetched
# at start in the background; a new key appears and is fetched by the
# periodic refresh, without any request waiting for it; a failed refresh
# keeps the keys and says why; a token with a kid the keys lack is refused
# and makes one fetch, not sooner than a minute after the last, however
# many such tokens come.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

SIGN=$LOOM_TOP_BUILDDIR/tests/integration/jwt_sign
AUD=https://loom.example.org

for k in k1 k3; do
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
        -out "$T/$k.pem" 2>/dev/null || t_bail "openssl genpkey failed"
done
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
    -out "$T/k2.pem" 2>/dev/null || t_bail "openssl genpkey failed"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$T/tls.key" -out "$T/tls.crt" -days 2 -subj /CN=127.0.0.1 \
    -addext subjectAltName=IP:127.0.0.1 2>/dev/null ||
    t_bail "openssl req (the server's certificate) failed"

# publish FILE KID...: the JWKS of those keys at https://.../FILE
mkdir -p "$T/www"
publish() {
    local f=$1 k keys=
    shift
    for k in "$@"; do
        keys="$keys${keys:+, }$("$SIGN" jwk "$T/$k.pem" "$k")"
    done
    printf '{"keys": [%s]}\n' "$keys" >"$T/www/$f.tmp" &&
        mv "$T/www/$f.tmp" "$T/www/$f"
}
publish p.json k1
publish k.json k1

# The JWKS server: HTTPS, every request's time and path in www.log.
cat >"$T/jwks_server.py" <<'EOF'
import http.server, ssl, sys, time
root, port, cert, key, log = sys.argv[1:6]
class Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def log_message(self, fmt, *args):
        with open(log, "a") as f:
            f.write("%.3f %s\n" % (time.time(), self.path))
srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
srv.serve_forever()
EOF
WPORT=$(free_port)
python3 "$T/jwks_server.py" "$T/www" "$WPORT" "$T/tls.crt" "$T/tls.key" \
    "$T/www.log" 2>"$T/jwks_server.err" &
WPID=$!
t_cleanup "kill $WPID 2>/dev/null; wait $WPID 2>/dev/null"
wait_for "curl -sf --cacert '$T/tls.crt' -o /dev/null https://127.0.0.1:$WPORT/p.json" 30 ||
    t_bail "the JWKS server did not answer: $(cat "$T/jwks_server.err")"
: >"$T/www.log"

NOW=$(date +%s)
# token ISSUER KEY ALG SUB: a token of issuer p or k.
token() {
    "$SIGN" sign "$T/$2.pem" "$3" "$2" \
        "{\"iss\":\"https://iam.example.org/$1\",\"sub\":\"$4\",\"aud\":\"$AUD\",\"iat\":$((NOW - 10)),\"exp\":$((NOW + 3600)),\"wlcg.ver\":\"1.0\",\"scope\":\"compute.read\"}"
}
# issuer NAME PATH: a field of the issuer in GET /v1/runtime (as admin).
issuer() {
    local saved=$TOKEN
    TOKEN=$ADMIN
    api GET /v1/runtime >/dev/null
    TOKEN=$saved
    py "[i for i in d['grid']['issuers'] if i['name'] == '$1'][0]$2" "$BODY"
}
fetches() { # PATH: requests the JWKS server had for it
    grep -c " /$1\$" "$T/www.log"
}

pg_start || t_bail "PostgreSQL did not start"
accounts_default # admin and loomctl: $T_USER
echo "SCITOKENS /^https://iam\\.example\\.org/[pk],u[0-9]+\$/ $T_USER" >>"$T/accounts"
loomd_conf <<EOF
[issuer p]
url = https://iam.example.org/p
audiences = $AUD
jwks_url = https://127.0.0.1:$WPORT/p.json
jwks_ca_file = $T/tls.crt
jwks_refresh_s = 2
[issuer k]
url = https://iam.example.org/k
audiences = $AUD
jwks_url = https://127.0.0.1:$WPORT/k.json
jwks_ca_file = $T/tls.crt
[cluster sim]
adaptor = sim
nodes = 2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN

wait_for "[ \"\$(issuer k \"['kids']\")\" = '[\"k1\"]' ]" 30
t_is "$(issuer p "['kids']")/$(issuer k "['kids']")" '["k1"]/["k1"]' \
    "both issuers' keys are fetched at start, in the background"
t_is "$(issuer k "['fetches']")" 1 "issuer k: one fetch"
T0=$(awk '$2 == "/k.json" {print $1; exit}' "$T/www.log")

# ---- an unknown kid: refused, and one fetch a minute at most -------------
publish k.json k1 k3
TOKEN=$(token k k3 RS256 u3)
api GET /v1/jobs >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "401 token refused: issuer k has no key 'k3'" \
    "a token of k's new key k3, before k's keys are fetched again: 401"
for i in $(seq 1 20); do # a flood of them asks for no more fetches
    TOKEN=$(token k k3 RS256 "u1$i")
    api GET /v1/jobs >/dev/null
done
t_is "$STATUS" 401 "... and 20 more such tokens"

# ---- the periodic refresh brings a new key ------------------------------
TOKEN=$(token p k1 RS256 u1)
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "a token of p's key k1: 200"
publish p.json k1 k2
wait_for "[ \"\$(issuer p \"['kids']\")\" = '[\"k1\", \"k2\"]' ]" 30
t_is "$(issuer p "['kids']")" '["k1", "k2"]' \
    "p's new key k2 is fetched by the refresh (jwks_refresh_s 2), no token asked"
TOKEN=$(token p k2 ES256 u2)
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "a token of k2 (ES256): 200"

# ---- a failed refresh keeps the keys ------------------------------------
rm "$T/www/p.json"
wait_for "issuer p \"['last_error']\" | grep -q 'HTTP status 404'" 30
t_like "$(issuer p "['last_error']")" "p.json: HTTP status 404$" \
    "a refresh that fails says why (GET /v1/runtime last_error)"
t_is "$(issuer p "['kids']")" '["k1", "k2"]' "... and p keeps its keys"
TOKEN=$(token p k2 ES256 u22)
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "... a new token of k2 is still taken"
t_like "$(grep -c "issuer=p: fetching keys from https://127.0.0.1:$WPORT/p.json failed: HTTP status 404; the keys fetched before stay" "$T/loomd.log")" \
    '^[1-9]' "... and the log says so"
publish p.json k1 k2
wait_for "[ \"\$(issuer p \"['last_error']\")\" = null ]" 30
t_is "$(issuer p "['last_error']")" null "p's keys are fetched again once they are back"

# ---- the kid fetch, a minute after k's first -----------------------------
TOKEN=$(token k k3 RS256 u3)
wait_for "api GET /v1/jobs >/dev/null; [ \"\$STATUS\" = 200 ]" 120
t_is "$STATUS" 200 "k's key k3 is fetched and its token taken"
t_is "$(fetches k.json)" 2 "k's keys were fetched twice: at start, and once for the unknown kid"
T1=$(awk '$2 == "/k.json" {t = $1} END {print t}' "$T/www.log")
t_is "$(python3 -c "print(int($T1 - $T0 >= 59))")" 1 \
    "... the second a minute after the first ($(python3 -c "print(round($T1 - $T0, 1))") s), not at once"
t_is "$(issuer k "['fetches']")" 2 "GET /v1/runtime counts 2 fetches of k"

loomd_stop
t_is "$?" 0 "loomd stops with status 0"
t_done
