#!/usr/bin/env bash
# 9007-pg-kill9.t - PostgreSQL SIGKILLed (the postmaster and all its
# processes at once) and started again, three times, under a load of keyed
# submits from 4 clients that retry a refused submit with its key: while it
# is down a submit gets 503 with Retry-After and nothing else (no 201, no
# 500), loomd runs on and takes submits again by itself once it is back,
# and every acknowledged job is in the database once and runs once (each
# local job appends its id to a file, as a test account).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

CLIENTS=4
CYCLES=3
W=$T/w
mkdir -m 1777 "$W"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 4 1)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"
printf '%s' "$TOKEN" >"$T/token"

python3 -c 'import json, sys
json.dump([{"name": "pgkill", "command": ["/bin/sh", "-c",
            "echo $LOOM_JOB_ID $(id -un) >> " + sys.argv[1] + "/starts"],
            "request": {"cluster": "local", "walltime_s": 300}}],
          sys.stdout)' "$W" >"$T/bodies.json"

# The clients submit until $T/stop exists; a submit is retried with its key
# while the answer is 503 or none, for 300 s at most.
python3 "$LOOM_TOP_SRCDIR/tests/lib/storm.py" --urls "$LOOM_URL" \
    --token-file "$T/token" --bodies "$T/bodies.json" --clients $CLIENTS \
    --jobs 100000 --out "$T/acks" --deadline 300 --stop-file "$T/stop" &
STORM=$!
t_cleanup "kill $STORM 2>/dev/null"

acks() { cat "$T"/acks.[0-9] 2>/dev/null | wc -l; }
# refused STATUS: how many answers STATUS the clients have had and retried.
refused() {
    cat "$T"/acks.*.retries 2>/dev/null | awk -v s="$1" '$2 == s' | wc -l
}

for ((cycle = 1; cycle <= CYCLES; cycle++)); do
    A0=$(acks)
    wait_for '[ "$(acks)" -ge $((A0 + 30)) ] || ! alive $STORM' 120
    t_ok "$([ "$(acks)" -ge $((A0 + 30)) ]; echo $?)" \
        "kill $cycle: the clients' submits are acknowledged before it"

    R0=$(refused 503)
    pg_kill9
    t_ok $? "kill $cycle: PostgreSQL's processes are SIGKILLed and gone"
    wait_for '[ "$(refused 503)" -ge $((R0 + 10)) ]' 60
    t_ok "$([ "$(refused 503)" -ge $((R0 + 10)) ]; echo $?)" \
        "kill $cycle: the clients' submits get 503 while it is down"
    # Once the clients have seen 503, loomd knows: no submit of this time
    # may be acknowledged (an acknowledged one would be lost).
    A1=$(acks)
    rm -f "$T/h"
    api POST /v1/jobs '{"command": ["/bin/true"], "request": {"cluster": "local"}}' \
        -D "$T/h" >/dev/null
    t_is "$STATUS/$(jget "$BODY" .error.code 2>/dev/null)" 503/unavailable \
        "kill $cycle: a submit while it is down: 503 unavailable" || t_diag "$BODY"
    t_like "$(jget "$BODY" .error.message 2>/dev/null)" 'database unavailable' \
        "kill $cycle: ... the message says why"
    t_like "$(grep -i '^Retry-After:' "$T/h" | tr -d '\r')" \
        '^[Rr]etry-[Aa]fter: *[0-9]+$' "kill $cycle: ... with Retry-After"
    api GET /v1/jobs?limit=1 >/dev/null
    t_is "$STATUS" 200 "kill $cycle: reads go on from the snapshot"
    t_is "$(acks)" "$A1" "kill $cycle: nothing acknowledged while it is down"
    t_ok "$(alive "$LOOMD_PID"; echo $?)" "kill $cycle: loomd runs on"

    pg_restart_same || t_bail "PostgreSQL did not start again"
    A2=$(acks)
    wait_for '[ "$(acks)" -ge $((A2 + 20)) ]' 120
    t_ok "$([ "$(acks)" -ge $((A2 + 20)) ]; echo $?)" \
        "kill $cycle: loomd takes submits again by itself once it is back"
done

touch "$T/stop"
wait_for '! alive $STORM' 300
wait "$STORM"
t_is "$?" 0 "every client had every submit acknowledged (no answer but 201, 200 and 503)"
cat "$T"/acks.*.err 2>/dev/null | head -5 | while read -r l; do t_diag "$l"; done
t_is "$(cat "$T"/acks.*.retries | awk '$2 != 503 && $2 != 0' | wc -l)" 0 \
    "the refusals were all 503 (or no answer)"
t_diag "$(acks) submits acknowledged, $(refused 503) answers 503, $(refused 0) without an answer"

# ---- nothing lost, nothing doubled --------------------------------------------
cat "$T"/acks.[0-9] | awk '{print $1, $2}' | sort -u >"$T/acked"
N=$(cut -d' ' -f1 "$T/acked" | sort -u | wc -l)
t_is "$(wc -l <"$T/acked")" "$N" "$N keys acknowledged, each always with the same job"
pg_sql "SELECT idem_key || ' ' || id FROM jobs WHERE idem_key LIKE 'storm-%'" |
    sort >"$T/stored"
t_is "$(comm -23 "$T/acked" "$T/stored" | wc -l)" 0 \
    "every acknowledged job is in PostgreSQL, with its id" ||
    t_diag "$(comm -23 "$T/acked" "$T/stored" | head -5)"
# A submit whose commit came through but whose answer did not (the kill
# cut it) is in the database; its client sent it again, and its key
# answered with the same job: no row beyond the acknowledged ones.
t_is "$(comm -13 "$T/acked" "$T/stored" | wc -l)" 0 \
    "PostgreSQL holds no job beyond the acknowledged ones" ||
    t_diag "$(comm -13 "$T/acked" "$T/stored" | head -5)"
t_is "$(pg_sql "SELECT count(*) || ' ' || count(DISTINCT idem_key) FROM jobs WHERE idem_key LIKE 'storm-%'")" \
    "$N $N" "no job twice: $N rows, $N keys"

done_n() { pg_sql "SELECT count(*) FROM jobs WHERE state = 'completed' AND idem_key LIKE 'storm-%'"; }
# four one-cpu nodes run them: on a loaded machine that takes minutes, so
# the wait goes on while jobs complete, and ends after 120 s without one
while :; do
    before=$(done_n)
    wait_for '[ "$(done_n)" = "$N" ] || [ "$(done_n)" != "$before" ]' 120 0.5
    [ "$(done_n)" = "$N" ] || [ "$(done_n)" = "$before" ] && break
done
t_is "$(done_n)" "$N" "every acknowledged job completed"
cut -d' ' -f1 "$W/starts" | sort >"$T/started"
cut -d' ' -f2 "$T/acked" | sort >"$T/ids"
t_is "$(uniq -d "$T/started" | wc -l)/$(wc -l <"$T/started")" "0/$N" \
    "each job's process ran once"
t_is "$(comm -3 "$T/started" "$T/ids" | wc -l)" 0 "... those of the acknowledged jobs"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$ALICE" "they ran as $ALICE"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
