#!/usr/bin/env bash
# 3210-usage-slurm.t - what a job used, measured by a real Slurm with
# accounting (slurmdbd on a private MariaDB, jobacct_gather/linux;
# tests/lib/slurm.sh with LOOM_SLURM_ACCT=1) and read by the slurm pack
# from the real sacct: a job that burns 3 s of user cpu (it watches its
# own /proc/PID/stat) and holds 64 MiB ends in Loom with Slurm's UserCPU,
# SystemCPU and largest step MaxRSS; Loom's sacct prints those numbers.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

# usage_of ID: "user system rss" of job ID's usage ("null" when none).
usage_of() {
    api GET "/v1/jobs/$1" >/dev/null
    py '"null" if d.get("usage") is None else "%d %d %d" % (d["usage"]["user_cpu_ms"], d["usage"]["system_cpu_ms"], d["usage"]["max_rss_kb"])' "$BODY"
}

# sacct_of ID FIELDS: Loom's sacct as ACC, the job's own line (-X), -P.
sacct_of() {
    LOOM_URL=$LOOM_URL LOOM_TOKEN_FILE=$T/user.token \
        LOOM_SLURM_CONF=$T/loom-slurm.conf "$LOOM_TOP_BUILDDIR/loom-slurm" \
        sacct -X -n -P -j "$1" -o "$2" 2>&1
}

# ms_of "00:02.079" / "01:02:03": sacct's cpu time in ms.
ms_of() {
    awk -v s="$1" 'BEGIN { n = split(s, p, ":")
        printf "%d", ((n == 3 ? p[1] * 3600 + p[2] * 60 + p[3] : p[1] * 60 + p[2]) * 1000) + 0.5 }'
}

ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_acct_available || t_bail "no Slurm accounting: $SLURM_WHY"
LOOM_SLURM_ACCT=1 slurm_start 1 || t_bail "Slurm with accounting did not start"
t_is "$(sacctmgr -n -P list cluster format=cluster)" loomtest \
    "slurmdbd answers, with the test's cluster registered"
t_account ACC usage
pg_start || t_bail "no PostgreSQL"
map_account "$ACC" "$ACC"
loomd_conf <<EOF
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF
loomd_start || t_bail "loomd did not start"
admin_token
USER_TOKEN=$(token_for "$ACC" user)
: >"$T/loom-slurm.conf" # the url and token come from the environment
(umask 077 && printf '%s\n' "$USER_TOKEN" >"$T/user.token") ||
    t_bail "cannot write the user's token"

# ---- 3 s of user time, 64 MiB -------------------------------------------------
cat >"$T/burn.sh" <<'EOS'
#!/bin/sh
# 64 MiB in a variable, then user cpu until this shell's own utime
# (field 14 of /proc/PID/stat, in clock ticks) reaches 3 s
x=$(head -c 67108864 /dev/zero | tr '\0' a)
lim=$((3 * $(getconf CLK_TCK)))
while :; do
    read -r l </proc/$$/stat
    set -- $l
    shift 13
    [ "$1" -ge "$lim" ] && break
    i=0
    while [ $i -lt 10000 ]; do i=$((i + 1)); done
done
echo ${#x}
EOS
BODY_JSON=$(python3 -c 'import json, sys
print(json.dumps({"name": "burn", "script": open(sys.argv[1]).read(),
                  "request": {"cluster": "slurm", "cpus_per_node": 1,
                              "memory_mb": 512, "walltime_s": 600}}))' \
    "$T/burn.sh")
TOKEN=$USER_TOKEN submit "$BODY_JSON" || t_bail "no job: $BODY"
J=$JOB
wait_for 'ended "$J"' 300
t_is "$(job_state "$J")/$(field "$J" .exit_code)" completed/0 \
    "job $J ran on Slurm and completed"
t_is "$(head -n 1 "$T/home/$ACC/loom-$J.out" 2>/dev/null)" 67108864 \
    "it held its 64 MiB string (it says so in its output)"
N=$(field "$J" .native_id)
# the job's line without -X: its steps' sum (with -X, the allocation's 0)
IFS='|' read -r SU SS <<<"$(sacct -n -P -j "$N" -o JobIDRaw,UserCPU,SystemCPU |
    awk -F '|' -v j="$N" -v OFS='|' '$1 == j { print $2, $3 }')"
SR=$(sacct -n -P -j "$N.batch" -o MaxRSS)
t_diag "sacct -j $N: UserCPU $SU SystemCPU $SS; $N.batch MaxRSS $SR"
read -r U S R <<<"$(usage_of "$J")"
[ "${U:-0}" -ge 3000 ] 2>/dev/null && [ "$U" -le 6000 ]
t_ok $? "user cpu ${U} ms: at least the 3000 it burned and at most 6000"
t_is "$U/$S" "$(ms_of "$SU")/$(ms_of "$SS")" \
    "user and system cpu are sacct's UserCPU and SystemCPU ($SU, $SS)"
[ "${S:-x}" -ge 0 ] 2>/dev/null && [ "$S" -lt "$U" ]
t_ok $? "system cpu ${S} ms, less than the user cpu of a job that computes"
[ "${R:-0}" -ge 65536 ] 2>/dev/null && [ "$R" -le 1048576 ]
t_ok $? "max rss ${R} KiB: at least the 64 MiB it held and under 1 GiB"
t_is "${R}K" "$SR" "it is the batch step's MaxRSS in sacct"

fmt_cpu() {
    awk -v ms="$1" 'BEGIN { s = int(ms / 1000); printf "%02d:%02d.%03d", int(s / 60), s % 60, ms % 1000 }'
}
t_is "$(sacct_of "$J" UserCPU,SystemCPU,TotalCPU,MaxRSS)" \
    "$(fmt_cpu "$U")|$(fmt_cpu "$S")|$(fmt_cpu $((U + S)))|${R}K" \
    "Loom's sacct prints those numbers: UserCPU, SystemCPU, TotalCPU, MaxRSS"

t_done
