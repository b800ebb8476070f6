#!/usr/bin/env bash
# 4009-slurm-native-restart.t - a job that Slurm started by itself (sbatch
# directly) stays Slurm's across a restart of loomd: the new loomd does not
# start or re-attach it, and shows it running for as long as Slurm runs it.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"

# slurm_jobs: "ID NAME USER STATE" of every job Slurm has, one a line.
slurm_jobs() { squeue -h -t all -o '%A %j %u %T' | sort; }

NAT=$(su "$ALICE" -s /bin/sh -c "cd $T/home/$ALICE && SLURM_CONF=$SLURM_CONF sbatch --parsable -J native-run --wrap 'sleep 300'")
t_like "$NAT" '^[0-9]+$' "alice submits a job to Slurm directly ($NAT)"
wait_for '[ "$(slurm_jobs)" = "$NAT native-run $ALICE RUNNING" ]' 60
t_is "$(slurm_jobs)" "$NAT native-run $ALICE RUNNING" "Slurm runs it as $ALICE"
find_job() {
    api GET "/v1/jobs?cluster=slurm" >/dev/null
    py '[j["id"] for j in d["items"] if j["native_id"] == "'"$NAT"'"]' "$BODY"
}
wait_for '[ "$(find_job)" != "[]" ]' 30
JN=$(py 'd[0]' "$(find_job)")
wait_for '[ "$(field "$JN" .state)" = running ]' 30
t_is "$(field "$JN" .source)/$(field "$JN" .state)" cluster/running \
    "Loom shows it as the cluster's job, running"

loomd_stop
t_is $? 0 "loomd stops"
cp "$T/loomd.log" "$T/loomd.log.before"
loomd_start || t_bail "loomd did not start again"
t_like "$(grep -c 'loomd ready' "$T/loomd.log")" '^2$' "a new loomd is ready"
# Polls after the restart (one every 0.5 s; last_poll has whole seconds):
# the job must still be running in Loom after three seconds of them.
last_poll() { api GET /v1/clusters/slurm >/dev/null; jget "$BODY" .last_poll; }
P=$(last_poll)
for i in 1 2 3; do
    wait_for '[ "$(last_poll)" != "$P" ]' 30 || break
    P=$(last_poll)
done
t_is "$i" 3 "the new loomd polls Slurm, second after second"
t_is "$(field "$JN" .state)" running "after the restart and three seconds of polls, Loom still shows it running"
t_is "$(slurm_jobs)" "$NAT native-run $ALICE RUNNING" "... and Slurm has that one job, running: nothing was submitted again"
t_is "$(diff "$T/loomd.log.before" "$T/loomd.log" | grep -c "job=$JN .*\(started\|re-attached\)")" 0 \
    "the new loomd neither started nor re-attached it"

scancel "$NAT"
wait_for '[ "$(field "$JN" .state)" = cancelled ]' 30
t_is "$(field "$JN" .state)" cancelled "cancelled in Slurm, Loom shows it cancelled"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)"
t_done
