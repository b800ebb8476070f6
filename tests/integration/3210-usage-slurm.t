#!/usr/bin/env bash
# 3210-usage-slurm.t - what a job used, measured by a real Slurm with
# accounting (slurmdbd on a private MariaDB, jobacct_gather/linux;
# tests/lib/slurm.sh with LOOM_SLURM_ACCT=1) and read by the slurm pack
# from the real sacct: a job that burns 3 s of user cpu (it watches its
# own /proc/PID/stat) and holds 64 MiB ends in Loom with Slurm's UserCPU,
# SystemCPU and largest step MaxRSS; Loom's sacct prints those numbers.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/usage.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_acct_available || t_bail "no Slurm accounting: $SLURM_WHY"
LOOM_SLURM_ACCT=1 slurm_start 1 || t_bail "Slurm with accounting did not start"
t_is "$(sacctmgr -n -P list cluster format=cluster)" loomtest \
    "slurmdbd answers, with the test's cluster registered"
t_account ACC usage
pg_start || t_bail "no PostgreSQL"
map_account "$ACC" "$ACC"
loomd_conf <<EOF
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)
usage_sacct_setup "$USER_TOKEN" || t_bail "cannot write the user's token"

# ---- 3 s of user time, 64 MiB -------------------------------------------------
usage_run slurm "$USER_TOKEN" "$ACC" "Slurm"
usage_is_sacct Slurm

t_done
