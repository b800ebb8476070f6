#!/usr/bin/env bash
# 6008-arrays.t - job arrays on the local executor: an #SBATCH --array
# script's tasks each see their index as Slurm, Grid Engine and PBS name
# it; the array is one list entry (123_[4-6]) while its tasks wait alike,
# and its tasks are listed as they start; %N limits the tasks at once; a
# whole array is cancelled (running tasks too), one task is held and
# released; a task without a record of its own is shown; and after kill -9
# loomd keeps each array's tasks where they were, starting none twice.
# The tasks run as $T_USER, the account admin's jobs run as, and say so.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
$(local_cluster 3 1)
EOF
loomd_start || t_bail "loomd did not start"
# loomctl submit sends the directory it runs in: one $T_USER may enter
cd "$T/home/$T_USER" || t_bail "cannot enter $T/home/$T_USER"
admin_token || t_bail "no admin token"
t_cleanup 'touch "$T/go" "$T/go2" "$T/go3"'

# ctl ARGS...: loomctl; OUT, ERR, RC.
ctl() {
    loomctl "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
# counts ID: the array's "pending running completed failed cancelled".
counts() {
    api GET "/v1/jobs/$1" >/dev/null
    py '" ".join(str(d["array_counts"][k]) for k in ("pending", "running", "completed", "failed", "cancelled"))' "$BODY"
}
# listed STATE: the ids GET /v1/jobs?state=STATE lists, sorted.
listed() {
    api GET "/v1/jobs?state=$1" >/dev/null
    py '" ".join(sorted(i["id"] for i in d["items"]))' "$BODY"
}
# gate FILE: a shell line that waits (5 min at most) until FILE exists.
gate() {
    echo "i=0; while [ ! -e $1 ] && [ \$i -lt 1500 ]; do sleep 0.2; i=\$((i+1)); done"
}

# ---- an #SBATCH --array script ------------------------------------------------
cat >"$T/arr.sh" <<EOF
#!/bin/sh
#SBATCH --job-name=arr
#SBATCH --array=1-6
echo "slurm \$SLURM_ARRAY_TASK_ID sge \$SGE_TASK_ID pbs \$PBS_ARRAY_INDEX loom \$LOOM_ARRAY_TASK_ID of \$SLURM_ARRAY_JOB_ID \$LOOM_ARRAY_JOB_ID count \$SLURM_ARRAY_TASK_COUNT range \$SGE_TASK_FIRST-\$SGE_TASK_LAST as \$(id -un)"
$(gate "$T/go")
EOF
ctl submit "$T/arr.sh"
t_is "$RC" 0 "loomctl submit of an #SBATCH --array=1-6 script" || t_diag "$ERR"
A=$OUT
job "$A"
t_is "$(py '[d["array"], d["array_counts"]["tasks"], d["name"]]' "$BODY")" \
    '["1-6", 6, "arr"]' "GET: the array, 6 tasks, named by the script"
wait_for '[ "$(counts "$A")" = "3 3 0 0 0" ] && [ "$(listed running)" = "${A}_1 ${A}_2 ${A}_3" ]' 30
t_is "$(counts "$A")" "3 3 0 0 0" "3 tasks run (3 nodes), 3 wait"
t_is "$(listed running)" "${A}_1 ${A}_2 ${A}_3" "the running tasks are listed one by one"
t_is "$(listed pending)" "$A" "the waiting ones are one entry, the array"
ctl jobs --state pending
t_like "$OUT" "${A}_\\[4-6\\] +arr +loomctl +pending " \
    "loomctl jobs shows it compressed: ${A}_[4-6]"
ctl jobs --state running
t_like "$OUT" "${A}_2 +arr +loomctl +running " "... and the tasks that run by their ids"
job "${A}_5"
t_is "$(py '[d["id"], d["state"], d["array_job_id"], d["array_task_id"], d.get("loom_id")]' "$BODY")" \
    "[\"${A}_5\", \"pending\", \"$A\", 5, null]" \
    "GET /v1/jobs/${A}_5: a waiting task, without a record of its own"
job "${A}_9"
t_is "$STATUS" 404 "GET of a task the array lacks: 404"
t_like "$(jget "$BODY" .error.message)" "array $A has no task 9" "... saying so"
touch "$T/go"
wait_for '[ "$(counts "$A")" = "0 0 6 0 0" ]' 60
t_is "$(counts "$A")/$(job_state "$A")" "0 0 6 0 0/completed" \
    "every task completes, and the array with them"
for i in 1 2 3 4 5 6; do
    job "${A}_$i"
    LOOMID=$(jget "$BODY" .loom_id)
    t_is "$(head -n 1 "$(jget "$BODY" .stdout)" 2>/dev/null)" \
        "slurm $i sge $i pbs $i loom $i of $A $A count 6 range 1-6 as $T_USER" \
        "task $i (record $LOOMID) saw its index as Slurm, Grid Engine, PBS and Loom name it, running as $T_USER"
done
t_is "$(listed completed | tr ' ' '\n' | grep -c "^${A}_")" 6 \
    "the completed tasks are listed, not the array as well"

# ---- a limit of tasks at once ------------------------------------------------------
submit "{\"name\": \"lim\", \"array\": \"1-5%2\", \"output\": \"lim-%A_%a-%j.out\", \"command\": [\"/bin/sh\", \"-c\", \"$(gate "$T/go2")\"]}"
L=$JOB
wait_for '[ "$(counts "$L")" = "3 2 0 0 0" ]' 30
t_is "$(counts "$L")" "3 2 0 0 0" "array 1-5%2: 2 run, 3 wait (a node is free)"
job "$L"
t_is "$(jget "$BODY" .reason)" "array $L runs 2 tasks, as many as its limit (%2) allows" \
    "... and the array says why"
# loomctl jobs -j (?id=): the array is its running tasks and its item
# (a task counted running may still be starting in its cluster)
ids_states() {
    ctl jobs -j "$L" --format jobid,state
    echo "$RC/$(awk 'NR > 1 { print $2 }' <<<"$OUT" | sort | tr '\n' ' ')"
}
wait_for '[ "$(ids_states)" = "0/pending running running " ]' 30
ctl jobs -j "$L" --format jobid,state
t_is "$RC/$(awk 'NR > 1 { print $2 }' <<<"$OUT" | sort | tr '\n' ' ')" \
    "0/pending running running " \
    "loomctl jobs -j $L: its two running tasks and the item of the 3 waiting" ||
    t_diag "$OUT$ERR"
RUN1=$(awk 'NR > 1 && $2 == "running" { print $1; exit }' <<<"$OUT")
WAITING=$(awk 'NR > 1 && $2 == "pending" { print $1 }' <<<"$OUT")
ctl jobs -j "$RUN1" --format jobid,state
t_is "$(awk 'NR > 1 { print $1, $2 }' <<<"$OUT")" "$RUN1 running" \
    "loomctl jobs -j $RUN1: that task alone"
api GET "/v1/jobs/$L" >/dev/null
T3=$(py 'd["array_tasks"].replace("-", ",").split(",")[0]' "$BODY") # its first waiting task
ctl jobs --jobs "${L}_$T3,${L}_999" --format jobid,state
t_is "$(awk 'NR > 1 { print $1, $2 }' <<<"$OUT")" "$WAITING pending" \
    "loomctl jobs --jobs ${L}_$T3 (a waiting task): the item it waits in"

# ---- cancel a whole array, hold and release one task ------------------------------
submit "{\"name\": \"whole\", \"array\": \"1-20\", \"command\": [\"/bin/sh\", \"-c\", \"$(gate "$T/go3")\"]}"
W=$JOB
wait_for '[ "$(counts "$W")" = "19 1 0 0 0" ]' 30
t_is "$(counts "$W")" "19 1 0 0 0" "array 1-20: one task runs on the free node"
api DELETE "/v1/jobs/$W" >/dev/null
t_is "$STATUS" 200 "DELETE /v1/jobs/$W (the whole array): 200" || t_diag "$BODY"
wait_for '[ "$(counts "$W")" = "0 0 0 0 20" ]' 30
t_is "$(counts "$W")/$(job_state "$W")/$(job_state "${W}_1")" "0 0 0 0 20/cancelled/cancelled" \
    "all 20 tasks cancelled, the running one too"
t_is "$(job_state "${W}_20")" cancelled "a task that never started shows cancelled"
api DELETE "/v1/jobs/${W}_2" >/dev/null
t_is "$STATUS" 409 "cancelling one of its tasks again: 409"

submit "{\"name\": \"one\", \"array\": \"1-4%1\", \"command\": [\"/bin/sh\", \"-c\", \"$(gate "$T/go2")\"]}"
O=$JOB
wait_for '[ "$(counts "$O")" = "3 1 0 0 0" ]' 30
t_is "$(counts "$O")" "3 1 0 0 0" "array 1-4%1: task 1 runs, 2-4 wait"
api POST "/v1/jobs/${O}_3/hold" '{}' >/dev/null
t_is "$STATUS" 200 "POST /v1/jobs/${O}_3/hold: 200" || t_diag "$BODY"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .id)/$(jget "$BODY" .reason)" \
    "held/${O}_3/held by admin" "task 3 alone is held, with a record of its own"
job "$O"
t_is "$(jget "$BODY" .array_tasks)" "2,4" "the array stands for tasks 2 and 4"
touch "$T/go2"
wait_for '[ "$(job_state "${O}_4")" = completed ]' 60
t_is "$(job_state "${O}_1")/$(job_state "${O}_2")/$(job_state "${O}_4")/$(job_state "${O}_3")" \
    completed/completed/completed/held "tasks 1, 2 and 4 complete; 3 stays held"
t_is "$(job_state "$O")" pending "the array waits for its held task"
api POST "/v1/jobs/${O}_3/release" '{}' >/dev/null
t_is "$STATUS" 200 "POST /v1/jobs/${O}_3/release: 200" || t_diag "$BODY"
wait_for '[ "$(job_state "$O")" = completed ]' 30
t_is "$(job_state "${O}_3")/$(job_state "$O")" completed/completed \
    "released, task 3 runs; the array completes"
wait_for '[ "$(job_state "$L")" = completed ]' 30
t_is "$(counts "$L")" "0 0 5 0 0" "the limited array completed too"
job "${L}_4"
t_is "$(jget "$BODY" .stdout)" "$T/home/$T_USER/lim-${L}_4-$(jget "$BODY" .loom_id).out" \
    "output lim-%A_%a-%j.out of task 4: its array's id, its task, its own record"
t_ok "$([ -e "$(jget "$BODY" .stdout)" ]; echo $?)" "... and the task wrote it"

# ---- kill -9: arrays are where they were ----------------------------------------------
rm -f "$T/go3"
submit "{\"name\": \"k\", \"array\": \"1-8\", \"command\": [\"/bin/sh\", \"-c\", \"echo run >> $T/home/$T_USER/k.\$LOOM_ARRAY_TASK_ID; $(gate "$T/go3")\"]}"
K=$JOB
submit "{\"name\": \"kh\", \"array\": \"1-3\", \"hold\": true, \"command\": [\"true\"]}"
KH=$JOB
wait_for '[ "$(counts "$K")" = "5 3 0 0 0" ]' 30
t_is "$(counts "$K")" "5 3 0 0 0" "before kill -9: 3 tasks run, 5 wait"
loomd_kill9
loomd_start || t_bail "loomd did not start again"
job "$K"
t_is "$(py '[d["array_tasks"], d["array_counts"]["running"]]' "$BODY")" '["4-8", 3]' \
    "after it: tasks 4-8 wait, 3 run (adopted)"
job "$KH"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .array_tasks)" "held/1-3" \
    "the held array is still held"
touch "$T/go3"
wait_for '[ "$(job_state "$K")" = completed ]' 60
t_is "$(counts "$K")" "0 0 8 0 0" "all 8 tasks complete"
t_is "$(cat "$T/home/$T_USER"/k.* | wc -l)" 8 "each task ran once (8 starts for 8 tasks)"
api POST "/v1/jobs/$KH/release" '{}' >/dev/null
wait_for '[ "$(job_state "$KH")" = completed ]' 30
t_is "$(job_state "$KH")" completed "released after the restart, the held array completes"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
