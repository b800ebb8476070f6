#!/usr/bin/env bash
# 9001-pg-disk-full.t - PostgreSQL's data directory and WAL fill up under a
# submit load from several clients: submits get 503 with a message that
# says why, never 201 for a job that is not committed; reads go on; when
# space returns loomd recovers by itself, and every acknowledged job is in
# the database once.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

[ "$(id -u)" = 0 ] || t_bail "this test mounts a tmpfs: it must run as root"
DISK=$T/pgdisk
t_tmpfs "$DISK" 96m || t_bail "cannot mount a tmpfs on $DISK"
# 1 MB WAL segments: the WAL needs new space every few hundred submits.
pg_start "$DISK/data" --wal-segsize=1 || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(local_cluster 2 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# client C: submits jobs named and keyed cC-1, cC-2, ... until $T/stop
# exists; a key answered 503 (or not at all) is sent again, a key answered
# anything else is done. One line per answer in $T/client.C: key, status,
# and the job's id (201) or the body of the answer.
client() {
    local c=$1 n=0 key code msg
    while [ ! -e "$T/stop" ]; do
        n=$((n + 1))
        key=c$c-$n
        while [ ! -e "$T/stop" ]; do
            code=$(curl -s -o "$T/client.$c.body" -w '%{http_code}' \
                --max-time 30 -X POST -H 'Content-Type: application/json' \
                -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $key" \
                --data-binary '{"name": "'"$key"'", "command": ["/bin/true"], "request": {"cluster": "local"}}' \
                "$LOOM_URL/v1/jobs")
            if [ "$code" = 201 ]; then
                msg=$(sed -n 's/^{"id": *"\([0-9]*\)".*/\1/p' "$T/client.$c.body")
            else
                msg=$(tr -d '\n' <"$T/client.$c.body")
            fi
            printf '%s %s %s\n' "$key" "${code:-000}" "$msg" >>"$T/client.$c"
            case $code in
            503 | 000 | "") t_sleep 0.1 ;;
            *) break ;;
            esac
        done
    done
}

# answers STATUS: how many answers with STATUS the clients have had.
answers() {
    cat "$T"/client.? 2>/dev/null | awk -v s="$1" '$2 == s' | wc -l
}

CLIENTS=4
PIDS=()
for ((c = 1; c <= CLIENTS; c++)); do
    : >"$T/client.$c"
    client "$c" &
    PIDS+=($!)
    t_cleanup "kill ${PIDS[*]: -1} 2>/dev/null"
done
wait_for '[ "$(answers 201)" -ge 40 ]' 120
t_ok "$([ "$(answers 201)" -ge 40 ]; echo $?)" "the clients' submits are accepted"

# ---- the disk fills up ---------------------------------------------------------
FILLED_AT=$(answers 503)
dd if=/dev/zero of="$DISK/filler" bs=64k >/dev/null 2>&1
t_is "$(df --output=avail -k "$DISK" | tail -n 1 | tr -d ' ')" 0 \
    "the file system of the data directory and the WAL is full"
wait_for '[ "$(answers 503)" -ge $((FILLED_AT + 20)) ]' 120
t_ok "$([ "$(answers 503)" -ge $((FILLED_AT + 20)) ]; echo $?)" \
    "submits on a full disk are refused with 503" ||
    t_diag "$(tail -n 5 "$T"/client.?)"
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd runs on with the disk full"
t_is "$(cat "$T"/client.? | awk '$2 != 201 && $2 != 503' | wc -l)" 0 \
    "no answer but 201 and 503" ||
    t_diag "$(cat "$T"/client.? | awk '$2 != 201 && $2 != 503' | sort | uniq -c | head)"
# The message says why: PostgreSQL's reason (the heap of the jobs table
# could not grow) when it refused the write; "unavailable" when it ended the
# session (a WAL that cannot grow is a PANIC: every session ends).
FULL_RE='the database could not store the job \(jobs: (insert|write): could not extend file "base/[0-9]+/[0-9]+": No space left on device\): it was not accepted; retry later'
DOWN_MSG='database unavailable: the job was not accepted; retry later'
awk '$2 == 503 {$1 = $2 = ""; print substr($0, 3)}' "$T"/client.? |
    python3 -c 'import json, sys
for line in sys.stdin:
    try:
        print(json.loads(line)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        print("not an error body: " + line.strip())' >"$T/refusals"
t_is "$(grep -v -x -E -e "$FULL_RE" -e "$DOWN_MSG" "$T/refusals" | sort -u)" "" \
    "every 503 says the job was not accepted, and why"
t_ok "$(grep -q -x -E "$FULL_RE" "$T/refusals"; echo $?)" \
    "the 503s name the full disk: $(grep -m 1 -x -E "$FULL_RE" "$T/refusals")"

api GET /v1/jobs?limit=1 >/dev/null
t_is "$STATUS" 200 "GET /v1/jobs with the disk full: 200"
api GET /v1/nodes >/dev/null
t_is "$STATUS/$(jlen "$BODY" .items)" 200/2 "GET /v1/nodes with the disk full: 200"
TOKEN_SAVED=$TOKEN
TOKEN=
api GET /healthz >/dev/null
t_is "$STATUS" 200 "/healthz with the disk full: 200"
TOKEN=$TOKEN_SAVED

# ---- space returns ---------------------------------------------------------------
FREED_AT=$(answers 201)
rm -f "$DISK/filler"
wait_for '[ "$(answers 201)" -ge $((FREED_AT + 20)) ]' 180
t_ok "$([ "$(answers 201)" -ge $((FREED_AT + 20)) ]; echo $?)" \
    "when space returns loomd accepts submits again by itself" ||
    t_diag "$(tail -n 5 "$T"/client.?)"
touch "$T/stop"
for p in "${PIDS[@]}"; do
    wait "$p"
done
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd ran through it all"

# ---- every acknowledged job is there, once --------------------------------------
cat "$T"/client.? | awk '$2 == 201 {print $1, $3}' | sort >"$T/acked"
N_ACKED=$(wc -l <"$T/acked")
t_diag "$N_ACKED submits acknowledged, $(answers 503) answered 503"
t_is "$(cut -d' ' -f1 "$T/acked" | sort | uniq -d | wc -l)" 0 \
    "no key was acknowledged twice"
pg_sql "SELECT doc->>'name', id FROM jobs WHERE doc->>'name' LIKE 'c%-%'" |
    tr '|' ' ' | sort >"$T/stored"
t_is "$(wc -l <"$T/stored")" "$N_ACKED" \
    "the database holds as many of the clients' jobs as were acknowledged"
t_is "$(diff "$T/acked" "$T/stored" | head -n 10)" "" \
    "each acknowledged job is in the database once, with the id it was given"

# The jobs ran while the disk was full: their ends waited in memory and
# are committed now.
wait_for '[ "$(pg_sql "SELECT count(*) FROM jobs WHERE doc->>'"'name'"' LIKE '"'c%-%'"' AND state = '"'completed'"'")" = "$N_ACKED" ]' 120
t_is "$(pg_sql "SELECT state, count(*) FROM jobs WHERE doc->>'name' LIKE 'c%-%' GROUP BY state")" \
    "completed|$N_ACKED" "every acknowledged job is recorded completed"

# A restart of loomd reads back the same jobs.
loomd_stop
t_is $? 0 "loomd stops with status 0" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
loomd_start || t_bail "loomd did not start again"
api GET /v1/jobs >/dev/null
t_is "$(py 'len([j for j in d["items"] if j.get("name", "").startswith("c")])' "$BODY")" \
    "$N_ACKED" "after a restart loomd holds the acknowledged jobs, no more"
loomd_stop
t_is $? 0 "loomd stops with status 0 again"
t_done
