#!/usr/bin/env bash
# 3004-single-account.t - a cluster whose pack does not submit jobs as
# their own accounts (pack.json without "runs_as_user": true; here a copy
# of the slurm pack that says false and submits as loomd's account, on a
# real Slurm): loomd refuses to
# start unless the cluster's section names the one account every job runs
# as (single_account); then the cluster takes only that account's jobs:
# /v1/clusters says so, another account's job pinned there is a 422 that
# names the cluster, the account and the job's, placement leaves the
# cluster to its account (another's job goes elsewhere, or is a 422 when
# only that cluster could run it), and a start by hand is a 409.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
t_account ALICE alice
t_account BOB bob
# The copy runs sbatch through the stand-in of tests/fixtures/runas, which
# runs it as the caller: as loomd's account, as a pack without
# runs_as_user does.
cp -a "$LOOM_TOP_SRCDIR/adaptors/scripts/slurm" "$T/pack" &&
    sed -i 's/"runs_as_user": true/"runs_as_user": false/' "$T/pack/pack.json" &&
    sed -i "s#\"\\\$LOOM_RUNAS\" run#\"$LOOM_TOP_SRCDIR/tests/fixtures/runas/loom-runas\" run#" \
        "$T/pack/start" || t_bail "cannot copy the pack"
grep -q '"runs_as_user": false' "$T/pack/pack.json" &&
    grep -qF "\"$LOOM_TOP_SRCDIR/tests/fixtures/runas/loom-runas\" run" "$T/pack/start" ||
    t_bail "the copy still runs as the user"
pg_start || t_bail "no PostgreSQL"

conf() {
    loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 1
cpus_per_node = 1
poll_s = 0.2
[cluster one]
adaptor = script
pack = $T/pack
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
$1
EOF2
}

# ---- refused at start without single_account ---------------------------------------
conf ""
OUT=$(timeout 60 env LOOM_LIBEXECDIR="$LOOM_TOP_BUILDDIR" \
    "$LOOM_TOP_BUILDDIR/loomd" -c "$T/loom.conf" -f </dev/null 2>&1)
RC=$?
t_is "$RC $(grep '^loomd: ' <<<"$OUT")" "1 loomd: cluster one: pack $T/pack does not submit jobs as their own accounts (its pack.json does not say \"runs_as_user\": true); name the one account every job of this cluster runs as with single_account = ACCOUNT in [cluster one]" \
    "a pack that cannot submit as the job's account: loomd refuses to start, saying what to set"
conf "single_account = not an account"
OUT=$(timeout 60 env LOOM_LIBEXECDIR="$LOOM_TOP_BUILDDIR" \
    "$LOOM_TOP_BUILDDIR/loomd" -c "$T/loom.conf" -f </dev/null 2>&1)
t_like "$(grep '^loomd: ' <<<"$OUT")" "\\[cluster one\\] single_account: 'not an account' is not an account name" \
    "single_account must be an account name"

# ---- with single_account: only that account's jobs ----------------------------------
conf "single_account = $ALICE"
loomd_start || t_bail "loomd did not start"
TA=$(token_for "$ALICE" user) && TB=$(token_for "$BOB" user) ||
    t_bail "no tokens"
ADMIN=$(token_for admin admin) || t_bail "no admin token"
TOKEN=$TA
api GET /v1/clusters >/dev/null
t_is "$(py '[[c["name"], c["runs_as_user"], c["single_account"]] for c in d["items"]]' "$BODY")" \
    "[[\"local\", true, null], [\"one\", false, \"$ALICE\"]]" \
    "GET /v1/clusters: cluster one runs every job as $ALICE (single_account)"

TOKEN=$TB api POST /v1/jobs '{"name":"pinned","command":["true"],"request":{"cluster":"one"}}' >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "422 cluster one runs every job as $ALICE (single_account); this job is $BOB's" \
    "bob's job pinned to cluster one: 422 naming the cluster, its account and bob"
t_is "$(jget "$BODY" .error.field)" request.cluster "... in request.cluster"

TOKEN=$TB api POST /v1/jobs '{"name":"big","command":["true"],"request":{"cpus_per_node":2}}' >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "422 no cluster could ever run this job: cluster one runs every job as $ALICE (single_account); this job is $BOB's" \
    "bob's job that only cluster one could fit: 422, saying why"

TOKEN=$TA submit '{"name":"hers","command":["/bin/sh","-c","echo ran"],"request":{"cluster":"one"}}'
JA=$JOB
wait_for '[ "$(field "$JA" .state)" = completed ]' 60
t_is "$(field "$JA" .state)/$(field "$JA" .cluster)" completed/one \
    "alice's job pinned to cluster one runs there"

# Bob's job without a pin goes to the local cluster, never to one: it
# waits while local is busy (one stays idle), then runs on local.
TOKEN=$TA submit '{"name":"busy","command":["/bin/sh","-c","i=0; while [ ! -e '"$T"'/go ] && [ $i -lt 300 ]; do sleep 0.2; i=$((i + 1)); done"],"request":{"cluster":"local"}}'
JBUSY=$JOB
wait_for '[ "$(field "$JBUSY" .state)" = running ]' 30
TOKEN=$TB submit '{"name":"his","command":["true"]}'
JB=$JOB
TOKEN=$TB # bob reads his job: to alice it is a 404 (private_data)
polls_pass one 2
t_is "$(TOKEN=$TB field "$JB" .state)/$(TOKEN=$TB field "$JB" .cluster)" "pending/null" \
    "bob's job without a pin waits for local while cluster one sits idle"
TOKEN=$ADMIN api POST "/v1/jobs/$JB/start" '{"cluster":"one","nodes":["n1"]}' >/dev/null
t_is "$STATUS $(jget "$BODY" .error.message)" \
    "409 cannot start job $JB on cluster one: cluster one runs every job as $ALICE (single_account); this job is $BOB's" \
    "starting bob's job on cluster one by hand: 409, saying why"
touch "$T/go"
TOKEN=$TB wait_for '[ "$(field "$JB" .state)" = completed ]' 60
t_is "$(TOKEN=$TB field "$JB" .state)/$(TOKEN=$TB field "$JB" .cluster)" completed/local \
    "once local is free, bob's job runs there"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
