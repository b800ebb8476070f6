# demo.sh - the demo fabric: its loom.conf, its admin token and its jobs.
# SPDX-License-Identifier: MIT
#
# Sourced by ./bootstrap (demo) and by tests/integration/0006-readme-tour.t,
# so that the README's tour runs in the suite on what the demo sets up:
#   demo_conf_text PORT DATABASE VAR
#                                 print the demo's loom.conf: loomd on
#                                 127.0.0.1:PORT, its state and token key in
#                                 VAR, the default fabric's three clusters;
#                                 make VAR/jobs, where the demo's jobs run
#                                 (DEMO_JOBS_DIR)
#   demo_admin_token FILE CTL...  write an admin token (subject admin, 24 h)
#                                 to FILE, mode 0600; CTL... runs loomctl
#                                 with the demo's loom.conf
#   demo_jobs SUBMIT              the demo's ten jobs, in order (ids 1 to
#                                 10): SUBMIT runs `loomctl submit` with the
#                                 arguments it is given; 1 if any failed.
#                                 They run in DEMO_JOBS_DIR.

demo_conf_text() {
    local port=$1 database=$2 var=$3
    # the accounts file it names: the jobs of the admin token, of loomctl
    # and of the README's alice run as nobody, an account without privilege
    mkdir -p "$var" &&
        printf 'LOOM admin nobody\nLOOM loomctl nobody\nLOOM alice nobody\n' \
            >"$var/accounts"
    # where the jobs run and write their output: nobody may write there
    # (sticky, as /tmp)
    DEMO_JOBS_DIR=$var/jobs
    mkdir -p "$DEMO_JOBS_DIR" && chmod 1777 "$DEMO_JOBS_DIR"
    cat <<EOF
# Written by ./bootstrap demo.
[loomd]
listen = 127.0.0.1:$port
database = $database
token_key_file = $var/token.key
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
