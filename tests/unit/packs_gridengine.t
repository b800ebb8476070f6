#!/usr/bin/env bash
# packs_gridengine.t - the Grid Engine pack's parsers (lib/*.awk) against
# outputs recorded from a real cell (tests/fixtures/gridengine/, made by
# record.sh there): nodes, queues, jobs with the pack's job memory and
# qacct records, the reservation plan, JSON escaping, and the pack's shape.
# Parsing only: tests/integration/5001-gridengine-pack.t runs the real thing.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/gridengine
LIB=$PACK/lib
FIX=$LOOM_TOP_SRCDIR/tests/fixtures/gridengine
AWK=${LOOM_AWK:-awk}
export TZ=UTC

# pyq JSON EXPR: EXPR over d = the parsed JSON, printed (strings raw, other
# values as JSON); "INVALID: ..." when it is not JSON.
pyq() {
    printf '%s' "$1" | python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
except ValueError as e:
    print("INVALID: %s" % e)
    sys.exit(0)
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r, sort_keys=True))' "$2"
}

# job ANSWER ID KEYS...: the given keys of item ID, as a JSON list.
job() {
    local a=$1 id=$2
    shift 2
    pyq "$a" "[[j.get(k, 'MISSING') for k in [$(printf '"%s",' "$@")]] for j in d['items'] if j['native_id'] == '$id']"
}

# nodes_awk FILE [AWK OPTIONS...]
nodes_awk() {
    local f=$1
    shift
    "$AWK" -v queue=all.q "$@" -f "$LIB/common.awk" -f "$LIB/nodes.awk" "$f"
}

jobs_awk() {
    "$AWK" -v qacct= -v newstate="$T/jobs.new" "$@" -f "$LIB/common.awk" \
        -f "$LIB/jobs.awk" "$FIX/qstat-gt.xml"
}

# ---- pack shape -------------------------------------------------------------
OPS=$(pyq "$(cat "$PACK/pack.json")" '" ".join(d["ops"])')
t_is "$(pyq "$(cat "$PACK/pack.json")" '[d["protocol"], d["name"], d["model"], len(d["ops"])]')" \
    '[1, "gridengine", "execution-queue", 12]' "pack.json: protocol 1, execution-queue, 12 ops"
read -r -a OPA <<<"$OPS"
OPF=("${OPA[@]/#/$PACK/}")
bad=
for op in $OPS; do
    [ -x "$PACK/$op" ] || bad="$bad $op(not executable)"
    sh -n "$PACK/$op" 2>/dev/null || bad="$bad $op(sh -n)"
    head -n 1 "$PACK/$op" | grep -qx '#!/bin/sh' || bad="$bad $op(not #!/bin/sh)"
done
t_is "${bad:-none}" none "every op is an executable POSIX sh script"
if command -v checkbashisms >/dev/null 2>&1; then
    t_is "$(checkbashisms "${OPF[@]}" "$PACK/lib/ge.sh" 2>&1)" "" "checkbashisms finds nothing"
else
    t_skip "checkbashisms finds nothing" "optional: checkbashisms is not installed"
fi
t_is "$(grep -lE 'python|jq |(strftime|systime|mktime|gensub|asorti?|patsplit|strtonum)\(' "${OPF[@]}" "$LIB"/* | tr '\n' ' ')" "" \
    "no python, jq or gawk extensions in the pack"

# ---- nodes --------------------------------------------------------------------
A=$(nodes_awk "$FIX/qhost-q.xml")
t_is "$(pyq "$A" '[n["name"] for n in d["items"]]')" '["node1", "node2", "vm"]' \
    "nodes: one per exec host, 'global' skipped"
t_is "$(pyq "$A" '[[n["name"], n["state"], n["cpus"], n["cpus_alloc"], n["memory_mb"], n["queues"]] for n in d["items"]]')" \
    '[["node1", "mixed", 4, 2, 24064, ["all.q"]], ["node2", "draining", 4, 1, 24064, ["all.q"]], ["vm", "mixed", 4, 1, 24064, ["all.q"]]]' \
    "nodes: slots as cpus, slots used, mem_total, queues; disabled with a job = draining"
t_is "$(pyq "$A" 'd["items"][1]["reason"]')" "queue instances disabled" \
    "a disabled host without a recorded reason says so"
t_is "$(pyq "$A" 'sorted(d["items"][0].keys())')" \
    '["cpus", "cpus_alloc", "features", "gpus", "memory_alloc_mb", "memory_mb", "name", "queues", "reason", "state"]' \
    "nodes: every field of the protocol"

REASON='disk "sda" \ broken, see ticket #4'
printf 'node2\tdrain\t%s\n' "$REASON" >"$T/reasons"
A=$(nodes_awk "$FIX/qhost-q.xml" -v reasons="$T/reasons")
t_is "$(pyq "$A" 'd["items"][1]["reason"]')" "$REASON" \
    "the drain reason comes back, quotes and backslash escaped in JSON"
printf 'node2\tdown\tpower supply\n' >"$T/reasons"
t_is "$(pyq "$(nodes_awk "$FIX/qhost-q.xml" -v reasons="$T/reasons")" '[d["items"][1]["state"], d["items"][1]["reason"]]')" \
    '["down", "power supply"]' "a host set down shows down"

sed "s#name='state_string'>d<#name='state_string'><#" "$FIX/qhost-q.xml" >"$T/qhost-open.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-open.xml" -v reasons="$T/reasons")" '[d["items"][1]["state"], d["items"][1]["reason"]]')" \
    '["mixed", null]' "a recorded reason is not shown once the host is enabled again"

A=$(nodes_awk "$FIX/qhost-q-down.xml")
t_is "$(pyq "$A" '[[n["name"], n["state"]] for n in d["items"]]')" \
    '[["node1", "down"], ["node2", "draining"], ["vm", "mixed"]]' \
    "an exec host that stopped reporting (state u) is down"
sed "s#<hostvalue name='load_avg'>-<#<hostvalue name='load_avg'>0.5<#" \
    "$FIX/qhost-q-down.xml" >"$T/qhost-u.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-u.xml")" 'd["items"][0]["state"]')" down \
    "state u alone (a load value left) is down too"
sed "s#name='state_string'>u<#name='state_string'>E<#; s#<hostvalue name='load_avg'>-<#<hostvalue name='load_avg'>0.5<#" \
    "$FIX/qhost-q-down.xml" >"$T/qhost-e.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-e.xml")" 'd["items"][0]["state"]')" unknown \
    "a queue instance in error state (E) is unknown"
sed "s#name='slots_used'>[0-9]*<#name='slots_used'>0<#; s#name='state_string'>d<#name='state_string'><#" \
    "$FIX/qhost-q.xml" >"$T/qhost-idle.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-idle.xml")" '[n["state"] for n in d["items"]]')" \
    '["idle", "idle", "idle"]' "no slot used: idle"
sed "s#name='slots_used'>[0-9]*<#name='slots_used'>4<#" "$T/qhost-idle.xml" >"$T/qhost-full.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-full.xml")" '[n["state"] for n in d["items"]]')" \
    '["allocated", "allocated", "allocated"]' "every slot used: allocated"
t_is "$(pyq "$(printf '<qhost>\n</qhost>\n' | nodes_awk -)" 'd')" '{"items": []}' \
    "no exec host: an empty list"

# ---- queues ---------------------------------------------------------------------
awk '$1 == "qname" { q = $2 } $1 == "h_rt" { sub(/,.*/, "", $2); print q "\t" $2 }' \
    "$FIX/qconf-sq.txt" >"$T/limits"
A=$(nodes_awk "$FIX/qhost-q.xml" -v mode=queues -v limits="$T/limits")
t_is "$(pyq "$A" 'd["items"]')" '[{"max_walltime_s": null, "name": "all.q", "nodes": 3, "state": "open"}]' \
    "queues: all.q open on 3 hosts, h_rt INFINITY = no limit"
printf 'all.q\t1:30:00\n' >"$T/limits"
sed "s#name='state_string'>[a-z]*<#name='state_string'>d<#" "$FIX/qhost-q.xml" >"$T/qhost-closed.xml"
t_is "$(pyq "$(nodes_awk "$T/qhost-closed.xml" -v mode=queues -v limits="$T/limits")" \
    '[d["items"][0]["state"], d["items"][0]["max_walltime_s"]]')" '["closed", 5400]' \
    "every instance disabled: closed; h_rt 1:30:00 = 5400 s"

# ---- jobs: what qstat shows -------------------------------------------------------------
A=$(jobs_awk)
t_is "$(pyq "$A" '[d["complete"], [j["native_id"] for j in d["items"]]]')" \
    '[true, ["2", "3", "1", "4", "6", "5"]]' "jobs: complete, every live job once (the 2-host job too)"
t_is "$(job "$A" 2 state nodes loom_id start_time)" \
    '[["running", ["node1", "node2"], null, "2026-11-21T22:46:52Z"]]' \
    "a job on two hosts: running on both, master first; a native job has loom_id null"
t_is "$(job "$A" 3 name loom_id state)" '[["loom-42", "42", "suspended"]]' \
    "loom-<id> carries the Loom id; qmod -sj'd job is suspended"
t_is "$(job "$A" 1 name)" "[[\"a\\\"b'c&d<e>\"]]" \
    "a name with quotes, & and < (Grid Engine writes %lt;) comes back exactly"
t_is "$(job "$A" 4 state submit_time nodes)" '[["pending", "2026-11-21T22:46:51Z", []]]' "qw: pending"
t_is "$(job "$A" 5 state reason)" '[["held", "held (hqw)"]]' "hqw: held"
t_like "$(job "$A" 6 state reason)" '^\[\["held", "error state Eqw \(see qstat -j 6' \
    "Eqw: held, with the error state as the reason"
t_is "$(job "$A" 5 request)" '[[{"cpus_per_node": 1, "nodes": 1}]]' \
    "hqw: held by its user, so offered to Loom with its size (1 slot)"
t_is "$(pyq "$A" '[j["native_id"] for j in d["items"] if "request" in j]')" '["5"]' \
    "no other job carries a request (not the Eqw one)"
t_is "$(pyq "$A" 'sorted(d["items"][0].keys())')" \
    '["end_time", "exit_code", "loom_id", "name", "native_id", "nodes", "owner", "reason", "start_time", "state", "stderr", "stdout", "submit_time", "usage"]' \
    "jobs: every field of the protocol"
t_is "$(cut -f 1-4 "$T/jobs.new" | tr '\t\n' ' |')" \
    'J 2  running|J 3 42 suspended|J 1  running|J 4  pending|J 6  held|J 5  held|' \
    "the pack remembers each job it saw"

# ---- jobs: what left qstat ---------------------------------------------------------------
NOW=$(date +%s)
{
    printf 'J\t7\t\trunning\tthree\troot\tvm\t\t2026-11-21T22:46:51Z\t\t\t\t\t0\n'
    printf 'J\t8\t\trunning\tkilled\troot\tnode2\t\t\t\t\t\t\t0\n'
    printf 'C\t8\n'
    printf 'J\t9\t9\trunning\tloom-9\troot\tvm\t\t\t\t\t\t%s\t0\n' $((NOW - 100))
    printf 'J\t10\t10\trunning\tloom-10\troot\tvm\t\t\t\t\t\t\t0\n'
    printf 'J\t11\t11\tpending\tloom-11\troot\tvm\t\t\t\t\t\t\t0\n'
    printf 'C\t11\n'
    printf 'J\t12\t\tcompleted\tdone\troot\tvm\t\t\t\t0\t\t\t2\n'
    printf 'J\t13\t\tpending\tnever\troot\t\t\t\t\t\t\t\t0\n'
    printf 'C\t99\n'
} >"$T/state"
A=$(jobs_awk -v state="$T/state" -v acct="$FIX/qacct.txt" -v grace=30)
t_is "$(pyq "$A" '[j["native_id"] for j in d["items"]]')" \
    '["2", "3", "1", "4", "6", "5", "7", "8", "9", "10", "11", "12", "13"]' \
    "jobs that left qstat are listed after the live ones"
t_is "$(job "$A" 7 state exit_code reason start_time end_time)" \
    '[["failed", 3, "exit status 3", "2026-11-21T22:46:51Z", "2026-11-21T22:46:51Z"]]' \
    "exit 3 in the accounting record: failed with exit_code 3"
t_is "$(job "$A" 7 usage)" \
    '[[{"max_rss_kb": 4892, "system_cpu_ms": 6, "user_cpu_ms": 7}]]' \
    "its usage from the record: ru_utime, ru_stime in ms, ru_maxrss 4.777KB as 4892 KiB"
t_is "$(job "$A" 10 usage)" '[[null]]' "a job still running has no usage"
t_is "$(job "$A" 8 state exit_code)" '[["cancelled", 137]]' \
    "a job Loom cancelled (killed, 137) is cancelled"
t_is "$(job "$A" 9 state exit_code reason)" '[["failed", null, "ended without an accounting record"]]' \
    "no accounting record after the grace time: failed, exit code unknown"
t_is "$(job "$A" 10 state)" '[["running"]]' \
    "no accounting record yet: still shown as last seen"
t_is "$(job "$A" 11 state)" '[["cancelled"]]' "a pending job Loom cancelled: cancelled"
t_is "$(job "$A" 12 state)" '[["completed"]]' "a finished job is shown again until its count runs out"
t_is "$(job "$A" 13 state)" '[["pending"]]' "a pending job that vanished waits for the grace time too"
t_is "$(awk -F '\t' '$1 == "J" && $2 >= 7 { print $2 ":" $4 ":" $14 }' "$T/jobs.new" | tr '\n' ' ')" \
    '7:failed:1 8:cancelled:1 9:failed:1 10:running:0 11:cancelled:1 13:pending:0 ' \
    "the memory keeps finished jobs with their count, drops the one shown 3 times"
t_is "$(awk -F '\t' '$1 == "C" { print $2 }' "$T/jobs.new" | tr '\n' ' ')" '8 11 ' \
    "cancel marks are kept only for jobs still remembered"
t_like "$(awk -F '\t' '$2 == 10 { print $13 }' "$T/jobs.new")" '^[0-9]+$' \
    "a job waiting for its record remembers since when"
cp "$T/jobs.new" "$T/state2"
printf '<job_info>\n</job_info>\n' >"$T/empty.xml"
A=$("$AWK" -v qacct= -v acct="$FIX/qacct.txt" -v state="$T/state2" -v newstate="$T/jobs.new2" \
    -f "$LIB/common.awk" -f "$LIB/jobs.awk" "$T/empty.xml")
t_is "$(job "$A" 7 state exit_code)" '[["failed", 3]]' "a second answer shows the ended job again"
t_is "$(job "$A" 7 usage)" \
    '[[{"max_rss_kb": 4892, "system_cpu_ms": 6, "user_cpu_ms": 7}]]' \
    "with its usage, from the pack's memory"
t_is "$(job "$A" 2 state)" '[["running"]]' \
    "a job that left qstat without a record yet is shown as last seen"
t_is "$(pyq "$A" 'd["complete"]')" true "still a complete answer"

# ---- reservation plan --------------------------------------------------------------
plan() {
    "$AWK" -v q=all.q "$@" -f "$LIB/common.awk" -f "$LIB/reserve.awk" "$FIX/qhost-q.xml"
}
S=$((NOW + 3600))
E=$((NOW + 7200))
t_is "$(plan -v nodes=node1,node2 -v start=$S -v end=$E -v name='loom-r5')" \
    "all.q@node1,all.q@node2 8 $(date -u -d "@$S" +%Y%m%d%H%M.%S) $(date -u -d "@$E" +%Y%m%d%H%M.%S) loom-r5" \
    "reserve: every slot of the hosts' instances, qrsub times in UTC"
t_is "$(plan -v nodes=vm -v start=$((NOW - 5)) -v end=$E -v name='maint 7/x')" \
    "all.q@vm 4 - $(date -u -d "@$E" +%Y%m%d%H%M.%S) maint_7_x" \
    "a start in the past means now; the name loses what Grid Engine refuses"
t_is "$(plan -v nodes=vm,nohost -v start=$S -v end=$E -v name=x)" \
    "error: node nohost has no instance of queue all.q" "an unknown node is refused"
t_is "$(plan -v nodes=vm -v start=$S -v end=$((NOW - 1)) -v name=x)" \
    "error: the reservation ends in the past" "a window in the past is refused"
got=$(printf '0\n951782400\n1795300801\n4102444799\n' >"$T/times"
    printf '{ print qrtime($1) }\n' >"$T/q.awk"
    "$AWK" -f "$LIB/common.awk" -f "$T/q.awk" "$T/times" | tr '\n' ' ')
want=$(for t in 0 951782400 1795300801 4102444799; do date -u -d "@$t" +%Y%m%d%H%M.%S; done | tr '\n' ' ')
t_is "$got" "$want" "epoch to qrsub time (1970, a leap day, 2026, 2099)"

# ---- JSON strings -------------------------------------------------------------------
printf '{ print jstr($0) }\n' >"$T/j.awk"
printf 'plain\nq"uote\nback\\slash\ttab\nctl\001\037end\nutf8 é ✓\n' >"$T/strings"
"$AWK" -f "$LIB/common.awk" -f "$T/j.awk" "$T/strings" >"$T/strings.json"
t_is "$(python3 -c 'import json, sys
print(json.dumps([json.loads(l) for l in open(sys.argv[1])] == open(sys.argv[2]).read().splitlines()))' \
    "$T/strings.json" "$T/strings" 2>&1)" true \
    "jstr: quotes, backslash, tab and control characters round-trip through JSON"
t_done
