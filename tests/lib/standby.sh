# standby.sh - more loomd on the test's database and state_dir: the
# active one and its standbys (the 11xx tests).
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh, once loomd_conf has written $T/loom.conf. The
# loomd of loomd_start is "a" ($LOOMD_PID, $LOOM_URL, $T/loomd.log); the
# others have a name of their own:
#
# peer_start NAME      write $T/loom-NAME.conf ($T/loom.conf on a port of
#                      its own; 0600, loomd's account's), start loomd -f
#                      on it as loomd_start does (it becomes that account),
#                      logging to $T/loomd-NAME.log; wait up to 60 s for
#                      /healthz.
#                      Sets PEER_PID[NAME] and PEER_URL[NAME]. 0 or 1.
# peer_stop NAME       SIGTERM, wait (30 s, then SIGKILL); loomd's status.
# peer_kill9 NAME      SIGKILL.
# role URL             the role /healthz of the loomd at URL shows ("" when
#                      it does not answer); ACTIVE_ID and ACTIVE_URL are
#                      the active loomd it names ("" for none).
# wait_role URL ROLE [SECS]  wait (default 60 s) until role URL is ROLE.
# now_s                wall clock, seconds with fraction.
#
# A failed test shows the end of every peer's log too.

declare -gA PEER_PID PEER_URL

peer_start() {
    local name=$1 port end=$((SECONDS + 60))
    port=$(free_port) || return 1
    (umask 077 &&
        sed "s|^listen = .*|listen = 127.0.0.1:$port|" "$T/loom.conf" \
            >"$T/loom-$name.conf" && : >>"$T/loomd-$name.log") || return 1
    loom_owns "$T/loom-$name.conf" || return 1
    PEER_URL[$name]=http://127.0.0.1:$port
    LOOM_LIBEXECDIR=$LOOM_TOP_BUILDDIR \
        LOOM_SCRIPTS_DIR=${LOOM_SCRIPTS_DIR:-$LOOM_TOP_SRCDIR/adaptors/scripts} \
        "$LOOM_TOP_BUILDDIR/loomd" -c "$T/loom-$name.conf" -f \
        </dev/null >>"$T/loomd-$name.log" 2>&1 &
    PEER_PID[$name]=$!
    while ((SECONDS < end)); do
        curl -sf -o /dev/null --max-time 1 "${PEER_URL[$name]}/healthz" &&
            return 0
        if ! alive "${PEER_PID[$name]}"; then
            wait "${PEER_PID[$name]}"
            t_diag "loomd $name exited with status $? before it answered" \
                "/healthz:" "$(tail -n 30 "$T/loomd-$name.log")"
            PEER_PID[$name]=
            return 1
        fi
        sleep 0.1
    done
    t_diag "loomd $name did not answer /healthz within 60 s:" \
        "$(tail -n 30 "$T/loomd-$name.log")"
    return 1
}

peer_stop() {
    local pid=${PEER_PID[$1]} i rc
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 300; i++)); do
        alive "$pid" || break
        sleep 0.1
    done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    PEER_PID[$1]=
    return "$rc"
}

peer_kill9() {
    local pid=${PEER_PID[$1]}
    [ -n "$pid" ] || return 0
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    PEER_PID[$1]=
}

role() {
    local h
    ACTIVE_ID=
    ACTIVE_URL=
    h=$(curl -s --max-time 2 "$1/healthz") || { echo; return 0; }
    read -r ROLE ACTIVE_ID ACTIVE_URL < <(printf '%s' "$h" | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("- - -"); sys.exit(0)
a = d.get("active") or {}
print(d.get("role", "-"), a.get("identity") or "-", a.get("url") or "-")')
    [ "$ACTIVE_ID" = - ] && ACTIVE_ID=
    [ "$ACTIVE_URL" = - ] && ACTIVE_URL=
    echo "$ROLE"
}

wait_role() {
    local wr_url=$1 wr_role=$2
    wait_for '[ "$(role "$wr_url")" = "$wr_role" ]' "${3:-60}" 0.05
}

now_s() {
    echo "${EPOCHREALTIME/,/.}"
}

peer_cleanup() {
    local name
    for name in "${!PEER_PID[@]}"; do
        if [ "$T_FAILED" != 0 ] && [ -s "$T/loomd-$name.log" ]; then
            t_diag "last lines of loomd $name's log:" \
                "$(tail -n 40 "$T/loomd-$name.log")"
        fi
        [ -n "${PEER_PID[$name]}" ] && alive "${PEER_PID[$name]}" &&
            kill -TERM "${PEER_PID[$name]}" 2>/dev/null &&
            { wait_dead "${PEER_PID[$name]}" 100 ||
                kill -KILL "${PEER_PID[$name]}" 2>/dev/null; }
    done
    return 0
}
t_cleanup peer_cleanup
