#!/usr/bin/env bash
# 0012-logs.t - log_format = json: every line loomd writes is one JSON
# object with its time, level, thread and message, and the request, job,
# node, cluster and reservation it is about as fields of their own; every
# answer carries X-Request-Id, and the lines other threads write for that
# request (the maintenance thread setting a goal, the scheduler making a
# reservation) name the same id; a reload switches back to text, where the
# id shows as request=ID.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf '[cluster local]' 'adaptor = local' 'nodes = 2' 'poll_s = 0.2'
sed -i '1a log_format = json\nlog_level = debug' "$T/loom.conf"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# rid METHOD PATH BODY: the X-Request-Id of one answer (api's curl, its
# headers kept)
rid() {
    api "$1" "$2" "$3" -D "$T/headers" >/dev/null
    tr -d '\r' <"$T/headers" | sed -n 's/^[Xx]-[Rr]equest-[Ii]d: //p'
}
R1=$(rid PUT /v1/goal/nodes/local/n1 '{"attributes": {"kernel": "6.1"}}')
t_like "$R1" '^[0-9a-f]{8}-[0-9]+$' "an answer carries X-Request-Id ($R1)"
R2=$(rid GET /v1/clusters '')
t_isnt "$R2" "$R1" "... another for the next request"
R3=$(rid POST /v1/reservations '{"cluster": "local", "nodes": ["local/n2"], "start": "2031-01-01T00:00:00Z", "duration_s": 600}')
submit '{"name": "echo", "command": ["/bin/echo", "hi"], "request": {"cluster": "local"}}'
wait_for '[ "$(job_state "$JOB")" = completed ]' 30
t_is "$(job_state "$JOB")" completed "a job ran"
t_is "$(field "$JOB" .account)" "$T_USER" "... as $T_USER, the account the admin maps to"
wait_for "grep -q 'job=$JOB' '$T/loomd.log'" 10

python3 - "$T/loomd.log" "$R1" "$R3" "$JOB" >"$T/check.out" 2>&1 <<'PY'
import json, sys
log, r1, r3, job = sys.argv[1:]
lines = open(log, encoding="utf-8").read().splitlines()
bad, objs = [], []
for n, line in enumerate(lines, 1):
    try:
        o = json.loads(line)
    except ValueError as e:
        bad.append("line %d is not JSON: %s: %s" % (n, e, line[:120]))
        continue
    if not isinstance(o, dict):
        bad.append("line %d is not an object" % n)
        continue
    missing = [k for k in ("time", "level", "thread", "msg") if k not in o]
    if missing:
        bad.append("line %d lacks %s" % (n, missing))
    objs.append(o)
def has(pred):
    return any(pred(o) for o in objs)
print("lines", len(lines))
print("bad", "; ".join(bad[:5]))
print("maint", has(lambda o: o.get("request") == r1 and o.get("thread") == "maint" and o.get("node") == "local/n1"))
print("http", has(lambda o: o.get("request") == r1 and o.get("thread") == "http"))
print("sched", has(lambda o: o.get("request") == r3 and o.get("thread") == "sched" and o.get("reservation") == "1" and o.get("cluster") == "local"))
print("job", has(lambda o: o.get("job") == job and o.get("cluster") == "local" and o["thread"].startswith("w-")))
print("ended", has(lambda o: o.get("job") == job and o["thread"] == "sched" and "completed" in o["msg"] and "request" not in o))
threads = {o["thread"] for o in objs}
print("threads", {"main", "http", "maint", "sched"} <= threads, " ".join(sorted(threads)))
PY
t_like "$(sed -n 1p "$T/check.out")" '^lines [1-9][0-9]*$' "loomd wrote lines"
t_is "$(sed -n 2p "$T/check.out")" "bad " "every line is one JSON object with time, level, thread and msg" ||
    t_diag "$(cat "$T/check.out")"
t_is "$(sed -n 3p "$T/check.out")" "maint True" \
    "the maintenance thread's line for the goal names the PUT's request and the node"
t_is "$(sed -n 4p "$T/check.out")" "http True" "the HTTP thread's line for it too (log_level = debug)"
t_is "$(sed -n 5p "$T/check.out")" "sched True" \
    "the scheduler's line for the reservation names the POST's request, the reservation and the cluster"
t_is "$(sed -n 6p "$T/check.out")" "job True" \
    "the cluster's worker's line about the job has job and cluster"
t_is "$(sed -n 7p "$T/check.out")" "ended True" \
    "the scheduler's line of its end (a poll's, no request's) has no request"
t_like "$(sed -n 8p "$T/check.out")" '^threads True ' "lines of the threads main, http, maint and sched" ||
    t_diag "$(cat "$T/check.out")"

# back to text: a reload switches the format
sed -i 's/^log_format = json$/log_format = text/' "$T/loom.conf"
n=$(wc -l <"$T/loomd.log")
kill -HUP "$LOOMD_PID"
wait_for "tail -n +$((n + 1)) '$T/loomd.log' | grep -q 'configuration .* reloaded'" 30
R4=$(rid PUT /v1/goal/nodes/local/n2 '{"attributes": {"kernel": "6.1"}}')
wait_for "grep -q 'request=$R4 node=local/n2' '$T/loomd.log'" 10
t_like "$(grep "request=$R4 node=local/n2" "$T/loomd.log")" \
    "^[0-9T:.-]+Z info thread=maint request=$R4 node=local/n2 " \
    "after a reload to text: thread=, then request=ID"
t_is "$(tail -n 1 "$T/loomd.log" | cut -c1)" 2 "... and no JSON any more"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
