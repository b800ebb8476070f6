#!/usr/bin/env bash
# 4010-slurmrest-own-time.t - what Loom adds to slurmrestd's own answer,
# against a real Slurm: loom_adaptor_own_seconds has every call loomd made
# to slurmrestd (a poll's jobs and nodes, a start), each no longer than the
# whole call of loom_adaptor_op_seconds, and no series for the local
# cluster beside it (no HTTP there); an uncached read (Cache-Control:
# no-cache) asks Slurm now, so that a node drained with scontrol shows at
# once where the snapshot still has it idle, and says the split in
# Server-Timing (cms, loom); without a cluster it is refused; a local
# cluster's says the whole call (adaptor); slurmrestd killed, it fails
# with the cluster's error.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1
slurm_start 2 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
pg_start || t_bail "no PostgreSQL"
mkdir -p "$T/scratch"
chmod 1777 "$T/scratch"
# poll_s 600: the cluster is polled at the start and after a start, so
# that what the snapshot shows of its nodes is the first poll's
loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 1
poll_s = 0.2
[cluster slurm]
adaptor = slurmrest
url = $SLURM_RESTD_URL
jwt_key_file = $SLURM_JWT_KEY
workdir = $T/scratch
env.SLURM_CONF = $SLURM_CONF
poll_s = 600
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"

# m SERIES: its value in a fresh scrape (nothing when absent)
m() {
    curl -s "$LOOM_URL/metrics" >"$T/metrics"
    awk -v k="$1" '$1 == k { print $2 }' "$T/metrics"
}
own() { m "loom_adaptor_own_seconds_$2{cluster=\"slurm\",op=\"$1\"}"; }
op() { m "loom_adaptor_op_seconds_$2{cluster=\"slurm\",op=\"$1\"}"; }
# fresh PATH: GET PATH uncached; STATUS, BODY and TIMING (Server-Timing)
fresh() {
    STATUS=$(curl -s -D "$T/fresh.h" -o "$T/fresh.b" -w '%{http_code}' \
        -H 'Cache-Control: no-cache' -H "Authorization: Bearer $TOKEN" \
        "$LOOM_URL$1")
    BODY=$(cat "$T/fresh.b")
    TIMING=$(awk -F': ' 'tolower($1) == "server-timing" { print $2 }' \
        "$T/fresh.h" | tr -d '\r')
}

# ---- every call to slurmrestd, timed twice --------------------------------------
wait_for '[ "$(own jobs count)" -ge 1 ] 2>/dev/null && [ "$(own nodes count)" -ge 1 ] 2>/dev/null' 60
t_like "$(own jobs count)/$(own nodes count)" '^[1-9][0-9]*/[1-9][0-9]*$' \
    "the first poll's jobs and nodes calls have Loom's own time"
t_is "$(own nodes count)" "$(op nodes count)" \
    "every nodes call (all to slurmrestd) is in both families"
t_is "$(awk -v a="$(own jobs sum)" -v b="$(op jobs sum)" 'BEGIN { print (a >= 0 && a < b) ? "less" : a " of " b }')" \
    less "Loom's own time of the jobs calls is part of their whole time"
t_is "$(grep -c '^loom_adaptor_own_seconds_count{cluster="local"' "$T/metrics")" 0 \
    "the local cluster (no HTTP) has no series of its own time"
t_like "$(grep -c '^loom_adaptor_op_seconds_count{cluster="local"' "$T/metrics")" '^[1-9]' \
    "... though its calls are timed"

# ---- a start ----------------------------------------------------------------------------
N0=$(op nodes count)
submit '{"name":"own","command":["/bin/true"],"request":{"cluster":"slurm"}}' ||
    t_bail "no job"
wait_for '[ "$(own start count)" = 1 ]' 60
t_is "$(own start count)/$(op start count)" 1/1 "the start has its own time too"
t_is "$(awk -v a="$(own start sum)" -v b="$(op start sum)" 'BEGIN { print (a >= 0 && a < b) ? "less" : a " of " b }')" \
    less "... a part of the start's whole time"
# the poll a start asks for has passed before Slurm changes behind Loom's
# back (the next is 600 s away)
wait_for '[ "$(op nodes count)" -gt "$N0" ] 2>/dev/null' 60
t_is "$(op nodes count)" $((N0 + 1)) "the start's poll asked for the nodes"
P0=$(op nodes count)

# ---- uncached reads ----------------------------------------------------------------------
scontrol update nodename=n2 state=drain reason=behind-loom
t_like "$(sinfo -h -n n2 -o %T)" '^drain' "n2 drained in Slurm itself (scontrol)"
api GET /v1/nodes/slurm/n2 >/dev/null
t_like "$(jget "$BODY" .state)" '^(idle|mixed|allocated)$' \
    "the snapshot (the last poll) still has n2 as it was: $(jget "$BODY" .state)"
fresh /v1/nodes/slurm/n2
t_is "$STATUS" 200 "GET /v1/nodes/slurm/n2 with Cache-Control: no-cache: 200"
t_like "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" '^drain(ed|ing)/behind-loom$' \
    "... n2 as Slurm has it now: drained, with its reason"
t_like "$TIMING" '^cms;dur=[0-9]+\.[0-9]{3}, loom;dur=[0-9]+\.[0-9]{3}$' \
    "Server-Timing says slurmrestd's part and Loom's: $TIMING"
t_is "$(awk -v t="$TIMING" 'BEGIN { split(t, f, /[=,]/); print (f[2] > 0) ? "yes" : "no" }')" yes \
    "slurmrestd's part is a real request's (more than 0 ms)"
t_is "$(op nodes count)" $((P0 + 1)) "one nodes call more, counted as any"
api GET /v1/nodes/slurm/n2 >/dev/null
t_like "$(jget "$BODY" .state)" '^drain(ed|ing)$' "its answer is published: the snapshot has n2 drained"
fresh '/v1/nodes?cluster=slurm'
t_is "$STATUS/$(jlen "$BODY" .items)" 200/2 "the cluster's list uncached: its 2 nodes"
t_like "$TIMING" '^cms;dur=' "... with Server-Timing"
fresh /v1/nodes
t_is "$STATUS" 400 "uncached without a cluster: 400"
t_is "$(jget "$BODY" .error.field)" Cache-Control "... naming Cache-Control"
t_like "$(jget "$BODY" .error.message)" 'give \?cluster=NAME' "... and saying what to give"
fresh '/v1/nodes?cluster=local'
t_is "$STATUS" 200 "uncached on the local cluster: 200"
t_like "$TIMING" '^adaptor;dur=[0-9]+\.[0-9]{3}$' \
    "its Server-Timing is the whole call (no HTTP to split): $TIMING"
fresh /v1/nodes/nope/n1
t_is "$STATUS" 404 "uncached on a cluster that does not exist: 404"
scontrol update nodename=n2 state=resume

# ---- slurmrestd gone ----------------------------------------------------------------------
slurm_restd_kill
fresh /v1/nodes/slurm/n1
t_is "$STATUS" 503 "uncached with slurmrestd killed: 503"
t_like "$(jget "$BODY" .error.message)" 'cluster slurm: slurmrestd v0\.0\.38: GET nodes: cannot reach' \
    "... with the cluster's error"
t_is "$TIMING" "" "... and no Server-Timing"
api GET /v1/nodes/slurm/n1 >/dev/null
t_is "$STATUS/$(jget "$BODY" .name)" 200/n1 "a cached read answers on from the snapshot"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
