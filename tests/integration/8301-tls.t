#!/usr/bin/env bash
# 8301-tls.t - HTTPS on listen_tls, with a CA of the test's own (a root, an
# intermediate, a server certificate for 127.0.0.1 and localhost): the API
# over HTTPS beside plain HTTP; TLS 1.1 and a CBC cipher refused; renewed
# certificate files picked up by SIGHUP and by POST /v1/runtime/reload
# (the new serial seen by openssl s_client) with the same daemon and
# listener, a bad renewal refused with the old certificate kept; loomctl
# over HTTPS with --cacert, and refused without it; the per-address limit
# and the request deadline on the HTTPS listener.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/pki.sh"

P=$T/pki
pki_make "$P" || t_bail "cannot make the test CA"
pg_start || t_bail "PostgreSQL did not start"
TPORT=$(free_port)
HTTPS=https://127.0.0.1:$TPORT
# the files loomd reads, so that a renewal can replace them
cp "$P/server.pem" "$T/server.pem" && cp "$P/server.key" "$T/server.key" &&
    chmod 0600 "$T/server.key" && chown "$LOOM_SERVICE_USER" "$T/server.key" ||
    t_bail "cannot copy the server's files"
loomd_conf <<EOF
[cluster sim]
adaptor = sim
nodes = 4
cpus_per_node = 4
memory_mb = 4096
EOF
sed -i "/^\[loomd\]\$/a listen_tls = 127.0.0.1:$TPORT\\
tls_cert_file = $T/server.pem\\
tls_key_file = $T/server.key\\
request_timeout_s = 15\\
max_connections_per_address = 4" "$T/loom.conf"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
PID=$LOOMD_PID

# https PATH [CURL ARGS]: GET over HTTPS with the test's CA and the admin
# token; STATUS and BODY as api() sets them.
https() {
    local path=$1
    shift
    STATUS=$(curl -s -o "$T/https.body" -w '%{http_code}' --max-time 30 \
        --cacert "$P/root.pem" -H "Authorization: Bearer $TOKEN" "$@" \
        "$HTTPS$path") || true
    BODY=$(cat "$T/https.body" 2>/dev/null)
}

# s_client ARGS...: openssl s_client against the HTTPS listener, without
# the system's configuration (whose security level would keep the client
# itself from offering TLS 1.1); its whole output.
s_client() {
    echo | OPENSSL_CONF=/dev/null timeout 30 openssl s_client \
        -connect "127.0.0.1:$TPORT" "$@" 2>&1
}

# served_serial: the serial of the certificate the listener sends now.
served_serial() {
    s_client -CAfile "$P/root.pem" | OPENSSL_CONF=/dev/null openssl x509 \
        -noout -serial 2>/dev/null | sed 's/^serial=//'
}

# ---- the API over HTTPS ------------------------------------------------------
https /healthz
t_is "$STATUS $(jget "$BODY" .status)/$(jget "$BODY" .role)" '200 ok/active' \
    "GET /healthz over HTTPS, the chain verified up to the test's root"
https /v1/clusters
t_is "$STATUS/$(jget "$BODY" .items.0.name)" 200/sim \
    "GET /v1/clusters over HTTPS with a token"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "plain HTTP on listen goes on beside it"
t_like "$(cat "$T/loomd.log")" "serving the API on https://127.0.0.1:$TPORT" \
    "the log names the HTTPS listener"
t_like "$(cat "$T/loomd.log")" \
    'TLS: serving certificate /DC=org/DC=loom-test/CN=localhost, serial 1000,' \
    "... and the certificate it serves"

# ---- protocols and ciphers ----------------------------------------------------
OUT=$(s_client -tls1_2 -cipher 'DEFAULT@SECLEVEL=0' -CAfile "$P/root.pem")
t_like "$OUT" 'Protocol *: TLSv1\.2' \
    "openssl s_client -tls1_2 (the client set-up the next checks use): TLS 1.2"
t_like "$OUT" 'Cipher *: ECDHE-(ECDSA|RSA)-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305)' \
    "... with ECDHE and an AEAD cipher"
OUT=$(s_client -tls1_1 -cipher 'DEFAULT@SECLEVEL=0')
t_like "$OUT" 'Protocol *: TLSv1\.1' "openssl s_client -tls1_1: the client tried TLS 1.1"
t_like "$OUT" 'SSL handshake has read [0-9]+ bytes and written [1-9][0-9]* bytes' \
    "... and sent its hello"
t_like "$OUT" 'Cipher is \(NONE\)' "... and no session came of it: refused"
OUT=$(s_client -tls1_2 -cipher 'AES128-SHA:@SECLEVEL=0')
t_like "$OUT" 'Cipher is \(NONE\)' "TLS 1.2 with a CBC cipher (AES128-SHA): refused"
OUT=$(s_client -CAfile "$P/root.pem")
t_like "$OUT" 'New, TLSv1\.3, Cipher is TLS_' "a client that can: TLS 1.3"
t_like "$OUT" 'Verify return code: 0 \(ok\)' "... and the chain verifies"

# ---- renewed certificate files: reload, same daemon and listener -------------
t_is "$(served_serial)" 1000 "the certificate served has serial 1000"
pki_server "$P" renewed1 || t_bail "cannot renew"
NEW1=$(pki_serial "$P/renewed1.pem")
cp "$P/renewed1.pem" "$T/server.pem" && cp "$P/renewed1.key" "$T/server.key"
kill -HUP "$LOOMD_PID"
wait_for '[ "$(served_serial)" = "$NEW1" ]'
t_is "$(served_serial)" "$NEW1" "SIGHUP: the renewed certificate (serial $NEW1) is served"
t_is "$LOOMD_PID" "$PID" "... by the same loomd"
alive "$PID"
t_ok $? "... which runs on"
https /v1/clusters
t_is "$STATUS" 200 "... and answers over HTTPS with the new certificate"

pki_server "$P" renewed2 || t_bail "cannot renew"
NEW2=$(pki_serial "$P/renewed2.pem")
cp "$P/renewed2.pem" "$T/server.pem" && cp "$P/renewed2.key" "$T/server.key"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "POST /v1/runtime/reload: 200"
t_is "$(served_serial)" "$NEW2" "... and the next certificate (serial $NEW2) is served"

# a renewal gone wrong: the certificate of one key with another key
cp "$P/renewed1.key" "$T/server.key"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "a certificate with another's key: the reload is refused"
t_like "$(jget "$BODY" .error.message)" \
    "tls_cert_file $T/server.pem with tls_key_file $T/server.key: " \
    "... naming both files"
t_is "$(served_serial)" "$NEW2" "... and the certificate before it is still served"
chmod 0644 "$T/server.key"
api POST /v1/runtime/reload '{}' >/dev/null
t_like "$STATUS $(jget "$BODY" .error.message)" \
    "^400 tls_key_file $T/server.key may be read by others \\(mode 0644\\)" \
    "a key file others may read: the reload is refused, saying so"
cp "$P/renewed2.key" "$T/server.key" && chmod 0600 "$T/server.key"

# ---- loomctl over HTTPS ----------------------------------------------------------
(umask 077 && echo "$TOKEN" >"$T/admin.token")
OUT=$("$LOOM_TOP_BUILDDIR/loomctl" --url "$HTTPS" --token-file "$T/admin.token" \
    --cacert "$P/root.pem" clusters 2>&1)
t_like "$OUT" $'^CLUSTER .*\nsim +sim +up +4 ' "loomctl --url https://... --cacert: the clusters"
OUT=$("$LOOM_TOP_BUILDDIR/loomctl" --url "$HTTPS" --token-file "$T/admin.token" \
    clusters 2>&1)
t_is "$?" 1 "loomctl without the test's CA: fails"
t_like "$OUT" "^loomctl: cannot verify the server at $HTTPS: .*unable to get local issuer certificate" \
    "... saying it cannot verify the server"
OUT=$(LOOM_CA_FILE=$P/root.pem LOOM_URL=https://localhost:$TPORT \
    LOOM_TOKEN_FILE=$T/admin.token "$LOOM_TOP_BUILDDIR/loomctl" clusters 2>&1)
t_like "$OUT" $'^CLUSTER .*\nsim +sim +up +4 ' \
    "LOOM_CA_FILE with LOOM_URL https://localhost:PORT: the name localhost verifies too"
OUT=$("$LOOM_TOP_BUILDDIR/loomctl" --url "$LOOM_URL" --token-file "$T/admin.token" \
    --cacert "$P/root.pem" clusters 2>&1)
t_like "$OUT" "^loomctl: a CA, certificate or key is given, but $LOOM_URL is not an https:// URL" \
    "--cacert with a plain http:// URL: refused, not ignored"

# ---- the per-address limit and the deadline on the HTTPS listener ------------
# Four TLS connections from 127.0.0.1 that send no request fill its
# per-address limit (4); then a request from 127.0.0.1 finds none free
# while one from 127.0.0.2 is served; the four are cut off once
# request_timeout_s (15 s) has passed since they opened.
python3 - "$TPORT" "$P/root.pem" >"$T/hold.out" 2>&1 <<'EOF' &
import socket, ssl, sys, time
port, ca = int(sys.argv[1]), sys.argv[2]
ctx = ssl.create_default_context(cafile=ca)
held = []
for i in range(4):
    s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)),
                        server_hostname="localhost")
    held.append((s, time.time()))
print("held", len(held), flush=True)
for s, t0 in held:
    s.settimeout(120)
    try:
        while s.recv(1024):
            pass
        print("cut after %.1f s" % (time.time() - t0), flush=True)
    except (socket.timeout, OSError) as e:
        print("not cut: %s" % e, flush=True)
EOF
HOLD=$!
wait_for 'grep -q "^held 4" "$T/hold.out"' 60
t_is "$(head -1 "$T/hold.out")" "held 4" "four idle HTTPS connections from 127.0.0.1"
https /v1/clusters
t_is "$STATUS" 000 "a fifth from 127.0.0.1: no answer (max_connections_per_address 4)"
https /v1/clusters --interface 127.0.0.2
t_is "$STATUS" 200 "one from 127.0.0.2: served"
wait "$HOLD"
CUTS=$(grep -c '^cut after' "$T/hold.out")
t_is "$CUTS" 4 "the four idle HTTPS connections were cut off" ||
    t_diag "$(cat "$T/hold.out")"
SOONEST=$(awk '/^cut after/ {print int($3)}' "$T/hold.out" | sort -n | head -1)
[ "${SOONEST:-0}" -ge 14 ]
t_ok $? "... not before request_timeout_s (the soonest after ${SOONEST:-?} s)"
https /v1/clusters
t_is "$STATUS" 200 "then 127.0.0.1 is served again"

loomd_stop
t_is "$?" 0 "loomd stops cleanly (exit 0)"
t_done
