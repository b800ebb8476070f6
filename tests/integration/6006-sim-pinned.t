#!/usr/bin/env bash
# 6006-sim-pinned.t - a simulated cluster runs nothing, so a real job must
# never land there by chance: a sim cluster takes only the jobs that name it
# (request.cluster) unless its section says unpinned_jobs = yes.
# - GET /v1/clusters shows unpinned_jobs for each cluster;
# - a job without a pin that only a pinned-only sim cluster could run is a
#   422 that says so; pinned to that cluster, it runs there;
# - a job without a pin waits for a cluster that takes it while the
#   pinned-only sim cluster sits idle, then runs on it;
# - a start by hand of a job without a pin on that cluster is a 409 that
#   says why.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[scheduler]
interval_s = 1

$(local_cluster 1 1)

[cluster sim]
adaptor = sim
nodes = 8
cpus_per_node = 32
memory_mb = 131072
speed = 100
poll_s = 0.2

[cluster open]
adaptor = sim
nodes = 1
cpus_per_node = 2
memory_mb = 4096
speed = 100
poll_s = 0.2
unpinned_jobs = yes
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# ---- what each cluster takes -------------------------------------------------
api GET /v1/clusters >/dev/null
t_is "$(py '[[c["name"], c["unpinned_jobs"]] for c in d["items"]]' "$BODY")" \
    '[["local", true], ["sim", false], ["open", true]]' \
    "GET /v1/clusters: unpinned_jobs is false only for the sim cluster without the key"

# ---- a job only the pinned-only cluster could run ----------------------------
submit '{"name": "wide", "command": ["/bin/true"], "request": {"cpus_per_node": 8}}' >/dev/null 2>&1
t_is "$STATUS" 422 "8 cpus a node without a pin (only sim has them): 422"
t_is "$(jget "$BODY" .error.message)" \
    "no cluster could ever run this job: it fits only on sim, a cluster that takes only the jobs that name it (request.cluster)" \
    "... the message says that sim takes only the jobs that name it"
submit '{"name": "wide", "command": ["/bin/true"], "request": {"cluster": "sim", "cpus_per_node": 8}, "env": {"LOOM_SIM_RUNTIME_S": "1"}}'
WIDE=$JOB
t_is "$STATUS" 201 "the same job pinned to sim: 201"
wait_for 'ended "$WIDE"' 30
t_is "$(field "$WIDE" .state)/$(field "$WIDE" .cluster)" completed/sim \
    "... and it runs there"

# ---- without a pin it waits for a cluster that takes it -----------------------
submit '{"name": "hold-local", "command": ["/bin/sleep", "60"], "request": {"cluster": "local", "walltime_s": 120}}'
HL=$JOB
# open stays full (600 s) until the test cancels its job, however slow the
# steps between are on a loaded machine
submit '{"name": "hold-open", "command": ["/bin/true"], "request": {"cluster": "open", "cpus_per_node": 2, "walltime_s": 600}, "env": {"LOOM_SIM_RUNTIME_S": "60000"}}'
HO=$JOB
wait_for '[ "$(field "$HL" .state)/$(field "$HO" .state)" = running/running ]' 30
t_is "$(field "$HL" .state)/$(field "$HO" .state)" running/running \
    "local and open are full"
submit '{"name": "real", "command": ["/bin/sh", "-c", "echo ran for real"], "request": {"walltime_s": 30}}'
REAL=$JOB
wait_for '[ "$(field "$REAL" .planned_cluster)" != "" ] && [ "$(field "$REAL" .planned_cluster)" != null ]' 30
t_is "$(field "$REAL" .state)" pending \
    "a job without a pin waits, though sim has 8 idle nodes"
t_like "$(field "$REAL" .planned_cluster)" '^(local|open)$' \
    "... planned on local or open, never on sim"
api DELETE "/v1/jobs/$HL" >/dev/null
wait_for 'ended "$REAL"' 30
t_is "$(field "$REAL" .state)/$(field "$REAL" .cluster)" completed/local \
    "once local is free the job runs there"
t_is "$(cat "$(field "$REAL" .stdout)" 2>/dev/null)" "ran for real" \
    "... and it really ran"
api DELETE "/v1/jobs/$HO" >/dev/null

# ---- a start by hand -----------------------------------------------------------
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "the built-in scheduler switched off"
submit '{"name": "byhand", "command": ["/bin/true"], "request": {"walltime_s": 30}}'
BH=$JOB
api POST "/v1/jobs/$BH/start" '{"cluster": "sim", "nodes": ["n1"]}' >/dev/null
t_is "$STATUS" 409 "a job without a pin started by hand on sim: 409"
t_is "$(jget "$BODY" .error.message)" \
    "cannot start job $BH on cluster sim: cluster sim takes only the jobs that name it (request.cluster)" \
    "... the message says why"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
wait_for 'ended "$BH"' 30
t_like "$(field "$BH" .state)/$(field "$BH" .cluster)" '^completed/(local|open)$' \
    "switched on again, the scheduler runs it on a cluster that takes it"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
