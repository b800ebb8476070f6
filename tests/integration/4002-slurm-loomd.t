#!/usr/bin/env bash
# 4002-slurm-loomd.t - one loomd federating a real Slurm and the local
# executor through the script adaptor: nodes, jobs placed by Loom on the
# nodes it chose, exit codes and output, cancel, suspend/resume, hold and
# release in Slurm, drain/up, jobs submitted with sbatch directly.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"

# ---- the fabric --------------------------------------------------------------
api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)/$(jget "$BODY" .model)" \
    "up/4/disabled-scheduler" "the Slurm cluster is up with 4 nodes"
api GET /v1/nodes >/dev/null
t_is "$(py '" ".join(sorted(n["id"] for n in d["items"]))' "$BODY")" \
    "local/n1 local/n2 slurm/n1 slurm/n2 slurm/n3 slurm/n4" \
    "/v1/nodes lists the nodes of both clusters"
api GET /v1/nodes/slurm/n3 >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .cpus)" "idle/2" \
    "slurm/n3 is idle with 2 cpus"

# ---- a job pinned to Slurm: exit code and output come back ---------------------
submit '{"name":"hello","command":["/bin/sh","-c","echo hello from $SLURMD_NODENAME job $LOOM_JOB_ID; exit 3"],"request":{"cluster":"slurm"}}'
J=$JOB
wait_for '[ "$(field "$J" .state)" = failed ]' 30
job "$J"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)" "failed/3" \
    "a Slurm job that exits 3 is recorded failed with exit code 3"
NODE=$(jget "$BODY" .nodes.0)
t_like "$(cat "$(jget "$BODY" .stdout)" 2>/dev/null)" "^hello from $NODE job $J\$" \
    "its output comes back and it ran on the node Loom chose ($NODE)"
NATIVE=$(jget "$BODY" .native_id)
t_like "$(scontrol show job -o "$NATIVE" 2>/dev/null)" "Comment=loom:$J" \
    "Slurm carries the Loom id in the job's comment"

# ---- the start decision is Loom's: the job runs on exactly the chosen nodes ----
submit '{"name":"pair","command":["sleep","4"],"request":{"cluster":"slurm","nodes":2,"cpus_per_node":2}}'
J2=$JOB
wait_for '[ "$(field "$J2" .state)" = running ]' 30
job "$J2"
CHOSEN=$(py '",".join(d["nodes"])' "$BODY")
RAN=$(squeue -h -j "$(jget "$BODY" .native_id)" -o '%N' 2>/dev/null)
if [ -z "$RAN" ]; then
    RAN=$(scontrol show job -o "$(jget "$BODY" .native_id)" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p')
fi
t_is "$(scontrol show hostnames "$RAN" | paste -sd,)" "$CHOSEN" \
    "a 2-node job runs on exactly the nodes Loom chose ($CHOSEN)"
wait_for '[ "$(field "$J2" .state)" = completed ]' 30
t_is "$(field "$J2" .state)" completed "... and completes"

# ---- a job without a pin runs somewhere it fits ------------------------------------
submit '{"command":["true"],"request":{"cpus_per_node":2}}'
J3=$JOB
wait_for '[ "$(field "$J3" .state)" = completed ]' 30
t_is "$(field "$J3" .state)/$(field "$J3" .cluster)" "completed/slurm" \
    "a 2-cpu job without a pin runs on the cluster where it fits (slurm)"

# ---- cancel, suspend/resume of a running Slurm job ----------------------------------
submit '{"command":["sleep","300"],"request":{"cluster":"slurm"}}'
J4=$JOB
wait_for '[ "$(field "$J4" .state)" = running ]' 30
t_is "$(field "$J4" .state)" running "a long Slurm job runs"
N4=$(field "$J4" .native_id)
api POST "/v1/jobs/$J4/suspend" >/dev/null
t_is "$STATUS" 202 "suspend is accepted"
wait_for '[ "$(squeue -h -j "$N4" -o %T)" = SUSPENDED ]' 30
t_is "$(squeue -h -j "$N4" -o %T)" SUSPENDED "Slurm shows it suspended"
wait_for '[ "$(field "$J4" .state)" = suspended ]' 30
t_is "$(field "$J4" .state)" suspended "Loom shows it suspended"
api POST "/v1/jobs/$J4/resume" >/dev/null
wait_for '[ "$(squeue -h -j "$N4" -o %T)" = RUNNING ]' 30
t_is "$(squeue -h -j "$N4" -o %T)" RUNNING "resume: Slurm runs it again"
api DELETE "/v1/jobs/$J4" >/dev/null
t_is "$STATUS" 202 "cancel is accepted"
wait_for '[ "$(field "$J4" .state)" = cancelled ]' 30
t_is "$(field "$J4" .state)" cancelled "the cancelled job ends cancelled"
# MinJobAge=600: squeue -t all shows a finished job for 10 minutes.
wait_for '[ "$(squeue -h -t all -j "$N4" -o %T 2>/dev/null)" = CANCELLED ]' 30
t_is "$(squeue -h -t all -j "$N4" -o %T 2>/dev/null)" CANCELLED "Slurm cancelled it"

# ---- a job submitted with sbatch directly appears, and Loom steers it ---------------
NAT=$(sbatch --parsable --begin=now+3600 -J native-one --wrap 'true')
wait_for 'api GET "/v1/jobs?cluster=slurm&state=pending" >/dev/null; grep -q "\"native_id\":\"$NAT\"" <<<"$BODY"' 30
t_ok $? "an sbatch job appears in /v1/jobs"
JN=$(printf '%s' "$BODY" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([j["id"] for j in d["items"] if j["native_id"]==sys.argv[1]][0])' "$NAT")
t_is "$(field "$JN" .source)/$(field "$JN" .name)" "cluster/native-one" \
    "... with source cluster and its name"
api POST "/v1/jobs/$JN/hold" >/dev/null
t_is "$STATUS" 202 "hold of a job queued in Slurm is accepted"
prio() { scontrol show job -o "$NAT" | grep -o ' Priority=[0-9]*' | cut -d= -f2; }
wait_for '[ "$(prio)" = 0 ]' 30
t_is "$(prio)" 0 "Slurm holds it (priority 0)"
wait_for '[ "$(field "$JN" .state)" = held ]' 30
t_is "$(field "$JN" .state)" held "Loom shows it held"
api POST "/v1/jobs/$JN/release" >/dev/null
wait_for '[ "$(prio)" != 0 ]' 30
t_ok $? "release: Slurm no longer holds it (priority $(prio))"
api DELETE "/v1/jobs/$JN" >/dev/null
wait_for '[ "$(field "$JN" .state)" = cancelled ]' 30
t_is "$(field "$JN" .state)" cancelled "cancel of the sbatch job through Loom"

# ---- drain and up show in sinfo --------------------------------------------------------
api PUT /v1/nodes/slurm/n2/state '{"state":"drain","reason":"loom test"}' >/dev/null
t_is "$STATUS" 200 "drain slurm/n2"
wait_for 'sinfo -h -n n2 -o "%T" | grep -Eq "drain"' 30
t_like "$(sinfo -h -n n2 -o '%T %E')" "^drain(ed|ing)?.* loom test" "sinfo shows n2 drained with the reason"
wait_for '[ "$(api GET /v1/nodes/slurm/n2 >/dev/null; jget "$BODY" .state)" = drained ]' 30
t_is "$(api GET /v1/nodes/slurm/n2 >/dev/null; jget "$BODY" .state)" drained "Loom shows it drained"
api PUT /v1/nodes/slurm/n2/state '{"state":"up"}' >/dev/null
wait_for 'sinfo -h -n n2 -o "%T" | grep -Eq "^idle"' 30
t_like "$(sinfo -h -n n2 -o '%T')" "^idle" "up: sinfo shows n2 idle again"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
