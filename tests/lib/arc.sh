# arc.sh - an unmodified ARC-CE (A-REX 6.17, Debian's nordugrid-arc
# packages) and its client, private to one test.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh (bash, as root):
#   arc_available || t_bail "no ARC-CE: $ARC_WHY"
#   arc_setup || t_bail "..."
#   arc_conf ACCOUNT QUEUE LRMS_LINES...
#   arc_start [VAR=VALUE...] || t_bail "A-REX did not start"
#
# arc_available  0 when the A-REX and client programs are installed and we
#                are root; else 1, ARC_WHY says why. Tests fail on it,
#                they never skip: ./bootstrap check installs the packages.
# arc_setup      in $ARC_DIR ($T/arc): A-REX's control, session, log,
#                pid and tmp directories, a test CA of its own (arcctl
#                test-ca --ca-dir), a host certificate for localhost and a
#                user certificate (its DN in ARC_DN), a free port ARC_PORT.
# arc_conf ACCOUNT QUEUE LINES...  $ARC_DIR/arc.conf: the user's DN is
#                allowed and mapped to the Unix ACCOUNT; A-REX's
#                directories are $ARC_DIR's, its web service is on
#                https://localhost:$ARC_PORT/arex; the [lrms] block is made
#                of LINES (one "key = value" each), and there is one
#                queue, QUEUE. Nothing outside $T: no /etc/arc.conf, no
#                /etc/grid-security (arcctl's cache of the configuration
#                it parsed, /run/arc/arcctl.runtime.conf, is put back as it
#                was).
# arc_start [VAR=VALUE...]  A-REX as Debian starts it, without systemd:
#                arc-arex-start (job management, the back-end scripts, the
#                info provider) and arc-arex-ws-start (the web service),
#                each `-f` in a session of its own, with an environment
#                of PATH, ARC_CONFIG and the VAR=VALUE given, as a service
#                has (they pass it to the back-end scripts); waits until
#                the web service listens and the info provider has written
#                info.xml anew (its first run, some seconds after start;
#                180 s at most). Registers arc_stop with t_cleanup.
# arc_stop       SIGTERM to both arched (A-REX waits for its running
#                back-end scripts: up to 60 s), then SIGKILL to what is
#                left of their sessions: every process started there.
# arc CMD ARGS   an ARC client command (arcproxy, arcsub, arcstat, arcget,
#                arckill) with the test user's credentials, its proxy, the
#                test CA, in and with $ARC_DIR/client as HOME (the test
#                keeps its job list there, jobs.dat, with -j).
# arc_state JOBURL  the job's state as arcstat prints it ("Finished"), ""
#                when it has none. arcstat reads what the info provider
#                published: it follows the job a minute or so late.
# arc_local JOBURL  the LRMS id A-REX recorded for the job (localid in its
#                control directory), "" until it has one.

ARC_DIR=$T/arc
ARC_PORT=
ARC_DN=
ARC_WHY=
ARC_PIDS=()
ARC_SHARE=/usr/share/arc

arc_available() {
    local b
    ARC_WHY=
    for b in /usr/sbin/arched "$ARC_SHARE/arc-arex-start" \
        "$ARC_SHARE/arc-arex-ws-start" "$ARC_SHARE/submit-SLURM-job" \
        /usr/sbin/arcctl /usr/bin/arcproxy /usr/bin/arcsub /usr/bin/arcstat \
        /usr/bin/arcget /usr/bin/arckill /usr/bin/openssl; do
        [ -x "$b" ] && continue
        ARC_WHY="$b missing (apt-get install nordugrid-arc-arex nordugrid-arc-client openssl; ./bootstrap check does it)"
        break
    done
    [ -z "$ARC_WHY" ] && [ "$(id -u)" != 0 ] &&
        ARC_WHY="A-REX needs root (it runs each job's scripts as its mapped account)"
    [ -z "$ARC_WHY" ] && return 0
    echo "arc.sh: $ARC_WHY" >&2
    return 1
}

# arcctl caches the configuration it parsed in /run/arc, whichever file
# -c names (then ours, /dev/null): the machine's own is put back.
ARC_RUNCONF=/run/arc/arcctl.runtime.conf

# arc_ca: the test CA, the host's and the user's certificates.
arc_ca() {
    local d=$ARC_DIR ca=(arcctl -c /dev/null test-ca --ca-dir "$ARC_DIR/certs")
    local rc=0 had=0
    [ -e "$ARC_RUNCONF" ] && cp -p "$ARC_RUNCONF" "$d/arcctl.runtime.conf.saved" &&
        had=1
    (cd "$d" && "${ca[@]}" init && "${ca[@]}" hostcert -n localhost &&
        "${ca[@]}" usercert -n "Loom Test" --no-auth) >"$d/log/testca.out" 2>&1 ||
        rc=1
    if [ "$had" = 1 ]; then
        cp -p "$d/arcctl.runtime.conf.saved" "$ARC_RUNCONF"
    else
        rm -f "$ARC_RUNCONF"
    fi
    if [ "$rc" != 0 ]; then
        t_diag "arc.sh: arcctl test-ca failed:" "$(cat "$d/log/testca.out")"
        return 1
    fi
    ARC_DN=$(openssl x509 -in "$d/client-Loom-Test-cert.pem" -noout -subject \
        -nameopt compat) || return 1
    ARC_DN=${ARC_DN#subject=}
    printf '"%s"\n' "$ARC_DN" >"$d/allowed-subjects"
    # The web service makes 4096-bit DH parameters in the background when
    # there are none (minutes of CPU, a process left behind): RFC 7919's.
    openssl genpkey -genparam -algorithm DH -pkeyopt dh_param:ffdhe2048 \
        -out "$d/control/dhparam.pem" 2>>"$d/log/testca.out"
}

arc_setup() {
    local d=$ARC_DIR
    mkdir -p "$d"/{certs,control,session,log,run,client} || return 1
    mkdir -m 1777 "$d/tmp" || return 1 # A-REX insists on a sticky tmpdir
    ARC_PORT=$(free_port) || return 1
    arc_ca
}

arc_conf() {
    local acct=$1 queue=$2 d=$ARC_DIR
    shift 2
    {
        cat <<EOF
# written by tests/lib/arc.sh
[common]
hostname = localhost
x509_host_key = $d/host-localhost-key.pem
x509_host_cert = $d/host-localhost-cert.pem
x509_cert_dir = $d/certs

[authgroup:loomtest]
file = $d/allowed-subjects

[mapping]
map_to_user = loomtest $acct:$acct

[lrms]
EOF
        printf '%s\n' "$@"
        cat <<EOF

[arex]
loglevel = 4
logfile = $d/log/arex.log
joblog = $d/log/arex-jobs.log
helperlog = $d/log/job.helper.errors
controldir = $d/control
sessiondir = $d/session
pidfile = $d/run/arched-arex.pid
tmpdir = $d/tmp
wakeupperiod = 5

[arex/ws]
wsurl = https://localhost:$ARC_PORT/arex
logfile = $d/log/ws-interface.log
pidfile = $d/run/arched-arex-ws.pid

[arex/ws/jobs]
allowaccess = loomtest

[infosys]
logfile = $d/log/infoprovider.log

[infosys/glue2]

[infosys/cluster]

[queue:$queue]
EOF
    } >"$d/arc.conf"
}

# arc_bg NAME SCRIPT VAR=VALUE...: start one arched in a session of its
# own (setsid execs in place: its PID is the session's).
arc_bg() {
    local name=$1 script=$2
    shift 2
    (cd / && exec setsid env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        ARC_CONFIG="$ARC_DIR/arc.conf" "$@" \
        "$script" -f </dev/null >>"$ARC_DIR/log/$name.out" 2>&1) &
    ARC_PIDS+=("$!")
    disown $!
}

arc_listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$ARC_PORT") 2>/dev/null
}

arc_start() {
    local p
    if [ -z "${ARC_CLEANUP_SET:-}" ]; then
        t_cleanup arc_stop
        ARC_CLEANUP_SET=1
    fi
    rm -f "$ARC_DIR/control/info.xml" # an earlier start's
    arc_bg arex "$ARC_SHARE/arc-arex-start" "$@"
    arc_bg arex-ws "$ARC_SHARE/arc-arex-ws-start" "$@"
    if ! wait_for 'arc_listening && [ -s "$ARC_DIR/control/info.xml" ]' 180 1; then
        for p in "${ARC_PIDS[@]}"; do
            alive "$p" || t_diag "arc.sh: arched $p exited"
        done
        t_diag "arc.sh: A-REX not ready in 180 s:" \
            "$(tail -n 8 "$ARC_DIR"/log/*.out "$ARC_DIR/log/arex.log" 2>&1)"
        return 1
    fi
}

# arc_session_pids PID...: the processes of those sessions.
arc_session_pids() {
    local s
    for s in "$@"; do
        ps -e -o pid=,sid= | awk -v s="$s" '$2 == s { print $1 }'
    done
}

arc_stop() {
    local p left
    [ ${#ARC_PIDS[@]} -gt 0 ] || return 0
    for p in "${ARC_PIDS[@]}"; do
        alive "$p" && kill -TERM "$p" 2>/dev/null
    done
    for p in "${ARC_PIDS[@]}"; do
        wait_dead "$p" 600 || t_diag "arc.sh: arched $p ignored SIGTERM for 60 s"
    done
    left=$(arc_session_pids "${ARC_PIDS[@]}")
    if [ -n "$left" ]; then
        echo "# arc.sh: killing what is left of A-REX's sessions:" $left >&2
        kill -KILL $left 2>/dev/null
    fi
    ARC_PIDS=()
}

arc() {
    local d=$ARC_DIR
    (cd "$d/client" && HOME=$d/client X509_USER_CERT=$d/client-Loom-Test-cert.pem \
        X509_USER_KEY=$d/client-Loom-Test-key.pem \
        X509_USER_PROXY=$d/client/proxy.pem X509_CERT_DIR=$d/certs "$@")
}

arc_state() {
    arc arcstat -j "$ARC_DIR/client/jobs.dat" "$1" 2>/dev/null |
        awk '$1 == "State:" { print $2; exit }'
}

arc_local() {
    local id=${1##*/}
    sed -n 's/^localid=//p' "$ARC_DIR/control/job.$id.local" 2>/dev/null
}
