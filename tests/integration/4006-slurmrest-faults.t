#!/usr/bin/env bash
# 4006-slurmrest-faults.t - slurmrestd killed, restarted, hung, and its
# slurmctld killed, under a running loomd: the slurmrest cluster turns
# unreachable with a clear error and comes back, a job waits and runs once,
# and the local cluster beside it goes on polling while a request to the
# hung slurmrestd waits for its timeout (one thread carries both).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1
slurm_start 2 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
pg_start || t_bail "no PostgreSQL"
mkdir -p "$T/scratch"
chmod 1777 "$T/scratch"
loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
[cluster slurm]
adaptor = slurmrest
url = $SLURM_RESTD_URL
jwt_key_file = $SLURM_JWT_KEY
timeout_s = 2
workdir = $T/scratch
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.3
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"

cstate() { api GET "/v1/clusters/$1" >/dev/null && jget "$BODY" .state; }
cerror() { api GET "/v1/clusters/$1" >/dev/null && jget "$BODY" .error; }
# metric NAME CLUSTER OP: a counter of /metrics (0 when absent).
metric() {
    curl -s "$LOOM_URL/metrics" | awk -v k="$1{cluster=\"$2\",op=\"$3\"}" \
        '$1 == k { v = $2 } END { print v + 0 }'
}
t_is "$(cstate slurm)/$(cstate local)" up/up "both clusters are up"

# ---- slurmrestd killed: the cluster turns unreachable, the other goes on ----
slurm_restd_kill
wait_for '[ "$(cstate slurm)" = unreachable ]' 60
t_is "$(cstate slurm)" unreachable "slurmrestd killed: the cluster is unreachable"
t_like "$(cerror slurm)" "^cluster slurm: slurmrestd v0.0.38: GET (jobs|nodes): cannot reach http://127.0.0.1:[0-9]+: " \
    "its error says what could not be reached: $(cerror slurm)"
submit '{"command":["true"],"request":{"cluster":"local"}}'
JL=$JOB
wait_for '[ "$(field "$JL" .state)" = completed ]' 30
t_is "$(field "$JL" .state)" completed "a local job runs meanwhile"
submit '{"name":"waits","command":["/bin/sh","-c","echo ran"],"request":{"cluster":"slurm"}}'
JS=$JOB
turns_pass .maintenance.compares 5
t_like "$(field "$JS" .state)" "^(pending|starting)$" \
    "a job for the unreachable cluster waits ($(field "$JS" .state)), it does not fail"

# ---- restarted: the cluster answers again, and the job runs, once ------------
slurm_restd_start || t_bail "slurmrestd did not start again"
wait_for '[ "$(cstate slurm)" = up ]' 60
t_is "$(cstate slurm)" up "slurmrestd back: the cluster is up again"
wait_for '[ "$(field "$JS" .state)" = completed ]' 60
t_is "$(field "$JS" .state)" completed "the job that waited runs and completes"
t_is "$(squeue -h -t all -o '%k' | grep -cx "loom:$JS")" 1 \
    "Slurm has it once"

# ---- hung: one request waits for its timeout, the local cluster polls on ----
RPID=$(slurm_pid restd-jwt)
f0=$(metric loom_adaptor_op_failures_total slurm jobs)
kill -STOP "$RPID"
wait_for '[ "$(metric loom_adaptor_op_failures_total slurm jobs)" -gt "$f0" ]' 60
t_like "$(cerror slurm)" "GET (jobs|nodes): no answer from http://127.0.0.1:[0-9]+: .*timed out" \
    "a hung slurmrestd: no answer within the timeout ($(cerror slurm))"
# Between this failure and the next one, a request waits 2 s for nothing;
# the local cluster's polls, every 0.2 s, must go on meanwhile.
f1=$(metric loom_adaptor_op_failures_total slurm jobs)
l1=$(metric loom_adaptor_op_seconds_count local jobs)
wait_for '[ "$(metric loom_adaptor_op_failures_total slurm jobs)" -gt "$f1" ]' 60
l2=$(metric loom_adaptor_op_seconds_count local jobs)
t_ok $((l2 - l1 >= 2 ? 0 : 1)) \
    "the local cluster polled $((l2 - l1)) times while a request to slurmrestd hung"
t_is "$(cstate local)" up "the local cluster stays up"
kill -CONT "$RPID"
wait_for '[ "$(cstate slurm)" = up ]' 60
t_is "$(cstate slurm)" up "slurmrestd answers again: up"

# ---- slurmctld killed: slurmrestd answers, with Slurm's error ----------------
slurm_kill_ctld
wait_for '[ "$(cstate slurm)" != up ]' 60
t_like "$(cerror slurm)" "slurmrestd v0.0.38: GET " \
    "slurmctld down: the cluster says slurmrestd's answer: $(cerror slurm)"
slurm_start_ctld || t_bail "slurmctld did not come back"
wait_for '[ "$(cstate slurm)" = up ]' 60
t_is "$(cstate slurm)" up "slurmctld back: up"
submit '{"command":["true"],"request":{"cluster":"slurm"}}'
J2=$JOB
wait_for '[ "$(field "$J2" .state)" = completed ]' 60
t_is "$(field "$J2" .state)" completed "and jobs run there again"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
