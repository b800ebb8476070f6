#!/usr/bin/env bash
# 0016-web.t - the dashboard's files at / and /ui/NAME (no token, their
# Content-Type, ETag and 304, CSP, GET and HEAD only, nothing but the
# files read at start-up) and GET /v1/events: a token, a first event at
# once with every cluster, another when something changes, at most one a
# second, a user's stream without the count and highest id of everyone's
# jobs (the API shows it its own only) as private_data is at each event,
# the end of a stream when its token expires, and loomd stopping cleanly
# with streams open. loomd runs as loom; the jobs (on a sim cluster, which
# runs nothing) are the admin's, as $T_USER, and alice's, as an account of
# her own.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# hdr NAME FILE: a header's value in curl's dump of the headers.
hdr() { awk -v n="$1" 'BEGIN { IGNORECASE = 1 } tolower($1) == tolower(n) ":" { sub(/^[^:]*: */, ""); sub(/\r$/, ""); print; exit }' "$2"; }
# get PATH [CURL ARGS]: GET without a token; STATUS, headers in $T/h.
get() {
    local path=$1
    shift
    rm -f "$T/b"
    STATUS=$(curl -s -D "$T/h" -o "$T/b" -w '%{http_code}' --path-as-is "$@" "$LOOM_URL$path")
    BODY=$(cat "$T/b" 2>/dev/null)
}

t_account ALICE_U alice
map_account alice "$ALICE_U"
pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<'EOF_CONF'
[cluster local]
adaptor = local
nodes = 2

[cluster s]
adaptor = sim
nodes = 100
EOF_CONF
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
t_is "$(ps -o user= -p "$LOOMD_PID")" "$LOOM_SERVICE_USER" "loomd runs as $LOOM_SERVICE_USER"

# ---- the files -----------------------------------------------------------------
get /
t_is "$STATUS" 200 "GET / answers 200 without a token"
t_is "$(hdr Content-Type "$T/h")" "text/html; charset=utf-8" "... as text/html"
t_is "$BODY" "$(cat "$LOOM_TOP_SRCDIR/core/web/index.html")" "... with core/web/index.html"
t_like "$(hdr Content-Security-Policy "$T/h")" "^default-src 'none'; script-src 'self';.* connect-src 'self';" \
    "... with a Content-Security-Policy: its own scripts, its own server"
t_is "$(hdr Cache-Control "$T/h")" no-cache "... Cache-Control: no-cache"
t_is "$(hdr X-Content-Type-Options "$T/h")" nosniff "... X-Content-Type-Options: nosniff"
ETAG=$(hdr ETag "$T/h")
t_like "$ETAG" '^"[0-9a-f]{16}"$' "... and an ETag ($ETAG)"
get / -H "If-None-Match: $ETAG"
t_is "$STATUS/$BODY" 304/ "the same ETag in If-None-Match: 304, no body"
get / -H 'If-None-Match: "0000000000000000"'
t_is "$STATUS" 200 "another ETag: 200"
get /ui/app.js
t_is "$STATUS" 200 "GET /ui/app.js answers 200"
t_is "$(hdr Content-Type "$T/h")" "text/javascript; charset=utf-8" "... as text/javascript"
t_is "$BODY" "$(cat "$LOOM_TOP_SRCDIR/core/web/app.js")" "... with core/web/app.js"
t_isnt "$(hdr ETag "$T/h")" "$ETAG" "... with an ETag of its own"
get /ui/loom.css
t_is "$STATUS:$(hdr Content-Type "$T/h")" "200:text/css; charset=utf-8" "GET /ui/loom.css: text/css"
get /ui/loom.svg
t_is "$STATUS:$(hdr Content-Type "$T/h")" "200:image/svg+xml" "GET /ui/loom.svg: image/svg+xml"
STATUS=$(curl -s -I -o "$T/h" -w '%{http_code}' "$LOOM_URL/ui/app.js")
t_is "$STATUS:$(hdr Content-Length "$T/h")" "200:$(stat -c %s "$LOOM_TOP_SRCDIR/core/web/app.js")" \
    "HEAD /ui/app.js: 200 with the file's length"

get /ui/../core/loomd.c
t_is "$STATUS" 404 "/ui/../core/loomd.c is 404"
get /ui/%2e%2e%2fREADME.md
t_is "$STATUS" 404 "/ui/%2e%2e%2fREADME.md is 404"
t_is "$(jget "$BODY" .error.message)" "no such resource: /ui/%2e%2e%2fREADME.md" "... naming what it asked for"
get /ui/
t_is "$STATUS" 404 "/ui/ is 404"
get /ui/index.html/x
t_is "$STATUS" 404 "/ui/index.html/x is 404"
get /index.html
t_is "$STATUS" 404 "/index.html is 404 (the page is /)"
get /ui/.hidden
t_is "$STATUS" 404 "a name beginning with a dot is 404"
get / -X POST
t_is "$STATUS" 400 "POST / is 400"
t_is "$(jget "$BODY" .error.message)" "POST is not allowed on / (GET or HEAD)" "... saying which methods are"
get '/?v=2'
t_is "$STATUS" 400 "GET /?v=2 is 400"
t_is "$(jget "$BODY" .error.message)" "unknown query parameter 'v': GET / takes no query parameters" \
    "... naming the parameter"

# ---- the event stream ----------------------------------------------------------
TOKEN= api GET /v1/events >/dev/null
t_is "$STATUS" 401 "GET /v1/events without a token is 401"
api GET '/v1/events?x=1' >/dev/null
t_is "$STATUS" 400 "GET /v1/events?x=1 is 400"

# events_for SECS FILE: read the stream for SECS seconds into FILE.
events_for() {
    curl -s -N --max-time "$1" -D "$2.h" -H "Authorization: Bearer $TOKEN" \
        "$LOOM_URL/v1/events" >"$2" 2>/dev/null
    return 0
}
# ev_data FILE N: the data of the Nth state event (1-based).
ev_data() { grep '^data: ' "$1" | sed -n "${2}p" | cut -c7-; }

events_for 3 "$T/ev1"
t_is "$(hdr Content-Type "$T/ev1.h")" text/event-stream "the stream is text/event-stream"
t_is "$(hdr Cache-Control "$T/ev1.h")" no-cache "... not cached"
t_like "$(head -n 2 "$T/ev1" | tr '\n' ' ')" '^id: [0-9]+ event: state $' "it begins with a state event"
D1=$(ev_data "$T/ev1" 1)
t_is "$(py '[c["name"] for c in d["clusters"]]' "$D1")" '["local", "s"]' "... with every cluster"
t_is "$(py '[d["clusters"][1]["state"], d["clusters"][1]["nodes"], len(d["clusters"][1]["nodes_v"])]' "$D1")" '["up", 100, 16]' \
    "... each with its state, nodes and a version of its nodes"
t_is "$(py 'sorted(d)' "$D1")" '["clusters", "diff", "jobs", "maintenance", "reservations", "time"]' \
    "... and versions of jobs, reservations, maintenance and the diff"

# a change shows in the next event: a job (jobs.max_id) and a drained node
# (the cluster's nodes_v)
events_for 8 "$T/ev2" &
EV=$!
wait_for '[ -s "$T/ev2" ]' 10
NV0=$(py '[c["nodes_v"] for c in d["clusters"] if c["name"] == "s"][0]' "$(ev_data "$T/ev2" 1)")
J0=$(py 'd["jobs"]["max_id"]' "$(ev_data "$T/ev2" 1)")
submit '{"command":["true"],"request":{"cluster":"s"},"env":{"LOOM_SIM_RUNTIME_S":"600"}}' ||
    t_diag "no job"
wait "$EV"
LAST=$(ev_data "$T/ev2" "$(grep -c '^data: ' "$T/ev2")")
t_is "$(py 'd["jobs"]["max_id"]' "$LAST")" "$((J0 + 1))" "a job submitted shows in a later event (max_id $((J0 + 1)))"
t_isnt "$(py '[c["nodes_v"] for c in d["clusters"] if c["name"] == "s"][0]' "$LAST")" "$NV0" \
    "... and the nodes of its cluster have another version"
t_ok "$([ "$(grep -c '^data: ' "$T/ev2")" -le 9 ] && echo 0 || echo 1)" \
    "at most one event a second ($(grep -c '^data: ' "$T/ev2") in 8 s)"
api GET "/v1/jobs/$JOB" >/dev/null
t_is "$(jget "$BODY" .account)" "$T_USER" "the admin's job is $T_USER's (the admin token's account)"

# privacy: a user's events say nothing of the others' jobs; an admin's do
ALICE=$(token_for alice user) && [ -n "$ALICE" ] || t_bail "no token for alice"
TOKEN=$ALICE submit '{"command":["true"],"request":{"cluster":"s"},"env":{"LOOM_SIM_RUNTIME_S":"600"}}' ||
    t_diag "no job of alice's"
TOKEN=$ALICE api GET /v1/jobs >/dev/null
t_is "$(py '[(j["id"], j["account"]) for j in d["items"]]' "$BODY")" "[[\"$JOB\", \"$ALICE_U\"]]" \
    "the API shows alice her one job, as $ALICE_U"
TOKEN=$ALICE events_for 2 "$T/ev3"
t_is "$(py 'sorted(d["jobs"])' "$(ev_data "$T/ev3" 1)")" '["v"]' \
    "alice's stream has the jobs' version, without their count or highest id"
events_for 2 "$T/ev3a"
t_is "$(py '[sorted(d["jobs"]), d["jobs"]["count"], d["jobs"]["max_id"]]' "$(ev_data "$T/ev3a" 1)")" \
    "[[\"count\", \"max_id\", \"v\"], 2, $JOB]" "the admin's has them: 2 jobs, the highest $JOB"

# the policy is the one of each event, not of the stream's start: a reload
# that turns private_data on hides the others' jobs from a stream open
CLUSTERS=("" "[cluster local]" "adaptor = local" "nodes = 2" "" "[cluster s]" "adaptor = sim" "nodes = 100")
loomd_conf "private_data = false" "${CLUSTERS[@]}"
api POST /v1/runtime/reload >/dev/null
t_is "$STATUS" 200 "a reload turns private_data off"
TOKEN=$ALICE events_for 30 "$T/ev5" &
EV=$!
wait_for '[ -n "$(ev_data "$T/ev5" 1)" ]' 10
t_is "$(py 'sorted(d["jobs"])' "$(ev_data "$T/ev5" 1)")" '["count", "max_id", "v"]' \
    "with private_data false, alice's stream has the jobs' count and highest id"
loomd_conf "private_data = true" "${CLUSTERS[@]}"
api POST /v1/runtime/reload >/dev/null
t_is "$STATUS" 200 "a reload turns private_data on again"
N=$(grep -c '^data: ' "$T/ev5")
wait_for '[ "$(grep -c "^data: " "$T/ev5")" -gt $((N + 1)) ]' 15
t_is "$(py 'sorted(d["jobs"])' "$(ev_data "$T/ev5" "$(grep -c '^data: ' "$T/ev5")")")" '["v"]' \
    "... and the same stream's next events have neither"
kill "$EV" 2>/dev/null
wait "$EV" 2>/dev/null

# a stream ends when its token expires (the sim cluster's polls make an
# event a second, so the stream is asked for more often; a stream without
# events gets a keep-alive comment every 15 s instead)
SHORT=$(token_for admin admin 3)
START=$SECONDS
curl -s -N --max-time 30 -H "Authorization: Bearer $SHORT" "$LOOM_URL/v1/events" >"$T/ev4"
t_ok "$(grep -q '^event: state' "$T/ev4" && echo 0 || echo 1)" "a token of 3 s gets events ..."
t_ok "$([ $((SECONDS - START)) -lt 10 ] && echo 0 || echo 1)" \
    "... and its stream ends when the token expires (after $((SECONDS - START)) s)"

# twenty streams at once, and the API answers meanwhile
PIDS=
for i in $(seq 1 20); do
    curl -s -N --max-time 30 -H "Authorization: Bearer $TOKEN" "$LOOM_URL/v1/events" >"$T/many.$i" &
    PIDS="$PIDS $!"
done
wait_for '[ "$(cat "$T"/many.* | grep -c "^event: state")" -ge 20 ]' 20
t_ok $? "20 streams open at once each get an event"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "... and the API answers meanwhile"

loomd_stop
RC=$?
t_is "$RC" 0 "loomd stops cleanly (exit 0) with 20 streams open"
wait $PIDS 2>/dev/null
t_done
