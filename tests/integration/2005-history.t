#!/usr/bin/env bash
# 2005-history.t - the jobs' history and their use, read from PostgreSQL:
# jobs of two accounts on the local cluster (exit 0, exit 3, cancelled
# before it started) in GET /v1/accounting with their exit codes, states,
# node lists, times and cpu-seconds; each filter; a bad parameter or value
# refused naming it; a user sees only its own jobs (private_data); GET
# /v1/usage sums what the jobs used; loomctl history and usage; and fair
# share's usage the same after loomd starts again.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

# err_is STATUS CODE NAME: the last answer has STATUS and an error body
# with CODE.
err_is() {
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" "$1/$2" \
        "$3: HTTP $1, $2" || t_diag "  body: $BODY"
}

# rec ID EXPR: EXPR (Python, over r: the job's record) of job ID in the
# last answer's items.
rec() {
    py "[r for r in d['items'] if r['id'] == '$1'][0] if [r for r in d['items'] if r['id'] == '$1'] else None" "$BODY" |
        python3 -c 'import json, sys
r = json.load(sys.stdin)
v = eval(sys.argv[1]) if r is not None else "absent"
print(v if isinstance(v, str) else json.dumps(v))' "$2"
}

# ids: the ids of the last answer's items, in order, joined by " ".
ids() {
    py '" ".join(r["id"] for r in d["items"])' "$BODY"
}

t_account ALICE_U alice
t_account BOB_U bob

pg_start || t_bail "PostgreSQL did not start"
accounts_default
map_account alice "$ALICE_U"
map_account bob "$BOB_U"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
policy = priority
[cluster one]
adaptor = local
nodes = 2
cpus_per_node = 2
memory_mb = 1024
poll_s = 0.2
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
ALICE=$(token_for alice user)
BOB=$(token_for bob user)
T0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
T0_EPOCH=$(date -u -d "$T0" +%s)

# ---- jobs of two accounts ----------------------------------------------------------
TOKEN=$ALICE
submit '{"name": "a-zero", "command": ["/bin/sh", "-c", "sleep 2; exit 0"], "request": {"nodes": 1, "cpus_per_node": 2}}' ||
    t_bail "alice cannot submit"
A0=$JOB
submit '{"name": "a-three", "command": ["/bin/sh", "-c", "sleep 2; exit 3"], "request": {"nodes": 2, "cpus_per_node": 1}}'
A3=$JOB
TOKEN=$BOB
submit '{"name": "b-zero", "command": ["/bin/sh", "-c", "sleep 2; exit 0"]}' ||
    t_bail "bob cannot submit"
B0=$JOB
submit '{"name": "b-held", "hold": true, "command": ["/bin/true"]}'
BH=$JOB
api DELETE "/v1/jobs/$BH" >/dev/null
t_is "$STATUS" 200 "bob cancels his held job before it starts"
TOKEN=$ADMIN
for j in "$A0" "$A3" "$B0" "$BH"; do
    wait_for "ended $j" 60 || { job "$j"; t_bail "job $j did not end: $BODY"; }
done
T1_EPOCH=$(($(date -u +%s) + 1))

# ---- the history -----------------------------------------------------------------
TOKEN=$ADMIN
api GET "/v1/accounting?start=$T0_EPOCH&end=$T1_EPOCH" >/dev/null
t_is "$STATUS" 200 "GET /v1/accounting with epoch times: 200"
t_is "$(ids)" "$A0 $A3 $B0 $BH" "the admin sees the four jobs, in id order"
t_is "$(rec "$A0" '[r["state"], r["exit_code"], r["account"], r["owner"], r["cluster"], r["name"]]')" \
    "[\"completed\", 0, \"$ALICE_U\", \"alice\", \"one\", \"a-zero\"]" \
    "exit 0: completed, exit code 0, alice's, as $ALICE_U on one"
t_is "$(rec "$A3" '[r["state"], r["exit_code"], r["account"], r["reason"]]')" \
    "[\"failed\", 3, \"$ALICE_U\", \"exited with code 3\"]" \
    "exit 3: failed, exit code 3, with its reason"
t_is "$(rec "$B0" '[r["state"], r["exit_code"], r["account"], r["owner"]]')" \
    "[\"completed\", 0, \"$BOB_U\", \"bob\"]" "bob's job: completed, as $BOB_U"
t_is "$(rec "$BH" '[r["state"], r["start_time"], r["elapsed_s"], r["cpu_seconds"], r["nodelist"]]')" \
    '["cancelled", null, 0, 0, null]' \
    "the job cancelled before it started: no start, no time, no nodes"
t_is "$(rec "$A3" 'r["nodelist"]')" "n[1-2]" "the two-node job's nodes as a hostlist: n[1-2]"
t_like "$(rec "$A0" 'r["nodelist"]')" '^n[12]$' "the one-node job's node"
for j in "$A0" "$A3" "$B0"; do
    t_is "$(rec "$j" 'r["submit_time"] <= r["start_time"] < r["end_time"] and r["elapsed_s"] >= 1')" \
        true "job $j: submitted, started, ended in that order, and ran 1 s or more"
    t_is "$(rec "$j" 'r["cpu_seconds"] == r["cpus"] * r["elapsed_s"] and r["cpu_seconds"] > 0')" \
        true "job $j: cpu-seconds > 0, its cpus times its elapsed seconds"
done
t_is "$(rec "$A0" 'r["cpus"]'),$(rec "$A3" 'r["cpus"]'),$(rec "$B0" 'r["cpus"]')" "2,2,1" \
    "allocated cpus: nodes times cpus per node"
ELAPSED_A3=$(rec "$A3" 'r["elapsed_s"]')
api GET "/v1/jobs/$A3" >/dev/null
t_is "$(py '(int(__import__("datetime").datetime.fromisoformat(d["end_time"].replace("Z", "+00:00")).timestamp()) - int(__import__("datetime").datetime.fromisoformat(d["start_time"].replace("Z", "+00:00")).timestamp()))' "$BODY")" \
    "$ELAPSED_A3" "elapsed_s is the job's end minus its start"

api GET "/v1/accounting?start=$T0&end=$(date -u -d "@$T1_EPOCH" +%Y-%m-%dT%H:%M:%SZ)" >/dev/null
t_is "$STATUS:$(ids)" "200:$A0 $A3 $B0 $BH" "the same window in RFC 3339"
api GET "/v1/accounting" >/dev/null
t_is "$STATUS:$(ids)" "200:$A0 $A3 $B0 $BH" "without a window: the last day"
t_is "$(py 'd["start"] < d["end"]' "$BODY")" true "... which the answer names"
api GET "/v1/accounting?end=$T0_EPOCH" >/dev/null
t_is "$STATUS:$(ids)" "200:" "a window that ends before the jobs: none"
api GET "/v1/accounting?start=$T1_EPOCH&end=$((T1_EPOCH + 60))" >/dev/null
t_is "$STATUS:$(ids)" "200:" "a window that begins after they ended: none"

# ---- filters and paging --------------------------------------------------------------
W="start=$T0_EPOCH&end=$T1_EPOCH"
api GET "/v1/accounting?$W&account=$ALICE_U" >/dev/null
t_is "$(ids)" "$A0 $A3" "account=: alice's account's jobs"
api GET "/v1/accounting?$W&owner=bob" >/dev/null
t_is "$(ids)" "$B0 $BH" "owner=: bob's jobs"
api GET "/v1/accounting?$W&state=failed" >/dev/null
t_is "$(ids)" "$A3" "state=failed: the job that exited 3"
api GET "/v1/accounting?$W&state=cancelled" >/dev/null
t_is "$(ids)" "$BH" "state=cancelled: the cancelled one"
api GET "/v1/accounting?$W&cluster=one" >/dev/null
t_is "$(ids)" "$A0 $A3 $B0" "cluster=one: the jobs that ran there (the held one never had a cluster)"
api GET "/v1/accounting?$W&limit=3" >/dev/null
t_is "$(ids)" "$A0 $A3 $B0" "limit=3: the first three"
NEXT=$(jget "$BODY" .next)
t_like "$NEXT" "^/v1/accounting\?after=[0-9]+&limit=3&start=${T0//:/%3A}&end=[0-9T%A-Z-]+\$" \
    "... and the next page's link, with the window as resolved"
api GET "$NEXT" >/dev/null
t_is "$(ids):$(jget "$BODY" .next)" "$BH:null" "the next page: the last job, and no further page"

# ---- bad parameters and values ----------------------------------------------------
api GET "/v1/accounting?bogus=1" >/dev/null
err_is 400 invalid_request "an unknown parameter"
t_like "$(jget "$BODY" .error.message)" "unknown query parameter 'bogus'.*start, end, account, owner, cluster, state, limit and after" \
    "... named, with the parameters it takes"
api GET "/v1/accounting?start=yesterday" >/dev/null
err_is 400 invalid_request "start=yesterday"
t_like "$(jget "$BODY" .error.message)" "start must be an RFC 3339 UTC time .* or whole seconds since the epoch, not 'yesterday'" \
    "... named, with what it may be"
api GET "/v1/accounting?state=finished" >/dev/null
err_is 400 invalid_request "state=finished"
t_like "$(jget "$BODY" .error.message)" "finished.*completed" "... naming the states"
api GET "/v1/accounting?cluster=nowhere" >/dev/null
err_is 400 invalid_request "cluster=nowhere"
t_like "$(jget "$BODY" .error.message)" "no cluster 'nowhere'; the clusters are one" "... naming the clusters"
api GET "/v1/accounting?start=$T1_EPOCH&end=$T0_EPOCH" >/dev/null
err_is 400 invalid_request "end before start"
t_like "$(jget "$BODY" .error.message)" "end \($T0_EPOCH\) must come after start \($T1_EPOCH\)" "... saying so"
api GET "/v1/usage?owner=bob" >/dev/null
err_is 400 invalid_request "GET /v1/usage takes no owner"
t_like "$(jget "$BODY" .error.message)" "takes start, end, account and cluster" "... naming what it takes"

# ---- privacy ---------------------------------------------------------------------------
TOKEN=$ALICE
api GET "/v1/accounting?$W" >/dev/null
t_is "$STATUS:$(ids)" "200:$A0 $A3" "alice sees only her own jobs (private_data)"
api GET "/v1/accounting?$W&owner=bob" >/dev/null
t_is "$STATUS:$(ids)" "200:" "... a filter on bob's shows her nothing"
api GET "/v1/usage?$W" >/dev/null
t_is "$(py '[(i["account"], [u["owner"] for u in i["users"]]) for i in d["items"]]' "$BODY")" \
    "[[\"$ALICE_U\", [\"alice\"]]]" "... and counts only her own use"
TOKEN=$BOB
api GET "/v1/accounting?$W" >/dev/null
t_is "$(ids)" "$B0 $BH" "bob sees only his"

# ---- usage -----------------------------------------------------------------------------
TOKEN=$ADMIN
api GET "/v1/accounting?$W" >/dev/null
HIST=$BODY
api GET "/v1/usage?$W" >/dev/null
t_is "$STATUS" 200 "GET /v1/usage: 200"
USAGE=$BODY
t_is "$(py '[(i["cluster"], i["account"], i["jobs"], [u["owner"] for u in i["users"]]) for i in d["items"]]' "$USAGE")" \
    "[[\"one\", \"$ALICE_U\", 2, [\"alice\"]], [\"one\", \"$BOB_U\", 1, [\"bob\"]]]" \
    "per cluster and account, with their owners; the job that never ran is not counted"
WANT=$(py "{a: sum(r['cpu_seconds'] for r in d['items'] if r['account'] == a) for a in ['$ALICE_U', '$BOB_U']}" "$HIST")
t_is "$(py '{i["account"]: round(i["cpu_seconds"]) for i in d["items"]}' "$USAGE")" "$WANT" \
    "each account's cpu-seconds are the sum of its jobs'"
t_is "$(py 'all(abs(i["cpu_hours"] * 3600 - i["cpu_seconds"]) < 1e-6 and i["users"][0]["cpu_seconds"] == i["cpu_seconds"] for i in d["items"])' "$USAGE")" \
    true "cpu_hours is cpu_seconds / 3600; one owner each holds all of it"
api GET "/v1/usage?$W&account=$BOB_U" >/dev/null
t_is "$(py '[i["account"] for i in d["items"]]' "$BODY")" "[\"$BOB_U\"]" "account=: that account alone"
# a window that cuts a job counts the part inside it
START_B0=$(api GET "/v1/jobs/$B0" >/dev/null; py 'int(__import__("datetime").datetime.fromisoformat(d["start_time"].replace("Z", "+00:00")).timestamp())' "$BODY")
api GET "/v1/usage?start=$T0_EPOCH&end=$((START_B0 + 1))&account=$BOB_U" >/dev/null
t_is "$(py '[i["cpu_seconds"] for i in d["items"]]' "$BODY")" "[1.0]" \
    "a window ending 1 s after bob's 1-cpu job started counts 1 cpu-second of it"

# ---- loomctl ---------------------------------------------------------------------------
OUT=$(loomctl history --start "$T0" --end "$T1_EPOCH" 2>&1)
t_is "$?" 0 "loomctl history runs"
t_like "$(head -n 1 <<<"$OUT")" '^JOBID +NAME +ACCOUNT +OWNER +STATE +EXIT +CLUSTER +NODELIST +START +ELAPSED +CPU_S' \
    "... with its table's header"
t_like "$(grep "^$A3 " <<<"$OUT")" "^$A3 +a-three +$ALICE_U +alice +failed +3 +one +n\[1-2\] " \
    "... and the failed job's line"
t_is "$(grep -c "^[0-9]" <<<"$OUT")" 4 "... four jobs"
OUT=$(loomctl history --start "$T0" --end "$T1_EPOCH" -u bob --state cancelled 2>&1)
t_like "$OUT" "^JOBID.*
$BH +b-held +$BOB_U +bob +cancelled +- " "loomctl history -u bob --state cancelled: the cancelled job"
OUT=$(loomctl history --start "$T0" --end "$T1_EPOCH" --account "$ALICE_U" --format jobid,exitcode,state 2>&1)
t_is "$(tr -s ' ' <<<"$OUT")" "JOBID EXIT STATE
$A0 0 completed
$A3 3 failed" "loomctl history --account --format: those columns, alice's jobs"
OUT=$(loomctl history --format jobid,bogus 2>&1)
t_is "$?" 2 "loomctl history --format with an unknown field: a usage error"
t_like "$OUT" "unknown field 'bogus'.*jobid" "... naming it and the fields"
OUT=$(loomctl history --start tomorrow 2>&1)
t_is "$?" 2 "loomctl history --start tomorrow: a usage error"
t_like "$OUT" "--start takes an RFC 3339 time.* or seconds since the epoch, not 'tomorrow'" "... saying what it takes"
OUT=$(loomctl history --state finished 2>&1)
t_is "$?" 2 "loomctl history --state finished: a usage error"
t_like "$OUT" "finished.*completed" "... naming the states"
OUT=$(loomctl history --start "$T1_EPOCH" --end "$T0_EPOCH" 2>&1)
t_is "$?" 2 "loomctl history with its end before its start: a usage error"
OUT=$(loomctl usage --start "$T0" --end "$T1_EPOCH" 2>&1)
t_is "$?" 0 "loomctl usage runs"
t_like "$OUT" "^CLUSTER +ACCOUNT +OWNER +JOBS +CPU_HOURS
one +$ALICE_U +- +2 +[0-9.]+
one +$ALICE_U +alice +2 +[0-9.]+
one +$BOB_U +- +1 +[0-9.]+
one +$BOB_U +bob +1 +[0-9.]+\$" "... a line per account and one per owner"
OUT=$(loomctl --json usage --start "$T0" --end "$T1_EPOCH" 2>&1)
t_is "$(py '[i["jobs"] for i in d["items"]]' "$OUT")" "[2, 1]" "loomctl --json usage: the server's JSON"

# ---- fair share after a restart ------------------------------------------------------
api GET /v1/runtime >/dev/null
BEFORE=$(py 'd["scheduler"]["fairshare"]["owners"]' "$BODY")
t_is "$(py 'sorted(d)' "$BEFORE")" '["alice", "bob"]' "fair share's usage: alice and bob, who ran jobs"
t_is "$(py 'd["alice"]["usage_cpu_s"] > d["bob"]["usage_cpu_s"] > 0' "$BEFORE")" true \
    "... alice used more than bob"
TOKEN=$BOB
api GET /v1/runtime >/dev/null
t_is "$(py 'sorted(d["scheduler"]["fairshare"]["owners"])' "$BODY")" '["bob"]' \
    "bob sees only his own fair-share usage (private_data)"
TOKEN=$ADMIN
loomd_stop
t_is "$?" 0 "loomd stops"
loomd_start || t_bail "loomd did not start again"
api GET /v1/runtime >/dev/null
AFTER=$(py 'd["scheduler"]["fairshare"]["owners"]' "$BODY")
t_is "$(py "sorted(d) == sorted($BEFORE) and all(abs(d[o]['share'] - ($BEFORE)[o]['share']) < 1e-3 and abs(d[o]['usage_cpu_s'] - ($BEFORE)[o]['usage_cpu_s']) <= 1e-3 * ($BEFORE)[o]['usage_cpu_s'] for o in d)" "$AFTER")" \
    true "after a restart, fair share's usage and shares are the same" ||
    t_diag "before: $BEFORE" "after: $AFTER"
api GET "/v1/accounting?$W" >/dev/null
t_is "$(ids)" "$A0 $A3 $B0 $BH" "... and the history too"
# The window is read from the times written beside each doc: "t|0" when
# some jobs ended and every job's two columns are its doc's.
times_check() {
    pg_sql "SELECT count(*) FILTER (WHERE end_time IS NOT NULL) > 3,
                   count(*) FILTER (WHERE start_time IS DISTINCT FROM
                       doc->>'start_time' OR end_time IS DISTINCT FROM
                       doc->>'end_time')
            FROM jobs"
}
t_is "$(times_check)" "t|0" "every job's start and end time columns are its doc's"

# ---- an upgrade: the rows of a database before 0008 get their times ------------
loomd_stop
pg_sql "DROP INDEX jobs_end_time, jobs_running_start;
        ALTER TABLE jobs DROP COLUMN start_time, DROP COLUMN end_time;
        CREATE INDEX jobs_end_time ON jobs ((doc->>'end_time'))
            WHERE doc->>'end_time' IS NOT NULL;
        CREATE INDEX jobs_running_start ON jobs ((doc->>'start_time'))
            WHERE doc->>'end_time' IS NULL AND doc->>'start_time' IS NOT NULL;
        DELETE FROM schema_version WHERE version = 8" >/dev/null
t_is "$(pg_sql "SELECT max(version) FROM schema_version")" 7 "a database as 0007 left it"
loomd_start || t_bail "loomd did not start on it"
t_is "$(pg_sql "SELECT max(version) FROM schema_version")" 8 "loomd applied 0008"
t_is "$(times_check)" "t|0" "... which gave every job its times from its doc"
api GET "/v1/accounting?$W" >/dev/null
t_is "$(ids)" "$A0 $A3 $B0 $BH" "... and the history is the same"
t_done
