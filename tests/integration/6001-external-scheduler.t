#!/usr/bin/env bash
# 6001-external-scheduler.t - the built-in scheduler switched off
# ([loomd] scheduler = false) and an external one, tests/extsched.py, in
# charge through the scheduler interface (GET /v1/nodes, /v1/jobs,
# /v1/reservations, /v1/queues; POST /v1/jobs/{id}/start), on a local
# cluster (2 nodes) and a sim cluster (16 nodes): 20 jobs of mixed shapes
# stay pending until it runs, then all complete, each started once, the
# local ones really ran (their output), pins and features honoured, and no
# node over-committed in any sample taken meanwhile. A start on a busy node
# answers 409 and the external scheduler goes on past it; switching the
# built-in scheduler on hands the remaining jobs back to it.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

EXTSCHED=$LOOM_TOP_SRCDIR/tests/extsched.py

# jobs_json PREFIX: [{id, name, state, cluster, nodes, exit_code, ...}] of
# the jobs whose name starts with PREFIX (every page).
jobs_json() {
    api GET "/v1/jobs?limit=100000" >/dev/null
    py "[j for j in d['items'] if j['name'].startswith('$1')]" "$BODY"
}
# count_state PREFIX STATE
count_state() {
    api GET "/v1/jobs?state=$2&limit=100000" >/dev/null
    py "len([j for j in d['items'] if j['name'].startswith('$1')])" "$BODY"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2

[cluster sim]
adaptor = sim
nodes = 16
cpus_per_node = 4
memory_mb = 8192
gpus = 1
features = ssd
speed = 20
poll_s = 0.2
unpinned_jobs = yes
EOF
# The built-in scheduler off from the start: [loomd] scheduler = false.
sed -i '/^\[loomd\]$/a scheduler = false' "$T/loom.conf"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
# extsched.py runs with a scheduler token: that role starts any job.
token_for extsched scheduler >"$T/token" || t_bail "no scheduler token"
chmod 0600 "$T/token"

api GET /v1/runtime >/dev/null
t_is "$(py 'd["scheduler"]["enabled"]' "$BODY")" false \
    "[loomd] scheduler = false: GET /v1/runtime says the built-in scheduler is off"
wait_for '[ "$(api GET /v1/nodes >/dev/null; py "len(d[\"items\"])" "$BODY")" = 18 ]' 30
api GET /v1/nodes >/dev/null
t_is "$(py 'len(d["items"])' "$BODY")" 18 "GET /v1/nodes: 2 local and 16 sim nodes"

# ---- 20 jobs of mixed shapes -------------------------------------------------
# 6 local 1-node jobs and one 2-node local job that leave their output;
# 8 sim jobs of 1 to 4 nodes and 1 to 4 cpus; 3 unpinned jobs that need the
# feature ssd (only sim has it); 2 sim jobs with a gpu each.
LOCAL_CMD='["/bin/sh","-c","echo ran $LOOM_JOB_ID on $LOOM_NODE; sleep 1"]'
n=0
for i in 1 2 3 4 5 6; do
    submit "{\"name\":\"x-local-$i\",\"command\":$LOCAL_CMD,\"request\":{\"cluster\":\"local\",\"walltime_s\":60}}" && n=$((n + 1))
done
submit "{\"name\":\"x-local-pair\",\"command\":$LOCAL_CMD,\"request\":{\"cluster\":\"local\",\"nodes\":2,\"walltime_s\":60}}" && n=$((n + 1))
for spec in 1:1:20 2:2:40 4:4:60 3:1:20 1:4:40 2:3:60 4:2:20 1:2:40; do
    IFS=: read -r nn cc rt <<<"$spec"
    submit "{\"name\":\"x-sim-$nn-$cc\",\"command\":[\"true\"],\"request\":{\"cluster\":\"sim\",\"nodes\":$nn,\"cpus_per_node\":$cc,\"memory_mb\":1000,\"walltime_s\":600},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"$rt\"}}" && n=$((n + 1))
done
for i in 1 2 3; do
    submit "{\"name\":\"x-ssd-$i\",\"command\":[\"true\"],\"request\":{\"features\":[\"ssd\"],\"cpus_per_node\":2,\"walltime_s\":600},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"30\"}}" && n=$((n + 1))
done
for i in 1 2; do
    submit "{\"name\":\"x-gpu-$i\",\"command\":[\"true\"],\"request\":{\"cluster\":\"sim\",\"gpus\":1,\"walltime_s\":600},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"30\"}}" && n=$((n + 1))
done
t_is "$n" 20 "20 jobs accepted"

# Several polls of both clusters later, all still wait.
polls_pass local 2 && polls_pass sim 2
t_is "$?/$(count_state x- pending)" 0/20 "with the built-in scheduler off, all 20 stay pending"

# ---- the sampler: over-commit seen from the API, all along the run ----------
cat >"$T/sampler.py" <<'EOF'
import json, os, sys, time, urllib.request
url, token, stop, out = sys.argv[1:5]
H = {"Authorization": "Bearer " + token}
def get(path):
    req = urllib.request.Request(url + path, headers=H)
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())
samples = 0; bad = []; errors = 0; max_active = 0; cap = {}
while not os.path.exists(stop):
    try:
        nodes = get("/v1/nodes")["items"]
        jobs = get("/v1/jobs?limit=100000")["items"]
    except Exception:
        errors += 1
        time.sleep(0.05)
        continue
    samples += 1
    for n in nodes:
        cap[n["id"]] = (n["cpus"], n.get("memory_mb", 0), n.get("gpus", 0))
        for a, b in (("cpus_alloc", "cpus"), ("memory_alloc_mb", "memory_mb"),
                     ("gpus_alloc", "gpus")):
            if a in n and n[a] > n[b]:
                bad.append("node %s: %s %d > %s %d" % (n["id"], a, n[a], b, n[b]))
    use = {}
    active = 0
    for j in jobs:
        if j["state"] not in ("starting", "running", "suspended"):
            continue
        active += 1
        r = j["request"]
        for name in j["nodes"]:
            k = "%s/%s" % (j["cluster"], name)
            u = use.setdefault(k, [0, 0, 0])
            u[0] += r["cpus_per_node"]; u[1] += r["memory_mb"]; u[2] += r["gpus"]
    max_active = max(max_active, active)
    for k, u in use.items():
        c = cap.get(k, (0, 0, 0))
        if u[0] > c[0] or u[1] > c[1] or u[2] > c[2]:
            bad.append("jobs active on %s ask for %s of %s" % (k, u, list(c)))
    with open(out + ".now.tmp", "w") as f:
        f.write(str(samples))
    os.rename(out + ".now.tmp", out + ".now")
    time.sleep(0.05)
json.dump({"samples": samples, "bad": bad[:20], "n_bad": len(bad),
           "errors": errors, "max_active": max_active}, open(out, "w"))
EOF
python3 "$T/sampler.py" "$LOOM_URL" "$TOKEN" "$T/sampler.stop" "$T/sampler.json" &
SAMPLER=$!
t_cleanup 'touch "$T/sampler.stop"; wait_dead "$SAMPLER" 50 || kill "$SAMPLER" 2>/dev/null'

# ---- the external scheduler runs them all ------------------------------------
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/token" --interval 0.3 \
    --until-idle --max-time 120 >"$T/extsched.out" 2>"$T/extsched.err" &
EXT=$!
t_cleanup 'alive "$EXT" && kill "$EXT" 2>/dev/null'
wait_for '! alive "$EXT"' 130
wait "$EXT"
rc=$?
t_is "$rc" 0 "extsched.py ran until nothing was left and exited 0" ||
    t_diag "stderr: $(tail -n 20 "$T/extsched.err")" "stdout: $(tail -n 20 "$T/extsched.out")"
wait_for '[ "$(cat "$T/sampler.json.now" 2>/dev/null)" -ge 10 ] 2>/dev/null' 60
touch "$T/sampler.stop"
wait_dead "$SAMPLER" 100
wait "$SAMPLER"

J=$(jobs_json x-)
t_is "$(py 'sorted(set((j["state"], j["exit_code"]) for j in d))' "$J")" '[["completed", 0]]' \
    "every job completed with exit code 0" ||
    t_diag "$(py '"\n".join("%s %s %s %s" % (j["id"], j["name"], j["state"], j["reason"]) for j in d if j["state"] != "completed")' "$J")"
t_is "$(py 'len(d)' "$J")" 20 "... all 20 of them"
# Started once: one start line per job, no requeue.
STARTS=$(grep -c '^start job ' "$T/extsched.out")
t_is "$STARTS" 20 "extsched.py started 20 jobs (one 'start job' line each)" ||
    t_diag "$(cat "$T/extsched.out")"
t_is "$(grep '^start job ' "$T/extsched.out" | awk '{print $3}' | sort | uniq -d | paste -sd' ')" "" \
    "no job was started twice"
t_is "$(py 'sorted(set(j.get("requeues", 0) for j in d))' "$J")" '[0]' "no job went back to the queue"
t_is "$(grep -c '^refused job ' "$T/extsched.out")" 0 "loomd refused none of its starts (it never over-commits)" ||
    t_diag "$(grep '^refused' "$T/extsched.out")"
# Where they ran.
t_is "$(py 'sorted(set(j["cluster"] for j in d if j["name"].startswith("x-local")))' "$J")" '["local"]' \
    "the local jobs ran on local"
t_is "$(py 'sorted(set(j["cluster"] for j in d if j["name"].startswith(("x-sim", "x-gpu", "x-ssd"))))' "$J")" '["sim"]' \
    "the sim, gpu and ssd jobs ran on sim (the only cluster with ssd)"
t_is "$(py 'all(len(j["nodes"]) == len(set(j["nodes"])) == j["request"]["nodes"] for j in d)' "$J")" true \
    "each ran on as many distinct nodes as it asked for"
# The local jobs really ran: their output, once, from the node Loom shows.
ok=0 bad=
for id in $(py '" ".join(j["id"] for j in d if j["name"].startswith("x-local-") and j["name"] != "x-local-pair")' "$J"); do
    job "$id"
    out=$(cat "$(jget "$BODY" .stdout)" 2>&1)
    if [ "$out" = "ran $id on $(jget "$BODY" .nodes.0)" ]; then
        ok=$((ok + 1))
    else
        bad="$bad [$id: '$out']"
    fi
done
t_is "$ok" 6 "the 6 local jobs left their output once, from the node Loom chose" || t_diag "$bad"
id=$(py '[j["id"] for j in d if j["name"] == "x-local-pair"][0]' "$J")
job "$id"
t_like "$(cat "$(jget "$BODY" .stdout)" 2>&1)" "^ran $id on n[12]\$" \
    "the 2-node local job ran too (its output)"
t_is "$(jget "$BODY" .nodes)" '["n1", "n2"]' "... on both local nodes"

S=$(cat "$T/sampler.json" 2>/dev/null)
t_diag "sampler: $S"
t_like "$(py 'd["samples"]' "$S")" '^([1-9][0-9]+)$' "the sampler took 10 or more samples"
t_is "$(py 'd["n_bad"]' "$S")" 0 "no node over-committed in any sample (cpus, memory, gpus)" ||
    t_diag "$(py '"\n".join(d["bad"])' "$S")"
# Side by side, from their times (whole seconds: a start before another's
# end, both rounded down, is an overlap).
t_is "$(py 'any(a["start_time"] < b["end_time"] and b["start_time"] < a["end_time"] for a in d for b in d if a["id"] < b["id"] and a["start_time"] and b["start_time"] and a["end_time"] and b["end_time"])' "$J")" \
    true "jobs ran side by side (their start and end times overlap; the sampler saw at most $(py 'd["max_active"]' "$S") at once)"

# ---- a start on a busy node: 409; the external scheduler goes on past it ------
# They run until they are cancelled at the end (sleep 600).
submit '{"name":"busy-a","command":["sleep","600"],"request":{"cluster":"local","walltime_s":1200}}'
BA=$JOB
submit '{"name":"busy-b","command":["sleep","600"],"request":{"cluster":"local","walltime_s":1200}}'
BB=$JOB
submit '{"name":"busy-c","command":["/bin/sh","-c","echo c ran"],"request":{"cluster":"local","walltime_s":60}}'
BC=$JOB
api POST "/v1/jobs/$BA/start" '{"cluster":"local","nodes":["n1"]}' >/dev/null
t_is "$STATUS" 202 "start a long job on local/n1 by hand: 202" || t_diag "$BODY"
api POST "/v1/jobs/$BB/start" '{"cluster":"local","nodes":["n2"]}' >/dev/null
t_is "$STATUS" 202 "start another on local/n2: 202" || t_diag "$BODY"
wait_for '[ "$(field "$BA" .state)" = running ] && [ "$(field "$BB" .state)" = running ]' 30
wait_for '[ "$(api GET "/v1/nodes?cluster=local" >/dev/null; py "[n[\"cpus_alloc\"] for n in d[\"items\"]]" "$BODY")" = "[1, 1]" ]' 30
api POST "/v1/jobs/$BC/start" '{"cluster":"local","nodes":["n1"]}' >/dev/null
t_is "$STATUS" 409 "a start on the busy local/n1: 409" || t_diag "$BODY"
t_is "$(jget "$BODY" .error.code)" conflict "... code conflict"
t_is "$(field "$BC" .state)" pending "... and the job is still pending"
# A sim job waits too; with --assume-idle extsched.py tries busy-c on n1,
# is refused, and still starts the sim job.
submit '{"name":"after-409","command":["true"],"request":{"cluster":"sim","walltime_s":60},"env":{"LOOM_SIM_RUNTIME_S":"20"}}'
A409=$JOB
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/token" --once --assume-idle \
    >"$T/once.out" 2>"$T/once.err"
t_is "$?" 0 "extsched.py --once exits 0 although loomd refused a start"
t_like "$(grep "^refused job $BC " "$T/once.out")" "^refused job $BC on local: n1: HTTP 409 conflict: " \
    "it prints the refusal (HTTP 409) of job $BC" || t_diag "$(cat "$T/once.out" "$T/once.err")"
t_is "$(grep -c "^start job $A409 on sim: " "$T/once.out")" 1 "... and goes on to start the sim job $A409"
t_is "$(field "$BC" .state)" pending "the refused job is still pending"

# ---- a broken request: clear error, exit status ------------------------------
python3 "$EXTSCHED" --url "http://127.0.0.1:1" --token-file "$T/token" --once \
    >"$T/dead.out" 2>"$T/dead.err"
rc=$?
t_is "$rc" 1 "extsched.py --once against no daemon exits 1"
t_like "$(cat "$T/dead.err")" "^extsched: cannot read the fabric: GET /v1/nodes: no answer from http://127.0.0.1:1" \
    "... saying what failed"
echo bogus >"$T/bad.token"
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/bad.token" --once >/dev/null 2>"$T/bad.err"
t_is "$?" 1 "a bad token: exit 1"
t_like "$(cat "$T/bad.err")" "GET /v1/nodes: HTTP 401 unauthenticated" "... naming the 401"

# ---- reservations: loomd refuses a start into one; extsched.py honours them ----
# Its window opens in 20 s: the test looks at what waits for it before.
RS_ISO=$(date -u -d "@$(($(date +%s) + 20))" +%Y-%m-%dT%H:%M:%SZ)
api POST /v1/reservations "{\"cluster\":\"sim\",\"nodes\":[\"sim/n16\"],\"start\":\"$RS_ISO\",\"duration_s\":60}" >/dev/null
t_is "$STATUS" 201 "reserve sim/n16 from 20 s from now for 60 s" || t_diag "$BODY"
RV=$(jget "$BODY" .id)
submit '{"name":"rv-all","command":["true"],"request":{"cluster":"sim","nodes":16,"walltime_s":600},"env":{"LOOM_SIM_RUNTIME_S":"20"}}'
RALL=$JOB
submit '{"name":"rv-one","command":["true"],"request":{"cluster":"sim","walltime_s":600},"env":{"LOOM_SIM_RUNTIME_S":"20"}}'
RONE=$JOB
submit "{\"name\":\"rv-in\",\"command\":[\"true\"],\"request\":{\"cluster\":\"sim\",\"walltime_s\":30,\"reservation\":\"$RV\"},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"20\"}}"
RIN=$JOB
api POST "/v1/jobs/$RONE/start" '{"cluster":"sim","nodes":["n16"]}' >/dev/null
t_is "$STATUS" 409 "a start by hand of a 600 s job on sim/n16, reserved from $RS_ISO: 409" || t_diag "$BODY"
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/token" --once >"$T/rv.out" 2>"$T/rv.err"
t_is "$?" 0 "extsched.py --once with a reservation ahead"
t_is "$(grep -c "^refused" "$T/rv.out")" 0 "... it tries no reserved node (loomd refuses nothing)" ||
    t_diag "$(cat "$T/rv.out")"
t_is "$(grep -c "^start job $RALL " "$T/rv.out")/$(field "$RALL" .state)" 0/pending \
    "... the 16-node job waits (one of the 16 nodes is reserved)"
t_like "$(grep "^start job $RONE " "$T/rv.out")" "^start job $RONE on sim: n([1-9]|1[0-5])\$" \
    "... the 1-node job starts elsewhere than sim/n16"
t_is "$(grep -c "^start job $RIN " "$T/rv.out")" 0 "... the job of the reservation waits for its window"
# The window opens at its start time. (Its state turns active only in a
# cycle of the built-in scheduler, which is off here.)
wait_for '[ "$(date +%s)" -ge "$(epoch "$RS_ISO")" ]' 60
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/token" --once >"$T/rv2.out" 2>"$T/rv2.err"
t_is "$(grep "^start job $RIN " "$T/rv2.out")" "start job $RIN on sim: n16" \
    "once the window is open, extsched.py starts the job of the reservation on sim/n16" ||
    t_diag "$(cat "$T/rv2.out" "$T/rv2.err")"
t_is "$(grep -c "^start job $RALL " "$T/rv2.out")" 0 "... and still not the 16-node job"
wait_for '[ "$(field "$RIN" .state)" = completed ]' 30
t_is "$(field "$RIN" .state)/$(field "$RIN" .nodes)" 'completed/["n16"]' "the job of the reservation ran on n16"
api DELETE "/v1/jobs/$RALL" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "cancel the 16-node job"
api DELETE "/v1/reservations/$RV" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "cancel the reservation"

# ---- hand the rest back to the built-in scheduler ------------------------------
for i in 1 2 3 4; do
    submit "{\"name\":\"back-$i\",\"command\":[\"true\"],\"request\":{\"cluster\":\"sim\",\"nodes\":2,\"walltime_s\":600},\"env\":{\"LOOM_SIM_RUNTIME_S\":\"20\"}}"
done
polls_pass sim 2
t_is "$?/$(count_state back- pending)" 0/4 "4 more jobs wait while the built-in scheduler is off (polls later)"
api POST /v1/runtime/scheduler '{"enabled":true}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .enabled)" 200/true "POST /v1/runtime/scheduler {\"enabled\":true}: on"
api DELETE "/v1/jobs/$BA" >/dev/null
t_is "$STATUS" 202 "cancel the long job on local/n1"
wait_for '[ "$(count_state back- completed)" = 4 ]' 30
t_is "$(count_state back- completed)" 4 "the built-in scheduler runs the 4 jobs left to it"
wait_for '[ "$(field "$BC" .state)" = completed ]' 30
t_is "$(field "$BC" .state)/$(field "$BC" .cluster)" completed/local \
    "... and the job loomd refused on busy n1 (on a node that was free)"
t_is "$(cat "$(field "$BC" .stdout)" 2>&1)" "c ran" "... which really ran"
wait_for '[ "$(field "$A409" .state)" = completed ]' 30
t_is "$(field "$A409" .state)" completed "the sim job extsched.py started past the 409 completed"
api DELETE "/v1/jobs/$BB" >/dev/null
wait_for '[ "$(field "$BB" .state)" = cancelled ] && [ "$(field "$BA" .state)" = cancelled ]' 30
t_is "$(field "$BA" .state)/$(field "$BB" .state)" cancelled/cancelled "the two long jobs end cancelled"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
