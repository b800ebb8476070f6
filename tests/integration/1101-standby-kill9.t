#!/usr/bin/env bash
# 1101-standby-kill9.t - the active loomd killed (SIGKILL) under a storm of
# keyed submits from 8 clients, to a local and a simulated cluster; a
# standby on the same database and state_dir takes over. The clients retry
# each submit with its Idempotency-Key at the other loomd: no acknowledged
# job is lost, none is doubled (in PostgreSQL), and no local job ran twice
# (each one's process writes its id once). Both loomd run as loomd's
# account, the jobs as the admin token's test account. The takeover time
# is printed.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/standby.sh"

CLIENTS=8
PER_CLIENT=${LOOM_STORM_JOBS:-250} # 2,000 submits
N=$((CLIENTS * PER_CLIENT))
N_LOCAL=$((N / 10)) # every tenth body is a local job
KILL_AT=$((N * 3 / 10))

# The jobs run as the test account the admin token maps to: they write
# their ids and who they ran as in $W.
W=$T/w
mkdir -m 1777 "$W"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 4 1)
$(sim_cluster 64 4 8192)
EOF
loomd_start || t_bail "loomd a did not start"
admin_token || t_bail "no admin token"
printf '%s' "$TOKEN" >"$T/token"
peer_start b || t_bail "loomd b did not start"
B=${PEER_URL[b]}
t_is "$(ps -o user= -p "$LOOMD_PID")/$(ps -o user= -p "${PEER_PID[b]}")" \
    "$LOOM_SERVICE_USER/$LOOM_SERVICE_USER" "a and b run as $LOOM_SERVICE_USER"
wait_for 'role "$B" >/dev/null; [ "$ROLE/$ACTIVE_URL" = "standby/$LOOM_URL" ]' 30
role "$B" >/dev/null
t_is "$ROLE/$ACTIVE_URL" "standby/$LOOM_URL" "b stands by and names a, the active one"

python3 -c 'import json, sys
w = sys.argv[1]
local = {"name": "storm-local", "command": ["/bin/sh", "-c",
         "echo $LOOM_JOB_ID $(id -un) >> " + w + "/starts"],
         "request": {"cluster": "local", "walltime_s": 120}}
sim = {"name": "storm-sim", "command": ["/bin/true"],
       "env": {"LOOM_SIM_RUNTIME_S": "1"},
       "request": {"cluster": "sim", "walltime_s": 120}}
json.dump([local] + [sim] * 9, sys.stdout)' "$W" >"$T/bodies.json"

python3 "$LOOM_TOP_SRCDIR/tests/lib/storm.py" --urls "$LOOM_URL,$B" \
    --token-file "$T/token" --bodies "$T/bodies.json" --clients $CLIENTS \
    --jobs "$PER_CLIENT" --out "$T/acks" --deadline 180 &
STORM=$!
t_cleanup "kill $STORM 2>/dev/null"

acks() { cat "$T"/acks.[0-9] 2>/dev/null | wc -l; }
wait_for '[ "$(acks)" -ge $KILL_AT ] || ! alive $STORM' 120
t_ok "$( [ "$(acks)" -ge $KILL_AT ] && echo 0 || echo 1)" \
    "the storm is under way ($(acks) of $N acknowledged by a)"

# ---- a dies ---------------------------------------------------------------
T_KILL=$(now_s)
loomd_kill9
wait_role "$B" active 60
T_ACTIVE=$(now_s)
t_is "$(role "$B")" active "b takes over"
t_diag "takeover: b active $(python3 -c "print('%.2f' % ($T_ACTIVE - $T_KILL))") s after a was killed"

wait_for '! alive $STORM' 300
wait "$STORM"
t_is "$?" 0 "every client had every submit acknowledged"
cat "$T"/acks.*.err 2>/dev/null | head -5 | while read -r l; do t_diag "$l"; done
python3 -c 'import sys
t = float(sys.argv[1]); b = sys.argv[2]; first = None
import glob
for f in glob.glob(sys.argv[3] + ".[0-9]"):
    for line in open(f):
        k, i, st, at, url = line.split()
        if url == b and float(at) > t and (first is None or float(at) < first):
            first = float(at)
print("first submit acknowledged by b %.2f s after the kill" % (first - t)
      if first else "b acknowledged nothing")' "$T_KILL" "$B" "$T/acks" |
    while read -r l; do t_diag "$l"; done

# ---- nothing lost, nothing doubled ------------------------------------------
# Every key acknowledged, always with the same job (201, and 200 for the
# replays after the failure).
cat "$T"/acks.[0-9] | awk '{print $1, $2}' | sort -u >"$T/acked"
t_is "$(cut -d' ' -f1 "$T/acked" | sort -u | wc -l)" "$N" "$N keys acknowledged"
t_is "$(wc -l <"$T/acked")" "$N" "... each always with the same job"
pg_sql "SELECT idem_key || ' ' || id FROM jobs WHERE idem_key LIKE 'storm-%'" |
    sort >"$T/stored"
t_is "$(comm -3 "$T/acked" "$T/stored" | wc -l)" 0 \
    "PostgreSQL holds exactly the acknowledged jobs, with their ids" ||
    t_diag "$(comm -3 "$T/acked" "$T/stored" | head -5)"
t_is "$(pg_sql "SELECT count(*) || ' ' || count(DISTINCT idem_key) FROM jobs")" \
    "$N $N" "no job twice: $N rows, $N keys"

# b serves them all.
TOKEN=$TOKEN LOOM_URL=$B api GET "/v1/jobs?limit=$((N + 10))" >/dev/null
t_is "$(py 'len(d["items"])' "$BODY")" "$N" "b lists the $N jobs"

# ---- they run: the local ones once each -----------------------------------------
done_in() {
    pg_sql "SELECT count(*) FROM jobs WHERE doc->'request'->>'cluster' = '$1' AND state = 'completed'"
}
wait_for '[ "$(done_in local)" = $N_LOCAL ] && [ "$(done_in sim)" = $((N - N_LOCAL)) ]' 300 0.5
t_is "$(done_in local)/$(done_in sim)" "$N_LOCAL/$((N - N_LOCAL))" \
    "every job completed: $N_LOCAL local, $((N - N_LOCAL)) simulated"
t_is "$(wc -l <"$W/starts")" "$N_LOCAL" "$N_LOCAL local processes ran"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$T_USER" \
    "they ran as $T_USER, the admin token's account"
cut -d' ' -f1 "$W/starts" | sort >"$T/started"
t_is "$(uniq -d "$T/started" | wc -l)" 0 "no local job ran twice"
pg_sql "SELECT id FROM jobs WHERE doc->'request'->>'cluster' = 'local'" | sort >"$T/local.ids"
t_is "$(comm -3 "$T/started" "$T/local.ids" | wc -l)" 0 \
    "the processes are those of the local jobs, one each"

peer_stop b
t_is $? 0 "b stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd-b.log" | head -40)"
t_done
