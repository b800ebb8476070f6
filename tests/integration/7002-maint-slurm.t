#!/usr/bin/env bash
# 7002-maint-slurm.t - the maintenance cycle on a real Slurm (4 nodes of 2
# cpus): a goal of kernel 6.1 for the node a job runs on and a report of
# 5.10 make a request of the [rule kernel]; the node drains in Slurm
# (sinfo: draining, with Loom's reason), jobs submitted meanwhile run on the
# other nodes, the running job completes (not killed), the action
# (tests/fixtures/maintenance/action.sh, posting kernel 6.1) runs while the
# node is drained (Loom shows it maint, to the test and to the action;
# sinfo drained$, inside the MAINT reservation Loom made for the window),
# verification passes, the request is done and the node is idle in Slurm
# again and takes a job.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

FIX=$LOOM_TOP_SRCDIR/tests/fixtures/maintenance
OPEN='("requested", "planned", "draining", "in-progress", "verifying")'

ok_if() {
    case $1 in *-\ * | *\ -* | -*) echo 1; return ;; esac
    (($1)) 2>/dev/null && echo 0 || echo 1
}
ep() {
    if [ -n "$1" ]; then epoch "$1"; else echo -; fi
}
running() { [ "$(field "$1" .state)" = running ]; }
ended() {
    case $(field "$1" .state) in completed | failed | cancelled) return 0 ;; esac
    return 1
}
# sjob NAME NODES CPUS WALLTIME SHELL-COMMAND: a job pinned to cluster slurm.
sjob() {
    submit "{\"name\":\"$1\",\"command\":[\"/bin/sh\",\"-c\",\"$5\"],\"request\":{\"cluster\":\"slurm\",\"nodes\":$2,\"cpus_per_node\":$3,\"walltime_s\":$4}}"
}
nstate() {
    api GET "/v1/nodes/slurm/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
mstate() {
    api GET "/v1/maintenance/$1" >/dev/null
    jget "$BODY" .state 2>/dev/null
}
mhist() {
    py '" ".join(h["state"] for h in d.get("history") or [] if h["state"] != "requested")' "$BODY" 2>/dev/null
}
open_req() {
    api GET /v1/maintenance >/dev/null
    py "' '.join(m['id'] for m in d['items'] if '$1' in m['nodes'] and m['state'] in $OPEN)" "$BODY" 2>/dev/null
}
diff_rows() {
    api GET "/v1/state/diff?$1" >/dev/null
    [ "$STATUS" = 200 ] || { echo "HTTP $STATUS"; return; }
    py '"\n".join(" ".join(str(r.get(k)) for k in ("node", "attribute", "goal", "actual", "action", "maintenance")) for r in d["items"])' "$BODY"
}
# sstate NODE: the node's state in sinfo (long form: idle, mixed, draining,
# drained, ...).
sstate() { sinfo -h -N -n "$1" -o '%T' 2>/dev/null | head -n 1; }
sreason() { sinfo -h -N -n "$1" -o '%E' 2>/dev/null | head -n 1; }

# Missing packages fail the test: CI installs them (./bootstrap check).
slurm_available || t_bail "no Slurm here: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
mkdir -p "$T/maint"
cp "$FIX/action.sh" "$T/maint/action.sh" && chmod 0755 "$T/maint/action.sh" ||
    t_bail "cannot copy the action fixture"
TF=$T/maint/token
loomd_conf <<EOF2
[scheduler]
interval_s = 1

[maintenance]
actual_ttl_s = 3600
compare_s = 5
verify_s = 20

[action reinstall]
command = $T/maint/action.sh --sleep 2 --watch $T/maint/states --hold $T/maint/release %c %n %i $TF kernel=6.1
timeout_s = 30
duration_s = 60
fixes = kernel

[rule kernel]
attribute = kernel
when = differs
action = reinstall
cluster = slurm
within_s = 600
duration_s = 60
max_nodes = 1

[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
# The jobs run as a test account, the admin token's subject.
t_account ALICE alice
admin_token "$ALICE" || t_bail "no token"
t_diag "the jobs of this test run as $ALICE"
MON=$(token_for nagios monitor) && [ -n "$MON" ] || t_bail "no monitor token"
printf '%s\n' "$MON" >"$TF" && chmod 0600 "$TF" && loom_owns "$T/maint"
wait_for 'api GET /v1/clusters/slurm >/dev/null; [ "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" = up/4 ]' 30
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" up/4 "the Slurm cluster is up with 4 nodes"

# ---- a job on the node, a goal and a mismatching report --------------------------
# One of the node's two cpus: only the drain keeps Slurm from starting
# another job there. It runs until the test lets it end (the file busy.go;
# 100 s at most).
sjob busy 1 1 180 'i=0; while [ ! -e '"$T"'/maint/busy.go ] && [ $i -lt 500 ]; do sleep 0.2; i=$((i + 1)); done; echo busy done'
BUSY=$JOB
wait_for 'running "$BUSY"' 30
t_is "$(field "$BUSY" .state)" running "a job (1 cpu, until the test lets it end) runs on Slurm"
N=$(field "$BUSY" .nodes.0)
t_like "$N" '^n[1-4]$' "... on slurm/$N"
api PUT "/v1/goal/nodes/slurm/$N" '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 200 "PUT goal kernel=6.1 for slurm/$N" || t_diag "$BODY"
T_REP=$(date +%s)
TOKEN=$MON api POST "/v1/actual/nodes/slurm/$N" '{"attributes":{"kernel":"5.10"}}' >/dev/null
t_is "$STATUS" 200 "a monitor reports kernel=5.10 for slurm/$N" || t_diag "$BODY"
wait_for '[ -n "$(open_req "slurm/$N")" ]' 30
MID=$(open_req "slurm/$N")
t_like "$MID" '^[0-9]+$' "a maintenance request appears ($MID)"
api GET "/v1/maintenance/$MID" >/dev/null
H0=$(ep "$(py '(d.get("history") or [{}])[0].get("time") or ""' "$BODY" 2>/dev/null)")
t_ok "$(ok_if "$H0 >= T_REP")" "... made after the report (at $H0, the report at $T_REP)"
RID=$(jget "$BODY" .reservation)
t_is "$(py '[d["cluster"], d["nodes"], d["action"], d["rule"]]' "$BODY" 2>/dev/null)" \
    "[\"slurm\", [\"slurm/$N\"], \"reinstall\", \"kernel\"]" "... of the rule kernel, action reinstall, on slurm/$N"
t_is "$(diff_rows "cluster=slurm")" "slurm/$N kernel 6.1 5.10 reinstall $MID" \
    "the diff shows the mismatch, its action and its request"

wait_for '[[ $(sstate "$N") =~ ^drain ]]' 30
t_like "$(sstate "$N")" '^drain(ing|ed)' "sinfo: $N is $(sstate "$N")"
t_like "$(sreason "$N")" "loom maintenance $MID" "... with the reason loom maintenance $MID ($(sreason "$N"))"
t_is "$(nstate "$N")" draining "Loom shows slurm/$N draining"

# Jobs submitted meanwhile: seven 1-cpu jobs for the 7 free cpus, one of
# them on slurm/$N unless it is drained.
MEANWHILE=
for i in 1 2 3 4 5 6 7; do
    sjob "meanwhile-$i" 1 1 60 'sleep 3'
    MEANWHILE="$MEANWHILE $JOB"
done
busy_n=
samples=0
seen_drained=
t_end=$((SECONDS + 60))
while ((SECONDS < t_end)); do
    s=$(squeue -h -t R,CG -w "$N" -o '%k' 2>/dev/null | grep -v "^loom:$BUSY\$" | paste -sd' ')
    [ -z "$s" ] || busy_n="$busy_n [$s]"
    samples=$((samples + 1))
    left=0
    for id in $MEANWHILE; do ended "$id" || left=$((left + 1)); done
    [ "$left" = 0 ] && break
    sleep 0.3
done
t_is "$busy_n" "" "squeue: no other job ran on $N ($samples samples)"
bad=
for id in $MEANWHILE; do
    job "$id"
    [ "$(jget "$BODY" .state)" = completed ] || bad="$bad [$id $(jget "$BODY" .state)]"
    [ "$(jget "$BODY" .nodes.0)" = "$N" ] && bad="$bad [$id on $N]"
done
t_is "$(wc -w <<<"$MEANWHILE")$bad" 7 "the 7 jobs submitted meanwhile completed on the other nodes"
touch "$T/maint/busy.go" # the busy job may end now

# The job ends; the node is drained in Slurm while the action runs. A look
# reads the request, the node in Loom and in sinfo, the request again:
# when both reads say in-progress, the node was read while it was. The
# action holds (--hold) until three such looks were taken and one of them
# saw the node inside the window's MAINT reservation in Slurm (sinfo's $):
# the window began early, so its native reservation is made again with
# the new start, a call through the server thread that a loaded machine
# may take a while to make.
looks=0 seen=
t_end=$((SECONDS + 90))
while ((SECONDS < t_end)); do
    st=$(mstate "$MID")
    ns=$(nstate "$N")/$(sstate "$N")
    st2=$(mstate "$MID")
    if [ "$st" = in-progress ] && [ "$st2" = in-progress ]; then
        looks=$((looks + 1))
        case " $seen " in *" $ns "*) ;; *) seen="$seen${seen:+ }$ns" ;; esac
    fi
    [ "$looks" -lt 3 ] || [[ $seen != *'$'* ]] || touch "$T/maint/release"
    case $st2 in done | failed | cancelled) break ;; esac
    sleep 0.2
done
touch "$T/maint/release"
wait_for 'ended "$BUSY"' 30
job "$BUSY"
t_is "$(py '[d["state"], d["exit_code"]]' "$BODY")" '["completed", 0]' \
    "the running job completed with exit code 0 (not killed)"
t_like "$(cat "$(jget "$BODY" .stdout)" 2>/dev/null)" '^busy done$' "... it ran to its end (its output)"
# sinfo's "$": inside a MAINT reservation, Loom's window; without it only
# while the window, begun early, is made again in Slurm.
t_like "$((looks >= 3))/$seen" '^1/maint/drained\$?( maint/drained\$?)?$' \
    "while in progress: Loom shows maint, sinfo drained ($seen; $looks looks)"
t_like "$seen" 'drained\$' "... inside the window's MAINT reservation (sinfo drained\$)"
read -r wn ws < <(awk -v id="$MID" '$1 == id { n++; s[$4] = 1 } END { o = ""; for (k in s) o = o (o == "" ? "" : " ") k; print n + 0, o }' "$T/maint/states" 2>/dev/null)
t_is "$((wn >= 1))/$ws" 1/maint \
    "... and to the action, in each of the $wn looks it took while it ran (--watch)"
api GET "/v1/maintenance/$MID" >/dev/null
t_is "$(jget "$BODY" .state)" done "the request is done" || t_diag "$BODY"
t_is "$(mhist)" "planned draining in-progress verifying done" \
    "... its history: planned, draining, in-progress, verifying, done"
t_like "$(jget "$BODY" .output)" "action on slurm/$N for maintenance $MID" "... the action ran (its output)"
wait_for '[ "$(sstate "$N")" = idle ]' 30
t_is "$(sstate "$N")" idle "sinfo: $N is idle again"
wait_for '[ "$(nstate "$N")" = idle ]' 30
t_is "$(nstate "$N")" idle "Loom shows slurm/$N idle"
t_is "$(diff_rows "cluster=slurm")" "" "no mismatch is left"
api GET '/v1/reservations?purpose=maintenance' >/dev/null
t_is "$(py "[r['state'] for r in d['items'] if r['id'] == '$RID']" "$BODY" 2>/dev/null)" \
    '["done"]' "its reservation ($RID) is done"
sjob all 4 2 60 'echo all on $SLURMD_NODENAME'
ALL=$JOB
wait_for 'ended "$ALL"' 60
t_is "$(field "$ALL" .state)/$(py '",".join(sorted(d))' "$(field "$ALL" .nodes)")" completed/n1,n2,n3,n4 \
    "a job of all 4 nodes runs: $N takes jobs again"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
