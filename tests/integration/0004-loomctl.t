#!/usr/bin/env bash
# 0004-loomctl.t - loomctl against a running loomd: lists, submit, show,
# cancel, status, --json, token create, and its failures (no daemon, a token
# file others may read, a bad token).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

LOOMCTL=$LOOM_TOP_BUILDDIR/loomctl
[ -x "$LOOMCTL" ] || t_bail "$LOOMCTL is not built"

# ctl ARGS...: run loomctl (with -c unless ARGS give --url); OUT, ERR, RC.
ctl() {
    local args=(-c "$T/loom.conf")
    case " $* " in *" --url "*) args=() ;; esac
    "$LOOMCTL" "${args[@]}" "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}

# show_rc NAME: diagnostics for a failed loomctl run.
ctl_diag() {
    t_diag "loomctl exit $RC" "stdout: $OUT" "stderr: $ERR"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)

[cluster simA]
adaptor = sim
nodes = 4
cpus_per_node = 8
memory_mb = 8192
speed = 1000
poll_s = 0.2
EOF
# the users' jobs run as the test's account, $T_USER (no privilege)
for u in carol; do map_account "$u" "$T_USER"; done
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# ---- lists -------------------------------------------------------------------
ctl clusters
t_is "$RC" 0 "loomctl clusters" || ctl_diag
t_is "$(head -n 1 <<<"$OUT")" "CLUSTER ADAPTOR STATE NODES JOBS   LAST_POLL ERROR" \
    "clusters: the header (JOBS, no start model)"
t_like "$OUT" '(^|
)local +local +up +2 any +[0-9]+s ago +-(
|$)' "clusters: local, up, 2 nodes, takes any job"
t_like "$OUT" '(^|
)simA +sim +up +4 pinned +[0-9]+s ago +-(
|$)' "clusters: simA, up, 4 nodes, takes pinned jobs only"

ctl nodes
t_is "$RC" 0 "loomctl nodes" || ctl_diag
t_is "$(grep -cE '^n[0-9]+ +(local|simA) ' <<<"$OUT")" 6 "nodes: the 6 nodes"
t_like "$OUT" '(^|
)n2 +local +idle +0/1 ' "nodes: local n2 idle, 0/1 cpus"
ctl nodes --cluster simA
t_is "$(grep -cE '^n[0-9]+ ' <<<"$OUT"),$(grep -c ' local ' <<<"$OUT")" 4,0 \
    "nodes --cluster simA: its 4 only"

ctl queues
t_is "$RC" 0 "loomctl queues" || ctl_diag
t_like "$OUT" '(^|
)default +local +open +2 ' "queues: local/default"
t_like "$OUT" '(^|
)default +simA +open +4 ' "queues: simA/default"

api POST /v1/reservations '{"nodes": ["simA/n2"], "start": "2030-01-01T00:00:00Z", "duration_s": 600, "reason": "tour"}' >/dev/null
t_is "$STATUS" 201 "a reservation for the listing" || t_diag "$BODY"
ctl reservations --cluster simA
t_is "$RC" 0 "loomctl reservations" || ctl_diag
t_like "$OUT" '(^|
) *1 +user +admin +simA +n2 +2030-01-01T00:00:00Z +2030-01-01T00:10:00Z +planned' \
    "reservations: id, purpose, owner, cluster, nodes, window, state"
ctl show reservation 1
t_like "$OUT" 'reason: +tour' "show reservation 1" || ctl_diag
ctl reserve simA --count 2 --not-before 2031-01-01T00:00:00Z --duration 300 --reason test
t_is "$RC" 0 "loomctl reserve" || ctl_diag
t_like "$OUT" '^2 planned 2031-01-01T00:00:00Z 2031-01-01T00:05:00Z simA/n[0-9]+,simA/n[0-9]+$' \
    "reserve prints id, state, window and the nodes Loom chose"
ctl reserve simA --nodes n2 --start 2030-01-01T00:05:00Z --duration 60
t_is "$RC" 1 "reserve over another reservation fails" || ctl_diag
t_like "$ERR" 'no window for the reservation' "... and says why"
ctl reserve simA --duration 60
t_is "$RC" 2 "reserve without --nodes or --count: usage error"
ctl unreserve 2
t_like "$RC $OUT" '^0 2 cancelled ' "loomctl unreserve 2: cancelled" || ctl_diag

# ---- submit, jobs, show ------------------------------------------------------
# A job runs where loomctl is run, as the account its identity maps to
# ($T_USER): from a directory that account may write in.
mkdir -m 1777 "$T/work" && cd "$T/work" || t_bail "cannot make $T/work"
ctl submit --cluster local -- /bin/echo hi
t_is "$RC" 0 "loomctl submit -- /bin/echo hi" || ctl_diag
ECHO=$OUT
t_like "$ECHO" '^[0-9]+$' "submit prints the job id"
wait_for '[ "$(job_state "$ECHO")" = completed ]' 30
api GET "/v1/jobs/$ECHO" >/dev/null
t_is "$(py '[d["state"], d["command"], d["name"], d["owner"], d["workdir"]]' "$BODY")" \
    "[\"completed\", [\"/bin/echo\", \"hi\"], \"echo\", \"loomctl\", \"$T/work\"]" \
    "the job ran /bin/echo hi, named echo, as the -c admin, in the directory loomctl ran in"
t_is "$(cat "$(jget "$BODY" .stdout)" 2>/dev/null)" hi "its stdout holds hi"
ctl output "$ECHO"
t_is "$RC/$OUT" 0/hi "loomctl output ID prints it" || ctl_diag

ctl jobs --all
t_is "$RC" 0 "loomctl jobs --all" || ctl_diag
t_like "$OUT" "(^|
) *$ECHO +echo +loomctl +completed +local +1 +[0-9:]+ +n[12] " \
    "jobs --all: the echo job's row, with its node"
ctl jobs
t_is "$(grep -c "^ *$ECHO " <<<"$OUT")" 0 "jobs: not the completed one"
ctl jobs --state running
t_is "$(grep -c "^ *$ECHO " <<<"$OUT")" 0 "jobs --state running: not the completed one"

ctl show job "$ECHO"
t_is "$RC" 0 "loomctl show job ID" || ctl_diag
t_like "$OUT" "(^|
)id: +$ECHO(
|$)" "show: id"
t_like "$OUT" '(^|
)state: +completed(
|$)' "show: state"
t_like "$OUT" '(^|
)exit_code: +0(
|$)' "show: exit_code"
t_like "$OUT" '(^|
)request\.nodes: +1(
|$)' "show: nested request fields"
ctl show job 999999
t_is "$RC" 1 "show of an unknown job: exit 1"
t_like "$ERR" 'no job' "show of an unknown job: says so"

ctl submit --json --name envjob --env GREETING=hello --cluster local -- /bin/sh -c 'echo "$GREETING"'
t_is "$RC" 0 "loomctl --json submit with --name and --env" || ctl_diag
ENVJOB=$(jget "$OUT" .id 2>/dev/null)
t_like "$ENVJOB" '^[0-9]+$' "submit --json prints the job as JSON"
t_is "$(py '[d["name"], d["env"]]' "$OUT" 2>/dev/null)" '["envjob", {"GREETING": "hello"}]' \
    "submit: name and env reach the job"

# ---- cancel ------------------------------------------------------------------
ctl submit --cluster local -- /bin/sleep 20
SLEEPER=$OUT
wait_for '[ "$(job_state "$SLEEPER")" = running ]' 30
ctl cancel "$SLEEPER"
t_is "$RC" 0 "loomctl cancel ID" || ctl_diag
wait_for '[ "$(job_state "$SLEEPER")" = cancelled ]' 30
t_is "$(job_state "$SLEEPER")" cancelled "the job is cancelled"
ctl cancel "$ECHO"
t_is "$RC" 1 "cancel of a finished job: exit 1"
t_like "$ERR" "$ECHO" "cancel of a finished job: names the job"

# ---- status, --json -----------------------------------------------------------
ctl status
t_is "$RC" 0 "loomctl status" || ctl_diag
t_like "$OUT" '(^|
)version: +[0-9]+\.[0-9]+' "status: version"
t_like "$OUT" '(^|
)scheduler\.enabled: +(true|yes)' "status: scheduler enabled"
MS=$(grep -E '^[a-z_.]*_ms[a-z_.]*: ' <<<"$OUT")
t_like "$(wc -l <<<"$MS")" '^ *([5-9]|[1-9][0-9]+)$' "status: five or more times in ms" ||
    t_diag "$OUT"
t_is "$(grep -cvE ': +(0|<0\.01|[0-9]+(\.[0-9]{1,2})?)$' <<<"$MS")" 0 \
    "status: every time in ms has at most two decimals" || t_diag "$MS"

ctl --json jobs --all
t_is "$RC" 0 "loomctl --json jobs --all" || ctl_diag
t_like "$(py '[j["id"] for j in d["items"]]' "$OUT" 2>&1)" "\"$ECHO\"" \
    "--json jobs: JSON with the items"
ctl --json clusters
t_is "$(py 'sorted(c["name"] for c in d["items"])' "$OUT" 2>&1)" '["local", "simA"]' \
    "--json clusters: JSON"
ctl --json status
t_is "$(py 'sorted(c["name"] for c in d["clusters"])' "$OUT" 2>&1)" '["local", "simA"]' \
    "--json status: JSON"
ctl --json show job "$ECHO"
t_is "$(py 'd["id"]' "$OUT" 2>&1)" "$ECHO" "--json show job: JSON"

# ---- option values: checked with loomd's domains and limits ----------------------
ctl jobs --state PENDING
t_is "$RC" 2 "jobs --state PENDING: a usage error (exit 2)" || ctl_diag
t_like "$ERR" "--state: 'PENDING' is not a job state; the job states are pending, held, starting, running, suspended, completed, failed and cancelled" \
    "... naming the value and the job states"
t_is "$OUT" "" "... and no table"
ctl nodes --cluster bogus
t_is "$RC" 1 "nodes --cluster bogus: exit 1, not an empty table" || ctl_diag
t_like "$ERR" "there is no cluster 'bogus'; the clusters are local and simA" \
    "... with loomd's message"
t_is "$OUT" "" "... and no table"
ctl nodes --state busy
t_is "$RC/$OUT" 2/ "nodes --state busy: a usage error" || ctl_diag
t_like "$ERR" "'busy' is not a node state; the node states are idle," "... naming the node states"
ctl reservations --state open
t_is "$RC" 2 "reservations --state open: a usage error" || ctl_diag
t_like "$ERR" "'open' is not a reservation state; the reservation states are planned, active, done and cancelled" \
    "... naming the reservation states"
ctl maintenance --state open
t_is "$RC" 2 "maintenance --state open: a usage error" || ctl_diag
t_like "$ERR" "'open' is not a maintenance request state; the maintenance request states are requested, planned" \
    "... naming the maintenance request states"
ctl jobs --owner ''
t_is "$RC" 2 "jobs --owner '': a usage error" || ctl_diag
t_like "$ERR" "--owner needs a value" "... saying so"
ctl cancel "0$ECHO"
t_is "$RC" 2 "cancel 0$ECHO: a usage error" || ctl_diag
t_like "$ERR" "'0$ECHO' is not a job id" "... naming it"
ctl show job "+$ECHO"
t_is "$RC" 2 "show job +$ECHO: a usage error" || ctl_diag
t_like "$ERR" "'\+$ECHO' is not a job id" "... naming it"
ctl unreserve 01
t_is "$RC" 2 "unreserve 01: a usage error" || ctl_diag
t_like "$ERR" "'01' is not a reservation id" "... naming it"
ctl diff --node n1
t_is "$RC" 2 "diff --node n1 (no cluster): a usage error" || ctl_diag
t_like "$ERR" "a node is named CLUSTER/NAME, or NAME with --cluster; not 'n1'" "... saying how nodes are named"
ctl diff --node n1 --cluster local
t_is "$RC" 0 "diff --node n1 --cluster local: a node name with its cluster" || ctl_diag
ctl diff --node simA/n1 --cluster local
t_is "$RC" 1 "diff --node simA/n1 --cluster local: exit 1" || ctl_diag
t_like "$ERR" "node simA/n1 is of cluster simA, not local" "... with loomd's message"
ctl goal set local/n1 state=bogus
t_is "$RC" 1 "goal set local/n1 state=bogus: exit 1" || ctl_diag
t_like "$ERR" "'bogus' is not a goal state; the goal states are up, down and drained" \
    "... with loomd's message"
ctl node-state local/n1 sideways
t_is "$RC" 2 "node-state local/n1 sideways: a usage error" || ctl_diag
t_like "$ERR" "'sideways' is not a state a node can be set to; the states a node can be set to are up, drain, down, pause and resume" \
    "... naming the states"
# The limits are loomd's (core/limits.h): no more, no less.
ctl submit --time-s 99999999999 -- /bin/true
t_is "$RC" 2 "submit --time-s 99999999999: a usage error" || ctl_diag
t_like "$ERR" "--time-s needs a whole number from 1 to 31622400, not '99999999999'" "... naming the limit"
ctl submit --time 367-00 -- /bin/true
t_is "$RC" 2 "submit --time 367-00: a usage error" || ctl_diag
t_like "$ERR" "--time: '367-00' is longer than Loom's limit of 366 days" "... naming the limit"
ctl submit --nodes 1000000 -- /bin/true
t_is "$RC" 2 "submit --nodes 1000000: a usage error" || ctl_diag
t_like "$ERR" "--nodes needs a whole number from 1 to 100000, not '1000000'" "... naming the limit"
ctl submit --mem 0 -- /bin/true
t_is "$RC" 2 "submit --mem 0: a usage error, as in the API" || ctl_diag
t_like "$ERR" "--mem needs a whole number from 1 to 1099511627776, not '0'" "... naming the limit"
ctl submit --priority 1000001 -- /bin/true
t_is "$RC" 2 "submit --priority 1000001: a usage error" || ctl_diag
t_like "$ERR" "from -1000000 to 1000000" "... naming the limits"
ctl reserve simA --count 1 --not-before 2031-01-01T00:00:00Z --duration 31622401
t_is "$RC" 2 "reserve --duration 31622401: a usage error" || ctl_diag
t_like "$ERR" "--duration takes a whole number from 1 to 31622400" "... naming the limit"
ctl submit --cluster simA --nodes 4 --cpus-per-node 8 --mem 8192 --time 366-00 \
    --priority 1000000 --env LOOM_SIM_RUNTIME_S=1 -- /bin/true
t_is "$RC" 0 "submit at loomctl's largest values: loomd takes it too" || ctl_diag
MAXJOB=$OUT
wait_for '[ "$(job_state "$MAXJOB")" = completed ]' 30
t_is "$(job_state "$MAXJOB")" completed "... and it runs"

# ---- jobs --cluster: also the waiting jobs that asked for the cluster ----------
ctl submit --cluster simA --nodes 4 --cpus-per-node 8 --time-s 31622400 \
    --env LOOM_SIM_RUNTIME_S=31622400 -- /bin/true
BIG1=$OUT
wait_for '[ "$(job_state "$BIG1")" = running ]' 30
ctl submit --cluster simA --nodes 4 --cpus-per-node 8 -- /bin/true
BIG2=$OUT
t_is "$(job_state "$BIG2")/$(field "$BIG2" .cluster)" pending/null \
    "a second whole-cluster job waits, not placed yet"
ctl jobs --cluster simA --state pending
t_is "$RC" 0 "jobs --cluster simA --state pending" || ctl_diag
t_like "$OUT" "(^|
) *$BIG2 +true +loomctl +pending " "... lists the waiting job that asked for simA"
ctl jobs --cluster local --state pending
t_is "$(grep -c "^ *$BIG2 " <<<"$OUT")" 0 "jobs --cluster local does not"
ctl cancel "$BIG2" "$BIG1"
t_is "$RC" 0 "both cancelled" || ctl_diag

# ---- token create ----------------------------------------------------------------
ctl token create --subject carol --role user --ttl 600
t_is "$RC" 0 "loomctl token create" || ctl_diag
CAROL=$OUT
t_like "$CAROL" '^[A-Za-z0-9._~+/=-]{20,}$' "token create prints a token"
TOKEN=$CAROL
api GET /v1/jobs >/dev/null
t_is "$STATUS" 200 "the daemon accepts the new token"
api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cluster": "simA"}}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .owner 2>/dev/null)" 201/carol \
    "a job submitted with it belongs to carol"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 403 "the user token has no admin rights"

# --url with a token file
printf '%s\n' "$CAROL" >"$T/carol.token"
chmod 600 "$T/carol.token"
ctl --url "$LOOM_URL" --token-file "$T/carol.token" jobs --owner carol
t_is "$RC" 0 "--url URL --token-file F jobs" || ctl_diag
t_is "$(grep -c ' carol ' <<<"$OUT")" 1 "--url: carol's job is listed"

# ---- failures ------------------------------------------------------------------
CLOSED=$(free_port)
ctl --url "http://127.0.0.1:$CLOSED" --token-file "$T/carol.token" status
t_is "$RC" 1 "status against a closed port: exit 1"
t_like "$ERR" 'cannot connect' "status against a closed port: 'cannot connect'"
t_is "$OUT" "" "status against a closed port: nothing on stdout"

cp "$T/carol.token" "$T/open.token"
chmod 644 "$T/open.token"
ctl --url "$LOOM_URL" --token-file "$T/open.token" status
t_is "$RC" 1 "a token file with mode 0644: exit 1"
t_like "$ERR" 'token file .*(group or others|0644)' \
    "a token file with mode 0644 is refused, and why"

echo 'not-a-real-token' >"$T/bad.token"
chmod 600 "$T/bad.token"
ctl --url "$LOOM_URL" --token-file "$T/bad.token" status
t_is "$RC" 1 "a bad token: exit 1"
t_like "$ERR" 'not authorised' "a bad token: 'not authorised'"

ctl frobnicate
t_is "$RC" 2 "an unknown command: exit 2 (usage)"
t_like "$ERR" 'unknown command' "an unknown command: says so"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
