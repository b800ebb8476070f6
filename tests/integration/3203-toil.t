#!/usr/bin/env bash
# 3203-toil.t - Toil 5.9's Slurm batch system through Loom's Slurm
# commands: a workflow of 20 jobs (tests/fixtures/workflows/toil_sum.py)
# runs to the end as a real account, each job one sbatch --wrap with
# Toil's --export list, sent by TOIL_SLURM_ARGS to the real Slurm's
# partition in a fabric that has a local cluster too.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

python3 -c 'import toil' 2>/dev/null || t_bail "no toil (./bootstrap check installs it)"
slurm_available || t_bail "no Slurm: $SLURM_WHY"
t_account ALICE alice || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"
W=$T/home/$ALICE
install -m 0644 "$LOOM_TOP_SRCDIR/tests/fixtures/workflows/toil_sum.py" "$W/" ||
    t_bail "cannot copy the workflow"

# TOIL_SLURM_ARGS: Toil's own way to add sbatch options; the partition
# debug, the real Slurm's queue, sends every job there (not -M: sbatch
# then ends its answer with the cluster's name, as Slurm's does, and Toil
# takes the last word for the job id)
as_user "$ALICE" env TOIL_SLURM_ARGS="-p debug" \
    python3 toil_sum.py file:jobstore --batchSystem slurm \
    --statePollingWait 1 --defaultMemory 400M --defaultDisk 10M \
    --workDir "$W" --retryCount 0 --logLevel INFO >"$T/toil.out" 2>&1
RC=$?
t_is "$RC" 0 "toil --batchSystem slurm runs the workflow to the end (exit 0)" ||
    t_diag "$(tail -n 40 "$T/toil.out")"
t_like "$(cat "$T/toil.out")" "total 1785 users $ALICE\$" \
    "its result: the squares of 0 to 17 add up to 1785, every leaf ran as $ALICE"

api GET "/v1/jobs?account=$ALICE&limit=1000" >/dev/null
t_is "$(py 'len([j for j in d["items"] if j["name"].startswith("toil_job_")])' "$BODY")" 20 \
    "Loom ran its 20 jobs"
t_is "$(py '" ".join(sorted({j["state"] for j in d["items"]}))' "$BODY")" completed \
    "every one completed"
t_is "$(py '" ".join(sorted({j["account"] for j in d["items"]}))' "$BODY")" "$ALICE" \
    "every one ran as $ALICE, who submitted them by uid alone"
t_is "$(py '" ".join(sorted({j["cluster"] for j in d["items"]}))' "$BODY")" \
    slurm "every one ran in the real Slurm, as TOIL_SLURM_ARGS=\"-p debug\" asked"

t_done
