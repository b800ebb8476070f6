#!/usr/bin/env bash
# 0003-endpoints.t - the read endpoints with their filters and paging, the
# runtime endpoints (scheduler switch, reload, SIGHUP, shutdown), node state
# and /metrics, against a local and a sim cluster.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 4 1)

[cluster simA]
adaptor = sim
nodes = 8
cpus_per_node = 4
memory_mb = 8192
speed = 1000
poll_s = 0.2
EOF
# the users' jobs run as the test's account, $T_USER (no privilege)
for u in alice bob; do map_account "$u" "$T_USER"; done
map_account '/^r&d[[:blank:]]team$/' "$T_USER"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
ALICE=$(token_for alice user) || t_bail "no user token"
BOB=$(token_for bob user) || t_bail "no user token"

# ---- clusters ----------------------------------------------------------------
wait_for 'api GET /v1/clusters >/dev/null; [ "$(py "sorted(c[\"state\"] for c in d[\"items\"])" "$BODY")" = "[\"up\", \"up\"]" ]' 30
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "GET /v1/clusters"
t_is "$(py 'sorted(c["name"] for c in d["items"])' "$BODY")" '["local", "simA"]' \
    "both configured clusters are listed"
t_is "$(py '[c["state"] for c in d["items"]]' "$BODY")" '["up", "up"]' \
    "both are up"
api GET /v1/clusters/local >/dev/null
t_is "$STATUS" 200 "GET /v1/clusters/local"
t_is "$(py '[d["name"], d["adaptor"], d["nodes"], d["state"]]' "$BODY")" \
    '["local", "local", 4, "up"]' "local: name, adaptor, nodes, state"
api GET /v1/clusters/simA >/dev/null
t_is "$(py '[d["name"], d["adaptor"], d["nodes"]]' "$BODY")" \
    '["simA", "sim", 8]' "simA: name, adaptor, nodes"

# ---- nodes -------------------------------------------------------------------
api GET /v1/nodes >/dev/null
t_is "$STATUS" 200 "GET /v1/nodes"
t_is "$(jlen "$BODY" .items)" 12 "12 nodes in all clusters"
t_is "$(py 'sorted(set(n["cluster"] for n in d["items"]))' "$BODY")" \
    '["local", "simA"]' "nodes of both clusters"
api GET '/v1/nodes?cluster=simA' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set(n["cluster"] for n in d["items"]))]' "$BODY")" \
    '[8, ["simA"]]' "?cluster=simA: its 8 nodes only"
api GET '/v1/nodes?cluster=local' >/dev/null
t_is "$(py 'sorted(n["id"] for n in d["items"])' "$BODY")" \
    '["local/n1", "local/n2", "local/n3", "local/n4"]' "?cluster=local: n1..n4"
api GET '/v1/nodes?state=idle' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set(n["state"] for n in d["items"]))]' "$BODY")" \
    '[12, ["idle"]]' "?state=idle: all 12, all idle"
api GET '/v1/nodes?state=allocated' >/dev/null
t_is "$(jlen "$BODY" .items)" 0 "?state=allocated: none"
api GET /v1/nodes/local/n1 >/dev/null
t_is "$STATUS" 200 "GET /v1/nodes/local/n1"
t_is "$(py '[d["id"], d["cluster"], d["name"], d["cpus"], d["memory_mb"], d["state"]]' "$BODY")" \
    '["local/n1", "local", "n1", 1, 1024, "idle"]' "local/n1: its fields"
api GET /v1/nodes/simA/n8 >/dev/null
t_is "$(py '[d["id"], d["cpus"], d["memory_mb"]]' "$BODY")" \
    '["simA/n8", 4, 8192]' "simA/n8: its fields"

# ---- queues ------------------------------------------------------------------
api GET /v1/queues >/dev/null
t_is "$STATUS" 200 "GET /v1/queues"
t_is "$(py 'sorted(set(q["cluster"] for q in d["items"]))' "$BODY")" \
    '["local", "simA"]' "queues of both clusters"
api GET '/v1/queues?cluster=local' >/dev/null
t_is "$(py '[(q["id"], q["cluster"], q["state"], q["nodes"]) for q in d["items"]]' "$BODY")" \
    '[["local/default", "local", "open", 4]]' "?cluster=local: its one queue"
api GET /v1/queues/local/default >/dev/null
t_is "$(py 'd["id"]' "$BODY")" local/default "GET /v1/queues/local/default"

# ---- jobs: filters and paging ----------------------------------------------
TOKEN=$ALICE
IDS=()
for i in 1 2 3; do
    submit "{\"name\": \"a$i\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"local\"}}" &&
        IDS+=("$JOB")
done
TOKEN=$BOB
for i in 1 2; do
    submit "{\"name\": \"b$i\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"simA\"}, \"env\": {\"LOOM_SIM_RUNTIME_S\": \"1\"}}" &&
        IDS+=("$JOB")
done
submit '{"name": "b-fails", "command": ["/bin/false"], "request": {"cluster": "local"}}' &&
    IDS+=("$JOB")
BFAIL=$JOB
TOKEN=$ADMIN
t_is "${#IDS[@]}" 6 "six jobs submitted"
all_ended() {
    local id
    for id in "${IDS[@]}"; do
        case $(job_state "$id") in completed | failed) ;; *) return 1 ;; esac
    done
}
wait_for all_ended 30
t_ok $? "all six jobs ended"

api GET /v1/jobs >/dev/null
t_is "$(py 'sorted(int(j["id"]) for j in d["items"])' "$BODY")" \
    "$(py 'sorted(d)' "[$(IFS=,; echo "${IDS[*]}")]")" "GET /v1/jobs lists the six"
t_is "$(py '"next" in d' "$BODY")" false "no next when all fit"
api GET '/v1/jobs?owner=alice' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set(j["owner"] for j in d["items"]))]' "$BODY")" \
    '[3, ["alice"]]' "?owner=alice: her three"
api GET '/v1/jobs?owner=bob' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set(j["owner"] for j in d["items"]))]' "$BODY")" \
    '[3, ["bob"]]' "?owner=bob: his three"
api GET '/v1/jobs?cluster=simA' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set(j["cluster"] for j in d["items"]))]' "$BODY")" \
    '[2, ["simA"]]' "?cluster=simA: the two sim jobs"
api GET '/v1/jobs?state=failed' >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$BFAIL\"]" \
    "?state=failed: the /bin/false job only"
api GET '/v1/jobs?state=completed&owner=bob' >/dev/null
t_is "$(py '[len(d["items"]), sorted(set((j["state"], j["owner"]) for j in d["items"]))]' "$BODY")" \
    '[2, [["completed", "bob"]]]' "?state=completed&owner=bob: two"

api GET '/v1/jobs?limit=2' >/dev/null
t_is "$(jlen "$BODY" .items)" 2 "?limit=2: two items"
NEXT=$(jget "$BODY" .next 2>/dev/null)
t_like "$NEXT" '^/v1/jobs\?' "?limit=2: a next link"
SEEN=$(py '[j["id"] for j in d["items"]]' "$BODY")
pages=1
while [ -n "$NEXT" ] && [ $pages -lt 10 ]; do
    api GET "$NEXT" >/dev/null
    [ "$STATUS" = 200 ] || { t_diag "GET $NEXT: $STATUS $BODY"; break; }
    SEEN=$(py 'd[0] + [j["id"] for j in d[1]["items"]]' "[$SEEN, $BODY]")
    NEXT=$(jget "$BODY" .next 2>/dev/null)
    pages=$((pages + 1))
done
t_is "$pages" 3 "six jobs in pages of two: three pages"
t_is "$(py 'sorted(int(i) for i in d)' "$SEEN")" \
    "$(py 'sorted(d)' "[$(IFS=,; echo "${IDS[*]}")]")" \
    "following next yields every job once"
api GET '/v1/jobs?owner=alice&limit=2' >/dev/null
NEXT=$(jget "$BODY" .next 2>/dev/null)
api GET "$NEXT" >/dev/null
t_is "$(py '[len(d["items"]), [j["owner"] for j in d["items"]], "next" in d]' "$BODY")" \
    '[1, ["alice"], false]' "paging keeps the owner filter"

# An owner whose name needs escaping in a URL: the next link must keep it.
TOKEN=$(token_for 'r&d team' user) || t_bail "no token for r&d team"
for i in 1 2 3; do
    submit "{\"name\": \"rd$i\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"simA\"}}"
done
TOKEN=$ADMIN
api GET '/v1/jobs?owner=r%26d%20team&limit=2' >/dev/null
t_is "$(py '[[j["owner"] for j in d["items"]], "next" in d]' "$BODY")" \
    '[["r&d team", "r&d team"], true]' "?owner=r%26d%20team&limit=2: two of the three, and next"
NEXT=$(jget "$BODY" .next 2>/dev/null)
api GET "$NEXT" >/dev/null
t_is "$STATUS $(py '[[j["name"] for j in d["items"]], "next" in d]' "$BODY" 2>/dev/null)" \
    '200 [["rd3"], false]' "following next keeps an owner that needs escaping" ||
    t_diag "next was: $NEXT"

api GET "/v1/jobs/${IDS[0]}" >/dev/null
t_is "$STATUS" 200 "GET /v1/jobs/ID"
t_is "$(py '[d["id"], d["name"], d["owner"], d["source"], d["state"], d["cluster"], d["exit_code"], d["command"]]' "$BODY")" \
    "[\"${IDS[0]}\", \"a1\", \"alice\", \"local\", \"completed\", \"local\", 0, [\"/bin/true\"]]" \
    "the job's fields"
t_like "$(py '[d["submit_time"], d["start_time"], d["end_time"]]' "$BODY")" \
    '^\["20[0-9-]{8}T[0-9:]{8}Z", "20[0-9-]{8}T[0-9:]{8}Z", "20[0-9-]{8}T[0-9:]{8}Z"\]$' \
    "submit, start and end times in RFC 3339 UTC"

# ---- runtime -------------------------------------------------------------------
api GET /v1/runtime >/dev/null
t_is "$STATUS" 200 "GET /v1/runtime"
t_like "$(jget "$BODY" .version)" '^[0-9]+\.[0-9]+' "runtime: a version"
t_is "$(py '"scheduler" in d["threads"] and "server" in d["threads"]' "$BODY")" true \
    "runtime: the threads"
t_is "$(py 'sorted(c["name"] for c in d["clusters"])' "$BODY")" '["local", "simA"]' \
    "runtime: the clusters"
t_is "$(py 'd["scheduler"]["enabled"]' "$BODY")" true "runtime: scheduler enabled"

api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "scheduler off"
t_is "$(py 'd["enabled"]' "$BODY")" false "scheduler off: the answer says so"
api GET /v1/runtime >/dev/null
t_is "$(py 'd["scheduler"]["enabled"]' "$BODY")" false "runtime shows it off"
submit '{"name": "waits", "command": ["/bin/true"], "request": {"cluster": "local"}}'
OFFJOB=$JOB
# Observed over 2 s (the poll is 0.2 s): the job must not leave pending.
left=
for ((i = 0; i < 20; i++)); do
    st=$(job_state "$OFFJOB")
    [ "$st" = pending ] || { left=$st; break; }
    sleep 0.1
done
t_is "${left:-pending}" pending "with the scheduler off a new job stays pending"
# Not placed yet, its cluster is null: ?cluster= finds it by the one it
# asked for.
api GET '/v1/jobs?cluster=local&state=pending' >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$OFFJOB\"]" \
    "?cluster=local lists the pending job that asked for local"
t_is "$(jget "$BODY" .items.0.cluster)" null "... whose cluster is still null"
api GET '/v1/jobs?cluster=simA&state=pending' >/dev/null
t_is "$(jlen "$BODY" .items)" 0 "?cluster=simA does not list it"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
t_is "$(py 'd["enabled"]' "$BODY")" true "scheduler on"
wait_for '[ "$(job_state "$OFFJOB")" = completed ]' 30
t_is "$(job_state "$OFFJOB")" completed "with the scheduler on it runs"
t_like "$(grep -c 'built-in scheduler \(en\|dis\)abled' "$T/loomd.log")" '^[2-9]' \
    "both switches are logged"

# ---- node state: drain, jobs go elsewhere, up again --------------------------
api PUT /v1/nodes/local/n1/state '{"state": "drain", "reason": "x"}' >/dev/null
t_is "$STATUS" 200 "PUT /v1/nodes/local/n1/state drain" || t_diag "$BODY"
wait_for 'api GET /v1/nodes/local/n1 >/dev/null; [ "$(jget "$BODY" .state)" = drained ]' 30
api GET /v1/nodes/local/n1 >/dev/null
t_is "$(py '[d["state"], d["reason"]]' "$BODY")" '["drained", "x"]' \
    "n1 shows drained with the reason"
api GET '/v1/nodes?state=drained' >/dev/null
t_is "$(py '[n["id"] for n in d["items"]]' "$BODY")" '["local/n1"]' \
    "?state=drained: n1 only"
DJ=()
for i in 1 2 3 4; do
    submit "{\"name\": \"d$i\", \"command\": [\"/bin/sleep\", \"300\"], \"request\": {\"cluster\": \"local\"}}" &&
        DJ+=("$JOB")
done
n_running() {
    local id n=0
    for id in "${DJ[@]}"; do
        [ "$(job_state "$id")" = running ] && n=$((n + 1))
    done
    echo $n
}
wait_for '[ "$(n_running)" = 3 ]' 30
t_is "$(n_running)" 3 "three of four 1-cpu jobs run on the three undrained nodes"
api GET '/v1/jobs?cluster=local&state=running' >/dev/null
t_is "$(py 'sorted(n for j in d["items"] for n in j["nodes"])' "$BODY")" \
    '["n2", "n3", "n4"]' "none landed on the drained n1"
t_is "$(job_state "${DJ[3]}")" pending "the fourth waits"
api PUT /v1/nodes/local/n1/state '{"state": "up"}' >/dev/null
t_is "$STATUS" 200 "PUT state up"
# starting is a moment on the way (the start is under way): wait past it
wait_for 'case $(job_state "${DJ[3]}") in pending | starting) false ;; esac' 30
api GET "/v1/jobs/${DJ[3]}" >/dev/null
t_is "$(py '[d["state"], d["nodes"]]' "$BODY")" '["running", ["n1"]]' \
    "with n1 up the fourth runs there"
# The node shows it from the cluster's next poll on.
wait_for 'api GET /v1/nodes/local/n1 >/dev/null; [ "$(jget "$BODY" .state)" = allocated ]' 30
t_is "$(py '[d["state"], d["cpus_alloc"]]' "$BODY")" '["allocated", 1]' \
    "n1 is allocated to it"

# ---- reload, SIGHUP ----------------------------------------------------------
sed -i '/^\[cluster local\]/,/^\[/ s/^poll_s = 0.2$/poll_s = 0.3/' "$T/loom.conf"
grep -q '^poll_s = 0.3$' "$T/loom.conf" || t_diag "the conf was not changed"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "POST /v1/runtime/reload" || t_diag "$BODY"
t_is "$(py 'd.get("changed")' "$BODY" 2>/dev/null)" '["local.poll_s"]' \
    "the reload reports local.poll_s changed"
# A configuration that is wrong changes nothing and says why.
cp "$T/loom.conf" "$T/loom.conf.good"
echo 'this line has no equals sign' >>"$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "reload of a file with a syntax error: 400" || t_diag "$BODY"
t_like "$(jget "$BODY" .error.message 2>/dev/null)" 'loom\.conf:[0-9]+' \
    "the error names the file and line"
cp "$T/loom.conf.good" "$T/loom.conf"
sed -i '/^\[cluster local\]/,/^\[/ s/^poll_s = 0.3$/poll_s = fast/' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "reload with poll_s = fast: 400, not silently ignored" || t_diag "$BODY"
cp "$T/loom.conf.good" "$T/loom.conf"
sed -i '/^\[cluster local\]/a frobnicate = 1' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "reload with an unknown key: 400, as at start-up" || t_diag "$BODY"
cp "$T/loom.conf.good" "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS $(py 'd.get("changed")' "$BODY" 2>/dev/null)" '200 []' \
    "the good file again: 200, nothing changed"
# The [scheduler] section: a bad value changes nothing; a good one takes
# effect at once.
printf '[scheduler]\nbackfill = sometimes\n' >>"$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "reload with backfill = sometimes: 400" || t_diag "$BODY"
t_like "$(jget "$BODY" .error.message 2>/dev/null)" 'backfill must be none or easy or conservative' \
    "the error names the key and what it may be"
cp "$T/loom.conf.good" "$T/loom.conf"
printf '[scheduler]\npolicy = priority\nbackfill = conservative\n' >>"$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with a [scheduler] section" || t_diag "$BODY"
wait_for 'api GET /v1/runtime >/dev/null; [ "$(jget "$BODY" .scheduler.policy)" = priority+conservative ]' 30
t_is "$(jget "$BODY" .scheduler.policy)" priority+conservative \
    "the scheduler's policy changes with the reload"
cp "$T/loom.conf.good" "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
alive "$LOOMD_PID"
t_ok $? "loomd runs on after the bad reloads"
before=$(grep -c 'reloaded' "$T/loomd.log")
kill -HUP "$LOOMD_PID"
wait_for 'grep -q "SIGHUP: reloading" "$T/loomd.log" && [ "$(grep -c reloaded "$T/loomd.log")" -gt "$before" ]' 30
t_ok $? "SIGHUP reloads (log lines)" || t_diag "$(tail -n 5 "$T/loomd.log")"
alive "$LOOMD_PID"
t_ok $? "loomd runs on after SIGHUP"

# ---- metrics -----------------------------------------------------------------
rm -f "$T/metrics.h"
STATUS=$(curl -s -D "$T/metrics.h" -o "$T/metrics" -w '%{http_code}' "$LOOM_URL/metrics")
t_is "$STATUS" 200 "GET /metrics without a token"
t_like "$(grep -i '^content-type:' "$T/metrics.h")" 'text/plain' \
    "/metrics is text/plain"
t_ok "$(grep -qxF 'loom_cluster_up{cluster="local"} 1' "$T/metrics"; echo $?)" \
    "/metrics: loom_cluster_up for local"
t_ok "$(grep -qxF 'loom_cluster_nodes{cluster="simA"} 8' "$T/metrics"; echo $?)" \
    "/metrics: loom_cluster_nodes for simA"
t_ok "$(grep -qE '^loom_jobs\{state="completed",cluster="[^"]+",source="local",account="[^"]*"\} [1-9][0-9]*$' "$T/metrics"; echo $?)" \
    "/metrics: completed jobs counted"
t_ok "$(grep -qE '^# TYPE loom_jobs gauge$' "$T/metrics"; echo $?)" \
    "/metrics: TYPE lines"

# ---- shutdown ----------------------------------------------------------------
for id in "${DJ[@]}"; do
    api DELETE "/v1/jobs/$id" >/dev/null
done
dj_states() {
    local id
    for id in "${DJ[@]}"; do job_state "$id"; done | paste -sd' '
}
wait_for '[ "$(dj_states)" = "cancelled cancelled cancelled cancelled" ]' 30
t_is "$(dj_states)" "cancelled cancelled cancelled cancelled" \
    "the four sleeping jobs end cancelled before the shutdown"
api POST /v1/runtime/shutdown '{}' >/dev/null
t_is "$STATUS" 202 "POST /v1/runtime/shutdown: 202" || t_diag "$BODY"
pid=$LOOMD_PID
wait_dead "$pid" 600
t_ok $? "loomd exits"
wait "$pid"
t_is $? 0 "loomd's exit status is 0"
LOOMD_PID=
t_ok "$(grep -q 'loomd stopped' "$T/loomd.log"; echo $?)" "the log says loomd stopped"
t_done
