#!/usr/bin/env bash
# 9015-resv-memory.t - ended reservations leave loomd's memory [scheduler]
# resv_memory_s after they ended (0 at first: they stay; then 2 s, set by
# a reload) and are read from PostgreSQL from then on: a user reservation
# done and one cancelled, the maintenance windows of a request done and of
# one cancelled. GET /v1/reservations/{id}, the list and its filters (to
# an admin and to their owner), DELETE (409 for a done one, the record for
# a cancelled one, 403 to another's scheduler), a submit into an ended one and
# the maintenance requests that name them answer the same before and
# after, and after a restart; GET /v1/runtime counts those in memory.
# Then a start reads light the reservations that ended resv_memory_s ago
# (the four, made an hour old): never loaded, counted as let go, and
# every answer about them as from a start that loaded them all; one that
# ended lately, one with a twin in its cluster's system and one with an
# error about a twin are read in full. Then, under a steady load of
# submits with slow writes (a turn always under way), ended jobs still
# leave memory.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
t_account ALICE_U alice
accounts_default
map_account alice "$ALICE_U"
loomd_conf <<EOF
[scheduler]
interval_s = 0.2
resv_memory_s = 0
job_memory_s = 1
[action ok]
command = /bin/true
duration_s = 30
$(sim_cluster 4 1)
EOF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
ADMIN=$TOKEN
ALICE=$(token_for alice user)
ALICE_OP=$(token_for alice operator) # makes alice's reservations
BOB=$(token_for bob scheduler)

# runtime EXPR: EXPR over GET /v1/runtime's scheduler object (s).
runtime() {
    TOKEN=$ADMIN api GET /v1/runtime >/dev/null
    py "$(printf '(lambda s: %s)(d["scheduler"])' "$1")" "$BODY"
}
rstate() {
    TOKEN=$ADMIN api GET "/v1/reservations/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
# resv TOKEN BODY: a reservation; its id in $RV.
resv() {
    TOKEN=$1 api POST /v1/reservations "$2" >/dev/null
    [ "$STATUS" = 201 ] || t_diag "POST /v1/reservations: $STATUS $BODY"
    RV=$(jget "$BODY" .id)
}
# mreq NODE [WINDOW]: a maintenance request on sim/NODE; its id in $MR and
# its reservation's in $MRV.
mreq() {
    TOKEN=$ADMIN api POST /v1/maintenance "$(printf '{"cluster": "sim", "nodes": ["%s"], "action": "ok", "reason": "9015"%s}' \
        "$1" "${2:+, \"window\": $2}")" >/dev/null
    [ "$STATUS" = 201 ] || t_diag "POST /v1/maintenance: $STATUS $BODY"
    MR=$(jget "$BODY" .id)
    MRV=$(jget "$BODY" .reservation)
}
# answers: every answer about the reservations, one a line.
answers() {
    local id q
    for id in $U_DONE $U_CANC $M_DONE $M_CANC $MORE 999; do
        TOKEN=$ADMIN api GET "/v1/reservations/$id" >/dev/null
        echo "GET $id: $STATUS $BODY"
    done
    for q in "" "?state=done" "?state=cancelled&purpose=user" \
        "?purpose=maintenance" "?cluster=sim&state=done"; do
        TOKEN=$ADMIN api GET "/v1/reservations$q" >/dev/null
        echo "list $q: $STATUS $BODY"
    done
    TOKEN=$ALICE api GET "/v1/reservations?owner=alice" >/dev/null
    echo "alice's: $STATUS $BODY"
    TOKEN=$ALICE api GET "/v1/reservations/$U_CANC" >/dev/null
    echo "alice GET $U_CANC: $STATUS $BODY"
    for id in $U_DONE $U_CANC $M_DONE $M_CANC; do
        TOKEN=$ADMIN api DELETE "/v1/reservations/$id" >/dev/null
        echo "DELETE $id: $STATUS $BODY"
    done
    TOKEN=$BOB api DELETE "/v1/reservations/$U_CANC" >/dev/null
    echo "bob DELETE $U_CANC: $STATUS $BODY"
    TOKEN=$ADMIN api POST /v1/jobs "{\"command\": [\"/bin/true\"], \"request\": {\"reservation\": \"$U_DONE\"}}" >/dev/null
    echo "submit into $U_DONE: $STATUS $(jget "$BODY" .error.message 2>/dev/null)"
    for id in $MR_DONE $MR_CANC; do
        TOKEN=$ADMIN api GET "/v1/maintenance/$id" >/dev/null
        echo "maintenance $id: $STATUS $(py 'd["state"] + " " + d["reservation"]' "$BODY")"
    done
}

# ---- four reservations end ------------------------------------------------
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n1"], "duration_s": 2}'
U_DONE=$RV
resv "$ALICE_OP" "{\"cluster\": \"sim\", \"count\": 1, \"start\": \"$(at 3600)\", \"duration_s\": 60}"
U_CANC=$RV
TOKEN=$ALICE_OP api DELETE "/v1/reservations/$U_CANC" >/dev/null
t_is "$STATUS" 200 "alice cancels her reservation $U_CANC"
mreq n2
MR_DONE=$MR M_DONE=$MRV
mreq n3 '{"not_before": "2099-01-01T00:00:00Z", "duration_s": 60}'
MR_CANC=$MR M_CANC=$MRV
TOKEN=$ADMIN api DELETE "/v1/maintenance/$MR_CANC" >/dev/null
t_is "$STATUS" 200 "maintenance request $MR_CANC cancelled"
wait_for '[ "$(rstate "$U_DONE")/$(rstate "$M_DONE")/$(rstate "$M_CANC")" = done/done/cancelled ]' 60
t_is "$(rstate "$U_DONE")/$(rstate "$U_CANC")/$(rstate "$M_DONE")/$(rstate "$M_CANC")" \
    done/cancelled/done/cancelled "the four reservations ended"
answers >"$T/before"
t_is "$(runtime 's["reservations_in_memory"]')/$(runtime 's["reservations_evicted"]')" \
    4/0 "under resv_memory_s = 0 they stay in memory"

# ---- they leave memory -----------------------------------------------------
sed -i 's/^resv_memory_s = 0$/resv_memory_s = 2/' "$T/loom.conf"
TOKEN=$ADMIN api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "resv_memory_s = 2 by a reload" || t_diag "$BODY"
wait_for '[ "$(runtime "s[\"reservations_in_memory\"]")" = 0 ]' 30
t_is "$(runtime 's["reservations_in_memory"]')/$(runtime 's["reservations_evicted"]')" \
    0/4 "GET /v1/runtime: none in memory, 4 let go"
answers >"$T/after"
t_is "$(cat "$T/after")" "$(cat "$T/before")" \
    "every answer about them is the same after they left memory"
t_like "$(grep "^DELETE $U_DONE:" "$T/after")" "409.*reservation $U_DONE is done" \
    "a DELETE of a done one that left memory is 409 with its state"
t_like "$(grep "^DELETE $U_CANC:" "$T/after")" "200.*\"state\":\"cancelled\"" \
    "a DELETE of a cancelled one that left memory answers its record"
t_like "$(grep "^list ?state=done:" "$T/after")" "\"id\":\"$M_DONE\"" \
    "the list with ?state=done shows the ones that left memory"
t_like "$(grep "^alice's:" "$T/after")" "^alice's: 200 .*\"id\":\"$U_CANC\"" \
    "alice (a user) lists her own that left memory"
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n4"], "start": "'"$(at 3600)"'", "duration_s": 60}'
t_is "$RV" $((M_CANC + 1)) "a new reservation takes the next id"
t_is "$(rstate "$RV")" planned "... and is shown beside those read back"
TOKEN=$ALICE_OP api DELETE "/v1/reservations/$RV" >/dev/null
wait_for '[ "$(runtime "s[\"reservations_in_memory\"]")" = 0 ]' 30
answers >"$T/final"

# ---- a restart: ended ones are loaded, then let go --------------------------
loomd_stop
loomd_start || t_bail "loomd did not start again"
wait_for '[ "$(runtime "s[\"reservations_in_memory\"]")" = 0 ]' 30
t_is "$(runtime 's["reservations_in_memory"]')" 0 \
    "after a restart the ended reservations leave memory again"
answers >"$T/restarted"
t_is "$(cat "$T/restarted")" "$(cat "$T/final")" \
    "the answers are the same after a restart"

# ---- a light start: those that ended long ago are never loaded -------------
# Four more end now: YOUNG; TWIN, given a twin in its cluster's system,
# and ERR, given an error about one, as a removal that failed leaves them
# (sim makes no twins, so both are written into PostgreSQL while loomd is
# stopped); LAST, the highest id. All but YOUNG and RV (cancelled, its end
# an hour ahead) are made an hour old. A start with resv_memory_s = 0
# reads every one in full and keeps it: its answers are those of a start
# without light reading. One with resv_memory_s = 600 reads the five old
# ones without a twin or an error light.
rnative() { # ID: its twin's id and its error
    TOKEN=$ADMIN api GET "/v1/reservations/$1" >/dev/null
    py '"%s %s" % ((d["native"] or {}).get("id"), d["native_error"])' "$BODY" 2>/dev/null
}
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n1"], "duration_s": 2}'
YOUNG=$RV
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n2"], "duration_s": 2}'
TWIN=$RV
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n3"], "duration_s": 2}'
ERR=$RV
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n4"], "duration_s": 2}'
LAST=$RV
MORE="$YOUNG $TWIN $ERR $LAST"
wait_for '[ "$(rstate "$YOUNG")/$(rstate "$TWIN")/$(rstate "$ERR")/$(rstate "$LAST")" = done/done/done/done ]' 60
t_is "$(rstate "$YOUNG")/$(rstate "$TWIN")/$(rstate "$ERR")/$(rstate "$LAST")" done/done/done/done \
    "four more reservations are done"
loomd_stop
OLD_START=$(at -3660) OLD_END=$(at -3600)
pg_sql "UPDATE reservations SET doc = regexp_replace(regexp_replace(doc::text,
            '\"start\":\"[^\"]*\"', '\"start\":\"$OLD_START\"'),
            '\"end\":\"[^\"]*\"', '\"end\":\"$OLD_END\"')::json
        WHERE id IN ($U_DONE, $U_CANC, $M_DONE, $M_CANC, $TWIN, $ERR, $LAST)" >/dev/null
pg_sql "UPDATE reservations SET doc = regexp_replace(doc::text, '\"native\":null',
            '\"native\":{\"id\":\"loom-r$TWIN\",\"start\":\"$OLD_START\",\"end\":\"$OLD_END\"}')::json
        WHERE id = $TWIN" >/dev/null
set_error() {
    pg_sql "UPDATE reservations SET doc = regexp_replace(doc::text,
                '\"native_error\":null', '\"native_error\":\"unreserve: refused\"')::json
            WHERE id = $ERR" >/dev/null
}
set_error
t_is "$(pg_sql "SELECT count(*) FROM reservations WHERE doc->>'end' = '$OLD_END'")/$(pg_sql "SELECT doc->'native'->>'id' FROM reservations WHERE id = $TWIN")/$(pg_sql "SELECT doc->>'native_error' FROM reservations WHERE id = $ERR")" \
    "7/loom-r$TWIN/unreserve: refused" "seven ended an hour ago, one with a twin, one with an error"

sed -i 's/^resv_memory_s = 2$/resv_memory_s = 0/' "$T/loom.conf"
loomd_start || t_bail "loomd did not start with resv_memory_s = 0"
# TWIN's removal fails (sim has none to remove) and says so; ERR, over
# without a twin, owes none: its error goes, and is written
wait_for '[ "$(rnative "$TWIN")" != "loom-r$TWIN None" ] && [ "$(rnative "$ERR")" = "None None" ]' 30
t_like "$(rnative "$TWIN")" "^loom-r$TWIN .+" "resv_memory_s = 0: TWIN's twin could not be removed, and it says why"
t_is "$(rnative "$ERR")" "None None" "... ERR's error is gone"
t_is "$(runtime 's["reservations_in_memory"]')/$(runtime 's["reservations_evicted"]')" \
    9/0 "... all 9 are in memory"
answers >"$T/full"
loomd_stop

set_error
sed -i 's/^resv_memory_s = 0$/resv_memory_s = 600/' "$T/loom.conf"
loomd_start || t_bail "loomd did not start with resv_memory_s = 600"
t_like "$(grep 'reservation(s) in' "$T/loomd.log" | tail -n 1)" \
    "loaded 4 reservation\(s\) in [0-9]+ ms; 5 ended before 600 s ago left in the database" \
    "resv_memory_s = 600: 5 old ones are read light, the 4 others in full"
# ERR goes once its error is cleared and written; TWIN stays with its twin
wait_for '[ "$(runtime "s[\"reservations_evicted\"]")" = 6 ]' 30
t_is "$(runtime 's["reservations_in_memory"]')/$(runtime 's["reservations_evicted"]')" \
    3/6 "in memory: YOUNG, RV and TWIN; let go: the 5 read light and ERR"
t_is "$(rnative "$ERR")" "None None" "ERR was read in full: its error is gone"
t_like "$(rnative "$TWIN")" "^loom-r$TWIN .+" "TWIN was read in full: it stays with its twin"
answers >"$T/light"
while IFS= read -r b && IFS= read -r a <&3; do
    t_is "$a" "$b" "the same after a light start: ${b:0:40}"
done <"$T/full" 3<"$T/light"
t_is "$(wc -l <"$T/light")" "$(wc -l <"$T/full")" "... every one of $(wc -l <"$T/full") answers"
resv "$ALICE_OP" '{"cluster": "sim", "nodes": ["sim/n4"], "start": "'"$(at 3600)"'", "duration_s": 60}'
t_is "$RV" $((LAST + 1)) "a new reservation takes the id after LAST's, read light"
TOKEN=$ALICE_OP api DELETE "/v1/reservations/$RV" >/dev/null

# ---- ended jobs leave memory under a steady load of submits -----------------
# Eight clients submit and cancel held jobs without a pause for 20 s, and
# every write of jobs takes 20 ms longer (a slow disk): there is always a
# turn under way, and never a moment when none names any job.
pg_sql "CREATE FUNCTION slow_write() RETURNS trigger LANGUAGE plpgsql AS
    \$\$ BEGIN PERFORM pg_sleep(0.02); RETURN NULL; END \$\$;
    CREATE TRIGGER slow_write AFTER INSERT OR UPDATE ON jobs
    FOR EACH STATEMENT EXECUTE FUNCTION slow_write()" ||
    t_bail "the slow trigger was not made"
E0=$(runtime 's["jobs_evicted"]')
python3 - "$LOOM_URL" "$ADMIN" 20 "$T/evicted" >"$T/load" 2>&1 <<'PY'
import http.client, json, sys, threading, time, urllib.parse
url, token, secs, out = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
u = urllib.parse.urlparse(url)
h = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
end = time.time() + secs
done, errors = [0], []

def client():
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    while time.time() < end and not errors:
        c.request("POST", "/v1/jobs", json.dumps({"name": "load", "hold": True,
                  "command": ["/bin/true"], "request": {"cluster": "sim"}}),
                  headers=h)
        r = c.getresponse()
        body = r.read()
        if r.status != 201:
            errors.append("submit: %d %s" % (r.status, body))
            return
        c.request("DELETE", "/v1/jobs/" + json.loads(body)["id"], headers=h)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            errors.append("cancel: %d" % r.status)
            return
        done[0] += 1

def evicted():
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("GET", "/v1/runtime", headers=h)
    return json.loads(c.getresponse().read())["scheduler"]["jobs_evicted"]

ts = [threading.Thread(target=client) for _ in range(8)]
for t in ts:
    t.start()
time.sleep(secs / 2)
mid = evicted()
while time.time() < end - 1 and not errors:
    time.sleep(0.2)
last = evicted()  # while the clients still submit
for t in ts:
    t.join()
with open(out, "w") as f:
    f.write("%d %d %d\n" % (mid, last, done[0]))
if errors:
    sys.exit(errors[0])
PY
t_is "$?" 0 "eight clients submitted and cancelled jobs for 20 s" || t_diag "$(cat "$T/load")"
read -r MID LAST N <"$T/evicted"
t_diag "jobs submitted and cancelled: $N; let go: $E0 before, $MID halfway, $LAST near the end"
t_ok "$([ "${N:-0}" -ge 100 ]; echo $?)" "the load was steady (${N:-0} jobs)"
t_ok "$([ "${MID:-0}" -gt "$E0" ] && [ "${LAST:-0}" -gt "${MID:-0}" ]; echo $?)" \
    "ended jobs left memory during the load, in its first and its second half"
t_ok "$([ $((${LAST:-0} - E0)) -ge $((${N:-0} / 2)) ]; echo $?)" \
    "most of them left while the load lasted ($((${LAST:-0} - E0)) of ${N:-0})"
t_done
