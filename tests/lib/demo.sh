# demo.sh - the demo fabric: its loom.conf, its admin token and its jobs.
# SPDX-License-Identifier: MIT
#
# Sourced by ./bootstrap (demo) and by tests/integration/0006-readme-tour.t,
# so that the README's tour runs in the suite on what the demo sets up:
#   demo_conf_text PORT DATABASE VAR
#                                 print the demo's loom.conf: loomd on
#                                 127.0.0.1:PORT, its state and token key in
#                                 VAR/state, the default fabric's three
#                                 clusters, the accounts file VAR/accounts
#   demo_conf_write PORT DATABASE VAR
#                                 write it to VAR/loom.conf (mode 0600) and
#                                 make VAR/state (0700), both loomd's
#                                 account's ($LOOM_SERVICE_USER, default
#                                 loom) when run as root: loomd switches to
#                                 that account and must read and write them;
#                                 write VAR/accounts, and make VAR/jobs,
#                                 where the demo's jobs run (DEMO_JOBS_DIR)
#   DEMO_ACCOUNT, DEMO_ALICE      the accounts the demo's jobs run as:
#                                 admin's and loomctl's (default loom-demo)
#                                 and the README's alice's (loom-alice).
#                                 ./bootstrap demo makes them when they are
#                                 missing (demo_accounts_make); the tour's
#                                 test sets them to accounts of its own.
#   demo_admin_token FILE CTL...  write an admin token (subject admin, 24 h)
#                                 to FILE, mode 0600; CTL... runs loomctl
#                                 with the demo's loom.conf
#   demo_jobs SUBMIT              the demo's ten jobs, in order (ids 1 to
#                                 10): SUBMIT runs `loomctl submit` with the
#                                 arguments it is given; 1 if any failed.
#                                 They run in DEMO_JOBS_DIR.

DEMO_ACCOUNT=${DEMO_ACCOUNT:-loom-demo}
DEMO_ALICE=${DEMO_ALICE:-loom-alice}

demo_conf_text() {
    local port=$1 database=$2 var=$3
    cat <<EOF
# Written by ./bootstrap demo.
[loomd]
listen = 127.0.0.1:$port
database = $database
token_key_file = $var/state/token.key
state_dir = $var/state
accounts_file = $var/accounts

[cluster local]
adaptor = local
nodes = 4
cpus_per_node = 1
memory_mb = 1024

[cluster sim64]
adaptor = sim
nodes = 64
cpus_per_node = 32
memory_mb = 131072
speed = 10

[cluster sim1000]
adaptor = sim
nodes = 1000
cpus_per_node = 32
memory_mb = 131072
speed = 10
EOF
}

demo_conf_write() {
    local var=$3 user=${LOOM_SERVICE_USER:-loom}
    mkdir -p "$var/state" && chmod 0700 "$var/state" &&
        (umask 077 && demo_conf_text "$@" >"$var/loom.conf") &&
        chmod 0600 "$var/loom.conf" || return 1
    # the jobs of the admin token and of loomctl run as DEMO_ACCOUNT, the
    # README's alice's as DEMO_ALICE: unprivileged accounts of their own
    printf 'LOOM admin %s\nLOOM loomctl %s\nLOOM alice %s\n' \
        "$DEMO_ACCOUNT" "$DEMO_ACCOUNT" "$DEMO_ALICE" >"$var/accounts" ||
        return 1
    # where the jobs run and write their output: any account may write
    # there (sticky, as /tmp)
    DEMO_JOBS_DIR=$var/jobs
    mkdir -p "$DEMO_JOBS_DIR" && chmod 1777 "$DEMO_JOBS_DIR" || return 1
    [ "$(id -u)" = 0 ] || return 0
    chown -R "$user:" "$var/state" "$var/loom.conf"
}

# demo_accounts_make: DEMO_ACCOUNT and DEMO_ALICE as ordinary accounts
# (uid from 1000, their own group, home /home/NAME, shell /bin/sh) when
# they are missing; as root only. 1 with a message when one cannot be made.
demo_accounts_make() {
    local a
    for a in "$DEMO_ACCOUNT" "$DEMO_ALICE"; do
        getent passwd "$a" >/dev/null && continue
        if [ "$(id -u)" != 0 ]; then
            echo "there is no account $a for the demo's jobs (run as root to make it)" >&2
            return 1
        fi
        useradd --create-home --user-group --shell /bin/sh \
            --comment "Loom demo" "$a" </dev/null || {
            echo "useradd $a failed" >&2
            return 1
        }
    done
}

demo_admin_token() {
    local file=$1
    shift
    (umask 077 && "$@" token create --subject admin --role admin \
        --ttl 86400 >"$file") && chmod 0600 "$file"
}

# Jobs 1 to 5 run on the local cluster (5 fails on purpose, exit code 3);
# 6 to 10 take 30 simulated seconds on sim1000 (3 s at the demo's speed).
demo_jobs() {
    local submit=$1 i rc=0 in=(--chdir "$DEMO_JOBS_DIR")
    "$submit" "${in[@]}" --cluster local -- hostname || rc=1
    "$submit" "${in[@]}" --cluster local -- /bin/echo hello from loom || rc=1
    "$submit" "${in[@]}" --cluster local -- /bin/sleep 2 || rc=1
    "$submit" "${in[@]}" --cluster local -- /bin/sleep 2 || rc=1
    "$submit" "${in[@]}" --cluster local -- /bin/sh -c \
        'echo failing on purpose; exit 3' || rc=1
    for i in 1 2 3 4 5; do
        "$submit" --cluster sim1000 --env LOOM_SIM_RUNTIME_S=30 -- /bin/true ||
            rc=1
    done
    return "$rc"
}
