#!/usr/bin/env bash
# 6010-hold-update.t - submitting held (the API's "hold", loomctl --hold,
# #SBATCH --hold, #$ -h) and changing a waiting job (PATCH /v1/jobs/{id},
# loomctl update): its name, request, dependency and priority change; any
# other field is refused naming it; a user may only lower a priority; a
# job that no longer waits is a 409; an array's change is its waiting
# tasks' too. Jobs run as accounts of this test (t_account).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
$(local_cluster 2 1)
EOF
# admin's jobs run as $T_USER (the harness's), alice's as an account of
# her own
t_account ALICE_U alice
map_account alice "$ALICE_U"
loomd_start || t_bail "loomd did not start"
# loomctl submit sends the directory it runs in: one $T_USER may enter
cd "$T/home/$T_USER" || t_bail "cannot enter $T/home/$T_USER"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
ALICE=$(token_for alice user)
t_cleanup 'touch "$T/go"'

ctl() {
    loomctl "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
GATE="i=0; while [ ! -e $T/go ] && [ \$i -lt 1500 ]; do sleep 0.2; i=\$((i+1)); done"

# ---- held at submit ---------------------------------------------------------------
submit "{\"name\": \"h\", \"hold\": true, \"command\": [\"true\"]}"
H=$JOB
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" "held/held by admin at submit" \
    "\"hold\": true: submitted held, saying so"
ctl submit --hold --name hc -- true
t_is "$RC/$(job_state "$OUT")" 0/held "loomctl submit --hold: held"
HC=$OUT
printf '#!/bin/sh\n#SBATCH --hold\n#SBATCH -J hs\ntrue\n' >"$T/hs.sh"
ctl submit "$T/hs.sh"
t_is "$RC/$(job_state "$OUT")/$(field "$OUT" .name)" 0/held/hs "#SBATCH --hold: held"
printf '#!/bin/sh\n#$ -h\ntrue\n' >"$T/hg.sh"
ctl submit "$T/hg.sh"
t_is "$RC/$(job_state "$OUT")" 0/held "#\$ -h: held"

ctl submit --array 1-3%2 --dependency "afterok:$H" --hold --name ad -- true
t_is "$RC" 0 "loomctl submit --array --dependency --hold" || t_diag "$ERR"
AD=$OUT
job "$AD"
t_is "$(py '[d["array"], d["dependency"], d["state"], d["array_tasks_state"]]' "$BODY")" \
    "[\"1-3%2\", \"afterok:$H\", \"held\", \"held\"]" "... an array of 3 tasks, 2 at once, waiting for job $H, held"
ctl submit --array 5-1 -- true
t_like "$RC/$ERR" "^2/loomctl: --array: the range 5-1 ends before it begins" \
    "loomctl refuses an array loomd would refuse, saying why"
ctl submit --dependency afterfoo:1 -- true
t_is "$RC" 2 "... and a dependency"
ctl show job "${AD}_2"
t_like "$RC/$OUT" "^0/.*${AD}_2" "loomctl show job ${AD}_2: one task of it"
ctl cancel "${AD}_2"
t_is "$RC/$(job_state "${AD}_2")/$(field "$AD" .array_tasks)" 0/cancelled/1,3 \
    "loomctl cancel ${AD}_2 cancels that task alone"

# ---- PATCH ------------------------------------------------------------------------------
api PATCH "/v1/jobs/$H" '{"name": "renamed", "request": {"walltime_s": 120, "nodes": 2}, "priority": -5}' >/dev/null
t_is "$STATUS" 200 "PATCH of a held job: 200" || t_diag "$BODY"
t_is "$(py '[d["name"], d["request"]["walltime_s"], d["request"]["nodes"], d["request"]["cpus_per_node"], d["priority"], d["state"]]' "$BODY")" \
    '["renamed", 120, 2, 1, -5, "held"]' \
    "name, walltime, nodes and priority changed; the rest of the request kept"
job "$H"
t_is "$(py '[d["name"], d["request"]["walltime_s"]]' "$BODY")" '["renamed", 120]' \
    "GET shows the change"
api PATCH "/v1/jobs/$H" '{"state": "pending"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/state "a field that cannot change: 400 naming it"
t_is "$(jget "$BODY" .error.message)" \
    "field 'state' cannot be changed: a waiting job's name, request, dependency and priority can" \
    "... and what can"
api PATCH "/v1/jobs/$H" '{"request": {"bogus": 1}}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/request.bogus "an unknown request field: 400"
api PATCH "/v1/jobs/$H" '{"request": {"nodes": 50}}' >/dev/null
t_is "$STATUS" 422 "a request no cluster could ever run: 422"
t_like "$(jget "$BODY" .error.message)" "^no cluster could ever run this job" "... saying so"
api PATCH "/v1/jobs/$H" "{\"dependency\": \"afterok:$H\"}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/dependency: job $H cannot wait for itself" "a job waiting for itself: 400"
api PATCH "/v1/jobs/$HC" "{\"dependency\": \"afterok:$H\"}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .dependency)" "200/afterok:$H" "a dependency added"
api PATCH "/v1/jobs/$H" "{\"dependency\": \"afterok:$HC\"}" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/dependency: job $HC waits for this job already (itself or through others): the two would wait for each other" \
    "a dependency that would close a circle: 400"
api PATCH "/v1/jobs/$HC" '{"dependency": null}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .dependency)" 200/null "... and taken away again"
api PATCH "/v1/jobs/$H" '{}' >/dev/null
t_is "$STATUS" 400 "an empty change: 400"

TOKEN=$ALICE
submit "{\"name\": \"mine\", \"hold\": true, \"priority\": 0, \"command\": [\"true\"]}"
MINE=$JOB
api PATCH "/v1/jobs/$MINE" '{"priority": -3}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .priority)" 200/-3 "a user lowers her job's priority"
api PATCH "/v1/jobs/$MINE" '{"priority": 0}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 403/priority "... but may not raise it again: 403"
t_is "$(jget "$BODY" .error.message)" \
    "only an operator or admin may raise a job's priority (it is -3): a user may lower it" \
    "... saying so"
api PATCH "/v1/jobs/$H" '{"name": "x"}' >/dev/null
t_like "$STATUS" '^40[34]$' "a user's change of another's job: refused ($STATUS)"
TOKEN=$ADMIN

submit "{\"name\": \"runs\", \"command\": [\"/bin/sh\", \"-c\", \"$GATE\"]}"
RUNS=$JOB
wait_for '[ "$(job_state "$RUNS")" = running ]' 30
api PATCH "/v1/jobs/$RUNS" '{"name": "late"}' >/dev/null
t_is "$STATUS" 409 "a running job cannot change: 409"
t_is "$(jget "$BODY" .error.message)" \
    "job $RUNS is running: only a waiting job (pending or held) can be changed" \
    "... saying why"

# ---- loomctl update -------------------------------------------------------------------
ctl update "$HC" name=viactl time=10 priority=-2 features=
t_is "$RC" 0 "loomctl update JOB name=... time=... priority=... features=" || t_diag "$ERR"
job "$HC"
t_is "$(py '[d["name"], d["request"]["walltime_s"], d["priority"], d["request"]["features"]]' "$BODY")" \
    '["viactl", 600, -2, []]' "... changed the job"
ctl update "$HC" bogus=1
t_is "$RC" 2 "an unknown field: usage error"
t_like "$ERR" "unknown field 'bogus': the fields are name, nodes, cpus-per-node, mem, gpus, time, time-s, cluster, queue, features, reservation, dependency and priority" \
    "... naming the fields"
ctl update "$RUNS" name=x
t_is "$RC" 1 "loomctl update of a running job fails"
t_like "$ERR" "is running: only a waiting job" "... with loomd's reason"

# ---- an array's change is its waiting tasks' too -------------------------------------
submit "{\"name\": \"arr\", \"array\": \"1-3\", \"hold\": true, \"command\": [\"true\"]}"
A=$JOB
api PATCH "/v1/jobs/${A}_3" '{"name": "three"}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .id)/$(jget "$BODY" .name)/$(jget "$BODY" .state)" \
    "200/${A}_3/three/held" "PATCH of one task: it alone changes (a record of its own, held)"
t_is "$(field "${A}_1" .name)" arr "... not the others"
api PATCH "/v1/jobs/$A" '{"request": {"walltime_s": 90}}' >/dev/null
t_is "$STATUS" 200 "PATCH of the array: 200" || t_diag "$BODY"
t_is "$(field "${A}_1" .request.walltime_s)/$(field "${A}_3" .request.walltime_s)/$(field "${A}_3" .name)" \
    90/90/three "its tasks with and without a record of their own changed with it (only in what it changed)"
api POST "/v1/jobs/$A/release" '{}' >/dev/null
t_is "$STATUS" 200 "release of the whole array"
wait_for '[ "$(job_state "$A")" = completed ]' 30
t_is "$(job_state "$A")/$(field "${A}_1" .request.walltime_s)" completed/90 \
    "the array runs with the change"

touch "$T/go"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
