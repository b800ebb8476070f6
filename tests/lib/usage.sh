# usage.sh - a job whose usage is known in advance, and reading what Loom
# says it used, for the tests of usage measured by cluster systems (3209,
# 3210, 3211).
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh:
#
# usage_job_body CLUSTER  the body of POST /v1/jobs for a job on CLUSTER
#                    that holds 64 MiB in a shell variable and burns user
#                    cpu until its own utime (field 14 of /proc/PID/stat)
#                    reaches 3 s, then prints the variable's length
#                    (67108864): whatever the load, it used >= 3000 ms of
#                    user cpu and a resident set >= 64 MiB.
# usage_run CLUSTER TOKEN ACCOUNT WHERE  submit that job with TOKEN, wait
#                    for its end and assert that it completed (WHERE names
#                    the cluster in the message) and held its 64 MiB (its
#                    output, loom-ID.out in ACCOUNT's home); sets J.
# usage_of ID [API]  "USER_MS SYSTEM_MS RSS_KB" of job ID's usage, "null"
#                    when it has none; API is the api function to ask
#                    (api, or bapi for an inner loomd).
# usage_sacct_setup TOKEN  Loom's sacct (usage_sacct) acts with TOKEN.
# usage_sacct ID FIELDS  Loom's sacct -X -n -P -j ID -o FIELDS, output and
#                    errors.
# usage_cpu MS       MS as sacct writes a cpu time under an hour (MM:SS.mmm).
# usage_ms_of TIME   sacct's cpu time ("00:02.079", "01:02:03") in ms.
# usage_is_sacct WHO after usage_run on a Slurm with accounting (and
#                    usage_sacct_setup): job $J's usage is what the real
#                    sacct shows, in six assertions: usage_bounds, its
#                    UserCPU and SystemCPU (the job's line), the batch
#                    step's MaxRSS, and Loom's sacct printing the same.
# usage_bounds WHO U S R  three assertions: the usage is what such a job
#                    burned and held (below).

usage_job_body() {
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
    python3 -c 'import json, sys
print(json.dumps({"name": "burn", "script": open(sys.argv[1]).read(),
                  "request": {"cluster": sys.argv[2], "cpus_per_node": 1,
                              "memory_mb": 512, "walltime_s": 600}}))' \
        "$T/burn.sh" "$1"
}

usage_run() {
    TOKEN=$2 submit "$(usage_job_body "$1")" || t_bail "no job: $BODY"
    J=$JOB
    wait_for 'case $(job_state "$J") in completed | failed | cancelled) true ;; *) false ;; esac' 300
    t_is "$(job_state "$J")/$(field "$J" .exit_code)" completed/0 \
        "job $J ran on $4 and completed"
    t_is "$(head -n 1 "$T/home/$3/loom-$J.out" 2>/dev/null)" 67108864 \
        "it held its 64 MiB string (it says so in its output)"
}

usage_of() {
    "${2:-api}" GET "/v1/jobs/$1" >/dev/null
    py '"null" if d.get("usage") is None else "%d %d %d" % (d["usage"]["user_cpu_ms"], d["usage"]["system_cpu_ms"], d["usage"]["max_rss_kb"])' "$BODY"
}

usage_sacct_setup() {
    : >"$T/loom-slurm.conf" # the url and token come from the environment
    (umask 077 && printf '%s\n' "$1" >"$T/usage.token")
}

usage_sacct() {
    LOOM_URL=$LOOM_URL LOOM_TOKEN_FILE=$T/usage.token \
        LOOM_SLURM_CONF=$T/loom-slurm.conf "$LOOM_TOP_BUILDDIR/loom-slurm" \
        sacct -X -n -P -j "$1" -o "$2" 2>&1
}

usage_ms_of() {
    awk -v s="$1" 'BEGIN { n = split(s, p, ":")
        printf "%d", ((n == 3 ? p[1] * 3600 + p[2] * 60 + p[3] : p[1] * 60 + p[2]) * 1000) + 0.5 }'
}

usage_is_sacct() {
    local n su ss sr u s r
    n=$(field "$J" .native_id)
    # the job's line without -X: its steps' sum (with -X, the allocation's 0)
    IFS='|' read -r su ss <<<"$(sacct -n -P -j "$n" -o JobIDRaw,UserCPU,SystemCPU |
        awk -F '|' -v j="$n" -v OFS='|' '$1 == j { print $2, $3 }')"
    sr=$(sacct -n -P -j "$n.batch" -o MaxRSS)
    t_diag "sacct -j $n: UserCPU $su SystemCPU $ss; $n.batch MaxRSS $sr"
    read -r u s r <<<"$(usage_of "$J")"
    usage_bounds "$1" "$u" "$s" "$r"
    t_is "$u/$s" "$(usage_ms_of "$su")/$(usage_ms_of "$ss")" \
        "user and system cpu are sacct's UserCPU and SystemCPU ($su, $ss)"
    t_is "${r}K" "$sr" "it is the batch step's MaxRSS in sacct"
    t_is "$(usage_sacct "$J" UserCPU,SystemCPU,TotalCPU,MaxRSS)" \
        "$(usage_cpu "$u")|$(usage_cpu "$s")|$(usage_cpu $((u + s)))|${r}K" \
        "Loom's sacct prints those numbers: UserCPU, SystemCPU, TotalCPU, MaxRSS"
}

usage_cpu() {
    awk -v ms="$1" 'BEGIN { s = int(ms / 1000)
        printf "%02d:%02d.%03d", int(s / 60), s % 60, ms % 1000 }'
}

# usage_bounds WHO USER_MS SYSTEM_MS RSS_KB: three assertions that a
# usage_job_body job's usage is what it burned and held: user cpu from
# 3000 to 6000 ms, system cpu below it, a resident set from 64 MiB to 1 GiB.
usage_bounds() {
    [ "${2:-0}" -ge 3000 ] 2>/dev/null && [ "$2" -le 6000 ]
    t_ok $? "$1: user cpu $2 ms, at least the 3000 it burned and at most 6000"
    [ "${3:-x}" -ge 0 ] 2>/dev/null && [ "$3" -lt "$2" ]
    t_ok $? "$1: system cpu $3 ms, less than the user cpu of a job that computes"
    [ "${4:-0}" -ge 65536 ] 2>/dev/null && [ "$4" -le 1048576 ]
    t_ok $? "$1: max rss $4 KiB, at least the 64 MiB it held and under 1 GiB"
}
