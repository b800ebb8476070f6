#!/usr/bin/env bash
# 0018-loomctl-queue.t - the queue as Slurm's users read it, against a real
# loomd with a local and a sim cluster and jobs of two users: loomctl jobs
# (active by default, --all, -u, -t, -n, -w with a host list, -j and -p,
# --format),
# GET /v1/jobs's filters behind it, cancel by filter, summary.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

LOOMCTL=$LOOM_TOP_BUILDDIR/loomctl
[ -x "$LOOMCTL" ] || t_bail "$LOOMCTL is not built"

# ctl ARGS...: loomctl as the admin of -c; OUT, ERR, RC.
ctl() {
    "$LOOMCTL" -c "$T/loom.conf" "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}

# ctl_as USER ARGS...: loomctl with USER's token.
ctl_as() {
    local who=$1
    shift
    "$LOOMCTL" --url "$LOOM_URL" --token-file "$T/$who.token" "$@" \
        >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}

ctl_diag() {
    t_diag "loomctl exit $RC" "stdout: $OUT" "stderr: $ERR"
}

# ids: the JOBID column of OUT (after its header), sorted, space-separated.
ids() {
    awk 'NR > 1 { print $1 }' <<<"$OUT" | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# sorted ID...: the ids, sorted as ids prints them.
sorted() {
    printf '%s\n' "$@" | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# as USER: api calls with USER's token from now on.
as() {
    TOKEN=$(cat "$T/$1.token")
}

pg_start || t_bail "PostgreSQL did not start"
t_account ALICE_ACC alice
t_account BOB_ACC bob
map_account alice "$ALICE_ACC"
map_account bob "$BOB_ACC"
loomd_conf <<EOF
$(local_cluster 4 1)

[cluster simA]
adaptor = sim
nodes = 4
cpus_per_node = 8
memory_mb = 8192
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
for u in alice bob; do
    token_for "$u" user >"$T/$u.token" || t_bail "no token for $u"
    chmod 600 "$T/$u.token"
done

# ---- the jobs: one ended, two running, one pending, one held ----------------
SLEEP='"command": ["/bin/sleep", "600"], "request": {"cluster": "local"'
as alice
submit '{"name": "done1", "command": ["/bin/true"], "request": {"cluster": "local"}}' ||
    t_bail "alice's first job"
DONE1=$JOB
wait_for '[ "$(job_state "$DONE1")" = completed ]' 60
t_is "$(job_state "$DONE1")" completed "alice's done1 completed"
submit "{\"name\": \"wide\", $SLEEP, \"nodes\": 2}}" || t_bail "alice's wide job"
WIDE=$JOB
as bob
submit "{\"name\": \"bsleep\", $SLEEP}}" || t_bail "bob's job"
BSLEEP=$JOB
TOKEN=$ADMIN # who sees every job
wait_for '[ "$(job_state "$WIDE") $(job_state "$BSLEEP")" = "running running" ]' 60
t_is "$(job_state "$WIDE") $(job_state "$BSLEEP")" "running running" \
    "alice's wide (2 nodes) and bob's bsleep run"
# the fourth node drained: what comes next waits
TOKEN=$ADMIN
api GET '/v1/nodes?cluster=local&state=idle' >/dev/null
FREE=$(py '" ".join(n["name"] for n in d["items"])' "$BODY")
t_like "$FREE" '^n[1-4]$' "one local node is left idle: $FREE"
api PUT "/v1/nodes/local/$FREE/state" '{"state": "drain", "reason": "queue test"}' >/dev/null
t_is "$STATUS" 200 "it is drained" || t_diag "$BODY"
as alice
submit "{\"name\": \"waiter\", $SLEEP}}" || t_bail "alice's waiting job"
WAITER=$JOB
as bob
submit "{\"name\": \"bheld\", \"hold\": true, $SLEEP, \"queue\": \"default\"}}" ||
    t_bail "bob's held job"
BHELD=$JOB
TOKEN=$ADMIN
wait_for '[ "$(job_state "$WAITER") $(job_state "$BHELD")" = "pending held" ]' 30
t_is "$(job_state "$WAITER") $(job_state "$BHELD")" "pending held" \
    "alice's waiter waits, bob's bheld is held"
job "$WIDE"
WIDE_NODES=$(py '" ".join(sorted(d["nodes"]))' "$BODY")
job "$BSLEEP"
BNODE=$(py 'd["nodes"][0]' "$BODY")

# ---- GET /v1/jobs: several states, name, nodelist -----------------------------
api GET '/v1/jobs?state=running,held' >/dev/null
t_is "$STATUS $(py '" ".join(sorted((j["id"] for j in d["items"]), key=int))' "$BODY")" \
    "200 $(sorted "$WIDE" "$BSLEEP" "$BHELD")" "?state=running,held: the running and the held"
api GET '/v1/jobs?state=running,held&nodelist=local/n%5B1-4%5D&limit=1' >/dev/null
t_is "$(py '[[j["id"] for j in d["items"]], d["next"]]' "$BODY")" \
    "[[\"$WIDE\"], \"/v1/jobs?after=$WIDE&limit=1&state=running%2Cheld&nodelist=local%2Fn%5B1-4%5D\"]" \
    "a page of one: next keeps the states and the node list"
api GET "${NEXT:=$(jget "$BODY" .next)}" >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$BSLEEP\"]" \
    "... and the next page has the other running job (held ones have no nodes)"
api GET '/v1/jobs?name=waiter' >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$WAITER\"]" "?name=waiter: that one"
api GET "/v1/jobs?nodelist=local/$BNODE" >/dev/null
t_is "$(py '[j["id"] for j in d["items"]]' "$BODY")" "[\"$BSLEEP\"]" \
    "?nodelist=local/$BNODE: the job on it"
api GET '/v1/jobs?state=pending,bogus' >/dev/null
t_is "$STATUS" 400 "?state= with a state that is none: 400"
t_like "$(jget "$BODY" .error.message)" "'bogus' is not a job state; the job states are pending, held, starting, running, suspended, completed, failed and cancelled" \
    "... naming it and the job states"
api GET '/v1/jobs?nodelist=n99' >/dev/null
t_is "$STATUS" 400 "?nodelist= with a node there is not: 400"
t_is "$(jget "$BODY" .error.message)" \
    "query parameter nodelist: there is no node 'n99'; the nodes are local/n[1-4], simA/n[1-4]" \
    "... naming it and the nodes"
api GET '/v1/jobs?nodelist=n%5B3-1%5D' >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "400 query parameter nodelist: 'n[3-1]' is not a node list such as n[1-4],gpu7: bad range '3-1'" \
    "a malformed host list: 400 saying why"
api GET '/v1/jobs?cluster=simA&nodelist=local/n1' >/dev/null
t_like "$STATUS $(jget "$BODY" .error.message)" "^400 .*no node 'local/n1' in cluster simA" \
    "a node of another cluster than ?cluster=: 400"

# ---- loomctl jobs --------------------------------------------------------------
ctl jobs
t_is "$RC" 0 "loomctl jobs" || ctl_diag
t_is "$(ids)" "$(sorted "$WIDE" "$BSLEEP" "$WAITER" "$BHELD")" \
    "jobs: the waiting, held and running ones, not the completed one"
t_is "$(head -n 1 <<<"$OUT" | tr -s ' ')" \
    "JOBID NAME OWNER STATE CLUSTER NODES TIME NODELIST REASON" "jobs: the default columns"
ctl jobs --all
t_is "$(ids)" "$(sorted "$DONE1" "$WIDE" "$BSLEEP" "$WAITER" "$BHELD")" \
    "jobs --all: the completed one too"
ctl jobs -u alice
t_is "$(ids)" "$(sorted "$WIDE" "$WAITER")" "jobs -u alice: her active jobs"
ctl jobs --owner bob
t_is "$(ids)" "$(sorted "$BSLEEP" "$BHELD")" "jobs --owner bob (a synonym): his"
ctl jobs --all --user alice
t_is "$(ids)" "$(sorted "$DONE1" "$WIDE" "$WAITER")" "jobs --all --user alice: hers, ended too"
ctl jobs -t held,pending
t_is "$(ids)" "$(sorted "$WAITER" "$BHELD")" "jobs -t held,pending: those two"
ctl jobs --name bsleep
t_is "$(ids)" "$BSLEEP" "jobs --name bsleep: that one"
ctl jobs -w "$BNODE"
t_is "$(ids)" "$BSLEEP" "jobs -w $BNODE: the job on it"
ctl jobs -w 'local/n[1-4]'
t_is "$(ids)" "$(sorted "$WIDE" "$BSLEEP")" "jobs -w local/n[1-4]: the jobs on the local nodes"
ctl jobs -w 'n[1-4]' -u bob
t_is "$(ids)" "$BSLEEP" "jobs -w n[1-4] -u bob: both filters"
ctl jobs -w n99
t_is "$RC" 1 "jobs -w n99: fails" || ctl_diag
t_like "$ERR" "there is no node 'n99'" "... naming the node"
ctl jobs -t bogus
t_is "$RC" 2 "jobs -t bogus: a usage error"
t_like "$ERR" "'bogus' is not a job state" "... naming it"

# -j and -p: ?id= and ?queue= of GET /v1/jobs
ctl jobs -j "$WIDE,$BHELD"
t_is "$RC/$(ids)" "0/$(sorted "$WIDE" "$BHELD")" "jobs -j WIDE,BHELD: those two" ||
    ctl_diag
ctl jobs --jobs "$DONE1"
t_is "$RC/$(ids)" "0/$DONE1" \
    "jobs --jobs DONE1: a job named by its id shows in any state, ended too"
ctl jobs -j "$DONE1,$WIDE,$BSLEEP" -t completed,held
t_is "$(ids)" "$DONE1" "jobs -j ... -t completed,held: -t still picks the states"
ctl jobs -p default
t_is "$RC/$(ids)" "0/$BHELD" \
    "jobs -p default: only bheld asked for the queue default" || ctl_diag
ctl jobs --queue nope,default --user alice
t_is "$RC/$(ids)" "0/" "jobs --queue nope,default --user alice: none of hers did"
ctl jobs -j "$BSLEEP" -p default
t_is "$RC/$(ids)" "0/" "jobs -j BSLEEP -p default: both filters (bsleep asked for none)"
ctl jobs -j 12x
t_is "$RC/$OUT" "2/" "jobs -j 12x: a usage error, nothing asked"
t_like "$ERR" "^loomctl: --jobs: '12x' is not a job: give job ids \\(123, without leading zeros\\) and array tasks \\(123_7\\), comma-separated" \
    "... naming it and what an id is"
ctl jobs -j "$WIDE,007"
t_like "$RC/$ERR" "^2/.*'007' is not a job" "jobs -j WIDE,007: the bad item named"
ctl jobs -j "$WIDE,"
t_like "$RC/$ERR" "^2/.*--jobs: '$WIDE,' has an empty item" "jobs -j 'WIDE,': an empty item"
ctl jobs -p 'a,,b'
t_like "$RC/$ERR" "^2/.*--queue: 'a,,b' has an empty item; give queue names, comma-separated" \
    "jobs -p 'a,,b': an empty item"
ctl jobs --queue=
t_like "$RC/$ERR" "^2/.*--queue needs a value" "jobs --queue= : refused"
ctl cancel --queue default
t_like "$RC/$ERR" "^2/.*cancel takes no --queue" "cancel --queue: refused"
ctl cancel --jobs "$WIDE"
t_like "$RC/$ERR" "^2/.*cancel takes no --jobs \\(the ids are its arguments\\)" \
    "cancel --jobs: refused, saying where the ids go"
ctl jobs -j "$WIDE" --json
t_is "$RC/$(py '" ".join(i["id"] for i in d["items"])' "$OUT" 2>/dev/null)" "0/$WIDE" \
    "jobs -j WIDE --json: still --json (-j is --jobs)"

# the node column: a host list
read -r A B <<<"$WIDE_NODES"
if [ "$((${B#n} - ${A#n}))" = 1 ]; then WANT="n[${A#n}-${B#n}]"; else WANT="n[${A#n},${B#n}]"; fi
ctl jobs --format jobid,state,nodelist
t_is "$RC" 0 "jobs --format jobid,state,nodelist" || ctl_diag
t_is "$(head -n 1 <<<"$OUT" | tr -s ' ' | sed 's/ $//')" "JOBID STATE NODELIST" \
    "--format: exactly the named columns"
t_like "$OUT" "(^|
) *$WIDE +running +$(sed 's/[][]/\\&/g' <<<"$WANT")(
|$)" "--format: the wide job's nodes as a host list, $WANT"
t_is "$(awk 'NR > 1 { print NF }' <<<"$OUT" | sort -u)" 3 \
    "--format: 3 cells a row ('-' for a job without nodes)" || t_diag "$OUT"
ctl jobs --format jobid,bogus
t_is "$RC" 2 "jobs --format with an unknown field: a usage error"
t_like "$ERR" "unknown field 'bogus'; the fields are jobid,name,owner,account,state,cluster,nodes,time,nodelist,priority,submit,start,end,exitcode,reason" \
    "... naming it and the fields"

# ---- summary -------------------------------------------------------------------
# half of a simA node taken: mixed
submit '{"name": "half", "command": ["/bin/true"], "request": {"cluster": "simA", "nodes": 1, "cpus_per_node": 4}, "env": {"LOOM_SIM_RUNTIME_S": "100000"}}' ||
    t_bail "the sim job"
HALF=$JOB
wait_for '[ "$(job_state "$HALF")" = running ]' 30
t_is "$(job_state "$HALF")" running "a sim job on half a node runs"
# The node shows mixed from the cluster's next poll after the start.
wait_for 'api GET /v1/nodes?cluster=simA >/dev/null; grep -q "\"state\":\"mixed\"" <<<"$BODY"' 30
ctl summary
t_is "$RC" 0 "loomctl summary" || ctl_diag
t_is "$(tr -s ' ' <<<"$OUT")" "CLUSTER QUEUES NODES IDLE MIXED ALLOC DRAIN DOWN CPUS(A/I/O/T)
local default 4 0 0 3 1 0 3/0/1/4
simA default 4 3 1 0 0 0 4/28/0/32" \
    "summary: local 3 allocated, 1 drained; simA 3 idle, 1 mixed; the cpus"
api GET /v1/nodes >/dev/null
t_is "$(py '" ".join("%s:%s" % (c, ",".join(sorted(n["state"] for n in d["items"] if n["cluster"] == c))) for c in ("local", "simA"))' "$BODY")" \
    "local:allocated,allocated,allocated,drained simA:idle,idle,idle,mixed" \
    "... as GET /v1/nodes has the nodes' states"
ctl summary --json --cluster local
t_is "$(py '[d["items"][0]["cluster"], d["items"][0]["states"], d["items"][0]["cpus"], len(d["items"])]' "$OUT")" \
    '["local", {"allocated": 3, "drained": 1}, {"allocated": 3, "idle": 0, "other": 1, "total": 4}, 1]' \
    "summary --json --cluster local: its counts"
api DELETE "/v1/jobs/$HALF" >/dev/null
wait_for '[ "$(job_state "$HALF")" = cancelled ]' 30
t_is "$(job_state "$HALF")" cancelled "the sim job is cancelled"

# ---- cancel by filter ------------------------------------------------------------
ctl cancel
t_is "$RC" 2 "cancel without ids or filters: a usage error"
ctl cancel --cluster local
t_is "$RC" 2 "cancel --cluster alone: a usage error"
t_like "$ERR" "--cluster only narrows" "... saying why"
ctl cancel --user alice 12
t_is "$RC" 2 "cancel with ids and filters: a usage error"

# bob may not see alice's jobs (private_data), so cancels none of them
ctl_as bob jobs -u alice
t_is "$RC $(ids)" "0 " "bob's jobs -u alice: none he may see" || ctl_diag
ctl_as bob cancel --user alice
t_is "$RC $OUT" "0 no job matches" "bob's cancel --user alice: no job of hers" ||
    ctl_diag
ctl_as bob cancel "$WAITER"
t_is "$RC" 1 "bob's cancel of alice's job by its id fails" || ctl_diag
t_is "$(job_state "$WIDE") $(job_state "$WAITER")" "running pending" \
    "alice's jobs go on"

ctl cancel --name waiter
t_is "$RC" 0 "cancel --name waiter" || ctl_diag
t_is "$OUT" "cancelled job $WAITER (waiter)
cancelled 1 of 1 matching job" "... names what it cancels, and how many"
wait_for '[ "$(job_state "$WAITER")" = cancelled ]' 30
t_is "$(job_state "$WAITER") $(job_state "$WIDE") $(job_state "$BSLEEP") $(job_state "$BHELD")" \
    "cancelled running running held" "only waiter is cancelled"

ctl_as bob cancel --user bob --state held
t_is "$RC $OUT" "0 cancelled job $BHELD (bheld)
cancelled 1 of 1 matching job" "bob: cancel --user bob --state held" || ctl_diag
wait_for '[ "$(job_state "$BHELD")" = cancelled ]' 30
t_is "$(job_state "$BHELD") $(job_state "$BSLEEP") $(job_state "$WIDE")" \
    "cancelled running running" "only bheld: bsleep and alice's wide run on"

ctl cancel -u alice --cluster local
t_is "$RC $OUT" "0 cancelled job $WIDE (wide)
cancelled 1 of 1 matching job" "admin: cancel -u alice --cluster local: her running one" ||
    ctl_diag
wait_for '[ "$(job_state "$WIDE")" = cancelled ]' 30
t_is "$(job_state "$WIDE") $(job_state "$BSLEEP") $(job_state "$DONE1")" \
    "cancelled running completed" "wide cancelled; bob's bsleep runs, done1 stays completed"

ctl jobs
t_is "$(ids)" "$BSLEEP" "jobs: bsleep is the one left"
ctl cancel --user bob
t_is "$RC" 0 "cancel --user bob" || ctl_diag
wait_for '[ "$(job_state "$BSLEEP")" = cancelled ]' 30
t_is "$(job_state "$BSLEEP")" cancelled "bsleep cancelled"

t_done
