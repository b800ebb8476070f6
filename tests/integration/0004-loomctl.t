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
[cluster local]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2

[cluster simA]
adaptor = sim
nodes = 4
cpus_per_node = 8
memory_mb = 8192
speed = 1000
poll_s = 0.2
EOF
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
ctl submit --cluster local -- /bin/echo hi
t_is "$RC" 0 "loomctl submit -- /bin/echo hi" || ctl_diag
ECHO=$OUT
t_like "$ECHO" '^[0-9]+$' "submit prints the job id"
wait_for '[ "$(job_state "$ECHO")" = completed ]' 10
api GET "/v1/jobs/$ECHO" >/dev/null
t_is "$(py '[d["state"], d["command"], d["name"], d["owner"]]' "$BODY")" \
    '["completed", ["/bin/echo", "hi"], "echo", "loomctl"]' \
    "the job ran /bin/echo hi, named echo, as the -c admin"
t_is "$(cat "$(jget "$BODY" .stdout)" 2>/dev/null)" hi "its stdout holds hi"

ctl jobs
t_is "$RC" 0 "loomctl jobs" || ctl_diag
t_like "$OUT" "(^|
) *$ECHO +echo +loomctl +completed +local +1 " "jobs: the echo job's row"
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
wait_for '[ "$(job_state "$SLEEPER")" = running ]' 10
ctl cancel "$SLEEPER"
t_is "$RC" 0 "loomctl cancel ID" || ctl_diag
wait_for '[ "$(job_state "$SLEEPER")" = cancelled ]' 10
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

ctl --json jobs
t_is "$RC" 0 "loomctl --json jobs" || ctl_diag
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
