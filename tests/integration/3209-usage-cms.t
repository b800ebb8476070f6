#!/usr/bin/env bash
# 3209-usage-cms.t - what a job used, measured by a real Grid Engine cell
# and carried up: loomd B drives the cell with its gridengine pack, loomd A
# federates B's cluster with the loom adaptor. A job that burns 3 s of
# user cpu time (it watches its own /proc/PID/stat) and holds 64 MiB ends
# in B with a `usage` from its accounting record (qacct's ru_utime,
# ru_stime, ru_maxrss) and in A with the same usage; Loom's sacct on A
# prints those numbers. A job on a cluster that measures nothing (sim)
# has usage null and sacct prints Unknown; a pack whose `usage` is not the
# protocol's turns its cluster degraded, naming the member.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/usage.sh"

ge_available || t_bail "no Grid Engine: $GE_WHY"
ge_start 1 || t_bail "Grid Engine did not start"
t_account ACC usage
pg_start || t_bail "no PostgreSQL"

accounts_default </dev/null
inner_conf <<EOF || t_bail "cannot write B's configuration"
[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF
printf 'LOOM admin %s\nLOOM %s %s\n' "$T_USER" "$ACC" "$ACC" >"$BD/accounts"
inner_start || t_bail "loomd B did not start"
inner_tokens "$ACC" || t_bail "no tokens of B"

# A pack of three lines per op whose jobs answer carries a usage that is
# not the protocol's.
mkdir -p "$T/odd" && cd "$T/odd" || t_bail "cannot make the odd pack"
echo '{"protocol": 1, "name": "odd", "model": "disabled-scheduler",
 "runs_as_user": true,
 "ops": ["nodes", "jobs", "queues", "start", "cancel"]}' >pack.json
printf '#!/bin/sh\necho %s\n' \
    "'{\"items\": [{\"name\": \"o1\", \"state\": \"idle\", \"cpus\": 1}]}'" >nodes
printf '#!/bin/sh\necho %s\n' \
    "'{\"complete\": true, \"items\": [{\"native_id\": \"1\", \"state\": \"completed\", \"usage\": {\"user_cpu_ms\": \"2s\"}}]}'" >jobs
printf '#!/bin/sh\necho %s\n' "'{\"items\": []}'" >queues
printf '#!/bin/sh\nexit 1\n' >start
printf '#!/bin/sh\necho {}\n' >cancel
chmod 0755 nodes jobs queues start cancel && cd "$T" || t_bail "no odd pack"

map_account "$ACC" "$ACC"
loomd_conf <<EOF
[cluster sim]
adaptor = sim
nodes = 1
cpus_per_node = 2
memory_mb = 2048
speed = 1000
[cluster bge]
adaptor = loom
url = $B_URL
cluster = ge
token_file = $T/a-control.token
token_dir = $A_TOKENS
poll_s = 0.5
[cluster odd]
adaptor = script
pack = $T/odd
poll_s = 0.5
EOF
loomd_start || t_bail "loomd A did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)
usage_sacct_setup "$USER_TOKEN" || t_bail "cannot write the user's token"

wait_for 'cluster_state bge; [ "$STATE" = up ]' 60
t_is "$STATE" up "B's Grid Engine cluster is up in A"

# ---- a job on Grid Engine: 3 s of user time, 64 MiB --------------------------------
usage_run bge "$USER_TOKEN" "$ACC" "Grid Engine through B"

NB=$(field "$J" .native_id)
bapi GET "/v1/jobs/$NB" >/dev/null
NG=$(jget "$BODY" .native_id)
t_like "$NG" '^[0-9]+$' "B's job $NB is Grid Engine job $NG"
QU=$(qacct -j "$NG" 2>/dev/null | awk '$1 == "ru_utime" { print $2 }')
t_diag "qacct -j $NG: ru_utime $QU" \
    "$(qacct -j "$NG" 2>/dev/null | grep -E '^(ru_stime|ru_maxrss|maxvmem)')"
read -r BU BS BR <<<"$(usage_of "$NB" bapi)"
usage_bounds B "$BU" "$BS" "$BR"
t_is "$BU" "$(awk -v v="$QU" 'BEGIN { sub(/s$/, "", v); printf "%d", v * 1000 + 0.5 }')" \
    "B: the user cpu is qacct's ru_utime ($QU) in ms"

read -r AU AS AR <<<"$(usage_of "$J")"
t_is "$AU $AS $AR" "$BU $BS $BR" "A: the same usage, passed on by the loom adaptor"

t_is "$(usage_sacct "$J" UserCPU,SystemCPU,TotalCPU,MaxRSS)" \
    "$(usage_cpu "$AU")|$(usage_cpu "$AS")|$(usage_cpu $((AU + AS)))|${AR}K" \
    "A's sacct prints those numbers: UserCPU, SystemCPU, TotalCPU, MaxRSS"

# ---- a cluster that measures nothing ------------------------------------------
TOKEN=$USER_TOKEN submit '{"name": "simjob", "command": ["/bin/true"],
    "request": {"cluster": "sim", "walltime_s": 60}}' || t_bail "no sim job"
JS=$JOB
wait_for '[ "$(job_state "$JS")" = completed ]' 60
t_is "$(job_state "$JS")" completed "a job on the sim cluster completed"
t_is "$(usage_of "$JS")" null "its usage is null: sim measures nothing"
t_is "$(usage_sacct "$JS" UserCPU,SystemCPU,TotalCPU,MaxRSS)" \
    "Unknown|Unknown|Unknown|Unknown" "sacct prints Unknown for it"

# ---- a usage that is not the protocol's ---------------------------------------
wait_for 'cluster_state odd; [[ $ERR == *usage* ]]' 60
t_like "$ERR" 'jobs: .*items\[0\]\.usage is not null or an object of non-negative integers user_cpu_ms, system_cpu_ms, max_rss_kb' \
    "a pack's malformed usage is refused, naming the member and its form"
t_isnt "$STATE" up "and its cluster is not up ($STATE)"

t_done
