#!/usr/bin/env bash
# packs_pbs.t - the pbs pack's parsers and command lines, on recorded output.
# SPDX-License-Identifier: MIT
#
# The PBS commands are stand-ins from tests/fixtures/pbs/bin that replay
# recorded output (tests/fixtures/pbs/{torque,openpbs,slurm}): Torque's and
# OpenPBS's written from their manuals, the Slurm wrappers' captured from
# them. This tests parsing and the command lines the pack builds, never a
# live system (tests/integration/3101-pbs-torque-wrappers.t runs the pack
# against Slurm's real wrappers). Each op runs as loomd runs it: env -i,
# PATH=/usr/local/bin:/usr/bin:/bin, the env.* settings, LOOM_*. With
# LOOM_AWK set (e.g. to "gawk --posix"), the packs run their parsers with it.

if [ -z "${LOOM_TOP_SRCDIR:-}" ]; then
    LOOM_TOP_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
PACK_NAME=pbs
PACK_CLUSTER=pbs-a
. "$LOOM_TOP_SRCDIR/tests/lib/packs.sh" # op, proj, pyq, json_ok, start_env...

# --- the pack itself --------------------------------------------------------

pack_manifest_ok
t_is "$(manifest model)" execution-queue \
    "pack.json: the execution-queue model (qsub -h, then qrun -H)"
t_is "$(manifest ops)" \
    "nodes jobs queues start cancel set-node-state suspend resume hold release" \
    "pack.json: no reserve (Torque has none; README says how OpenPBS sites add it)"
pack_files_ok

# --- Torque -----------------------------------------------------------------

op torque nodes
json_ok "torque nodes"
F='state cpus cpus_alloc memory_mb gpus features reason'
t_is "$(proj node01 $F)" '["idle", 16, 0, 64394, 0, ["batch", "fast"], null]' \
    "torque nodes: free, no jobs -> idle; np, physmem, properties"
t_is "$(proj node02 $F)" '["mixed", 16, 4, 64394, 0, ["batch"], null]' \
    "torque nodes: free with jobs 0-3/... -> mixed, 4 cpus in use"
t_is "$(proj node03 $F)" '["allocated", 16, 16, 64394, 0, ["batch"], null]' \
    "torque nodes: job-exclusive -> allocated"
t_is "$(proj node04 state reason)" '["drained", "replace disk \"sda\"; ticket C:\\tickets\\42"]' \
    "torque nodes: offline -> drained; the note, quotes and backslash intact"
t_is "$(proj node05 state cpus_alloc reason)" '["draining", 16, "loom: drain for firmware update"]' \
    "torque nodes: offline,job-exclusive -> draining"
t_is "$(proj node06 state reason)" '["down", "down"]' "torque nodes: down (the state as reason)"
t_is "$(proj node07 state reason)" '["down", "PSU failed"]' "torque nodes: down,offline -> down"
t_is "$(proj node08 state cpus)" '["unknown", 8]' "torque nodes: state-unknown -> unknown"
t_is "$(proj gpu01 state cpus gpus memory_mb features)" '["idle", 32, 2, 516096, ["gpu", "bigmem"]]' \
    "torque nodes: gpus"

op torque jobs
json_ok "torque jobs"
t_is "$(pyq 'd["complete"]')" true "torque jobs: complete"
t_is "$(pyq 'len(d["items"])')" 12 "torque jobs: all 12 jobs"
F='loom_id state nodes submit_time start_time end_time exit_code'
t_is "$(proj 1234.torque-server.example.com $F name owner stdout stderr)" \
    '["17", "running", ["node02"], 1795291082, 1795291200, null, null, "loom-17", "alice", "/shared/loom/clusters/pbs-a/jobs/17/stdout", "/shared/loom/clusters/pbs-a/jobs/17/stderr"]' \
    "torque jobs: R, loom-17, ctime/start_time, folded Output_Path joined, host: cut"
t_is "$(proj 1235.torque-server.example.com loom_id state nodes owner)" \
    '[null, "running", ["node03"], "bob"]' "torque jobs: a job not from Loom has no loom_id"
t_is "$(proj 1237.torque-server.example.com $F reason)" \
    '["19", "pending", [], 1795291140, null, null, null, "Not Running: Not enough of the right type of nodes are available"]' \
    "torque jobs: Q -> pending, with the comment as reason"
t_is "$(proj 1238.torque-server.example.com loom_id state)" '["20", "held"]' "torque jobs: H -> held"
t_is "$(proj 1239.torque-server.example.com $F)" \
    '["21", "completed", ["node01", "node04"], 1795290600, 1795291200, 1795291500, 0]' \
    "torque jobs: C, exit 0 -> completed; two hosts; comp_time"
t_is "$(proj 1240.torque-server.example.com state submit_time start_time end_time exit_code)" \
    '["failed", 1793523600, 1793523605, 1793523609, 1]' \
    "torque jobs: C, exit 1 -> failed; \"Sun Nov  1\" (ctime's padded day) read"
t_is "$(proj 1241.torque-server.example.com state exit_code)" '["failed", 143]' \
    "torque jobs: exit_status 271 (killed by signal 15) -> failed, exit code 143"
t_is "$(proj 1242.torque-server.example.com name state stdout)" \
    '["my\"job\\x", "suspended", "/home/carol/my\"job\\x.o1242"]' \
    "torque jobs: S -> suspended; a name with a quote and a backslash"
t_is "$(proj 1243.torque-server.example.com state nodes)" '["running", ["node02"]]' \
    "torque jobs: E (exiting) -> running"
t_is "$(proj 1244.torque-server.example.com state exit_code)" '["cancelled", null]' \
    "torque jobs: C that never ran, no exit status -> cancelled"
t_is "$(proj 1245.torque-server.example.com state)" '["pending"]' "torque jobs: W -> pending"

printf '1241.torque-server.example.com\n9999.gone\n' >"$STATE/pbs-cancelled"
op torque jobs
t_is "$(proj 1241.torque-server.example.com state exit_code)" '["cancelled", 143]' \
    "torque jobs: a job this pack cancelled (exit 271) -> cancelled"
t_is "$(cat "$STATE/pbs-cancelled")" 1241.torque-server.example.com \
    "torque jobs: cancelled ids no longer listed are forgotten"
rm -f "$STATE/pbs-cancelled"

op torque queues
json_ok "torque queues"
t_is "$(pyq 'd["items"]')" '[{"name": "batch", "state": "open", "nodes": 9, "max_walltime_s": 172800}, {"name": "long", "state": "closed", "nodes": 4, "max_walltime_s": 604800}, {"name": "route", "state": "closed", "nodes": 9, "max_walltime_s": null}]' \
    "torque queues: enabled+started -> open; nodect or all nodes; 48:00:00 and 7:00:00:00"

op torque jobs
t_like "$(logged)" $'^qstat \\[--version\\]\nqstat \\[-f\\]$' \
    "torque: auto flavor asks qstat --version, then qstat -f (no -x)"

# --- OpenPBS ----------------------------------------------------------------

op openpbs nodes
json_ok "openpbs nodes"
F='state cpus cpus_alloc memory_mb memory_alloc_mb gpus gpus_alloc queues reason'
t_is "$(proj node01 $F)" '["idle", 8, 0, 15936, 0, 0, 0, [], null]' \
    "openpbs nodes: resources_available/assigned"
t_is "$(proj node02 state cpus_alloc memory_alloc_mb)" '["mixed", 2, 100]' \
    "openpbs nodes: free with ncpus assigned -> mixed"
t_is "$(proj node03 state cpus_alloc)" '["allocated", 8]' "openpbs nodes: job-busy -> allocated"
t_is "$(proj node04 state reason)" '["drained", "swap \"sda\" (ticket \\\\srv\\ops\\42)"]' \
    "openpbs nodes: offline -> drained, the comment as reason"
t_is "$(proj node05 state cpus_alloc)" '["draining", 4]' \
    "openpbs nodes: offline with jobs -> draining"
t_is "$(proj node06 state reason)" '["down", "node down: communication closed"]' "openpbs nodes: down"
t_is "$(proj node07 state)" '["down"]' "openpbs nodes: state-unknown,down -> down"
t_is "$(proj node08 state)" '["maint"]' "openpbs nodes: maintenance -> maint"
t_is "$(proj node09 state)" '["maint"]' "openpbs nodes: provisioning -> maint"
t_is "$(proj node10 state)" '["unknown"]' "openpbs nodes: sleep -> unknown"
t_is "$(proj gpu01 $F)" '["mixed", 32, 4, 257736, 8192, 4, 2, ["gpuq"], null]' \
    "openpbs nodes: ngpus, a queue-bound node"

op openpbs jobs
json_ok "openpbs jobs"
t_like "$(logged)" $'qstat \\[-x\\] \\[-f\\]' "openpbs jobs: auto flavor, qstat -x -f (history too)"
F='loom_id state nodes submit_time start_time end_time exit_code'
t_is "$(proj 42.pbs-server $F)" '["17", "running", ["node02", "node03"], 1795291082, 1795291200, null, null]' \
    "openpbs jobs: R on two hosts (exec_host n/0*2), ctime and stime"
t_is "$(proj 43.pbs-server state reason)" '["pending", "Not Running: Insufficient amount of resource: host "]' \
    "openpbs jobs: Q -> pending with the scheduler's comment"
t_is "$(proj 45.pbs-server state)" '["suspended"]' "openpbs jobs: S -> suspended"
t_is "$(proj 46.pbs-server state)" '["held"]' "openpbs jobs: H -> held"
t_is "$(proj 47.pbs-server $F)" '["22", "completed", ["node01"], 1795290000, 1795290002, 1795290300, 0]' \
    "openpbs jobs: F, Exit_status 0 -> completed, obittime"
t_is "$(proj 48.pbs-server state exit_code)" '["failed", 3]' "openpbs jobs: F, Exit_status 3 -> failed"
t_is "$(proj 49.pbs-server state exit_code)" '["cancelled", 143]' \
    "openpbs jobs: F, substate 91 (qdel) -> cancelled"
t_is "$(proj 50.pbs-server state)" '["running"]' "openpbs jobs: E -> running"

op openpbs queues
t_is "$(pyq 'd["items"]')" '[{"name": "workq", "state": "open", "nodes": 10, "max_walltime_s": 86400}, {"name": "gpuq", "state": "open", "nodes": 1, "max_walltime_s": null}, {"name": "loomexec", "state": "closed", "nodes": 10, "max_walltime_s": null}]' \
    "openpbs queues: nodes bound to a queue count there only"

# --- Slurm's Torque wrappers (captured output) -------------------------------

op slurm nodes
json_ok "slurm-wrappers nodes"
F='state cpus cpus_alloc memory_mb reason'
t_is "$(proj n1 $F)" '["allocated", 2, 2, 2048, null]' "wrappers nodes: job-exclusive -> allocated"
t_is "$(proj n2 state)" '["mixed"]' "wrappers nodes: mixed"
t_is "$(proj n3 $F)" '["drained", 2, 0, 2048, "loom: drain for \"bios\" update"]' \
    "wrappers nodes: offline (Slurm drained) -> drained, the note"
t_is "$(proj n4 state reason)" '["draining", "loom: drain"]' "wrappers nodes: draining"
t_is "$(proj n5 state reason)" '["down", "PSU failed"]' "wrappers nodes: down"
t_is "$(proj n6 state)" '["idle"]' "wrappers nodes: free -> idle"

op slurm jobs
json_ok "slurm-wrappers jobs"
t_like "$(head -n 1 "$T/log")" '^qstat \[--version\]$' "wrappers: auto flavor (Unknown option: version)"
F='loom_id state nodes submit_time start_time end_time exit_code'
t_is "$(proj 1 $F)" '["31", "running", ["n1", "n2"], 1795301373, 1795301376, null, null]' \
    "wrappers jobs: R on two nodes; mtime is the start, ctime (a year on) ignored"
t_is "$(proj 3 state nodes)" '["cancelled", []]' "wrappers jobs: C that never ran -> cancelled"
t_is "$(proj 4 state end_time exit_code)" '["completed", 1795301376, null]' \
    "wrappers jobs: C that ran -> completed, no exit status"
t_is "$(proj 5 state)" '["completed"]' "wrappers jobs: exit 3 reads completed (the wrappers hide it)"
t_is "$(proj 6 state loom_id)" '["held", "36"]' "wrappers jobs: Q with Priority 0 -> held"
t_is "$(proj 7 state)" '["pending"]' "wrappers jobs: Q -> pending"

op slurm queues
t_is "$(pyq 'd["items"]')" '[{"name": "debug", "state": "open", "nodes": 6, "max_walltime_s": null}]' \
    "wrappers queues: resources_default.nodes is the partition's node count"

# --- start -------------------------------------------------------------------

start_env 99 node01,node04 2 100 1 600
op torque start 99
t_is "$RC/$OUT" '0/{"native_id":"1250.torque-server.example.com"}' "torque start: the new job's id"
t_is "$(grep -E '^(loom-runas|qsub|qrun|qrls|qmove)' "$T/log")" \
    "loom-runas [run] [alice] [-C] [$STATE/jobs/99] [-t] [30]
qsub [-h] [-N] [loom-99] [-o] [$STATE/jobs/99/stdout] [-e] [$STATE/jobs/99/stderr] [-l] [nodes=node01:ppn=2:gpus=1+node04:ppn=2:gpus=1,mem=200mb,walltime=00:10:00] [/dev/stdin]
qrun [-H] [node01:ppn=2:gpus=1+node04:ppn=2:gpus=1] [1250.torque-server.example.com]" \
    "torque start: qsub -h -N loom-99 naming the nodes, as the job's account (loom-runas, in its directory, 30 s at most), then qrun -H on them"
t_is "$(cat "$T/keep/stdin")" "#!/bin/sh
# Loom job 99, submitted by Loom's pbs pack
cd '$STATE/jobs/99' || exit 1
f=\$(mktemp \"\${TMPDIR:-/tmp}/loom-job.XXXXXX\") || exit 1
trap 'rm -f \"\$f\"' EXIT
cat >\"\$f\" <<'LOOM_JOB_SCRIPT_99_END'
#!/bin/sh
echo hi
LOOM_JOB_SCRIPT_99_END
chmod 0700 \"\$f\" && \"\$f\"" \
    "torque start: the script qsub reads on stdin cd's to the job's directory and runs the job's script, which it carries"
printf 'sh\n' >"$T/job-out"
EXTRA+=(LOOM_JOB_STDOUT="$T/job-out" LOOM_JOB_STDERR="$T/job-out")
op torque start 99
t_like "$(grep -E '^qsub' "$T/log")" "\\[-o\\] \\[$T/job-out\\] \\[-j\\] \\[oe\\] \\[-l\\]" \
    "torque start: stdout and stderr in one file: -j oe, no -e"

start_env 99 node01 1
EXTRA+=(LOOM_FIXTURE_ENV="$T/env" LC_ALL=C.UTF-8)
rm -f "$T/env"
op torque start 99
t_is "$(grep -E '^(qstat|qsub) ' "$T/env" | sort -u)" $'qstat LC_ALL=C\nqsub LC_ALL=C.UTF-8' \
    "start: the pack's commands run with LC_ALL=C, qsub with loomd's (the job's)"

start_env 17 node09 1
op torque start 17
t_is "$RC/$OUT" '0/{"native_id":"1234.torque-server.example.com"}' \
    "torque start: Loom id 17 is there (running): that job"
t_is "$(grep -cE '^(qsub|qrun)' "$T/log")" 0 "torque start: nothing submitted or run"

start_env 20 node01 1
EXTRA+=(LOOM_PBS_EXEC_QUEUE=loomexec)
op torque start 20
t_is "$RC/$OUT" '0/{"native_id":"1238.torque-server.example.com"}' \
    "torque start: Loom id 20 is there, held: it goes on"
t_is "$(grep -E '^(qsub|qrun|qmove)' "$T/log")" \
    "qmove [loomexec] [1238.torque-server.example.com]
qrun [-H] [node01:ppn=1] [1238.torque-server.example.com]" \
    "torque start: qmove to env.LOOM_PBS_EXEC_QUEUE, qrun -H; no second qsub"

printf 'qrun *\t159\tempty.txt\tqrun-perm.err\n' >"$T/perm.map"
start_env 98 node01 1
EXTRA+=(LOOM_FIXTURE_MAP="$T/perm.map")
op torque start 98
t_is "$RC" 1 "torque start: qrun not permitted -> permanent failure"
t_like "$ERR" 'Unauthorized Request' "torque start: qrun's message"
printf 'qrun *\t15\tempty.txt\tqrun-busy.err\n' >"$T/busy.map"
start_env 98 node01 1
EXTRA+=(LOOM_FIXTURE_MAP="$T/busy.map")
op torque start 98
t_is "$RC" 75 "torque start: qrun finds the node busy -> temporary (the job stays held)"
t_like "$ERR" 'stays held' "torque start: says the job stays held"

start_env 99 node01,node04 2 100 0 3661 workq
op openpbs start 99
t_is "$RC/$OUT" '0/{"native_id":"51.pbs-server"}' "openpbs start: the new job's id"
t_is "$(grep -E '^(qsub|qrun|qrls|qhold)' "$T/log" | sed 's/ \[\/dev\/stdin\]$//')" \
    "qsub [-h] [-N] [loom-99] [-o] [$STATE/jobs/99/stdout] [-e] [$STATE/jobs/99/stderr] [-q] [workq] [-l] [select=1:host=node01:ncpus=2:mem=100mb+1:host=node04:ncpus=2:mem=100mb,place=scatter,walltime=01:01:01]
qrls [51.pbs-server]
qrun [-H] [(node01:ncpus=2:mem=100mb)+(node04:ncpus=2:mem=100mb)] [51.pbs-server]" \
    "openpbs start: qsub -h with a select naming the hosts, qrls, qrun -H with resources"
start_env 99 node01 1 0 0 0 workq
EXTRA+=(LOOM_JOB_RESERVATION=R13.pbs-server)
op openpbs start 99
t_like "$(grep '^qsub' "$T/log")" ' \[-q\] \[R13\] ' "openpbs start: inside a reservation, into its queue R13"
printf 'qrun *\t15\tempty.txt\tqrun-busy.err\n' >"$T/busy.map"
start_env 98 node01 1
EXTRA+=(LOOM_FIXTURE_MAP="$T/busy.map")
op openpbs start 98
t_is "$RC" 75 "openpbs start: qrun refused -> temporary"
t_like "$(logged)" 'qhold \[-h\] \[u\] \[51.pbs-server\]|qhold \[51.pbs-server\]' \
    "openpbs start: the released job is held again"

start_env 99 n1,n2 2 100 0 60
op slurm start 99
t_is "$RC/$OUT" '0/{"native_id":"9"}' "wrappers start: the new job's id"
t_is "$(grep -E '^(qsub|qrun|qrls)' "$T/log" | sed 's/ \[\/dev\/stdin\]$//')" \
    "qsub [-h] [-N] [loom-99] [-o] [$STATE/jobs/99/stdout] [-e] [$STATE/jobs/99/stderr] [-l] [nodes=n1+n2,mppnppn=2,mem=100mb,walltime=00:01:00]
qrls [9]" \
    "wrappers start: release mode: one -l (sbatch -w n1,n2 --ntasks-per-node=2), qrls"

start_env 97 node01 1
EXTRA+=(LOOM_PBS_RUN=release)
op torque start 97
t_is "$(grep -E '^(qsub|qrun|qrls)' "$T/log" | sed -e 's/ \[\/dev\/stdin\]$//' -e 's/^qsub .*\(\[-l\].*\)$/qsub \1/')" \
    "qsub [-l] [nodes=node01:ppn=1]
qrls [1250.torque-server.example.com]" "torque start, env.LOOM_PBS_RUN = release: qrls, no qrun"

start_env 96 node01 1
op torque start abc
t_is "$RC" 1 "start: a Loom id that is not a number -> 1"
start_env 96 '' 1
op torque start 96
t_is "$RC" 1 "start: no nodes -> 1"
start_env 96 'node01;rm' 1
op torque start 96
t_is "$RC" 1 "start: a node name with a shell metacharacter -> 1"
start_env 96 node01 1
EXTRA+=(LOOM_JOB_STDOUT="$T/a b/out")
op torque start 96
t_is "$RC" 1 "start: an output path qsub cannot take (a blank) -> 1"
EXTRA=()

# --- job and node control ----------------------------------------------------

op torque cancel 1236.torque-server.example.com
t_is "$RC/$OUT" '0/{}' "torque cancel: qdel"
t_is "$(logged | grep -v -e '--version')" 'qdel [1236.torque-server.example.com]' "torque cancel: qdel ID"
t_is "$(cat "$STATE/pbs-cancelled")" 1236.torque-server.example.com "torque cancel: noted for jobs"
rm -f "$STATE/pbs-cancelled"
op torque cancel 1299.torque-server.example.com
t_is "$RC/$OUT" '0/{}' "torque cancel: an unknown job counts as ended"
op openpbs cancel 47.pbs-server
t_is "$RC/$OUT" '0/{}' "openpbs cancel: a finished job (\"Job has finished\") succeeds"
op slurm cancel 4
t_is "$RC/$OUT" '0/{}' "wrappers cancel: qdel fails silently for a done job; qstat -f shows C"
op slurm cancel 999
t_is "$RC/$OUT" '0/{}' "wrappers cancel: qdel and qstat -f know no job 999: ended"
op torque cancel '1;reboot'
t_is "$RC" 1 "cancel: a job id with a shell metacharacter -> 1"

op torque hold 1237.torque-server.example.com
t_is "$RC/$(logged | grep -v -e '--version')" '0/qhold [-h] [u] [1237.torque-server.example.com]' "hold: qhold -h u"
op torque release 1238.torque-server.example.com
t_is "$RC/$(logged | grep -v -e '--version')" '0/qrls [-h] [u] [1238.torque-server.example.com]' "release: qrls -h u"
op torque suspend 1234.torque-server.example.com
t_is "$RC/$(logged | grep -v -e '--version')" '0/qsig [-s] [suspend] [1234.torque-server.example.com]' "torque suspend: qsig -s suspend"
op openpbs resume 45.pbs-server
t_is "$RC/$(logged | grep -v -e '--version')" '0/qsig [-s] [resume] [45.pbs-server]' "openpbs resume: qsig -s resume"
op slurm suspend 1
t_is "$RC" 2 "wrappers suspend: no qsig -> not supported (2)"

EXTRA=(LOOM_REASON='disk "sda"')
op torque set-node-state node01 drain
t_is "$RC/$(logged | grep -v -e '--version')" '0/pbsnodes [-o] [-N] [disk "sda"] [node01]' "torque drain: pbsnodes -o -N REASON"
op openpbs set-node-state node01 down
t_is "$RC/$(logged | grep -v -e '--version')" '0/pbsnodes [-o] [-C] [disk "sda"] [node01]' "openpbs down: pbsnodes -o -C REASON"
EXTRA=()
op torque set-node-state node01 drain
t_is "$(logged | grep -v -e '--version')" 'pbsnodes [-o] [-N] [loom: drain] [node01]' "drain without a reason: 'loom: drain'"
op torque set-node-state node01 up
t_is "$RC/$(logged | grep -v -e '--version')" '0/pbsnodes [-c] [-N] [] [node01]' "torque up: pbsnodes -c -N \"\""
op openpbs set-node-state node01 up
t_is "$RC/$(logged | grep -v -e '--version')" '0/pbsnodes [-r] [node01]' "openpbs up: pbsnodes -r"
op torque set-node-state node01 maybe
t_is "$RC" 1 "set-node-state: an unknown state -> 1"

# --- reservations (OpenPBS; not in pack.json) --------------------------------

EXTRA=(LOOM_RES_NAME=loom-r5 LOOM_RES_NODES=node01,node02 LOOM_RES_START=1795294800
    LOOM_RES_END=1795298400 LOOM_RES_PURPOSE=maintenance LOOM_RES_OWNER=alice)
op openpbs reserve
t_is "$RC/$OUT" '0/{"native_id":"M12.pbs-server"}' "openpbs reserve (maintenance): the id"
t_is "$(logged | grep -v -e '--version')" \
    'pbs_rsub [-N] [loom-r5] [-R] [202611212100.00] [-E] [202611212200.00] [--hosts] [node01] [node02]' \
    "openpbs reserve: pbs_rsub --hosts, local times CCYYMMDDhhmm.SS"
EXTRA+=(LOOM_RES_PURPOSE=user)
op openpbs reserve
t_is "$RC/$OUT" '0/{"native_id":"R13.pbs-server"}' "openpbs reserve (user): the id"
t_is "$(logged | grep -v -e '--version')" \
    'pbs_rsub [-N] [loom-r5] [-R] [202611212100.00] [-E] [202611212200.00] [-U] [alice] [-l] [select=1:host=node01+1:host=node02] [-l] [place=exclhost]' \
    "openpbs reserve: pbs_rsub -U -l select=host... -l place=exclhost"
op torque reserve
t_is "$RC" 2 "torque reserve: not supported (2)"
EXTRA=()
op openpbs unreserve R99.pbs-server
t_is "$RC/$OUT" '0/{}' "openpbs unreserve: an unknown reservation counts as deleted"

# --- failures ------------------------------------------------------------------

printf 'qstat -f\t1\tempty.txt\tdown.err\npbsnodes -a\t1\tempty.txt\tdown.err\nqhold *\t1\tempty.txt\tdown.err\n' >"$T/down.map"
EXTRA=(LOOM_FIXTURE_MAP="$T/down.map")
op torque jobs
t_is "$RC" 75 "jobs: pbs_server unreachable -> 75"
t_like "$(head -n 1 <<<"$ERR")" '^qstat -f failed \(status 1\): Communication failure' \
    "jobs: the first line of stderr says what failed"
op torque nodes
t_is "$RC" 75 "nodes: pbs_server unreachable -> 75"
op torque hold 1237.torque-server.example.com
t_is "$RC" 75 "hold: pbs_server unreachable -> 75"
EXTRA=()
mkdir -p "$T/empty"
OUT=$(cd "$STATE" && env -i PATH=/usr/bin:/bin LOOM_PBS_BIN="$T/empty" \
    LOOM_STATE_DIR="$STATE" "$PACK/nodes" </dev/null 2>"$T/err")
RC=$?
t_is "$RC" 1 "nodes: no pbsnodes -> 1"
t_like "$(cat "$T/err")" 'env.LOOM_PBS_BIN' "nodes: the message says to set env.LOOM_PBS_BIN"
EXTRA=(LOOM_PBS_FLAVOR=pbspro)
op torque jobs
t_is "$RC" 1 "env.LOOM_PBS_FLAVOR not known -> 1"
EXTRA=()

# --- escaping: control characters and bytes that are not UTF-8 ----------------

{
    printf 'Job Id: 7.srv\n    Job_Name = tab\there "q" \\b\\\n'
    printf '    Job_Owner = \xe9ric@host\n    job_state = Q\n'
    printf '    comment = bell\a and \xc3\xa9t\xc3\xa9 ok, bad \xc3( \xed\xa0\x80 end\n\n'
} >"$T/odd.txt"
printf 'qstat -f\t0\todd.txt\n' >"$T/odd.map"
EXTRA=(LOOM_FIXTURE_MAP="$T/odd.map")
op torque jobs
EXTRA=()
json_ok "jobs with odd bytes"
t_is "$(proj 7.srv name owner state)" '["tab\there \"q\" \\b\\", "\ufffdric", "pending"]' \
    "escaping: tab, quotes, backslashes; a Latin-1 byte -> U+FFFD"
t_is "$(python3 -c 'import json,sys; print(ascii(json.loads(sys.argv[1])["items"][0]["reason"]))' "$OUT")" \
    "'bell\\x07 and \\xe9t\\xe9 ok, bad \\ufffd( \\ufffd\\ufffd\\ufffd end'" \
    "escaping: a control character; valid UTF-8 kept, a bad sequence and a surrogate replaced"

t_done
