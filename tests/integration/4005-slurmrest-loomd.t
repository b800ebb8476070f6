#!/usr/bin/env bash
# 4005-slurmrest-loomd.t - one loomd federating a real Slurm through
# slurmrestd (the slurmrest adaptor, JWT on loopback) and the local
# executor: every operation through the adaptor, and the checks 4002 makes
# of the script adaptor: nodes, jobs on exactly the nodes Loom chose, exit
# codes and output, cancel, suspend/resume and drain/up (the fallback
# pack), a maintenance window made in Slurm (the fallback pack),
# hold/release of a job submitted with sbatch (the hold's log line
# naming the API request it serves), each job submitted as
# its account (X-SLURM-USER-NAME with a token of that account's) and shown
# as that user's by squeue; then the same Slurm through rest_auth/local on
# the Unix socket, where slurmrestd acts as its own account whoever asks:
# reads go through it, starts and the other operations on jobs to the pack,
# so that jobs still run as their accounts.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1
slurm_start 4 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
pg_start || t_bail "no PostgreSQL"

t_account ACCT alice

loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
$(slurm_restd_section)
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"

# ---- the fabric --------------------------------------------------------------
api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)/$(jget "$BODY" .adaptor)" \
    "up/4/slurmrest" "the Slurm cluster is up with 4 nodes, through slurmrestd"
t_is "$(py '" ".join(k + "=" + v for k, v in sorted(d["operations"].items()))' "$BODY")" \
    "cancel=slurmrestd v0.0.38 hold=slurmrestd v0.0.38 jobs=slurmrestd v0.0.38 nodes=slurmrestd v0.0.38 queues=slurmrestd v0.0.38 release=slurmrestd v0.0.38 reserve=pack slurm resume=pack slurm set_node_state=pack slurm start=slurmrestd v0.0.38 suspend=pack slurm unreserve=pack slurm" \
    "/v1/clusters shows which operations go to slurmrestd and which to the pack"
api GET /v1/nodes/slurm/n3 >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .cpus)/$(jget "$BODY" .memory_mb)/$(jget "$BODY" .queues.0)" \
    "idle/2/2048/debug" "slurm/n3 is idle with 2 cpus, 2048 MB, in debug"
api GET /v1/queues/slurm/debug >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" "open/4" \
    "the partition debug is an open queue of 4 nodes"

# ---- a job pinned to Slurm: exit code and output come back ---------------------
submit '{"name":"hello","command":["/bin/sh","-c","echo hello from $SLURMD_NODENAME job $LOOM_JOB_ID; exit 3"],"request":{"cluster":"slurm"}}'
J=$JOB
wait_for '[ "$(field "$J" .state)" = failed ]' 30
job "$J"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)" "failed/3" \
    "a Slurm job that exits 3 is recorded failed with exit code 3"
NODE=$(jget "$BODY" .nodes.0)
t_is "$(jget "$BODY" .stdout)" "$T/home/$T_USER/loom-$J.out" \
    "its output file is in its account's home, named for the job"
t_like "$(cat "$T/home/$T_USER/loom-$J.out" 2>/dev/null)" "^hello from $NODE job $J\$" \
    "its output comes back and it ran on the node Loom chose ($NODE)"
NATIVE=$(jget "$BODY" .native_id)
t_like "$(scontrol show job -o "$NATIVE" 2>/dev/null)" "Comment=loom:$J" \
    "Slurm carries the Loom id in the job's comment"
t_is "$(squeue -h -t all -j "$NATIVE" -o %u)" "$T_USER" \
    "the admin's job runs as its account, $T_USER"

# ---- the start decision is Loom's: the job runs on exactly the chosen nodes ----
submit '{"name":"pair","command":["sleep","4"],"request":{"cluster":"slurm","nodes":2,"cpus_per_node":2}}'
J2=$JOB
wait_for '[ "$(field "$J2" .state)" = running ]' 30
job "$J2"
CHOSEN=$(py '",".join(d["nodes"])' "$BODY")
RAN=$(squeue -h -t all -j "$(jget "$BODY" .native_id)" -o '%N' 2>/dev/null)
t_is "$(scontrol show hostnames "$RAN" | paste -sd,)" "$CHOSEN" \
    "a 2-node job runs on exactly the nodes Loom chose ($CHOSEN)"
wait_for '[ "$(field "$J2" .state)" = completed ]' 30
t_is "$(field "$J2" .state)/$(field "$J2" .exit_code)" completed/0 \
    "... and completes with exit code 0"

# ---- a user's job runs as the user's account --------------------------------------
ADMIN=$TOKEN
TOKEN=$(token_for "$ACCT" user)
submit '{"name":"mine","command":["/bin/sh","-c","id -un; pwd"],"request":{"cluster":"slurm"}}'
JA=$JOB
wait_for '[ "$(field "$JA" .state)" = completed ]' 30
t_is "$(field "$JA" .state)/$(field "$JA" .account)" "completed/$ACCT" \
    "alice's job completes and records her account"
t_is "$(squeue -h -t all -j "$(field "$JA" .native_id)" -o %u)" \
    "$ACCT" "squeue shows the job under that account"
TOKEN=$ADMIN
t_is "$(cat "$T/home/$ACCT/loom-$JA.out" 2>/dev/null | paste -sd' ')" \
    "$ACCT $T/home/$ACCT" "the job ran as $ACCT, in its home"

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
t_is "$STATUS" 202 "suspend is accepted (the pack carries it out)"
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
wait_for '[ "$(squeue -h -t all -j "$N4" -o %T 2>/dev/null)" = CANCELLED ]' 30
t_is "$(squeue -h -t all -j "$N4" -o %T 2>/dev/null)" CANCELLED "Slurm cancelled it"

# ---- a job submitted with sbatch directly appears, and Loom steers it ---------------
NAT=$(sbatch --parsable --begin=now+3600 -J native-one --wrap 'true')
wait_for 'api GET "/v1/jobs?cluster=slurm&state=pending" >/dev/null; grep -q "\"native_id\":\"$NAT\"" <<<"$BODY"' 30
t_ok $? "an sbatch job appears in /v1/jobs"
JN=$(printf '%s' "$BODY" | python3 -c 'import json,sys; d=json.load(sys.stdin); print([j["id"] for j in d["items"] if j["native_id"]==sys.argv[1]][0])' "$NAT")
t_is "$(field "$JN" .source)/$(field "$JN" .name)/$(field "$JN" .owner)" \
    "cluster/native-one/root" "... with source cluster, its name and owner"
api POST "/v1/jobs/$JN/hold" '' -D "$T/hold.h" >/dev/null
t_is "$STATUS" 202 "hold of a job queued in Slurm is accepted"
RID=$(tr -d '\r' <"$T/hold.h" | awk 'tolower($1) == "x-request-id:" {print $2}')
wait_for "grep -q 'request=$RID job=$JN cluster=slurm hold sent' '$T/loomd.log'" 30
t_ok $? "the line of the hold slurmrestd carried out names its request ($RID)" ||
    t_diag "$(grep "job=$JN " "$T/loomd.log" | tail -n 5)"
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

# ---- drain and up (the pack) show in sinfo and in Loom ----------------------------------
api PUT /v1/nodes/slurm/n2/state '{"state":"drain","reason":"loom test"}' >/dev/null
t_like "$STATUS/$(jget "$BODY" .state)" "^200/drain(ed|ing)$" \
    "drain slurm/n2: the answer shows it drained"
t_like "$(sinfo -h -n n2 -o '%T %E')" "^drain(ed|ing)?.* loom test" \
    "sinfo shows n2 drained with the reason"
api PUT /v1/nodes/slurm/n2/state '{"state":"up"}' >/dev/null
wait_for 'sinfo -h -n n2 -o "%T" | grep -Eq "^idle"' 30
t_like "$(sinfo -h -n n2 -o '%T')" "^idle" "up: sinfo shows n2 idle again"

# ---- a reservation: made in Slurm by the fallback pack ------------------------------
api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .capabilities)" '["suspend", "hold", "node_state", "reserve"]' \
    "its capabilities: slurmrestd's and the fallback pack's"
api POST /v1/reservations '{"nodes":["slurm/n3"],"duration_s":600,"purpose":"maintenance"}' >/dev/null
t_is "$STATUS" 201 "a maintenance window on slurm/n3" || t_diag "$BODY"
RV=$(jget "$BODY" .id)
wait_for 'scontrol show reservation -o "loom-r$RV" 2>/dev/null | grep -q " Nodes=n3 .*Flags=MAINT"' 30
t_like "$(scontrol show reservation -o "loom-r$RV" 2>&1)" ' Nodes=n3 .*Flags=MAINT' \
    "scontrol: loom-r$RV holds n3, a MAINT reservation"
api DELETE "/v1/reservations/$RV" >/dev/null
wait_for '! scontrol show reservation -o "loom-r$RV" 2>/dev/null | grep -q "^ReservationName=loom-r$RV "' 30
t_like "$(scontrol show reservation -o "loom-r$RV" 2>&1)" 'not found|invalid|No reservations' \
    "cancelled: loom-r$RV is gone from Slurm"
api POST /v1/reservations '{"nodes":["slurm/n4"],"duration_s":600}' >/dev/null
t_is "$STATUS" 201 "a user's reservation on slurm/n4" || t_diag "$BODY"
RU=$(jget "$BODY" .id)
wait_for 'scontrol show reservation -o "loom-r$RU" 2>/dev/null | grep -q " Nodes=n4 "' 30
submit "{\"name\":\"inside\",\"command\":[\"true\"],\"request\":{\"cluster\":\"slurm\",\"reservation\":\"$RU\",\"walltime_s\":60}}"
JR=$JOB
wait_for '[ "$(field "$JR" .state)" = completed ]' 60
t_is "$(field "$JR" .state)/$(field "$JR" .nodes.0)" completed/n4 \
    "a job inside it, submitted through slurmrestd, runs on n4"
t_like "$(scontrol show job -o "$(field "$JR" .native_id)" 2>/dev/null)" "Reservation=loom-r$RU" \
    "... in Slurm's loom-r$RU"
api DELETE "/v1/reservations/$RU" >/dev/null
wait_for '! scontrol show reservation -o "loom-r$RU" 2>/dev/null | grep -q "^ReservationName=loom-r$RU "' 30

# ---- what the operations cost, as loomd timed them --------------------------------------
curl -s "$LOOM_URL/metrics" >"$T/metrics"
for op in nodes jobs queues start cancel hold release suspend resume set_node_state reserve unreserve; do
    n=$(awk -v k="loom_adaptor_op_seconds_count{cluster=\"slurm\",op=\"$op\"}" '$1 == k { print $2 }' "$T/metrics")
    t_like "${n:-0}" '^[1-9][0-9]*$' "loomd timed the $op operation ($n calls)"
done
t_diag "$(grep -E 'loom_adaptor_op_seconds_(sum|count)\{cluster="slurm",op="(nodes|jobs|start)"' "$T/metrics")"

loomd_stop
t_is $? 0 "loomd stops with status 0"

# ---- rest_auth/local on the Unix socket ------------------------------------------
# slurmrestd takes only root and its own account on its socket, and refuses
# to run as the SlurmUser, which loomd's account is: loomd is refused, and
# says why. (Were slurmrestd loomd's own account, reads would go through it
# and whatever acts on a job through the pack, as /v1/clusters shows.)
loomd_conf <<EOF2
[cluster slurm]
adaptor = slurmrest
url = unix:$SLURM_RESTD_SOCKET
api_version = v0.0.37
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start again"
api GET /v1/clusters/slurm >/dev/null
t_like "$(jget "$BODY" .state)" '^(degraded|unreachable)$' \
    "over the socket as $LOOM_SERVICE_USER, the cluster is not up"
t_like "$(jget "$BODY" .error)" "rest_auth/local takes only root and the account slurmrestd runs as" \
    "... and its error says why"
t_is "$(py '" ".join(k + "=" + v for k, v in sorted(d["operations"].items()) if k in ("start", "cancel", "hold", "release", "nodes", "jobs"))' "$BODY")" \
    "cancel=pack slurm hold=pack slurm jobs=slurmrestd v0.0.37 nodes=slurmrestd v0.0.37 release=pack slurm start=pack slurm" \
    "rest_auth/local: reads through slurmrestd, the operations on jobs through the pack"
t_is "$(jget "$BODY" .runs_as_user)" true "the cluster runs each job as its account"
api GET "/v1/jobs/$J" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)" "failed/3" \
    "the jobs of the first run are still known"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
