#!/usr/bin/env bash
# 3001-script-faults.t - a script pack that misbehaves, under a running
# loomd that federates a real Slurm (through a copy of the Slurm pack in
# $T/pack, so that the test can swap one op) and the local executor:
#   (a) `jobs` hangs (sleeps 60 s, ignoring SIGTERM) with timeout.jobs = 2:
#       the cluster turns degraded, then unreachable, with an error naming
#       the pack, the op and "timed out after 2 s"; the hanging process
#       group is killed; the local cluster is not held up (the API answers
#       while the op hangs, a local job runs to completion); restoring
#       `jobs` brings the cluster up again by itself;
#   (b) `jobs` answers garbage: "not a JSON object";
#   (c) `jobs` prints 10 MiB: "output larger than 1048576 bytes";
#   (d) `jobs` exits 75 with a message: the message shows;
#   (e) loomd still answers and stops with status 0, no sanitizer report.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

now_us() { echo "${EPOCHREALTIME/[.,]/}"; }





# swap_jobs FILE: install FILE as the pack's `jobs` (atomically: rename).
swap_jobs() {
    cp "$1" "$T/pack/.jobs.new" && chmod 0755 "$T/pack/.jobs.new" &&
        mv -f "$T/pack/.jobs.new" "$T/pack/jobs"
}

# pids_alive FILE: the recorded pids (words of FILE) still alive.
pids_alive() {
    local p out=
    for p in $(cat "$1" 2>/dev/null); do
        alive "$p" && out="$out $p"
    done
    echo "${out# }"
}

# groups_alive FILE: how many recorded runs (one line each: the shell's pid,
# which leads the run's process group, and its child's) have a live process.
groups_alive() {
    local line p n=0 live
    while read -r line; do
        live=0
        for p in $line; do alive "$p" && live=1; done
        n=$((n + live))
    done <"$1"
    echo "$n"
}

# procs_of_pack: live processes whose environment names our pack.
procs_of_pack() {
    grep -l -z -x -F "LOOM_PACK_DIR=$T/pack" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3 | while read -r p; do
            alive "$p" && echo "$p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"

cp -a "$LOOM_TOP_SRCDIR/adaptors/scripts/slurm" "$T/pack" || t_bail "cannot copy the pack"
cp -p "$T/pack/jobs" "$T/jobs.real"
PACK_RE=${T//./\\.}/pack

loomd_conf <<EOF
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
[cluster slurm]
adaptor = script
pack = $T/pack
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
timeout.jobs = 2
max_output_bytes = 1048576
EOF
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"

cluster_state slurm
t_is "$STATE" up "the Slurm cluster (pack $T/pack) is up"

# ---- (a) jobs hangs ----------------------------------------------------------
cat >"$T/jobs.hang" <<EOF
#!/bin/sh
# ignores SIGTERM (so does its child): only the SIGKILL a second later ends it
trap '' TERM
sleep 60 &
echo "\$\$ \$!" >>"$T_OUT/hang.pids"
wait
EOF
: >"$T_OUT/hang.pids" && loom_owns "$T_OUT/hang.pids" # the pack runs as loom
swap_jobs "$T/jobs.hang"
T0=$(now_us)

# While the Slurm worker hangs, the API must answer and local jobs run. A
# call counts as answered during a hang when the same hanging run was alive
# before it was made and after it returned: it did not wait for the worker.
MAXT=0
BAD=
NREQ=0
DURING=0
MAXGROUPS=0
time_local() {
    local r before after g
    before=$(tail -n 1 "$T_OUT/hang.pids" 2>/dev/null)
    [ -n "$before" ] && [ -z "$(for p in $before; do alive "$p" && echo "$p"; done)" ] && before=
    r=$(curl -s -o /dev/null --max-time 30 -w '%{http_code} %{time_total}' \
        -H "Authorization: Bearer $TOKEN" "$LOOM_URL/v1/nodes?cluster=local")
    after=
    [ -n "$before" ] && after=$(for p in $before; do alive "$p" && echo "$p"; done)
    NREQ=$((NREQ + 1))
    [ "${r%% *}" = 200 ] || BAD="$BAD [$r]"
    [ "${r%% *}" = 200 ] && [ -n "$after" ] && DURING=$((DURING + 1))
    MAXT=$(awk -v a="$MAXT" -v b="${r#* }" 'BEGIN { print (b > a ? b : a) }')
    g=$(groups_alive "$T_OUT/hang.pids")
    ((g > MAXGROUPS)) && MAXGROUPS=$g
}

submit '{"name":"local-during-hang","command":["/bin/sh","-c","sleep 1; echo ran"],"request":{"cluster":"local"}}'
LJ=$JOB

wait_for 'time_local; cluster_state slurm; [ "$STATE" = degraded ]' 60
t_is "$STATE" degraded "a hanging jobs op turns the cluster degraded"
t_diag "degraded after $((($(now_us) - T0) / 1000)) ms: $ERR"
t_like "$ERR" "pack $PACK_RE: jobs: script timed out after 2 s" \
    "the error names the pack, the op and 'timed out after 2 s'"
FIRST=$(head -n 1 "$T_OUT/hang.pids")
t_like "$FIRST" '^[0-9]+ [0-9]+$' "the hanging script ran (pids $FIRST)"
# The timed-out run's group got SIGTERM (ignored) and SIGKILL 1 s later.
wait_for '[ -z "$(for p in $FIRST; do alive $p && echo $p; done)" ]' 30
t_is "$(for p in $FIRST; do alive "$p" && echo "$p"; done | paste -sd' ')" "" \
    "the timed-out run's process group (shell and its 'sleep 60') is gone"

wait_for 'time_local; [ "$(job_state "$LJ")" = completed ]' 60
t_is "$(job_state "$LJ")" completed "a local job runs to completion while the Slurm worker hangs"
cluster_state slurm
t_like "$STATE" '^(degraded|unreachable)$' "... (the Slurm cluster was still failing meanwhile: $STATE)"

wait_for 'time_local; cluster_state slurm; [ "$STATE" = unreachable ]' 90
t_is "$STATE" unreachable "after three failed polls the cluster is unreachable"
t_diag "unreachable after $((($(now_us) - T0) / 1000)) ms;" \
    "$(wc -l <"$T_OUT/hang.pids") hanging runs so far"
t_like "$ERR" "pack $PACK_RE: jobs: script timed out after 2 s" \
    "... and the error still says why"
t_is "$BAD" "" "GET /v1/nodes?cluster=local answered 200 every time ($NREQ calls, slowest $MAXT s)"
t_ok "$( ((DURING >= 1)) && echo 0 || echo 1)" \
    "... also while a jobs op hung, not waiting for it ($DURING of the calls)"
t_is "$MAXGROUPS" 1 "the hanging runs never overlapped (at most one alive at a time)"

M=$(curl -s --max-time 5 "$LOOM_URL/metrics")
# bucket LE: how many slurm jobs ops took LE seconds or less (+Inf: all)
bucket() {
    awk -v le="$1" '$1 == "loom_adaptor_op_seconds_bucket{cluster=\"slurm\",op=\"jobs\",le=\"" le "\"}" { print $2 }' <<<"$M"
}
ALL=$(bucket +Inf) UPTO1=$(bucket 1) UPTO30=$(bucket 30)
FAILS=$(awk '/^loom_adaptor_op_failures_total\{cluster="slurm",op="jobs"\}/ { print $2 }' <<<"$M")
t_ok "$( ((${ALL:-0} > ${UPTO1:-0} && ${UPTO30:--1} == ${ALL:-0})); echo $?)" \
    "/metrics: some slurm jobs ops took over 1 s, none over 30 s: cut short at 2 s, not 60 s ($((${ALL:-0} - ${UPTO1:-0})) of $ALL over 1 s, $UPTO30 within 30 s)"
t_ok "$( ((${FAILS:-0} >= 3)); echo $?)" "/metrics: at least 3 failed slurm jobs ops ($FAILS)"

swap_jobs "$T/jobs.real"
T1=$(now_us)
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 60
t_is "$STATE/$ERR" "up/" "restoring the real jobs op brings the cluster up again by itself"
t_diag "up again $((($(now_us) - T1) / 1000)) ms after the restore"
wait_for '[ -z "$(pids_alive "$T_OUT/hang.pids")" ]' 30
t_is "$(pids_alive "$T_OUT/hang.pids")" "" "no process of any hanging run is left"
t_is "$(procs_of_pack | grep -c 'sleep 60')" 0 "no 'sleep 60' of the pack is left (/proc)"

# ---- (b) garbage ---------------------------------------------------------------
cat >"$T/jobs.garbage" <<'EOF'
#!/bin/sh
cat >/dev/null
echo 'this is garbage, not JSON {{{'
EOF
swap_jobs "$T/jobs.garbage"
wait_for 'cluster_state slurm; [[ $ERR == *"not a JSON object"* ]]' 60
t_like "$STATE" '^(degraded|unreachable)$' "garbage from jobs: the cluster is $STATE"
t_diag "$ERR"
t_like "$ERR" "pack $PACK_RE: jobs: .*answer is not a JSON object" \
    "the error says the answer is not a JSON object"
swap_jobs "$T/jobs.real"
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 60
t_is "$STATE" up "... and the cluster is up again once jobs is restored"

# ---- (c) too much output --------------------------------------------------------
cat >"$T/jobs.flood" <<EOF
#!/bin/sh
head -c 10485760 /dev/zero | tr '\\0' x
EOF
swap_jobs "$T/jobs.flood"
wait_for 'cluster_state slurm; [[ $ERR == *"larger than"* ]]' 60
t_like "$STATE" '^(degraded|unreachable)$' "10 MiB from jobs: the cluster is $STATE"
t_diag "$ERR"
t_like "$ERR" "pack $PACK_RE: jobs: output larger than 1048576 bytes" \
    "the error says the output is larger than the limit (1048576 bytes)"
swap_jobs "$T/jobs.real"
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 60
t_is "$STATE" up "... and the cluster is up again once jobs is restored"
wait_for '[ -z "$(procs_of_pack | grep -E "head|tr ")" ]' 30
t_is "$(procs_of_pack | grep -cE 'head|tr ')" 0 "no writer of the flood is left"

# ---- (d) exit 75 with a message ---------------------------------------------------
cat >"$T/jobs.tempfail" <<'EOF'
#!/bin/sh
echo "jobs: the frobnicator is on fire; try later" >&2
echo "second line, not shown" >&2
exit 75
EOF
swap_jobs "$T/jobs.tempfail"
wait_for 'cluster_state slurm; [[ $ERR == *frobnicator* ]]' 60
t_like "$STATE" '^(degraded|unreachable)$' "jobs exits 75: the cluster is $STATE"
t_diag "$ERR"
t_like "$ERR" "pack $PACK_RE: jobs: .*the frobnicator is on fire; try later" \
    "the pack's message shows in the error"
t_ok "$([[ $ERR != *"second line"* ]]; echo $?)" "... only its first line"
swap_jobs "$T/jobs.real"
wait_for 'cluster_state slurm; [ "$STATE" = up ]' 60
t_is "$STATE" up "... and the cluster is up again once jobs is restored"

# ---- (e) loomd is fine ---------------------------------------------------------------
t_is "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$LOOM_URL/healthz")" 200 \
    "loomd still answers /healthz"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "... and GET /v1/clusters"
submit '{"name":"slurm-after","command":["true"],"request":{"cluster":"slurm"}}'
SJ=$JOB
wait_for '[ "$(job_state "$SJ")" = completed ]' 60
t_is "$(job_state "$SJ")" completed "a Slurm job runs to completion after all that"
loomd_stop
t_is $? 0 "loomd stops with status 0"
SAN=$(grep -E 'Sanitizer|runtime error:|^==[0-9]+==' "$T/loomd.log" | head -n 20)
t_is "$SAN" "" "no sanitizer report in loomd's log"
t_done
