#!/usr/bin/env bash
# 1001-store.t - the PostgreSQL store against a real private server: migrate,
# group insert, idempotency conflicts, update, load, events, and a restart of
# PostgreSQL under an open store.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

CHECK=${STORE_CHECK:-$LOOM_TOP_BUILDDIR/tests/integration/store_check}
[ -x "$CHECK" ] || t_bail "$CHECK is not built"
pg_start || t_bail "PostgreSQL did not start"

# store_check keeps one store (one connection) for the whole run; it prints
# TAP points for each command and then "# ready". The test points are all
# its own: this script only relays them and acts on PostgreSQL in between.
coproc SC { exec "$CHECK" -; }
SC_PID_SAVED=$SC_PID
t_cleanup 'kill "$SC_PID_SAVED" 2>/dev/null'

send() {
    local line
    echo "$1" >&"${SC[1]}" || t_bail "store_check is gone (before '$1')"
    while IFS= read -r -t 120 line <&"${SC[0]}"; do
        echo "$line"
        [ "$line" = "# ready" ] && return 0
        case $line in "Bail out!"*) exit 1 ;; esac
    done
    t_bail "store_check did not finish '$1'"
}

send open-bad
send migrate
send insert
send conflict
send update
send load
send event
pg_kill || t_diag "pg_kill: the server took long to die"
send expect-down
pg_restart_same || t_bail "PostgreSQL did not start again"
send expect-up
# A clean restart while the store is idle (the reset interval, 1 s, has
# passed): the server's goodbye is noticed before the next statement is
# sent, so that statement already runs on a new connection.
pg_stop || t_bail "PostgreSQL did not stop"
sleep 1.1
pg_restart_same || t_bail "PostgreSQL did not start again"
send first-call-ok
[ -n "${LOOM_STORE_BENCH:-}" ] && send "bench $LOOM_STORE_BENCH"

# "done": store_check prints the plan and exits with its verdict.
echo done >&"${SC[1]}"
while IFS= read -r line <&"${SC[0]}"; do
    echo "$line"
done
wait "$SC_PID_SAVED"
exit $?
