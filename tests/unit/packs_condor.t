#!/usr/bin/env bash
# packs_condor.t - the condor pack's parsers and command lines, on recorded
# output.
# SPDX-License-Identifier: MIT
#
# The HTCondor tools are stand-ins from tests/fixtures/condor/bin that
# replay recorded output (tests/fixtures/condor/htcondor23), written from
# the HTCondor 23 manual: no HTCondor runs here. This tests parsing and the
# command lines the pack builds, never a live system. Each op runs as loomd
# runs it: env -i, PATH=/usr/local/bin:/usr/bin:/bin, the env.* settings,
# LOOM_*. With LOOM_AWK set (e.g. to "gawk --posix"), the packs run their
# parsers with it.

if [ -z "${LOOM_TOP_SRCDIR:-}" ]; then
    LOOM_TOP_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
PACK_NAME=condor
PACK_CLUSTER=htc
. "$LOOM_TOP_SRCDIR/tests/lib/packs.sh" # op, proj, pyq, json_ok, start_env...

# --- the pack itself --------------------------------------------------------

pack_manifest_ok
t_is "$(manifest model)" disabled-scheduler \
    "pack.json: the disabled-scheduler model (requirements name the machine)"
t_is "$(manifest ops)" \
    "nodes jobs queues start cancel set-node-state suspend resume hold release" \
    "pack.json: no reserve (HTCondor has no reservations)"
pack_files_ok


AF='-af:t Name Machine State Activity SlotType Cpus TotalSlotCpus Memory TotalSlotMemory Gpus TotalSlotGpus DrainReason'
JA='[ClusterId] [ProcId] [JobStatus] [Owner] [LoomId] [QDate] [JobStartDate] [JobCurrentStartDate] [CompletionDate] [EnteredCurrentStatus] [ExitCode] [ExitBySignal] [ExitSignal] [RemoteHost] [LastRemoteHost] [Out] [Err] [JobBatchName] [Cmd] [ifThenElse(JobStatus == 5, HoldReason, RemoveReason)]'

# --- nodes ---------------------------------------------------------------------

printf 'node9.example.com\t8\t32000\t0\n' >"$STATE/condor-nodes"
op htcondor23 nodes
json_ok "nodes"
t_is "$(logged)" "condor_status $(sed 's/ \([^ ]*\)/ [\1]/g; s/^\([^ ]*\)/[\1]/' <<<"$AF")" \
    "nodes: condor_status -af:t (the slot attributes)"
t_is "$(pyq '[n["name"] for n in d["items"]]')" \
    '["node1.example.com", "node2.example.com", "node3.example.com", "node4.example.com", "node5.example.com", "node6.example.com", "node7.example.com", "node8.example.com", "gpu1.example.com", "node9.example.com"]' \
    "nodes: one per machine, in the collector's order, then the missing ones"
F='state cpus cpus_alloc memory_mb memory_alloc_mb gpus gpus_alloc queues reason'
t_is "$(proj node1.example.com $F)" '["idle", 16, 0, 64000, 0, 0, 0, ["default"], null]' \
    "nodes: a partitionable slot, all free -> idle"
t_is "$(proj node2.example.com $F)" '["mixed", 16, 4, 64000, 16000, 0, 0, ["default"], null]' \
    "nodes: 4 of 16 cpus in dynamic slots -> mixed (Total* - free)"
t_is "$(proj node3.example.com state cpus_alloc)" '["allocated", 16]' "nodes: all cpus claimed -> allocated"
t_is "$(proj node4.example.com state cpus_alloc reason)" '["draining", 8, "loom: drain for \"bios\" update"]' \
    "nodes: Drained/Retiring -> draining, the drain reason"
t_is "$(proj node5.example.com state reason)" '["drained", "replace DIMM \\ A3 (ticket \"42\")"]' \
    "nodes: Drained/Idle -> drained; a backslash and quotes"
t_is "$(proj node6.example.com state reason)" '["drained", "Owner: START is false"]' "nodes: Owner -> drained"
t_is "$(proj node7.example.com $F)" '["mixed", 4, 2, 16000, 8000, 0, 0, ["default"], null]' \
    "nodes: static slots add up; Claimed ones (Busy or Idle) are in use"
t_is "$(proj node8.example.com state)" '["idle"]' "nodes: Backfill -> idle"
t_is "$(proj gpu1.example.com state cpus cpus_alloc gpus gpus_alloc)" '["mixed", 32, 8, 4, 2]' "nodes: GPUs"
t_is "$(proj node9.example.com state cpus memory_mb reason)" \
    '["down", 8, 32000, "not in the collector (startd off or unreachable)"]' \
    "nodes: a machine seen before and gone -> down"
t_is "$(cut -f 1 "$STATE/condor-nodes" | tr '\n' ' ')" \
    "node1.example.com node2.example.com node3.example.com node4.example.com node5.example.com node6.example.com node7.example.com node8.example.com gpu1.example.com node9.example.com " \
    "nodes: the machines seen are kept in the state directory"

# --- jobs ----------------------------------------------------------------------

op htcondor23 jobs
json_ok "jobs"
t_like "$(sed -n 1p "$T/log")" "^condor_q \\[-allusers\\] \\[-af:t\\] $(sed 's/[][()]/\\&/g' <<<"$JA")\$" \
    "jobs: condor_q -allusers -af:t (the job attributes, the reason last)"
t_like "$(sed -n 2p "$T/log")" '^condor_history \[-constraint\] \[EnteredCurrentStatus >= [0-9]+\] \[-af:t\]' \
    "jobs: condor_history of what left the queue lately"
cut=$(sed -n 's/.*EnteredCurrentStatus >= \([0-9]*\)\].*/\1/p' "$T/log")
t_ok "$(( $(date +%s) - 3600 - cut > 5 || cut - ($(date +%s) - 3600) > 5 ))" \
    "jobs: the history window is an hour by default"
t_is "$(pyq 'len(d["items"])')" 11 "jobs: 7 in the queue, 5 in the history, one in both"
F='loom_id state nodes submit_time start_time end_time exit_code'
t_is "$(proj 101.0 $F name owner stdout)" \
    '["17", "running", ["node2.example.com"], 1795291082, 1795291200, null, null, "loom-17", "alice", "/shared/loom/clusters/htc/jobs/17/stdout"]' \
    "jobs: Running; the machine from RemoteHost slot1_1@...; batch_name"
t_is "$(proj 102.0 loom_id state nodes)" '["19", "pending", []]' "jobs: Idle -> pending"
t_is "$(proj 103.0 state reason)" \
    '["held", "Error from slot1_2@node3.example.com: Failed to execute '"'"'/shared/loom/x \"y\"\\z'"'"': Permission denied"]' \
    "jobs: Held, its HoldReason (two lines joined; quotes, a backslash)"
t_is "$(proj 104.0 state nodes)" '["suspended", ["node3.example.com"]]' "jobs: Suspended"
t_is "$(proj 105.0 state)" '["running"]' "jobs: Transferring Output -> running"
t_is "$(proj 106.0 state end_time reason)" '["cancelled", 1795291101, "via condor_rm (by user alice)"]' \
    "jobs: Removed -> cancelled, as the history has it"
t_is "$(proj 107.3 loom_id name owner stdout)" '[null, "train", "bob", "out.3"]' \
    "jobs: a job from outside Loom: no loom_id, the command's name"
t_is "$(proj 100.0 $F)" '["16", "completed", ["node1.example.com"], 1795290000, 1795290002, 1795290300, 0]' \
    "jobs: Completed, exit 0 -> completed; LastRemoteHost, CompletionDate"
t_is "$(proj 99.0 state exit_code)" '["failed", 3]' "jobs: Completed, exit 3 -> failed"
t_is "$(proj 98.0 state exit_code)" '["failed", 137]' "jobs: ExitBySignal 9 -> failed, 128+9"
t_is "$(proj 97.0 state end_time)" '["failed", 1795280602]' \
    "jobs: removed by the walltime's periodic_remove -> failed"

printf 'condor_history *\t1\tempty.txt\tnohistory.err\n' >"$T/nohist.map"
printf '#@ test\ncondor_history: Error, the HISTORY file does not exist\n' >"$T/nohistory.err"
EXTRA=(LOOM_FIXTURE_MAP="$T/nohist.map" LOOM_CONDOR_HISTORY_S=60)
op htcondor23 jobs
t_is "$RC/$(pyq 'len(d["items"])')" 0/7 "jobs: no history file yet: the queue alone"
t_like "$(logged)" 'EnteredCurrentStatus >= ' "jobs: env.LOOM_CONDOR_HISTORY_S sets the window"
EXTRA=(LOOM_CONDOR_SCHEDD=submit2.example.com LOOM_CONDOR_POOL=cm.example.com:9618)
op htcondor23 jobs
t_like "$(logged)" '^condor_q \[-name\] \[submit2.example.com\] \[-allusers\]' "jobs: env.LOOM_CONDOR_SCHEDD -> -name"
op htcondor23 queues
t_is "$(logged)" 'condor_status [-pool] [cm.example.com:9618] [-af] [Machine]' "queues: env.LOOM_CONDOR_POOL -> -pool"
EXTRA=()

op htcondor23 queues
json_ok "queues"
t_is "$OUT" '{"items":[{"name":"default","state":"open","nodes":9,"max_walltime_s":null}]}' \
    "queues: one queue, default, every machine"

# --- start ---------------------------------------------------------------------

start_env 99 node1.example.com 4 1000 1 600
op htcondor23 start 99
t_is "$RC/$OUT" '0/{"native_id":"110.0"}' "start: cluster 110, proc 0"
t_is "$(grep -v '^condor_[qh]' "$T/log" | sed 's/\[.*\//[/')" 'condor_submit [loom-99.sub]' \
    "start: condor_submit of a description"
t_like "$(sed -n 1p "$T/log")" '^condor_q \[-allusers\] \[-constraint\] \[LoomId == 99\]' "start: looks for LoomId == 99 in the queue"
t_like "$(sed -n 2p "$T/log")" '^condor_history \[-constraint\] \[LoomId == 99\] \[-limit\] \[1\]' "start: and in the history"
t_is "$(cat "$T/keep/loom-99.sub")" "# Loom job 99, submitted by Loom's condor pack
universe = vanilla
executable = $STATE/jobs/99/job.sh
initialdir = $STATE/jobs/99
output = $STATE/jobs/99/stdout
error = $STATE/jobs/99/stderr
request_cpus = 4
request_memory = 1000
request_gpus = 1
requirements = (Machine == \"node1.example.com\")
+LoomId = 99
batch_name = loom-99
periodic_remove = (JobStatus == 2) && (time() - JobCurrentStartDate > 600)
getenv = false
queue" "start: the submit description pins the machine and carries LoomId"
start_env 17 node3.example.com 1
op htcondor23 start 17
t_is "$RC/$OUT/$(grep -c condor_submit "$T/log")" '0/{"native_id":"101.0"}/0' \
    "start: LoomId 17 is in the queue: that job"
start_env 16 node1.example.com 1
op htcondor23 start 16
t_is "$RC/$OUT/$(grep -c condor_submit "$T/log")" '0/{"native_id":"100.0"}/0' \
    "start: LoomId 16 finished (history): that job"
start_env 98 node1.example.com,node2.example.com 1
op htcondor23 start 98
t_is "$RC" 1 "start: two machines -> 1 (a vanilla job runs on one)"
t_like "$ERR" 'one machine' "start: the message says why"
start_env 97 'node1"x' 1
op htcondor23 start 97
t_is "$RC" 1 "start: a machine name with a quote -> 1"
EXTRA=()

# --- job and node control --------------------------------------------------------

op htcondor23 cancel 101.0
t_is "$RC/$OUT/$(logged)" '0/{}/condor_rm [101.0]' "cancel: condor_rm"
op htcondor23 cancel 100.0
t_is "$RC/$OUT" '0/{}' "cancel: a job no longer in the queue counts as ended"
op htcondor23 cancel 101
t_is "$RC" 1 "cancel: not cluster.proc -> 1"
op htcondor23 hold 101.0
t_is "$RC/$OUT/$(logged)" '0/{}/condor_hold [101.0]' "hold: condor_hold"
op htcondor23 hold 100.0
t_is "$RC" 1 "hold: a job no longer in the queue -> 1"
t_like "$ERR" 'not found' "hold: condor_hold's message"
op htcondor23 release 103.0
t_is "$RC/$(logged)" '0/condor_release [103.0]' "release: condor_release"
op htcondor23 suspend 101.0
t_is "$RC/$(logged)" '0/condor_suspend [101.0]' "suspend: condor_suspend"
op htcondor23 resume 104.0
t_is "$RC/$(logged)" '0/condor_continue [104.0]' "resume: condor_continue"

EXTRA=(LOOM_REASON='new "PSU"')
op htcondor23 set-node-state node1.example.com drain
t_is "$RC/$(logged)" '0/condor_drain [-graceful] [-reason] [new  PSU ] [node1.example.com]' \
    "drain: condor_drain -graceful -reason"
printf 'condor_drain -graceful -reason *\t1\tempty.txt\tcondor_drain-old.err\n' >"$T/old.map"
EXTRA+=(LOOM_FIXTURE_MAP="$T/old.map")
op htcondor23 set-node-state node1.example.com drain
t_is "$RC/$(logged)" $'0/condor_drain [-graceful] [-reason] [new  PSU ] [node1.example.com]\ncondor_drain [-graceful] [node1.example.com]' \
    "drain: an HTCondor without -reason: again without it"
EXTRA=()
op htcondor23 set-node-state node1.example.com down
t_is "$RC/$(logged)" '0/condor_off [-peaceful] [-startd] [-name] [node1.example.com]' "down: condor_off -peaceful -startd"
op htcondor23 set-node-state node1.example.com up
t_is "$RC/$(logged)" $'0/condor_drain [-cancel] [node1.example.com]\ncondor_on [-startd] [-name] [node1.example.com]' \
    "up: condor_drain -cancel, condor_on -startd"
op htcondor23 set-node-state node1.example.com gone
t_is "$RC" 1 "set-node-state: an unknown state -> 1"

# --- failures ------------------------------------------------------------------

printf 'condor_q *\t1\tempty.txt\tdown.err\ncondor_status *\t1\tempty.txt\tdown.err\ncondor_hold *\t1\tempty.txt\tdown.err\n' >"$T/down.map"
EXTRA=(LOOM_FIXTURE_MAP="$T/down.map")
op htcondor23 jobs
t_is "$RC" 75 "jobs: the schedd does not answer -> 75"
t_like "$(head -n 1 <<<"$ERR")" '^condor_q failed \(status 1\): -- Failed to fetch ads' \
    "jobs: the first line of stderr says what failed"
op htcondor23 nodes
t_is "$RC" 75 "nodes: the collector does not answer -> 75"
op htcondor23 hold 101.0
t_is "$RC" 75 "hold: the schedd does not answer -> 75"
EXTRA=()
mkdir -p "$T/empty"
OUT=$(cd "$STATE" && env -i PATH=/usr/bin:/bin LOOM_CONDOR_BIN="$T/empty" \
    LOOM_STATE_DIR="$STATE" "$PACK/queues" </dev/null 2>"$T/err")
RC=$?
t_is "$RC" 1 "queues: no condor_status -> 1"
t_like "$(cat "$T/err")" 'env.LOOM_CONDOR_BIN' "queues: the message says to set env.LOOM_CONDOR_BIN"

t_done
