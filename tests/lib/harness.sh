# harness.sh - TAP helpers and private daemons for Loom's integration tests.
# SPDX-License-Identifier: MIT
#
# Sourced by tests/integration/*.t (bash):
#   . "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
# make check exports LOOM_TOP_SRCDIR and LOOM_TOP_BUILDDIR; run by hand, a
# test may set them itself (they default to the tree this file is in).
# LOOM_SERVICE_USER is loomd's account (loom; make check passes configure's
# --with-service-user).
#
# TAP:      t_plan N, t_ok STATUS NAME, t_is GOT WANT NAME, t_isnt GOT
#           UNWANTED NAME, t_like GOT ERE NAME, t_diag MSG, t_skip NAME
#           REASON, t_skip_all REASON, t_bail REASON, t_done.
# Skips:    a test skips only what an optional tool would check, and then
#           says so: the REASON begins "optional:" and names the tool
#           (t_skip "checkbashisms finds nothing" "optional: checkbashisms
#           is not installed"). ./bootstrap check counts any other skip as
#           a failure. A test of a real system (Slurm, Grid Engine,
#           PostgreSQL) that cannot start it fails with t_bail, saying why.
# Temp dir: $T, made per test (mktemp -d, mode 0755 so that postgres and
#           loom can traverse it); removed at exit unless LOOM_KEEP_TMP=1.
#           Jobs run as other accounts than the test's: the files they are
#           to write go into $T_OUT ($T/out, mode 1777, as /tmp).
# Postgres: pg_start, pg_stop, pg_kill, pg_kill9, pg_restart_same; LOOM_PG_DIR,
#           LOOM_PG_CONNINFO, pg_sql SQL (psql -tA, one value per line).
# loomd:    free_port, loomd_conf [SECTIONS] (or a heredoc on stdin; sets
#           PORT and LOOM_URL; local_cluster and sim_cluster NODES CPUS
#           [MB] print the usual sections), loomd_start [ARGS],
#           loomd_stop (returns loomd's exit status), loomd_kill9,
#           loomctl ARGS (with -c $T/loom.conf), admin_token (sets TOKEN),
#           token_for SUBJECT ROLE [TTL] (prints the token).
#           loomd runs as its own account, $LOOM_SERVICE_USER: started as
#           root, it switches to it. $T/loom.conf (mode 0600) and $T/state
#           (0700, the key in it) are that account's; loom_owns PATH...
#           gives it more (a directory an action writes to, a token file it
#           reads).
#           The private PostgreSQL's socket directory is postgres:loom 0750.
#           loomd_start makes the build tree's loom-runas root:loom 4750.
#           loom.conf names the accounts file $T/accounts; unless the test
#           wrote one before, loomd_conf writes it mapping admin and loomctl
#           (the subjects of admin_token and of loomctl -c) to $T_USER, an
#           account of this test run (t_account T_USER user): the jobs of a
#           test that does not care run as that unprivileged account.
#           map_account IDENTITY ACCOUNT adds a line (loomd reads the file at
#           start and on SIGHUP); accounts_default writes the default lines
#           (and makes $T_USER) into a file the test begins itself.
# Processes: alive PID (a zombie counts as dead), wait_dead PID TENTHS,
#           t_sleep SECS.
# Accounts: t_account VAR NAME makes a Unix account NAME-<6 random
#           letters and digits> for this test run (its own group, shell
#           /bin/sh, uid >= 1000, home $T/home/<account> mode 0700) and
#           sets VAR to its name; useradd is tried again while another
#           test holds /etc/passwd's lock. The clean-up kills every
#           process of the account, then removes it and its home. Jobs
#           run as such accounts: a test that runs one says as whom.
#           Tokens for them: token_for "$ALICE" user, admin_token "$ADM".
#           Call t_account in the test's shell, not in $(...): the removal
#           is registered there. account_procs NAME: the pids of NAME's
#           processes, one a line.
# HTTP:     api METHOD PATH [JSON|-] [curl args...]: prints the body and sets
#           STATUS and BODY. Call it as `api GET /v1/x >/dev/null` to keep
#           STATUS and BODY; inside $(...) they are lost with the subshell,
#           then `api_status` prints the last status; api_line LABEL
#           METHOD PATH... prints "LABEL STATUS BODY". Every answer api gets
#           is kept in $T/answers (its body, and a line of index: method,
#           path, status, Content-Type, file); t_done checks them all
#           against docs/openapi.json (tests/lib/openapi_check.js, with
#           node and the npm packages ./bootstrap check installs in
#           $LOOM_TOP_BUILDDIR/npm: without them the test fails).
# JSON:     jget JSON PATH (.items.0.state; prints strings raw, other values
#           as JSON, fails when absent), jlen JSON PATH (length), py EXPR
#           JSON (a Python expression over d, the document, which python
#           reads from stdin: a 1,000-node list is too long for an argument;
#           strings printed raw, other values as JSON). python3 is
#           /usr/bin/python3 when it exists (a pyenv shim first in PATH costs
#           ~0.2 s a call), else python3 from PATH.
# Jobs:     submit JSON [CURL ARGS] (POST /v1/jobs as $TOKEN; sets JOB to
#           the new id; "" with a diagnostic and status 1 unless 201), job ID
#           (GET /v1/jobs/ID: STATUS and BODY), field ID PATH (jget of it,
#           "" when absent), job_state ID.
# Waiting:  wait_for CMD [SECS]: eval CMD every 0.1 s until it succeeds
#           (CMD runs at least once); 1 when it did not within SECS (whole
#           seconds, default 30). A test waits for a condition, never for
#           a time: the bound is generous (30 s and more), so that a busy
#           machine is slower, not wrong. turns_pass PATH N: wait (60 s at
#           most) until the counter at PATH of GET /v1/runtime (e.g.
#           .maintenance.compares, which a polled cluster makes grow every
#           tick) has grown by N, so that a thread has done its periodic
#           work N more times: to check that something did not happen, in
#           place of a sleep.
#           polls_pass CLUSTER SECS: the same for a cluster's polls (its
#           last_poll, whole seconds, SECS later than at the call).
# Cleanup:  an EXIT trap stops, by PID, whatever the test started (loomd,
#           then PostgreSQL), even on failure or interruption; t_cleanup CMD
#           adds a command to run first; processes left with a working
#           directory in $T (local jobs) are killed; t_tmpfs DIR SIZE mounts
#           a small file system that the clean-up unmounts last. Use t_sleep SECS for
#           long waits: bash defers a trap until the foreground command ends.

if [ -z "${LOOM_TOP_SRCDIR:-}" ]; then
    LOOM_TOP_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
LOOM_TOP_BUILDDIR=${LOOM_TOP_BUILDDIR:-$LOOM_TOP_SRCDIR}
LOOM_SERVICE_USER=${LOOM_SERVICE_USER:-loom}
export LOOM_TOP_SRCDIR LOOM_TOP_BUILDDIR LOOM_SERVICE_USER

if [ -x /usr/bin/python3 ]; then
    python3() { /usr/bin/python3 "$@"; }
fi

# ---- TAP ---------------------------------------------------------------

T_N=0
T_FAILED=0
T_PLANNED=

t_plan() {
    T_PLANNED=$1
    echo "1..$1"
}

# t_diag MSG...: each argument (it may hold several lines) as "# " lines.
t_diag() {
    local arg line
    for arg in "$@"; do
        while IFS= read -r line; do
            echo "# $line"
        done <<<"$arg"
    done
}

# Where the test called a t_ helper: FILE:LINE.
t_where() {
    local i
    for ((i = 1; i < ${#FUNCNAME[@]}; i++)); do
        case ${FUNCNAME[$i]} in t_*) continue ;; esac
        echo "${BASH_SOURCE[$i]##*/}:${BASH_LINENO[$((i - 1))]}"
        return
    done
}

# t_ok STATUS NAME: a test point that passes when STATUS is 0.
t_ok() {
    local st=$1 name=$2
    T_N=$((T_N + 1))
    if [ "$st" = 0 ]; then
        echo "ok $T_N - $name"
        return 0
    fi
    echo "not ok $T_N - $name"
    T_FAILED=$((T_FAILED + 1))
    t_diag "  failed at $(t_where) (status $st)"
    return 1
}

t_is() {
    local got=$1 want=$2 name=$3
    if [ "$got" = "$want" ]; then
        t_ok 0 "$name"
    else
        t_ok 1 "$name"
        t_diag "  got:  '$got'" "  want: '$want'"
        return 1
    fi
}

t_isnt() {
    local got=$1 unwanted=$2 name=$3
    if [ "$got" != "$unwanted" ]; then
        t_ok 0 "$name"
    else
        t_ok 1 "$name"
        t_diag "  got '$got', which it must not be"
        return 1
    fi
}

# t_like GOT ERE NAME: passes when GOT matches the extended regex ERE.
t_like() {
    local got=$1 re=$2 name=$3
    if [[ $got =~ $re ]]; then
        t_ok 0 "$name"
    else
        t_ok 1 "$name"
        t_diag "  got:      '$got'"
        t_diag "  expected: /$re/"
        return 1
    fi
}

t_skip() {
    T_N=$((T_N + 1))
    echo "ok $T_N - $1 # SKIP ${2:-}"
}

t_skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

t_bail() {
    echo "Bail out! $*"
    exit 1
}

# t_answers: one test point: every answer api recorded matches
# docs/openapi.json (none recorded: no test point).
t_answers() {
    local n modules=$LOOM_TOP_BUILDDIR/npm/node_modules
    [ -s "$T/answers/index" ] || return 0
    n=$(wc -l <"$T/answers/index")
    if ! command -v node >/dev/null 2>&1 || [ ! -d "$modules/ajv" ]; then
        t_ok 1 "the $n answers match docs/openapi.json"
        t_diag "no node, or no ajv in $modules: ./bootstrap check installs them (./bootstrap npm DIR for another build directory)"
        return 1
    fi
    node "$LOOM_TOP_SRCDIR/tests/lib/openapi_check.js" "$modules" \
        "$LOOM_TOP_SRCDIR/docs/openapi.json" "$T/answers" >"$T/answers.out" 2>&1
    t_ok $? "the $n answers match docs/openapi.json" ||
        t_diag "$(head -n 60 "$T/answers.out")"
}

# Print the plan (unless t_plan gave it) and exit: 0 when all passed.
t_done() {
    t_answers
    [ -n "$T_PLANNED" ] || echo "1..$T_N"
    [ "$T_FAILED" = 0 ] && exit 0
    exit 1
}

# ---- processes -----------------------------------------------------------

# alive PID: the process exists and is not a zombie (PID 1 of this sandbox
# reaps orphans only every ~2 s, so a dead orphan lingers as State: Z).
alive() {
    [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null || return 1
    local st
    st=$(awk '/^State:/{print $2}' "/proc/$1/status" 2>/dev/null) || return 1
    [ "$st" != Z ]
}

# wait_dead PID TENTHS: wait up to TENTHS/10 s for PID to end; 0 if it did.
wait_dead() {
    local i
    for ((i = 0; i < $2; i++)); do
        alive "$1" || return 0
        sleep 0.1
    done
    ! alive "$1"
}

# wait_for CMD [SECS [EVERY]]: eval CMD every EVERY seconds (default 0.1)
# until it succeeds; 1 when it did not within SECS (default 30).
wait_for() {
    local end=$((${EPOCHREALTIME/[.,]/} + ${2:-30} * 1000000))
    while :; do
        eval "$1" && return 0
        ((${EPOCHREALTIME/[.,]/} >= end)) && return 1
        sleep "${3:-0.1}"
    done
}

# turns_pass PATH N: 0 once the counter at PATH of GET /v1/runtime has grown
# by N (60 s at most), 1 when it did not or there is no such counter.
runtime_counter() {
    api GET /v1/runtime >/dev/null
    jget "$BODY" "$1" 2>/dev/null
}
turns_pass() {
    local c0
    c0=$(runtime_counter "$1")
    [[ $c0 =~ ^[0-9]+$ ]] || return 1
    wait_for "[ \"\$(runtime_counter $1)\" -ge $((c0 + $2)) ] 2>/dev/null" 60
}

# polls_pass CLUSTER SECS: 0 once GET /v1/clusters/CLUSTER shows a last_poll
# SECS seconds later than at the call (60 s at most).
cluster_last_poll() {
    api GET "/v1/clusters/$1" >/dev/null
    epoch "$(jget "$BODY" .last_poll 2>/dev/null)"
}
polls_pass() {
    local p0
    p0=$(cluster_last_poll "$1")
    [[ $p0 =~ ^[0-9]+$ ]] || return 1
    wait_for "[ \"\$(cluster_last_poll $1)\" -ge $((p0 + $2)) ] 2>/dev/null" 60
}

# t_sleep SECS: sleep, but let a signal to the test run its cleanup at once
# (bash runs traps only after the foreground command ends).
t_sleep() {
    sleep "$1" &
    wait $!
}

# ---- temp dir and cleanup ------------------------------------------------

T=$(mktemp -d /tmp/loom-test.XXXXXX) || t_bail "cannot make a temp dir"
chmod 0755 "$T"
T_OUT=$T/out
mkdir -m 1777 "$T_OUT" || t_bail "cannot make $T_OUT"
export T T_OUT
# Tests run in their temp dir, so that what a CMS writes in the current
# directory (sbatch's slurm-N.out, say) never lands in the source tree.
LOOM_TOP_SRCDIR=$(cd "$LOOM_TOP_SRCDIR" && pwd -P)
LOOM_TOP_BUILDDIR=$(cd "$LOOM_TOP_BUILDDIR" && pwd -P)
cd "$T" || t_bail "cannot enter $T"

LOOMD_PID=
LOOM_PG_PID=
T_CLEANUP=()

t_cleanup() {
    T_CLEANUP+=("$*")
}

# t_tmpfs DIR SIZE: mount a tmpfs of SIZE (mount's size=, "48m") on DIR, a
# new directory in $T, for a file system that the test fills up. The
# clean-up unmounts it after PostgreSQL has stopped.
T_MOUNTS=()
t_tmpfs() {
    mkdir -p "$1" && mount -t tmpfs -o "size=$2,mode=0755" loom-test "$1" ||
        return 1
    T_MOUNTS+=("$1")
}

# t_sweep: SIGKILL the strays that provably belong to this test: processes
# whose working directory is in $T (local jobs and their supervisors run in
# $T/state, e.g. after loomd_kill9), and processes in the cgroups of this
# test's local clusters (listed in $T/state/clusters/*/cgroups), which it
# then removes. The test's own shell is spared.
t_sweep() {
    local p pids= f d
    for p in $(find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$T" -o \
        -lname "$T/*" \) 2>/dev/null | cut -d/ -f3); do
        [ "$p" = "$$" ] || [ "$p" = "$BASHPID" ] || pids="$pids $p"
    done
    for f in "$T"/state/clusters/*/cgroups; do
        [ -f "$f" ] || continue
        while read -r _ d; do
            pids="$pids $(cat "$d"/*/cgroup.procs 2>/dev/null | tr '\n' ' ')"
        done <"$f"
    done
    pids=$(echo $pids)
    if [ -n "$pids" ]; then
        echo "# killing strays of this test: $pids" >&2
        kill -KILL $pids 2>/dev/null
    fi
    for f in "$T"/state/clusters/*/cgroups; do
        [ -f "$f" ] || continue
        while read -r _ d; do
            [ -d "$d" ] || continue
            wait_for "rmdir \"\$d\"/*/ 2>/dev/null; rmdir \"\$d\" 2>/dev/null; [ ! -d \"\$d\" ]" 10
        done <"$f"
    done
    return 0
}

# ---- accounts ----------------------------------------------------------------

T_ACCOUNTS=()

# t_passwd_retry CMD...: CMD (useradd, userdel), again while another
# process holds a lock of /etc/passwd or /etc/group ("cannot lock ...;
# try again later") or the account still runs a process (userdel: 8); 30 s
# at most. CMD's last status; its output in $T/passwd.out.
t_passwd_retry() {
    local i rc
    for ((i = 0; i < 300; i++)); do
        "$@" >"$T/passwd.out" 2>&1
        rc=$?
        [ "$rc" = 8 ] || grep -q 'cannot lock' "$T/passwd.out" ||
            return "$rc"
        sleep "0.$((RANDOM % 2))$((RANDOM % 10))"
    done
    return "$rc"
}

# t_account VAR NAME: see the header.
t_account() {
    local var=$1 base=$2 name i rc
    [ "$(id -u)" = 0 ] || t_bail "t_account: making accounts needs root"
    mkdir -p "$T/home" && chmod 0755 "$T/home" || t_bail "cannot make $T/home"
    for ((i = 0; i < 20; i++)); do
        name=$base-$(tr -dc 'a-z0-9' </dev/urandom | head -c 6)
        getent passwd "$name" >/dev/null && continue
        t_passwd_retry useradd --user-group --no-create-home \
            --home-dir "$T/home/$name" --shell /bin/sh \
            --comment "Loom test $(basename "$0")" "$name"
        rc=$?
        [ "$rc" = 9 ] && continue # taken meanwhile
        [ "$rc" = 0 ] || t_bail "useradd $name failed ($rc): $(cat "$T/passwd.out")"
        T_ACCOUNTS+=("$name")
        install -d -m 0700 -o "$name" -g "$name" "$T/home/$name" ||
            t_bail "cannot make the home of $name"
        printf -v "$var" '%s' "$name"
        return 0
    done
    t_bail "t_account: no free account name $base-XXXXXX"
}

account_procs() {
    ps -o pid= -u "$1" 2>/dev/null | tr -d ' '
}

# t_account_kill NAME: SIGKILL every process of the account, until none.
t_account_kill() {
    local i pids
    for ((i = 0; i < 50; i++)); do
        pids=$(account_procs "$1")
        [ -n "$pids" ] || return 0
        # shellcheck disable=SC2086 # one pid a word
        kill -KILL $pids 2>/dev/null
        sleep 0.1
    done
}

t_accounts_remove() {
    local a
    for a in "${T_ACCOUNTS[@]}"; do
        t_account_kill "$a"
        t_passwd_retry userdel --remove "$a" ||
            echo "# userdel $a failed: $(cat "$T/passwd.out")" >&2
    done
    T_ACCOUNTS=()
}

t_harness_cleanup() {
    local rc=$? c
    trap - EXIT INT TERM HUP
    set +e
    # A failed test shows the end of loomd's log: CI keeps nothing else.
    if [ "$T_FAILED" != 0 ] && [ -s "$T/loomd.log" ]; then
        t_diag "last lines of loomd's log:" "$(tail -n 60 "$T/loomd.log")"
    fi
    for c in "${T_CLEANUP[@]}"; do
        eval "$c"
    done
    if [ -n "$LOOMD_PID" ] && alive "$LOOMD_PID"; then
        kill -TERM "$LOOMD_PID" 2>/dev/null
        wait_dead "$LOOMD_PID" 100 || kill -KILL "$LOOMD_PID" 2>/dev/null
    fi
    if [ -n "$LOOM_PG_PID" ] && alive "$LOOM_PG_PID"; then
        kill -INT "$LOOM_PG_PID" 2>/dev/null # fast shutdown
        wait_dead "$LOOM_PG_PID" 100 || kill -QUIT "$LOOM_PG_PID" 2>/dev/null
        wait_dead "$LOOM_PG_PID" 30 || kill -KILL "$LOOM_PG_PID" 2>/dev/null
    fi
    cd / && t_sweep
    for c in "${T_MOUNTS[@]}"; do
        umount "$c" 2>/dev/null || umount -l "$c"
    done
    t_accounts_remove
    if [ "${LOOM_KEEP_TMP:-0}" = 1 ]; then
        echo "# kept $T" >&2
    else
        rm -rf "$T"
    fi
    exit "$rc"
}
trap t_harness_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# ---- PostgreSQL ------------------------------------------------------------

pg_bindir() {
    local d
    if [ -n "${LOOM_PG_BINDIR:-}" ]; then
        echo "$LOOM_PG_BINDIR"
        return 0
    fi
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
        [ -x "$d/initdb" ] && { echo "$d"; return 0; }
    done
    d=$(command -v initdb 2>/dev/null) && { dirname "$d"; return 0; }
    return 1
}

# as_pg CMD...: run a server command as the postgres user (PostgreSQL
# refuses to run as root); as is when we are not root.
as_pg() {
    if [ "$(id -u)" = 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

# Start the server on LOOM_PG_DATA and record the postmaster's PID.
pg_launch() {
    if ! as_pg "$PG_BIN/pg_ctl" -D "$LOOM_PG_DATA" \
        -l "$LOOM_PG_DIR/postgres.log" -w -t 60 start >"$T/pg_ctl.out" 2>&1; then
        t_diag "pg_ctl start failed:" "$(tail -n 20 "$T/pg_ctl.out" "$LOOM_PG_DIR/postgres.log" 2>&1)"
        return 1
    fi
    LOOM_PG_PID=$(head -n 1 "$LOOM_PG_DATA/postmaster.pid")
}

# pg_start [DATADIR [INITDB ARGS...]]: a private PostgreSQL in $T/pg, Unix
# socket only, database loom. Its data directory (with the WAL in it) is
# $T/pg/data, or DATADIR (a directory that need not exist, on a file system
# of the test's own: a small tmpfs that fills up); INITDB ARGS are added to
# initdb's (--wal-segsize=1).
pg_start() {
    PG_BIN=$(pg_bindir) || { t_diag "PostgreSQL server binaries not found"; return 1; }
    LOOM_PG_DIR=$T/pg
    LOOM_PG_DATA=${1:-$LOOM_PG_DIR/data}
    [ $# -gt 0 ] && shift
    mkdir -p "$LOOM_PG_DIR"
    if [ "$LOOM_PG_DATA" != "$LOOM_PG_DIR/data" ] && [ "$(id -u)" = 0 ]; then
        mkdir -p "$LOOM_PG_DATA"
        chown postgres: "$LOOM_PG_DATA" && chmod 0700 "$LOOM_PG_DATA" || return 1
    fi
    # The socket's directory: loomd's account may connect, others not.
    if [ "$(id -u)" = 0 ]; then
        chown "postgres:$LOOM_SERVICE_USER" "$LOOM_PG_DIR" || return 1
        chmod 0750 "$LOOM_PG_DIR"
    else
        chmod 0700 "$LOOM_PG_DIR"
    fi
    if ! as_pg "$PG_BIN/initdb" -D "$LOOM_PG_DATA" -U postgres -A trust \
        -E UTF8 --locale=C -N "$@" >"$T/initdb.log" 2>&1; then
        t_diag "initdb failed:" "$(tail -n 20 "$T/initdb.log")"
        return 1
    fi
    cat >>"$LOOM_PG_DATA/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$LOOM_PG_DIR'
shared_buffers = 32MB
max_connections = 30
# fsync off: only a crash of the machine could lose data, and tests do not
# crash the machine. synchronous_commit stays on: a commit that loomd
# acknowledged must survive PostgreSQL's own immediate shutdown (pg_kill).
fsync = off
full_page_writes = off
EOF
    pg_launch || return 1
    LOOM_PG_CONNINFO="host=$LOOM_PG_DIR dbname=loom user=postgres"
    export LOOM_PG_DIR LOOM_PG_DATA LOOM_PG_CONNINFO
    if ! "$PG_BIN/createdb" -h "$LOOM_PG_DIR" -U postgres loom >"$T/createdb.log" 2>&1; then
        t_diag "createdb failed:" "$(cat "$T/createdb.log")"
        return 1
    fi
}

# pg_stop: a clean (fast) shutdown. 0 when the server is gone.
pg_stop() {
    [ -n "$LOOM_PG_PID" ] || return 0
    as_pg "$PG_BIN/pg_ctl" -D "$LOOM_PG_DATA" -m fast -w -t 60 stop >/dev/null 2>&1
    wait_dead "$LOOM_PG_PID" 100 || return 1
    LOOM_PG_PID=
}

# pg_kill: stop abruptly (immediate shutdown: no checkpoint, clients cut
# off, crash recovery at the next start), for tests of a dead database.
pg_kill() {
    [ -n "$LOOM_PG_PID" ] || return 0
    kill -QUIT "$LOOM_PG_PID" 2>/dev/null
    wait_dead "$LOOM_PG_PID" 100 || { kill -KILL "$LOOM_PG_PID"; return 1; }
    LOOM_PG_PID=
}

# pg_kill9: SIGKILL the postmaster and all its processes at once (a crash:
# no shutdown of any kind; crash recovery at the next start). 0 when all
# are gone (10 s at most each), and the postmaster reaped too (30 s at
# most): a new one refuses to start while the pid in postmaster.pid
# exists, a zombie too.
pg_kill9() {
    [ -n "$LOOM_PG_PID" ] || return 0
    local kids p
    kids=$(ps -o pid= --ppid "$LOOM_PG_PID" 2>/dev/null)
    kill -KILL "$LOOM_PG_PID" $kids 2>/dev/null
    wait_dead "$LOOM_PG_PID" 100 || return 1
    for p in $kids; do
        wait_dead "$p" 100 || return 1
    done
    wait_for '! kill -0 "$LOOM_PG_PID" 2>/dev/null' 30 || return 1
    LOOM_PG_PID=
}

# pg_restart_same: start the server again on the same data directory.
pg_restart_same() {
    if [ -n "$LOOM_PG_PID" ] && alive "$LOOM_PG_PID"; then
        return 0
    fi
    pg_launch
}

# pg_sql SQL: run one statement in the loom database, unaligned, no headers.
pg_sql() {
    "$PG_BIN/psql" -X -q -t -A -v ON_ERROR_STOP=1 -h "$LOOM_PG_DIR" \
        -U postgres -d loom -c "$1"
}

# ---- loomd -----------------------------------------------------------------

# free_port: print a TCP port on 127.0.0.1 that nothing listens on.
free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' && return 0
    fi
    local p i
    for ((i = 0; i < 100; i++)); do
        p=$((20000 + RANDOM % 30000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}

# loom_owns PATH...: give each PATH (and what is in it) to loomd's
# account, as an installation would; nothing when the test is not root.
loom_owns() {
    [ "$(id -u)" = 0 ] || return 0
    chown -R "$LOOM_SERVICE_USER:" "$@"
}

# loomd_conf [SECTIONS]: write $T/loom.conf for a free port ($PORT when
# set); the cluster sections come as the argument or on stdin (a heredoc).
# Stdin is read only when it has something ready, so a bare call never
# hangs on an idle inherited pipe. The file (0600) and state_dir (0700,
# with the token key) belong to loomd's account.
loomd_conf() {
    PORT=${PORT:-$(free_port)}
    LOOM_URL=http://127.0.0.1:$PORT
    export PORT LOOM_URL
    mkdir -p "$T/state"
    chmod 0700 "$T/state"
    loom_owns "$T/state" || return 1
    # the admin token's subject runs its jobs as an unprivileged account
    [ -e "$T/accounts" ] || accounts_default </dev/null
    (
        umask 077
        {
            echo "[loomd]"
            echo "listen = 127.0.0.1:$PORT"
            echo "database = $LOOM_PG_CONNINFO"
            echo "token_key_file = $T/state/token.key"
            echo "state_dir = $T/state"
            echo "accounts_file = $T/accounts"
            echo
            if [ $# -gt 0 ]; then
                printf '%s\n' "$@"
            elif [ ! -t 0 ] && read -r -t 0 2>/dev/null; then
                cat
            fi
        } >"$T/loom.conf"
    ) || return 1
    chmod 0600 "$T/loom.conf"
    loom_owns "$T/loom.conf"
}

# local_cluster NODES CPUS [MEMORY_MB], sim_cluster ...: the [cluster
# local] or [cluster sim] section most tests give loomd_conf: that
# adaptor, NODES nodes of CPUS cpus and MEMORY_MB (1024) each, polled
# every 0.2 s.
local_cluster() { adaptor_cluster local "$@"; }
sim_cluster() { adaptor_cluster sim "$@"; }
adaptor_cluster() {
    printf '%s\n' "[cluster $1]" "adaptor = $1" "nodes = $2" \
        "cpus_per_node = $3" "memory_mb = ${4:-1024}" "poll_s = 0.2"
}

# loom_runas_setuid: the build tree's loom-runas as make install leaves it
# (root:loom 4750), changed only when it is not so already: a test running
# beside this one may be using it.
loom_runas_setuid() {
    local r=$LOOM_TOP_BUILDDIR/loom-runas
    [ "$(id -u)" = 0 ] && [ -f "$r" ] || return 0
    [ "$(stat -c '%u:%G %a' "$r")" = "0:$LOOM_SERVICE_USER 4750" ] && return 0
    chown "root:$LOOM_SERVICE_USER" "$r" && chmod 4750 "$r"
}

# accounts_default: the lines every test's accounts file begins with:
# admin and loomctl run their jobs as $T_USER, made (t_account T_USER user)
# when the test has not made it yet. To $T/accounts, appended.
accounts_default() {
    [ -n "${T_USER:-}" ] || t_account T_USER user
    printf 'LOOM admin %s\nLOOM loomctl %s\n' "$T_USER" "$T_USER" \
        >>"$T/accounts"
}

# map_account IDENTITY ACCOUNT: a line of $T/accounts (after the default
# lines, which it writes first when the file is not there yet).
map_account() {
    [ -n "$2" ] || t_bail "map_account $1: no account given (make it first)"
    [ -e "$T/accounts" ] || accounts_default
    printf 'LOOM %s %s\n' "$1" "$2" >>"$T/accounts"
}

# loomd_start [ARGS...]: start loomd on $T/loom.conf in the foreground mode,
# log in $T/loomd.log; wait up to 60 s for /healthz. It serves the
# dashboard from the source tree (core/web, or LOOM_WEB_DIR), and runs
# loom-runas from the build tree (or LOOM_LIBEXECDIR).
loomd_start() {
    local end=$((SECONDS + 60))
    loom_runas_setuid || { t_diag "cannot make loom-runas setuid"; return 1; }
    (umask 077 && : >>"$T/loomd.log") # the log is loomd's (and root's) only
    LOOM_LIBEXECDIR=${LOOM_LIBEXECDIR:-$LOOM_TOP_BUILDDIR} \
        LOOM_SCRIPTS_DIR=${LOOM_SCRIPTS_DIR:-$LOOM_TOP_SRCDIR/adaptors/scripts} \
        LOOM_WEB_DIR=${LOOM_WEB_DIR:-$LOOM_TOP_SRCDIR/core/web} \
        "$LOOM_TOP_BUILDDIR/loomd" \
        -c "$T/loom.conf" -f "$@" </dev/null >>"$T/loomd.log" 2>&1 &
    LOOMD_PID=$!
    while ((SECONDS < end)); do
        if curl -sf -o /dev/null --max-time 1 "$LOOM_URL/healthz"; then
            return 0
        fi
        if ! alive "$LOOMD_PID"; then
            wait "$LOOMD_PID"
            t_diag "loomd exited with status $? before it answered /healthz:" \
                "$(tail -n 30 "$T/loomd.log")"
            LOOMD_PID=
            return 1
        fi
        sleep 0.1
    done
    t_diag "loomd did not answer $LOOM_URL/healthz within 60 s:" \
        "$(tail -n 30 "$T/loomd.log")"
    return 1
}

# loomd_stop: SIGTERM and wait (up to 30 s, then SIGKILL); returns loomd's
# exit status (128+signal when a signal ended it).
loomd_stop() {
    local pid=$LOOMD_PID i rc
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 300; i++)); do
        alive "$pid" || break
        sleep 0.1
    done
    if alive "$pid"; then
        t_diag "loomd ignored SIGTERM for 30 s; killing it"
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid"
    rc=$?
    LOOMD_PID=
    return "$rc"
}

loomd_kill9() {
    [ -n "$LOOMD_PID" ] || return 0
    kill -KILL "$LOOMD_PID" 2>/dev/null
    wait "$LOOMD_PID" 2>/dev/null
    LOOMD_PID=
}

loomctl() {
    "$LOOM_TOP_BUILDDIR/loomctl" -c "$T/loom.conf" "$@"
}

# token_for SUBJECT ROLE [TTL]: print a new token.
token_for() {
    loomctl token create --subject "$1" --role "$2" --ttl "${3:-3600}"
}

# admin_token [SUBJECT]: set TOKEN to a new admin token (subject admin,
# or SUBJECT: a test account, for a test whose jobs must run as one).
admin_token() {
    TOKEN=$(token_for "${1:-admin}" admin) && [ -n "$TOKEN" ]
}

# ---- HTTP and JSON -----------------------------------------------------------

# api METHOD PATH [BODY|-] [CURL ARGS...]: call loomd with $TOKEN (when set)
# as bearer token; BODY "-" reads it from stdin. Prints the body; sets
# STATUS (000 when there was no answer) and BODY.
api() {
    local method=$1 path=$2 data=
    shift 2
    local out file args=(-s -o "$T/api.body" -w '%{http_code} %{content_type}'
        -X "$method" --max-time 30 -H 'Content-Type: application/json')
    if [ $# -gt 0 ]; then
        data=$1
        shift
        [ "$data" = - ] && data=$(cat)
        args+=(--data-binary "$data")
    fi
    [ -n "${TOKEN:-}" ] && args+=(-H "Authorization: Bearer $TOKEN")
    rm -f "$T/api.body"
    out=$(curl "${args[@]}" "$@" "$LOOM_URL$path") || true
    STATUS=${out%% *}
    STATUS=${STATUS:-000}
    BODY=$(cat "$T/api.body" 2>/dev/null)
    echo "$STATUS" >"$T/api.status"
    if [ "$STATUS" != 000 ]; then # kept for t_answers
        mkdir -p "$T/answers"
        file=${EPOCHREALTIME/[.,]/}.$BASHPID
        cp "$T/api.body" "$T/answers/$file" 2>/dev/null || : >"$T/answers/$file"
        printf '%s\t%s\t%s\t%s\t%s\n' "$method" "${path%%\?*}" "$STATUS" \
            "${out#* }" "$file" >>"$T/answers/index"
    fi
    printf '%s\n' "$BODY"
}

api_status() {
    cat "$T/api.status" 2>/dev/null || echo 000
}

# api_line LABEL METHOD PATH [BODY] [CURL ARGS]: the answer as one line,
# "LABEL STATUS BODY" (for comparing every answer before and after).
api_line() {
    local label=$1
    shift
    api "$@" >/dev/null
    echo "$label $STATUS $BODY"
}

# jget JSON PATH: the value at PATH (.a.b.0.c; "." is the whole document).
jget() {
    python3 -c '
import json, sys
try:
    v = json.loads(sys.argv[1])
except ValueError as e:
    sys.exit("jget: not JSON: %s" % e)
for k in [k for k in sys.argv[2].split(".") if k != ""]:
    try:
        v = v[int(k)] if isinstance(v, list) else v[k]
    except (KeyError, IndexError, ValueError, TypeError):
        sys.exit(1)
print(v if isinstance(v, str) else json.dumps(v))
' "$1" "$2"
}

# jlen JSON PATH: the length of the array, object or string at PATH.
jlen() {
    python3 -c '
import json, sys
v = json.loads(sys.argv[1])
for k in [k for k in sys.argv[2].split(".") if k != ""]:
    try:
        v = v[int(k)] if isinstance(v, list) else v[k]
    except (KeyError, IndexError, ValueError, TypeError):
        sys.exit(1)
print(len(v))
' "$1" "$2"
}

# py EXPR JSON: evaluate a Python expression over the document d.
py() {
    printf '%s' "$2" | python3 -c 'import json, sys
d = json.load(sys.stdin)
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r))' "$1"
}

# ---- schedules ---------------------------------------------------------------

# jinfo ID: the job's J_STATE J_START J_END J_PLAN (epoch seconds, "-" for
# null) J_CLUSTER J_NODES (sorted, comma-separated) J_QPOS J_PCL (planned
# cluster) J_NATIVE.
jinfo() {
    job "$1"
    read -r J_STATE J_START J_END J_PLAN J_CLUSTER J_NODES J_QPOS J_PCL J_NATIVE < <(
        printf '%s' "$BODY" | python3 -c '
import datetime, json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("INVALID - - - - - - - -"); sys.exit(0)
def ep(s):
    if not s:
        return "-"
    return str(int(datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()))
def v(x):
    return "-" if x is None or x == "" or x == [] else str(x)
print(d.get("state"), ep(d.get("start_time")), ep(d.get("end_time")),
      ep(d.get("planned_start")), v(d.get("cluster")),
      v(",".join(sorted(d.get("nodes") or []))), v(d.get("queue_position")),
      v(d.get("planned_cluster")), v(d.get("native_id")))')
}
# epoch RFC3339: seconds since the epoch ("-" when it is not a time).
epoch() { date -u -d "$1" +%s 2>/dev/null || echo -; }
# at SECONDS: the RFC 3339 time that many seconds from now.
at() { date -u -d "@$(($(date +%s) + $1))" +%Y-%m-%dT%H:%M:%SZ; }

# ---- jobs --------------------------------------------------------------------

# submit JSON [CURL ARGS]: POST /v1/jobs; JOB is the new id, or "" (status
# 1, with a diagnostic) unless the answer is 201.
submit() {
    JOB=
    api POST /v1/jobs "$@" >/dev/null
    [[ $STATUS == 201 && $BODY =~ \"id\":\"([0-9]+)\" ]] && JOB=${BASH_REMATCH[1]}
    [ -n "$JOB" ] && return 0
    t_diag "submit answered $STATUS: $BODY"
    return 1
}

# job ID: GET /v1/jobs/ID; sets STATUS and BODY.
job() {
    api GET "/v1/jobs/$1" >/dev/null
}

# field ID PATH: the job's field at PATH ("" when it is absent).
field() {
    api GET "/v1/jobs/$1" >/dev/null
    jget "$BODY" "$2" 2>/dev/null
}

job_state() {
    field "$1" .state
}

# cluster_state NAME: STATE and ERR ("" when none) of the cluster as
# GET /v1/clusters lists it.
cluster_state() {
    local out
    api GET /v1/clusters >/dev/null
    out=$(printf '%s' "$BODY" | python3 -c 'import json, sys
d = json.load(sys.stdin)
for c in d["items"]:
    if c["name"] == sys.argv[1]:
        print(c["state"])
        print(c["error"] or "")
        break' "$1" 2>/dev/null)
    STATE=${out%%$'\n'*}
    ERR=${out#*$'\n'}
    [ "$ERR" = "$out" ] && ERR=
}
