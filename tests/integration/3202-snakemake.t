#!/usr/bin/env bash
# 3202-snakemake.t - Snakemake 7.21's Slurm executor (snakemake --slurm)
# through Loom's Slurm commands: a workflow of five rules with a fan-out
# of ten runs to the end as a real account, its jobs on a local cluster
# and a real Slurm (two rules sent to each by their partition: the local
# cluster's queue default, Slurm's debug; the fan-out left to Loom; each
# job's step run by srun in place); a rule that fails is reported failed
# and the workflow stops.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

command -v snakemake >/dev/null || t_bail "no snakemake (./bootstrap check installs it)"
slurm_available || t_bail "no Slurm: $SLURM_WHY"
t_account ALICE alice || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"
W=$T/home/$ALICE/wf
install -d -o "$ALICE" -g "$ALICE" "$W" || t_bail "cannot make the workflow directory"

cat >"$W/Snakefile" <<'EOS'
rule all:
    input: "final.txt"

rule start:
    output: "start.txt"
    resources: slurm_partition="default"
    shell: "echo start > {output}"

rule fan:
    input: "start.txt"
    output: "fan/{i}.txt"
    shell: "sleep 2; echo {wildcards.i} $(id -un) > {output}"

rule gather:
    input: expand("fan/{i}.txt", i=range(10))
    output: "gathered.txt"
    resources: slurm_partition="debug"
    shell: "cat {input} > {output}"

rule count:
    input: "gathered.txt"
    output: "count.txt"
    resources: slurm_partition="debug"
    shell: "wc -l < {input} > {output}"

rule final:
    input: "count.txt"
    output: "final.txt"
    resources: slurm_partition="default"
    shell: "echo lines $(cat {input}) > {output}"

rule broken:
    output: "broken.txt"
    shell: "echo about to fail; exit 4"
EOS
chown "$ALICE:" "$W/Snakefile"

# (more than 1 status check a second, and snakemake 7.21 makes it 0.03)
SM=(snakemake --slurm --jobs 10 --max-status-checks-per-second 1
    --default-resources runtime=5 mem_mb=500 --latency-wait 5)
as_user "$ALICE" sh -c "cd wf && ${SM[*]} all" >"$T/sm.out" 2>&1
RC=$?
t_is "$RC" 0 "snakemake --slurm runs the workflow to the end (exit 0)" ||
    t_diag "$(tail -n 40 "$T/sm.out")"
t_is "$(cat "$W/final.txt" 2>&1)" "lines 10" "the fan-out of ten came back together"
t_is "$(cut -d' ' -f2 "$W"/gathered.txt 2>/dev/null | sort -u)" "$ALICE" \
    "every fan-out job ran as $ALICE"
t_like "$(cat "$T/sm.out")" "Job [0-9]+ has been submitted with SLURM jobid [0-9]+" \
    "snakemake read sbatch's answer"

api GET "/v1/jobs?account=$ALICE&limit=1000" >/dev/null
t_is "$(py 'len([j for j in d["items"] if j["name"].startswith("snakejob_")])' "$BODY")" 14 \
    "Loom ran its 14 jobs (1 start, 10 fan, gather, count, final)"
t_is "$(py '" ".join(sorted({j["state"] for j in d["items"]}))' "$BODY")" completed \
    "every one completed"
t_is "$(py '" ".join(sorted({j["account"] for j in d["items"]}))' "$BODY")" "$ALICE" \
    "every one ran as $ALICE, who submitted them by uid alone"
t_is "$(py '" ".join(sorted("%s:%s" % (j["name"].split("_")[1], j["cluster"]) for j in d["items"] if not j["name"].startswith("snakejob_fan_")))' "$BODY")" \
    "count:slurm final:local gather:slurm start:local" \
    "the rules ran where their partitions are: start and final in the local cluster's queue default, gather and count in Slurm's debug"
t_diag "the fan-out, left to Loom, ran on: $(py '" ".join(sorted(j["cluster"] for j in d["items"] if j["name"].startswith("snakejob_fan_")))' "$BODY")"

# (snakemake 7.21 may take a while to shut down after a failed job)
as_user "$ALICE" timeout -s KILL 300 sh -c "cd wf && ${SM[*]} broken" \
    >"$T/sm2.out" 2>&1
RC=$?
t_isnt "$RC" 0 "a workflow whose rule fails ends in failure"
t_like "$(cat "$T/sm2.out")" "SLURM-job '[0-9]+' failed, SLURM status is: 'FAILED'" \
    "snakemake reports the rule's job FAILED, as sacct said"
api GET "/v1/jobs?account=$ALICE&limit=1000" >/dev/null
t_is "$(py '[[j["state"], j["exit_code"]] for j in d["items"] if j["name"].startswith("snakejob_broken_")]' "$BODY")" \
    "[[\"failed\", 1]]" "Loom has the job failed, exit code 1 (snakemake's own after the rule's 4)"

t_done
