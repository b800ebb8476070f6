#!/usr/bin/env bash
# 2006-local-pause.t - pausing a node (a desk machine its owner takes
# back) on the local executor, checked in the kernel's files: the jobs
# running there are frozen (cgroup v2 cgroup.events "frozen 1", or the v1
# freezer's FROZEN: the freezer does not show T in /proc, so the test
# asserts the cgroup's word and that a counter the job writes stops
# growing); a job the operator suspended before stays suspended after
# unpause; a multi-node job that touches the node is suspended whole (and
# runs again only when all its paused nodes are resumed); a new job is
# not placed there; the node shows "paused" in /v1/nodes, loomctl nodes
# and loom_nodes; the pause survives a restart of loomd; unpause resumes
# the jobs and they complete with exit 0 (also when it comes before the
# suspend shows); a cluster that cannot suspend refuses pause, naming the
# capability. Jobs run as alice-XXXXXX, an account this test makes.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

# counter NAME N: a job that counts to N, one a tenth of a second, into
# $T_OUT/NAME, and ends with exit 0.
counter() {
    printf '{"name": "%s", "request": {"cluster": "%s", "nodes": %s}, "command": ["/bin/sh", "-c", "i=0; while [ $i -lt %s ]; do i=$((i + 1)); echo $i > %s/%s.tmp; mv %s/%s.tmp %s/%s; sleep 0.1; done"]}' \
        "$1" "${3:-box}" "${4:-1}" "$2" "$T_OUT" "$1" "$T_OUT" "$1" "$T_OUT" "$1"
}
count() { cat "$T_OUT/$1" 2>/dev/null || echo 0; }

# node_state ID: the state GET /v1/nodes/ID shows.
node_state() {
    api GET "/v1/nodes/$1" >/dev/null
    jget "$BODY" .state
}

# all_frozen JOB [CLUSTER]: 1 when every process of the job is frozen (0
# when none is, "0 1" when some are; "" when it has none).
all_frozen() {
    local p out=
    for p in $(job_procs "$1" "${2:-box}"); do out="$out $(frozen "$p")"; done
    [ -n "$out" ] && echo "$out" | tr ' ' '\n' | sed '/^$/d' | sort -u | paste -sd' '
}

# A pack that cannot suspend: it lists no suspend and no resume.
mkdir -p "$T/nosus"
cat >"$T/nosus/pack.json" <<'EOF'
{"protocol": 1, "name": "nosus", "model": "disabled-scheduler",
 "runs_as_user": true, "ops": ["nodes", "jobs", "queues", "start", "cancel"]}
EOF
printf '#!/bin/sh\necho %s\n' \
    "'{\"items\": [{\"name\": \"d1\", \"state\": \"idle\", \"cpus\": 1}]}'" >"$T/nosus/nodes"
printf '#!/bin/sh\necho %s\n' "'{\"complete\": true, \"items\": []}'" >"$T/nosus/jobs"
printf '#!/bin/sh\necho %s\n' "'{\"items\": []}'" >"$T/nosus/queues"
printf '#!/bin/sh\necho no >&2\nexit 1\n' >"$T/nosus/start"
cp "$T/nosus/start" "$T/nosus/cancel"
chmod 0755 "$T/nosus"/*

t_account ALICE alice || t_bail "cannot make an account"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster box]
adaptor = local
nodes = 1
cpus_per_node = 3
memory_mb = 1024
poll_s = 0.2

[cluster duo]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2

[cluster desk]
adaptor = script
pack = $T/nosus
poll_s = 0.5
EOF
map_account alice "$ALICE"
map_account ops "$ALICE"
loomd_start || t_bail "loomd did not start"
ALICE_TOKEN=$(token_for alice user) || t_bail "no token for alice"
OPS_TOKEN=$(token_for ops operator) || t_bail "no token for the operator"
as() { TOKEN=$1; }

# ---- a cluster that cannot suspend --------------------------------------------------
as "$OPS_TOKEN"
wait_for '[ "$(node_state desk/d1)" = idle ]' 30
api PUT /v1/nodes/desk/d1/state '{"state": "pause"}' >/dev/null
t_is "$STATUS" 501 "pause on a cluster whose pack cannot suspend: 501"
t_is "$(jget "$BODY" .error.message)" \
    "cannot pause node desk/d1: cluster desk cannot suspend jobs (its adaptor lacks the suspend capability)" \
    "... naming the missing capability"
t_is "$(node_state desk/d1)" idle "... and the node stays idle"
api PUT /v1/nodes/box/n1/state '{"state": "resume"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" "409/node box/n1 is not paused" \
    "resume of a node that is not paused: 409"

# ---- pause: the running jobs frozen, the one suspended on purpose kept ------------------
as "$ALICE_TOKEN"
submit "$(counter a 60)"
A=$JOB
submit "$(counter b 600)"
B=$JOB
wait_for '[ "$(count a)" -ge 3 ] && [ "$(count b)" -ge 3 ]' 30
t_ok $? "two counting jobs run on box/n1 (a at $(count a), b at $(count b))"
api POST "/v1/jobs/$B/suspend" '{}' >/dev/null
t_is "$STATUS" 202 "alice suspends b on purpose"
wait_for '[ "$(job_state "$B")" = suspended ] && [ "$(all_frozen "$B")" = 1 ]' 30
t_is "$(job_state "$B")/$(all_frozen "$B")" suspended/1 "... b is suspended, its cgroup frozen"

as "$OPS_TOKEN"
api PUT /v1/nodes/box/n1/state '{"state": "pause", "reason": "desk in use"}' >/dev/null
t_is "$STATUS" 200 "PUT state pause: 200" || t_diag "$BODY"
t_is "$(py '[d["cluster"], d["name"], d["state"], d["reason"]]' "$BODY")" \
    '["box", "n1", "paused", "paused by ops: desk in use"]' "the answer shows the node paused, by whom and why"
wait_for '[ "$(all_frozen "$A")" = 1 ]' 30
t_is "$(all_frozen "$A")" 1 "a's processes are frozen: cgroup.events says frozen 1 (the freezer shows S, not T, in /proc)"
C1=$(count a)
t_sleep 1
t_is "$(count a)" "$C1" "... and its counter stops growing (at $C1 of 60)"
wait_for '[ "$(job_state "$A")" = suspended ]' 30
t_is "$(job_state "$A")" suspended "a shows suspended"
t_is "$(pg_sql "SELECT doc->>'reason' || ' ' || (doc->'jobs')::text FROM node_pauses WHERE node = 'box/n1'")" \
    "desk in use [$A]" "the pause is committed with the job it suspended (not b)"

# ---- shown paused, nothing placed there ------------------------------------------------
t_is "$(node_state box/n1)" paused "GET /v1/nodes/box/n1: paused"
t_like "$(loomctl nodes --cluster box)" 'n1 +box +paused' "loomctl nodes shows it paused"
t_is "$(py '[c["states"].get("paused") for c in d["items"]]' "$(loomctl --json summary --cluster box)")" \
    "[1]" "loomctl summary counts it paused"
t_like "$(loomctl summary --cluster box | head -1)" ' PAUSED ' "... in its PAUSED column"
api GET /metrics >/dev/null
t_like "$BODY" 'loom_nodes\{cluster="box",state="paused"\} 1' "loom_nodes counts it paused"
as "$ALICE_TOKEN"
submit "$(counter c 10)"
C=$JOB
wait_for '[ -n "$(field "$C" .reason)" ] && [ "$(field "$C" .reason)" != null ]' 30
t_is "$(job_state "$C")" pending "a new job that only box could run waits ($(field "$C" .reason))"
t_is "$(count c)" 0 "... and has not run"

# ---- a multi-node job is suspended whole --------------------------------------------------
submit "$(counter d 60 duo 2)"
D=$JOB
wait_for '[ "$(count d)" -ge 3 ]' 30
t_is "$(field "$D" .nodes)" '["n1", "n2"]' "a 2-node job runs on duo/n1 and duo/n2"
as "$OPS_TOKEN"
loomctl pause n2 >"$T/pause.out" 2>&1
t_like "$?/$(head -1 "$T/pause.out")" "^2/loomctl: node 'n2' is a name without its cluster" \
    "loomctl pause n2 without --cluster: a usage error"
loomctl pause duo/n2 --cluster box >"$T/pause.out" 2>&1
t_like "$?/$(head -1 "$T/pause.out")" "^2/loomctl: node duo/n2 is of cluster duo, not box" \
    "loomctl pause duo/n2 --cluster box: a usage error"
loomctl pause n2 --cluster duo --reason "owner back" >"$T/pause.out"
t_is "$?/$(cat "$T/pause.out")" "0/duo/n2 paused" "loomctl pause n2 --cluster duo: duo/n2 paused"
wait_for '[ "$(all_frozen "$D" duo)" = 1 ] && [ "$(job_state "$D")" = suspended ]' 30
t_is "$(all_frozen "$D" duo)/$(job_state "$D")" 1/suspended "the whole job is frozen and suspended"
t_is "$(node_state duo/n1)" allocated "duo/n1 itself is not paused (its job holds it)"
api PUT /v1/nodes/duo/n1/state '{"state": "pause"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/paused "duo/n1 is paused as well"

# ---- the pause survives a restart -----------------------------------------------------
loomd_stop
t_is $? 0 "loomd stops with status 0"
loomd_start || t_bail "loomd did not start again"
wait_for '[ "$(node_state box/n1)" = paused ]' 30
t_is "$(node_state box/n1)/$(node_state duo/n1)/$(node_state duo/n2)" paused/paused/paused \
    "after a restart the three nodes are paused still"
C1=$(count a)
t_sleep 1
t_is "$(count a)/$(all_frozen "$A")/$(job_state "$A")" "$C1/1/suspended" "a is frozen still, its counter at $C1"
t_is "$(job_state "$C")/$(count c)" pending/0 "c waits still"

# ---- unpause -----------------------------------------------------------------------------
api PUT /v1/nodes/box/n1/state '{"state": "resume", "reason": "desk free"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/reason "resume with a reason: 400 naming the field (it would go unused)"
t_is "$(node_state box/n1)" paused "... and box/n1 stays paused"
api PUT /v1/nodes/box/n1/state '{"state": "resume"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/mixed "PUT state resume: 200, the node takes jobs again (mixed)"
wait_for '[ "$(job_state "$A")" = completed ]' 60
job "$A"
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")/$(count a)" '["completed", 0]/60' \
    "a continues and completes with exit 0, having counted to 60"
t_is "$(job_state "$B")/$(all_frozen "$B")" suspended/1 "b, suspended on purpose, stays suspended"
wait_for '[ "$(job_state "$C")" = completed ]' 60
t_is "$(job_state "$C")/$(count c)" completed/10 "c is placed on box/n1 now and completes"
loomctl unpause duo/n2 >"$T/unpause.out"
t_is "$?/$(cat "$T/unpause.out")" "0/duo/n2 allocated" "loomctl unpause duo/n2: its job holds it"
t_sleep 1
t_is "$(job_state "$D")/$(all_frozen "$D" duo)" suspended/1 "the 2-node job stays suspended: duo/n1 is paused still"
loomctl unpause n1 --cluster duo >"$T/unpause.out"
t_is "$?/$(cat "$T/unpause.out")" "0/duo/n1 allocated" "loomctl unpause n1 --cluster duo"
wait_for '[ "$(job_state "$D")" = completed ]' 60
t_is "$(field "$D" .exit_code)/$(count d)" 0/60 "the 2-node job resumes and completes with exit 0"
t_is "$(pg_sql "SELECT count(*) FROM node_pauses")" 0 "no pause is left in the database"

# ---- pause and resume at once: resumed once its suspend shows ----------------------
as "$ALICE_TOKEN"
submit "$(counter e 30)"
E=$JOB
wait_for '[ "$(count e)" -ge 2 ]' 30
as "$OPS_TOKEN"
api PUT /v1/nodes/box/n1/state '{"state": "pause"}' >/dev/null
P=$STATUS
api PUT /v1/nodes/box/n1/state '{"state": "resume"}' >/dev/null
t_is "$P/$STATUS/$(jget "$BODY" .state)" 200/200/mixed "pause and resume at once: 200 and 200, box/n1 takes jobs"
wait_for '[ "$(job_state "$E")" = completed ]' 60
t_is "$(job_state "$E")/$(field "$E" .exit_code)/$(count e)" completed/0/30 \
    "the job the pause suspended is resumed even so, and completes"

as "$ALICE_TOKEN"
api DELETE "/v1/jobs/$B" >/dev/null
wait_for '[ "$(job_state "$B")" = cancelled ]' 30
t_is "$(job_state "$B")" cancelled "b is cancelled"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
