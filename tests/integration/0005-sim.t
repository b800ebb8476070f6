#!/usr/bin/env bash
# 0005-sim.t - a simulated cluster of 1,000 nodes at speed 1000: all nodes
# listed, 50 jobs complete, exit codes come through, a 2-node job gets two
# nodes, and nothing is ever over-committed (sampled all along the run).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# count_state NAME_PREFIX STATE: jobs named NAME_PREFIX* in STATE.
count_state() {
    api GET "/v1/jobs?state=$2" >/dev/null
    py "len([j for j in d['items'] if j['name'].startswith('$1')])" "$BODY"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster big]
adaptor = sim
nodes = 1000
cpus_per_node = 32
memory_mb = 131072
speed = 1000
poll_s = 0.2

[cluster tiny]
adaptor = sim
nodes = 2
cpus_per_node = 32
memory_mb = 131072
speed = 1000
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

api GET '/v1/nodes?cluster=big' >/dev/null
t_is "$STATUS" 200 "GET /v1/nodes?cluster=big"
t_is "$(py '[len(d["items"]), len(set(n["id"] for n in d["items"])), sorted(set(n["cluster"] for n in d["items"]))]' "$BODY")" \
    '[1000, 1000, ["big"]]' "1,000 distinct nodes of cluster big"
t_is "$(py 'sorted(set((n["state"], n["cpus"], n["cpus_alloc"]) for n in d["items"]))' "$BODY")" \
    '[["idle", 32, 0]]' "all idle, 32 cpus, none allocated"
t_is "$(py 'sorted(int(n["name"][1:]) for n in d["items"]) == list(range(1, 1001))' "$BODY")" \
    true "named n1 to n1000"
api GET /v1/clusters/big >/dev/null
t_is "$(py '[d["nodes"], d["state"]]' "$BODY")" '[1000, "up"]' "cluster big: 1000 nodes, up"

# The sampler: GET /v1/nodes and /v1/jobs all along the run, checking that
# no node shows more cpus allocated than it has, and that the jobs Loom
# holds active on a node never ask for more cpus than the node has. After
# each sample it writes what it found so far to sampler.json.now, so that
# the test can wait until it has seen what it must.
cat >"$T/sampler.py" <<'EOF'
import json, os, sys, time, urllib.request
url, token, stop, out = sys.argv[1:5]
H = {"Authorization": "Bearer " + token}
def get(path):
    req = urllib.request.Request(url + path, headers=H)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())
cpus = {}
samples = 0; bad = []; max_tiny = 0; max_alloc = 0; errors = 0
while not os.path.exists(stop):
    try:
        nodes = get("/v1/nodes")["items"]
        jobs = get("/v1/jobs")["items"]
    except Exception as e:
        errors += 1
        time.sleep(0.05)
        continue
    samples += 1
    for n in nodes:
        cpus[n["id"]] = n["cpus"]
        max_alloc = max(max_alloc, n["cpus_alloc"])
        if n["cpus_alloc"] > n["cpus"]:
            bad.append("node %s: cpus_alloc %d > cpus %d" % (n["id"], n["cpus_alloc"], n["cpus"]))
    use = {}
    tiny = 0
    for j in jobs:
        if j["state"] not in ("starting", "running", "suspended"):
            continue
        tiny += j["cluster"] == "tiny"
        for name in j["nodes"]:
            k = "%s/%s" % (j["cluster"], name)
            use[k] = use.get(k, 0) + j["request"]["cpus_per_node"]
    max_tiny = max(max_tiny, tiny)
    for k, v in use.items():
        if v > cpus.get(k, 0):
            bad.append("jobs active on %s ask for %d cpus of %d" % (k, v, cpus.get(k, 0)))
    now = {"samples": samples, "bad": bad[:20], "n_bad": len(bad),
           "max_tiny": max_tiny, "max_alloc": max_alloc, "errors": errors}
    json.dump(now, open(out + ".now.tmp", "w"))
    os.rename(out + ".now.tmp", out + ".now")
    time.sleep(0.05)
json.dump({"samples": samples, "bad": bad[:20], "n_bad": len(bad),
           "max_tiny": max_tiny, "max_alloc": max_alloc, "errors": errors},
          open(out, "w"))
EOF
# sampled KEY: what the sampler found so far ("" before its first sample).
sampled() {
    py "d['$1']" "$(cat "$T/sampler.json.now" 2>/dev/null)" 2>/dev/null
}
python3 "$T/sampler.py" "$LOOM_URL" "$TOKEN" "$T/sampler.stop" "$T/sampler.json" &
SAMPLER=$!
t_cleanup 'touch "$T/sampler.stop"; wait_dead "$SAMPLER" 50 || kill "$SAMPLER" 2>/dev/null'

# ---- 50 jobs of 60 simulated seconds -----------------------------------------
n=0
for ((i = 1; i <= 50; i++)); do
    submit "{\"name\": \"fifty-$i\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"big\"}, \"env\": {\"LOOM_SIM_RUNTIME_S\": \"60\"}}"
    [ -n "$JOB" ] && n=$((n + 1))
done
t_is "$n" 50 "50 jobs accepted"
wait_for '[ "$(count_state fifty- completed)" = 50 ]' 30
api GET '/v1/jobs?cluster=big' >/dev/null
t_is "$(py 'sorted(set((j["state"], j["exit_code"], len(j["nodes"])) for j in d["items"] if j["name"].startswith("fifty-")))' "$BODY")" \
    '[["completed", 0, 1]]' "all 50 completed with exit code 0, on one node each"
t_is "$(py 'len([j for j in d["items"] if j["name"].startswith("fifty-")])' "$BODY")" 50 \
    "all 50 ran on cluster big"
t_is "$(py 'all(j["start_time"] and j["end_time"] >= j["start_time"] for j in d["items"])' "$BODY")" \
    true "each has a start and an end time"

# ---- exit code ---------------------------------------------------------------
submit '{"name": "three", "command": ["/bin/true"], "request": {"cluster": "big"}, "env": {"LOOM_SIM_RUNTIME_S": "10", "LOOM_SIM_EXIT_CODE": "3"}}'
THREE=$JOB
wait_for 'api GET "/v1/jobs/$THREE" >/dev/null; [ "$(jget "$BODY" .state)" = failed ]' 30
api GET "/v1/jobs/$THREE" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 3]' \
    "LOOM_SIM_EXIT_CODE=3: failed with exit_code 3"

# ---- 2 nodes x 32 cpus ---------------------------------------------------------
# 10,000 simulated seconds: 10 s, for the sampler to see its nodes full.
submit '{"name": "wide", "command": ["/bin/true"], "request": {"cluster": "big", "nodes": 2, "cpus_per_node": 32, "walltime_s": 20000}, "env": {"LOOM_SIM_RUNTIME_S": "10000"}}'
WIDE=$JOB
wait_for 'api GET "/v1/jobs/$WIDE" >/dev/null; [ "$(jget "$BODY" .state)" = running ]' 30
api GET "/v1/jobs/$WIDE" >/dev/null
t_is "$(py '[d["state"], len(d["nodes"]), len(set(d["nodes"]))]' "$BODY")" \
    '["running", 2, 2]' "2 nodes x 32 cpus: runs on 2 distinct nodes"
WN=$(py '" ".join(d["nodes"])' "$BODY")
# The nodes show it from the next poll of the cluster on.
both_full() {
    local n ok=0
    for n in $WN; do
        api GET "/v1/nodes/big/$n" >/dev/null
        [ "$(py '[d["cpus_alloc"], d["state"]]' "$BODY")" = '[32, "allocated"]' ] && ok=$((ok + 1))
    done
    echo $ok
}
wait_for '[ "$(both_full)" = 2 ]' 30
t_is "$(both_full)" 2 "both of its nodes show 32 of 32 cpus allocated"
wait_for '[ "$(sampled max_alloc)" = 32 ]' 30
wait_for 'api GET "/v1/jobs/$WIDE" >/dev/null; [ "$(jget "$BODY" .state)" = completed ]' 60
t_is "$(jget "$BODY" .state)" completed "the 2-node job completes"

# ---- contention: 12 whole-node jobs on a 2-node cluster --------------------------
n=0
for ((i = 1; i <= 12; i++)); do
    submit "{\"name\": \"tiny-$i\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"tiny\", \"cpus_per_node\": 32}, \"env\": {\"LOOM_SIM_RUNTIME_S\": \"1000\"}}"
    [ -n "$JOB" ] && n=$((n + 1))
done
t_is "$n" 12 "12 whole-node jobs for the 2-node cluster accepted"
# Six waves of 1,000 simulated seconds: the sampler sees some of them.
wait_for '[ "$(sampled max_tiny)" -ge 1 ] 2>/dev/null' 30
wait_for '[ "$(count_state tiny- completed)" = 12 ]' 60
t_is "$(count_state tiny- completed)" 12 "all 12 completed, two at a time"

wait_for '[ "$(sampled samples)" -ge 20 ] 2>/dev/null' 60
touch "$T/sampler.stop"
wait_dead "$SAMPLER" 100
wait "$SAMPLER"
S=$(cat "$T/sampler.json" 2>/dev/null)
t_diag "sampler: $S"
t_like "$(py 'd["samples"]' "$S")" '^([2-9][0-9]|[1-9][0-9]{2,})$' "the sampler took 20 or more samples"
t_is "$(py 'd["n_bad"]' "$S")" 0 "no over-commit seen in any sample" ||
    t_diag "$(py '"\n".join(d["bad"])' "$S")"
t_like "$(py 'd["max_tiny"]' "$S")" '^[12]$' "at most 2 jobs active at once on the 2-node cluster"
t_is "$(py 'd["max_alloc"]' "$S")" 32 "nodes were seen fully allocated (32 cpus)"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
