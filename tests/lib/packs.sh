# packs.sh - what the parser tests of the pbs, lsf and condor packs share.
# SPDX-License-Identifier: MIT
#
# Sourced by tests/unit/packs_{pbs,lsf,condor}.t (bash) once they have set
#   PACK_NAME     the pack: adaptors/scripts/$PACK_NAME
#   PACK_CLUSTER  the cluster name its ops run under (LOOM_CLUSTER)
# and LOOM_TOP_SRCDIR. It sources harness.sh and sets PACKS (the bundled
# packs), PACK, FIX (tests/fixtures/$PACK_NAME) and STATE ($T/state: the
# ops' working and state directory); $T/keep gets the files the stand-in
# commands keep. The CMS commands are stand-ins from $FIX/bin that replay
# recorded output ($FIX/<flavor>/commands.map says which); the pack finds
# them through env.LOOM_<PACK>_BIN, as a site sets it.
#
#   op FLAVOR_DIR OP ARGS...  run an op as loomd runs it (env -i, PATH=
#                       /usr/local/bin:/usr/bin:/bin, LOOM_*, $LOOM_AWK when
#                       set) on the recorded output of $FIX/FLAVOR_DIR, with
#                       the NAME=VALUE words of the array EXTRA added. Sets
#                       RC, OUT, ERR; the commands it ran are in $T/log.
#   is_json TEXT        TEXT is one JSON document.
#   proj KEY FIELDS...  the FIELDS of the item whose name or native_id is KEY
#                       in the last answer, as a JSON array ("missing").
#   pyq EXPR            a Python expression on the last answer (d).
#   logged              the commands the last op ran, one a line.
#   json_ok NAME        two test points: status 0, the answer is JSON.
#   start_env ID NODES CPUS [MEM GPUS WALL QUEUE]: EXTRA for a start of a
#                       job of the account alice, with the job's files
#                       where loomd writes them (the job file mode 0600)
#                       and LOOM_RUNAS the stand-in of tests/fixtures/runas
#                       (it logs its words and runs the command as is).
#   manifest KEY        pack.json's KEY (a list: its words joined by blanks).
#   pack_manifest_ok    one test point: pack.json has protocol 1, a model,
#                       the required ops, each an executable.
#   pack_files_ok       three test points: every op and lib/*.sh (the
#                       pack's and the shared adaptors/scripts/lib) parse as
#                       POSIX sh; pbs, lsf and condor use the one shared
#                       lib/ (common.sh, json.awk, time.awk: no copy of
#                       their own); no python or jq in the pack.

. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

PACKS=$LOOM_TOP_SRCDIR/adaptors/scripts
PACK=$PACKS/$PACK_NAME
FIX=$LOOM_TOP_SRCDIR/tests/fixtures/$PACK_NAME
STATE=$T/state
mkdir -p "$STATE" "$T/keep"

EXTRA=()
op() {
    local dir=$1 o=$2
    shift 2
    : >"$T/log"
    OUT=$(cd "$STATE" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T" \
        TZ=UTC "LOOM_${PACK_NAME^^}_BIN=$FIX/bin" LOOM_FIXTURE_DIR="$FIX/$dir" \
        LOOM_FIXTURE_LOG="$T/log" LOOM_FIXTURE_KEEP="$T/keep" \
        LOOM_CLUSTER="$PACK_CLUSTER" LOOM_OP="$o" LOOM_PACK_DIR="$PACK" \
        LOOM_STATE_DIR="$STATE" ${LOOM_AWK:+LOOM_AWK="$LOOM_AWK"} \
        "${EXTRA[@]}" "$PACK/$o" "$@" \
        </dev/null 2>"$T/err")
    RC=$?
    ERR=$(cat "$T/err")
    if [ "$RC" = 0 ] && ! is_json "$OUT"; then
        t_diag "$o: the answer is not JSON: $OUT"
    fi
}

is_json() {
    python3 -c 'import json, sys; json.loads(sys.argv[1])' "$1" 2>/dev/null
}

proj() {
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
for i in d.get("items", []):
    if sys.argv[2] in (i.get("name"), i.get("native_id")):
        print(json.dumps([i.get(f, "absent") for f in sys.argv[3:]]))
        break
else:
    print("missing")
' "$OUT" "$@"
}

pyq() {
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
v = eval(sys.argv[2])
print(v if isinstance(v, str) else json.dumps(v))
' "$OUT" "$1"
}

logged() {
    cat "$T/log"
}

json_ok() {
    t_is "$RC" 0 "$1: status 0${ERR:+ ($ERR)}"
    is_json "$OUT"
    t_ok $? "$1: the answer is JSON"
}

start_env() {
    local d=$STATE/jobs/$1
    mkdir -p "$d"
    (umask 077 && printf '#!/bin/sh\necho hi\n' >"$d/job.sh")
    EXTRA=(LOOM_JOB_ID="$1" LOOM_JOB_NAME=x LOOM_JOB_OWNER=alice
        LOOM_JOB_ACCOUNT=alice
        LOOM_RUNAS="$LOOM_TOP_SRCDIR/tests/fixtures/runas/loom-runas"
        LOOM_JOB_NODES="$2" LOOM_JOB_NNODES="$(tr ',' '\n' <<<"$2" | grep -c .)"
        LOOM_JOB_CPUS_PER_NODE="$3" LOOM_JOB_MEMORY_MB="${4:-0}"
        LOOM_JOB_GPUS="${5:-0}" LOOM_JOB_WALLTIME_S="${6:-0}"
        LOOM_JOB_QUEUE="${7:-}" LOOM_JOB_SCRIPT="$d/job.sh"
        LOOM_JOB_WORKDIR="$d" LOOM_JOB_STDOUT="$d/stdout"
        LOOM_JOB_STDERR="$d/stderr")
}

manifest() {
    python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))[sys.argv[2]]
print(" ".join(v) if isinstance(v, list) else v)' "$PACK/pack.json" "$1"
}

pack_manifest_ok() {
    python3 - "$PACKS" "$PACK_NAME" <<'EOF'
import json, os, sys
d = os.path.join(sys.argv[1], sys.argv[2])
m = json.load(open(os.path.join(d, "pack.json")))
assert m["protocol"] == 1 and m["name"] == sys.argv[2], m
assert m["model"] in ("disabled-scheduler", "execution-queue"), m
ops = m["ops"]
for o in ("nodes", "jobs", "queues", "start", "cancel"):
    assert o in ops, o
for a, b in (("suspend", "resume"), ("hold", "release"), ("reserve", "unreserve")):
    assert (a in ops) == (b in ops), (a, b)
for o in ops:
    p = os.path.join(d, o)
    assert os.path.isfile(p) and os.access(p, os.X_OK), p
EOF
    t_ok $? "pack.json: protocol 1, a model, the required ops, each an executable"
}

pack_files_ok() {
    local f p bad= n=0 ops
    for f in "$PACK"/* "$PACK"/lib/*.sh "$PACKS"/lib/*.sh; do
        [ -f "$f" ] && [ "${f##*.}" != json ] && [ "${f##*.}" != md ] || continue
        n=$((n + 1))
        sh -n "$f" 2>>"$T/syntax" || bad="$bad ${f##*/}"
    done
    ops=$(manifest ops | wc -w)
    t_is "$bad/$((n > ops))" "/1" \
        "every op and lib/*.sh ($n files, the $ops ops among them) parses as POSIX sh${bad:+: $(cat "$T/syntax")}"
    # One copy of the shared files, and every op of the three packs
    # sources it (through SHARED_LIB, which LOOM_PACK_LIB may move).
    bad=
    for f in common.sh json.awk time.awk; do
        [ -f "$PACKS/lib/$f" ] || bad="$bad lib/$f(missing)"
        for p in pbs lsf condor; do
            [ ! -e "$PACKS/$p/lib/$f" ] || bad="$bad $p/lib/$f"
        done
    done
    for p in pbs lsf condor; do
        for f in "$PACKS/$p"/*; do
            [ -f "$f" ] && [ -x "$f" ] || continue
            grep -qxF '. "$SHARED_LIB/common.sh"' "$f" || bad="$bad $p/${f##*/}"
        done
    done
    t_is "$bad" "" "lib/common.sh, json.awk and time.awk are the same in pbs, lsf, condor"
    t_ok "$(grep -lE 'python|jq ' "$PACK"/* "$PACK"/lib/* "$PACKS"/lib/* 2>/dev/null |
        grep -v README | wc -l)" "no python or jq in the pack"
}
