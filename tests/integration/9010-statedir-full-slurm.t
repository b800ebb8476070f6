#!/usr/bin/env bash
# 9010-statedir-full-slurm.t - loomd's state_dir on a small tmpfs that fills
# up, with a real Slurm cluster (the bundled pack) in it: the pack's
# scratch files (.slurm-OP.out and .err: Slurm's answers, kept there from
# op to op), its start markers and each job's file (jobs/ID/job.sh) are
# there. Slurm's commands exit 0 when their output could not be written,
# so an answer cut short would read as jobs gone or as no job to adopt:
# the pack says instead that the state directory is full, a temporary
# failure, and the cluster shows it. A job submitted meanwhile is
# accepted and waits, with nothing sent to Slurm; a job that ends
# meanwhile is not taken for ended before its end can be read; loomd runs
# on and serves. When space returns the waiting jobs run, once each, one
# Slurm job each, and the ended one keeps its exit code. (9008 is the same
# for the local cluster.)
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

[ "$(id -u)" = 0 ] || t_bail "this test mounts a tmpfs: it must run as root"
t_tmpfs "$T/state" 8m || t_bail "cannot mount a tmpfs on $T/state"
W=$T/w
mkdir -m 1777 "$W"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"
PACKDIR=$T/state/clusters/slurm

# A job that appends "ID ACCOUNT" to $W/starts, then runs REST.
mark_job() {
    printf '{"name": "%s", "command": ["/bin/sh", "-c", "echo $LOOM_JOB_ID $(id -un) >> %s/starts; %s"], "request": {"cluster": "slurm", "walltime_s": 300}}' \
        "$1" "$W" "$2"
}
starts_of() { awk -v id="$1" '$1 == id' "$W/starts" 2>/dev/null | wc -l; }
# The Loom ids of the jobs Slurm has, by their comment (loom:ID), sorted.
in_slurm() { squeue -h -t all -o '%k' | sed -n 's/^loom://p' | sort -n; }

submit "$(mark_job before 'exit 0')" || t_bail "no submit"
BEFORE=$JOB
wait_for '[ "$(job_state "$BEFORE")" = completed ]' 60
t_is "$(job_state "$BEFORE")" completed "a job runs while there is space"

# A job that runs across the full time: it ends (exit 4) once the disk is
# full (the file $W/full), 120 s at most.
submit "$(mark_job across 'i=0; while [ ! -e '"$W"'/full ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i + 1)); done; exit 4')" ||
    t_bail "no submit"
ACROSS=$JOB
wait_for '[ "$(job_state "$ACROSS")" = running ] && [ "$(starts_of "$ACROSS")" = 1 ]' 60
t_is "$(job_state "$ACROSS")" running "the job that ends on the full disk runs"

# ---- the state_dir fills up -------------------------------------------------
dd if=/dev/zero of="$T/state/filler" bs=64k >/dev/null 2>&1
t_is "$(df --output=avail -k "$T/state" | tail -n 1 | tr -d ' ')" 0 \
    "the state_dir's file system is full"
touch "$W/full"

IDS=()
for i in 1 2 3; do
    submit "$(mark_job "full-$i" 'exit 0')"
    t_is "$STATUS" 201 "a submit on the full state_dir is accepted ($i)"
    IDS+=("$JOB")
done

# The pack says why it cannot answer; the cluster shows it: degraded at
# the first failed poll, unreachable after three.
wait_for 'cluster_state slurm; [[ $ERR == *"is full"* && $STATE == unreachable ]]' 90
cluster_state slurm
t_is "$STATE" unreachable "the cluster is unreachable while its state directory is full"
t_like "$ERR" "^cluster slurm: pack slurm: [a-z-]+: temporary failure: [a-z-]+: the state directory $PACKDIR is full \\(no space left on device\\): Slurm's answer cannot be kept there\$" \
    "... and its error says which directory and why"

# Slurm has ended the job across the full time (exit 4): while its end
# cannot be read, Loom does not make one up.
wait_for '[ "$(squeue -h -t all -j "$(field "$ACROSS" .native_id)" -o %T)" = FAILED ]' 60
t_is "$(squeue -h -t all -j "$(field "$ACROSS" .native_id)" -o %T)" FAILED \
    "Slurm has the job that ran across failed"
# Three polls of the jobs more, failed, after that.
jobs_failed() {
    api GET /metrics >/dev/null
    printf '%s\n' "$BODY" | awk '$1 == "loom_adaptor_op_failures_total{cluster=\"slurm\",op=\"jobs\"}" { print $2 }'
}
F0=$(jobs_failed)
wait_for '[ "$(jobs_failed)" -ge $((F0 + 3)) ]' 60
t_ok $? "the polls of the jobs go on failing ($F0, then $(jobs_failed))"
t_is "$(job_state "$ACROSS")" running "... Loom keeps it running until it can read its end"

for id in "${IDS[@]}"; do
    t_is "$(job_state "$id")/$(starts_of "$id")" pending/0 \
        "a job submitted on the full state_dir waits, not started ($id)"
done
t_is "$(in_slurm | paste -sd' ')" "$BEFORE $ACROSS" \
    "nothing was submitted to Slurm meanwhile"

api GET /v1/jobs >/dev/null
t_is "$STATUS/$(py 'len(d["items"])' "$BODY")" 200/5 "reads are served on the full disk"
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd runs on"
t_is "$(grep -c -E 'Sanitizer|runtime error:' "$T/loomd.log")" 0 \
    "... with no sanitizer report (a job's file that cannot be written is closed once)"

# ---- space returns ----------------------------------------------------------
rm -f "$T/state/filler"
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 60
t_is "$STATE" up "space back: the cluster is up again"
for id in "${IDS[@]}"; do
    wait_for '[ "$(job_state "$id")" = completed ]' 90
    t_is "$(job_state "$id")/$(starts_of "$id")" completed/1 \
        "space back: job $id ran, once, and completed"
done
wait_for '[ "$(job_state "$ACROSS")" = failed ]' 60
api GET "/v1/jobs/$ACROSS" >/dev/null
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["failed", 4]' \
    "the job that ended on the full disk keeps its exit code 4"
t_is "$(starts_of "$ACROSS")" 1 "... and ran once"
t_is "$(in_slurm | paste -sd' ')" "$BEFORE $ACROSS ${IDS[*]}" \
    "Slurm has one job for each Loom job, none twice"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$ALICE" "the jobs ran as $ALICE"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
