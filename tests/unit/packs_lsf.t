#!/usr/bin/env bash
# packs_lsf.t - the lsf pack's parsers and command lines, on recorded output.
# SPDX-License-Identifier: MIT
#
# The LSF commands are stand-ins from tests/fixtures/lsf/bin that replay
# recorded output (tests/fixtures/lsf/lsf10), written from IBM Spectrum LSF
# 10.1's command reference: no LSF runs here. This tests parsing and the
# command lines the pack builds, never a live system. Each op runs as loomd
# runs it: env -i, PATH=/usr/local/bin:/usr/bin:/bin, the env.* settings,
# LOOM_*. With LOOM_AWK set (e.g. to "gawk --posix"), the packs run their
# parsers with it.

if [ -z "${LOOM_TOP_SRCDIR:-}" ]; then
    LOOM_TOP_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
fi
PACK_NAME=lsf
PACK_CLUSTER=lsf-a
. "$LOOM_TOP_SRCDIR/tests/lib/packs.sh" # op, proj, pyq, json_ok, start_env...

# --- the pack itself --------------------------------------------------------

pack_manifest_ok
t_is "$(manifest model)" disabled-scheduler \
    "pack.json: the disabled-scheduler model (bsub -m)"
t_is "$(manifest ops)" \
    "nodes jobs queues start cancel set-node-state suspend resume hold release reserve unreserve" \
    "pack.json: every op"
pack_files_ok


# lt "Mon DD HH:MM": the epoch seconds the pack must give for an LSF time
# (no year: this year, or the last when that is more than a day ahead; UTC).
lt() {
    python3 -c '
import calendar, sys, time
now = time.time()
def at(y):
    return calendar.timegm(time.strptime("%d %s" % (y, sys.argv[1]), "%Y %b %d %H:%M"))
y = time.gmtime(now).tm_year
e = at(y)
print(e if e <= now + 86400 else at(y - 1))
' "$1"
}

# --- nodes, jobs, queues -----------------------------------------------------

op lsf10 nodes
json_ok "nodes"
t_is "$(logged)" $'bhosts [-w]\nlshosts [-w]' "nodes: bhosts -w, lshosts -w"
F='state cpus cpus_alloc memory_mb features reason'
t_is "$(proj hosta $F)" '["idle", 16, 0, 65331, ["mg", "linux"], null]' \
    "nodes: ok, no jobs -> idle; ncpus, maxmem 63.8G, RESOURCES"
t_is "$(proj hostb $F)" '["mixed", 16, 6, 65331, ["linux"], null]' "nodes: ok, 6 of 16 slots -> mixed"
t_is "$(proj hostc state cpus_alloc reason)" '["allocated", 16, "closed_Full"]' "nodes: closed_Full -> allocated"
t_is "$(proj hostd state reason)" '["drained", "closed_Adm"]' "nodes: closed_Adm, no jobs -> drained"
t_is "$(proj hoste state cpus_alloc memory_mb)" '["draining", 4, 15934]' \
    "nodes: closed_Adm with jobs -> draining; maxmem 15934M"
t_is "$(proj hostf state cpus memory_mb)" '["down", 16, 0]' \
    "nodes: unavail -> down; ncpus '-' -> MAX slots"
t_is "$(proj hostg state)" '["down"]' "nodes: unreach -> down"
t_is "$(proj hosth state)" '["allocated"]' "nodes: closed_Excl -> allocated"
t_is "$(proj hosti state)" '["allocated"]' "nodes: closed_Busy -> allocated"
t_is "$(proj hostj state)" '["down"]' "nodes: closed_LIM -> down"
t_is "$(proj hostk state features)" '["maint", ["linux", "rc_host"]]' "nodes: closed_RC -> maint"
t_is "$(proj gpu01 state cpus memory_mb)" '["mixed", 32, 257536]' "nodes: 251.5G"

op lsf10 jobs
json_ok "jobs"
t_like "$(logged)" "^bjobs \\[-o\\] \\[jobid stat user queue exit_code submit_time start_time finish_time exec_host output_file error_file job_name delimiter=';'\\] \\[-noheader\\] \\[-a\\] \\[-u\\] \\[all\\]$" \
    "jobs: bjobs -o FIELDS delimiter=';' -noheader -a -u all"
t_is "$(pyq 'd["complete"]')" true "jobs: complete"
t_is "$(pyq 'len(d["items"])')" 14 "jobs: all 14 (two array elements)"
F='loom_id state nodes submit_time start_time end_time exit_code'
t_is "$(proj 1201 $F owner stdout stderr)" \
    "[\"17\", \"running\", [\"hostb\"], $(lt 'Nov 21 19:58'), $(lt 'Nov 21 20:00'), null, null, \"alice\", \"/shared/loom/clusters/lsf-a/jobs/17/stdout\", \"/shared/loom/clusters/lsf-a/jobs/17/stderr\"]" \
    "jobs: RUN, loom-17, times without a year, the estimated finish ignored"
t_is "$(proj 1202 loom_id name state nodes stderr)" '[null, "sim;run v2", "running", ["hostc"], null]' \
    "jobs: a name holding the delimiter; '-' is null"
t_is "$(proj 1203 loom_id state nodes start_time)" '["19", "pending", [], null]' "jobs: PEND -> pending"
t_is "$(proj 1204 state)" '["held"]' "jobs: PSUSP -> held"
t_is "$(proj 1205 state nodes)" '["suspended", ["hostb"]]' "jobs: USUSP -> suspended"
t_is "$(proj 1206 state reason)" '["suspended", "SSUSP: suspended by LSF (load or run window)"]' \
    "jobs: SSUSP -> suspended, with a reason"
t_is "$(proj 1207 $F)" "[\"22\", \"completed\", [\"hosta\"], $(lt 'Nov 21 19:40'), $(lt 'Nov 21 19:40'), $(lt 'Nov 21 19:45'), 0]" \
    "jobs: DONE -> completed, exit code 0"
t_is "$(proj 1208 state exit_code)" '["failed", 3]' "jobs: EXIT 3 -> failed"
t_is "$(proj 1209 state nodes exit_code)" '["failed", ["hosta", "hostd"], 130]' \
    "jobs: EXIT 130 (killed, not by this pack) -> failed; exec_host 2*a:2*d"
t_is "$(proj '1210[1]' name state)$(proj '1210[2]' name)" '["sweep[1]", "running"]["sweep[2]"]' \
    "jobs: array elements get ids 1210[1], 1210[2]"
t_is "$(proj 1211 state reason)" '["running", "UNKWN: mbatchd lost contact with the execution host"]' \
    "jobs: UNKWN -> running, with a reason"
t_is "$(proj 1212 name state submit_time end_time)" \
    "[\"say \\\"hi\\\" \\\\o/\", \"failed\", $(lt 'Dec 30 23:50'), $(lt 'Dec 31 00:05')]" \
    "jobs: quotes and a backslash in a name; a date after today is last year's"
t_is "$(proj 1213 state)" '["pending"]' "jobs: WAIT -> pending"

printf '1209\n77\n' >"$STATE/lsf-cancelled"
op lsf10 jobs
t_is "$(proj 1209 state exit_code)" '["cancelled", 130]' "jobs: EXIT of a job this pack bkill'ed -> cancelled"
t_is "$(cat "$STATE/lsf-cancelled")" 1209 "jobs: cancelled ids no longer listed are forgotten"
rm -f "$STATE/lsf-cancelled"

printf 'bjobs *\t255\tempty.txt\tbjobs-none.err\n' >"$T/none.map"
EXTRA=(LOOM_FIXTURE_MAP="$T/none.map")
op lsf10 jobs
EXTRA=()
t_is "$RC/$OUT" '0/{"complete":true,"items":[]}' "jobs: 'No job found' is an empty list"

op lsf10 queues
json_ok "queues"
t_is "$(logged)" $'bqueues [-w]\nbqueues [-l]\nbhosts [-w]' "queues: bqueues -w, -l, bhosts -w"
t_is "$(pyq 'd["items"]')" '[{"name": "owners", "state": "open", "nodes": 2, "max_walltime_s": null}, {"name": "short", "state": "open", "nodes": 10, "max_walltime_s": 3600}, {"name": "normal", "state": "open", "nodes": 12, "max_walltime_s": 43200}, {"name": "night", "state": "closed", "nodes": 2, "max_walltime_s": null}, {"name": "idle", "state": "closed", "nodes": 12, "max_walltime_s": null}]' \
    "queues: Open:Active open, Inact/Closed closed; HOSTS all, ~excluded, a list; the maximum RUNLIMIT"

# --- start -------------------------------------------------------------------

start_env 99 hosta,hostd 4 1000 1 601 normal
op lsf10 start 99
t_is "$RC/$OUT" '0/{"native_id":"1220"}' "start: bsub's job id"
t_is "$(logged)" "bjobs [-o] [jobid stat user queue exit_code submit_time start_time finish_time exec_host output_file error_file job_name delimiter=';'] [-noheader] [-a] [-u] [all] [-J] [loom-99]
bsub [-J] [loom-99] [-m] [hosta hostd] [-n] [8] [-R] [span[ptile=4] rusage[mem=250]] [-gpu] [num=1] [-W] [11] [-q] [normal] [-cwd] [$STATE/jobs/99] [-o] [$STATE/jobs/99/stdout] [-e] [$STATE/jobs/99/stderr] [$STATE/jobs/99/job.sh]" \
    "start: bjobs -J loom-99 finds none; bsub -m the hosts, N*C slots, span[ptile=C], mem per slot, minutes rounded up"
start_env 99 hosta 1
EXTRA+=(LOOM_JOB_RESERVATION=loom-r5)
op lsf10 start 99
t_like "$(grep '^bsub' "$T/log")" ' \[-U\] \[loom-r5\] ' "start: inside a reservation, bsub -U it"
start_env 99 hosta 1
EXTRA+=(LOOM_FIXTURE_ENV="$T/env")
rm -f "$T/env"
op lsf10 start 99
t_is "$(sort -u "$T/env")" $'bjobs LC_ALL=C\nbsub LC_ALL=(unset)' \
    "start: bsub (which copies its environment into the job) without the pack's LC_ALL=C"
start_env 17 hostc 1
op lsf10 start 17
t_is "$RC/$OUT" '0/{"native_id":"1201"}' "start: Loom id 17 is there: that job"
t_is "$(grep -c '^bsub' "$T/log")" 0 "start: no second bsub"
start_env 96 'hosta b' 1
op lsf10 start 96
t_is "$RC" 0 "start: nodes separated by a comma and a blank"
t_like "$(logged)" '\[-m\] \[hosta b\] \[-n\] \[2\]' "start: -m with both hosts"
start_env 95 'hosta;x' 1
op lsf10 start 95
t_is "$RC" 1 "start: a host name with a metacharacter -> 1"
EXTRA=()

# --- job and node control ----------------------------------------------------

op lsf10 cancel 1201
t_is "$RC/$OUT/$(logged)" '0/{}/bkill [1201]' "cancel: bkill"
t_is "$(cat "$STATE/lsf-cancelled")" 1201 "cancel: noted for jobs"
rm -f "$STATE/lsf-cancelled"
op lsf10 cancel 1207
t_is "$RC/$OUT" '0/{}' "cancel: 'Job has already finished' succeeds"
op lsf10 cancel 9999
t_is "$RC/$OUT" '0/{}' "cancel: 'No matching job found' counts as ended"
op lsf10 cancel '1210[2]'
t_is "$RC/$(logged)" '0/bkill [1210[2]]' "cancel: an array element"
op lsf10 cancel 12a
t_is "$RC" 1 "cancel: not a job id -> 1"

op lsf10 hold 1203
t_is "$RC/$OUT" '0/{}' "hold: a pending job"
t_is "$(logged | sed 's/^bjobs .*\[\([0-9]*\)\]$/bjobs \1/')" $'bjobs 1203\nbstop [1203]' \
    "hold: bjobs says PEND, then bstop (-> PSUSP)"
op lsf10 hold 1204
t_is "$RC/$(grep -c bstop "$T/log")" '0/0' "hold: already PSUSP: nothing to do"
op lsf10 hold 1201
t_is "$RC" 1 "hold: a running job is refused (bstop would suspend it)"
t_like "$ERR" 'holds only pending jobs' "hold: the message says why"
op lsf10 hold 9999
t_is "$RC" 1 "hold: an unknown job -> 1"
op lsf10 release 1204
t_is "$RC/$(logged | grep -v ^bjobs)" '0/bresume [1204]' "release: PSUSP -> bresume"
op lsf10 release 1201
t_is "$RC" 1 "release: a running job is not held -> 1"
op lsf10 suspend 1201
t_is "$RC/$(logged)" '0/bstop [1201]' "suspend: bstop"
op lsf10 resume 1201
t_is "$RC/$(logged)" '0/bresume [1201]' "resume: bresume"

EXTRA=(LOOM_REASON='bios "update"')
op lsf10 set-node-state hosta drain
t_is "$RC/$(logged)" '0/badmin [hclose] [-C] [bios  update ] [hosta]' \
    "drain: badmin hclose -C REASON (no double quotes in it)"
EXTRA=()
op lsf10 set-node-state hosta down
t_is "$RC/$(logged)" '0/badmin [hclose] [-C] [loom: down] [hosta]' "down: hclose too"
op lsf10 set-node-state hostd up
t_is "$RC/$(logged)" '0/badmin [hopen] [hostd]' "up: badmin hopen"
op lsf10 set-node-state hostx drain
t_is "$RC" 1 "drain of an unknown host -> 1"
t_like "$ERR" 'Bad host name' "drain: badmin's message"

# --- reservations --------------------------------------------------------------

EXTRA=(LOOM_RES_NAME=loom-r5 LOOM_RES_NODES=hosta,hostb LOOM_RES_START=1795294800
    LOOM_RES_END=1795298400 LOOM_RES_PURPOSE=user LOOM_RES_OWNER=alice)
op lsf10 reserve
t_is "$RC/$OUT" '0/{"native_id":"loom-r5"}' "reserve (user): the id brsvadd prints"
t_is "$(logged)" "bhosts [-w] [hosta] [hostb]"$'\n'"brsvadd [-n] [32] [-m] [hosta hostb] [-u] [$(id -un)] [-b] [2026:11:21:21:00] [-e] [2026:11:21:22:00] [-N] [loom-r5]" \
    "reserve (user): all the hosts' slots, for the account bsub submits as, local year:month:day:hour:minute"
EXTRA+=(LOOM_RES_PURPOSE=maintenance)
op lsf10 reserve
t_is "$RC/$(logged)" '0/brsvadd [-s] [-m] [hosta hostb] [-b] [2026:11:21:21:00] [-e] [2026:11:21:22:00] [-N] [loom-r5]' \
    "reserve (maintenance): a system reservation"
EXTRA+=(LOOM_RES_END=1795294800)
op lsf10 reserve
t_is "$RC" 1 "reserve: an end not after the start -> 1"
EXTRA=()
op lsf10 unreserve loom-r5
t_is "$RC/$OUT/$(logged)" '0/{}/brsvdel [loom-r5]' "unreserve: brsvdel"

# --- failures ------------------------------------------------------------------

printf 'bjobs *\t255\tempty.txt\tdown.err\nbhosts *\t255\tempty.txt\tdown.err\nbstop *\t255\tempty.txt\tdown.err\n' >"$T/down.map"
EXTRA=(LOOM_FIXTURE_MAP="$T/down.map")
op lsf10 jobs
t_is "$RC" 75 "jobs: mbatchd down -> 75"
t_like "$(head -n 1 <<<"$ERR")" '^bjobs -a -u all failed \(status 255\): LSF is down' \
    "jobs: the first line of stderr says what failed"
op lsf10 nodes
t_is "$RC" 75 "nodes: mbatchd down -> 75"
op lsf10 suspend 1201
t_is "$RC" 75 "suspend: mbatchd down -> 75"
EXTRA=()
mkdir -p "$T/empty"
OUT=$(cd "$STATE" && env -i PATH=/usr/bin:/bin LOOM_LSF_BIN="$T/empty" \
    LOOM_STATE_DIR="$STATE" "$PACK/jobs" </dev/null 2>"$T/err")
RC=$?
t_is "$RC" 1 "jobs: no bjobs -> 1"
t_like "$(cat "$T/err")" 'env.LOOM_LSF_BIN' "jobs: the message says to set env.LOOM_LSF_BIN"
t_is "$(env -i PATH=/usr/bin:/bin sh -c 'PACK_DIR=$0 PACK_NAME=lsf SHARED_LIB=$0/../lib
    . "$SHARED_LIB/common.sh"; . "$0/lib/lsf.sh"; echo "$LSB_NTRIES"' "$PACK")" \
    3 "LSB_NTRIES defaults to 3: a poll does not wait for mbatchd for ever"

t_done
