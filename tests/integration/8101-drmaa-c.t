#!/usr/bin/env bash
# 8101-drmaa-c.t - libdrmaa against a real loomd on the local cluster, from
# C (tests/integration/drmaa_check.c): every function of the binding, the
# attributes and the native specification as Loom's request, the paths
# (a job's files where drmaa_wd and the output and error paths say, the
# account's), states,
# control, wait and synchronize, bulk jobs, errors, threads, and a submit
# whose answer is lost (through tests/fixtures/drmaa/lossy_proxy.py).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

CHECK=$LOOM_TOP_BUILDDIR/tests/integration/drmaa_check
LIB=$LOOM_TOP_BUILDDIR/grid/drmaa/.libs/libdrmaa.so.1
[ -x "$CHECK" ] || t_bail "$CHECK is not built"
[ -f "$LIB" ] || t_bail "$LIB is not built"

# ---- the library exports the binding and nothing else -------------------------
WANT=$(sed -n 's/^ *\(drmaa_[A-Za-z_]*\);$/\1/p' \
    "$LOOM_TOP_SRCDIR/grid/drmaa/libdrmaa.map" | LC_ALL=C sort)
GOT=$(nm -D --defined-only "$LIB" | awk '{print $3}' | LC_ALL=C sort)
t_is "$(wc -l <<<"$WANT")" 36 "the version script names the 36 functions"
t_is "$GOT" "$WANT" "libdrmaa.so.1 exports exactly those"
t_is "$(objdump -p "$LIB" | awk '/SONAME/{print $2}')" libdrmaa.so.1 \
    "its soname is libdrmaa.so.1"
GOT=$(sed -n 's/^[a-z].* \**\(drmaa_[A-Za-z_]*\)(.*/\1/p' \
    "$LOOM_TOP_SRCDIR/grid/drmaa/drmaa.h" | LC_ALL=C sort)
t_is "$GOT" "$WANT" "drmaa.h declares the same functions"

# ---- a loomd with a local cluster ----------------------------------------------
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 2
cpus_per_node = 2
memory_mb = 1024
gpus = 1
features = ssd,fast
poll_s = 0.2
EOF2
# the users' jobs run as the test's account, $T_USER (no privilege)
for u in drmaa-user; do map_account "$u" "$T_USER"; done
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"
(umask 077 && token_for drmaa-user user >"$T/user.token" &&
    token_for reader reader >"$T/reader.token") || t_bail "no tokens"

PROXY_PORT=$(free_port)
coproc PROXY { exec python3 "$LOOM_TOP_SRCDIR/tests/fixtures/drmaa/lossy_proxy.py" \
    "$PROXY_PORT" "$LOOM_URL" 2>&1; }
PROXY_PID_SAVED=$PROXY_PID
t_cleanup 'kill "$PROXY_PID_SAVED" 2>/dev/null'
read -r -t 15 line <&"${PROXY[0]}"
[ "$line" = ready ] || t_bail "the proxy did not start: $line"

# ---- drmaa_check: its test points, relayed ------------------------------------------
mkdir -p "$T/scratch"
# a working directory of the jobs' account, with a directory for errors
install -d -m 0755 -o "$T_USER" -g "$T_USER" "$T/wd" "$T/wd/errs" ||
    t_bail "cannot make $T/wd"
LOOM_TOKEN_FILE=$T/user.token DRMAA_CHECK_ADMIN=$TOKEN \
    DRMAA_CHECK_READER=$T/reader.token \
    DRMAA_CHECK_CLOSED=http://127.0.0.1:$(free_port) \
    DRMAA_CHECK_PROXY=http://127.0.0.1:$PROXY_PORT \
    DRMAA_CHECK_DIR=$T/scratch \
    DRMAA_CHECK_ACCOUNT=$T_USER DRMAA_CHECK_WD=$T/wd \
    "$CHECK" >"$T/check.out" 2>"$T/check.err"
RC=$?
while IFS= read -r line; do
    case $line in
    "ok "*) t_ok 0 "${line#ok * - }" ;;
    "not ok "*) t_ok 1 "${line#not ok * - }" ;;
    "1.."*) ;;
    *) echo "$line" ;;
    esac
done <"$T/check.out"
t_is "$RC" 0 "drmaa_check exits 0" || t_diag "$(tail -n 30 "$T/check.err")"
t_is "$(grep -c -E 'Sanitizer|runtime error' "$T/check.err")" 0 \
    "no sanitizer report from drmaa_check" || t_diag "$(head -n 40 "$T/check.err")"

# ---- every DRMAA submit carried an Idempotency-Key of its own -------------------
t_is "$(pg_sql "SELECT count(*) FROM jobs WHERE owner = 'drmaa-user' AND
        (idem_key IS NULL OR idem_key NOT LIKE 'drmaa-%')")" 0 \
    "every job the library submitted has a drmaa- Idempotency-Key"
t_is "$(pg_sql "SELECT count(DISTINCT idem_key) = count(*) FROM jobs
        WHERE owner = 'drmaa-user'")" t "... each one its own"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
