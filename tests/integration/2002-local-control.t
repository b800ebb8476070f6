#!/usr/bin/env bash
# 2002-local-control.t - job control on the local executor, checked in
# /proc and the jobs' cgroups: cancel kills every process of the job,
# suspend freezes its cgroup, resume thaws it, walltime ends a job, hold and
# release. The jobs run as the account the harness maps the admin token to.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

# A job whose shell starts a child and waits: pids in FILE ("SH CHILD").
family_job() {
    printf '{"name": "%s", "command": ["/bin/sh", "-c", "sleep 300 & echo $$ $! > %s.tmp; mv %s.tmp %s; wait"], "request": {"cluster": "local"}}' \
        "$1" "$2" "$2" "$2"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# Whatever a failed run leaves: kill the process groups the jobs made.
t_cleanup 'for f in "$T_OUT"/*.pids; do [ -f "$f" ] && read -r s c <"$f" && kill -KILL -- "-$s" 2>/dev/null; done'

# ---- cancel kills the whole group ------------------------------------------------
submit "$(family_job cancelme "$T_OUT/cancel.pids")"
CANCEL=$JOB
wait_for '[ "$(job_state "$CANCEL")" = running ] && [ -s "$T_OUT/cancel.pids" ]' 30
read -r SH CHILD <"$T_OUT/cancel.pids"
t_like "$SH $CHILD" '^[0-9]+ [0-9]+$' "the job wrote its shell and child pids"
t_ok "$(alive "$CHILD" && alive "$SH"; echo $?)" "the shell and its child run"
t_is "$(awk '{print $5}' "/proc/$CHILD/stat" 2>/dev/null)" "$SH" \
    "the child is in the shell's process group"
api DELETE "/v1/jobs/$CANCEL" >/dev/null
t_is "$STATUS" 202 "DELETE /v1/jobs/ID of a running job: 202" || t_diag "$BODY"
wait_for '[ "$(job_state "$CANCEL")" = cancelled ]' 30
t_is "$(job_state "$CANCEL")" cancelled "the job ends cancelled"
wait_dead "$CHILD" 50
t_ok $? "the child (sleep 300) is gone (state $(pstate "$CHILD"))"
wait_dead "$SH" 50
t_ok $? "the job's shell is gone"

# ---- suspend and resume -------------------------------------------------------------
submit "$(family_job suspendme "$T_OUT/suspend.pids")"
SUS=$JOB
wait_for '[ "$(job_state "$SUS")" = running ] && [ -s "$T_OUT/suspend.pids" ]' 30
read -r SH CHILD <"$T_OUT/suspend.pids"
t_is "$(frozen "$SH") $(frozen "$CHILD")" "0 0" "before: their cgroup is not frozen"
api POST "/v1/jobs/$SUS/suspend" '{}' >/dev/null
t_is "$STATUS" 202 "POST suspend: 202" || t_diag "$BODY"
wait_for '[ "$(frozen "$CHILD")" = 1 ] && [ "$(frozen "$SH")" = 1 ]' 30
t_is "$(frozen "$SH") $(frozen "$CHILD")" "1 1" "the shell and its child are frozen (their cgroup)"
# a frozen task sleeps in the freezer: /proc shows S (v2) or D (v1), never R
t_like "$(pstate "$SH") $(pstate "$CHILD")" '^[SD] [SD]$' \
    "... /proc shows them asleep ($(pstate "$SH") $(pstate "$CHILD"))"
wait_for '[ "$(job_state "$SUS")" = suspended ]' 30
t_is "$(job_state "$SUS")" suspended "the job shows suspended"
api POST "/v1/jobs/$SUS/suspend" '{}' >/dev/null
t_is "$STATUS" 409 "suspend of a suspended job: 409"
api POST "/v1/jobs/$SUS/resume" '{}' >/dev/null
t_is "$STATUS" 202 "POST resume: 202" || t_diag "$BODY"
wait_for '[ "$(frozen "$CHILD")" = 0 ] && [ "$(frozen "$SH")" = 0 ]' 30
t_is "$(frozen "$SH") $(frozen "$CHILD")" "0 0" "both are thawed"
t_like "$(pstate "$SH") $(pstate "$CHILD")" '^[SR] [SR]$' "... and run again (S or R)"
wait_for '[ "$(job_state "$SUS")" = running ]' 30
t_is "$(job_state "$SUS")" running "the job shows running again"
api POST "/v1/jobs/$SUS/resume" '{}' >/dev/null
t_is "$STATUS" 409 "resume of a running job: 409"
api DELETE "/v1/jobs/$SUS" >/dev/null
wait_for '[ "$(job_state "$SUS")" = cancelled ]' 30
t_is "$(job_state "$SUS")" cancelled "cancelled afterwards"
wait_dead "$CHILD" 50
t_ok $? "its child is gone too"

# ---- a suspended job can be cancelled --------------------------------------------
submit "$(family_job stopped "$T_OUT/stopped.pids")"
STOPPED=$JOB
wait_for '[ "$(job_state "$STOPPED")" = running ] && [ -s "$T_OUT/stopped.pids" ]' 30
read -r SH CHILD <"$T_OUT/stopped.pids"
api POST "/v1/jobs/$STOPPED/suspend" '{}' >/dev/null
wait_for '[ "$(job_state "$STOPPED")" = suspended ]' 30
api DELETE "/v1/jobs/$STOPPED" >/dev/null
t_is "$STATUS" 202 "cancel of a suspended job: 202" || t_diag "$BODY"
wait_for '[ "$(job_state "$STOPPED")" = cancelled ]' 30
t_is "$(job_state "$STOPPED")" cancelled "the suspended job ends cancelled"
wait_dead "$CHILD" 50
t_ok $? "its stopped child is gone ($(pstate "$CHILD"))"

# ---- walltime ---------------------------------------------------------------------------
submit '{"name": "too-long", "command": ["/bin/sleep", "30"], "request": {"cluster": "local", "walltime_s": 1}}'
WALL=$JOB
wait_for '[ "$(job_state "$WALL")" = failed ]' 60
api GET "/v1/jobs/$WALL" >/dev/null
t_is "$(jget "$BODY" .state)" failed "walltime_s 1 on sleep 30: failed"
WS=$(epoch "$(jget "$BODY" .start_time)") WE=$(epoch "$(jget "$BODY" .end_time)")
t_ok "$([ "$WS" != - ] && [ "$WE" != - ] && ((WE - WS >= 1 && WE - WS < 30)) && echo 0 || echo 1)" \
    "... ended by its walltime: after 1 s, before sleep 30 could end ($WS-$WE)"
t_is "$(jget "$BODY" .reason 2>/dev/null)" "walltime exceeded" "the reason says the walltime was exceeded"

# ---- hold and release -----------------------------------------------------------------
submit "$(family_job fill1 "$T_OUT/fill1.pids")"
F1=$JOB
submit "$(family_job fill2 "$T_OUT/fill2.pids")"
F2=$JOB
wait_for '[ "$(job_state "$F1")" = running ] && [ "$(job_state "$F2")" = running ]' 30
t_is "$(job_state "$F1")/$(job_state "$F2")" running/running "two fillers take both cpus"
submit "{\"name\": \"holdme\", \"command\": [\"/bin/sh\", \"-c\", \"echo ran >> $T_OUT/held.ran\"], \"request\": {\"cluster\": \"local\"}}"
H=$JOB
t_is "$(job_state "$H")" pending "a third job is pending"
api POST "/v1/jobs/$H/hold" '{}' >/dev/null
t_is "$STATUS" 200 "POST hold" || t_diag "$BODY"
t_is "$(job_state "$H")" held "the job shows held"
api POST "/v1/jobs/$H/hold" '{}' >/dev/null
t_is "$STATUS" 409 "hold of a held job: 409"
api DELETE "/v1/jobs/$F1" >/dev/null
wait_for '[ "$(job_state "$F1")" = cancelled ]' 30
# A free cpu now: a job submitted after the held one runs there (in FIFO
# order the held one would have gone first), and the held one stays held.
submit "{\"name\": \"after-hold\", \"command\": [\"/bin/true\"], \"request\": {\"cluster\": \"local\"}}"
AH=$JOB
wait_for '[ "$(job_state "$AH")" = completed ]' 30
t_is "$(job_state "$AH")/$(job_state "$H")" completed/held \
    "with a cpu free a later job runs, and the held job stays held"
t_ok "$([ ! -e "$T_OUT/held.ran" ]; echo $?)" "and did not run"
api POST "/v1/jobs/$H/release" '{}' >/dev/null
t_is "$STATUS" 200 "POST release" || t_diag "$BODY"
wait_for '[ "$(job_state "$H")" = completed ]' 30
t_is "$(job_state "$H")" completed "released, it runs"
t_is "$(cat "$T_OUT/held.ran" 2>/dev/null)" ran "once"
api DELETE "/v1/jobs/$F2" >/dev/null
wait_for '[ "$(job_state "$F2")" = cancelled ]' 30
t_is "$(job_state "$F2")" cancelled "the second filler is cancelled"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
