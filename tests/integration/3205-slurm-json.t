#!/usr/bin/env bash
# 3205-slurm-json.t - squeue, sinfo and sacct --json (and --yaml) over Loom
# beside Slurm 22.05's own: the same top-level shape, and each object's keys a
# subset of what the real commands write for the same kinds of jobs and
# nodes, with the same JSON types (sacct's against the dbv0.0.38 schema
# that Slurm's own sacct --json follows: without slurmdbd the real sacct
# has no jobs to show); the values Loom knows, and what is refused.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

DBV38=/usr/lib/x86_64-linux-gnu/slurm-wlm/openapi_dbv0_0_38.so

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# shape REAL LOOM LISTKEY [yaml]: compares two documents (files): the
# top-level keys, and each of LOOM's LISTKEY items against the keys and JSON
# types REAL's items have (any of them); with yaml, documents read from
# YAML, where Slurm writes an empty string as null: a string and a null
# are one kind. Prints "ok", or what differs.
shape() {
    python3 - "$1" "$2" "$3" "${4:-}" <<'EOF'
import json, sys
real, loom = (json.load(open(f)) for f in sys.argv[1:3])
key = sys.argv[3]
kinds = {bool: "bool", int: "int", float: "float", str: "str",
         list: "list", dict: "dict", type(None): "null"}
if sys.argv[4] == "yaml":
    kinds[type(None)] = "str"
kind = lambda v: kinds[type(v)]
bad = []
if list(real) != list(loom):
    bad.append("top level: %s, Slurm's %s" % (list(loom), list(real)))
types = {}
for item in real[key]:
    for k, v in item.items():
        types.setdefault(k, set()).add(kind(v))
for item in loom[key]:
    for k, v in item.items():
        if k not in types:
            bad.append("%s: Slurm has no such key" % k)
        elif kind(v) not in types[k] and not (kind(v) == "int" and
                                              "float" in types[k]):
            bad.append("%s: %s, Slurm's %s" % (k, kind(v),
                                                sorted(types[k])))
if not loom[key]:
    bad.append("no %s" % key)
print("; ".join(sorted(set(bad))) or "ok")
EOF
}

# schema SO DOC: DOC's jobs against the dbv0.0.38 job schema in Slurm's
# plugin SO (the OpenAPI document compiled into it). Prints "ok" or what
# differs.
schema() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
data = open(sys.argv[1], "rb").read()
at = data.rfind(b"{", 0, data.find(b'"openapi"'))
spec, _ = json.JSONDecoder().raw_decode(data[at:].decode("utf-8", "replace"))
schemas = spec["components"]["schemas"]
doc = json.load(open(sys.argv[2]))
types = {"integer": int, "string": str, "object": dict, "array": list,
         "boolean": bool, "number": (int, float)}
bad = []
def check(path, v, s):
    if "$ref" in s:
        s = schemas[s["$ref"].split("/")[-1]]
    if not isinstance(v, types[s["type"]]) or (s["type"] == "integer" and
                                               isinstance(v, bool)):
        bad.append("%s: %s, the schema's %s" % (path, type(v).__name__,
                                                  s["type"]))
        return
    for k, sub in v.items() if isinstance(v, dict) else ():
        if k not in s.get("properties", {}):
            bad.append("%s.%s: not in the schema" % (path, k))
        else:
            check(path + "." + k, sub, s["properties"][k])
info = schemas["dbv0.0.38_job_info"]
if list(doc) != ["meta", "errors", "jobs"]:
    bad.append("top level: %s" % list(doc))
for job in doc.get("jobs", []):
    check("job", job, schemas["dbv0.0.38_job"])
if not doc.get("jobs"):
    bad.append("no jobs")
print("; ".join(sorted(set(bad))) or "ok")
EOF
}

# yaml2json YAML JSON: the YAML document in file YAML as JSON into file JSON
# (PyYAML's safe reader: its strings, numbers, booleans and nulls).
yaml2json() {
    python3 -c 'import json, sys, yaml
json.dump(yaml.safe_load(open(sys.argv[1])), open(sys.argv[2], "w"))' "$1" "$2"
}

# same JSON YAMLJSON: is the document in file YAMLJSON (read from YAML) the
# one in file JSON, with its empty strings null (as Slurm's YAML writes
# them)? "ok", or both.
same() {
    python3 -c 'import json, sys
def nulled(v):
    if isinstance(v, dict):
        return {k: nulled(x) for k, x in v.items()}
    if isinstance(v, list):
        return [nulled(x) for x in v]
    return None if v == "" else v
a, b = nulled(json.load(open(sys.argv[1]))), json.load(open(sys.argv[2]))
print("ok" if a == b else "%s\n%s" % (json.dumps(a), json.dumps(b)))' "$1" "$2"
}

# pyf EXPR FILE: py's expression over the document in FILE.
pyf() {
    python3 -c 'import json, sys
d = json.load(open(sys.argv[2]))
r = eval(sys.argv[1])
print(r if isinstance(r, str) else json.dumps(r))' "$1" "$2"
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
[ -r "$DBV38" ] || t_bail "no $DBV38 (slurmrestd's dbv0.0.38 plugin: apt-get install slurmrestd)"
t_account ALICE alice || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"

# ---- the same kinds of jobs in Loom (alice's, on local) and in Slurm ----------
J1=$(as_user "$ALICE" sbatch --parsable -M local -J three -t 5 --mem=100 --wrap 'exit 3')
J1=${J1%%;*}
J2=$(as_user "$ALICE" sbatch --parsable -M local -t 5 --wrap 'sleep 300')
J2=${J2%%;*}
J3=$(as_user "$ALICE" sbatch --parsable -M local -H -t 10 --wrap true)
J3=${J3%%;*}
JA=$(as_user "$ALICE" sbatch --parsable -M local -H --array=1-3 -t 10 --wrap true)
JA=${JA%%;*}
as_user "$ALICE" scontrol release "${JA}_2" >/dev/null
wait_for 'ended "$J1" && [ "$(job_state "$J2")" = running ] && ended "${JA}_2"' 60 ||
    t_diag "the jobs did not get where the test wants them"

SQ=(/usr/bin/sbatch -t 5 --mem=100)
RF=$("${SQ[@]}" --parsable --wrap 'exit 3')
"${SQ[@]}" --wrap 'sleep 300' >/dev/null
"${SQ[@]}" -H --wrap true >/dev/null
"${SQ[@]}" -H --array=1-3 --wrap true >/dev/null
RA=$("${SQ[@]}" --parsable --array=1-2 --wrap 'sleep 300')
wait_for '[ "$(/usr/bin/squeue -h -t R -o %i | wc -l)" -ge 3 ] &&
    [ "$(/usr/bin/squeue -h -t all -j "$RF" -o %T)" = FAILED ]' 60 ||
    t_diag "Slurm's jobs did not start"
/usr/bin/squeue --json >"$T/real-squeue.json"
/usr/bin/sinfo --json >"$T/real-sinfo.json"
/usr/bin/squeue --yaml >"$T/real-squeue.yaml"
/usr/bin/sinfo --yaml >"$T/real-sinfo.yaml"

# ---- squeue --json -------------------------------------------------------------
as_user "$ALICE" squeue --json -t all >"$T/squeue.json"
t_is "$?/$(shape "$T/real-squeue.json" "$T/squeue.json" jobs)" 0/ok \
    "squeue --json: meta, errors, jobs as Slurm's; each job's keys are Slurm's, with Slurm's types"
IDS=$(printf '%s\n' "$J1" "$J2" "$J3" "$JA" "$(field "${JA}_2" .loom_id)" |
    sort -n | paste -sd, | sed 's/,/, /g')
t_is "$(pyf '[d["meta"]["plugin"]["type"], d["errors"], sorted(j["job_id"] for j in d["jobs"])]' "$T/squeue.json")" \
    "[\"openapi/v0.0.38\", [], [$IDS]]" \
    "squeue --json -t all: every job of alice's, a task by its own number (job_id)"
PYJ='{j["job_id"]: j for j in d["jobs"]}'
t_is "$(pyf "(lambda b: [b[$J1][k] for k in ('name', 'job_state', 'exit_code', 'time_limit', 'memory_per_node', 'user_name', 'cluster', 'partition')])($PYJ)" "$T/squeue.json")" \
    "[\"three\", \"FAILED\", 768, 5, 100, \"$ALICE\", \"local\", \"\"]" \
    "a job that exited 3: FAILED, exit_code 768 (3 << 8, as Slurm keeps it), time_limit in minutes, memory_per_node"
t_is "$(pyf "(lambda b: [b[$J2]['job_state'], b[$J2]['end_time'] - b[$J2]['start_time'], b[$J2]['nodes'] in ('n1', 'n2'), b[$J3]['state_reason'], b[$J3]['start_time'], b[$JA]['array_job_id'] == $JA, b[$JA]['array_task_id'], b[$JA]['array_task_string']])($PYJ)" "$T/squeue.json")" \
    '["RUNNING", 300, true, "JobHeldUser", 0, true, null, "1,3"]' \
    "running: end_time its walltime on; held: JobHeldUser, start 0; the array's waiting tasks as array_task_string"
t_is "$(pyf "(lambda b: [b[$(field "${JA}_2" .loom_id)][k] for k in ('array_job_id', 'array_task_id', 'job_state')])($PYJ)" "$T/squeue.json")" \
    "[$JA, 2, \"COMPLETED\"]" "a task of its own: array_job_id, array_task_id"
t_is "$(pyf '[j["exit_code"] for j in d["jobs"] if j["name"] == "wrap" and j["job_state"] == "FAILED"]' "$T/real-squeue.json")" \
    "[768]" "(Slurm's own exit_code of a job that exited 3 is 768 too)"
OUT=$(py '[j["job_id"] for j in d["jobs"]]' "$(as_user "$ALICE" squeue --json -j "$J3")")
t_is "$OUT" "[$J3]" "squeue --json -j: the options filter the jobs"
OUT=$(py '[j["job_state"] for j in d["jobs"] if j["job_id"] == '"$J1"']' "$(as_user "$ALICE" squeue --json)")
t_is "$OUT" "[]" "squeue --json without -t: the queue, as squeue's lines"
t_is "$(as_user "$ALICE" squeue -h -t all -n three -o %i)" "$J1" \
    "squeue -n NAME: loomd selects the jobs of that name (?name=)"
t_is "$(as_user "$ALICE" squeue -h -t all -M local -o %i | wc -l)/$(as_user "$ALICE" squeue -h -t all -M slurm -o %i | wc -l)" \
    "$(as_user "$ALICE" squeue -h -t all -o %i | wc -l)/0" \
    "squeue -M CLUSTER: loomd selects the cluster's jobs (?cluster=)"
OUT=$(as_user "$ALICE" squeue -M nosuch 2>&1)
t_is "$?/$OUT" "1/squeue: error: slurm_load_jobs error: query parameter cluster: there is no cluster 'nosuch'; the clusters are local and slurm" \
    "squeue -M of a cluster there is not: refused, naming the clusters"
OUT=$(as_user "$ALICE" squeue --json -o %i 2>&1)
t_is "$?/$OUT" "1/squeue: error: --json writes every field Loom has; it takes no --format" \
    "squeue --json -o is refused, not ignored"

# ---- squeue --yaml: the same document, as Slurm's serializer_yaml writes it ----
yaml2json "$T/real-squeue.yaml" "$T/real-squeue.yaml.json"
as_user "$ALICE" squeue --yaml -t all >"$T/squeue.yaml"
yaml2json "$T/squeue.yaml" "$T/squeue.yaml.json"
t_is "$?/$(shape "$T/real-squeue.yaml.json" "$T/squeue.yaml.json" jobs yaml)" 0/ok \
    "squeue --yaml: meta, errors, jobs as Slurm's --yaml; each job's keys are Slurm's, with Slurm's types"
# a name YAML must quote: a colon and blank, a hash, a quote, beyond ASCII
JQ=$(as_user "$ALICE" sbatch --parsable -M local -H -t 10 -J "it's: #1, é" --wrap true)
JQ=${JQ%%;*}
as_user "$ALICE" squeue --json -t all -j "$J1,$J3,$JA,$JQ" >"$T/squeue-some.json"
as_user "$ALICE" squeue --yaml -t all -j "$J1,$J3,$JA,$JQ" >"$T/squeue-some.yaml"
yaml2json "$T/squeue-some.yaml" "$T/squeue-some.yaml.json"
t_is "$(same "$T/squeue-some.json" "$T/squeue-some.yaml.json")/$(pyf '[j["name"] for j in d["jobs"]][-1]' "$T/squeue-some.yaml.json")" \
    "ok/it's: #1, é" \
    "squeue --yaml read back is the document --json writes, value for value (an empty string null, as Slurm's YAML has it)"
as_user "$ALICE" scancel "$JQ"
wait_for '[ "$(job_state "$JQ")" = cancelled ]' 30
t_is "$(head -n 6 "$T/squeue.yaml")" "$(head -n 6 "$T/real-squeue.yaml")" \
    "written as Slurm's: %YAML 1.1, block style, each node tagged (its first lines those of Slurm's)"
t_is "$(grep -m1 -A2 '^!!str jobs: !!seq' "$T/squeue.yaml" | sed 's/: .*//')" \
    "$(grep -m1 -A2 '^!!str jobs: !!seq' "$T/real-squeue.yaml" | sed 's/: .*//')" \
    "a sequence in a mapping, and a mapping in a sequence, indented as Slurm's"
OUT=$(as_user "$ALICE" squeue --yaml -o %i 2>&1)
t_is "$?/$OUT" "1/squeue: error: --yaml writes every field Loom has; it takes no --format" \
    "squeue --yaml -o is refused, not ignored"

# ---- GET /v1/jobs?fields=: what squeue asks for -------------------------------
api GET "/v1/jobs?fields=state,id&state=held&account=$ALICE" >/dev/null
t_is "$STATUS/$(py '[[list(j), j["id"]] for j in d["items"]]' "$BODY")" \
    "200/[[[\"id\", \"state\"], \"$J3\"], [[\"id\", \"state\"], \"${JA}\"]]" \
    "?fields=state,id: each job with those members alone, in the job's order"
api GET "/v1/jobs?fields=script,request,nodes&limit=1&after=$((J2 - 1))" >/dev/null
t_is "$(py '[list(d["items"][0]), "sleep 300" in d["items"][0]["script"], d["items"][0]["nodes"], d["items"][0]["request"]["walltime_s"], d["next"].endswith("&fields=script%2Crequest%2Cnodes")]' "$BODY")" \
    '[["request", "script", "nodes"], true, ["'"$(field "$J2" .nodes.0)"'"], 300, true]' \
    "?fields= takes members whole (request), and the next page keeps them"
OUT=$(TOKEN=$(token_for watcher monitor) api GET "/v1/jobs?fields=script,state&account=$ALICE&state=running")
t_is "$(py '[sorted(j) for j in d["items"]]' "$OUT")" '[["state"]]' \
    "?fields= of a member its reader may not see (a monitor, the script): left out, as from the whole job"

# ---- sinfo --json --------------------------------------------------------------
as_user "$ALICE" sinfo --json >"$T/sinfo.json"
t_is "$?/$(shape "$T/real-sinfo.json" "$T/sinfo.json" nodes)" 0/ok \
    "sinfo --json: meta, errors, nodes as Slurm's; each node's keys are Slurm's, with Slurm's types"
t_is "$(pyf '[[n["name"], n["cpus"], n["real_memory"], n["partitions"]] for n in d["nodes"]]' "$T/sinfo.json")" \
    '[["local/n1", 2, 2048, ["default"]], ["local/n2", 2, 2048, ["default"]], ["slurm/n1", 2, 2048, ["debug"]], ["slurm/n2", 2, 2048, ["debug"]]]' \
    "sinfo --json: each node once, by its id, with its cpus, memory and partitions"
t_is "$(py '[n["name"] for n in d["nodes"]]' "$(as_user "$ALICE" sinfo --json -p debug)")" \
    '["slurm/n1", "slurm/n2"]' "sinfo --json -p: the partition's nodes"
yaml2json "$T/real-sinfo.yaml" "$T/real-sinfo.yaml.json"
as_user "$ALICE" sinfo --yaml >"$T/sinfo.yaml"
yaml2json "$T/sinfo.yaml" "$T/sinfo.yaml.json"
t_is "$?/$(shape "$T/real-sinfo.yaml.json" "$T/sinfo.yaml.json" nodes yaml)" 0/ok \
    "sinfo --yaml: meta, errors, nodes as Slurm's --yaml; each node's keys are Slurm's, with Slurm's types"
t_is "$(same "$T/sinfo.json" "$T/sinfo.yaml.json")" ok \
    "sinfo --yaml read back is the document --json writes"
t_is "$(head -n 6 "$T/sinfo.yaml")" "$(head -n 6 "$T/real-sinfo.yaml")" \
    "sinfo --yaml begins as Slurm's"

# ---- sacct --json --------------------------------------------------------------
as_user "$ALICE" sacct --json -j "$J1,$J2,$JA" >"$T/sacct.json"
t_is "$?/$(schema "$DBV38" "$T/sacct.json")" 0/ok \
    "sacct --json: meta, errors, jobs; every key of every job in Slurm's dbv0.0.38 job schema, with its type"
t_is "$(pyf '{j["job_id"]: [j["state"]["current"], j["exit_code"], j["time"]["limit"], j["user"]] for j in d["jobs"]}['"$J1"']' "$T/sacct.json")" \
    "[\"FAILED\", {\"status\": \"FAILED\", \"return_code\": 3}, 5, \"$ALICE\"]" \
    "sacct --json: state, exit code as dbv0.0.38 has it, limit in minutes, user"
as_user "$ALICE" sacct --json -j "$J1,$JA" >"$T/sacct-some.json"
as_user "$ALICE" sacct --yaml -j "$J1,$JA" >"$T/sacct.yaml"
yaml2json "$T/sacct.yaml" "$T/sacct.yaml.json"
t_is "$?/$(same "$T/sacct-some.json" "$T/sacct.yaml.json")" 0/ok \
    "sacct --yaml read back is the document sacct --json writes (no slurmdbd: no real sacct --yaml to compare)"
OUT=$(as_user "$ALICE" sacct --json -P -j "$J1" 2>&1)
t_is "$?/$OUT" "1/sacct: error: --json writes every field Loom has; it takes no --parsable" \
    "sacct --json -P is refused"
/usr/bin/scancel "$RA" >/dev/null 2>&1

t_done
