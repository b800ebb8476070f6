#!/usr/bin/env bash
# 0006-metrics.t - GET /metrics of a loomd that has run a local and a sim
# job (so that every family has samples) passes `promtool check metrics`
# (Debian's prometheus package; without promtool this test fails, it never
# skips): HELP and TYPE for every family, each family's samples together,
# the families the documentation lists and no other.
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

curl -s -o "$T/metrics" -w '%{http_code} %{content_type}' "$LOOM_URL/metrics" >"$T/metrics.status"
t_is "$(cat "$T/metrics.status")" "200 text/plain; version=0.0.4" \
    "GET /metrics: 200, the Prometheus text format"
"$PROMTOOL" check metrics <"$T/metrics" >"$T/promtool.out" 2>&1
t_is "$?" 0 "promtool check metrics passes" ||
    t_diag "$(cat "$T/promtool.out")" "$(cat "$T/metrics")"
t_is "$(cat "$T/promtool.out")" "" "... with nothing to say"

# Every family: HELP, then TYPE, then its samples, all together; every
# sample belongs to the family declared last.
cat >"$T/families.py" <<'EOF'
import re, sys
fams, seen, bad, cur = {}, [], [], None
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
    if not fams[name]["samples"]:
        bad.append("%s has no samples" % name)
print(" ".join(sorted(seen)))
print("; ".join(bad))
EOF
python3 "$T/families.py" "$T/metrics" >"$T/families.out"
t_is "$(sed -n 1p "$T/families.out")" \
    "loom_adaptor_op_failures_total loom_adaptor_op_seconds loom_cluster_nodes loom_cluster_up loom_jobs" \
    "the families: those docs/api.md lists"
t_is "$(sed -n 2p "$T/families.out")" "" \
    "each with HELP, TYPE and samples, its samples together" || t_diag "$(cat "$T/metrics")"
t_like "$(grep -c '^loom_adaptor_op_seconds_count{cluster="local",op="start"} ' "$T/metrics")/$(grep -c '^loom_adaptor_op_seconds_count{cluster="sim",op="start"} ' "$T/metrics")" \
    '^1/1$' "the adaptors' starts of both clusters are counted"
t_is "$(grep -E '^loom_jobs\{state="completed"\} ' "$T/metrics")" 'loom_jobs{state="completed"} 2' \
    "loom_jobs counts the two completed jobs"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
