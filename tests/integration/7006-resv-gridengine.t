#!/usr/bin/env bash
# 7006-resv-gridengine.t - Loom's reservations made in a real Grid Engine
# cell (two exec hosts of 4 slots) as advance reservations. A user's
# reservation on the second host is an AR in qrstat, of every slot there,
# for the owner's account; a Loom job inside it runs in it; jobs qsub'd
# directly while it lasts never run on that host (sampled), and once it is
# cancelled the AR is gone and the waiting one runs there. A short
# maintenance window's AR is gone once the window ended.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/gridengine.sh"

rget() {
    api GET "/v1/reservations/$1" >/dev/null
    jget "$BODY" "$2" 2>/dev/null
}
native() {
    api GET "/v1/reservations/$1" >/dev/null
    py '(d.get("native") or {}).get("id")' "$BODY" 2>/dev/null
}
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
# ar_line ID: qrstat's line of AR ID (id name owner state ...), or nothing.
ar_line() { qrstat -u '*' 2>/dev/null | awk -v a="$1" '$1 == a'; }
# on_host HOST: the running jobs in HOST's queue instance.
on_host() { qstat -u '*' -s r 2>/dev/null | awk -v q="all.q@$1" '$8 == q { print $1 }' | paste -sd' '; }

# Missing packages fail the test: CI installs them (./bootstrap check).
ge_available || t_bail "no Grid Engine here: $GE_WHY"
ge_start 1 || t_bail "Grid Engine did not start"
read -r H N1 <<<"$GE_NODES"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[scheduler]
interval_s = 1

[cluster ge]
adaptor = script
pack = gridengine
$GE_ENV
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs and reservations of this test are $ALICE's; hosts $H and $N1"
wait_for 'api GET /v1/clusters/ge >/dev/null; [ "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" = up/2 ]' 60
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" up/2 "the Grid Engine cluster is up with 2 hosts"
t_like "$(jget "$BODY" .capabilities)" '"reserve"' "its capabilities include reserve"

# ---- a user's reservation on the second host ---------------------------
api POST /v1/reservations "{\"nodes\":[\"ge/$N1\"],\"duration_s\":600,\"reason\":\"a user\"}" >/dev/null
t_is "$STATUS" 201 "a user's reservation on ge/$N1" || t_diag "$BODY"
R1=$(jget "$BODY" .id)
wait_for '[ "$(native "$R1")" != null ]' 30
AR=$(native "$R1")
t_like "$AR" '^[0-9]+$' "the reservation shows its advance reservation ($AR)"
t_is "$(rget "$R1" .native_error)" null "... and no error"
t_is "$(ar_line "$AR" | awk '{ print $2 }')" "loom-r$R1" "qrstat lists AR $AR as loom-r$R1"
qrstat -ar "$AR" -xml >"$T/ar.xml" 2>&1
t_is "$(grep -o 'queue_instance="[^"]*" slots="[0-9]*"' "$T/ar.xml")" \
    "queue_instance=\"all.q@$N1\" slots=\"4\"" "... every slot of $N1"
t_like "$(tr -d '\n ' <"$T/ar.xml")" "<acl_list><acluser=\"$ALICE\"/></acl_list>" "... open to $ALICE's jobs (its ACL)"

submit "{\"name\":\"inside\",\"command\":[\"/bin/sh\",\"-c\",\"hostname\"],\"request\":{\"cluster\":\"ge\",\"reservation\":\"$R1\",\"walltime_s\":60}}"
IN=$JOB
wait_for 'ended "$IN"' 90
job "$IN"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes.0)" "completed/$N1" "a Loom job inside it runs on $N1"
t_is "$(qacct -j "$(jget "$BODY" .native_id)" 2>/dev/null | awk '$1 == "arid" { print $2 }')" "$AR" \
    "qacct: it ran in AR $AR"

# Two jobs of 4 slots qsub'd directly: one runs on $H, the other waits;
# none runs on $N1 while the reservation lasts.
NAT=
for i in 1 2; do
    NAT="$NAT $(qsub -terse -b y -N "native-$i" -o /dev/null -j y -pe smp 4 sleep 300 2>/dev/null)"
done
t_like "$NAT" '^( [0-9]+){2}$' "two qsub jobs submitted directly ($NAT)"
wait_for '[ -n "$(on_host "$H")" ]' 60
onN1=
samples=0
t_end=$((SECONDS + 8))
while ((SECONDS < t_end)); do
    s=$(on_host "$N1")
    [ -z "$s" ] || onN1="$onN1 [$s]"
    samples=$((samples + 1))
    sleep 0.3
done
t_is "$onN1" "" "qstat: none ran on $N1 while the reservation lasted ($samples samples)"
t_like "$(ar_line "$AR")" "loom-r$R1" "... it lasted throughout"
WAIT=$(qstat -u '*' -s p 2>/dev/null | awk '$1 ~ /^[0-9]+$/ { print $1 }')
t_like "$WAIT" '^[0-9]+$' "one of them ($WAIT) waits"

api DELETE "/v1/reservations/$R1" >/dev/null
t_is "$STATUS" 200 "the reservation is cancelled"
wait_for '[ -z "$(ar_line "$AR")" ]' 30
t_is "$(ar_line "$AR")" "" "qrstat: AR $AR is gone"
wait_for '[ "$(native "$R1")" = null ]' 30
t_is "$(native "$R1")" null "the reservation shows no twin any more"
wait_for '[ "$(on_host "$N1")" = "$WAIT" ]' 60
t_is "$(on_host "$N1")" "$WAIT" "the waiting job runs on $N1 now"
qdel $NAT >/dev/null 2>&1
for j in $NAT; do ge_wait_job_gone "$j" 60; done
# Loom plans the window from now once it has seen them end.
wait_for 'api GET "/v1/jobs?cluster=ge&state=running" >/dev/null; [ "$(jlen "$BODY" .items)" = 0 ]' 60
t_is "$(jlen "$BODY" .items)" 0 "Loom has seen them end"

# ---- a short maintenance window ------------------------------------------
api POST /v1/reservations "{\"nodes\":[\"ge/$H\"],\"duration_s\":15,\"purpose\":\"maintenance\"}" >/dev/null
t_is "$STATUS" 201 "a maintenance window of 15 s on ge/$H" || t_diag "$BODY"
R2=$(jget "$BODY" .id)
t_is "$(jget "$BODY" .state)" active "... active at once"
wait_for '[ "$(native "$R2")" != null ]' 30
AR2=$(native "$R2")
t_is "$(ar_line "$AR2" | awk '{ print $2 }')" "loom-r$R2" "qrstat lists its AR $AR2"
wait_for '[ "$(rget "$R2" .state)" = done ] && [ "$(native "$R2")" = null ]' 60
t_is "$(rget "$R2" .state)/$(native "$R2")" done/null "after the window the reservation is done, without a twin"
t_is "$(ar_line "$AR2")" "" "qrstat: AR $AR2 is gone"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
