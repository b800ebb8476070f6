#!/usr/bin/env bash
# 3207-slurm-commands-fields.t - what Loom's Slurm commands answer for the
# fields and options Slurm has, each with the real value or refused,
# never a made-up one: a job's comment (sbatch --comment, squeue %k,
# scontrol Comment=), its nice (scontrol Nice=), what it used (sacct
# UserCPU, SystemCPU, TotalCPU, MaxRSS, which the local cluster measures,
# Unknown where its cluster does not), no QOS (%q refused), an array's
# tasks a line each (squeue -r), sbatch --get-user-env's warning; and two
# requests on one kept-alive connection to the listen_peer socket, each
# known as the peer that opened it. Against the fabric of 3201: a local
# cluster and a real Slurm.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}
# cputime MS: milliseconds as sacct writes cpu time under an hour.
cputime() {
    printf '%02d:%02d.%03d' $(($1 / 60000)) $(($1 / 1000 % 60)) $(($1 % 1000))
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
t_account ALICE alice || t_bail "cannot make an account"
t_account BOB bob || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"

# ---- the comment ----------------------------------------------------------------
OUT=$(as_user "$ALICE" sbatch --parsable -M local --mem=300 \
    --comment 'run 7, kept' --wrap 'dd if=/dev/zero of=/dev/null bs=64M count=4 2>/dev/null
i=0; while [ $i -lt 100000 ]; do i=$((i + 1)); done' 2>&1)
t_like "$OUT" '^[0-9]+;local$' "sbatch --comment is taken ($OUT)"
J1=${OUT%;*}
t_is "$(field "$J1" .comment)" "run 7, kept" "... the job's comment in the API"
t_is "$(as_user "$ALICE" squeue -h -j "$J1" -o '%k')" "run 7, kept" "squeue -o %k shows it"
t_is "$(as_user "$ALICE" squeue -h -j "$J1" -O Comment:20)" "run 7, kept" "squeue -O Comment shows it"
wait_for 'ended "$J1"' 90
t_like "$(as_user "$ALICE" scontrol -o show job "$J1")" " Comment=run 7, kept " \
    "scontrol show job: Comment="
COMMENT=$(head -c 1025 /dev/zero | tr '\0' c)
OUT=$(as_user "$ALICE" sbatch --comment "$COMMENT" --wrap true 2>&1)
t_like "$?/$OUT" "^1/sbatch: error: --comment=c+: a comment has at most 1024 bytes\$" \
    "a comment of 1025 bytes is refused, exit 1"
cat >"$T/commented.sh" <<'EOS'
#!/bin/sh
#SBATCH --comment="from the script"
#SBATCH --hold
true
EOS
chmod 0644 "$T/commented.sh"
OUT=$(as_user "$ALICE" sbatch --parsable "$T/commented.sh" 2>&1)
t_is "$(field "$OUT" .comment)" "from the script" "#SBATCH --comment gives the comment"
t_is "$(as_user "$ALICE" scontrol -o show job "$OUT" | grep -c ' Comment=')" 1 \
    "... which scontrol shows"
as_user "$ALICE" scancel "$OUT"

# ---- what a job used: sacct's cpu times and MaxRSS -------------------------------
job "$J1"
UMS=$(jget "$BODY" .usage.user_cpu_ms)
SMS=$(jget "$BODY" .usage.system_cpu_ms)
RSS=$(jget "$BODY" .usage.max_rss_kb)
t_like "$(jget "$BODY" .state)/$UMS/$SMS/$RSS" '^completed/[0-9]+/[0-9]+/[0-9]+$' \
    "the ended local job has its usage in the API ($UMS ms user, $SMS ms system, $RSS KiB)"
[ "${RSS:-0}" -ge 65536 ]
t_ok $? "... its MaxRSS holds dd's 64 MiB buffer ($RSS KiB)"
[ "${UMS:-0}" -gt 0 ]
t_ok $? "... it used user cpu time ($UMS ms)"
t_is "$(as_user "$ALICE" sacct -j "$J1.batch" -o NCPUS,UserCPU,SystemCPU,TotalCPU,MaxRSS -P -n | tail -n 1)" \
    "1|$(cputime "$UMS")|$(cputime "$SMS")|$(cputime $((UMS + SMS)))|${RSS}K" \
    "sacct -o UserCPU,SystemCPU,TotalCPU,MaxRSS (ARC's scan): the values the local cluster measured"
OUT=$(as_user "$ALICE" sbatch --parsable -M slurm --wrap true 2>&1)
J2=${OUT%;*}
wait_for 'ended "$J2"' 90
t_like "$(as_user "$ALICE" sacct -j "$J2.batch" -o NCPUS,Start,End,UserCPU,SystemCPU,MaxRSS -P -n | tail -n 1)" \
    '^1\|[0-9-]+T[0-9:]+\|[0-9-]+T[0-9:]+\|Unknown\|Unknown\|Unknown$' \
    "a job on Slurm, whose usage Loom does not read: Unknown, not an empty column"
OUT=$(as_user "$ALICE" sbatch --parsable -M local -t 5 --wrap 'sleep 300' 2>&1)
J3=${OUT%;*}
wait_for '[ "$(job_state "$J3")" = running ]' 90
t_is "$(as_user "$ALICE" sacct -X -j "$J3" -o State,UserCPU,MaxRSS -P -n)" "RUNNING|Unknown|Unknown" \
    "a running job: Unknown until it ends"

# ---- nice and QOS ---------------------------------------------------------------
OUT=$(as_user "$ALICE" sbatch --parsable --hold --nice=7 --wrap true 2>&1)
J4=$OUT
t_like "$(as_user "$ALICE" scontrol -o show job "$J4")" " Priority=-7 Nice=7 " \
    "scontrol show job: Nice=7 for sbatch --nice=7 (priority -7)"
t_like "$(as_user "$ALICE" scontrol -o show job "$J1")" " Priority=0 Nice=0 " \
    "... Nice=0 for a job of priority 0"
t_is "$(as_user "$ALICE" scontrol -o show job "$J4" | grep -c 'QOS=')" 0 \
    "scontrol show job has no QOS= (Loom has none)"
OUT=$(as_user "$ALICE" squeue -o '%i %q' 2>&1)
t_is "$?/$OUT" "1/squeue: error: format: %q (QOS) is not supported by Loom: Loom has no QOS: a job's priority is its own (%Q)" \
    "squeue -o %q is refused, naming the field"
OUT=$(as_user "$ALICE" squeue -O JobID,QOS 2>&1)
t_like "$?/$OUT" "^1/squeue: error: format: QOS is not supported by Loom" "squeue -O QOS too"
OUT=$(as_user "$ALICE" squeue --qos=normal 2>&1)
t_is "$?/$OUT" "1/squeue: error: --qos is not supported by Loom: Loom has no QOS" \
    "squeue --qos is refused"
OUT=$(as_user "$ALICE" sacct -q normal 2>&1)
t_is "$?/$OUT" "1/sacct: error: --qos is not supported by Loom: Loom has no QOS" \
    "sacct -q too"
OUT=$(as_user "$ALICE" squeue -o '%Y' 2>&1)
t_like "$OUT" "it has %i" "the letters listed for an unknown one ..."
t_is "$(printf '%s' "$OUT" | grep -c '%q')" 0 "... leave %q out"

# ---- squeue -r: an array's waiting tasks a line each ------------------------------
OUT=$(as_user "$ALICE" sbatch --parsable --hold --array=1-4 --wrap true 2>&1)
JA=$OUT
t_is "$(as_user "$ALICE" squeue -h -j "$JA" -o '%i %T')" "${JA}_[1-4] PENDING" \
    "without -r the array's waiting tasks are one line"
t_is "$(as_user "$ALICE" squeue -h -r -j "$JA" -o '%i %F %K %T')" "${JA}_1 $JA 1 PENDING
${JA}_2 $JA 2 PENDING
${JA}_3 $JA 3 PENDING
${JA}_4 $JA 4 PENDING" "squeue -r: a line per task, with its array id and task id"
t_is "$(as_user "$ALICE" squeue -h --array -j "${JA}_3" -o '%i %r')" "${JA}_3 JobHeldUser" \
    "squeue --array -j ID_N: that task, with the array's reason"
t_is "$(as_user "$BOB" squeue -h -r -t all -o %i)" "" "bob sees none of alice's tasks"
as_user "$ALICE" scancel "$JA" "$J3" "$J4"

# ---- sbatch --get-user-env -------------------------------------------------------
as_user "$ALICE" sbatch --get-user-env --wrap true >"$T/gue.out" 2>"$T/gue.err"
t_is "$?" 0 "sbatch --get-user-env exits 0"
t_like "$(cat "$T/gue.out")" '^Submitted batch job [0-9]+$' "... submits the job"
t_is "$(cat "$T/gue.err")" "sbatch: warning: --get-user-env: Loom passes the submit environment as --export says (the job runs as your own account)" \
    "... and warns on stderr what Loom does instead"
t_is "$(as_user "$ALICE" sbatch -Q --get-user-env=10L --wrap true 2>&1 >/dev/null)" "" \
    "-Q keeps it quiet"
printf '#!/bin/sh\n#SBATCH --get-user-env=10L\ntrue\n' >"$T/gue.sh"
chmod 0644 "$T/gue.sh"
t_is "$(as_user "$ALICE" sbatch "$T/gue.sh" 2>&1 >/dev/null)" "" \
    "in a script's #SBATCH lines it is read silently (ARC reads stdout and stderr together)"

# ---- listen_peer: one connection, two requests ----------------------------------
# curl sends both on one connection (num_connects 0 for the second): each
# request is the peer's, its account name looked up when it connected.
OUT=$(as_user "$ALICE" curl -s -o /dev/null -w '%{http_code} %{num_connects}\n' \
    -o /dev/null --unix-socket "$PEER_SOCK" "http://loom/v1/jobs/$J1" \
    "http://loom/v1/jobs/$J1")
t_is "$OUT" "200 1
200 0" "alice: two requests on one kept-alive connection, both hers (200)"
OUT=$(as_user "$BOB" curl -s -o /dev/null -w '%{http_code} %{num_connects}\n' \
    -o /dev/null --unix-socket "$PEER_SOCK" "http://loom/v1/jobs/$J1" \
    "http://loom/v1/jobs/$J1")
t_like "$OUT" "^40[34] 1
40[34] 0\$" "bob: both refused alice's job on his connection ($OUT)"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
