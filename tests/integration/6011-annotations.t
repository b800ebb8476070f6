#!/usr/bin/env bash
# 6011-annotations.t - annotated nodes, and the fabric as one partitioned
# cluster, on a local cluster (4 nodes) and a sim cluster (8 nodes):
# - a node's annotations come from its cluster's section (annotate.KEY for
#   every node, annotate[NODES].KEY for a node list), from its goal (over
#   the section) and from its latest monitoring report (over the goal);
# - a job whose features name an annotation (kernel=6.1) runs only on the
#   node annotated so, as the account its owner maps to; one naming an
#   annotation that a report gave runs on that node; on the sim cluster a
#   4-node job lands on the 4 nodes of a node list; one naming an
#   annotation nobody has is a 422 that says why;
# - a reload with a bad annotate key is refused naming it; one with another
#   value names the cluster in restart_needed;
# - GET /v1/queues?view=fabric lists every cluster's queues as partitions
#   of one cluster (cluster-qualified names, node lists and counts);
#   ?cluster= narrows it, a bad view is a 400 naming it and the views;
#   loomctl queues --fabric shows it as a table;
# - tests/extsched.py --view fabric places a job by those partitions and
#   the annotations;
# - after a restart, the goal and reports (from PostgreSQL) show again.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

EXTSCHED=$LOOM_TOP_SRCDIR/tests/extsched.py

# annot NODE: the node's annotations as sorted JSON.
annot() {
    api GET "/v1/nodes/$1" >/dev/null
    py 'json.dumps(d["annotations"], sort_keys=True)' "$BODY"
}
# t_has GOT TEXT NAME: passes when GOT contains TEXT as it is.
t_has() {
    if [[ $1 == *"$2"* ]]; then
        t_ok 0 "$3"
    else
        t_ok 1 "$3"
        t_diag "  got:      '$1'" "  expected: '$2' in it"
        return 1
    fi
}
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}

t_account CAROL carol || t_bail "cannot make an account"
pg_start || t_bail "PostgreSQL did not start"
map_account carol "$CAROL"
loomd_conf <<EOF
[scheduler]
interval_s = 1

[cluster local]
adaptor = local
nodes = 4
poll_s = 0.2
annotate.site = lab
annotate[n[1-2]].rack = r1
annotate[n3].kernel = 6.1

[cluster sim]
adaptor = sim
nodes = 8
cpus_per_node = 4
memory_mb = 8192
speed = 10
poll_s = 0.2
annotate.os = deb12
annotate[n[1-4]].kernel = 5.15
EOF
cp "$T/loom.conf" "$T/loom.conf.good"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
TC=$(token_for carol user) || t_bail "no token for carol"
TM=$(token_for mona monitor) || t_bail "no monitor token"
wait_for '[ "$(api GET /v1/nodes >/dev/null; py "len(d[\"items\"])" "$BODY")" = 12 ]' 30 ||
    t_bail "the 12 nodes did not show"

# ---- from the configuration ----------------------------------------------------
t_is "$(annot local/n1)" '{"rack": "r1", "site": "lab"}' \
    "local/n1: annotate.site (every node) and annotate[n[1-2]].rack"
t_is "$(annot local/n3)" '{"kernel": "6.1", "site": "lab"}' \
    "local/n3: annotate[n3].kernel"
t_is "$(annot local/n4)" '{"site": "lab"}' "local/n4: in no list, site only"
t_is "$(annot sim/n4)" '{"kernel": "5.15", "os": "deb12"}' \
    "sim/n4: its cluster's labels, not local's"
t_is "$(annot sim/n5)" '{"os": "deb12"}' "sim/n5: outside n[1-4]"
api GET "/v1/nodes?cluster=local" >/dev/null
t_is "$(py '[n["annotations"].get("site") for n in d["items"]]' "$BODY")" \
    '["lab", "lab", "lab", "lab"]' "GET /v1/nodes lists the annotations too"

# ---- from the goal and from a report -------------------------------------------
api PUT /v1/goal/nodes/local/n1 '{"attributes":{"site":"lab2","os_image":"deb12-v2"}}' >/dev/null
t_is "$STATUS" 200 "a goal for local/n1" || t_diag "$BODY"
wait_for '[ "$(annot local/n1)" = "{\"os_image\": \"deb12-v2\", \"rack\": \"r1\", \"site\": \"lab2\"}" ]' 30
t_is "$(annot local/n1)" '{"os_image": "deb12-v2", "rack": "r1", "site": "lab2"}' \
    "the goal's attributes show, its site over the configuration's"
api PUT /v1/goal/nodes/local/n2 '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 200 "a goal of kernel 6.1 for local/n2" || t_diag "$BODY"
TOKEN=$TM api POST /v1/actual/nodes/local/n2 '{"attributes":{"kernel":"6.0","gpu_driver":550}}' >/dev/null
t_is "$STATUS" 200 "a monitoring report of kernel 6.0 for local/n2" || t_diag "$BODY"
wait_for '[ "$(annot local/n2)" = "{\"gpu_driver\": 550, \"kernel\": \"6.0\", \"rack\": \"r1\", \"site\": \"lab\"}" ]' 30
t_is "$(annot local/n2)" '{"gpu_driver": 550, "kernel": "6.0", "rack": "r1", "site": "lab"}' \
    "the report shows, its kernel over the goal's, its number a number"

# ---- placement ------------------------------------------------------------------
TOKEN=$TC
for i in 1 2; do
    submit "{\"name\":\"k61-$i\",\"command\":[\"/bin/sh\",\"-c\",\"id -un\"],\"request\":{\"features\":[\"kernel=6.1\"]}}" ||
        t_bail "no job asking for kernel=6.1"
    K61[$i]=$JOB
done
submit '{"name":"k60","command":["/bin/sh","-c","id -un"],"request":{"features":["kernel=6.0","gpu_driver=550"]}}' ||
    t_bail "no job asking for kernel=6.0"
K60=$JOB
for id in "${K61[@]}" "$K60"; do
    wait_for 'ended "$id"' 60 || t_diag "job $id did not end: $BODY"
done
for i in 1 2; do
    job "${K61[$i]}"
    t_is "$(py '[d["state"], d["cluster"], d["nodes"], d["account"]]' "$BODY")" \
        "[\"completed\", \"local\", [\"n3\"], \"$CAROL\"]" \
        "job k61-$i (features kernel=6.1) ran on local/n3, the node annotated so, as $CAROL"
    t_is "$(cat "$T/home/$CAROL/loom-${K61[$i]}.out" 2>&1)" "$CAROL" \
        "... and id -un says $CAROL"
done
job "$K60"
t_is "$(py '[d["state"], d["cluster"], d["nodes"]]' "$BODY")" \
    '["completed", "local", ["n2"]]' \
    "a job asking for kernel=6.0 and gpu_driver=550 ran on local/n2, as reported"
t_is "$(cat "$T/home/$CAROL/loom-$K60.out" 2>&1)" "$CAROL" "... as $CAROL"

submit '{"name":"k515","command":["true"],"request":{"cluster":"sim","nodes":4,"features":["kernel=5.15","os=deb12"],"walltime_s":60},"env":{"LOOM_SIM_RUNTIME_S":"1"}}' ||
    t_bail "no sim job"
K515=$JOB
wait_for 'ended "$K515"' 60
job "$K515"
t_is "$(py '[d["state"], sorted(d["nodes"])]' "$BODY")" \
    '["completed", ["n1", "n2", "n3", "n4"]]' \
    "a 4-node sim job asking for kernel=5.15 ran on sim/n[1-4], the node list annotated so"

submit '{"name":"none","command":["true"],"request":{"features":["kernel=9.9"]}}' >/dev/null 2>&1
t_is "$STATUS/$(jget "$BODY" .error.code)" 422/unprocessable \
    "a job asking for an annotation no node has: 422"
t_has "$(jget "$BODY" .error.message)" "and its features; the largest matching set has 0" \
    "... saying that no node has its features"
TOKEN=$ADMIN

# ---- a bad annotate key: the reload is refused -----------------------------------
sed -i '/^annotate\[n3\]\.kernel = 6.1$/a annotate[n[1-3]].rack = r2' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "a reload whose annotate keys give local/n1 two racks: 400"
t_has "$(jget "$BODY" .error.message)" "key 'annotate[n[1-3]].rack': node n1 has annotation 'rack' from key 'annotate[n[1-2]].rack' already" \
    "... naming both keys and the node"
cp "$T/loom.conf.good" "$T/loom.conf"
printf 'annotate.bad/name = x\n' >>"$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 400 "a reload with annotate.bad/name: 400"
t_has "$(jget "$BODY" .error.message)" "key 'annotate.bad/name': an annotation name has 1 to 64 letters, digits" \
    "... naming the key and what a name may be"
cp "$T/loom.conf.good" "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .restart_needed)" "200/[]" \
    "the file as loomd runs it: nothing needs a restart"
sed -i 's/^annotate\.site = lab$/annotate.site = lab3/' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS/$(jget "$BODY" .restart_needed)" '200/["local"]' \
    "another value of annotate.site: local needs a restart, and the answer says so"
polls_pass local 1 || t_diag "local was not polled again within 60 s"
t_is "$(annot local/n4)" '{"site": "lab"}' \
    "... and until then the node keeps its label, polled again"
cp "$T/loom.conf.good" "$T/loom.conf"

# ---- the fabric as one partitioned cluster ---------------------------------------
api GET "/v1/queues?view=fabric" >/dev/null
t_is "$STATUS/$(jget "$BODY" .view)" 200/fabric "GET /v1/queues?view=fabric"
t_is "$(py '[[p["name"], p["cluster"], p["queue"], p["node_count"], len(p["nodes"]), p["cpus"]] for p in d["items"]]' "$BODY")" \
    '[["local/default", "local", "default", 4, 4, 4], ["sim/default", "sim", "default", 8, 8, 32]]' \
    "every cluster's queue is a partition with a cluster-qualified name, its nodes and counts"
t_is "$(py 'd["items"][0]["nodes"]' "$BODY")" \
    '["local/n1", "local/n2", "local/n3", "local/n4"]' "... its nodes by id"
t_is "$(py 'sum(d["items"][1]["nodes_by_state"].values())' "$BODY")" 8 \
    "... and its nodes counted by state"
api GET "/v1/queues?view=fabric&cluster=sim" >/dev/null
t_is "$(py '[p["name"] for p in d["items"]]' "$BODY")" '["sim/default"]' \
    "?cluster=sim narrows the view to sim's partitions"
api GET "/v1/queues?view=clusters" >/dev/null
t_is "$STATUS/$(py '[q["id"] for q in d["items"]]' "$BODY")" \
    '200/["local/default", "sim/default"]' "view=clusters: the queues of each cluster"
api GET "/v1/queues?view=flat" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/view "view=flat: 400 on view"
t_has "$(jget "$BODY" .error.message)" "'flat' is not a queue view; the queue views are clusters and fabric" \
    "... naming the value and the views"
OUT=$(loomctl queues --fabric 2>&1)
t_is "$?/$(printf '%s\n' "$OUT" | awk '{print $1, $2, $3, $6, $7}')" \
    "0/PARTITION STATE NODES MAXTIME NODELIST
local/default open 4 UNLIMITED n1,n2,n3,n4
sim/default open 8 UNLIMITED n1,n2,n3,n4,n5,n6,n7,n8" \
    "loomctl queues --fabric: the partitions, their nodes and counts"
OUT=$(loomctl nodes --fabric 2>&1)
t_is "$?/$(printf '%s\n' "$OUT" | head -n 1)" "2/loomctl: nodes takes no --fabric" \
    "loomctl nodes --fabric: refused (exit 2), naming the option"

# ---- an external scheduler asking for that view ----------------------------------
token_for extsched scheduler >"$T/token" || t_bail "no scheduler token"
chmod 0600 "$T/token"
api POST /v1/runtime/scheduler '{"enabled":false}' >/dev/null
t_is "$STATUS" 200 "the built-in scheduler switched off"
TOKEN=$TC
submit '{"name":"ext","command":["/bin/sh","-c","id -un"],"request":{"queue":"default","features":["kernel=6.1","site=lab"]}}' ||
    t_bail "no job for the external scheduler"
EXT=$JOB
TOKEN=$ADMIN
python3 "$EXTSCHED" --url "$LOOM_URL" --token-file "$T/token" --once \
    --view fabric >"$T/ext.out" 2>&1
t_is "$?/$(grep "job $EXT" "$T/ext.out")" "0/start job $EXT on local: n3" \
    "extsched.py --view fabric starts it on local/n3 (partition local/default, kernel=6.1)" ||
    t_diag "$(cat "$T/ext.out")"
wait_for 'ended "$EXT"' 60
job "$EXT"
t_is "$(py '[d["state"], d["nodes"], d["account"]]' "$BODY")" \
    "[\"completed\", [\"n3\"], \"$CAROL\"]" "... where it ran as $CAROL"

# ---- after a restart: goal and reports come back from PostgreSQL ------------------
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
loomd_start || t_bail "loomd did not start again"
wait_for '[ "$(annot local/n2)" = "{\"gpu_driver\": 550, \"kernel\": \"6.0\", \"rack\": \"r1\", \"site\": \"lab\"}" ]' 30
t_is "$(annot local/n2)" '{"gpu_driver": 550, "kernel": "6.0", "rack": "r1", "site": "lab"}' \
    "after a restart local/n2 shows its stored report over its stored goal"
t_is "$(annot local/n1)" '{"os_image": "deb12-v2", "rack": "r1", "site": "lab2"}' \
    "... and local/n1 its stored goal"

loomd_stop
t_is $? 0 "loomd stops with status 0 again" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
