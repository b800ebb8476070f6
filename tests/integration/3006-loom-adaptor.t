#!/usr/bin/env bash
# 3006-loom-adaptor.t - loomd A federates loomd B (adaptor loom) beside a
# local cluster of its own; B federates a local cluster (inner). A job of A
# pinned to B's cluster runs in B on the node A chose, as its own account,
# and its exit code comes back to A, with its priority and requeue (a
# priority B does not let the account give is lowered to 0 there); a
# cancel through A reaches B; A acts
# only for the accounts B gave it tokens for, and B's own rules hold (no
# job as root); B killed, its cluster is unreachable in A while A's local
# cluster answers and schedules on; B restarted, it comes back. The same
# cluster over HTTPS: with a client certificate B requires, and without.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/pki.sh"

t_account ACC fed
t_account NOTOK fedno
t_account ROOTISH fedroot
pg_start || t_bail "no PostgreSQL"

# ---- loomd B: the inner one ----------------------------------------------
# It serves HTTPS too, with client certificates required there.
P=$T/pki
pki_make "$P" && pki_user "$P" loomd-a "loomd A" || t_bail "no test CA"
cp "$P/loomd-a.key" "$T/a-client.key" && chmod 0600 "$T/a-client.key" &&
    loom_owns "$T/a-client.key" || t_bail "cannot copy A's client key"
B_TLS_PORT=$(free_port)
accounts_default </dev/null # A's: admin runs as $T_USER
inner_conf "listen_tls = 127.0.0.1:$B_TLS_PORT" \
    "tls_cert_file = $P/server.pem" "tls_key_file = $P/server.key" \
    "tls_client_ca_dir = $P/ca" "tls_client_cert = require" <<EOF || t_bail "no B"
[cluster inner]
adaptor = local
nodes = 2
poll_s = 0.2
EOF
cat >"$BD/accounts" <<EOF
LOOM admin $T_USER
LOOM $ACC $ACC
LOOM mallory root
EOF
inner_start || t_bail "loomd B did not start"
# A's tokens in B: its own, one for ACC, and one under ROOTISH's name
# whose subject B maps to root
inner_tokens "$ACC" "$ROOTISH=mallory" || t_bail "no tokens of B"

# ---- loomd A: the outer one ------------------------------------------------
map_account "$ACC" "$ACC"
map_account "$NOTOK" "$NOTOK"
map_account "$ROOTISH" "$ROOTISH"
loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2
[cluster b]
adaptor = loom
url = $B_URL
cluster = inner
token_file = $T/a-control.token
token_dir = $A_TOKENS
timeout_s = 2
poll_s = 0.3
jobs_page = 1
[cluster bs]
adaptor = loom
url = https://127.0.0.1:$B_TLS_PORT
ca_file = $P/root.pem
cert_file = $P/loomd-a.pem
key_file = $T/a-client.key
cluster = inner
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.3
[cluster bnocert]
adaptor = loom
url = https://127.0.0.1:$B_TLS_PORT
ca_file = $P/root.pem
cluster = inner
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.3
EOF
# (b: one job a page, so that every poll listing two jobs follows a next
# page; bs: the same cluster over HTTPS with a client certificate, bnocert
# without one)
loomd_start || t_bail "loomd A did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)

# as ACCOUNT: run the rest as a user token of that account
as_user() {
    local t
    t=$(token_for "$1" user)
    shift
    TOKEN=$t "$@"
}

# ---- the inner cluster as one of A's ----------------------------------------
wait_for 'cluster_state b; [ "$STATE" = up ]' 30
t_is "$STATE" up "cluster b (another loomd's) is up in A"
api GET /v1/clusters/b >/dev/null
t_is "$(jget "$BODY" .adaptor)" loom "its adaptor is loom"
t_is "$(jget "$BODY" .runs_as_user)" true "each job runs as its account"
api GET '/v1/nodes?cluster=b' >/dev/null
t_is "$(py '",".join(sorted(n["name"] for n in d["items"]))' "$BODY")" \
    n1,n2 "A lists the inner cluster's nodes n1 and n2"
api GET /v1/queues/b >/dev/null
t_is "$(py '[q["name"] for q in d["items"]]' "$BODY")" '["default"]' \
    "and its queue"

# ---- over HTTPS ---------------------------------------------------------------------
wait_for 'cluster_state bs; [ "$STATE" = up ]' 30
t_is "$STATE" up "cluster bs (the same, over HTTPS, a client certificate) is up"
api GET '/v1/nodes?cluster=bs' >/dev/null
t_is "$(py '",".join(sorted(n["name"] for n in d["items"]))' "$BODY")" \
    n1,n2 "A lists its nodes over HTTPS"
wait_for 'cluster_state bnocert; [ "$STATE" = unreachable ]' 30
t_is "$STATE" unreachable "without a client certificate B is not reached"
t_like "$ERR" "HTTP 401: a client certificate is required" \
    "B's words say why: $ERR"
TOKEN=$USER_TOKEN submit '{"command": ["/bin/sh", "-c", "exit 4"],
    "request": {"cluster": "bs"}}' || t_bail "no job"
JS=$JOB
wait_for '[ "$(job_state "$JS")" = failed ]' 60
t_is "$(job_state "$JS")/$(field "$JS" .exit_code)" failed/4 \
    "a job through bs runs in B, its exit code back in A"

# ---- a job started by hand on the node chosen -------------------------------
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
t_is "$STATUS" 200 "A's scheduler is off: this job starts where it is told"
TOKEN=$USER_TOKEN submit '{"name": "fed", "command": ["/bin/sh", "-c",
    "id -un; exit 3"], "request": {"cluster": "b", "walltime_s": 120},
    "priority": -5, "requeue": false}' ||
    t_bail "no job"
J1=$JOB
api POST "/v1/jobs/$J1/start" '{"nodes": ["b/n2"]}' >/dev/null
t_is "$STATUS" 202 "started on b/n2"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
wait_for '[ "$(job_state "$J1")" = failed ]' 60
t_is "$(job_state "$J1")" failed "job $J1 ended in A (exit 3: failed)"
t_is "$(field "$J1" .exit_code)" 3 "its exit code came back to A"
t_is "$(field "$J1" .nodes)" '["n2"]' "it ran on n2 in A's record"
NATIVE=$(field "$J1" .native_id)
bapi GET "/v1/jobs/$NATIVE" >/dev/null
t_is "$(jget "$BODY" .nodes)" '["n2"]' "and in B's: on n2, as chosen"
t_is "$(jget "$BODY" .account)" "$ACC" "B ran it as the job's account"
t_is "$(jget "$BODY" .cluster)" inner "on B's cluster inner"
t_is "$(jget "$BODY" .priority)/$(jget "$BODY" .requeue)" -5/false \
    "with the job's priority and requeue (-5, false) as in A"
t_like "$(jget "$BODY" .env.LOOM_OUTER_JOB_ID)" "^$J1\.[0-9a-f]{24}\$" \
    "it carries A's id, signed, in LOOM_OUTER_JOB_ID"
OUT=$T/home/$ACC/loom-$J1.out
t_is "$(cat "$OUT" 2>/dev/null)" "$ACC" \
    "it ran as $ACC (id -un in its output, named for A's id)"
# a priority an admin raised in A: B takes from the account only up to its
# max_user_priority (0), so it gets the job with 0
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
TOKEN=$USER_TOKEN submit '{"name": "raised", "command": ["/bin/true"],
    "request": {"cluster": "b", "walltime_s": 120}}' || t_bail "no job"
JP=$JOB
api PATCH "/v1/jobs/$JP" '{"priority": 7}' >/dev/null
t_is "$STATUS/$(field "$JP" .priority)" 200/7 "an admin raised job $JP's priority to 7 in A"
api POST "/v1/jobs/$JP/start" '{"nodes": ["b/n1"]}' >/dev/null
t_is "$STATUS" 202 "started on b/n1"
api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
wait_for '[ "$(job_state "$JP")" = completed ]' 60
t_is "$(job_state "$JP")" completed "job $JP ran in B and completed"
bapi GET "/v1/jobs/$(field "$JP" .native_id)" >/dev/null
t_is "$(jget "$BODY" .priority)/$(jget "$BODY" .requeue)" 0/true \
    "B has it with priority 0 (7 refused from the account there) and requeue true"
t_like "$(cat "$T/loomd.log")" "job=$JP: the inner loomd refused its priority 7" \
    "A's log says why its priority there is 0"

# ---- a job placed by A's scheduler, cancelled through A ------------------------
TOKEN=$USER_TOKEN submit '{"name": "long", "command": ["/bin/sleep", "300"],
    "request": {"cluster": "b", "walltime_s": 600}}' || t_bail "no job"
J2=$JOB
wait_for '[ "$(job_state "$J2")" = running ]' 60
t_is "$(job_state "$J2")" running "job $J2 placed by A runs in B"
N2=$(field "$J2" .native_id)
bapi GET "/v1/jobs/$N2" >/dev/null
t_is "$(jget "$BODY" .state)" running "B runs it too (its job $N2)"
# the account submits to B itself, its job claiming to be A's job J2
ACC_IN_B=$(bctl token create --subject "$ACC" --role user --ttl 3600)
LOOM_URL=$B_URL TOKEN=$ACC_IN_B submit '{"command": ["/bin/sh", "-c",
    "exit 7"], "env": {"LOOM_OUTER_JOB_ID": "'"$J2"'.000000000000000000000000"},
    "request": {"cluster": "inner"}}' || t_bail "no job in B"
FORGED=$JOB
wait_for 'bapi GET /v1/jobs/'"$FORGED"' >/dev/null; [ "$(jget "$BODY" .state)" = failed ]' 60
t_is "$(jget "$BODY" .state)" failed "a job submitted to B itself ran there"
# A lists it as a job of cluster b's own (source cluster) once it polled
forged_in_a() {
    api GET '/v1/jobs?cluster=b' >/dev/null
    py '" ".join(j["source"] for j in d["items"] if j["native_id"] == "'"$FORGED"'")' "$BODY"
}
wait_for '[ -n "$(forged_in_a)" ]' 30
t_is "$(forged_in_a)" cluster \
    "A lists it as B's own job, not as its job $J2 (a marker it did not sign)"
t_is "$(job_state "$J2")" running "job $J2 runs on, untouched"
TOKEN=$USER_TOKEN api POST "/v1/jobs/$J2/suspend" >/dev/null
t_is "$STATUS" 202 "suspend through A: 202"
wait_for 'bapi GET /v1/jobs/'"$N2"' >/dev/null; [ "$(jget "$BODY" .state)" = suspended ]' 60
t_is "$(jget "$BODY" .state)" suspended "B suspended it"
wait_for '[ "$(job_state "$J2")" = suspended ]' 60
t_is "$(job_state "$J2")" suspended "A shows it suspended"
TOKEN=$USER_TOKEN api POST "/v1/jobs/$J2/resume" >/dev/null
wait_for '[ "$(job_state "$J2")" = running ]' 60
t_is "$(job_state "$J2")" running "resumed through A, it runs again"
TOKEN=$USER_TOKEN api DELETE "/v1/jobs/$J2" >/dev/null
t_is "$STATUS" 202 "cancel through A: 202"
wait_for 'bapi GET /v1/jobs/'"$N2"' >/dev/null; [ "$(jget "$BODY" .state)" = cancelled ]' 60
t_is "$(jget "$BODY" .state)" cancelled "the cancel reached B"
wait_for '[ "$(job_state "$J2")" = cancelled ]' 60
t_is "$(job_state "$J2")" cancelled "and A shows the job cancelled"
wait_for '! pgrep -u "$ACC" -x sleep >/dev/null' 30
t_ok $? "no process of it is left"

# ---- node states through A ------------------------------------------------------
api PUT /v1/nodes/b/n1/state '{"state": "drain", "reason": "fan"}' >/dev/null
t_is "$STATUS" 200 "drain b/n1 through A: 200"
t_is "$(jget "$BODY" .state)" drained "A shows it drained"
bapi GET /v1/nodes/inner/n1 >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" drained/fan \
    "B drained its node n1, with the reason"
api PUT /v1/nodes/b/n1/state '{"state": "up"}' >/dev/null
bapi GET /v1/nodes/inner/n1 >/dev/null
t_is "$(jget "$BODY" .state)" idle "up again through A"

# ---- A acts only for the accounts B gave it, and B's rules hold ---------------
as_user "$NOTOK" submit '{"command": ["/bin/true"],
    "request": {"cluster": "b"}}' || t_bail "no job"
J3=$JOB
wait_for '[ "$(job_state "$J3")" = failed ]' 60
t_is "$(job_state "$J3")" failed "a job of an account without a token fails"
t_like "$(field "$J3" .reason)" "no token to act for account $NOTOK" \
    "saying that A holds no token for $NOTOK"
as_user "$ROOTISH" submit '{"command": ["/bin/true"],
    "request": {"cluster": "b"}}' || t_bail "no job"
J4=$JOB
wait_for '[ "$(job_state "$J4")" = failed ]' 60
t_is "$(job_state "$J4")" failed \
    "a token B maps to root runs nothing through A"
t_like "$(field "$J4" .reason)" "may not run as root" "B refused it as root"

# ---- B killed: b unreachable, local serves on; B back --------------------------
T0=${EPOCHREALTIME/[.,]/}
inner_kill9
wait_for 'cluster_state b; [ "$STATE" = unreachable ]' 60
t_is "$STATE" unreachable "B killed: cluster b is unreachable in A"
t_diag "unreachable after $(((${EPOCHREALTIME/[.,]/} - T0) / 1000)) ms;" \
    "error: $ERR"
t_like "$ERR" "cannot reach" "its error says B cannot be reached"
T1=${EPOCHREALTIME/[.,]/}
TOKEN=$USER_TOKEN submit '{"command": ["/bin/true"],
    "request": {"cluster": "local"}}' || t_bail "no job"
J5=$JOB
wait_for '[ "$(job_state "$J5")" = completed ]' 60
t_is "$(job_state "$J5")" completed \
    "meanwhile a job on A's local cluster is placed and completes"
t_diag "local job submitted to completed in" \
    "$(((${EPOCHREALTIME/[.,]/} - T1) / 1000)) ms with B down"
inner_start || t_bail "loomd B did not start again"
wait_for 'cluster_state b; [ "$STATE" = up ]' 60
t_is "$STATE" up "B restarted: cluster b is up again in A"
TOKEN=$USER_TOKEN submit '{"command": ["/bin/sh", "-c", "exit 0"],
    "request": {"cluster": "b"}}' || t_bail "no job"
J6=$JOB
wait_for '[ "$(job_state "$J6")" = completed ]' 60
t_is "$(job_state "$J6")" completed "and runs A's jobs again"
t_is "$(job_state "$J1")" failed "job $J1 is as it was"

t_done
