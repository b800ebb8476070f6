#!/usr/bin/env bash
# 9016-start-light.t - start-up reads in full only what stays in memory:
# the jobs under way, arrays and their tasks, and the jobs that ended
# within job_memory_s. A job that ended before is read light (no
# document) and is gone from the start. Three hundred jobs end; most are
# made old in PostgreSQL (their end an hour ago). loomd started with
# job_memory_s = 0 reads them all; started again with job_memory_s = 600
# it holds only the open and recent ones (GET /v1/runtime's
# jobs_in_memory, exactly), and every answer about the old ones is the
# same: GET /v1/jobs/{id}, the list of ended jobs, loomctl jobs --all,
# the counts by state, fair share's past usage, a repeated
# Idempotency-Key; afterok/afternotok on them resolve as their states
# say, and the next id follows the highest (an old one).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

N_BULK=300

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
job_memory_s = 0
$(local_cluster 4 2)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# ---- the jobs: open, recent, an array, and many that become old ------------
submit '{"name": "recent", "command": ["/bin/true"]}'
R1=$JOB
submit '{"name": "recent", "command": ["/bin/true"], "hold": true}'
R2=$JOB
api DELETE "/v1/jobs/$R2" >/dev/null
submit '{"name": "open", "command": ["/bin/true"], "hold": true}'
H=$JOB
submit '{"name": "arr", "array": "1-3", "command": ["/bin/true"]}'
A=$JOB
submit '{"name": "ok", "command": ["/bin/true"]}'
C=$JOB
submit '{"name": "bad", "command": ["/bin/sh", "-c", "exit 3"]}'
F=$JOB
KEYED='{"name": "keyed", "command": ["/bin/true"]}'
api POST /v1/jobs "$KEYED" -H 'Idempotency-Key: k-9016' >/dev/null
K=$(jget "$BODY" .id)
python3 "$LOOM_TOP_SRCDIR/tests/lib/heldjobs.py" "$LOOM_URL" "$ADMIN" "$N_BULK" \
    >"$T/bulk" 2>&1
t_is "$?" 0 "$N_BULK held jobs submitted and cancelled" || t_diag "$(cat "$T/bulk")"
read -r FIRST LAST <"$T/bulk"
wait_for 'ended "$R1" && ended "$C" && ended "$F" && ended "$K" && ended "$A"' 60
t_is "$(job_state "$R1")/$(job_state "$C")/$(job_state "$F")/$(job_state "$K")/$(job_state "$A")/$(job_state "$H")" \
    completed/completed/failed/completed/completed/held \
    "the jobs ended (but the held one)"
wait_for '[ "$(runtime_counter .scheduler.jobs.cancelled)" = $((N_BULK + 1)) ]' 30
loomd_stop

# ---- old: every ended job but R1, R2 and the array ended an hour ago --------
OLD_END=$(at -3600)
OLD_START=$(at -3610)
pg_sql "UPDATE jobs SET doc = regexp_replace(regexp_replace(doc::text,
            '\"end_time\": ?\"[^\"]*\"', '\"end_time\":\"$OLD_END\"'),
            '\"start_time\": ?\"[^\"]*\"', '\"start_time\":\"$OLD_START\"')::json,
            end_time = '$OLD_END',
            start_time = CASE WHEN start_time IS NOT NULL THEN '$OLD_START' END
        WHERE state IN ('completed', 'failed', 'cancelled')
          AND id NOT IN ($R1, $R2) AND doc->>'array' IS NULL
          AND doc->>'array_task_id' IS NULL" >/dev/null
t_is "$(pg_sql "SELECT count(*) FROM jobs WHERE doc->>'end_time' = '$OLD_END'
                   AND end_time = '$OLD_END' AND start_time IS NOT DISTINCT FROM
                   doc->>'start_time'")" \
    $((N_BULK + 3)) "the bulk jobs, ok, bad and keyed ended an hour ago"
MAX=$(pg_sql "SELECT max(id) FROM jobs")
t_is "$MAX" "$LAST" "the highest id is an old job's"


# answers: every answer about the old jobs, one per line.
answers() {
    local id
    TOKEN=$ADMIN
    for id in $C $F $K $FIRST $LAST $R1 $R2 $H $A; do
        api_line "get $id" GET "/v1/jobs/$id"
    done
    api_line "list ended" GET "/v1/jobs?state=completed,failed,cancelled&limit=1000"
    api_line "list bulk" GET "/v1/jobs?name=bulk&state=cancelled&limit=1000&fields=id,state,end_time"
    echo "loomctl jobs --all: $(loomctl jobs --all 2>&1 | md5sum)"
    api GET /v1/runtime >/dev/null
    echo "counts $(py 'd["scheduler"]["jobs"]' "$BODY")"
    # decayed usage at two moments: the same to four figures
    echo "fair share $(py '{o: "%.4g" % v["usage_cpu_s"] for o, v in
        d["scheduler"]["fairshare"]["owners"].items()}' "$BODY")"
    api_line "same key" POST /v1/jobs "$KEYED" -H 'Idempotency-Key: k-9016'
    api_line "key, other body" POST /v1/jobs \
        '{"name": "other", "command": ["/bin/true"]}' \
        -H 'Idempotency-Key: k-9016'
}

# ---- job_memory_s = 0: all in memory, as before -----------------------------
loomd_start || t_bail "loomd did not start again"
t_is "$(runtime_counter .scheduler.jobs_evicted)" 0 \
    "job_memory_s = 0: no job left memory"
t_is "$(runtime_counter .scheduler.jobs_in_memory)" $((N_BULK + 10)) \
    "... all $((N_BULK + 10)) are in memory"
answers >"$T/before"
t_like "$(grep '^same key' "$T/before")" "^same key 200 .*\"id\":\"$K\"" \
    "the repeated key gets job $K"
t_like "$(grep '^fair share' "$T/before")" "admin" \
    "fair share counts the old jobs' use"
loomd_stop

# ---- job_memory_s = 600: only the open and recent ones ----------------------
sed -i 's/^job_memory_s = 0$/job_memory_s = 600/' "$T/loom.conf"
loomd_start || t_bail "loomd did not start with job_memory_s = 600"
# in memory: H, R1, R2, the array and its three tasks
t_is "$(runtime_counter .scheduler.jobs_in_memory)" 7 \
    "after the restart 7 jobs are in memory: open, recent, an array"
t_is "$(runtime_counter .scheduler.jobs_evicted)" $((N_BULK + 3)) \
    "the $((N_BULK + 3)) old ones were never loaded in full"
t_like "$(cat "$T/loomd.log" 2>/dev/null)" "ended before 600 s ago left in the database" \
    "the log says how many were left in the database" ||
    t_diag "$(grep 'loaded' "$T"/*.log | tail -2)"
answers >"$T/after"
while IFS= read -r b && IFS= read -r a <&3; do
    t_is "$a" "$b" "the same after a light start: ${b:0:40}"
done <"$T/before" 3<"$T/after"

# ---- the next id, and dependencies on old jobs -------------------------------
TOKEN=$ADMIN
submit '{"name": "next", "command": ["/bin/true"]}'
t_is "$JOB" $((MAX + 1)) "the next job is $((MAX + 1)), past the highest old one"
deps=()
for d in "afterok:$C" "afternotok:$C" "afterok:$F" "afternotok:$F" \
    "afterany:$LAST" "afterok:$LAST"; do
    submit "{\"name\": \"d\", \"command\": [\"/bin/true\"], \"dependency\": \"$d\"}" ||
        t_diag "dependency $d refused: $BODY"
    deps+=("$JOB")
done
for i in "${deps[@]}"; do
    wait_for 'ended "$i"' 60
    echo "$(field "$i" .dependency) $(field "$i" .state) $(field "$i" .reason)"
done >"$T/deps"
t_is "$(cat "$T/deps")" "afterok:$C completed null
afternotok:$C cancelled dependency never satisfied: job $C completed (afternotok)
afterok:$F cancelled dependency never satisfied: job $F failed (afterok)
afternotok:$F completed null
afterany:$LAST completed null
afterok:$LAST cancelled dependency never satisfied: job $LAST was cancelled (afterok)" \
    "dependencies on old jobs resolve by their states"
t_done
