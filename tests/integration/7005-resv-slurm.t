#!/usr/bin/env bash
# 7005-resv-slurm.t - Loom's reservations made in a real Slurm (4 nodes of
# 2 cpus) too. A maintenance window on n2 is a Slurm reservation on n2
# with the MAINT flag; sbatch jobs submitted directly while it lasts never
# run on n2 (sampled until the window is cancelled), and once it is
# cancelled the Slurm reservation is gone and the waiting one runs there.
# A maintenance request (node-off on n3) makes one too, gone once its
# window ended. A user's reservation is an ordinary Slurm one for the
# owner's account; a Loom job inside it runs in it. The reservation shows
# its twin (native) and keeps it across a restart of loomd; one that ended
# long ago while loomd was stopped, its twin not yet removed, is read in
# full at the start (not light, as one long over without a twin is), its
# twin removed, and then it leaves memory. A pack that
# cannot suspend lists no such capability and a suspend is refused naming
# it; a pack whose reserve fails shows why on the reservation and in the
# event log.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

# sres NAME: scontrol's one line of reservation NAME, or nothing.
sres() { scontrol show reservation -o "$1" 2>/dev/null | grep "^ReservationName=$1 "; }
# skey LINE KEY: the value of KEY=... in a line of scontrol.
skey() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1"; }
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
on_n2() { squeue -h -t R,CG -w n2 -o '%i' 2>/dev/null | paste -sd' '; }

slurm_available || t_bail "no Slurm here: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
conf() {
    # ended reservations stay in memory 30 min: longer than the test,
    # shorter than the hour R2 and R5 are made to have ended ago
    loomd_conf <<EOF2
[scheduler]
interval_s = 1
resv_memory_s = 1800

[cluster slurm]
adaptor = script
pack = $1
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
}
conf slurm
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs and reservations of this test are $ALICE's"
wait_for 'api GET /v1/clusters/slurm >/dev/null; [ "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" = up/4 ]' 30
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" up/4 "the Slurm cluster is up with 4 nodes"
t_is "$(jget "$BODY" .capabilities)" '["suspend", "hold", "node_state", "reserve"]' \
    "its capabilities: the slurm pack's ops"

# ---- a maintenance window on n2 ------------------------------------------
api POST /v1/reservations '{"nodes":["slurm/n2"],"duration_s":600,"purpose":"maintenance","reason":"firmware"}' >/dev/null
t_is "$STATUS" 201 "a maintenance window on slurm/n2" || t_diag "$BODY"
R1=$(jget "$BODY" .id)
wait_for '[ "$(native "$R1")" = "loom-r$R1" ]' 30
t_is "$(native "$R1")" "loom-r$R1" "the reservation shows its Slurm twin loom-r$R1"
t_is "$(rget "$R1" .native_error)" null "... and no error"
L=$(sres "loom-r$R1")
t_is "$(skey "$L" Nodes)" n2 "scontrol show reservation: loom-r$R1 is on n2" || t_diag "$L"
t_like "$(skey "$L" Flags)" '(^|,)MAINT(,|$)' "... with the MAINT flag ($(skey "$L" Flags))"
t_is "$(skey "$L" State)" ACTIVE "... active now"
t_like "$(loomctl reservations --cluster slurm 2>&1)" \
    "(^|
) *$R1 +maintenance +[^ ]+ +slurm +n2 +[^ ]+ +[^ ]+ +active +loom-r$R1( |\$)" \
    "loomctl reservations: its NATIVE column names loom-r$R1"
t_like "$(pg_sql "SELECT message FROM events WHERE kind = 'reservation' AND subject = 'reservation $R1'")" \
    "made as its reservation loom-r$R1" "the event log says it was made"

# Four native jobs of a whole node each (2 cpus), submitted to Slurm
# directly: three run on n1, n3 and n4, the fourth waits; none runs on n2
# while the window lasts.
NAT=
for i in 1 2 3 4; do
    NAT="$NAT $(sbatch --parsable -J "native-$i" -N1 -c2 -t 5 -o /dev/null --wrap 'sleep 300')"
done
t_like "$NAT" '^( [0-9]+){4}$' "four sbatch jobs submitted directly ($NAT)"
running_n() { squeue -h -t R -j "$(tr ' ' , <<<"${NAT# }")" -o '%i' 2>/dev/null | wc -l; }
wait_for '[ "$(running_n)" -ge 3 ]' 60
on2=
samples=0
t_end=$((SECONDS + 8))
while ((SECONDS < t_end)); do
    s=$(on_n2)
    [ -z "$s" ] || on2="$on2 [$s]"
    samples=$((samples + 1))
    sleep 0.2
done
t_is "$(running_n)" 3 "three of them run"
t_is "$on2" "" "squeue: none ran on n2 while the window lasted ($samples samples)"
t_is "$(skey "$(sres "loom-r$R1")" State)" ACTIVE "... the window lasted throughout"
PEND=$(squeue -h -t PD -j "$(tr ' ' , <<<"${NAT# }")" -o '%i' 2>/dev/null)
t_like "$PEND" '^[0-9]+$' "the fourth ($PEND) waits"

api DELETE "/v1/reservations/$R1" >/dev/null
t_is "$STATUS" 200 "the window is cancelled"
wait_for '[ -z "$(sres "loom-r$R1")" ]' 30
t_is "$(sres "loom-r$R1")" "" "its Slurm reservation is gone"
wait_for '[ "$(native "$R1")" = null ]' 30
t_is "$(native "$R1")/$(rget "$R1" .native_error)" null/null "the reservation shows no twin any more"
wait_for '[ "$(on_n2)" = "$PEND" ]' 60
t_is "$(on_n2)" "$PEND" "the waiting job runs on n2 now"
scancel $NAT 2>/dev/null
wait_for '[ -z "$(squeue -h -o %i 2>/dev/null)" ]' 60

# ---- a maintenance request (node-off) on n3 -----------------------------
api POST /v1/maintenance '{"nodes":["slurm/n3"],"action":"node-off","reason":"power","window":{"duration_s":15}}' >/dev/null
t_is "$STATUS" 201 "a node-off request for slurm/n3" || t_diag "$BODY"
MID=$(jget "$BODY" .id)
R2=$(jget "$BODY" .reservation)
wait_for '[ -n "$(sres "loom-r$R2")" ]' 30
L=$(sres "loom-r$R2")
t_is "$(skey "$L" Nodes)" n3 "its window is a Slurm reservation on n3 (loom-r$R2)" || t_diag "$L"
t_like "$(skey "$L" Flags)" '(^|,)MAINT(,|$)' "... with the MAINT flag"
wait_for 'api GET "/v1/maintenance/$MID" >/dev/null; [ "$(jget "$BODY" .state)" = done ]' 90
t_is "$(jget "$BODY" .state)" done "the request is done"
wait_for '[ -z "$(sres "loom-r$R2")" ] && [ "$(native "$R2")" = null ]' 30
t_is "$(sres "loom-r$R2")" "" "after the window its Slurm reservation is gone"
t_is "$(rget "$R2" .state)/$(native "$R2")" done/null "... and the reservation is done, without a twin"

# ---- a user's reservation on n4 -------------------------------------------
api POST /v1/reservations '{"nodes":["slurm/n4"],"duration_s":600,"reason":"a user"}' >/dev/null
t_is "$STATUS" 201 "a user's reservation on slurm/n4" || t_diag "$BODY"
R3=$(jget "$BODY" .id)
t_is "$(jget "$BODY" .account)" "$ALICE" "... for the owner's account"
wait_for '[ -n "$(sres "loom-r$R3")" ]' 30
L=$(sres "loom-r$R3")
t_is "$(skey "$L" Nodes)/$(skey "$L" Users)" "n4/$ALICE" \
    "scontrol: loom-r$R3 is on n4 for $ALICE" || t_diag "$L"
t_unlike() { if [[ $1 =~ $2 ]]; then t_ok 1 "$3"; else t_ok 0 "$3"; fi; }
t_unlike "$(skey "$L" Flags)" 'MAINT' "... an ordinary one ($(skey "$L" Flags))"
OTHER=$(sbatch --parsable -J other -N1 -c1 -t 5 -w n4 -o /dev/null --wrap 'sleep 300')
submit "{\"name\":\"inside\",\"command\":[\"/bin/sh\",\"-c\",\"echo inside on \$SLURMD_NODENAME\"],\"request\":{\"cluster\":\"slurm\",\"reservation\":\"$R3\",\"walltime_s\":60}}"
IN=$JOB
wait_for 'ended "$IN"' 60
job "$IN"
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes.0)" completed/n4 "a Loom job inside it runs on n4"
t_like "$(scontrol show job -o "$(jget "$BODY" .native_id)" 2>/dev/null)" "Reservation=loom-r$R3" \
    "... inside loom-r$R3 in Slurm"
t_is "$(squeue -h -j "$OTHER" -o %t 2>/dev/null)" PD "a job sbatch'd onto n4 directly waits"
scancel "$OTHER" 2>/dev/null

# ---- kept across a restart; a pack that can neither suspend nor reserve ----
T_LITE=$T/lite
mkdir -p "$T_LITE" && cp -R "$LOOM_TOP_SRCDIR/adaptors/scripts/slurm" "$T_LITE/slurm" ||
    t_bail "cannot copy the slurm pack"
cat >"$T_LITE/slurm/pack.json" <<'EOF2'
{"protocol": 1, "name": "slurm-lite", "model": "disabled-scheduler",
 "runs_as_user": true,
 "ops": ["nodes", "jobs", "queues", "start", "cancel", "set-node-state",
         "hold", "release", "reserve", "unreserve"]}
EOF2
cat >"$T_LITE/slurm/reserve" <<'EOF2'
#!/bin/sh
echo "reserve: refused by this site's pack" >&2
exit 1
EOF2
chmod -R a+rX "$T_LITE" && chmod 0755 "$T_LITE/slurm/reserve"
# R5 on n3 ends while loomd is stopped, long ago as the start sees it,
# before its twin was removed; R2 (done, without a twin) is made as old
api POST /v1/reservations '{"nodes":["slurm/n3"],"duration_s":600,"reason":"ends away"}' >/dev/null
t_is "$STATUS" 201 "a user's reservation on slurm/n3" || t_diag "$BODY"
R5=$(jget "$BODY" .id)
wait_for '[ "$(native "$R5")" = "loom-r$R5" ] && [ -n "$(sres "loom-r$R5")" ]' 30
t_is "$(native "$R5")" "loom-r$R5" "... made in Slurm as loom-r$R5"
loomd_stop
t_is $? 0 "loomd stops"
OLD_START=$(at -4200) OLD_END=$(at -3600)
pg_sql "UPDATE reservations SET state = 'done',
            doc = regexp_replace(regexp_replace(regexp_replace(doc::text,
            '\"start\":\"[^\"]*\"', '\"start\":\"$OLD_START\"'),
            '\"end\":\"[^\"]*\"', '\"end\":\"$OLD_END\"'),
            '\"state\":\"[a-z]*\"', '\"state\":\"done\"')::json
        WHERE id IN ($R2, $R5)" >/dev/null
t_is "$(pg_sql "SELECT string_agg(concat_ws(' ', doc->>'state', doc->>'end',
            coalesce(doc->'native'->>'id', '-')), ',' ORDER BY id)
        FROM reservations WHERE id IN ($R2, $R5)")" \
    "done $OLD_END -,done $OLD_END loom-r$R5" "R2 and R5 ended an hour ago, R5 with its twin"
conf "$T_LITE/slurm"
loomd_start || t_bail "loomd did not start again"
t_like "$(grep 'reservation(s) in' "$T/loomd.log" | tail -n 1)" \
    "loaded 3 reservation\(s\) in [0-9]+ ms; 1 ended before 1800 s ago left in the database" \
    "the start reads R2 light, and R5 (with a twin) in full with R1 and R3"
wait_for '[ -z "$(sres "loom-r$R5")" ] && [ "$(native "$R5")" = null ]' 30
t_is "$(sres "loom-r$R5")" "" "R5's twin is removed from Slurm after the start"
t_is "$(rget "$R5" .state)/$(native "$R5")/$(rget "$R5" .native_error)" done/null/null \
    "... and R5 shows it done, without a twin"
wait_for 'api GET /v1/runtime >/dev/null; [ "$(jget "$BODY" .scheduler.reservations_evicted)" = 2 ]' 30
t_is "$(jget "$BODY" .scheduler.reservations_in_memory)/$(jget "$BODY" .scheduler.reservations_evicted)" \
    2/2 "then R5 leaves memory as R2 did: R1 and R3 stay"
t_is "$(native "$R3")" "loom-r$R3" "after a restart the user's reservation still shows its twin"
wait_for 'api GET /v1/clusters/slurm >/dev/null; [ "$(jget "$BODY" .state)" = up ]' 30
t_is "$(jget "$BODY" .capabilities)" '["hold", "node_state", "reserve"]' \
    "a pack without suspend: no suspend capability"
submit '{"name":"long","command":["sleep","120"],"request":{"cluster":"slurm","nodes":1,"walltime_s":300}}'
LONG=$JOB
wait_for '[ "$(field "$LONG" .state)" = running ]' 60
api POST "/v1/jobs/$LONG/suspend" >/dev/null
t_is "$STATUS" 501 "a suspend is refused: 501"
t_like "$(jget "$BODY" .error.message)" "cluster slurm: cannot suspend: .*lacks the 'suspend' capability" \
    "... naming the capability it lacks"
api DELETE "/v1/jobs/$LONG" >/dev/null

api DELETE "/v1/reservations/$R3" >/dev/null
t_is "$STATUS" 200 "the user's reservation is cancelled"
wait_for '[ -z "$(sres "loom-r$R3")" ]' 30
t_is "$(sres "loom-r$R3")" "" "its Slurm reservation is gone (made before the restart)"

api POST /v1/reservations '{"nodes":["slurm/n1"],"duration_s":600}' >/dev/null
t_is "$STATUS" 201 "a reservation where the pack's reserve fails" || t_diag "$BODY"
R4=$(jget "$BODY" .id)
wait_for '[ "$(rget "$R4" .native_error)" != null ]' 30
t_like "$(rget "$R4" .native_error)" "reserve: refused by this site's pack" \
    "the reservation says why it has no twin"
t_is "$(native "$R4")" null "... and has none"
t_like "$(loomctl reservations --cluster slurm 2>&1)" "(^|
) *$R4 +user .* +failed( |\$)" "loomctl reservations: NATIVE failed"
wait_for '[ -n "$(pg_sql "SELECT 1 FROM events WHERE kind = '"'reservation'"' AND subject = '"'reservation $R4'"' AND level = '"'warn'"'")" ]' 30
t_like "$(pg_sql "SELECT message FROM events WHERE subject = 'reservation $R4'")" \
    "making its reservation in the cluster's system failed .*refused by this site's pack" "... and so does the event log"
t_is "$(sres "loom-r$R4")" "" "Slurm has no reservation for it"
api DELETE "/v1/reservations/$R4" >/dev/null
wait_for '[ "$(rget "$R4" .native_error)" = null ]' 30
t_is "$(rget "$R4" .state)/$(rget "$R4" .native_error)" cancelled/null \
    "cancelled, it owes no twin: the error goes (the event log keeps it)"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
