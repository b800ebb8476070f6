#!/usr/bin/env bash
# 2001-local-jobs.t - the local executor runs real processes: exit codes
# and the reasons that say how a job ended (an exit code, an exec that
# failed and why, a signal), output files, scripts, the environment (with
# LOOM_JOB_ID), and a job that waits for a busy 1-cpu node. The jobs run as
# the account the harness maps the admin token to, $T_USER, in its home
# (the request names no workdir), and write their output there.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# file_of ID KEY: the contents of the job's stdout or stderr file.
file_of() {
    local path
    api GET "/v1/jobs/$1" >/dev/null
    path=$(jget "$BODY" ".$2" 2>/dev/null) || return 1
    cat "$path"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster one]
adaptor = local
nodes = 1
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
# the account the admin token's jobs run as, and its home
ACCOUNT=$(awk '$1 == "LOOM" && $2 == "admin" { print $3; exit }' "$T/accounts")
t_is "$ACCOUNT" "$T_USER" "the harness maps admin to the test's account, $T_USER"
HOME_A=$(getent passwd "$ACCOUNT" | cut -d: -f6)
[ -d "$HOME_A" ] || t_bail "$ACCOUNT has no home"

# ---- exit code and output ------------------------------------------------------
submit '{"name": "three", "command": ["/bin/sh", "-c", "echo out-marker-1; echo err-marker-1 >&2; exit 3"], "error": "three-%j.err"}'
THREE=$JOB
wait_for 'ended "$THREE"' 30
api GET "/v1/jobs/$THREE" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["cluster"], d["nodes"], d["account"]]' "$BODY")" \
    "[\"failed\", 3, \"one\", [\"n1\"], \"$ACCOUNT\"]" \
    "exit 3: failed with exit_code 3 on one/n1, as $ACCOUNT"
t_is "$(jget "$BODY" .reason)" "exited with code 3" "... reason: exited with code 3"
t_is "$(jget "$BODY" .stdout)" "$HOME_A/loom-$THREE.out" \
    "the job names its stdout file: loom-%j.out in its working directory (its account's home)"
t_is "$(jget "$BODY" .stderr)" "$HOME_A/three-$THREE.err" "... and its stderr file, as asked (three-%j.err)"
t_is "$(stat -c %U "$HOME_A/loom-$THREE.out")" "$ACCOUNT" "... written as $ACCOUNT"
t_is "$(file_of "$THREE" stdout)" out-marker-1 "the stdout file holds what it printed"
t_is "$(file_of "$THREE" stderr)" err-marker-1 "the stderr file holds what it printed there"
t_like "$(py '[d["start_time"], d["end_time"]]' "$BODY")" \
    '^\["20[0-9TZ:-]+", "20[0-9TZ:-]+"\]$' "start and end times"
submit '{"name": "both", "command": ["/bin/sh", "-c", "echo one; echo two >&2"]}'
BOTH=$JOB
wait_for 'ended "$BOTH"' 30
t_is "$(field "$BOTH" .stdout)" "$(field "$BOTH" .stderr)" "without 'error': stderr goes to the output file too"
t_is "$(file_of "$BOTH" stdout)" "one
two" "... which holds both streams"

submit '{"name": "zero", "command": ["/bin/true"]}'
ZERO=$JOB
wait_for 'ended "$ZERO"' 30
api GET "/v1/jobs/$ZERO" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["reason"]]' "$BODY")" '["completed", 0, null]' \
    "exit 0: completed with exit_code 0, no reason"

submit '{"name": "missing", "command": ["/nonexistent/program"]}'
MISSING=$JOB
wait_for 'ended "$MISSING"' 30
api GET "/v1/jobs/$MISSING" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 127]' \
    "a program that does not exist: failed with exit_code 127"
t_is "$(jget "$BODY" .reason)" "cannot execute /nonexistent/program: No such file or directory" \
    "... reason: cannot execute it, and why"

printf '#!/bin/sh\necho never\n' >"$T/plain"
chmod 0644 "$T/plain"
submit "{\"name\": \"noexec\", \"command\": [\"$T/plain\"]}"
NOEXEC=$JOB
wait_for 'ended "$NOEXEC"' 30
api GET "/v1/jobs/$NOEXEC" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["reason"]]' "$BODY")" \
    "[\"failed\", 126, \"cannot execute $T/plain: Permission denied\"]" \
    "a file that is not executable: failed, 126, cannot execute it: Permission denied"

submit '{"name": "killed", "command": ["/bin/sh", "-c", "kill -KILL $$"]}'
KILLED=$JOB
wait_for 'ended "$KILLED"' 30
api GET "/v1/jobs/$KILLED" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["reason"]]' "$BODY")" \
    '["failed", 137, "killed by signal 9 (KILL)"]' \
    "a job killed by SIGKILL: failed, 137, killed by signal 9 (KILL)"

# ---- script ---------------------------------------------------------------------
submit '{"name": "script", "script": "#!/bin/sh\necho \"script ran as $0\"\nexit 0\n"}'
SCRIPT=$JOB
wait_for 'ended "$SCRIPT"' 30
api GET "/v1/jobs/$SCRIPT" >/dev/null
t_is "$(py '[d["state"], d["exit_code"], d["command"]]' "$BODY")" '["completed", 0, null]' \
    "a script job completes"
t_like "$(file_of "$SCRIPT" stdout)" '^script ran as /' "the script ran"

submit '{"name": "script-fails", "script": "#!/bin/sh\nexit 4\n"}'
SCRIPT4=$JOB
wait_for 'ended "$SCRIPT4"' 30
api GET "/v1/jobs/$SCRIPT4" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 4]' \
    "a script's exit code is kept"

# ---- environment ------------------------------------------------------------------
submit '{"name": "env", "command": ["/bin/sh", "-c", "echo \"FOO=$FOO\"; echo \"TWO=$TWO\"; echo \"ID=$LOOM_JOB_ID\""], "env": {"FOO": "bar baz", "TWO": "2"}}'
ENVJOB=$JOB
wait_for 'ended "$ENVJOB"' 30
t_is "$(job_state "$ENVJOB")" completed "the env job completes"
OUT=$(file_of "$ENVJOB" stdout)
t_like "$OUT" '(^|
)FOO=bar baz(
|$)' "env FOO reaches the job"
t_like "$OUT" '(^|
)TWO=2(
|$)' "env TWO reaches the job"
t_like "$OUT" "(^|
)ID=$ENVJOB(
|$)" "LOOM_JOB_ID is the job's id"
submit '{"name": "env2", "command": ["/bin/sh", "-c", "echo \"ID=$LOOM_JOB_ID\""], "env": {"LOOM_JOB_ID": "999"}}'
ENV2=$JOB
wait_for 'ended "$ENV2"' 30
t_is "$(file_of "$ENV2" stdout)" "ID=$ENV2" "LOOM_JOB_ID cannot be overridden by the request"

# ---- a busy 1-cpu node ------------------------------------------------------------
# The first job runs until the test lets it end (the file busy.go; 50 s at
# most).
submit "{\"name\": \"busy\", \"command\": [\"/bin/sh\", \"-c\", \"i=0; while [ ! -e $T/busy.go ] && [ \$i -lt 250 ]; do sleep 0.2; i=\$((i + 1)); done; date +%s.%N > $T_OUT/busy.end\"]}"
BUSY=$JOB
wait_for '[ "$(job_state "$BUSY")" = running ]' 30
t_is "$(job_state "$BUSY")" running "the first job runs on the only cpu"
submit "{\"name\": \"waiter\", \"command\": [\"/bin/sh\", \"-c\", \"date +%s.%N > $T_OUT/waiter.start\"]}"
WAITER=$JOB
api GET "/v1/jobs/$WAITER" >/dev/null
t_is "$(jget "$BODY" .state)" pending "the second job is pending"
# While the first runs, the second must not leave pending: five looks, both
# states from one answer (one snapshot of the job table).
seen=
for i in 1 2 3 4 5; do
    api GET /v1/jobs >/dev/null
    seen="$seen $(py "'/'.join(j['state'] for j in d['items'] if j['id'] in ('$BUSY', '$WAITER'))" "$BODY")"
    sleep 0.2
done
t_is "$seen" "$(printf ' running/pending%.0s' 1 2 3 4 5)" "it stays pending while the node is busy"
wait_for '[ "$(field "$WAITER" .reason)" != null ]' 30
t_is "$(field "$WAITER" .state)/$(field "$WAITER" .reason)" "pending/waiting for resources" \
    "a pending job says why it waits" || t_diag "$BODY"
touch "$T/busy.go"
wait_for 'ended "$WAITER"' 30
t_is "$(job_state "$WAITER")" completed "once the node is free, it runs"
t_ok "$(python3 -c 'import sys; sys.exit(0 if float(open(sys.argv[1]).read()) <= float(open(sys.argv[2]).read()) else 1)' "$T_OUT/busy.end" "$T_OUT/waiter.start" 2>/dev/null; echo $?)" \
    "it started after the first one ended"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
