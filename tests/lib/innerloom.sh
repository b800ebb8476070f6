# innerloom.sh - a second loomd (B, the inner one) with a database and
# state of its own, for the tests of the loom adaptor (30xx) and
# tests/bench/table2.sh: the loomd of loomd_start (A) federates one of its
# clusters.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh, once pg_start ran:
#
# inner_conf [LINE...] write $T/b/loom.conf (0600, loomd's account's) for a
#                      free port, database loomb (made on the test's
#                      PostgreSQL), state $T/b/state, accounts $T/b/accounts
#                      (the test writes it), each LINE more of [loomd]; the
#                      cluster sections on stdin. Sets B_URL.
# inner_start          start loomd -f on it (it becomes loomd's account),
#                      logging to $T/b/loomd.log; wait up to 60 s for
#                      /healthz. Sets B_PID and, the first time, B_ADMIN
#                      (an admin token of B's). 0 or 1.
# inner_stop           SIGTERM and wait (10 s, then SIGKILL); registered
#                      with t_cleanup.
# inner_kill9          SIGKILL, and wait.
# bctl ARGS            loomctl on B's configuration.
# bapi ARGS            api on B, as B_ADMIN.
# inner_tokens ACCOUNT...  A's tokens of B: $T/a-control.token (subject
#                      loomd-a, roles operator and scheduler) and, in
#                      $T/a-tokens (0700), a user token for each ACCOUNT
#                      (subject ACCOUNT, or SUBJECT for ACCOUNT=SUBJECT),
#                      all loomd's account's. Sets A_TOKENS (the dir).
#
# A failed test shows the end of B's log too.

BD=$T/b
B_PID=
B_URL=
B_ADMIN=

inner_conf() {
    local port
    port=$(free_port) || return 1
    B_URL=http://127.0.0.1:$port
    mkdir -p "$BD/state" && chmod 0700 "$BD/state" || return 1
    loom_owns "$BD/state" || return 1
    "$PG_BIN/createdb" -h "$LOOM_PG_DIR" -U postgres loomb \
        >"$T/createdb-b.log" 2>&1 || {
        t_diag "createdb loomb failed:" "$(cat "$T/createdb-b.log")"
        return 1
    }
    (
        umask 077
        {
            echo "[loomd]"
            echo "listen = 127.0.0.1:$port"
            echo "database = host=$LOOM_PG_DIR dbname=loomb user=postgres"
            echo "token_key_file = $BD/state/token.key"
            echo "state_dir = $BD/state"
            echo "accounts_file = $BD/accounts"
            [ $# -eq 0 ] || printf '%s\n' "$@"
            echo
            cat
        } >"$BD/loom.conf"
    ) || return 1
    loom_owns "$BD/loom.conf"
}

inner_start() {
    (umask 077 && : >>"$BD/loomd.log")
    LOOM_LIBEXECDIR=$LOOM_TOP_BUILDDIR \
        LOOM_SCRIPTS_DIR=${LOOM_SCRIPTS_DIR:-$LOOM_TOP_SRCDIR/adaptors/scripts} \
        "$LOOM_TOP_BUILDDIR/loomd" -c "$BD/loom.conf" -f </dev/null \
        >>"$BD/loomd.log" 2>&1 &
    B_PID=$!
    if ! wait_for "curl -sf -o /dev/null --max-time 1 $B_URL/healthz" 60; then
        t_diag "loomd B did not answer /healthz:" \
            "$(tail -n 30 "$BD/loomd.log")"
        return 1
    fi
    [ -n "$B_ADMIN" ] ||
        B_ADMIN=$(bctl token create --subject admin --role admin --ttl 3600)
}

inner_stop() {
    if [ "$T_FAILED" != 0 ] && [ -s "$BD/loomd.log" ]; then
        t_diag "last lines of loomd B's log:" "$(tail -n 40 "$BD/loomd.log")"
    fi
    [ -n "$B_PID" ] && alive "$B_PID" || return 0
    kill -TERM "$B_PID"
    wait_dead "$B_PID" 100 || kill -KILL "$B_PID"
}
t_cleanup inner_stop

inner_kill9() {
    kill -KILL "$B_PID" 2>/dev/null
    wait "$B_PID" 2>/dev/null
}

bctl() { "$LOOM_TOP_BUILDDIR/loomctl" -c "$BD/loom.conf" "$@"; }
bapi() { LOOM_URL=$B_URL TOKEN=$B_ADMIN api "$@"; }

inner_tokens() {
    local a
    A_TOKENS=$T/a-tokens
    mkdir -p -m 0700 "$A_TOKENS" || return 1
    (
        umask 077
        bctl token create --subject loomd-a --role operator \
            --role scheduler --ttl 3600 >"$T/a-control.token" || exit 1
        for a in "$@"; do
            bctl token create --subject "${a#*=}" --role user --ttl 3600 \
                >"$A_TOKENS/${a%%=*}" || exit 1
        done
    ) || return 1
    loom_owns "$A_TOKENS" "$T/a-control.token"
}
