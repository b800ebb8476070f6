#!/usr/bin/env bash
# 6009-dependencies.t - dependencies on the local executor: afterok waits
# and says for which job; afternotok is ended when its job completes,
# saying why; afterany and after; a whole array and one of its tasks;
# '?' (any of them); singleton; a dependency on no job is refused; with
# kill_invalid_depend = no a job that can never start stays pending saying
# so; and dependencies survive a restart. The jobs run as $T_USER, the
# account admin's jobs run as.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# conf KILL: loom.conf with kill_invalid_depend = KILL.
conf() {
    loomd_conf <<EOF
[scheduler]
interval_s = 0.2
kill_invalid_depend = $1
$(local_cluster 4 1)
EOF
}
pg_start || t_bail "PostgreSQL did not start"
conf yes
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
t_cleanup 'touch "$T/go" "$T/go2" "$T/go3" "$T/go4"'

# job_json NAME GATE [EXIT] [MORE]: a job that waits for file GATE, then
# ends with EXIT (0); MORE: more fields ("dependency": ...).
job_json() {
    printf '{"name": "%s", "command": ["/bin/sh", "-c", "i=0; while [ ! -e %s ] && [ $i -lt 1500 ]; do sleep 0.2; i=$((i+1)); done; exit %s"]%s}' \
        "$1" "$2" "${3:-0}" "${4:+, $4}"
}
reason() { field "$1" .reason; }
# start ID: its start time (epoch seconds), "-" before it starts.
start() { epoch "$(field "$1" .start_time)"; }
end() { epoch "$(field "$1" .end_time)"; }

# ---- afterok, afternotok, afterany, after -----------------------------------------
submit "$(job_json parent "$T/go")"
P=$JOB
submit "$(job_json ok "$T/nothing" 0 "\"dependency\": \"afterok:$P\"")"
OK=$JOB
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .dependency)" "pending/afterok:$P" \
    "an afterok job is accepted, pending"
t_is "$(jget "$BODY" .reason)" "waiting for job $P to complete (afterok)" \
    "... and says which job it waits for"
submit "$(job_json notok "$T/go" 0 "\"dependency\": \"afternotok:$P\"")"
NOTOK=$JOB
submit "$(job_json any "$T/go" 0 "\"dependency\": \"afterany:$P\"")"
ANY=$JOB
submit "$(job_json after "$T/go" 0 "\"dependency\": \"after:$P\"")"
AFTER=$JOB
wait_for '[ "$(job_state "$AFTER")" = running ]' 30
t_is "$(job_state "$P")/$(job_state "$AFTER")" running/running \
    "after: it starts once its job has started"
t_is "$(job_state "$OK")/$(job_state "$NOTOK")/$(job_state "$ANY")" \
    pending/pending/pending "afterok, afternotok and afterany wait"
t_is "$(field "$P" .account)/$(field "$AFTER" .account)" "$T_USER/$T_USER" \
    "the two running jobs are $T_USER's"
t_ok "$([ -n "$(account_procs "$T_USER")" ]; echo $?)" \
    "... and run as $T_USER (its processes: $(account_procs "$T_USER" | wc -l))"
t_is "$(reason "$ANY")" "waiting for job $P to end (afterany)" "afterany says why"
t_is "$(reason "$NOTOK")" "waiting for job $P to fail (afternotok)" \
    "afternotok says why"
touch "$T/go"
wait_for '[ "$(job_state "$NOTOK")" = cancelled ] && [ "$(job_state "$ANY")" = completed ]' 30
t_is "$(job_state "$P")/$(job_state "$NOTOK")" completed/cancelled \
    "the job completes: the afternotok job is ended"
t_is "$(reason "$NOTOK")" "dependency never satisfied: job $P completed (afternotok)" \
    "... with a reason that says why"
t_is "$(job_state "$ANY")" completed "afterany ran after it"
t_ok "$([ "$(start "$ANY")" -ge "$(end "$P")" ]; echo $?)" \
    "... not before it ended ($(start "$ANY") >= $(end "$P"))"
wait_for '[ "$(job_state "$OK")" = running ]' 30
t_is "$(job_state "$OK")" running "afterok: it runs once its job completed"
t_is "$(reason "$OK")" null "... its waiting reason gone"

# A job that fails: afterok is ended, afternotok runs.
submit "$(job_json fails "$T/go" 3)"
F=$JOB
wait_for '[ "$(job_state "$F")" = failed ]' 30
submit "$(job_json okf "$T/go" 0 "\"dependency\": \"afterok:$F\"")"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" \
    "cancelled/dependency never satisfied: job $F failed (afterok)" \
    "afterok on a failed job: ended at once, saying so"
submit "$(job_json notokf "$T/go" 0 "\"dependency\": \"afternotok:$F\"")"
NF=$JOB
wait_for '[ "$(job_state "$NF")" = completed ]' 30
t_is "$(job_state "$NF")" completed "afternotok on a failed job runs"
submit "$(job_json either "$T/go" 0 "\"dependency\": \"afterok:$F?afterany:$F\"")"
EI=$JOB
wait_for '[ "$(job_state "$EI")" = completed ]' 30
t_is "$(job_state "$EI")" completed "afterok:F?afterany:F: one of them is enough"

api POST /v1/jobs '{"command": ["true"], "dependency": "afterok:999999"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/dependency \
    "a dependency on no job: 400 on field dependency"
t_is "$(jget "$BODY" .error.message)" "dependency: there is no job 999999" \
    "... naming it"
api POST /v1/jobs "{\"command\": [\"true\"], \"dependency\": \"afterok:${P}_1\"}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/dependency: job $P is not an array: it has no task 1" \
    "a task of a job that is no array: 400"
api POST /v1/jobs '{"command": ["true"], "dependency": "afterfoo:1"}' >/dev/null
t_is "$STATUS" 400 "a dependency of an unknown type: 400"
t_like "$(jget "$BODY" .error.message)" "^field 'dependency': 'afterfoo' is not a dependency type: Loom takes after, afterany, afterok, afternotok" \
    "... naming the types Loom takes"

# ---- an array: as a whole, and one task -------------------------------------------
submit "{\"name\": \"arr\", \"array\": \"1-3\", \"command\": [\"/bin/sh\", \"-c\", \"i=0; while [ ! -e $T/go2.\$LOOM_ARRAY_TASK_ID ] && [ \$i -lt 1500 ]; do sleep 0.2; i=\$((i+1)); done\"]}"
A=$JOB
submit "$(job_json whole "$T/go" 0 "\"dependency\": \"afterok:$A\"")"
WHOLE=$JOB
submit "$(job_json task2 "$T/go" 0 "\"dependency\": \"afterok:${A}_2\"")"
TASK2=$JOB
t_is "$(jget "$BODY" .reason)" "waiting for job ${A}_2 to complete (afterok)" \
    "afterok on one task names it"
wait_for '[ "$(job_state "${A}_3")" = running ]' 30
touch "$T/go2.2"
wait_for '[ "$(job_state "$TASK2")" = completed ]' 30
t_is "$(job_state "${A}_2")/$(job_state "$TASK2")/$(job_state "$WHOLE")" \
    completed/completed/pending "task 2 done: its dependent ran, the whole array's waits"
touch "$T/go2.1" "$T/go2.3"
wait_for '[ "$(job_state "$WHOLE")" = completed ]' 30
t_is "$(job_state "$A")/$(job_state "$WHOLE")" completed/completed \
    "every task done: the job waiting for the whole array ran"

# ---- singleton ------------------------------------------------------------------------
submit "$(job_json single "$T/go3" 0 "\"dependency\": \"singleton\"")"
S1=$JOB
wait_for '[ "$(job_state "$S1")" = running ]' 30
submit "$(job_json single "$T/go3" 0 "\"dependency\": \"singleton\"")"
S2=$JOB
submit "$(job_json single "$T/go3" 0 "\"dependency\": \"singleton\"")"
S3=$JOB
t_is "$(job_state "$S2")/$(reason "$S2")" \
    "pending/waiting for job $S1 of the same name to end (singleton)" \
    "a second singleton of the same name waits, naming the one that runs"
touch "$T/go3"
wait_for '[ "$(job_state "$S3")" = completed ]' 60
t_is "$(job_state "$S1")/$(job_state "$S2")/$(job_state "$S3")" \
    completed/completed/completed "all three ran"
E1=$(end "$S1") B2=$(start "$S2") E2=$(end "$S2") B3=$(start "$S3") E3=$(end "$S3")
t_ok "$([ "$B2" -ge "$E1" ] && [ "$B3" -ge "$E1" ] &&
        { [ "$B3" -ge "$E2" ] || [ "$B2" -ge "$E3" ]; }; echo $?)" \
    "one at a time: each started once the one before had ended ($E1 <= $B2-$E2, $B3-$E3)"

# ---- kill_invalid_depend = no; a restart keeps dependencies -------------------------
loomd_stop
conf no
loomd_start || t_bail "loomd did not start again"
submit "$(job_json never "$T/go" 0 "\"dependency\": \"afterok:$F\"")"
NEVER=$JOB
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" \
    "pending/dependency never satisfied: job $F failed (afterok)" \
    "kill_invalid_depend = no: it stays pending, saying it never can start"
submit "$(job_json longp "$T/go4")"
LP=$JOB
submit "$(job_json waiter "$T/go" 0 "\"dependency\": \"afterok:$LP\"")"
WAITER=$JOB
wait_for '[ "$(job_state "$LP")" = running ]' 30
loomd_kill9
loomd_start || t_bail "loomd did not start after kill -9"
t_is "$(job_state "$WAITER")/$(reason "$WAITER")" \
    "pending/waiting for job $LP to complete (afterok)" \
    "after kill -9 the dependent still waits for its job, saying so"
t_is "$(job_state "$NEVER")/$(field "$NEVER" .dependency)" "pending/afterok:$F" \
    "... and the one that never can start keeps its dependency"
touch "$T/go4"
wait_for '[ "$(job_state "$WAITER")" = completed ]' 30
t_is "$(job_state "$LP")/$(job_state "$WAITER")" completed/completed \
    "its job completes, then it runs"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
