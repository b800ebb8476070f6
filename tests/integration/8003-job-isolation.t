#!/usr/bin/env bash
# 8003-job-isolation.t - a job cannot reach what is not its account's.
# loomd runs as its own account, loom (as the harness starts every loomd:
# loom-runas set root:loom 4750 as make install does), with its state_dir,
# loom.conf and token key its own, and PostgreSQL's socket in a directory
# loom may enter. alice's job runs with a secret in its environment;
# mallory's job then tries, each attempt's status and error checked: to
# read the token key, loom.conf, the state_dir, alice's output and her
# job's environment, to signal alice's job and loomd, to join alice's
# cgroup, and to reach its own supervisor's descriptors. Jobs run as alice-XXXXXX and mallory-XXXXXX,
# accounts this test makes. Nothing of loomd's reaches a process of an
# account's: not its environment (alice's supervisor's is the account's
# alone), not a descriptor loomd left open (loom-runas closes it), and
# loom-runas runs nothing as loomd's own account.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/local.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

t_account ALICE alice
t_account MALLORY mallory
AH=$T/home/$ALICE MH=$T/home/$MALLORY

# loomd runs as loom, as the harness starts it: state_dir, loom.conf and
# the token key are loom's; PostgreSQL's socket is in a directory loom may
# enter and the accounts may not
pg_start || t_bail "PostgreSQL did not start"
map_account alice "$ALICE"
map_account mallory "$MALLORY"
loomd_conf <<EOF
[cluster one]
adaptor = local
nodes = 2
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2
EOF
# a secret in loomd's environment (libpq reads PGPASSWORD there, say)
export LOOMD_ONLY_SECRET=s3cr3t-of-loomd
loomd_start || t_bail "loomd did not start"
unset LOOMD_ONLY_SECRET
STATE=$T/state
L=$LOOM_SERVICE_USER
t_is "$(ps -o user= -p "$LOOMD_PID")" "$L" "loomd runs as $L"
KEY=$STATE/token.key
t_is "$(stat -c '%U %a' "$KEY" "$T/loom.conf" "$STATE" | paste -sd' ')" "$L 600 $L 600 $L 700" \
    "its token key, loom.conf and state_dir are $L's alone"
TA=$(token_for alice user) && TM=$(token_for mallory user) && TOKEN=$(token_for admin admin) ||
    t_bail "no tokens"

# ---- alice's job: a secret in its environment -------------------------------------------
TOKEN=$TA
submit '{"name": "secret", "env": {"SECRET": "s3cr3t-of-alice"}, "command": ["/bin/sh", "-c", "echo alice-private; exec sleep 600"]}'
AJ=$JOB
wait_for '[ "$(job_state "$AJ")" = running ] && [ -s "$AH/loom-$AJ.out" ]' 30
t_ok $? "alice's job runs (as $ALICE, started by loomd as loom through loom-runas)"
APID=$(for p in $(job_procs "$AJ"); do [ "$(cat "/proc/$p/comm")" = sleep ] && echo "$p"; done)
t_like "$APID" '^[0-9]+$' "... its process is $APID"
t_is "$(ps -o user= -p "$APID")" "$ALICE" "... owned by $ALICE"
ACG=$(job_cgroup "$AJ" unified)
[ -n "$ACG" ] || ACG=$(job_cgroup "$AJ" freezer)
SUP=$(ps -o ppid= -p "$APID" | tr -d ' ')

# ---- mallory's attempts ------------------------------------------------------------------
# Each attempt prints "NAME rc=STATUS: FIRST LINE OF ITS ERRORS".
cat >"$MH/try.sh" <<'EOF'
try() {
    name=$1
    shift
    out=$("$@" 2>&1 >/dev/null)
    rc=$?
    echo "$name rc=$rc: $(echo "$out" | head -n 1)"
}
try key cat "$KEY"
try conf cat "$CONF"
try state ls "$STATE"
try output cat "$AOUT"
try environ cat "/proc/$APID/environ"
try kill-job kill -TERM "$APID"
try kill-loomd kill -TERM "$LOOMD"
try kill-sup kill -TERM "$SUP"
try cgroup sh -c "echo \$\$ > $ACG/cgroup.procs"
try own-sup-fd ls "/proc/$PPID/fd"
try own-sup-environ cat "/proc/$PPID/environ"
EOF
chown "$MALLORY:" "$MH/try.sh"
TOKEN=$TM
submit "{\"name\": \"mallory\", \"env\": {\"KEY\": \"$KEY\", \"CONF\": \"$T/loom.conf\", \"STATE\": \"$STATE\", \"AOUT\": \"$AH/loom-$AJ.out\", \"APID\": \"$APID\", \"LOOMD\": \"$LOOMD_PID\", \"SUP\": \"$SUP\", \"ACG\": \"$ACG\"}, \"command\": [\"/bin/sh\", \"$MH/try.sh\"]}"
MJ=$JOB
wait_for 'ended "$MJ"' 30
t_is "$(job_state "$MJ")" completed "mallory's job ran (as $MALLORY)"
OUT=$(cat "$MH/loom-$MJ.out")
line() { grep "^$1 rc=" <<<"$OUT"; }
t_is "$(line key)" "key rc=1: cat: $KEY: Permission denied" "it cannot read loomd's token key"
t_is "$(line conf)" "conf rc=1: cat: $T/loom.conf: Permission denied" "nor loom.conf"
t_is "$(line state)" "state rc=2: ls: cannot open directory '$STATE': Permission denied" "nor list the state_dir"
t_is "$(line output)" "output rc=1: cat: $AH/loom-$AJ.out: Permission denied" "nor alice's output"
t_is "$(line environ)" "environ rc=1: cat: /proc/$APID/environ: Permission denied" "nor her job's environment"
t_like "$(line kill-job)" "^kill-job rc=[12]: .*Operation not permitted" "it cannot signal alice's job"
t_like "$(line kill-loomd)" "^kill-loomd rc=[12]: .*Operation not permitted" "nor loomd"
t_like "$(line kill-sup)" "^kill-sup rc=[12]: .*Operation not permitted" "nor alice's supervisor"
t_like "$(line cgroup)" "^cgroup rc=[12]: .*Permission denied" "nor join alice's cgroup"
t_like "$(line own-sup-fd)" "^own-sup-fd rc=2: ls: cannot open directory '/proc/[0-9]+/fd': Permission denied" \
    "nor open its own supervisor's descriptors (the supervisor is not dumpable)"
t_like "$(line own-sup-environ)" "^own-sup-environ rc=1: cat: /proc/[0-9]+/environ: Permission denied" \
    "nor read its environment"

# ---- nothing of loomd's reaches the account --------------------------------------------
t_like "$(tr '\0' '\n' <"/proc/$LOOMD_PID/environ")" "LOOMD_ONLY_SECRET=s3cr3t-of-loomd" \
    "loomd has a secret in its environment"
t_is "$(tr '\0' '\n' <"/proc/$SUP/environ" | cut -d= -f1 | sort | paste -sd' ')" \
    "HOME LOGNAME PATH SHELL USER" \
    "alice's supervisor has none of loomd's environment: the account's HOME, USER, LOGNAME, SHELL and a PATH"
as_loom() { setpriv --reuid="$L" --regid="$L" --init-groups -- "$@"; }
RUNAS=$LOOM_TOP_BUILDDIR/loom-runas
t_is "$(as_loom "$RUNAS" run "$MALLORY" -- /bin/sh -c 'ls /proc/$$/fd' 7</dev/null 9<"$T/loom.conf" | paste -sd' ')" \
    "0 1 2" "a program loom-runas runs as an account has its standard input, output and error, not loomd's descriptors 7 and 9"
OUT=$(as_loom "$RUNAS" run "$L" -- /bin/true 2>&1)
t_is "$?: $OUT" "1: loom-runas: account $L is loomd's own: jobs may not run as it" \
    "loom-runas runs nothing as loomd's own account"

# and all is as it was
TOKEN=$TA
t_is "$(job_state "$AJ")/$(pstate "$APID")" running/S "alice's job runs on"
t_ok "$(alive "$LOOMD_PID"; echo $?)" "loomd runs on"
api GET "/v1/jobs/$AJ/output" >/dev/null
t_is "$STATUS/$(jget "$BODY" .data)" "200/alice-private" "alice reads her output through loomd (loom-runas read as $ALICE)"
TOKEN=$TM
api GET "/v1/jobs/$AJ/output" >/dev/null
t_is "$STATUS" 404 "mallory cannot: 404"
api GET "/v1/jobs/$AJ" >/dev/null
t_is "$STATUS" 404 "nor see alice's job"
TOKEN=$TA
api DELETE "/v1/jobs/$AJ" >/dev/null
wait_for 'ended "$AJ"' 30
t_is "$(job_state "$AJ")/$(pstate "$APID")" cancelled/gone "loomd (as loom) cancels alice's job through loom-runas"

loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
