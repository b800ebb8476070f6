#!/usr/bin/env bash
# 3211-usage-slurmrest.t - what a job used, measured by a real Slurm with
# accounting (slurmdbd on a private MariaDB; tests/lib/slurm.sh with
# LOOM_SLURM_ACCT=1) and read by the slurmrest adaptor from slurmdbd's
# record through slurmrestd's openapi/dbv0.0.38 (GET
# /slurmdb/v0.0.38/job/ID): a job that burns 3 s of user cpu and holds
# 64 MiB ends in Loom with the UserCPU, SystemCPU and largest step MaxRSS
# the real sacct shows, as 3210 checks for the slurm pack. Then the same
# slurmrestd without the plugin: a job ends without usage, at once, and
# loomd says why.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/usage.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_acct_available || t_bail "no Slurm accounting: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1 LOOM_SLURM_ACCT=1
slurm_start 1 || t_bail "Slurm with accounting did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
t_account ACC usage
pg_start || t_bail "no PostgreSQL"
map_account "$ACC" "$ACC"
loomd_conf <<EOF
$(slurm_restd_section)
EOF
loomd_start || t_bail "loomd did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)
usage_sacct_setup "$USER_TOKEN" || t_bail "cannot write the user's token"
api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .operations.jobs)" \
    "up/slurmrestd v0.0.38" "the cluster's jobs are read through slurmrestd"

# ---- 3 s of user time, 64 MiB -------------------------------------------------
usage_run slurm "$USER_TOKEN" "$ACC" "Slurm through slurmrestd"
usage_is_sacct "Slurm (slurmrestd)"

# ---- slurmrestd without openapi/dbv0.0.38: no usage, no waiting ---------------
slurm_restd_stop
LOOM_SLURM_ACCT=0 slurm_restd_start || t_bail "slurmrestd did not start again"
TOKEN=$USER_TOKEN submit '{"name": "quick", "command": ["/bin/true"], "request": {"cluster": "slurm"}}' ||
    t_bail "no job: $BODY"
Q=$JOB
wait_for '[ "$(job_state "$Q")" = completed ]' 60
t_is "$(job_state "$Q")/$(usage_of "$Q")" completed/null \
    "without the plugin the job completes, without usage"
t_like "$(grep 'has no accounting' "$T/loomd.log")" \
    "cluster=slurm slurmrestd has no accounting \\(no /slurmdb/v0.0.38/: openapi/dbv0.0.38 is not loaded\\)" \
    "loomd says why"
t_is "$(grep -c 'has no accounting' "$T/loomd.log")" 1 \
    "... once: it asks again only after 10 minutes"

t_done
