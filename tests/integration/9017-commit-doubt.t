#!/usr/bin/env bash
# 9017-commit-doubt.t - a submit whose commit lost its connection under
# it: stored or not, and loomd cannot tell until the database answers
# again. loomd reaches PostgreSQL through a proxy (tests/lib/pgcut.py)
# that cuts the committer's connection once the server has committed the
# job's row and before loomd hears so ("after"), or instead of sending
# the write ("before"). The submit gets 503 saying it may be stored; once
# the database answers, a stored job is taken back and runs once, as its
# user, and its key's retry is told its id; a job that was not stored
# never shows up, and its key's retry makes it then. An array's tasks
# whose first write is so are made again and their rows deleted; a
# maintenance request so is deleted, as its asker was told (503, not
# accepted).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

W=$T/w
mkdir -m 1777 "$W"
pg_start || t_bail "PostgreSQL did not start"

# ---- the proxy between loomd and PostgreSQL --------------------------------
P=$T/pgx
mkdir -p "$P"
if [ "$(id -u)" = 0 ]; then
    chown "root:$LOOM_SERVICE_USER" "$P" && chmod 0750 "$P"
fi
echo pass >"$T/mode"
: >"$T/cuts"
python3 "$LOOM_TOP_SRCDIR/tests/lib/pgcut.py" --listen "$P" \
    --upstream "$LOOM_PG_DIR" --mode-file "$T/mode" --log "$T/cuts" \
    2>"$T/pgcut.err" &
PGCUT=$!
t_cleanup "kill $PGCUT 2>/dev/null"
wait_for '[ -S "$P/.s.PGSQL.5432" ]' 10 || t_bail "the proxy did not start"
LOOM_PG_CONNINFO="host=$P dbname=loom user=postgres"

loomd_conf <<EOF
[scheduler]
interval_s = 0.2
$(local_cluster 2 1)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"

body() {
    python3 -c 'import json, sys
print(json.dumps({"name": sys.argv[1], "command": ["/bin/sh", "-c",
    "echo $LOOM_JOB_ID $(id -un) >> " + sys.argv[2] + "/starts"],
    "request": {"cluster": "local", "walltime_s": 60}}))' "$1" "$W"
}
# submit NAME [KEY]: POST it (with Idempotency-Key KEY); STATUS and BODY.
submit_as() {
    if [ -n "${2:-}" ]; then
        api POST /v1/jobs "$(body "$1")" -H "Idempotency-Key: $2" >/dev/null
    else
        api POST /v1/jobs "$(body "$1")" >/dev/null
    fi
}
rows() { pg_sql "SELECT count(*) FROM jobs WHERE doc->>'name' = '$1'"; }
row_id() { pg_sql "SELECT id FROM jobs WHERE doc->>'name' = '$1'"; }
row_state() { pg_sql "SELECT state FROM jobs WHERE doc->>'name' = '$1'"; }
ran() { awk -v id="$1" '$1 == id' "$W/starts" 2>/dev/null | wc -l; }
ran_as() { awk -v id="$1" '$1 == id {print $2}' "$W/starts" 2>/dev/null; }

# is_doubt WHAT: the answer of a submit whose commit is in doubt
is_doubt() {
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" 503/unavailable \
        "$1: the submit gets 503 unavailable" || t_diag "$BODY"
    t_like "$(jget "$BODY" .error.message 2>/dev/null)" \
        'lost while the job was committed, so it may be stored' \
        "$1: ... saying it may be stored"
}

# ---- committed, its answer lost; retried with its key -----------------------
echo after >"$T/mode"
submit_as keyed k-9017-a
is_doubt "keyed, cut after"
t_like "$(cat "$T/cuts")" 'cut after loom_jobs_(insert|turn)' \
    "keyed: the proxy cut the connection after the commit"
t_is "$(rows keyed)" 1 "keyed: the job is stored"
K=$(row_id keyed)
wait_for '[ "$(row_state keyed)" = completed ]' 60
t_is "$(row_state keyed)" completed "keyed: loomd took it back and it ran"
submit_as keyed k-9017-a
t_is "$STATUS/$(jget "$BODY" .id)" "200/$K" \
    "keyed: its key's retry is told its id (200)" || t_diag "$BODY"
t_is "$(rows keyed)" 1 "keyed: still one job"
t_is "$(ran "$K")/$(ran_as "$K")" "1/$ALICE" "keyed: it ran once, as $ALICE"
api GET "/v1/jobs/$K" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/completed \
    "keyed: GET /v1/jobs/$K shows it completed"

# ---- committed, its answer lost; no key ---------------------------------------
echo after >"$T/mode"
submit_as plain
is_doubt "no key, cut after"
t_is "$(rows plain)" 1 "no key: the job is stored"
PL=$(row_id plain)
wait_for '[ "$(row_state plain)" = completed ]' 60
t_is "$(row_state plain)" completed "no key: loomd took it back and it ran"
t_is "$(ran "$PL")/$(ran_as "$PL")" "1/$ALICE" "no key: it ran once, as $ALICE"
api GET "/v1/jobs?name=plain" >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/1 \
    "no key: the list shows it" || t_diag "$BODY"
t_is "$(grep -c 'and it is stored: taken back' "$T/loomd.log")" 2 \
    "loomd's log says both were taken back"

# ---- never sent: nothing stored, the retry makes it ---------------------------
echo before >"$T/mode"
submit_as unsent k-9017-b
is_doubt "keyed, cut before"
t_like "$(cat "$T/cuts")" 'cut before loom_jobs_(insert|turn)' \
    "unsent: the proxy cut the connection before the write"
wait_for 'grep -q "commits in doubt settled: 0 of 1" "$T/loomd.log"' 30
t_like "$(cat "$T/loomd.log")" 'commits in doubt settled: 0 of 1 ' \
    "unsent: loomd looked and found it not stored"
t_is "$(rows unsent)" 0 "unsent: no job is stored"
api GET "/v1/jobs?name=unsent" >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/0 "unsent: none is listed"
submit_as unsent k-9017-b
t_is "$STATUS" 201 "unsent: its key's retry makes it (201)" || t_diag "$BODY"
U=$(jget "$BODY" .id)
wait_for '[ "$(row_state unsent)" = completed ]' 60
t_is "$(rows unsent)/$(row_state unsent)" 1/completed "unsent: one job, completed"
t_is "$(ran "$U")/$(ran_as "$U")" "1/$ALICE" "unsent: it ran once, as $ALICE"

# ---- an array's tasks: made again, their first rows deleted --------------------
api POST /v1/jobs "$(python3 -c 'import json, sys
print(json.dumps({"name": "arr", "array": "1-2", "hold": True,
    "command": ["/bin/sh", "-c", "echo $LOOM_ARRAY_TASK_ID $LOOM_JOB_ID "
                "$(id -un) >> " + sys.argv[1] + "/tasks"],
    "request": {"cluster": "local", "walltime_s": 60}}))' "$W")" >/dev/null
t_is "$STATUS" 201 "array: submitted held" || t_diag "$BODY"
A=$(jget "$BODY" .id)
echo after >"$T/mode"
api POST "/v1/jobs/$A/release" >/dev/null
t_is "$STATUS" 200 "array: released" || t_diag "$BODY"
wait_for 'grep -q "cut after" <(sed -n 4p "$T/cuts")' 30
t_like "$(sed -n 4p "$T/cuts")" 'cut after loom_jobs_(insert|turn)' \
    "array: the proxy cut the write of its first tasks after the commit"
# task_rows [STATE]: how many of the array's tasks are stored (in STATE)
task_rows() {
    pg_sql "SELECT count(*) FROM jobs WHERE doc->>'array_job_id' = '$A'
            AND doc->>'array_task_id' IS NOT NULL${1:+ AND state = '$1'}"
}
wait_for '[ "$(task_rows completed)" -ge 2 ]' 60
t_is "$(cut -d' ' -f1 "$W/tasks" 2>/dev/null | sort | tr '\n' ' ')" "1 2 " \
    "array: each task ran once"
t_is "$(cut -d' ' -f3 "$W/tasks" 2>/dev/null | sort -u)" "$ALICE" "array: as $ALICE"
t_is "$(task_rows)" 2 "array: two task rows stored, the first ones deleted"
t_like "$(cat "$T/loomd.log")" 'commits in doubt settled: 0 of 0 new job\(s\) were stored and are taken back; 2 task\(s\)' \
    "array: loomd's log says the two were made again"

# ---- a maintenance request: deleted, as its asker was told ----------------------
MREQ='{"nodes":["local/n1"],"action":"node-off","reason":"doubt","window":{"duration_s":30}}'
mreqs() { pg_sql "SELECT count(*) FROM maintenance"; }
echo after >"$T/mode"
api POST /v1/maintenance "$MREQ" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" 503/unavailable \
    "maintenance, cut after: 503 unavailable" || t_diag "$BODY"
t_like "$(jget "$BODY" .error.message 2>/dev/null)" 'was not accepted' \
    "maintenance: ... saying it was not accepted"
t_like "$(sed -n 5p "$T/cuts")" 'cut after maintenance' \
    "maintenance: the proxy cut its write after the commit"
wait_for '[ "$(mreqs)" = 0 ]' 30
t_is "$(mreqs)" 0 "maintenance: the stored request is deleted once the database answers"
t_like "$(cat "$T/loomd.log")" 'maintenance: 1 request\(s\) whose first write lost its connection deleted' \
    "maintenance: loomd's log says so"
api GET /v1/maintenance >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/0 "maintenance: none is listed"
api POST /v1/maintenance "$MREQ" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 201/planned "maintenance: the retry is accepted" ||
    t_diag "$BODY"
t_is "$(mreqs)" 1 "maintenance: ... and stored once"
api DELETE "/v1/maintenance/$(jget "$BODY" .id)" >/dev/null
t_is "$STATUS" 200 "maintenance: cancelled again" || t_diag "$BODY"

t_is "$(wc -l <"$T/cuts")" 5 "the proxy cut five connections, no more"
t_is "$(awk '{print $2}' "$W/starts" | sort -u)" "$ALICE" "every job ran as $ALICE"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
