#!/usr/bin/env bash
# 3008-loom-held.t - loomd A federates loomd B's cluster (adaptor loom)
# with hold_for_loom = yes: a job an account submits to B itself, held,
# is taken into A's queue and started by A on a node A chose, as it is:
# the same job of B runs, once, and no second one is submitted there.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"

t_account ACC held
pg_start || t_bail "no PostgreSQL"

# ---- loomd B: the inner one ----------------------------------------------
accounts_default </dev/null # A's: admin runs as $T_USER
inner_conf <<EOF2 || t_bail "no B"
[cluster inner]
adaptor = local
nodes = 2
poll_s = 0.2
EOF2
cat >"$BD/accounts" <<EOF2
LOOM admin $T_USER
LOOM $ACC $ACC
EOF2
inner_start || t_bail "loomd B did not start"
inner_tokens "$ACC" || t_bail "no tokens of B"

# ---- loomd A: the outer one ------------------------------------------------
map_account "$ACC" "$ACC"
loomd_conf <<EOF2
[cluster b]
adaptor = loom
url = $B_URL
cluster = inner
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.3
hold_for_loom = yes
EOF2
loomd_start || t_bail "loomd A did not start"
admin_token
wait_for 'cluster_state b; [ "$STATE" = up ]' 30
t_is "$STATE" up "cluster b (another loomd's) is up in A"

# ---- a job held in B for A ------------------------------------------------------
ACC_IN_B=$(bctl token create --subject "$ACC" --role user --ttl 3600)
LOOM_URL=$B_URL TOKEN=$ACC_IN_B submit '{"name": "held-in-b",
    "command": ["/bin/sh", "-c", "exit 6"], "hold": true,
    "request": {"cluster": "inner", "walltime_s": 120}}' ||
    t_bail "no job in B"
NH=$JOB
loom_id_of() {
    api GET '/v1/jobs?cluster=b' >/dev/null
    py '" ".join(str(j["id"]) for j in d["items"] if j["native_id"] == "'"$1"'")' "$BODY"
}
wait_for '[ -n "$(loom_id_of "$NH")" ]' 30
JH=$(loom_id_of "$NH")
t_like "$JH" '^[0-9]+$' "B's held job $NH is in A's queue (job $JH)"
t_is "$(field "$JH" .held_for_loom)" true "held for A to schedule"
wait_for '[ "$(job_state "$JH")" = failed ]' 60
t_is "$(job_state "$JH")/$(field "$JH" .exit_code)" failed/6 \
    "A started it; it ran in B, its exit code back in A"
bapi GET "/v1/jobs/$NH" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .exit_code)" failed/6 \
    "B's job $NH itself ran (not left held)"
t_is "$(jget "$BODY" .nodes)" "$(field "$JH" .nodes)" \
    "on the node A chose"
bapi GET '/v1/jobs?cluster=inner' >/dev/null
t_is "$(py 'len(d["items"])' "$BODY")" 1 \
    "B has that one job: none was submitted anew"

t_done
