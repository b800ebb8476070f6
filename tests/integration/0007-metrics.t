#!/usr/bin/env bash
# 0007-metrics.t - GET /metrics of a loomd that has run a local and a sim
# job, refused a request, compared a goal and answered requests (so that
# every family has samples, but loom_adaptor_own_seconds, which only a
# cluster reached through an API has, and none is here: it is declared
# with no series) passes `promtool check metrics` (Debian's
# prometheus package; without promtool this test fails, it never skips):
# HELP and TYPE for every family, each family's samples together, the
# families docs/api.md lists and no other, labels bounded (no job or node
# id, no raw path); and the Grafana dashboard in docs/ is JSON whose
# panels query every family.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

PROMTOOL=$(command -v promtool)
t_ok $? "promtool is installed (Debian: apt-get install prometheus; ./bootstrap check installs it)" ||
    t_bail "no promtool: install Debian's prometheus package"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2

[cluster sim]
adaptor = sim
nodes = 4
speed = 100
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
submit '{"name": "l", "command": ["/bin/true"], "request": {"cluster": "local"}}'
LJ=$JOB
submit '{"name": "s", "command": ["/bin/true"], "request": {"cluster": "sim"}, "env": {"LOOM_SIM_RUNTIME_S": "1"}}'
SJ=$JOB
wait_for 'ended "$LJ" && ended "$SJ"' 30
t_is "$(field "$LJ" .state)/$(field "$SJ" .state)" completed/completed \
    "a local and a sim job completed"
t_is "$(field "$LJ" .account)/$(field "$SJ" .account)" "$T_USER/$T_USER" \
    "... as $T_USER, the account the admin maps to (loom_jobs' account label)"
# a job that waits for the one node: a scheduling cycle starts it
submit '{"name": "w1", "command": ["/bin/sleep", "1"], "request": {"cluster": "local"}}'
W1=$JOB
submit '{"name": "w2", "command": ["/bin/true"], "request": {"cluster": "local"}}'
W2=$JOB
wait_for 'ended "$W1" && ended "$W2"' 30
t_is "$(field "$W2" .state)" completed "a job that waited for the node completed"

# a refusal (no token), a mismatch (a goal the node does not meet), a
# request of each status class
api_token=$TOKEN
TOKEN= api GET /v1/clusters >/dev/null
TOKEN=$api_token
t_is "$STATUS" 401 "a request without a token is refused"
api PUT /v1/goal/nodes/local/n1 '{"attributes": {"kernel": "6.1"}}' >/dev/null
t_is "$STATUS" 200 "a goal for local/n1"
wait_for 'api GET /v1/state/diff >/dev/null; [ "$(jlen "$BODY" .items)" = 1 ]' 30
t_is "$(jget "$BODY" .items.0.attribute)" kernel "the mismatch is shown"
api GET /v1/jobs/999 >/dev/null
t_is "$STATUS" 404 "a job that does not exist: 404"

curl -s -o "$T/metrics" -w '%{http_code} %{content_type}' "$LOOM_URL/metrics" >"$T/metrics.status"
t_is "$(cat "$T/metrics.status")" "200 text/plain; version=0.0.4" \
    "GET /metrics: 200, the Prometheus text format"
"$PROMTOOL" check metrics <"$T/metrics" >"$T/promtool.out" 2>&1
t_is "$?" 0 "promtool check metrics passes" ||
    t_diag "$(cat "$T/promtool.out")" "$(cat "$T/metrics")"
t_is "$(cat "$T/promtool.out")" "" "... with nothing to say"

# Every family: HELP, then TYPE, then its samples, all together; every
# sample belongs to the family declared last. Each has samples but those
# named in argv[2], which may have none (their counts on the third line).
cat >"$T/families.py" <<'EOF'
import re, sys
fams, seen, bad, cur = {}, [], [], None
may_be_empty = sys.argv[2].split()
suffixes = {"summary": ("", "_sum", "_count"), "histogram": ("_bucket", "_sum", "_count")}
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"# (HELP|TYPE) (\S+) (.*)$", line)
    if m:
        kind, name, rest = m.groups()
        if kind == "HELP":
            if name in fams:
                bad.append("%s declared twice" % name)
            fams[name] = {"help": rest, "type": None, "samples": 0}
            seen.append(name)
            cur = name
        elif name != cur or fams[cur]["type"]:
            bad.append("TYPE of %s not right after its HELP" % name)
        else:
            fams[cur]["type"] = rest
        continue
    name = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0)
    f = fams.get(cur)
    if not f or not any(name == cur + s for s in suffixes.get(f["type"], ("",))):
        bad.append("sample %s outside its family (after %s)" % (name, cur))
        continue
    f["samples"] += 1
for name in seen:
    if not fams[name]["type"]:
        bad.append("%s has no TYPE" % name)
    if not fams[name]["samples"] and name not in may_be_empty:
        bad.append("%s has no samples" % name)
print(" ".join(sorted(seen)))
print("; ".join(bad))
print(" ".join("%s=%d" % (n, fams[n]["samples"] if n in fams else -1)
               for n in may_be_empty))
EOF
python3 "$T/families.py" "$T/metrics" loom_adaptor_own_seconds >"$T/families.out"
t_is "$(sed -n 1p "$T/families.out")" \
    "loom_adaptor_op_failures_total loom_adaptor_op_seconds loom_adaptor_own_seconds loom_auth_denials_total loom_auth_verifications_total loom_cluster_nodes loom_cluster_up loom_db_commit_failures_total loom_db_commit_jobs loom_db_commit_seconds loom_http_request_seconds loom_jobs loom_maintenance_requests loom_mismatches loom_nodes loom_sched_cycle_jobs_considered loom_sched_cycle_jobs_started loom_sched_cycle_last_seconds loom_sched_cycle_seconds" \
    "the families: those docs/api.md lists"
t_is "$(sed -n 2p "$T/families.out")" "" \
    "each with HELP, TYPE and samples, its samples together" || t_diag "$(cat "$T/metrics")"
t_is "$(sed -n 3p "$T/families.out")" loom_adaptor_own_seconds=0 \
    "loom_adaptor_own_seconds is declared and has no series: no cluster here is reached through an API"
# the families docs/api.md lists (in its section GET /metrics) are the
# ones served
t_is "$(sed -n '/^### GET \/metrics/,/^### /p' "$LOOM_TOP_SRCDIR/docs/api.md" |
        grep -oE '^\| `loom_[a-z_]+`' | tr -d '|` ' | sort | tr '\n' ' ')" \
    "$(sed -n 1p "$T/families.out") " "docs/api.md lists exactly these families"

m() { grep -E "^$1 " "$T/metrics" | awk '{print $NF}'; }
t_is "$(m 'loom_adaptor_op_seconds_count\{cluster="local",op="start"\}')" 3 \
    "three starts on local"
t_is "$(m "loom_jobs\\{state=\"completed\",cluster=\"local\",source=\"local\",account=\"$T_USER\"\\}")/$(m "loom_jobs\\{state=\"completed\",cluster=\"sim\",source=\"local\",account=\"$T_USER\"\\}")" \
    3/1 "loom_jobs: the completed jobs of each cluster, by source and account"
t_is "$(m "loom_jobs\\{state=\"pending\",cluster=\"local\",source=\"local\",account=\"$T_USER\"\\}")" 0 \
    "loom_jobs: every state, zeros included"
t_is "$(m 'loom_nodes\{cluster="sim",state="idle"\}')" 4 "loom_nodes: the sim cluster's 4 idle nodes"
t_like "$(m 'loom_sched_cycle_seconds_count')" '^[1-9][0-9]*$' "scheduling cycles counted"
t_like "$(m 'loom_sched_cycle_jobs_started_sum')" '^[1-9][0-9]*$' "... and the job a cycle started"
t_like "$(m 'loom_db_commit_seconds_count')" '^[1-9][0-9]*$' "commits counted"
t_like "$(m 'loom_db_commit_jobs_sum')" '^[1-9][0-9]*$' "the jobs they wrote counted"
t_is "$(m 'loom_mismatches\{attribute="kernel"\}')" 1 "loom_mismatches: kernel"
t_is "$(m 'loom_maintenance_requests\{state="done"\}')" 0 "loom_maintenance_requests: every state"
t_is "$(m 'loom_auth_denials_total\{kind="none",reason="missing"\}')" 1 \
    "loom_auth_denials_total: the request without a token"
t_like "$(m 'loom_auth_verifications_total\{kind="loom",result="ok"\}')" '^[1-9][0-9]*$' \
    "loom_auth_verifications_total: the admin token's requests"
t_is "$(m 'loom_http_request_seconds_count\{method="GET",route="/v1/jobs/\{id\}",code="4xx"\}')" 1 \
    "loom_http_request_seconds: by the route's pattern and status class"
t_is "$(m 'loom_http_request_seconds_count\{method="GET",route="/v1/clusters",code="4xx"\}')" 1 \
    "... the refused request too"
t_is "$(grep -cE '^loom_[a-z_]+\{[^}]*(route="/v1/jobs/[0-9]|node="|job=")' "$T/metrics")" 0 \
    "no label names a job, a node or a raw path"

# The Grafana dashboard: JSON, a panel for every family
python3 - "$LOOM_TOP_SRCDIR/docs/grafana-dashboard.json" "$(sed -n 1p "$T/families.out")" >"$T/grafana.out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
exprs = " ".join(t.get("expr", "") for p in d["panels"] for t in p.get("targets", []))
missing = [f for f in sys.argv[2].split() if f not in exprs]
print("missing: " + " ".join(missing) if missing else "ok")
PY
t_is "$(cat "$T/grafana.out")" ok "docs/grafana-dashboard.json parses, and its panels query every family"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
