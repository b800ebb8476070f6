#!/usr/bin/env bash
# 4011-loom-adaptor-etag.t - a poll with nothing changed costs nothing:
# loomd B federates a real Slurm through slurmrestd; each page of its GET
# /v1/jobs has an ETag (a hash of the body as the token gets it), asked
# for again with If-None-Match it is a 304 without a body while nothing
# changed, and a 200 with a new ETag once a job changed; an ETag that is
# not the page's is no error. loomd A federates B (adaptor loom) a job a
# page: it asks for the members it reads only (?fields=), and while
# nothing changes in B its polls are B's 304s, one for each page; a job
# of A still runs in the Slurm, as its account, and its exit code and a
# cancel come back through them, a cancel on the second page too.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1
slurm_start 2 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
pg_start || t_bail "no PostgreSQL"

# ---- loomd B over the Slurm ---------------------------------------------------
accounts_default </dev/null # A's: admin runs as $T_USER
inner_conf <<EOF || t_bail "no configuration for B"
$(slurm_restd_section)
EOF
printf 'LOOM admin %s\nLOOM %s %s\n' "$T_USER" "$T_USER" "$T_USER" \
    >"$BD/accounts"
inner_start || t_bail "loomd B did not start"
inner_tokens "$T_USER" || t_bail "no tokens of B for A"

# etag_get PATH [CURL-ARGS...]: GET PATH of B as B_ADMIN (or $BTOK):
# STATUS, BODY and its ETag in ETAG ("" when none)
etag_get() {
    local path=$1
    shift
    rm -f "$T/b.body" # curl makes no file for an answer without a body
    STATUS=$(curl -s -o "$T/b.body" -D "$T/b.headers" -w '%{http_code}' \
        --max-time 30 -H "Authorization: Bearer ${BTOK:-$B_ADMIN}" "$@" \
        "$B_URL$path")
    BODY=$(cat "$T/b.body" 2>/dev/null)
    ETAG=$(tr -d '\r' <"$T/b.headers" |
        awk 'tolower($1) == "etag:" { print $2 }')
}

LIST="/v1/jobs?cluster=slurm&fields=id,state"
# a job of B's own, held: the list has one item
B_TOKEN=$(bctl token create --subject "$T_USER" --role user --ttl 3600)
TOKEN=$B_TOKEN LOOM_URL=$B_URL submit \
    '{"name":"own","hold":true,"command":["true"],"request":{"cluster":"slurm"}}' ||
    t_bail "B took no job"
BJ=$JOB
etag_get "$LIST"
E1=$ETAG
t_is "$STATUS/$(jlen "$BODY" .items)" "200/1" "B lists its one job"
t_like "$E1" '^"[0-9a-f]{16}"$' "the page has an ETag, a quoted hash"
etag_get "$LIST" -H "If-None-Match: $E1"
t_is "$STATUS/${#BODY}/$ETAG" "304/0/$E1" \
    "asked for with If-None-Match naming it: 304, no body, the same ETag"
etag_get "$LIST" -H "If-None-Match: W/$E1, \"0000000000000000\""
t_is "$STATUS" 304 "If-None-Match with a list of ETags, one of them the page's: 304"
etag_get "$LIST" -H 'If-None-Match: "0123456789abcdef"'
t_is "$STATUS/$(jlen "$BODY" .items)/$ETAG" "200/1/$E1" \
    "an ETag that is not the page's: the page whole, with its ETag"
etag_get "/v1/jobs?cluster=slurm&fields=id" -H "If-None-Match: $E1"
t_is "$STATUS" 200 "another page (other fields) does not match that ETag"
BTOK=$B_TOKEN etag_get "$LIST" -H "If-None-Match: $E1"
t_is "$STATUS" 304 "the same page as its owner gets it: the same ETag"
etag_get "$LIST" -H "If-None-Match: *"
t_is "$STATUS/${#BODY}/$ETAG" "304/0/$E1" "If-None-Match: * (any form of the page): 304"
bapi POST "/v1/jobs/$BJ/release" >/dev/null
wait_for '[ "$(TOKEN=$B_ADMIN LOOM_URL=$B_URL field "$BJ" .state)" = completed ]' 60
etag_get "$LIST" -H "If-None-Match: $E1"
t_is "$STATUS/$(jget "$BODY" .items.0.state)" "200/completed" \
    "once the job changed: 200 with the job as it is now"
t_isnt "$ETAG" "$E1" "and a new ETag"

# ---- loomd A over B -------------------------------------------------------------
loomd_conf <<EOF
[cluster fed]
adaptor = loom
url = $B_URL
cluster = slurm
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.3
jobs_page = 1
EOF
loomd_start || t_bail "loomd A did not start"
admin_token || t_bail "no token of A"
wait_for 'cluster_state fed; [ "$STATE" = up ]' 30
t_is "$STATE" up "A's cluster fed (B's slurm) is up"

# b_304s: how many GET /v1/jobs B answered 304 (loom_http_request_seconds)
b_304s() {
    curl -s "$B_URL/metrics" | awk '
        /^loom_http_request_seconds_count\{/ && /method="GET"/ &&
        /route="\/v1\/jobs"/ && /code="3xx"/ { n += $2 }
        END { print n + 0 }'
}
submit '{"name":"a","command":["/bin/sh","-c","exit 4"],"request":{"cluster":"fed"}}' ||
    t_bail "A took no job"
AJ=$JOB
wait_for '[ "$(field "$AJ" .state)" = failed ]' 60
job "$AJ"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)/$(jget "$BODY" .source)" \
    "failed/4/local" "A's job ran in the Slurm under B and its exit code came back"
N0=$(b_304s)
wait_for '[ "$(b_304s)" -ge $((N0 + 5)) ]' 30
N1=$(b_304s)
t_ok "$([ "$N1" -ge $((N0 + 5)) ] && echo 0 || echo 1)" \
    "with nothing changed in B, A's polls are 304s ($N0, then $N1)"
cluster_state fed
t_is "$STATE/$ERR" "up/" "and its cluster fed stays up, with no error"

# a change after the 304s: two jobs of A that wait, a page each (and the
# empty last page): polls of nothing changed are 304s for every page; a
# cancel of the second job changes its page after a page that did not
submit '{"name":"long","command":["sleep","300"],"request":{"cluster":"fed"}}' ||
    t_bail "A took no second job"
LJ=$JOB
submit '{"name":"long2","command":["sleep","300"],"request":{"cluster":"fed"}}' ||
    t_bail "A took no third job"
LJ2=$JOB
wait_for '[ "$(field "$LJ" .state)/$(field "$LJ2" .state)" = running/running ]' 60
t_is "$(field "$LJ" .state)/$(field "$LJ2" .state)" running/running \
    "two more jobs of A run in the Slurm"
bapi GET "/v1/jobs?cluster=slurm&state=running&limit=1&fields=id" >/dev/null
t_like "$(jget "$BODY" .next)" '^/v1/jobs\?' "B lists them a page each, as A asks"
N0=$(b_304s)
wait_for '[ "$(b_304s)" -ge $((N0 + 9)) ]' 30
N1=$(b_304s)
t_ok "$([ "$N1" -ge $((N0 + 9)) ] && echo 0 || echo 1)" \
    "with nothing changed in B, A's polls of three pages are 304s ($N0, then $N1)"
api DELETE "/v1/jobs/$LJ2" >/dev/null
wait_for '[ "$(field "$LJ2" .state)" = cancelled ]' 60
t_is "$(field "$LJ2" .state)/$(field "$LJ" .state)" cancelled/running \
    "a cancel on the second page, after a page of nothing changed, comes back"
api DELETE "/v1/jobs/$LJ" >/dev/null
wait_for '[ "$(field "$LJ" .state)" = cancelled ]' 60
t_is "$(field "$LJ" .state)" cancelled \
    "a cancel on the first page comes back as cancelled"
bapi GET "/v1/jobs?cluster=slurm&state=cancelled&fields=native_id" >/dev/null
t_is "$(jlen "$BODY" .items)" 2 "B has both cancelled"
for i in 0 1; do
    NATIVE=$(jget "$BODY" .items.$i.native_id)
    t_like "$(scontrol show job -o "$NATIVE" 2>/dev/null)" "JobState=CANCELLED" \
        "and Slurm has job $NATIVE cancelled"
done

t_done
