#!/usr/bin/env bash
# 3002-federation.t - ONE loomd federating a real Slurm (4 nodes), a real
# Grid Engine cell (this host plus one emulated exec host) and the local
# executor: the three clusters up with their adaptor and model, the nodes
# of all three, a job pinned to each running there with its exit code and
# output coming back, jobs without a pin placed where they fit, and on Grid
# Engine (execution-queue model): the job runs in exactly the queue
# instances Loom chose, cancel, suspend/resume, hold/release of jobs queued
# in Grid Engine by qsub (source "cluster"), drain/up of a host.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

# pyq JSON EXPR: EXPR over d (the parsed JSON); strings raw, else JSON.
pyq() {
    printf '%s' "$1" | python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("INVALID")
    sys.exit(0)
try:
    r = eval(sys.argv[1])
except Exception as e:
    print("ERROR: %r" % e)
    sys.exit(0)
print(r if isinstance(r, str) else json.dumps(r))' "$2"
}
# ge_state ID: the job's state letters in qstat ("" once it is gone).
ge_state() {
    qstat -u '*' 2>/dev/null | awk -v j="$1" '$1 == j { print $5; exit }'
}
# ge_hosts ID: the hosts of the job's queue instances in qstat, sorted.
ge_hosts() {
    qstat -g t -u '*' 2>/dev/null | awk -v j="$1" '$1 == j && $8 ~ /@/ {
        sub(/^[^@]*@/, "", $8); print $8 }' | sort -u | paste -sd,
}
# ge_inst_state INSTANCE: the state column of qstat -f for all.q@HOST (""
# when it has none).
ge_inst_state() {
    qstat -f -u '*' 2>/dev/null | awk -v q="$1" '$1 == q { print (NF >= 6 ? $6 : ""); f = 1; exit }
        END { if (!f) print "MISSING" }'
}
# loom_id_of NATIVE_ID CLUSTER: the Loom id of the job a cluster knows by
# that native id ("" while Loom does not list it).
loom_id_of() {
    api GET "/v1/jobs?cluster=$2" >/dev/null
    pyq "$BODY" '" ".join(j["id"] for j in d["items"] if j["native_id"] == "'"$1"'")'
}
# sorted_nodes JOB: the job's nodes in Loom, sorted, comma-separated.
sorted_nodes() {
    job "$1"
    pyq "$BODY" '",".join(sorted(d["nodes"]))'
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
ge_available || t_bail "no Grid Engine: $GE_WHY"
slurm_start 4 || t_bail "Slurm did not start"
ge_start 1 || t_bail "Grid Engine did not start"
read -r H N1 <<<"$GE_NODES"
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
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
env.LOOM_GE_PE_MULTI = rr
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"

# ---- the fabric: three clusters, their nodes -------------------------------------
clusters() {
    api GET /v1/clusters >/dev/null
    pyq "$BODY" '" ".join("%s:%s/%s/%s/%s" % (c["name"], c["adaptor"], c["model"], c["state"], c["nodes"]) for c in d["items"])'
}
WANT="local:local/disabled-scheduler/up/2 slurm:script/disabled-scheduler/up/4 ge:script/execution-queue/up/2"
wait_for '[ "$(clusters)" = "$WANT" ]' 30
t_is "$(clusters)" "$WANT" \
    "/v1/clusters: local, slurm (disabled-scheduler) and ge (execution-queue) up"
api GET /v1/clusters/ge >/dev/null
t_is "$(jget "$BODY" .error)" null "the ge cluster reports no error"
WANT_NODES=$(printf '%s\n' local/n1 local/n2 slurm/n1 slurm/n2 slurm/n3 slurm/n4 \
    "ge/$H" "ge/$N1" | sort | paste -sd' ')
api GET /v1/nodes >/dev/null
t_is "$(pyq "$BODY" '" ".join(sorted(n["id"] for n in d["items"]))')" "$WANT_NODES" \
    "/v1/nodes lists the nodes of all three clusters"
api GET "/v1/nodes/ge/$N1" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .cpus)/$(jget "$BODY" .queues)" \
    'idle/4/["all.q"]' "ge/$N1 is idle with 4 cpus (all.q's slots) in all.q"

# ---- a job pinned to each cluster: exit code and output come back --------------
CMD='echo hello from $(hostname) job $LOOM_JOB_ID; exit 3'
submit '{"name":"x3-local","command":["/bin/sh","-c","echo hello from $LOOM_NODE job $LOOM_JOB_ID; exit 3"],"request":{"cluster":"local"}}'
JL=$JOB
submit '{"name":"x3-slurm","command":["/bin/sh","-c","echo hello from $SLURMD_NODENAME job $LOOM_JOB_ID; exit 3"],"request":{"cluster":"slurm"}}'
JS=$JOB
submit '{"name":"x3-ge","command":["/bin/sh","-c","'"$CMD"'"],"request":{"cluster":"ge"}}'
JG=$JOB
# Without a pin: 3 cpus on one node fit only Grid Engine (4 slots; Slurm's
# nodes have 2 cpus, local's 1); 3 nodes only Slurm (4 nodes; the others 2).
submit '{"name":"fit-ge","command":["/bin/sh","-c","echo $NSLOTS slots"],"request":{"cpus_per_node":3}}'
JU1=$JOB
submit '{"name":"fit-slurm","command":["true"],"request":{"nodes":3}}'
JU2=$JOB
for c in local:$JL slurm:$JS ge:$JG; do
    J=${c#*:}
    wait_for '[ "$(field "$J" .state)" = failed ]' 30
    job "$J"
    t_is "$(jget "$BODY" .cluster)/$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)" \
        "${c%%:*}/failed/3" "a ${c%%:*} job that exits 3 is recorded failed with exit code 3" ||
        t_diag "job: $BODY"
    NODE=$(jget "$BODY" .nodes.0)
    short=${NODE%%.*}
    t_like "$(cat "$(jget "$BODY" .stdout)" 2>&1)" "^hello from $short(\..*)? job $J\$" \
        "... its output comes back ($(jget "$BODY" .stdout)), from the node Loom chose ($NODE)"
done
job "$JG"
NG=$(jget "$BODY" .native_id)
NODE=$(jget "$BODY" .nodes.0)
t_like "$NG" '^[0-9]+$' "the ge job has a Grid Engine job id ($NG)"
wait_for 'qacct -j "$NG" >/dev/null 2>&1' 30
t_is "$(qacct -j "$NG" 2>/dev/null | awk '{ v[$1] = $2 } END { print v["jobname"], v["hostname"], v["exit_status"] }')" \
    "loom-$JG $NODE 3" "qacct: Grid Engine ran loom-$JG on $NODE, the host Loom chose, exit status 3"

wait_for '[ "$(field "$JU1" .state)" = completed ]' 30
t_is "$(field "$JU1" .state)/$(field "$JU1" .cluster)" "completed/ge" \
    "a 3-cpu job without a pin runs where it fits (ge)"
t_is "$(cat "$(field "$JU1" .stdout)" 2>&1)" "3 slots" "... with 3 slots of one host (PE smp)"
wait_for '[ "$(field "$JU2" .state)" = completed ]' 30
t_is "$(field "$JU2" .state)/$(field "$JU2" .cluster)/$(field "$JU2" .nodes | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" \
    "completed/slurm/3" "a 3-node job without a pin runs where it fits (slurm, 3 nodes)"

# ---- Grid Engine runs the job in exactly the queue instances Loom chose ---------
submit '{"name":"pair","command":["sleep","4"],"request":{"cluster":"ge","nodes":2}}'
J2=$JOB
wait_for '[ "$(field "$J2" .state)" = running ] && [ -n "$(ge_hosts "$(field "$J2" .native_id)")" ]' 30
N2=$(field "$J2" .native_id)
t_is "$(ge_hosts "$N2")" "$(sorted_nodes "$J2")" \
    "a 2-node ge job runs in the queue instances of both nodes Loom chose ($(sorted_nodes "$J2"))"
wait_for '[ "$(field "$J2" .state)" = completed ]' 30
t_is "$(field "$J2" .state)" completed "the 2-node ge job completes"
# The choice is Loom's: with the built-in scheduler off, start a job on the
# emulated host by hand; Grid Engine must run it in all.q@that host only.
api POST /v1/runtime/scheduler '{"enabled":false}' >/dev/null
t_is "$STATUS" 200 "the built-in scheduler is switched off"
submit '{"name":"long","command":["sleep","300"],"request":{"cluster":"ge"}}'
J4=$JOB
api POST "/v1/jobs/$J4/start" "{\"cluster\":\"ge\",\"nodes\":[\"$N1\"]}" >/dev/null
t_is "$STATUS" 202 "start job $J4 on ge/$N1 by hand: accepted" || t_diag "$BODY"
api POST /v1/runtime/scheduler '{"enabled":true}' >/dev/null
wait_for '[ "$(field "$J4" .state)" = running ] && [ "$(ge_state "$(field "$J4" .native_id)")" = r ]' 30
N4=$(field "$J4" .native_id)
t_is "$(field "$J4" .state)/$(sorted_nodes "$J4")" "running/$N1" "Loom shows it running on $N1"
t_is "$(qstat -u '*' | awk -v j="$N4" '$1 == j { print $3, $5, $8 }')" \
    "loom-$J4 r all.q@$N1" "qstat: loom-$J4 runs in all.q@$N1, the instance Loom chose"
wait_for '[ "$(api GET "/v1/nodes/ge/$N1" >/dev/null; jget "$BODY" .cpus_alloc)" = 1 ]' 30
api GET "/v1/nodes/ge/$N1" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .cpus_alloc)" "mixed/1" \
    "ge/$N1 shows the slot the job uses (mixed, 1 cpu allocated)"

# ---- suspend, resume, cancel of a running Grid Engine job -----------------------
api POST "/v1/jobs/$J4/suspend" >/dev/null
t_is "$STATUS" 202 "suspend is accepted" || t_diag "$BODY"
wait_for '[ "$(ge_state "$N4")" = s ]' 30
t_is "$(ge_state "$N4")" s "qstat shows it suspended (s)"
wait_for '[ "$(field "$J4" .state)" = suspended ]' 30
t_is "$(field "$J4" .state)" suspended "Loom shows it suspended"
api POST "/v1/jobs/$J4/resume" >/dev/null
t_is "$STATUS" 202 "resume is accepted" || t_diag "$BODY"
wait_for '[ "$(ge_state "$N4")" = r ]' 30
t_is "$(ge_state "$N4")" r "resume: qstat shows it running again (r)"
wait_for '[ "$(field "$J4" .state)" = running ]' 30
t_is "$(field "$J4" .state)" running "Loom shows it running again"
api DELETE "/v1/jobs/$J4" >/dev/null
t_is "$STATUS" 202 "cancel is accepted" || t_diag "$BODY"
wait_for '[ -z "$(ge_state "$N4")" ]' 30
t_is "$(ge_state "$N4")" "" "Grid Engine no longer has it"
wait_for '[ "$(field "$J4" .state)" = cancelled ]' 30
t_is "$(field "$J4" .state)" cancelled "the cancelled job ends cancelled in Loom"

# ---- jobs submitted with qsub: source cluster; hold and release through Loom -----
mkdir -p "$T/native"
printf '#!/bin/sh\necho native $JOB_ID ran\n' >"$T/native/job.sh"
AT=$(date -d '+1 hour' +%Y%m%d%H%M)
NA=$(cd "$T/native" && qsub -terse -N native-later -a "$AT" -o "$T/native/later.out" \
    -e /dev/null job.sh 2>&1)
NH=$(cd "$T/native" && qsub -terse -N native-held -h -o "$T/native/held.out" \
    -e /dev/null job.sh 2>&1)
t_like "$NA $NH" '^[0-9]+ [0-9]+$' "qsub: a job for in an hour ($NA) and a held one ($NH)"
wait_for '[ -n "$(loom_id_of "$NA" ge)" ] && [ -n "$(loom_id_of "$NH" ge)" ]' 30
JA=$(loom_id_of "$NA" ge)
JH=$(loom_id_of "$NH" ge)
t_is "$(field "$JA" .source)/$(field "$JA" .name)/$(field "$JA" .state)" \
    "cluster/native-later/pending" "the qsub -a job appears in /v1/jobs: source cluster, pending"
t_is "$(field "$JH" .source)/$(field "$JH" .name)/$(field "$JH" .state)" \
    "cluster/native-held/held" "the qsub -h job appears in /v1/jobs: source cluster, held"
api POST "/v1/jobs/$JA/hold" >/dev/null
t_is "$STATUS" 202 "hold of the job queued in Grid Engine is accepted: 202 (its cluster holds it)" || t_diag "$BODY"
wait_for '[ "$(ge_state "$NA")" = hqw ]' 30
t_is "$(ge_state "$NA")" hqw "qstat: Grid Engine holds it (hqw)"
wait_for '[ "$(field "$JA" .state)" = held ]' 30
t_is "$(field "$JA" .state)" held "Loom shows it held"
api POST "/v1/jobs/$JA/release" >/dev/null
t_is "$STATUS" 202 "release is accepted: 202" || t_diag "$BODY"
wait_for '[ "$(ge_state "$NA")" = qw ]' 30
t_is "$(ge_state "$NA")" qw "qstat: no longer held (qw, waiting for its start time)"
wait_for '[ "$(field "$JA" .state)" = pending ]' 30
t_is "$(field "$JA" .state)" pending "Loom shows it pending again"
api DELETE "/v1/jobs/$JA" >/dev/null
t_is "$STATUS" 202 "cancel of the qsub job through Loom is accepted: 202" || t_diag "$BODY"
wait_for '[ -z "$(ge_state "$NA")" ]' 30
t_is "$(ge_state "$NA")" "" "Grid Engine deleted it"
wait_for '[ "$(field "$JA" .state)" = cancelled ]' 30
t_is "$(field "$JA" .state)" cancelled "Loom shows it cancelled"
api POST "/v1/jobs/$JH/release" >/dev/null
t_is "$STATUS" 202 "release of the qsub -h job through Loom is accepted: 202" || t_diag "$BODY"
wait_for '[ "$(field "$JH" .state)" = completed ]' 30
t_is "$(field "$JH" .state)/$(field "$JH" .exit_code)" "completed/0" \
    "Grid Engine ran it: Loom shows it completed, exit code 0"
t_is "$(cat "$T/native/held.out" 2>&1)" "native $NH ran" "its output is there"
api GET "/v1/jobs?cluster=ge" >/dev/null
t_is "$(pyq "$BODY" '" ".join(sorted(j["name"] for j in d["items"] if j["source"] == "cluster"))')" \
    "native-held native-later" \
    "the jobs Loom placed in Grid Engine are not listed again as cluster jobs"

# ---- drain and up of a Grid Engine host ---------------------------------------------
api PUT "/v1/nodes/ge/$N1/state" '{"state":"drain","reason":"loom test"}' >/dev/null
t_is "$STATUS" 200 "drain ge/$N1" || t_diag "$BODY"
wait_for '[ "$(ge_inst_state "all.q@$N1")" = d ]' 30
t_is "$(ge_inst_state "all.q@$N1")" d "qstat -f: all.q@$N1 disabled (d)"
wait_for '[ "$(api GET "/v1/nodes/ge/$N1" >/dev/null; jget "$BODY" .state)" = drained ]' 30
api GET "/v1/nodes/ge/$N1" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" "drained/loom test" \
    "Loom shows it drained, with the reason"
submit '{"name":"not-there","command":["sleep","5"],"request":{"cluster":"ge","cpus_per_node":2}}'
J5=$JOB
wait_for '[ "$(field "$J5" .state)" = running ] && [ "$(ge_state "$(field "$J5" .native_id)")" = r ]' 30
t_is "$(field "$J5" .state)/$(sorted_nodes "$J5")" "running/$H" \
    "a new ge job is not placed on the drained host: it runs on $H"
t_is "$(ge_hosts "$(field "$J5" .native_id)")" "$H" "... and Grid Engine runs it in all.q@$H"
api PUT "/v1/nodes/ge/$N1/state" '{"state":"up"}' >/dev/null
t_is "$STATUS" 200 "up ge/$N1" || t_diag "$BODY"
wait_for '[ "$(ge_inst_state "all.q@$N1")" = "" ]' 30
t_is "$(ge_inst_state "all.q@$N1")" "" "qstat -f: all.q@$N1 enabled again"
wait_for '[ "$(api GET "/v1/nodes/ge/$N1" >/dev/null; jget "$BODY" .state)" = idle ]' 30
api GET "/v1/nodes/ge/$N1" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" "idle/null" "Loom shows it idle"

# ---- execution-queue: a job Grid Engine only queues is starting for Loom ---------
# With Grid Engine's scheduler thread stopped, the released job waits (qw)
# in the instance Loom chose; Loom must show it starting (not running, and
# never running and then starting again) until Grid Engine runs it.
qconf -kt scheduler >/dev/null 2>&1
t_ok $? "Grid Engine's scheduler thread is stopped (qconf -kt scheduler)"
submit '{"name":"queued","command":["/bin/sh","-c","echo queued ran"],"request":{"cluster":"ge"}}'
J6=$JOB
# Watched until it has a native id and the cluster has been polled for 3 s
# more (its last_poll, whole seconds; poll_s 0.5: 6 polls or so), 90 s at
# most.
ge_last_poll() {
    api GET /v1/clusters/ge >/dev/null
    epoch "$(jget "$BODY" .last_poll)"
}
SEQ= last= N6= until= end=$((SECONDS + 90))
while ((SECONDS < end)); do
    job "$J6"
    st=$(jget "$BODY" .state)
    [ "$st" = "$last" ] || SEQ="$SEQ${SEQ:+ }$st"
    last=$st
    if [ -z "$until" ] && N6=$(jget "$BODY" .native_id) && [ "$N6" != null ]; then
        lp=$(ge_last_poll)
        [[ $lp =~ ^[0-9]+$ ]] && until=$((lp + 3))
    fi
    [ -n "$until" ] && [ "$(ge_last_poll)" -ge "$until" ] 2>/dev/null && break
    sleep 0.1
done
t_ok "$([ -n "$until" ] && [ "$(ge_last_poll)" -ge "$until" ] 2>/dev/null && echo 0 || echo 1)" \
    "Loom has a native id for it ($N6) and polled Grid Engine on for 3 s"
t_is "$(ge_state "$N6")" qw "Grid Engine has the released job $N6 queued (qw), not running"
t_like "$SEQ" '^(pending )?starting$' \
    "meanwhile Loom shows it pending, then starting, never running (states seen: $SEQ)"
job "$J6"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .start_time)" "starting/null" \
    "Loom shows it starting with no start time while Grid Engine only queues it"
qconf -at scheduler >/dev/null 2>&1
t_ok $? "Grid Engine's scheduler thread runs again (qconf -at scheduler)"
wait_for '[ "$(field "$J6" .state)" = completed ]' 30
t_is "$(field "$J6" .state)/$(field "$J6" .exit_code)" "completed/0" "then Grid Engine runs it: completed"
t_is "$(cat "$(field "$J6" .stdout)" 2>&1)" "queued ran" "... with its output"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
