#!/usr/bin/env bash
# 8002-http-limits.t - what one client cannot do to the others: 1,030 idle
# connections and five that trickle a request one byte a second, from one
# address, while a client from another address (127.0.0.2) is served
# promptly (its p99 measured and printed); two different Content-Length
# headers; a token issued in the future or living too long.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster sim]
adaptor = sim
nodes = 4
cpus_per_node = 4
memory_mb = 4096
EOF
sed -i '/^\[loomd\]$/a request_timeout_s = 3\nmax_token_ttl_s = 86400' \
    "$T/loom.conf"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# ---- two Content-Length headers ---------------------------------------------
RESP=$(printf 'POST /v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\nConnection: close\r\n\r\n{}' "$TOKEN" |
    timeout 10 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(sys.stdin.buffer.read())
out = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    out += b
print(out.decode("utf-8", "replace"))' "$PORT")
t_like "$(head -1 <<<"$RESP")" '^HTTP/1.1 400' "two different Content-Length headers: 400"
t_like "$RESP" 'Content-Length headers that differ' "... saying why"

# ---- tokens: iat in the future, a lifetime beyond max_token_ttl_s -----------
# sign TTL IAT_OFFSET: a token for admin signed with the key, as loomctl
# would, but with any iat and exp.
sign() {
    python3 - "$T/state/token.key" "$1" "$2" <<'EOF'
import base64, hashlib, hmac, json, sys, time
key = open(sys.argv[1], "rb").read()
iat = int(time.time()) + int(sys.argv[3])
p = json.dumps({"sub": "admin", "roles": ["admin"], "iat": iat,
                "exp": iat + int(sys.argv[2])}, separators=(",", ":"))
b = lambda x: base64.urlsafe_b64encode(x).rstrip(b"=").decode()
signed = "loom1." + b(p.encode())
print(signed + "." + b(hmac.new(key, signed.encode(), hashlib.sha256).digest()))
EOF
}
GOOD=$(sign 600 0)
TOKEN=$GOOD api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "a token signed here, issued now, for 600 s: 200 (the signer is right)"
TOKEN=$(sign 600 30) api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "issued 30 s ahead (within the 60 s of skew): 200"
TOKEN=$(sign 600 300) api GET /v1/jobs >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.code)" 401/unauthenticated "issued 300 s in the future: 401"
t_like "$(jget "$BODY" .error.message)" 'issued in the future' "... saying so"
TOKEN=$(sign 90000 0) api GET /v1/jobs >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.code)" 401/unauthenticated \
    "a lifetime of 90000 s over max_token_ttl_s 86400: 401"
t_like "$(jget "$BODY" .error.message)" 'exceeds max_token_ttl_s 86400' "... saying so"

# ---- idle and trickling connections from one address ------------------------
python3 - "$PORT" "$TOKEN" >"$T/load.out" 2>&1 <<'EOF'
import socket, sys, threading, time
port, token = int(sys.argv[1]), sys.argv[2]
idle, slow, born = [], [], []
# the trickling ones first: they are taken (the per-address limit refuses
# most of the idle ones), so only the deadline can end them
req = b"GET /v1/clusters HTTP/1.1\r\nHost: x\r\n"
for i in range(5):
    s = socket.socket()
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    slow.append(s)
    born.append(time.time())
time.sleep(0.2)
for i in range(1030):
    try:
        s = socket.socket()
        s.settimeout(2)
        s.connect(("127.0.0.1", port))
        idle.append(s)
    except OSError:
        pass
print("idle connections attempted: 1030, connected:", len(idle))
stop = time.time() + 8
cut = [None] * 5
def trickle(k):
    s, t0, n = slow[k], born[k], 0
    while time.time() < stop:
        try:
            s.send(req[n % len(req):n % len(req) + 1])
            n += 1
            s.settimeout(1)
            if s.recv(1) == b"":
                cut[k] = time.time() - t0
                return
        except socket.timeout:
            continue
        except OSError:
            cut[k] = time.time() - t0
            return
threads = [threading.Thread(target=trickle, args=(k,)) for k in range(5)]
for t in threads:
    t.start()
# the other client: its own address, one request after another
lat, failed = [], 0
t_end = time.time() + 6
while time.time() < t_end:
    t0 = time.time()
    try:
        c = socket.socket()
        c.settimeout(5)
        c.bind(("127.0.0.2", 0))
        c.connect(("127.0.0.1", port))
        c.sendall(("GET /v1/clusters HTTP/1.1\r\nHost: x\r\nAuthorization: "
                   "Bearer %s\r\nConnection: close\r\n\r\n" % token).encode())
        out = b""
        while True:
            b = c.recv(65536)
            if not b:
                break
            out += b
        c.close()
        if not out.startswith(b"HTTP/1.1 200"):
            failed += 1
        lat.append((time.time() - t0) * 1000)
    except OSError:
        failed += 1
    time.sleep(0.01)
for t in threads:
    t.join()
lat.sort()
p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat else -1
print("requests: %d, failed: %d, p50: %.1f ms, p99: %.1f ms, max: %.1f ms"
      % (len(lat), failed, lat[len(lat) // 2] if lat else -1, p99,
         lat[-1] if lat else -1))
print("slow connections cut after (s):",
      " ".join("%.1f" % c if c is not None else "never" for c in cut))
print("RESULT %d %d %.1f %d" % (len(lat), failed, p99,
                                sum(1 for c in cut
                                    if c is not None and 2 <= c < 7)))
for s in idle + slow:
    s.close()
EOF
t_diag "$(cat "$T/load.out")"
read -r _ NREQ NFAIL P99 NCUT < <(grep '^RESULT' "$T/load.out")
t_ok "$([ "${NREQ:-0}" -ge 20 ] && echo 0 || echo 1)" \
    "the other address's client made its requests (${NREQ:-0})"
t_is "${NFAIL:-x}" 0 "... every one answered 200"
t_ok "$(python3 -c "import sys; print(0 if 0 <= float(sys.argv[1]) < 50 else 1)" "${P99:--1}")" \
    "... p99 ${P99:-?} ms < 50 ms while one address holds 1,030 idle and 5 trickling connections"
t_is "${NCUT:-x}" 5 \
    "the five trickling connections are cut off after 2 to 7 s (request_timeout_s 3)"
t_like "$(grep -c 'cut off' "$T/loomd.log")" '^[1-9]' "... and the log says so"
TOKEN=$GOOD api GET /healthz >/dev/null
t_is "$STATUS" 200 "loomd serves on afterwards"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
