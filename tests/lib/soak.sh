# soak.sh - a loomd under a steady load for a while (tests/bench/soak.sh,
# tests/integration/9009-soak.t): submits and reads at fixed rates to a
# local and a sim cluster, the scheduler and the maintenance cycle running
# (a rule repairs the nodes that report a drifted kernel).
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh:
#
# soak_start      PostgreSQL, and loomd with a local cluster (4 nodes of 1
#                 cpu) and a sim cluster (64 nodes of 4 cpus) under a
#                 [rule kernel] (kernel differs from the goal, 6.1: the
#                 action reinstall, tests/fixtures/maintenance/action.sh,
#                 reports 6.1 after 1 s; 5% of the nodes at once); the
#                 goals of all 64 nodes imported; an admin token (its jobs
#                 run as $T_USER) and a monitor token for the reports,
#                 both for a day. loomd's lease_s is $SOAK_LEASE_S (10)
#                 and its log_level $SOAK_LOG_LEVEL (info). 0 or 1.
# soak_run SECS WARMUP WINDOW [SUBMITS/S [READS/S]]
#                 tests/lib/soak.py for SECS seconds (defaults 50 and 200 a
#                 second; one job in ten local, the others sim jobs of 2 s;
#                 one node report of kernel 5.10 every 2 s among n1..n32);
#                 its summary in $T/soak.json. 0 when it ran.
# soak_get PYEXPR the value of a Python expression over the summary (d).
# soak_table      the summary as a table, start against end.

soak_start() {
    pg_start || return 1
    mkdir -p "$T/maint" &&
        cp "$LOOM_TOP_SRCDIR/tests/fixtures/maintenance/action.sh" "$T/maint/" &&
        chmod 0755 "$T/maint/action.sh" || return 1
    SOAK_TF=$T/maint/token
    # lease_s = 10: what this test asks of loomd is not about its lease; on a
    # loaded machine a renewal may take longer than the default 3 s lease, and
    # a loomd that cannot show its lease stops acting (503), as it must.
    loomd_conf <<EOF
lease_s = ${SOAK_LEASE_S:-10}
log_level = ${SOAK_LOG_LEVEL:-info}
[maintenance]
compare_s = 1
verify_s = 20

[action reinstall]
command = $T/maint/action.sh --sleep 1 %c %n %i $SOAK_TF kernel=6.1
timeout_s = 30
duration_s = 60
fixes = kernel

[rule kernel]
attribute = kernel
when = differs
action = reinstall
cluster = sim
within_s = 600
duration_s = 60
max_nodes = 1000
max_percent = 5

[cluster local]
adaptor = local
nodes = 4
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.5

[cluster sim]
adaptor = sim
nodes = 64
cpus_per_node = 4
memory_mb = 8192
poll_s = 0.5
EOF
    # A sanitizer build keeps freed memory in a quarantine (256 MB) that
    # fills for minutes: its RSS would tell of that, not of loomd. A small
    # one (no effect on a build without ASan) leaves loomd's own growth.
    ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4 \
        loomd_start || return 1
    # A day's token: admin_token's default hour would expire before the
    # end of tests/bench/soak.sh's hour (its own setup comes first).
    TOKEN=$(token_for admin admin 86400) && [ -n "$TOKEN" ] || return 1
    printf '%s\n' "$TOKEN" >"$T/soak.token"
    token_for nagios monitor 86400 >"$SOAK_TF" && chmod 0600 "$SOAK_TF" &&
        loom_owns "$T/maint" || return 1
    api PUT /v1/goal/nodes "$(python3 -c 'import json
print(json.dumps({"items": [{"node": "sim/n%d" % i,
                             "attributes": {"kernel": "6.1"}}
                            for i in range(1, 65)]}))')" >/dev/null
    [ "$STATUS" = 200 ] || { t_diag "goals: $STATUS $BODY"; return 1; }
    python3 -c 'import json
local = {"name": "soak-local", "command": ["/bin/true"],
         "request": {"cluster": "local", "walltime_s": 60}}
sim = {"name": "soak-sim", "command": ["/bin/true"],
       "env": {"LOOM_SIM_RUNTIME_S": "2"},
       "request": {"cluster": "sim", "walltime_s": 60}}
print(json.dumps([local] + [sim] * 9))' >"$T/soak.bodies"
}

soak_run() {
    python3 "$LOOM_TOP_SRCDIR/tests/lib/soak.py" --url "$LOOM_URL" \
        --token-file "$T/soak.token" --report-token-file "$SOAK_TF" \
        --pid "$LOOMD_PID" --bodies "$T/soak.bodies" --seconds "$1" \
        --warmup "$2" --window "$3" --submit-rate "${4:-50}" \
        --read-rate "${5:-200}" --drift-cluster sim --drift-nodes 32 \
        --drift-every 2 >"$T/soak.json"
}

soak_get() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[2]))
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$T/soak.json"
}

soak_table() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
s, e = d["start"], d["end"]
print("%-34s %12s %12s" % ("", "start", "end"))
print("%-34s %12s %12s" % ("window (s from the start)",
      "%g-%g" % (s["from_s"], s["to_s"]), "%g-%g" % (e["from_s"], e["to_s"])))
for k, name in (("submits_per_s", "submits/s (target %g)" % d["submit_rate"]),
                ("reads_per_s", "reads/s (target %g)" % d["read_rate"]),
                ("submit_p50_ms", "submit p50 ms"), ("submit_p99_ms", "submit p99 ms"),
                ("read_p50_ms", "read p50 ms"), ("read_p99_ms", "read p99 ms")):
    print("%-34s %12s %12s" % (name, s[k], e[k]))
a, z = d["after_warmup"], d["at_end"]
print("%-34s %12s %12s" % ("loomd RSS MB", "%.1f" % (a["rss_kb"] / 1024.0),
                           "%.1f" % (z["rss_kb"] / 1024.0)))
print("%-34s %12s %12s" % ("loomd descriptors", a["fds"], z["fds"]))
print("RSS growth after the warm-up: %.1f MB over %g s; %d submits acknowledged"
      % ((z["rss_kb"] - a["rss_kb"]) / 1024.0, d["seconds"] - d["warmup_s"],
         d["acknowledged"]))
print("answers: %s" % ", ".join("%s: %d" % kv for kv in sorted(d["answers"].items())))
for r in d["refused"]:
    print("not 2xx: %s" % r)' \
        "$T/soak.json"
}
