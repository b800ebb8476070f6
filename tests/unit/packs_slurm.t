#!/usr/bin/env bash
# packs_slurm.t - the Slurm script pack's parsers (lib/*.awk) on outputs
# recorded from a real Slurm 22.05 (tests/fixtures/slurm/, made by
# record.sh there), hostlist expansion, JSON escaping, the error mapping,
# the pack's own shape (pack.json, one POSIX sh executable per op, no
# python or jq), and the nodes, jobs and start ops on stand-ins for sinfo,
# squeue, scontrol and sbatch that print those outputs. No daemons:
# tests/integration/4001-slurm-pack.t runs the ops against a real Slurm.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

PACK=$LOOM_TOP_SRCDIR/adaptors/scripts/slurm
LIB=$PACK/lib
FIX=$LOOM_TOP_SRCDIR/tests/fixtures/slurm

# run PROGRAM [AWK ARGS...]: a parser as the pack runs it (see jawk).
run() {
    local p=$1
    shift
    LC_ALL=C awk -f "$LIB/json.awk" -f "$LIB/hostlist.awk" -f "$LIB/$p.awk" "$@"
}

# py EXPR JSON: EXPR over the document d, printed (strings raw, else JSON).
py() {
    printf '%s' "$2" | python3 -c 'import json, sys
d = json.load(sys.stdin)
by = {i.get("name"): i for i in d.get("items", [])} if isinstance(d, dict) else {}
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r))' "$1"
}

valid_json() {
    printf '%s' "$1" | python3 -c 'import json, sys; json.load(sys.stdin)' 2>&1
}

# ---- the pack's shape -------------------------------------------------------
OPS=$(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["ops"]))' "$PACK/pack.json")
t_is "$(py '[d["protocol"], d["name"], d["model"]]' "$(cat "$PACK/pack.json")")" \
    '[1, "slurm", "disabled-scheduler"]' "pack.json: protocol 1, slurm, disabled-scheduler"
t_is "$OPS" "nodes jobs queues start cancel set-node-state suspend resume hold release reserve unreserve" \
    "pack.json lists the twelve ops"
bad=
for op in $OPS; do
    [ -f "$PACK/$op" ] && [ -x "$PACK/$op" ] || bad="$bad $op(not executable)"
    [ "$(head -n 1 "$PACK/$op")" = "#!/bin/sh" ] || bad="$bad $op(not #!/bin/sh)"
done
t_is "${bad:-none}" none "every op is an executable #!/bin/sh script"
if command -v dash >/dev/null; then
    bad= n=0
    for f in "$PACK"/* "$LIB"/*.sh; do
        [ -f "$f" ] || continue
        case $f in *.json | *.md) continue ;; esac
        n=$((n + 1))
        dash -n "$f" 2>/dev/null || bad="$bad ${f#"$PACK"/}"
    done
    t_is "${bad:-none}/$((n >= 12))" none/1 \
        "every shell file ($n, the twelve ops among them) parses with dash -n (POSIX sh)"
else
    t_skip "every shell file parses with dash -n (POSIX sh)" \
        "optional: dash is not installed"
fi
t_is "$(grep -lE '\<(python3?|jq|perl|bash|gawk)\>' "$PACK"/* "$LIB"/* 2>/dev/null |
    grep -v README.md | tr '\n' ' ')" "" "no python, jq, perl, bash or gawk in the pack"
t_is "$(grep -nE '\<(gensub|strftime|systime|asort|asorti|tolower|toupper|PROCINFO|IGNORECASE|BEGINFILE|ENDFILE|FPAT|RT)\>' "$LIB"/*.awk | tr '\n' ' ')" \
    "" "the awk programs use no gawk extension"

# formats.sh: RS and US are the bytes \036 and \037 (written as such: no
# escape in sh), and JOBS_FORMAT is JOBS_FIELDS with them.
t_is "$(. "$LIB/formats.sh"; printf '%s' "$RS$US" | od -An -c | tr -s ' ')" " 036 037" \
    "formats.sh: RS and US are the bytes 036 and 037"
fmt_want() {
    local f sep=
    printf '\036'
    for f in $JOBS_FIELDS; do
        printf "$sep%s" "$f"
        sep='\037'
    done
}
t_is "$(. "$LIB/formats.sh"; printf '%s' "$JOBS_FORMAT" | od -An -c | tr -d ' \n')" \
    "$(. "$LIB/formats.sh"; fmt_want | od -An -c | tr -d ' \n')" \
    "formats.sh: JOBS_FORMAT is \\036, then JOBS_FIELDS separated by \\037"

# ---- hostlists ----------------------------------------------------------------
HL='{ n = hl_expand($0, a); s = ""; for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") a[i]; print s; split("", a) }'
hl() {
    printf '%s\n' "$1" | LC_ALL=C awk -f "$LIB/hostlist.awk" -f <(echo "$HL")
}
t_is "$(hl 'n[1-3,5]')" "n1 n2 n3 n5" "hostlist n[1-3,5]"
t_is "$(hl 'n1')" "n1" "hostlist of one name"
t_is "$(hl 'a1,b[2-3],c')" "a1 b2 b3 c" "hostlist with plain names and a range"
t_is "$(hl 'gpu[08-11]')" "gpu08 gpu09 gpu10 gpu11" "zero padding is kept"
t_is "$(hl 'n[9-11]')" "n9 n10 n11" "no padding when the lower bound has none"
t_is "$(hl 'r[1-2]n[1-2]')" "r1n1 r1n2 r2n1 r2n2" "two bracket groups multiply"
t_is "$(hl 'n[1,3-4]-ib')" "n1-ib n3-ib n4-ib" "a suffix after the brackets"
t_is "$(hl '')" "" "an empty hostlist has no names"
t_is "$(hl '(null)')" "" "(null) has no names"
t_is "$(hl 'n[1-x]')" "n[1-x]" "something that is not a range is kept as it is"
t_is "$(hl 'n[')" "n[" "an unbalanced bracket is kept as it is"

# ---- JSON strings -----------------------------------------------------------------
JS='{ print jstr($0) }'
# A name with quotes, a backslash, a tab, control characters, valid UTF-8
# (e-acute) and bytes that are not UTF-8 (a lone \351, a cut \340\200).
printf 'a"b\\c\td\001e\037f \303\251 \351 \340\200 z\n' >"$T/names"
OUT=$(LC_ALL=C awk -f "$LIB/json.awk" -f <(echo "$JS") "$T/names")
t_is "$(valid_json "$OUT")" "" "jstr: valid JSON for quotes, backslashes, controls and bad UTF-8"
t_is "$(printf '%s' "$OUT" | python3 -c 'import json, sys; print(ascii(json.load(sys.stdin)))')" \
    "'a\"b\\\\c\\td\\x01e\\x1ff \\xe9 \\ufffd \\ufffd\\ufffd z'" \
    "jstr: the same characters back, invalid bytes as U+FFFD"

# ---- nodes ----------------------------------------------------------------------------
N=$(run nodes "$FIX/sinfo-nodes.txt")
t_is "$(valid_json "$N")" "" "nodes: valid JSON"
t_is "$(py '[i["name"] for i in d["items"]]' "$N")" \
    '["n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"]' "nodes: 8 nodes, one item each (partitions merged)"
t_is "$(py '[by[n]["state"] for n in sorted(by)]' "$N")" \
    '["mixed", "mixed", "allocated", "draining", "drained", "down", "maint", "unknown"]' \
    "nodes: mixed, allocated, draining, drained, down*, maint, idle* -> unknown"
t_is "$(py '[by["n3"]["cpus"], by["n3"]["cpus_alloc"], by["n2"]["memory_mb"], by["n2"]["memory_alloc_mb"], by["n1"]["gpus"]]' "$N")" \
    '[2, 2, 2048, 200, 2]' "nodes: cpus, cpus_alloc, memory, allocated memory, gpus"
t_is "$(py 'by["n2"]["features"]' "$N")" '["fast", "ssd"]' "nodes: features"
t_is "$(py '[sorted(by["n7"]["queues"]), by["n1"]["queues"]]' "$N")" \
    '[["big", "debug"], ["debug"]]' "nodes: a node in two partitions lists both, without the default's *"
t_is "$(py 'by["n5"]["reason"]' "$N")" 'disk "bad" \ | see ticket' \
    "nodes: a reason with quotes, a backslash and | comes back whole"
t_is "$(py '[by["n6"]["reason"], by["n8"]["reason"], by["n1"]["reason"]]' "$N")" \
    '["Not responding", "not responding", null]' "nodes: reasons; not responding without one; none is null"
N=$(run nodes "$FIX/sinfo-nodes-idle.txt")
t_is "$(py '[(i["name"], i["state"], i["cpus"]) for i in d["items"]]' "$N")" \
    '[["n1", "idle", 2], ["n2", "idle", 2], ["n3", "idle", 2], ["n4", "idle", 2], ["n5", "idle", 2], ["n6", "idle", 2], ["n7", "idle", 2], ["n8", "idle", 2]]' \
    "nodes: a fresh cluster is all idle"
t_is "$(printf '' | run nodes)" '{"items": []}' "nodes: no nodes, an empty list"
# The state table on flag combinations the recording does not hold.
states() {
    local s out=
    for s in "$@"; do
        out="$out $(printf 'x|%s|2|%s|1|0|(null)|(null)|p|none|\n' "${s%@*}" "${s#*@}" |
            run nodes | python3 -c 'import json, sys; print(json.load(sys.stdin)["items"][0]["state"])')"
    done
    echo "${out# }"
}
t_is "$(states 'mixed+drain@1/0/1/2' 'idle+drain+not_responding@0/0/2/2' 'down+drain@0/0/2/2' \
    'idle+fail@0/0/2/2' 'allocated+fail@2/0/0/2' 'future@0/0/2/2' 'idle+powered_down@0/2/0/2' \
    'allocated+completing@2/0/0/2' 'unknown@0/2/0/2' 'error@0/0/2/2' 'idle+reserved@0/2/0/2' \
    'idle+drain+maintenance@0/0/2/2' 'mixed+not_responding@1/1/0/2' 'planned@0/2/0/2')" \
    "draining drained down drained draining down idle allocated unknown down idle drained unknown unknown" \
    "nodes: the state table (drain, fail, down, future, flags, not responding)"

# ---- queues -------------------------------------------------------------------------------
Q=$(run queues "$FIX/scontrol-show-partition.txt")
t_is "$(valid_json "$Q")" "" "queues: valid JSON"
t_is "$(py 'd["items"]' "$Q")" \
    '[{"name": "debug", "state": "open", "nodes": 8, "max_walltime_s": null}, {"name": "big", "state": "open", "nodes": 2, "max_walltime_s": 86400}]' \
    "queues: debug (unlimited) and big (1-00:00:00)"
t_is "$(run queues -v only=big "$FIX/scontrol-show-partition.txt" | python3 -c 'import json, sys; print([q["name"] for q in json.load(sys.stdin)["items"]])')" \
    "['big']" "queues: LOOM_PARTITION keeps only those partitions"
t_is "$(printf 'PartitionName=a MaxTime=30:00 State=DOWN TotalNodes=1\nPartitionName=b MaxTime=2-12 State=INACTIVE TotalNodes=1\nPartitionName=c MaxTime=90 State=DRAIN TotalNodes=1\n' |
    run queues | python3 -c 'import json, sys; print([(q["state"], q["max_walltime_s"]) for q in json.load(sys.stdin)["items"]])')" \
    "[('closed', 1800), ('closed', 216000), ('closed', 5400)]" \
    "queues: DOWN/INACTIVE/DRAIN are closed; MaxTime mm:ss, days-hours, minutes"

# ---- jobs -----------------------------------------------------------------------------------
# squeue-jobs.txt was recorded before %D %c %m %l (the request of a job its
# user holds) joined JOBS_FIELDS, with ten fields: they go in after the end
# time as a recording would show them (one node, one CPU, DefMemPerCPU,
# no time limit). A recording in the current format is used as it is.
LC_ALL=C awk -F '\037' -v OFS='\037' '/^\036/ && NF == 10 {
    $9 = "1" OFS "1" OFS "100M" OFS "UNLIMITED" OFS $9 } 1' \
    "$FIX/squeue-jobs.txt" >"$T/squeue-jobs.txt"
SQ=$T/squeue-jobs.txt
rm -f "$T/cache" "$T/missing"
run jobs -v cache="$T/cache" -v missing="$T/missing" "$SQ" >"$T/pass1"
t_is "$? $(wc -c <"$T/pass1")" "3 0" "jobs: finished jobs without exit codes: status 3, no answer"
t_is "$(sort -n "$T/missing" | tr '\n' ' ')" "2 3 6 13 " \
    "jobs: it asks for the failed and cancelled ones only (not COMPLETED)"
LC_ALL=C awk -v want="$(tr '\n' ' ' <"$T/missing") 999" -f "$LIB/exitcodes.awk" \
    "$FIX/scontrol-show-job.txt" >"$T/cache"
t_is "$(sort -n "$T/cache" | tr '\n' ' ')" "2 3:0 3 0:9 6 0:15 13 0:0 999 - " \
    "exitcodes: ExitCode per wanted job from scontrol show job -o; unknown ones -"
t_is "$(LC_ALL=C awk -v want=5 -f "$LIB/exitcodes.awk" "$FIX/scontrol-show-job.txt")" "5 0:0" \
    "exitcodes: a job whose name holds a newline"
t_is "$(LC_ALL=C awk -v want=2 -f "$LIB/exitcodes.awk" "$FIX/scontrol-show-job-one.txt")" "2 3:0" \
    "exitcodes: scontrol show job -o ID"
echo "424242 1:0" >>"$T/cache"
J=$(run jobs -v cache="$T/cache" -v missing="$T/missing" "$SQ")
t_is "$?" 0 "jobs: with the exit codes cached, an answer"
t_is "$(valid_json "$J")" "" "jobs: valid JSON"
t_is "$(py '[d["complete"], len(d["items"])]' "$J")" '[true, 14]' "jobs: complete, 14 jobs"
jf() { py "[by[$1][k] for k in $2]" "$J"; }
t_is "$(jf '"ok-exit0"' '["state", "exit_code", "nodes"]')" '["completed", 0, ["n4"]]' "jobs: exit 0: completed, 0"
t_is "$(jf '"fail-exit3"' '["state", "exit_code", "reason"]')" '["failed", 3, "NonZeroExitCode"]' "jobs: exit 3: failed, 3"
t_is "$(jf '"killed-sig9"' '["state", "exit_code"]')" '["failed", 137]' "jobs: killed by SIGKILL: failed, 128+9"
t_is "$(jf '"cancelled-running"' '["state", "exit_code"]')" '["cancelled", 143]' "jobs: cancelled while running: 128+15"
t_is "$(jf '"cancelled-pending"' '["state", "exit_code", "start_time", "nodes"]')" '["cancelled", null, null, []]' \
    "jobs: cancelled while pending: no exit code, never started"
t_is "$(jf '"held"' '["state", "reason", "start_time"]')" '["held", "JobHeldUser", null]' "jobs: held"
t_is "$(jf '"pending-resources"' '["state", "reason", "nodes", "end_time"]')" '["pending", "Resources", [], null]' "jobs: pending"
t_is "$(jf '"suspended"' '["state", "nodes"]')" '["suspended", ["n2"]]' "jobs: suspended"
t_is "$(jf '"two-nodes"' '["state", "nodes", "end_time", "exit_code"]')" '["running", ["n1", "n2"], null, null]' \
    "jobs: running on n[1-2], expanded"
t_is "$(jf '"array"' '["state", "native_id"]')" '["pending", "11"]' "jobs: a pending array"
t_is "$(py '[by["we\"ird\\name"][k] for k in ["loom_id", "native_id", "state"]]' "$J")" '["42", "4", "completed"]' \
    "jobs: a name with quotes and a backslash; loom_id from the comment"
t_is "$(py '[by["two\nlines"]["state"], sorted(set(i["loom_id"] for i in d["items"] if i["name"] != "we\"ird\\name"), key=str)]' "$J")" \
    '["completed", [null]]' "jobs: a name with a newline; other jobs have loom_id null"
t_is "$(py 'sorted(set(type(i[k]).__name__ for i in d["items"] for k in ["submit_time"]))' "$J")" '["int"]' \
    "jobs: times are epoch seconds"
t_is "$(py '[by["ok-exit0"]["start_time"] <= by["ok-exit0"]["end_time"], by["ok-exit0"]["owner"]]' "$J")" '[true, "root"]' \
    "jobs: start before end; the owner"
JR=$(run jobs -v cache="$T/cache" "$SQ")
t_is "$(py 'by["held"]["request"]' "$JR")" \
    '{"nodes": 1, "cpus_per_node": 1, "memory_mb": 100, "walltime_s": 0}' \
    "jobs: a job its user holds carries its request (100M, UNLIMITED)"
t_is "$(py '[j["native_id"] for j in d["items"] if "request" in j]' "$JR")" '["12"]' \
    "jobs: no other job carries one (not the cancelled one its user held)"
t_is "$(printf '\03612\037PD\037JobHeldUser\037u\037\0371\037N/A\037N/A\0372\0373\0374G\0371-02:03:04\037(null)\037h\n\03613\037PD\037JobHeldAdmin\037u\037\0371\037N/A\037N/A\0371\0371\037100M\03730:00\037(null)\037a\n' |
    run jobs | python3 -c 'import json, sys; print([i.get("request") for i in json.load(sys.stdin)["items"]])')" \
    "[{'nodes': 2, 'cpus_per_node': 3, 'memory_mb': 4096, 'walltime_s': 93784}, None]" \
    "jobs: the request of a job its user holds (2 nodes, 3 CPUs, 4G, 1-02:03:04); an admin's hold has none"
t_is "$(sort -n "$T/cache" | tr '\n' ' ')" "2 3:0 3 0:9 6 0:15 13 0:0 " \
    "jobs: exit codes of jobs squeue no longer lists are forgotten"
t_is "$(printf '' | run jobs)" '{"complete": true, "items": []}' "jobs: no jobs, an empty complete list"
# What ended jobs used, from sacct (a cluster with accounting).
printf '1|COMPLETED|00:02.079|00:00.365|\n1.batch|COMPLETED|00:02.079|00:00.365|3156K\n1.0|COMPLETED|00:00:00|00:00.001|1.5M\n2|FAILED|1-01:00:00|01:02:03|\n2.batch|FAILED|1-01:00:00|01:02:03|2G\n3|RUNNING|00:00:00|00:00:00|\n6|CANCELLED by 0|00:00:00|00:00:00|\n' >"$T/sacct.txt"
printf '5 wait 100\n' >"$T/uold"
t_is "$(LC_ALL=C awk -v want="1 2 3 5 6" -v old="$T/uold" -v now=200 -f "$LIB/usage.awk" "$T/sacct.txt" | tr '\n' '|')" \
    "1 2079 365 3156|2 90000000 3723000 2097152|3 wait 200|5 wait 100|6 0 0 0|" \
    "usage: UserCPU, SystemCPU of the job's line in ms, the largest MaxRSS of its steps in KiB; a job sacct has not seen end waits, since when it was first asked"
rm -f "$T/missing" "$T/umissing"
: >"$T/ucache"
run jobs -v cache="$T/cache" -v missing="$T/missing" -v ucache="$T/ucache" \
    -v umissing="$T/umissing" "$SQ" >/dev/null
t_is "$? $(sort -n "$T/umissing" | tr '\n' ' ')" "3 1 2 3 4 5 6 13 " \
    "jobs: with accounting, every finished job without a usage is asked for (status 3)"
NOW=$(date +%s)
printf '1 2079 365 3156\n2 wait %s\n3 wait %s\n4 -\n999 1 1 1\n' "$NOW" $((NOW - 100)) >"$T/ucache"
J=$(run jobs -v cache="$T/cache" -v ucache="$T/ucache" -v grace=30 "$SQ")
t_is "$(jf '"ok-exit0"' '["state", "usage"]')" \
    '["completed", {"user_cpu_ms": 2079, "system_cpu_ms": 365, "max_rss_kb": 3156}]' \
    "jobs: a finished job's usage from the cache"
t_is "$(jf '"fail-exit3"' '["state", "end_time", "exit_code", "reason", "usage"]')" \
    '["running", null, null, null, null]' \
    "jobs: one whose record sacct lacks yet is listed as it ran, for the grace time"
t_is "$(jf '"killed-sig9"' '["state", "exit_code", "usage"]')" '["failed", 137, null]' \
    "jobs: after the grace time, it ends without a usage"
t_is "$(sort -n "$T/ucache" | tr '\n' '|')" "1 2079 365 3156|2 wait $NOW|3 wait $((NOW - 100))|4 -|" \
    "jobs: usages of jobs squeue no longer lists are forgotten"
rm -f "$T/umissing"
run jobs -v cache="$T/cache" -v missing="$T/missing" -v ucache="$T/ucache" \
    -v umissing="$T/umissing" -v grace=30 "$SQ" >/dev/null
t_is "$(sort -n "$T/umissing" | tr '\n' ' ')" "2 5 6 13 " \
    "jobs: sacct is asked again for a job still waiting (2), not for one past the grace time (3)"
J=$(run jobs -v cache="$T/cache" "$SQ")
t_is "$(py 'sorted(set(str(i["usage"]) for i in d["items"]))' "$J")" '["None"]' \
    "jobs: without accounting, every usage is null"
# Every squeue state code.
codes() {
    local c out=
    for c in "$@"; do
        out="$out $(printf '\0361\037%s\037%s\037u\037%s\0371\0372\0373\0371\0371\037100M\037UNLIMITED\037(null)\037x\n' \
            "${c%%@*}" "$(r=${c#*@}; echo "${r%@*}")" "${c##*@}" |
            run jobs | python3 -c 'import json, sys; print(json.load(sys.stdin)["items"][0]["state"])')"
    done
    echo "${out# }"
}
t_is "$(codes 'PD@Priority@' 'PD@JobHeldAdmin@' 'R@None@n1' 'CG@None@n1' 'CF@None@n1' 'S@None@n1' \
    'ST@None@n1' 'CD@None@n1' 'TO@TimeLimit@n1' 'NF@NodeFail@n1' 'OOM@None@n1' 'BF@None@' \
    'DL@None@' 'PR@None@n1' 'CA@None@' 'RQ@None@' 'RH@None@' 'SE@None@' 'XX@None@n1' 'XX@None@')" \
    "pending held running running running suspended suspended completed failed failed failed failed failed failed cancelled pending held held running pending" \
    "jobs: the state table over squeue's codes"
t_is "$(printf '\0361\037NF\037None\037u\037n1\0371\0372\0373\0371\0371\037100M\037UNLIMITED\037loom:7\037x\n\0362\037NF\037NodeDown\037u\037n1\0371\0372\0373\0371\0371\037100M\037UNLIMITED\037(null)\037y\n' |
    run jobs | python3 -c 'import json, sys; print([(i["state"], i["reason"], i.get("node_failure")) for i in json.load(sys.stdin)["items"]])')" \
    "[('failed', 'node failure: Slurm ended the job (NODE_FAIL)', True), ('failed', 'NodeDown', True)]" \
    "jobs: NODE_FAIL is node_failure true; without a reason from squeue it says node failure; a reason squeue gives is kept"
t_is "$(codes_nf() { printf '\0361\037%s\037None\037u\037n1\0371\0372\0373\0371\0371\037100M\037UNLIMITED\037loom:7\037x\n' "$@" |
    run jobs | python3 -c 'import json, sys; print([i.get("node_failure") for i in json.load(sys.stdin)["items"]])'; }
    codes_nf F TO CA CD R)" "[None, None, None, None, None]" \
    "jobs: no other state carries node_failure"

# ---- the nodes, jobs and start ops, on stand-ins for the Slurm commands -----------------
count() { python3 -c 'import json, sys; print(len(json.load(sys.stdin)["items"]))'; }
mkdir -p "$T/bin" "$T/state"
for c in sinfo squeue; do
    printf '#!/bin/sh\ncat "$FAKE_OUT"\n[ -z "$FAKE_ERR" ] || echo "$FAKE_ERR" >&2\nexit "${FAKE_RC:-0}"\n' >"$T/bin/$c"
    chmod +x "$T/bin/$c"
done
printf '#!/bin/sh\ncat "%s"\n' "$FIX/scontrol-show-job.txt" >"$T/bin/scontrol"
# sacct of a cluster without accounting, as Slurm 22.05 answers
printf '#!/bin/sh\necho "$*" >>"%s"\necho "Slurm accounting storage is disabled" >&2\nexit 1\n' \
    "$T/sacct.calls" >"$T/bin/sacct"
chmod +x "$T/bin/scontrol" "$T/bin/sacct"
fake_op() {
    env -i PATH="$T/bin:/usr/bin:/bin" LOOM_STATE_DIR="$T/state" FAKE_OUT="$1" \
        FAKE_ERR="${FAKE_ERR:-}" FAKE_RC="${FAKE_RC:-0}" "$PACK/$2" 2>"$T/op.err"
}
t_is "$(fake_op "$FIX/sinfo-nodes.txt" nodes | count)" 8 "nodes op: sinfo, then nodes.awk"
t_is "$(py '[len(d["items"]), by["killed-sig9"]["exit_code"], by["held"]["request"]["nodes"]]' "$(fake_op "$SQ" jobs)")" \
    "[14, 137, 1]" "jobs op: one squeue (requests included); exit codes from scontrol, then a second pass"
t_is "$(sort -n "$T/state/slurm-exit-codes" | tr '\n' ' ')" "2 3:0 3 0:9 6 0:15 13 0:0 " \
    "jobs op: the exit codes are cached"
t_is "$(py 'sorted(set(str(i["usage"]) for i in d["items"]))' "$(fake_op "$SQ" jobs)")/$(wc -l <"$T/sacct.calls")" \
    '["None"]/1' "jobs op: sacct says there is no accounting: no usage, and sacct is not asked again"
t_like "$(cat "$T/state/slurm-no-accounting")" '^[0-9]+$' "jobs op: ... for a while, from when it said so"
out=$(FAKE_RC=1 FAKE_ERR='sinfo: error: slurm_load_partitions: Unable to contact slurm controller (connect failure)' \
    fake_op /dev/null nodes)
t_is "$? ${#out} $(head -n 1 "$T/op.err")" \
    "75 0 sinfo: Slurm controller unreachable or busy: Unable to contact slurm controller (connect failure)" \
    "nodes op: sinfo failing: status 75, Slurm's words, no answer"
out=$(FAKE_RC=1 FAKE_ERR='squeue: error: Invalid user: nobody' fake_op /dev/null jobs)
t_is "$? ${#out} $(head -n 1 "$T/op.err")" "1 0 squeue: Invalid user: nobody" \
    "jobs op: squeue refusing: status 1, no answer"
# start: sbatch's answer read from its file; stdin (however long) left
# unread. sbatch runs as the job's account through loom-runas (here the
# stand-in that logs its words), the job file on its stdin.
printf '#!/bin/sh\necho "sbatch $*" >>"%s/log"; cat >"%s/sbatch.in"\necho "4242;loomtest"\n' "$T" "$T" >"$T/bin/sbatch"
chmod +x "$T/bin/sbatch"
printf '#!/bin/sh\necho job file\n' >"$T/job.sh"
: >"$T/log"
out=$(head -c 200000 /dev/zero | env -i PATH="$T/bin:/usr/bin:/bin" LOOM_STATE_DIR="$T/state" \
    LOOM_JOB_ID=7 LOOM_JOB_NODES=n1 LOOM_JOB_SCRIPT="$T/job.sh" LOOM_JOB_ACCOUNT=alice \
    LOOM_RUNAS="$LOOM_TOP_SRCDIR/tests/fixtures/runas/loom-runas" LOOM_FIXTURE_LOG="$T/log" \
    LOOM_JOB_WORKDIR=/home/alice LOOM_TIMEOUT_S=12 \
    LOOM_JOB_STDOUT=/home/alice/loom-7.out LOOM_JOB_STDERR=/home/alice/loom-7.out \
    "$PACK/start" 7 2>"$T/op.err")
t_is "$? $out" '0 {"native_id": "4242"}' "start op: one sbatch; its id without the cluster name"
t_is "$(cat "$T/log")" "loom-runas [run] [alice] [-C] [/home/alice] [-t] [12]
sbatch --parsable --no-requeue --comment=loom:7 --job-name=loom-7 --nodelist=n1 --nodes=1 --ntasks-per-node=1 --chdir=/home/alice --output=/home/alice/loom-7.out" \
    "start op: sbatch as the job's account, in its workdir, ended after LOOM_TIMEOUT_S; one output file, no --error"
t_is "$(cat "$T/sbatch.in")" "$(cat "$T/job.sh")" "start op: sbatch reads the job file on its stdin"

# ---- errors ----------------------------------------------------------------------------------
# classify FILE: "STATUS" per stderr line of FILE.
classify() {
    local line out=
    while IFS= read -r line; do
        out="$out $(printf '%s\n' "$line" | LC_ALL=C awk -v cmd=x -v rc=1 -f "$LIB/error.awk" | cut -f1)"
    done <"$1"
    echo "${out# }"
}
grep -v 'Terminating job' "$FIX/stderr-ctld-down.txt" >"$T/ctld-down"
t_is "$(classify "$T/ctld-down")" "75 75 75 75 75 ?" \
    "errors: every 'controller down' message is temporary (75), a controller that died under sbatch too; 'Unexpected message' asks ping"
t_is "$(printf 'sbatch: error: slurm_receive_msg: address:port=127.0.0.1:6817 msg_type=4003: Unexpected missing socket error\n' |
    LC_ALL=C awk -v cmd=sbatch -v rc=1 -f "$LIB/error.awk" | cut -f1)" 75 \
    "errors: slurmctld killed while sbatch waited for its answer: temporary (the retry finds the job or submits it)"
t_is "$(classify "$FIX/stderr-refused.txt")" "1 1 1 1 1 1 1 1 1" \
    "errors: what Slurm refuses is permanent (1)"
t_is "$(printf 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n' |
    LC_ALL=C awk -v cmd=sbatch -v rc=1 -f "$LIB/error.awk")" \
    "75	sbatch: Slurm controller unreachable or busy: Batch job submission failed: Unable to contact slurm controller (connect failure)" \
    "errors: the message names the command and keeps Slurm's words"
t_is "$(printf 'scancel: Terminating job 4\nscancel: error: Kill job error on job id 4: Invalid job id specified\n' |
    LC_ALL=C awk -v cmd=scancel -v rc=1 -f "$LIB/error.awk")" \
    "1	scancel: Kill job error on job id 4: Invalid job id specified" \
    "errors: scancel -v chatter is skipped"
t_is "$(grep scancel "$FIX/stderr-ctld-down.txt" | LC_ALL=C awk -v cmd=scancel -v rc=8 -f "$LIB/error.awk" | cut -f1)" \
    "75" "errors: scancel -v with the controller down: temporary"
t_is "$(printf '' | LC_ALL=C awk -v cmd=scontrol -v rc=9 -f "$LIB/error.awk")" \
    "1	scontrol: failed with status 9 and no message" "errors: no message at all"
t_is "$(printf 'sh: 1: sinfo: not found\n' | LC_ALL=C awk -v cmd=sinfo -v rc=127 -f "$LIB/error.awk" | cut -f1)" \
    "75" "errors: a Slurm command missing from PATH is temporary"

t_done
