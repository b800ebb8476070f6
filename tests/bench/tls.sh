#!/usr/bin/env bash
# tls.sh - what HTTPS costs: the same loomd answers on its plain listener
# and on listen_tls (a certificate of the test's own CA, client
# certificates asked for, tokens sent), in the same run, 8 clients each:
# GET /v1/jobs/{id} on kept-alive connections, the same with a new
# connection (and so a TLS handshake) per request, and durable submits
# (POST /v1/jobs of 1 s sim jobs, as tests/bench/core.sh makes them).
# Run from an optimised build directory:
#   make bench && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/tls.sh
# Needs wrk (Debian's is built with OpenSSL) and openssl.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/pki.sh"

READ_S=${BENCH_READ_S:-10}
WRITE_S=${BENCH_WRITE_S:-20}
CLIENTS=8

command -v wrk >/dev/null || { echo "tls.sh: needs wrk" >&2; exit 1; }

ROWS=()
row() { ROWS+=("$(printf '%-50s %14s %12s %12s' "$@")"); }

# wrk_run ARGS...: run wrk, print "req/s p50_ms p99_ms non2xx errors".
wrk_run() {
    wrk --latency "$@" >"$T/wrk.out" 2>&1
    awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
                     if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    /Socket errors/ { gsub(",", ""); err = $4 + $6 + $8 + $10 }
    END { printf "%.0f %.2f %.2f %d %d\n", rps, p50, p99, bad + 0, err + 0 }' \
        "$T/wrk.out"
}

P=$T/pki
pki_make "$P" || exit 1
pg_start || exit 1
# durable commits, as core.sh measures them
printf 'fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n' \
    >>"$LOOM_PG_DIR/data/postgresql.conf"
pg_stop && pg_restart_same || exit 1
TPORT=$(free_port)
loomd_conf <<EOF
[cluster sim1000]
adaptor = sim
nodes = 1000
cpus_per_node = 32
speed = 1
EOF
sed -i "/^\[loomd\]\$/a listen_tls = 127.0.0.1:$TPORT\\
tls_cert_file = $P/server.pem\\
tls_key_file = $P/server.key\\
tls_client_ca_dir = $P/ca" "$T/loom.conf"
loomd_start || exit 1
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"
HTTPS=https://127.0.0.1:$TPORT
api POST /v1/jobs '{"command":["sleep","600"],"request":{"cluster":"sim1000"}}' >/dev/null
curl -sf --cacert "$P/root.pem" -H "$AUTH" -o /dev/null "$HTTPS/v1/jobs/1" ||
    { echo "tls.sh: GET over HTTPS failed" >&2; exit 1; }

# reads NAME BASE [WRK ARGS]: GET /v1/jobs/1 from 8 clients.
reads() {
    local rps p50 p99 bad err
    read -r rps p50 p99 bad err < <(wrk_run -t2 -c$CLIENTS -d${READ_S}s \
        -H "$AUTH" "${@:3}" "$2/v1/jobs/1")
    row "$1" "$rps req/s" "p50 $p50" "p99 $p99"
    [ "$bad$err" = 00 ] || row "  non-2xx answers / socket errors" "$bad / $err" "" ""
    R=$rps
}

# writes NAME BASE: durable submits of 1 s sim jobs from 8 clients.
writes() {
    local before after rps p50 p99 bad err
    cat >"$T/post.lua" <<'EOF'
wrk.method = "POST"
wrk.body = '{"command":["true"],"request":{"cluster":"sim1000"},"env":{"LOOM_SIM_RUNTIME_S":"1"}}'
wrk.headers["Content-Type"] = "application/json"
EOF
    before=$(pg_sql "select count(*) from jobs")
    read -r rps p50 p99 bad err < <(wrk_run -t2 -c$CLIENTS -d${WRITE_S}s \
        -H "$AUTH" -s "$T/post.lua" "$2/v1/jobs")
    after=$(pg_sql "select count(*) from jobs")
    row "$1" "$rps jobs/s" "p50 $p50" "p99 $p99"
    row "  rows committed / non-2xx / socket errors" "$((after - before))" \
        "$bad" "$err"
    R=$rps
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f %%", b ? 100 * a / b : 0 }'; }

reads "GET /v1/jobs/{id}, HTTP, kept alive" "$LOOM_URL"
r_http=$R
reads "GET /v1/jobs/{id}, HTTPS, kept alive" "$HTTPS"
r_https=$R
row "  HTTPS / HTTP" "$(ratio "$r_https" "$r_http")" "" ""
reads "GET /v1/jobs/{id}, HTTP, a connection each" "$LOOM_URL" -H "Connection: close"
c_http=$R
reads "GET /v1/jobs/{id}, HTTPS, a handshake each" "$HTTPS" -H "Connection: close"
c_https=$R
row "  HTTPS / HTTP" "$(ratio "$c_https" "$c_http")" "" ""
writes "POST /v1/jobs durable, HTTP" "$LOOM_URL"
w_http=$R
sleep 2 # the last jobs end
writes "POST /v1/jobs durable, HTTPS" "$HTTPS"
w_https=$R
row "  HTTPS / HTTP" "$(ratio "$w_https" "$w_http")" "" ""
SESSION=$(echo | OPENSSL_CONF=/dev/null timeout 10 openssl s_client \
    -connect "127.0.0.1:$TPORT" 2>/dev/null | awk '/^New,/ {print $2, $5}')
loomd_stop

echo "Loom over HTTPS and plain HTTP, same loomd, $CLIENTS clients, $(nproc) cpus"
echo "(an ECDSA P-256 certificate; openssl s_client gets: ${SESSION%,})"
printf '%s\n' "${ROWS[@]}"
