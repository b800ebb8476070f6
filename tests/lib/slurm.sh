# slurm.sh - a private, real Slurm (22.05, Debian's packages) for Loom's tests.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh by the tests that need Slurm:
#   . "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
#   . "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
#   slurm_available || t_bail "no Slurm: $SLURM_WHY"
#   slurm_start 4 || t_bail "Slurm did not start"
#
# slurm_available    0 when munge, Slurm and tini are installed, we are
#                    root and loomd's account exists; else 1 with the reason
#                    in SLURM_WHY (and on stderr). Tests fail on it, they
#                    never skip: CI installs the packages (./bootstrap check).
# slurm_start [N]    munged (own key and socket), slurmctld and N slurmd
#                    (n1..nN, default 4, each under `tini -s --`) in
#                    $SLURM_DIR = $T/slurm, on free random loopback ports;
#                    waits until every node is idle; exports SLURM_CONF.
#                    Registers slurm_stop with t_cleanup. 0 or 1.
#                    loomd's account ($LOOM_SERVICE_USER) is the SlurmUser:
#                    Slurm has no AdminLevel without slurmdbd, and loomd
#                    sets node states, makes reservations, holds and
#                    suspends other users' jobs. So slurmctld runs as that
#                    account (started as root, it switches), and its state,
#                    log and run directories are that account's; slurmd
#                    stays root. The munge socket (in a directory every
#                    account may enter) serves every account.
# slurm_stop         cancels every job, stops the daemons by recorded PID,
#                    then kills strays that provably belong to $SLURM_DIR.
# slurm_kill_ctld    SIGKILL slurmctld (fault tests).
# slurm_start_ctld   start slurmctld again on the same state; waits until it
#                    answers and every node it had responds again.
# slurm_saved_after EPOCH  0 when slurmctld wrote its job state after EPOCH
#                    (seconds, with a fraction): what a kill then keeps.
# slurm_nodes_idle   0 when every node n1..nN is idle (no flags).
# slurm_pack_section [KEY=VALUE...]  print loom.conf's [cluster slurm]
#                    section for this Slurm through the bundled script pack:
#                    SLURM_CONF, poll_s 0.5 and time-outs of its calls well
#                    above the ~4 s a Slurm command takes to give up on a dead
#                    controller (the pack then asks scontrol ping and exits
#                    75). Each KEY=VALUE replaces the line of that key, or
#                    adds one (name=NAME names the cluster: slurm).
# slurm_restd_section [KEY=VALUE...]  the same through slurmrestd (adaptor
#                    slurmrest, its URL and JWT key, SLURM_CONF, poll_s 0.5).
# slurm_stop_slurmd I / slurm_start_slurmd I: stop (SIGTERM, by PID) or
#                    start again the slurmd of node nI (node failure tests).
# slurm_restd_available  0 when slurmrestd and the JWT plugin are installed;
#                    else 1 with the reason in SLURM_WHY.
# slurm_restd_start  (after slurm_start with LOOM_SLURM_JWT=1) two slurmrestd,
#                    both as $SLURM_RESTD_USER: rest_auth/local on the Unix
#                    socket $SLURM_RESTD_SOCKET and rest_auth/jwt on
#                    $SLURM_RESTD_URL (127.0.0.1, a free port); waits until
#                    both answer a ping. The JWT key is $SLURM_JWT_KEY.
#                    With LOOM_SLURM_ACCT=1 both load openapi/dbv0.0.38
#                    too (/slurmdb/v0.0.38/: slurmdbd's records).
# slurm_restd_stop / slurm_restd_kill: SIGTERM / SIGKILL both, by PID.
# slurm_jwt USER [SECS]: a token for USER from scontrol token (a string).
# slurm_acct_available  0 when slurmdbd and MariaDB are installed; else 1
#                    with the reason in SLURM_WHY.
#
# Knobs (environment): LOOM_SLURM_CPUS (2) and LOOM_SLURM_MEM (2048 MB)
# per node, LOOM_SLURM_NODE_CONF (more words for every NodeName= line, e.g.
# "Gres=gpu:2"; a gres.conf may go in $SLURM_DIR/etc via LOOM_SLURM_GRES_CONF),
# LOOM_SLURM_SLURMD_TIMEOUT (10 s: a dead slurmd is DOWN after
# about that), LOOM_SLURM_TIMEOUT (60 s to reach idle), LOOM_SLURM_CONF
# (extra slurm.conf lines, appended last: partitions, features),
# LOOM_SLURM_JWT=1 (AuthAltTypes=auth/jwt with a key of its own: needed by
# slurmrestd's JWT authentication and scontrol token), LOOM_SLURM_RESTD_USER
# (the account slurmrestd runs as, default slurm: it refuses root; with
# rest_auth/local it accepts only root and that account as peers),
# LOOM_SLURM_ACCT=1 (accounting: a private MariaDB, its data directory and
# socket in $SLURM_DIR/mysql, on a free loopback port, and slurmdbd as the
# SlurmUser, both started before slurmctld and stopped by PID with the
# rest; slurm.conf gets accounting_storage/slurmdbd and
# jobacct_gather/linux, so that sacct has every job's cpu times and
# MaxRSS; the cluster is registered with sacctmgr before slurmctld
# starts; with LOOM_SLURM_JWT=1 slurmdbd takes the JWT too, for
# slurmrestd's openapi/dbv0.0.38).
#
# Why it is built this way (see the measurements in the Slurm recipe):
# - proctrack/pgid and tini: PID 1 here reaps orphans only every ~2 s and
#   slurmstepd waits for the job's whole process group, zombies included;
#   under a child subreaper a cancelled job is gone in ~50 ms, not ~4 s.
# - batch_sched_delay=0: otherwise a job starts ~3 s after sbatch.
# - config_overrides: every node may claim CPUs and memory the host lacks.
# - MinJobAge=600: finished jobs stay visible to squeue for 10 minutes.
# - CR_Core_Memory: memory is counted (--mem, AllocMem); DefMemPerCPU=100
#   keeps a job without --mem from taking a whole node's memory.
# - Ports: slurmctld on SLURM_PORT, the slurmd of nI on SLURM_PORT+I, all on
#   127.0.0.1 (NoInAddrAny, NoCtldInAddrAny).
# - Several slurmd on one host work with distinct Port= per node although
#   Debian's build is not --enable-multiple-slurmd.

SLURM_DIR=$T/slurm
SLURM_NODES=0
SLURM_WHY=
SLURM_CTLD_PID=
SLURM_PORT=
SLURM_JWT_KEY=
SLURM_RESTD_USER=${LOOM_SLURM_RESTD_USER:-slurm}
SLURM_RESTD_SOCKET=
SLURM_RESTD_URL=
case ":$PATH:" in *:/usr/sbin:*) ;; *) PATH=$PATH:/usr/sbin ;; esac

slurm_available() {
    local b missing=
    for b in munged mungekey slurmctld slurmd sinfo squeue scontrol sbatch \
        scancel tini; do
        command -v "$b" >/dev/null 2>&1 || missing="$missing $b"
    done
    SLURM_WHY=
    if [ -n "$missing" ]; then
        SLURM_WHY="missing:$missing (apt-get install munge slurmctld slurmd slurm-client tini; ./bootstrap check does it)"
    elif [ "$(id -u)" != 0 ]; then
        SLURM_WHY="the private Slurm needs root (slurmd runs jobs as their users)"
    elif ! id -u "$LOOM_SERVICE_USER" >/dev/null 2>&1; then
        SLURM_WHY="no account $LOOM_SERVICE_USER, the SlurmUser (./bootstrap creates it)"
    fi
    [ -z "$SLURM_WHY" ] && return 0
    echo "slurm.sh: $SLURM_WHY" >&2
    return 1
}

# slurm_now_ms: wall clock in ms (bash 5's EPOCHREALTIME, no fork).
slurm_now_ms() {
    local t=${EPOCHREALTIME/[.,]/}
    echo $((t / 1000))
}

# slurm_port_free P: nothing listens on 127.0.0.1:P.
slurm_port_free() {
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# slurm_pick_ports N: SLURM_PORT (slurmctld) and SLURM_PORT+1..+N (slurmd)
# chosen at random below the ephemeral range, each one checked free.
slurm_pick_ports() {
    local n=$1 try p i ok
    for ((try = 0; try < 50; try++)); do
        p=$((20000 + RANDOM % 12000))
        ok=1
        for ((i = 0; i <= n; i++)); do
            slurm_port_free $((p + i)) || { ok=0; break; }
        done
        if [ "$ok" = 1 ]; then
            SLURM_PORT=$p
            return 0
        fi
    done
    t_diag "slurm.sh: no $((n + 1)) free consecutive ports found"
    return 1
}

# slurm_bg NAME CMD...: start a daemon that stays in the foreground, in a
# session of its own; its PID (setsid execs in place) goes to run/NAME.pid.
slurm_bg() {
    local name=$1
    shift
    (cd / && exec setsid "$@" </dev/null >>"$SLURM_DIR/log/$name.out" 2>&1) &
    echo $! >"$SLURM_DIR/run/$name.pid"
    disown $! # no "Killed" from bash when a fault test kills it
}

slurm_pid() {
    cat "$SLURM_DIR/run/$1.pid" 2>/dev/null
}

slurm_write_conf() {
    local d=$SLURM_DIR i
    cat <<EOF
# written by tests/lib/slurm.sh
ClusterName=loomtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$SLURM_PORT
SlurmdPort=$((SLURM_PORT + 1))
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
SlurmUser=$LOOM_SERVICE_USER
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/run/slurmctld.daemon-pid
SlurmdPidFile=$d/run/slurmd-%n.daemon-pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
PlugStackConfig=$d/etc/plugstack.conf
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=100
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobContainerType=job_container/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SlurmdParameters=config_overrides
ReturnToService=2
SlurmdTimeout=${LOOM_SLURM_SLURMD_TIMEOUT:-10}
MessageTimeout=5
KillWait=2
MinJobAge=600
InactiveLimit=0
SchedulerParameters=batch_sched_delay=0
EOF
    if [ "${LOOM_SLURM_ACCT:-0}" = 1 ]; then
        echo "AccountingStorageType=accounting_storage/slurmdbd"
        echo "AccountingStorageHost=localhost"
        echo "AccountingStoragePort=$((SLURM_PORT + SLURM_NODES + 1))"
        # the munge socket for slurmdbd (sacct, sacctmgr, slurmctld)
        echo "AccountingStoragePass=$d/munge/munge.socket"
        echo "JobAcctGatherType=jobacct_gather/linux"
        echo "JobAcctGatherFrequency=task=1" # MaxRSS of a job of seconds
    else
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
    fi
    if [ "${LOOM_SLURM_JWT:-0}" = 1 ]; then
        echo "AuthAltTypes=auth/jwt"
        echo "AuthAltParameters=jwt_key=$d/state/jwt.key"
    fi
    for ((i = 1; i <= SLURM_NODES; i++)); do
        echo "NodeName=n$i NodeHostname=localhost NodeAddr=127.0.0.1" \
            "Port=$((SLURM_PORT + i)) CPUs=${LOOM_SLURM_CPUS:-2}" \
            "RealMemory=${LOOM_SLURM_MEM:-2048} State=UNKNOWN" \
            ${LOOM_SLURM_NODE_CONF:-}
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    [ -z "${LOOM_SLURM_CONF:-}" ] || printf '%s\n' "$LOOM_SLURM_CONF"
}

# slurm_ctld_up: slurmctld answers a ping.
slurm_ctld_up() {
    scontrol ping 2>/dev/null | grep -q 'is UP'
}

# slurm_nodes_idle: every node n1..nN is plain idle.
slurm_nodes_idle() {
    local n
    n=$(sinfo -h -N -n "n[1-$SLURM_NODES]" -o '%N %T' 2>/dev/null |
        awk '$2 == "idle" { print $1 }' | sort -u | wc -l)
    [ "$n" -ge "$SLURM_NODES" ]
}

# slurm_wait_ctld SECS: until slurmctld answers; 1 when it died or did not.
slurm_wait_ctld() {
    local end=$(($(slurm_now_ms) + $1 * 1000))
    until slurm_ctld_up; do
        if ! alive "$SLURM_CTLD_PID" || (($(slurm_now_ms) > end)); then
            return 1
        fi
        sleep 0.05
    done
}

# slurm_launch: one attempt on the ports in SLURM_PORT. 0, 1 (a daemon
# failed: see the logs) or 2 (a port was taken meanwhile: try others).
slurm_launch() {
    local d=$SLURM_DIR i end p rc
    rm -rf "$d"
    mkdir -p "$d"/{munge,etc,state,spool,log,run}
    chmod 0755 "$d" "$d/munge" "$d/etc" "$d/log" "$d/run"
    chmod 0700 "$d/state"
    # slurmctld runs as the SlurmUser: its state, log and pid file.
    chown "$LOOM_SERVICE_USER:" "$d/state" "$d/log" "$d/run" || return 1
    export SLURM_CONF=$d/etc/slurm.conf
    slurm_write_conf >"$SLURM_CONF"
    # The JWT key: 32 random bytes, the SlurmUser's alone.
    if [ "${LOOM_SLURM_JWT:-0}" = 1 ]; then
        SLURM_JWT_KEY=$d/state/jwt.key
        (umask 077 && head -c 32 /dev/urandom >"$SLURM_JWT_KEY") || return 1
        chown "$(awk -F= '$1 == "SlurmUser" { print $2 }' "$SLURM_CONF")" \
            "$SLURM_JWT_KEY" || return 1
    fi
    : >"$d/etc/plugstack.conf" # not /etc/slurm/plugstack.conf.d
    [ -z "${LOOM_SLURM_GRES_CONF:-}" ] ||
        printf '%s\n' "$LOOM_SLURM_GRES_CONF" >"$d/etc/gres.conf"
    mungekey --create --keyfile="$d/munge/munge.key" 2>>"$d/log/mungekey.out" ||
        return 1
    chmod 0400 "$d/munge/munge.key"
    # --force: munged refuses a socket with a parent dir lacking o+x (/root).
    slurm_bg munged munged --foreground --force \
        --socket="$d/munge/munge.socket" --key-file="$d/munge/munge.key" \
        --log-file="$d/log/munged.log" --pid-file="$d/run/munged.daemon-pid" \
        --seed-file="$d/munge/munged.seed"
    for ((i = 0; i < 100; i++)); do
        [ -S "$d/munge/munge.socket" ] && break
        sleep 0.05
    done
    [ -S "$d/munge/munge.socket" ] || { t_diag "munged did not start"; return 1; }

    if [ "${LOOM_SLURM_ACCT:-0}" = 1 ]; then
        slurm_acct_launch
        rc=$?
        [ "$rc" = 0 ] || return "$rc"
    fi
    slurm_bg slurmctld slurmctld -D -f "$SLURM_CONF"
    SLURM_CTLD_PID=$(slurm_pid slurmctld)
    if ! slurm_wait_ctld 20; then
        grep -q 'Address already in use' "$d/log/slurmctld.log" 2>/dev/null &&
            return 2
        t_diag "slurmctld does not answer"
        return 1
    fi
    for ((i = 1; i <= SLURM_NODES; i++)); do
        slurm_bg "slurmd-n$i" tini -s -- slurmd -D -f "$SLURM_CONF" -N "n$i"
    done
    end=$(($(slurm_now_ms) + ${LOOM_SLURM_TIMEOUT:-60} * 1000))
    until slurm_nodes_idle; do
        for ((i = 1; i <= SLURM_NODES; i++)); do
            p=$(slurm_pid "slurmd-n$i")
            alive "$p" && continue
            grep -q 'Address already in use' "$d/log/slurmd-n$i.log" \
                "$d/log/slurmd-n$i.out" 2>/dev/null && return 2
            t_diag "slurmd of n$i exited"
            return 1
        done
        if (($(slurm_now_ms) > end)); then
            t_diag "nodes not idle after ${LOOM_SLURM_TIMEOUT:-60} s:" \
                "$(sinfo -N 2>&1)"
            return 1
        fi
        sleep 0.1
    done
}

slurm_start() {
    local try rc t0
    SLURM_NODES=${1:-4}
    t0=$(slurm_now_ms)
    slurm_available || return 1
    slurm_stop # a cluster this test started before
    if [ -z "${SLURM_CLEANUP_SET:-}" ]; then
        t_cleanup slurm_stop
        SLURM_CLEANUP_SET=1
    fi
    # Two tests may pick the same free ports at the same moment: the loser
    # sees "Address already in use", stops what it started and tries again.
    for ((try = 0; try < 3; try++)); do
        # accounting: slurmdbd and MariaDB on the two ports after the nodes'
        slurm_pick_ports $((SLURM_NODES + ${LOOM_SLURM_ACCT:-0} * 2)) ||
            return 1
        slurm_launch
        rc=$?
        [ "$rc" = 0 ] && break
        slurm_stop_daemons
        [ "$rc" = 2 ] || break
        t_diag "slurm.sh: port clash on $SLURM_PORT, trying other ports"
    done
    if [ "$rc" != 0 ]; then
        t_diag "Slurm did not start; the end of its logs:" \
            "$(tail -n 15 "$SLURM_DIR"/log/*.log 2>/dev/null)"
        return 1
    fi
    t_diag "slurm: $SLURM_NODES nodes idle after $(($(slurm_now_ms) - t0)) ms (slurmctld on 127.0.0.1:$SLURM_PORT)"
}

slurm_acct_available() {
    local b missing=
    for b in slurmdbd sacctmgr sacct mariadbd mariadb-install-db mariadb; do
        command -v "$b" >/dev/null 2>&1 || missing="$missing $b"
    done
    SLURM_WHY=
    [ -z "$missing" ] && return 0
    SLURM_WHY="missing:$missing (apt-get install slurmdbd mariadb-server; ./bootstrap check does it)"
    echo "slurm.sh: $SLURM_WHY" >&2
    return 1
}

# slurm_sql SQL: run SQL as MariaDB's root, on its socket.
slurm_sql() {
    mariadb --no-defaults -S "$SLURM_DIR/mysql/mysql.sock" -u root -e "$1"
}

# slurm_acct_launch: MariaDB, then slurmdbd (as the SlurmUser), then the
# cluster in its database; 0, 1 or 2 (a port was taken meanwhile).
slurm_acct_launch() {
    local d=$SLURM_DIR i dbd=$((SLURM_PORT + SLURM_NODES + 1))
    local my=$((SLURM_PORT + SLURM_NODES + 2)) pw
    slurm_acct_available || return 1
    mkdir -p "$d/mysql/data" && chmod 0700 "$d/mysql" || return 1
    mariadb-install-db --no-defaults --datadir="$d/mysql/data" --user=root \
        --auth-root-authentication-method=socket --skip-test-db \
        >"$d/log/mariadb-install.out" 2>&1 || {
        t_diag "mariadb-install-db failed:" \
            "$(tail -n 5 "$d/log/mariadb-install.out")"
        return 1
    }
    slurm_bg mariadbd mariadbd --no-defaults --datadir="$d/mysql/data" \
        --socket="$d/mysql/mysql.sock" --pid-file="$d/mysql/mariadbd.pid" \
        --bind-address=127.0.0.1 --port="$my" --user=root \
        --log-error="$d/log/mariadbd.log" --innodb-buffer-pool-size=16M \
        --skip-name-resolve
    for ((i = 0; i < 600; i++)); do
        slurm_sql 'SELECT 1' >/dev/null 2>&1 && break
        alive "$(slurm_pid mariadbd)" || break
        sleep 0.1
    done
    if ! slurm_sql 'SELECT 1' >/dev/null 2>&1; then
        grep -q 'Address already in use' "$d/log/mariadbd.log" 2>/dev/null &&
            return 2
        t_diag "MariaDB did not start:" "$(tail -n 5 "$d/log/mariadbd.log")"
        return 1
    fi
    pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
    slurm_sql "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$pw';
        GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" || return 1
    (
        umask 077
        cat >"$d/etc/slurmdbd.conf" <<EOF
# written by tests/lib/slurm.sh
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd
SlurmUser=$LOOM_SERVICE_USER
LogFile=$d/log/slurmdbd.log
PidFile=$d/run/slurmdbd.daemon-pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$my
StorageUser=slurm
StoragePass=$pw
StorageLoc=slurm_acct_db
EOF
        # slurmrestd's dbv0.0.38 speaks to slurmdbd with the JWT it took
        [ "${LOOM_SLURM_JWT:-0}" = 1 ] &&
            printf '%s\n' "AuthAltTypes=auth/jwt" \
                "AuthAltParameters=jwt_key=$d/state/jwt.key" \
                >>"$d/etc/slurmdbd.conf"
        true
    ) || return 1
    chown "$LOOM_SERVICE_USER:" "$d/etc/slurmdbd.conf" || return 1
    slurm_bg slurmdbd slurmdbd -D
    for ((i = 0; i < 600; i++)); do
        sacctmgr -n -P list cluster >/dev/null 2>&1 && break
        alive "$(slurm_pid slurmdbd)" || break
        sleep 0.1
    done
    if ! sacctmgr -n -P list cluster >/dev/null 2>&1; then
        grep -q 'Address already in use' "$d/log/slurmdbd.log" 2>/dev/null &&
            return 2
        t_diag "slurmdbd did not answer:" "$(tail -n 5 "$d/log/slurmdbd.log")"
        return 1
    fi
    sacctmgr -i add cluster loomtest >"$d/log/sacctmgr.out" 2>&1 || {
        t_diag "sacctmgr add cluster failed:" "$(cat "$d/log/sacctmgr.out")"
        return 1
    }
}

slurm_restd_available() {
    SLURM_WHY=
    if ! command -v slurmrestd >/dev/null 2>&1; then
        SLURM_WHY="no slurmrestd (apt-get install slurmrestd slurm-wlm-jwt-plugin; ./bootstrap check does it)"
    elif ! ls /usr/lib/*/slurm-wlm/auth_jwt.so >/dev/null 2>&1; then
        SLURM_WHY="no JWT plugin (apt-get install slurm-wlm-jwt-plugin; ./bootstrap check does it)"
    elif ! id -u "$SLURM_RESTD_USER" >/dev/null 2>&1; then
        SLURM_WHY="no account $SLURM_RESTD_USER for slurmrestd (LOOM_SLURM_RESTD_USER)"
    fi
    [ -z "$SLURM_WHY" ] && return 0
    echo "slurm.sh: $SLURM_WHY" >&2
    return 1
}

# The OpenAPI plugins slurmrestd loads: the dbv0.0.x ones are fatal
# without slurmdbd, so dbv0.0.38 (/slurmdb/v0.0.38/) only with
# LOOM_SLURM_ACCT=1.
SLURM_RESTD_PLUGINS=openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38

# slurm_restd_ping URL [CURL ARGS...]: slurmrestd answers its ping.
slurm_restd_ping() {
    local url=$1
    shift
    curl -sf -m 2 "$@" "$url/slurm/v0.0.38/ping" >/dev/null 2>&1
}

slurm_restd_start() {
    local d=$SLURM_DIR p end tok plugins
    slurm_restd_available || return 1
    [ -n "$SLURM_JWT_KEY" ] || {
        t_diag "slurm.sh: slurm_restd_start needs LOOM_SLURM_JWT=1 before slurm_start"
        return 1
    }
    # slurmrestd binds its Unix socket after it took its account.
    mkdir -p "$d/restd"
    chown "$SLURM_RESTD_USER" "$d/restd"
    chmod 0755 "$d/restd"
    SLURM_RESTD_SOCKET=$d/restd/slurmrestd.socket
    if [ -z "$SLURM_RESTD_URL" ]; then
        for ((p = SLURM_PORT + SLURM_NODES + 1; p < SLURM_PORT + SLURM_NODES + 50; p++)); do
            slurm_port_free "$p" && break
        done
        SLURM_RESTD_URL=http://127.0.0.1:$p
    fi
    rm -f "$SLURM_RESTD_SOCKET"
    plugins=$SLURM_RESTD_PLUGINS
    [ "${LOOM_SLURM_ACCT:-0}" = 1 ] && plugins=$plugins,openapi/dbv0.0.38
    slurm_bg restd-local slurmrestd -f "$SLURM_CONF" -a rest_auth/local \
        -s "$plugins" -u "$SLURM_RESTD_USER" \
        "unix:$SLURM_RESTD_SOCKET"
    slurm_bg restd-jwt env SLURM_JWT=daemon slurmrestd -f "$SLURM_CONF" \
        -a rest_auth/jwt -s "$plugins" -u "$SLURM_RESTD_USER" \
        "${SLURM_RESTD_URL#http://}"
    tok=$(slurm_jwt root 600) || return 1
    end=$(($(slurm_now_ms) + 30000))
    until slurm_restd_ping http://x --unix-socket "$SLURM_RESTD_SOCKET" &&
        slurm_restd_ping "$SLURM_RESTD_URL" -H "X-SLURM-USER-NAME: root" \
            -H "X-SLURM-USER-TOKEN: $tok"; do
        if ! alive "$(slurm_pid restd-local)" || ! alive "$(slurm_pid restd-jwt)" ||
            (($(slurm_now_ms) > end)); then
            t_diag "slurmrestd did not answer:" \
                "$(tail -n 5 "$d"/log/restd-*.out 2>/dev/null)"
            return 1
        fi
        sleep 0.05
    done
}

slurm_restd_stop() {
    local p pids=()
    for p in restd-local restd-jwt; do
        p=$(slurm_pid "$p")
        [ -n "$p" ] && pids+=("$p")
    done
    [ ${#pids[@]} -gt 0 ] && slurm_stop_pids TERM 50 "${pids[@]}"
    rm -f "$SLURM_DIR"/run/restd-*.pid
    return 0
}

slurm_restd_kill() {
    local p
    for p in restd-local restd-jwt; do
        p=$(slurm_pid "$p")
        [ -n "$p" ] && kill -KILL "$p" 2>/dev/null && wait_dead "$p" 100
    done
    rm -f "$SLURM_DIR"/run/restd-*.pid
    return 0
}

# slurm_jwt USER [SECS]: scontrol token's token for USER (lifespan SECS).
slurm_jwt() {
    local out
    out=$(scontrol token "username=$1" "lifespan=${2:-3600}" 2>&1) || {
        t_diag "slurm.sh: scontrol token: $out"
        return 1
    }
    printf '%s\n' "${out#SLURM_JWT=}"
}

slurm_start_slurmd() {
    alive "$(slurm_pid "slurmd-n$1")" && return 0
    slurm_bg "slurmd-n$1" tini -s -- slurmd -D -f "$SLURM_CONF" -N "n$1"
}

slurm_stop_slurmd() {
    local p
    p=$(slurm_pid "slurmd-n$1")
    [ -n "$p" ] && slurm_stop_pids TERM 100 "$p"
}

slurm_kill_ctld() {
    [ -n "$SLURM_CTLD_PID" ] || return 0
    kill -KILL "$SLURM_CTLD_PID" 2>/dev/null
    wait_dead "$SLURM_CTLD_PID" 100
}

# slurm_start_ctld: slurmctld again, on the state it saved (no -c).
slurm_start_ctld() {
    local end
    alive "$SLURM_CTLD_PID" && return 0
    slurm_bg slurmctld slurmctld -D -f "$SLURM_CONF"
    SLURM_CTLD_PID=$(slurm_pid slurmctld)
    slurm_wait_ctld 30 || { t_diag "slurmctld did not come back"; return 1; }
    # The nodes it recovered show "unknown" (or a '*': not responding) until
    # it pinged them, ~4 s; only nodes whose slurmd runs can answer.
    end=$(($(slurm_now_ms) + ${LOOM_SLURM_TIMEOUT:-60} * 1000))
    while slurm_nodes_unsure; do
        if (($(slurm_now_ms) > end)); then
            t_diag "nodes still not responding:" "$(sinfo -N 2>&1)"
            return 1
        fi
        sleep 0.1
    done
}

slurm_saved_after() {
    local m
    m=$(stat -c %.9Y "$SLURM_DIR/state/job_state" 2>/dev/null) || return 1
    awk -v m="$m" -v e="$1" 'BEGIN { exit !(m > e) }'
}

# conf_section DEFAULTS... -- [KEY=VALUE...]: a [cluster NAME] section of
# the default KEY=VALUE pairs, each replaced by a later pair of its key or
# added to by a new one; name=NAME names the cluster.
conf_section() {
    local name=slurm kv k i over=0
    local keys=() vals=()
    for kv in "$@"; do
        if [ "$kv" = -- ]; then
            over=1
            continue
        fi
        k=${kv%%=*}
        [ "$k" != "$kv" ] && [ -n "$k" ] || {
            echo "${FUNCNAME[1]}: '$kv' is not KEY=VALUE" >&2
            return 1
        }
        if [ "$k" = name ]; then
            name=${kv#*=}
            continue
        fi
        i=${#keys[@]}
        if ((over)); then
            for ((i = 0; i < ${#keys[@]}; i++)); do
                [ "${keys[$i]}" = "$k" ] && break
            done
        fi
        keys[$i]=$k
        vals[$i]=${kv#*=}
    done
    echo "[cluster $name]"
    for ((i = 0; i < ${#keys[@]}; i++)); do
        echo "${keys[$i]} = ${vals[$i]}"
    done
}

slurm_pack_section() {
    conf_section adaptor=script pack=slurm "env.SLURM_CONF=$SLURM_CONF" \
        poll_s=0.5 timeout.jobs=15 timeout.nodes=15 timeout.queues=15 \
        timeout.start=20 timeout.cancel=15 -- "$@"
}

slurm_restd_section() {
    conf_section adaptor=slurmrest "url=$SLURM_RESTD_URL" \
        "jwt_key_file=$SLURM_JWT_KEY" "env.SLURM_CONF=$SLURM_CONF" \
        poll_s=0.5 -- "$@"
}

# slurm_nodes_unsure: a node whose slurmd runs shows unknown or '*'.
slurm_nodes_unsure() {
    local i up=
    for ((i = 1; i <= SLURM_NODES; i++)); do
        alive "$(slurm_pid "slurmd-n$i")" && up="$up n$i "
    done
    sinfo -h -N -o '%N %T' 2>/dev/null | awk -v up="$up" '
        index(up, " " $1 " ") && ($2 ~ /[*]$/ || $2 ~ /^unknown/) { bad = 1 }
        END { exit !bad }'
}

# slurm_stop_pids SIG TENTHS PID...: signal, wait, then SIGKILL the rest.
slurm_stop_pids() {
    local sig=$1 t=$2 p i left
    shift 2
    for p in "$@"; do alive "$p" && kill "-$sig" "$p" 2>/dev/null; done
    for ((i = 0; i < t; i++)); do
        left=
        for p in "$@"; do alive "$p" && left="$left $p"; done
        [ -z "$left" ] && return 0
        sleep 0.1
    done
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
    return 0
}

# slurm_stop_daemons: the daemons we recorded, all at once (none needs
# another to shut down once the jobs are gone), then the strays.
slurm_stop_daemons() {
    local f pids=()
    for f in "$SLURM_DIR"/run/*.pid; do
        [ -e "$f" ] && pids+=("$(cat "$f")")
    done
    [ ${#pids[@]} -gt 0 ] && slurm_stop_pids TERM 100 "${pids[@]}"
    rm -f "$SLURM_DIR"/run/*.pid
    slurm_sweep
}

# slurm_sweep: kill, with their descendants, processes that provably belong
# to this cluster: one holding a file under $SLURM_DIR open (slurmstepd
# keeps its node's log open), or a job process (SLURM_JOB_ID, and our
# SLURM_CONF in its environment) that outlived its slurmstepd. Never by
# name; the test's shell and its ancestors are spared.
slurm_sweep() {
    local a p pid ppid found=
    local -A keep=() stray=() kids=()
    for a in $$ $BASHPID; do
        while [ -n "$a" ] && [ "$a" != 0 ] && [ -z "${keep[$a]:-}" ]; do
            keep[$a]=1
            a=$(awk '/^PPid:/ { print $2 }' "/proc/$a/status" 2>/dev/null)
        done
    done
    for pid in $(find /proc/[0-9]*/fd -maxdepth 1 -lname "$SLURM_DIR/*" \
        2>/dev/null | cut -d/ -f3 | sort -u) \
        $(grep -l -z -x -F "SLURM_CONF=$SLURM_DIR/etc/slurm.conf" \
            /proc/[0-9]*/environ 2>/dev/null |
            xargs -r grep -l -z '^SLURM_JOB_ID=' 2>/dev/null | cut -d/ -f3); do
        [ -n "${keep[$pid]:-}" ] || stray[$pid]=1
    done
    [ ${#stray[@]} -gt 0 ] || return 0
    while read -r pid ppid; do
        kids[$ppid]="${kids[$ppid]:-} $pid"
    done < <(ps -e -o pid=,ppid=)
    local todo=("${!stray[@]}")
    while [ ${#todo[@]} -gt 0 ]; do
        p=${todo[0]}
        todo=("${todo[@]:1}")
        for a in ${kids[$p]:-}; do
            [ -n "${stray[$a]:-}" ] || [ -n "${keep[$a]:-}" ] && continue
            stray[$a]=1
            todo+=("$a")
        done
    done
    found="${!stray[*]}"
    echo "# slurm.sh: stray processes of $SLURM_DIR: $found" >&2
    slurm_stop_pids TERM 30 $found
}

slurm_stop() {
    local jobs i
    [ -d "$SLURM_DIR/run" ] || return 0
    # Jobs first, while slurmctld and slurmd run, so slurmstepd ends them.
    if alive "$SLURM_CTLD_PID" && [ -f "${SLURM_CONF:-}" ]; then
        jobs=$(squeue -h -o %A -t PD,R,S,CG,CF 2>/dev/null | tr '\n' ' ')
        if [ -n "${jobs// /}" ]; then
            scancel $jobs 2>/dev/null
            for ((i = 0; i < 50; i++)); do
                [ -z "$(squeue -h -o %A -t PD,R,S,CG,CF 2>/dev/null)" ] && break
                sleep 0.1
            done
        fi
    fi
    slurm_stop_daemons
    SLURM_CTLD_PID=
}
