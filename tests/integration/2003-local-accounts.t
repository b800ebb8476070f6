#!/usr/bin/env bash
# 2003-local-accounts.t - a local job runs as its account: id, groups,
# HOME, USER, LOGNAME and SHELL, in its working directory (asked for, sent
# by loomctl, or the account's home); a directory it cannot enter fails
# the job and says why; output files with patterns, owned by the account
# and private; the environment as asked (loomctl --export ALL); its output
# through GET /v1/jobs/ID/output and loomctl output --follow, to its owner
# only; an identity mapped to root is refused before anything runs.
# Jobs run as alice-XXXXXX and bob-XXXXXX, accounts this test makes.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

t_account ALICE alice || t_bail "cannot make an account"
t_account BOB bob || t_bail "cannot make an account"
AH=$T/home/$ALICE

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster one]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2
EOF
map_account alice "$ALICE"
map_account bob "$BOB"
map_account rooty root
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
TA=$(token_for alice user) || t_bail "no token for alice"
TB=$(token_for bob user) || t_bail "no token for bob"
TM=$(token_for watcher monitor) || t_bail "no monitor token"
TR=$(token_for rooty user) || t_bail "no token for rooty"

# ---- who and where -------------------------------------------------------------
TOKEN=$TA
mkdir -m 0755 "$AH/work" && chown "$ALICE:" "$AH/work"
submit "{\"name\": \"who\", \"workdir\": \"$AH/work\", \"command\": [\"/bin/sh\", \"-c\", \"id -un; id -gn; pwd; echo \$HOME \$USER \$LOGNAME \$SHELL; echo \$LOOM_JOB_ID\"]}"
WHO=$JOB
wait_for 'ended "$WHO"' 30
job "$WHO"
t_is "$(py '[d["state"], d["owner"], d["account"], d["workdir"]]' "$BODY")" \
    "[\"completed\", \"alice\", \"$ALICE\", \"$AH/work\"]" \
    "alice's job ran as $ALICE in the workdir it asked for"
t_is "$(jget "$BODY" .stdout)" "$AH/work/loom-$WHO.out" "its output: loom-%j.out in its working directory"
t_is "$(cat "$AH/work/loom-$WHO.out")" "$ALICE
$ALICE
$AH/work
$AH $ALICE $ALICE /bin/sh
$WHO" "id -un and -gn say $ALICE; it ran in $AH/work; HOME, USER, LOGNAME, SHELL are the account's"
t_is "$(stat -c '%U %a' "$AH/work/loom-$WHO.out")" "$ALICE 600" "the output file is the account's, mode 0600"

submit '{"name": "home", "command": ["/bin/pwd"]}'
HOMEJOB=$JOB
wait_for 'ended "$HOMEJOB"' 30
t_is "$(job_state "$HOMEJOB")/$(cat "$AH/loom-$HOMEJOB.out" 2>&1)" "completed/$AH" \
    "without a workdir it runs (and writes) in the account's home"

mkdir -m 0700 "$T/closed"
submit "{\"name\": \"closed\", \"workdir\": \"$T/closed\", \"command\": [\"/bin/true\"]}"
CLOSED=$JOB
wait_for 'ended "$CLOSED"' 30
job "$CLOSED"
t_is "$(py '[d["state"], d["reason"], d["exit_code"]]' "$BODY")" \
    "[\"failed\", \"cannot enter $T/closed: Permission denied\", null]" \
    "a workdir the account cannot enter: failed, and the reason says so"
submit "{\"name\": \"nodir\", \"workdir\": \"$T/nonexistent\", \"command\": [\"/bin/true\"]}"
NODIR=$JOB
wait_for 'ended "$NODIR"' 30
t_is "$(field "$NODIR" .reason)" "cannot enter $T/nonexistent: No such file or directory" \
    "... and one that does not exist"
submit "{\"name\": \"noout\", \"workdir\": \"$AH\", \"output\": \"$T/closed/x.out\", \"command\": [\"/bin/true\"]}"
NOOUT=$JOB
wait_for 'ended "$NOOUT"' 30
t_is "$(field "$NOOUT" .state)/$(field "$NOOUT" .reason)" \
    "failed/cannot open output file $T/closed/x.out: Permission denied" \
    "an output file the account cannot create fails the job"
t_ok "$([ ! -e "$T/closed/x.out" ]; echo $?)" "... and nothing was created"

# ---- output names and patterns ---------------------------------------------------
# the directory is alice's before the job can start
mkdir -m 0755 "$AH/out" && chown "$ALICE:" "$AH/out"
submit '{"name": "pat", "output": "out/%x-%j-%u-%N-%A-%a-%%.txt", "error": "%j.err", "command": ["/bin/sh", "-c", "echo to-out; echo to-err >&2"]}'
PAT=$JOB
wait_for 'ended "$PAT"' 30
job "$PAT"
NODE=$(jget "$BODY" .nodes.0)
t_is "$(jget "$BODY" .stdout)" "$AH/out/pat-$PAT-$ALICE-$NODE-$PAT-0-%.txt" \
    "output patterns %x %j %u %N %A %a %% expand (relative to the home)"
t_is "$(jget "$BODY" .stderr)" "$AH/$PAT.err" "error: its own file"
t_is "$(cat "$(jget "$BODY" .stdout)")/$(cat "$(jget "$BODY" .stderr)")" to-out/to-err \
    "each stream in its file"
api POST /v1/jobs '{"command": ["/bin/true"], "output": "x-%q.out"}' >/dev/null
t_is "$STATUS" 400 "an unknown pattern: 400"
t_like "$(jget "$BODY" .error.message)" "unknown pattern '%q'.*%j %u %x %A %a %N %%" \
    "... naming it and the patterns there are"
api POST /v1/jobs '{"command": ["/bin/true"], "workdir": "relative/dir"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/workdir "a relative workdir: 400 on field workdir"

# ---- environment -----------------------------------------------------------------
submit '{"name": "env", "env": {"FOO": "bar", "HOME": "/elsewhere", "USER": "mallory"}, "command": ["/bin/sh", "-c", "echo $FOO $HOME $USER; env | sort | cut -d= -f1 | tr \"\\n\" \" \""]}'
ENVJ=$JOB
wait_for 'ended "$ENVJ"' 30
OUT=$(cat "$AH/loom-$ENVJ.out")
t_is "${OUT%%$'\n'*}" "bar $AH $ALICE" "the request's env reaches the job; HOME and USER stay the account's"
t_is "${OUT#*$'\n'}" "FOO HOME LOGNAME LOOM_CLUSTER LOOM_JOB_ID LOOM_NODE LOOM_NODES PATH PWD SHELL USER " \
    "and nothing else (but PWD, which sh adds)"

CTL_TOKEN=$T/alice.token
(umask 077 && printf '%s\n' "$TA" >"$CTL_TOKEN")
ctl_alice() {
    (cd "$1" && shift && FROM_SHELL=here-it-is "$LOOM_TOP_BUILDDIR/loomctl" \
        --url "$LOOM_URL" --token-file "$CTL_TOKEN" "$@")
}
EX=$(ctl_alice "$AH/work" submit --export ALL --env FOO=given -- /bin/sh -c 'echo $FROM_SHELL $FOO; pwd')
t_like "$EX" '^[0-9]+$' "loomctl submit --export ALL" || t_diag "$EX"
wait_for 'ended "$EX"' 30
t_is "$(field "$EX" .submit_dir) $(field "$EX" .workdir)" "$AH/work $AH/work" \
    "loomctl sends the directory it runs in as submit_dir, which is the job's workdir"
t_is "$(cat "$AH/work/loom-$EX.out")" "here-it-is given
$AH/work" "--export ALL: loomctl's environment reaches the job (--env wins); it ran there"
NE=$(ctl_alice "$AH/work" submit -- /bin/sh -c 'echo "[$FROM_SHELL]"')
wait_for 'ended "$NE"' 30
t_is "$(cat "$AH/work/loom-$NE.out")" "[]" "without --export ALL it does not"

# ---- output through the API -------------------------------------------------------
api GET "/v1/jobs/$PAT/output" >/dev/null
t_is "$STATUS" 200 "GET /v1/jobs/ID/output by its owner: 200" || t_diag "$BODY"
t_is "$(py '[d["stream"], d["data"], d["offset"], d["next_offset"], d["size"], d["eof"]]' "$BODY")" \
    '["stdout", "to-out\n", 0, 7, 7, true]' "... stdout, whole, and eof (the job has ended)"
api GET "/v1/jobs/$PAT/output?stream=stderr&offset=3" >/dev/null
t_is "$(py '[d["data"], d["offset"], d["next_offset"], d["eof"]]' "$BODY")" \
    '["err\n", 3, 7, true]' "?stream=stderr&offset=3: from the fourth byte"
api GET "/v1/jobs/$PAT/output?stream=both" >/dev/null
t_is "$STATUS" 400 "?stream=both: 400"
t_like "$(jget "$BODY" .error.message)" "stdout or stderr" "... naming the streams"
api GET "/v1/jobs/$PAT/output?offset=-1" >/dev/null
t_is "$STATUS" 400 "?offset=-1: 400"
api GET "/v1/jobs/$PAT/output?tail=1" >/dev/null
t_like "$STATUS $(jget "$BODY" .error.message)" "^400 .*stream and offset" "an unknown parameter: 400 naming those it takes"
TOKEN=$TB
api GET "/v1/jobs/$PAT/output" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" "404/no job '$PAT'" "bob asks for alice's output: 404, as for no job"
TOKEN=$TM
api GET "/v1/jobs/$PAT/output" >/dev/null
t_is "$STATUS" 404 "a monitor token: 404 (it sees states, not output)"
TOKEN=$ADMIN
api GET "/v1/jobs/$PAT/output" >/dev/null
t_is "$STATUS/$(jget "$BODY" .data)" "200/to-out" "an admin reads it"
api GET "/v1/jobs/$CLOSED/output" >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" "404 job $CLOSED has no stdout file to read (it never ran, or its cluster does not say where its output went)" \
    "the output of a job that never got so far: 404, saying why"
api GET "/v1/jobs/$NOOUT/output" >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" "403 job $NOOUT: stdout $T/closed/x.out: loom-runas: $T/closed/x.out: Permission denied" \
    "of one whose file its account may not open: 403, saying so"

# bytes that are not UTF-8 become U+FFFD; a character cut by the offset
# is not cut in the answer
TOKEN=$TA
submit '{"name": "bytes", "command": ["/bin/sh", "-c", "printf \"a\\377b\\303\\251c\""]}'
BYTES=$JOB
wait_for 'ended "$BYTES"' 30
api GET "/v1/jobs/$BYTES/output" >/dev/null
t_is "$(py '[d["data"], d["size"]]' "$BODY")" '["a\ufffdb\u00e9c", 6]' \
    "a byte that is not UTF-8 comes as U+FFFD; é stays é"

# ---- loomctl output --follow ------------------------------------------------------
submit '{"name": "slow", "command": ["/bin/sh", "-c", "for i in 1 2 3; do echo line $i; sleep 1; done; echo done >&2"]}'
SLOW=$JOB
wait_for '[ "$(job_state "$SLOW")" = running ]' 30
ctl_alice "$AH" output --follow "$SLOW" >"$T/follow.out" 2>"$T/follow.err"
t_is "$?/$(job_state "$SLOW")" 0/completed "loomctl output --follow returns once the job has ended"
t_is "$(cat "$T/follow.out")" "line 1
line 2
line 3
done" "... with all it wrote, in order (stderr is the same file)"
ctl_alice "$AH" output --stream stderr "$PAT" >"$T/err.out" 2>&1
t_is "$?/$(cat "$T/err.out")" 0/to-err "loomctl output --stream stderr"
(umask 077 && printf '%s\n' "$TB" >"$T/bob.token")
"$LOOM_TOP_BUILDDIR/loomctl" --url "$LOOM_URL" --token-file "$T/bob.token" output "$PAT" >"$T/bob.out" 2>&1
t_is "$?" 1 "loomctl output of another's job fails"
t_like "$(cat "$T/bob.out")" "no job '$PAT'" "... as for no job"

# ---- root ----------------------------------------------------------------------------
TOKEN=$ADMIN
api GET '/v1/jobs?limit=100000' >/dev/null
BEFORE=$(jlen "$BODY" .items)
TOKEN=$TR
api POST /v1/jobs '{"command": ["/usr/bin/touch", "/root-ran"]}' >/dev/null
t_is "$STATUS" 403 "an identity mapped to root: 403"
t_like "$(jget "$BODY" .error.message)" "jobs may not run as root \\(account root\\): allow_root_jobs is false" \
    "... saying that root may not run jobs"
TOKEN=$ADMIN
api GET '/v1/jobs?limit=100000' >/dev/null
t_is "$(jlen "$BODY" .items)" "$BEFORE" "no job was made"
t_ok "$([ ! -e /root-ran ]; echo $?)" "and nothing ran"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
