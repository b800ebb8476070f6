#!/usr/bin/env bash
# 7004-loomctl-maint.t - loomctl goal, actual, diff and maintenance against
# a running loomd: the bodies they send (seen in what loomd stored), their
# tables, --json, and their failures (usage errors send nothing; loomd's
# refusals are printed with exit 1).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

LOOMCTL=$LOOM_TOP_BUILDDIR/loomctl
[ -x "$LOOMCTL" ] || t_bail "$LOOMCTL is not built"

# ctl ARGS...: run loomctl with -c; OUT, ERR, RC.
ctl() {
    "$LOOMCTL" -c "$T/loom.conf" "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}

ctl_diag() {
    t_diag "loomctl exit $RC" "stdout: $OUT" "stderr: $ERR"
}

# goal_of NODE: the stored goal's attributes, keys sorted, as JSON.
goal_of() {
    api GET "/v1/goal/nodes/$1" >/dev/null
    py 'dict(sorted(d["attributes"].items()))' "$BODY" 2>/dev/null
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster simA]
adaptor = sim
nodes = 4
cpus_per_node = 8
memory_mb = 8192
speed = 1000
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# ---- goal set, goal show -------------------------------------------------------
ctl goal set simA/n1 kernel=6.1 features=gpu,ib
t_is "$RC/$OUT" 0/ "goal set: exit 0, prints nothing" || ctl_diag
t_is "$(goal_of simA/n1)" '{"features": ["gpu", "ib"], "kernel": "6.1"}' \
    "goal set: kernel a string, features a list"
ctl --json goal set simA/n2 kernel=6.1 cpus=8 note='a b=c'
t_is "$RC" 0 "goal set --json" || ctl_diag
t_is "$(py 'dict(sorted(d["attributes"].items()))' "$OUT" 2>&1)" \
    '{"cpus": "8", "kernel": "6.1", "note": "a b=c"}' \
    "goal set --json: the stored goal; numbers sent as strings, '=' kept"
ctl goal set simA/n2 kernel=6.2
t_is "$(goal_of simA/n2)" '{"kernel": "6.2"}' "goal set replaces the whole goal"

ctl goal show simA/n1
t_is "$RC" 0 "goal show NODE" || ctl_diag
t_like "$OUT" '^NODE +ATTRIBUTE +VALUE +UPDATED' "goal show: a header"
t_like "$OUT" '(^|
)simA/n1 +kernel +6\.1 +[0-9]{4}-' "goal show: the kernel row"
t_like "$OUT" '(^|
)simA/n1 +features +gpu,ib ' "goal show: features joined with ','"
ctl goal show
t_is "$(grep -cE '^simA/n[12] ' <<<"$OUT")" 3 "goal show: every node's rows" ||
    ctl_diag
t_is "$(grep -cE '^simA/n[34] ' <<<"$OUT")" 0 \
    "goal show: nodes without a goal are left out"
ctl --json goal show
t_is "$(py 'sorted(g["node"] for g in d["items"] if g.get("attributes"))' "$OUT" 2>&1)" \
    '["simA/n1", "simA/n2"]' "--json goal show: the items"
ctl goal show simA/n99
t_is "$RC" 1 "goal show of an unknown node: exit 1"

# ---- goal import -------------------------------------------------------------
cat >"$T/goals.json" <<'EOF'
{"simA/n3": {"kernel": "6.1"}, "simA/n4": {"kernel": "6.1", "cpus": 8}}
EOF
ctl goal import "$T/goals.json"
t_is "$RC/$OUT" "0/imported 2 nodes" "goal import of {node: attributes}" ||
    ctl_diag
t_is "$(goal_of simA/n4)" '{"cpus": 8, "kernel": "6.1"}' \
    "goal import: values as the file writes them"
cat >"$T/items.json" <<'EOF'
{"items": [{"node": "simA/n3", "attributes": {"kernel": "7.0"}},
           {"node": "simA/n99", "attributes": {"kernel": "7.0"}}]}
EOF
ctl goal import - <"$T/items.json"
t_is "$RC" 1 "goal import with an unknown node: exit 1"
t_like "$ERR" 'simA/n99' "... naming the node"
t_is "$(goal_of simA/n3)" '{"kernel": "6.1"}' "... and nothing changed"
echo '{"simA/n3": {"kernel": "6.1"' >"$T/bad.json"
ctl goal import "$T/bad.json"
t_like "$RC $ERR" '^1 loomctl: .*bad\.json: line [0-9]+, column [0-9]+: ' \
    "goal import of broken JSON: exit 1, file and line"

# ---- actual report, actual show -----------------------------------------------
ctl actual report simA/n1 kernel=5.10 health=ok
t_is "$RC/$OUT" 0/ "actual report: exit 0, prints nothing" || ctl_diag
ctl actual show simA/n1
t_is "$RC" 0 "actual show" || ctl_diag
t_like "$OUT" '^NODE +ATTRIBUTE +VALUE +SOURCE +TIME' "actual show: a header"
t_like "$OUT" '(^|
)simA/n1 +kernel +5\.10 +report +[0-9]{4}-' "actual show: the report"
t_like "$OUT" '(^|
)simA/n1 +state +up +cluster ' "actual show: the cluster's state"
ctl actual report simA/n1 cpus=4
t_is "$RC" 1 "actual report of a cluster attribute: refused, exit 1"
t_like "$ERR" '^loomctl: .*cpus' "... naming it"
ctl actual report simA/n1 kernel=5.9 --time 2099-01-01T00:00:00Z
t_is "$RC" 1 "actual report --time in the future: exit 1"

# ---- diff ------------------------------------------------------------------------
wait_for 'ctl diff; grep -qE "^simA/n1 +kernel +6\.1 +5\.10 " <<<"$OUT"' 30
t_is "$RC" 0 "loomctl diff" || ctl_diag
t_like "$OUT" '^NODE +ATTRIBUTE +GOAL +ACTUAL +SINCE +ACTION +MAINTENANCE' \
    "diff: a header"
t_like "$OUT" '(^|
)simA/n1 +kernel +6\.1 +5\.10 +[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z +- +-(
|$)' "diff: goal, actual, since; no rule, no request"
t_like "$OUT" '(^|
)simA/n2 +kernel +6\.2 +unknown ' "diff: a goal never reported is unknown"
t_is "$(grep -c '^simA/n4 +cpus ' <<<"$OUT")" 0 \
    "diff: goal cpus 8 equals the cluster's 8"
ctl diff --cluster simA --attribute kernel --node simA/n2
t_is "$(tail -n +2 <<<"$OUT" | awk '{print $1, $2}')" "simA/n2 kernel" \
    "diff --cluster --attribute --node: that row only" || ctl_diag
ctl --json diff --node simA/n1
t_is "$(py '[(r["node"], r["attribute"], r["goal"], r["actual"]) for r in d["items"]]' "$OUT" 2>&1)" \
    '[["simA/n1", "features", ["gpu", "ib"], []], ["simA/n1", "kernel", "6.1", "5.10"]]' \
    "--json diff: the items (the sim node has no features: a mismatch too)"

# ---- maintenance request, list, cancel -------------------------------------------
ctl maintenance request --action node-off --reason "new fan" --duration 600 \
    --start 2030-01-01T00:00:00Z simA/n3
t_is "$RC" 0 "maintenance request, a fixed window" || ctl_diag
M1=$(sed -n 's/^id: *//p' <<<"$OUT")
t_like "$M1" '^[0-9]+$' "request: prints the request, id first"
t_like "$OUT" '(^|
)state: +planned(
|$)' "request: planned"
t_like "$OUT" '(^|
)window\.start: +2030-01-01T00:00:00Z(
|$)' "request: the window sent"
ctl maintenance request --action node-off --duration 60 \
    --start 2030-06-01T00:00:00Z simA/n3
t_is "$RC" 1 "a second open node-off request on the node: exit 1"
t_like "$ERR" "^loomctl: .*node simA/n3 has an open node-off request already \\(maintenance $M1\\)" \
    "... with loomd's reason"

ctl --json maintenance request --action node-off --duration 300 \
    --not-before 2031-01-01T00:00:00Z --count 1 --cluster simA
t_is "$RC" 0 "maintenance request --count --cluster, flexible" || ctl_diag
M2=$(jget "$OUT" .id 2>/dev/null)
t_is "$(py '[len(d["nodes"]), d["window"]["duration_s"], d["state"]]' "$OUT" 2>&1)" \
    '[1, 300, "planned"]' "--json request: one node, the duration, planned"

ctl maintenance
t_is "$RC" 0 "loomctl maintenance" || ctl_diag
t_like "$OUT" '^ *ID +ACTION +STATE +OWNER +CLUSTER +NODES +START +END +REASON' \
    "maintenance: a header"
t_like "$OUT" "(^|
) *$M1 +node-off +planned +loomctl +simA +n3 +2030-01-01T00:00:00Z +2030-01-01T00:10:00Z +new fan(
|\$)" "maintenance: id, action, state, owner, cluster, nodes, window, reason"
ctl maintenance list --cluster nosuch
t_is "$(grep -cE '^ *[0-9]+ ' <<<"$OUT")" 0 "maintenance list --cluster: filtered"
ctl show maintenance "$M1"
t_like "$OUT" '(^|
)reason: +new fan' "show maintenance ID" || ctl_diag

ctl maintenance cancel "$M1"
t_is "$RC/$OUT" "0/$M1 cancelled" "maintenance cancel: id and state" ||
    ctl_diag
ctl maintenance --state cancelled
t_like "$OUT" "(^|
) *$M1 +node-off +cancelled " "maintenance --state cancelled lists it"
ctl maintenance cancel "$M2"
t_is "$RC" 0 "cancel the flexible one" || ctl_diag
ctl maintenance cancel 999999
t_is "$RC" 1 "cancel of an unknown request: exit 1"

# ---- usage errors send nothing ----------------------------------------------------
ctl goal set simA/n1
t_is "$RC" 2 "goal set without attributes: usage (no silent clear)"
ctl goal set n1 kernel=7
t_like "$RC $ERR" '^2 .*CLUSTER/NAME' "goal set of a bare name: usage"
ctl goal set simA/n1 features=a,,b
t_is "$RC" 2 "goal set features with an empty name: usage"
ctl goal set simA/n1 kernel=7 kernel=8
t_is "$RC" 2 "goal set with an attribute twice: usage"
t_is "$(goal_of simA/n1)" '{"features": ["gpu", "ib"], "kernel": "6.1"}' \
    "... none of them changed the goal"
ctl actual report simA/n1 kernel=5 --time yesterday
t_is "$RC" 2 "actual report --time not RFC 3339: usage"
ctl diff --node n1
t_is "$RC" 2 "diff --node of a bare name: usage"
ctl maintenance request simA/n1
t_is "$RC" 2 "maintenance request without --action: usage"
ctl maintenance request --action node-off --start 2030-01-01T00:00:00Z \
    --deadline 2030-02-01T00:00:00Z simA/n1
t_is "$RC" 2 "maintenance request with --start and --deadline: usage"
ctl maintenance request --action node-off --count 2
t_is "$RC" 2 "maintenance request --count without --cluster: usage"
ctl maintenance request --action node-off --count 2 --cluster simA simA/n1
t_is "$RC" 2 "maintenance request with --count and nodes: usage"
ctl maintenance frob
t_is "$RC" 2 "maintenance frob: usage"

alive "$LOOMD_PID"
t_ok $? "loomd is still running"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
