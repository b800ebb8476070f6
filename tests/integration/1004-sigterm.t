#!/usr/bin/env bash
# 1004-sigterm.t - graceful stop: SIGTERM while a stream of submits is in
# flight; loomd exits 0 with its stop lines logged, the request half sent
# at SIGTERM is finished and acknowledged, and every job it acknowledged
# (201) is there after a restart.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
[cluster sim]
adaptor = sim
nodes = 64
cpus_per_node = 32
memory_mb = 131072
speed = 1000
poll_s = 0.2
unpinned_jobs = yes
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# submitter N: POST jobs one after the other (20 a second) until the daemon
# stops answering; one line per request: "STATUS ID".
submitter() {
    local n=$1 i=0 out st id
    while [ ! -e "$T/stop" ]; do
        out=$(curl -s -w '\n%{http_code}' -X POST --max-time 30 \
            -H "Authorization: Bearer $TOKEN" \
            -H 'Content-Type: application/json' \
            --data-binary "{\"name\": \"s$n-$i\", \"command\": [\"/bin/true\"], \"env\": {\"LOOM_SIM_RUNTIME_S\": \"5\"}}" \
            "$LOOM_URL/v1/jobs")
        st=${out##*$'\n'}
        id=
        [[ $out =~ \"id\":\"([0-9]+)\" ]] && id=${BASH_REMATCH[1]}
        echo "$st $id" >>"$T/sub$n.log"
        [ "$st" = 000 ] && break
        i=$((i + 1))
        sleep 0.05
    done
}
SUBS=()
for n in 1 2 3 4; do
    submitter $n &
    SUBS+=($!)
done
t_cleanup 'touch "$T/stop"; for p in "${SUBS[@]}"; do wait_dead "$p" 50 || kill "$p" 2>/dev/null; done'

acked() {
    cat "$T"/sub*.log 2>/dev/null | grep -c '^201 [0-9]'
}
wait_for '[ "$(acked)" -ge 40 ]' 30
t_ok $? "the submitters are going ($(acked) jobs acknowledged so far)"

# One more request, in flight when SIGTERM comes: its headers and half its
# body are sent (slow.ready says so), the rest trickles in at 10 kB/s.
python3 -c 'import json, socket, sys, time
port, token, t = sys.argv[1:4]
body = json.dumps({"name": "slow", "command": ["/bin/true"], "env": {
    "LOOM_SIM_RUNTIME_S": "5", "PAD": "x" * 40000}}).encode()
head = ("POST /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
        "Content-Length: %d\r\nConnection: close\r\n\r\n" % (token, len(body)))
out = "000 "
try:
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
    s.sendall(head.encode() + body[:20000])
    open(t + "/slow.ready", "w").close()
    for i in range(20000, len(body), 2000):
        time.sleep(0.2)
        s.sendall(body[i:i + 2000])
    answer = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        answer += b
    text = answer.decode("utf-8", "replace")
    status = text.split(" ", 2)[1] if text.startswith("HTTP/") else "000"
    doc = json.loads(text.split("\r\n\r\n", 1)[1]) if status == "201" else {}
    out = "%s %s" % (status, doc.get("id", ""))
except (OSError, ValueError, IndexError) as e:
    print("slow request: %s" % e, file=sys.stderr)
open(t + "/sub5.log", "w").write(out + "\n")' "$PORT" "$TOKEN" "$T" &
SUBS+=($!)
wait_for '[ -e "$T/slow.ready" ]' 30
t_ok $? "a request is half sent (its headers and 20 of its 40 kB)"

PID=$LOOMD_PID
T0=${EPOCHREALTIME/[.,]/}
kill -TERM "$PID"
wait_dead "$PID" 600
t_ok $? "loomd exits after SIGTERM"
T1=${EPOCHREALTIME/[.,]/}
wait "$PID"
t_is $? 0 "loomd's exit status is 0"
LOOMD_PID=
t_diag "stopped in $(((T1 - T0) / 1000)) ms"
t_ok "$(grep -q 'SIGTERM: stopping' "$T/loomd.log"; echo $?)" "log: SIGTERM: stopping"
t_ok "$(grep -q 'stopping: finishing requests in flight' "$T/loomd.log"; echo $?)" \
    "log: finishing requests in flight"
t_ok "$(grep -q 'loomd stopped' "$T/loomd.log"; echo $?)" "log: loomd stopped"
t_ok "$(grep -q 'not committed' "$T/loomd.log"; [ $? = 1 ]; echo $?)" \
    "log: no change left uncommitted"

ended=0
for p in "${SUBS[@]}"; do
    wait_dead "$p" 600 && ended=$((ended + 1))
done
t_is "$ended" 5 "the submitters stopped when loomd did"
ACKED=$(cat "$T"/sub*.log | awk '$1 == 201 && $2 != "" {print $2}' | sort -n)
N_ACKED=$(wc -l <<<"$ACKED")
OTHER=$(cat "$T"/sub*.log | awk '$1 != 201 && $1 != "000"' | sort | uniq -c)
t_diag "acknowledged: $N_ACKED; other answers: ${OTHER:-none}"
t_is "$(grep -vE '^ *[0-9]+ 503( |$)' <<<"$OTHER" | grep .)" "" \
    "no answer other than 201, 503 or none at all"
t_like "$(cat "$T/sub5.log" 2>/dev/null)" '^201 [0-9]+$' \
    "the request in flight at SIGTERM was finished and acknowledged"

# ---- after a restart -------------------------------------------------------------
loomd_start || t_bail "loomd did not start again"
api GET /v1/jobs >/dev/null
KNOWN=$(py '"\n".join(sorted((j["id"] for j in d["items"]), key=int))' "$BODY")
MISSING=$(comm -23 <(sort <<<"$ACKED") <(sort <<<"$KNOWN"))
t_is "$MISSING" "" "every acknowledged job is there after the restart"
t_ok "$( (($(wc -l <<<"$KNOWN") >= N_ACKED)) && echo 0 || echo 1)" \
    "at least as many jobs as were acknowledged"
t_is "$(pg_sql "SELECT count(*) FROM jobs WHERE id IN ($(paste -sd, <<<"$ACKED"))")" \
    "$N_ACKED" "every acknowledged job is in the database"
# Their contents too: a sample of them by name.
bad=0
for id in $(head -n 5 <<<"$ACKED") $(tail -n 5 <<<"$ACKED"); do
    api GET "/v1/jobs/$id" >/dev/null
    [[ $STATUS == 200 && $(jget "$BODY" .name) =~ ^(s[1-4]-[0-9]+|slow)$ ]] || bad=$((bad + 1))
done
t_is "$bad" 0 "the first and last acknowledged jobs read back whole"
wait_for 'api GET "/v1/jobs?state=completed" >/dev/null; [ "$(jlen "$BODY" .items)" -ge "$N_ACKED" ]' 30
t_ok $? "the acknowledged jobs all run to completion after the restart"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
