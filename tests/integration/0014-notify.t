#!/usr/bin/env bash
# 0014-notify.t - loomd tells a service manager how it is, as systemd's
# Type=notify wants it (systemd itself does not run here): a datagram
# listener on $NOTIFY_SOCKET, a path and an abstract socket, gets
# STATUS= while it starts, READY=1 once it serves, RELOADING=1 with
# MONOTONIC_USEC= and READY=1 again around a reload (SIGHUP, and a refused
# one), STOPPING=1 on SIGTERM, and from a standby READY=1 with its role;
# loomd removes NOTIFY_SOCKET from its environment, so that no job
# inherits it. loomd runs as loom, so the path socket is loom's.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/standby.sh"

# listen ADDRESS OUT: receive datagrams on ADDRESS (a path, or @name),
# each appended to OUT followed by a line "--"; LISTENER is its PID.
listen() {
    python3 -c '
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
open(out + ".ready", "w").close()
while True:
    data = s.recv(4096).decode()
    with open(out, "a") as f:
        f.write(data + "\n--\n")
' "$1" "$2" &
    LISTENER=$!
    t_cleanup "kill $LISTENER 2>/dev/null"
    wait_for "[ -e '$2.ready' ]" 30 || return 1
    # loomd sends as its account, loom: a path socket must be its to
    # write to, as systemd's /run/systemd/notify is everyone's
    case $1 in @*) ;; *) loom_owns "$1" ;; esac
}

# notices OUT: the datagrams so far, one a line, their lines joined by ",".
notices() {
    awk '/^--$/ {print line; line = ""; next} {line = line (line ? "," : "") $0}' "$1"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf '[cluster local]' 'adaptor = local' 'nodes = 1' 'poll_s = 0.2'

# ---- a socket at a path ------------------------------------------------------
listen "$T/notify.sock" "$T/notices"
NOTIFY_SOCKET=$T/notify.sock loomd_start || t_bail "loomd did not start"
wait_for "notices '$T/notices' | grep -q '^READY=1'" 30
t_ok $? "READY=1 once loomd serves"
t_like "$(notices "$T/notices" | head -n 1)" '^STATUS=starting' \
    "STATUS= while it starts, before READY=1"
t_like "$(notices "$T/notices" | grep '^READY=1')" \
    "^READY=1,STATUS=serving the API on 127.0.0.1:$PORT \(active\)\$" \
    "READY=1 with STATUS= saying where it serves, and as what"

admin_token || t_bail "no admin token"
submit '{"name": "env", "command": ["/usr/bin/env"], "request": {"cluster": "local"}}'
wait_for '[ "$(job_state "$JOB")" = completed ]' 30
api GET "/v1/jobs/$JOB/output" >/dev/null
t_like "$(jget "$BODY" .data)" 'LOOM_JOB_ID=' "a job's environment is shown"
t_is "$(jget "$BODY" .data | grep -c '^NOTIFY_SOCKET=')" 0 "... without NOTIFY_SOCKET"
t_is "$(jget "$BODY" .data | grep -x "USER=$T_USER")" "USER=$T_USER" \
    "... of a job that ran as $T_USER, the admin's account"

n=$(notices "$T/notices" | wc -l)
kill -HUP "$LOOMD_PID"
wait_for "[ \$(notices '$T/notices' | wc -l) -ge $((n + 2)) ]" 30
t_like "$(notices "$T/notices" | sed -n "$((n + 1))p")" '^RELOADING=1,MONOTONIC_USEC=[1-9][0-9]*$' \
    "SIGHUP: RELOADING=1 with MONOTONIC_USEC="
t_is "$(notices "$T/notices" | sed -n "$((n + 2))p")" "READY=1,STATUS=serving; configuration reloaded" \
    "... then READY=1 once reloaded"

n=$(notices "$T/notices" | wc -l)
echo 'bogus = 1' >>"$T/loom.conf"
kill -HUP "$LOOMD_PID"
wait_for "[ \$(notices '$T/notices' | wc -l) -ge $((n + 2)) ]" 30
t_like "$(notices "$T/notices" | sed -n "$((n + 2))p")" "^READY=1,STATUS=serving; reload refused: .*unknown key 'bogus'" \
    "a refused reload: READY=1 again, STATUS= saying why"
sed -i '/^bogus = 1$/d' "$T/loom.conf"

n=$(notices "$T/notices" | wc -l)
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_like "$(notices "$T/notices" | sed -n "$((n + 1))p")" '^STOPPING=1,STATUS=stopping' \
    "SIGTERM: STOPPING=1"

# ---- an abstract socket -------------------------------------------------------
kill "$LISTENER" 2>/dev/null
listen "@loom-test-${T##*.}" "$T/notices2"
NOTIFY_SOCKET="@loom-test-${T##*.}" loomd_start || t_bail "loomd did not start again"
wait_for "notices '$T/notices2' | grep -q '^READY=1'" 30
t_ok $? "an abstract socket (@name): READY=1"

# ---- a standby ------------------------------------------------------------------
# a second loomd on the same database stands by: it is ready too, and says
# as what
A_LISTENER=$LISTENER
listen "@loom-test-b-${T##*.}" "$T/notices-b"
NOTIFY_SOCKET="@loom-test-b-${T##*.}" peer_start b || t_bail "loomd b did not start"
wait_for "notices '$T/notices-b' | grep -q '^READY=1'" 30
t_like "$(notices "$T/notices-b" | grep '^READY=1')" \
    "^READY=1,STATUS=serving the API on 127.0.0.1:[0-9]+ \(standby\)\$" \
    "a standby: READY=1, STATUS= saying it stands by"
peer_stop b
t_is $? 0 "the standby stops with status 0"
t_like "$(notices "$T/notices-b" | tail -n 1)" '^STOPPING=1' "... and STOPPING=1"
kill "$LISTENER" 2>/dev/null
LISTENER=$A_LISTENER

loomd_stop
t_like "$(notices "$T/notices2" | tail -n 1)" '^STOPPING=1' "... and STOPPING=1"

# ---- a NOTIFY_SOCKET that is neither ------------------------------------------
NOTIFY_SOCKET=relative/path loomd_start || t_bail "loomd did not start a third time"
t_like "$(grep 'NOTIFY_SOCKET' "$T/loomd.log" | tail -n 1)" \
    "NOTIFY_SOCKET 'relative/path' is neither an absolute path nor @name" \
    "a relative NOTIFY_SOCKET is named in the log, and loomd serves all the same"
loomd_stop
t_done
