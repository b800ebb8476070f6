#!/usr/bin/env bash
# 9012-job-memory.t - ended jobs leave loomd's memory job_memory_s after
# they ended (0 at first: they stay; then 3 s, set by a reload) and are
# read from PostgreSQL from then on: every answer about them is the same
# before and after. GET /v1/jobs/{id} (to its owner and to another user),
# its output, the list with ended states, ?fields= and ?cluster= (as the
# loom adaptor of an outer loomd reads it), the accounting, cancel, hold,
# release and patch (409), a repeated Idempotency-Key (the same job; 409
# for another body), afterok/afternotok/afterany and singleton
# dependencies on them, and an array whose tasks partly ended (arrays stay
# in memory). The jobs in memory (GET /v1/runtime) and loomd's RSS fall
# once 3000 ended jobs have gone; after a restart the answers are the
# same.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"


pg_start || t_bail "PostgreSQL did not start"
t_account BOB_U bob
accounts_default
map_account bob "$BOB_U"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
job_memory_s = 0
$(local_cluster 4 2)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
BOB=$(token_for bob user)
t_cleanup 'touch "$T/go"'

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$LOOMD_PID/status"; }
# pick IDS: the items of the last list answer whose id is one of IDS.
pick() {
    py "[r for r in d['items'] if r['id'] in '$1'.split()]" "$BODY"
}

# ---- the jobs, and every answer about them while they are in memory -------
submit '{"name": "ok", "command": ["/bin/true"]}'
C=$JOB
submit '{"name": "bad", "command": ["/bin/sh", "-c", "echo bad-out; exit 3"]}'
F=$JOB
submit '{"name": "gone", "command": ["/bin/true"], "hold": true}'
X=$JOB
api DELETE "/v1/jobs/$X" >/dev/null
KEYED='{"name": "keyed", "command": ["/bin/true"]}'
api POST /v1/jobs "$KEYED" -H 'Idempotency-Key: k-9012' >/dev/null
K=$(jget "$BODY" .id)
submit '{"name": "solo", "command": ["/bin/true"]}'
S=$JOB
submit "{\"name\": \"arr\", \"array\": \"1-3\", \"command\": [\"/bin/sh\", \"-c\", \"[ \$LOOM_ARRAY_TASK_ID = 3 ] || exit 0; i=0; while [ ! -e $T/go ] && [ \$i -lt 1500 ]; do sleep 0.2; i=\$((i+1)); done\"]}"
A=$JOB
wait_for 'ended "$C" && ended "$F" && ended "$X" && ended "$K" && ended "$S"' 60
t_is "$(job_state "$C")/$(job_state "$F")/$(job_state "$X")" \
    completed/failed/cancelled "three jobs ended: completed, failed, cancelled"
wait_for '[ "$(py "d[\"array_counts\"][\"completed\"]" "$(api GET "/v1/jobs/$A")")" = 2 ]' 60
t_is "$(field "$A" .array_counts.completed)/$(field "$A" .array_counts.running)" \
    2/1 "an array: two tasks completed, one runs"
IDS="$C $F $X $K $S"


# answers ...: every answer about the ended jobs, one per line.
answers() {
    local id
    TOKEN=$ADMIN
    for id in $IDS $A; do
        api GET "/v1/jobs/$id" >/dev/null
        echo "get $id $STATUS $BODY"
    done
    api_line output GET "/v1/jobs/$F/output"
    TOKEN=$BOB
    api_line "bob get" GET "/v1/jobs/$C"
    TOKEN=$ADMIN
    api GET "/v1/jobs?state=completed,failed,cancelled" >/dev/null
    echo "list ended $STATUS $(pick "$IDS")"
    api_line "list first 3" GET "/v1/jobs?limit=3"
    api_line "list fields" GET "/v1/jobs?after=$C&limit=2&fields=id,state,exit_code"
    api GET "/v1/jobs?cluster=local&after=0&limit=100" >/dev/null
    echo "list cluster $STATUS $(pick "$IDS")"
    api_line "list name" GET "/v1/jobs?name=bad"
    api GET "/v1/accounting?start=$(at -3600)" >/dev/null
    echo "accounting $STATUS $(pick "$IDS")"
    api_line cancel DELETE "/v1/jobs/$C"
    api_line hold POST "/v1/jobs/$F/hold"
    api_line release POST "/v1/jobs/$X/release"
    api_line patch PATCH "/v1/jobs/$C" '{"name": "x"}'
    TOKEN=$BOB
    api_line "bob cancel" DELETE "/v1/jobs/$C"
    TOKEN=$ADMIN
    api_line "same key" POST /v1/jobs "$KEYED" -H 'Idempotency-Key: k-9012'
    api_line "key, other body" POST /v1/jobs \
        '{"name": "other", "command": ["/bin/true"]}' \
        -H 'Idempotency-Key: k-9012'
}

# deps TAG: jobs that depend on the ended ones; their ends, one per line.
deps() {
    local d ids=() i
    TOKEN=$ADMIN
    for d in "afterok:$C" "afternotok:$C" "afterok:$F" "afternotok:$F" \
        "afterany:$X" "afterok:$X" "afterok:$C:$S"; do
        submit "{\"name\": \"d\", \"command\": [\"/bin/true\"], \"dependency\": \"$d\"}" ||
            t_diag "$1: dependency $d refused: $BODY"
        ids+=("$JOB")
    done
    submit '{"name": "solo", "command": ["/bin/true"], "dependency": "singleton"}'
    ids+=("$JOB")
    for i in "${ids[@]}"; do
        wait_for 'ended "$i"' 60
        echo "$(field "$i" .dependency) $(field "$i" .state) $(field "$i" .reason)"
    done
}

answers >"$T/before"
deps before >"$T/deps.before"
t_is "$(grep -c '' "$T/deps.before")" 8 "eight dependent jobs ended"
t_like "$(cat "$T/deps.before")" "afternotok:$C cancelled dependency never satisfied: job $C completed" \
    "afternotok on a completed job is never met"
IN_BEFORE=$(runtime_counter .scheduler.jobs_in_memory)
t_is "$(runtime_counter .scheduler.jobs_evicted)" 0 "no job has left memory yet"

# ---- the ended jobs leave memory: 3 s after they ended --------------------
sed -i 's/^job_memory_s = 0$/job_memory_s = 3/' "$T/loom.conf"
TOKEN=$ADMIN
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "job_memory_s = 3 by a reload" || t_diag "$BODY"
wait_for '[ "$(runtime_counter .scheduler.jobs_evicted)" -ge 13 ]' 30
t_ok "$([ "$(runtime_counter .scheduler.jobs_evicted)" -ge 13 ]; echo $?)" \
    "the ended jobs left memory ($(runtime_counter .scheduler.jobs_evicted) of them)"
t_ok "$([ "$(runtime_counter .scheduler.jobs_in_memory)" -lt "$IN_BEFORE" ]; echo $?)" \
    "the jobs in memory fell ($IN_BEFORE -> $(runtime_counter .scheduler.jobs_in_memory))"
t_ok "$([ "$(runtime_counter .scheduler.jobs_in_memory)" -ge 1 ]; echo $?)" \
    "the array with a task still running stays"

answers >"$T/after"
while IFS= read -r b && IFS= read -r a <&3; do
    t_is "$a" "$b" "the same after it left memory: ${b%% {*}"
done <"$T/before" 3<"$T/after"
deps after >"$T/deps.after"
t_is "$(cat "$T/deps.after")" "$(cat "$T/deps.before")" \
    "dependencies on jobs that left memory resolve the same"

touch "$T/go"
wait_for 'ended "$A"' 60
t_is "$(job_state "$A")" completed "the array completes once its last task does"
answers >"$T/final"

# ---- thousands of ended jobs: the count and the RSS fall -------------------
# memory: 0 again, so that they all stay until the next reload
sed -i 's/^job_memory_s = 3$/job_memory_s = 0/' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
RSS0=$(rss_kb)
python3 "$LOOM_TOP_SRCDIR/tests/lib/heldjobs.py" "$LOOM_URL" "$ADMIN" 3000 30 \
    >"$T/bulk" 2>&1
t_is "$?" 0 "3000 held jobs submitted and cancelled" || t_diag "$(cat "$T/bulk")"
read -r FIRST LAST <"$T/bulk"
RSS1=$(rss_kb)
IN1=$(runtime_counter .scheduler.jobs_in_memory)
t_ok "$([ "$IN1" -ge 3000 ]; echo $?)" "under job_memory_s = 0 they stay in memory ($IN1)"
sed -i 's/^job_memory_s = 0$/job_memory_s = 3/' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
wait_for '[ "$(runtime_counter .scheduler.jobs_in_memory)" -lt 100 ]' 60
IN2=$(runtime_counter .scheduler.jobs_in_memory)
RSS2=$(rss_kb)
t_ok "$([ "$IN2" -lt 100 ]; echo $?)" "job_memory_s = 3: then they leave it ($IN1 -> $IN2 jobs)"
# AddressSanitizer keeps freed memory in its quarantine: the RSS says
# something only of a build without it (tests/bench/soak.sh measures it)
if grep -q asan "/proc/$LOOMD_PID/maps"; then
    t_diag "RSS not judged in a sanitizer build, which keeps freed memory" \
        "(KB: $RSS0, $RSS1, $RSS2)"
else
    t_ok "$([ $((RSS1 - RSS2)) -gt $(((RSS1 - RSS0) / 2)) ]; echo $?)" \
        "loomd's RSS falls with them (KB: $RSS0 before, $RSS1 with them, $RSS2 after)"
fi
api GET "/v1/jobs/$LAST" >/dev/null
t_is "$STATUS/$(jget "$BODY" .state)" 200/cancelled "the last is read from the database"
api GET "/v1/jobs?state=cancelled&name=bulk&limit=5000&fields=id" >/dev/null
t_is "$(jlen "$BODY" .items)" 3000 "the list has all 3000 (from the database)"
t_is "$(py 'd["items"][0]["id"] + " " + d["items"][-1]["id"]' "$BODY")" \
    "$FIRST $LAST" "... in id order"

# ---- a restart: ended jobs are read, then let go ---------------------------
loomd_stop
loomd_start || t_bail "loomd did not start again"
wait_for '[ "$(runtime_counter .scheduler.jobs_in_memory)" -lt 100 ]' 60
t_ok "$([ "$(runtime_counter .scheduler.jobs_in_memory)" -lt 100 ]; echo $?)" \
    "after a restart the old ended jobs leave memory again"
answers >"$T/restarted"
t_is "$(cat "$T/restarted")" "$(cat "$T/final")" \
    "the answers are the same after a restart"
t_done
