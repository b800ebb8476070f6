#!/usr/bin/env bash
# table2.sh - the reference paper's Table 2 on this machine: getNodes,
# getJobs and startJob on a real Slurm (4 nodes, 100 jobs in the queue),
# each over BENCH_RUNS calls (default 50), all in one run (direct calls:
# their median; through loomd: its mean, from its histogram):
#   direct: Slurm's command line (the very commands the slurm pack runs)
#   direct: slurmrestd with curl (one curl process, its connection kept,
#           over loopback with a JWT, and over the Unix socket)
#   through Loom, script adaptor, uncached (loomd's own timing, /metrics)
#   through Loom, slurmrestd adaptor, uncached (conditional_polls = no: a
#           full answer every time; JWT: loomd, the SlurmUser, cannot use
#           slurmrestd's socket, which takes only root and slurmrestd's
#           own account, never the SlurmUser)
#   through Loom, from the snapshot (GET over one keep-alive connection)
#   through Loom, loom adaptor over another loomd: loomd A federates the
#           cluster of loomd B (adaptor = loom, over HTTP on loopback), B
#           federates the Slurm by the slurmrestd adaptor as above
#           (tests/lib/innerloom.sh); A's mean per operation, as for the
#           rows above, uncached (A asks B for every list, its jobs with
#           If-None-Match: B polls the Slurm only at its start, so A's
#           polls of jobs after its first are B's 304s). What A
#           times is B's answer: its lists from its own state, its start
#           taken (the job submitted held, then started: 202), not B's own
#           call to Slurm
# then each Loom row's overhead over its direct row, mean against mean
# (loomd keeps only its mean; on a loaded machine a mean sits well above
# the median: a mean against a median would count the machine's hiccups
# as Loom's), the loom adaptor's over the row it stacks on (B's
# slurmrestd adaptor), the slurmrest
# adaptor's sustained operations a second against one slurmrestd, and its
# start rate for 1,000 jobs beside sbatch in a loop, and what reading a
# list of 100 and of 1,000 jobs costs the loom adaptor and the slurmrest
# adaptor, stage by stage (tests/bench/poll_cost). A figure that could
# not be measured is n/a, with a line under the table saying why. Last,
# Loom's own time in the calls of its API adaptors (slurmrest, JWT, and
# the loom adaptor), which the end-to-end rows cannot show on a loaded
# machine (curl's own time of one list varies by more than it): per
# operation the mean and the share of calls within 1 ms of
# loom_adaptor_own_seconds (a call's time less libcurl's time of its
# requests), the medians of the Server-Timing of RUNS uncached reads of
# the nodes (cms, loom), and the verdict: does the adaptor add < 1 ms
# (its own time's median, i.e. half its calls or more within 1 ms).
#   make bench && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD \
#       bash ../../tests/bench/table2.sh
# (from a build without sanitizers, e.g. build/release; needs root, Slurm,
# slurmrestd and the JWT plugin, wrk). About 4 minutes.
# SPDX-License-Identifier: MIT
#
# Like with like: each way is timed in loomd's rhythm (a call every 0.25 s;
# starts 0.3 s apart), not back to back, which would warm every cache and
# flatter the process-heavy ways most. The command line's figure is the
# wall time of one process; curl's is its own time_total of one transfer
# on a kept connection; loomd's is its adaptor call, from the call to the
# parsed answer. One loomd runs at a time, with one cluster (and B under
# A, polling only at its start and after a start); every way reads the
# same 100 jobs, then each starts its jobs.
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/innerloom.sh"
RUNS=${BENCH_RUNS:-50}
NJOBS=100
NSTART=${BENCH_STARTS:-1000}
GAP=0.25
START_GAP=0.3
export LOOM_SCRIPTS_DIR=${LOOM_SCRIPTS_DIR:-$LOOM_TOP_SRCDIR/adaptors/scripts}
PACK=$LOOM_SCRIPTS_DIR/slurm
. "$PACK/lib/formats.sh"
RATE=$LOOM_TOP_BUILDDIR/tests/bench/srest_rate
POLL_COST=$LOOM_TOP_BUILDDIR/tests/bench/poll_cost
for x in "$RATE" "$POLL_COST"; do
    [ -x "$x" ] || { echo "table2.sh: run make bench first ($x)" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "table2.sh: wrk is needed" >&2; exit 1; }

export LOOM_SLURM_JWT=1
# 64 CPUs a node (config_overrides): Loom starts the 50 jobs of a way
# without waiting to see the earlier ones end.
export LOOM_SLURM_CPUS=64
slurm_start 4 || exit 1
slurm_restd_start || exit 1
S=$T/scratch
mkdir -p "$S"
chmod 1777 "$S"
TOK=$(slurm_jwt root 7200) || exit 1

mkfifo "$T/nap"
exec 9<>"$T/nap"
nap() { read -r -t "$1" -u 9; }
wall_us() {
    local t0 t1
    t0=${EPOCHREALTIME/[.,]/}
    "$@" >/dev/null 2>&1 </dev/null
    t1=${EPOCHREALTIME/[.,]/}
    echo $((t1 - t0))
}
# median: of the numbers on stdin (microseconds, or seconds with -s), in
# ms; nothing when there are none.
median() {
    sort -g | awk -v s="${1:-}" '{a[NR] = $1} END { if (NR == 0) exit
        m = a[int((NR + 1) / 2)]; printf "%.2f", s == "-s" ? m * 1000 : m / 1000 }'
}
# mean: as median, their mean.
mean() {
    awk -v s="${1:-}" '{ t += $1 } END { if (NR == 0) exit
        m = t / NR; printf "%.2f", s == "-s" ? m * 1000 : m / 1000 }'
}
# NOTES: why a figure is n/a, one line each, printed under the table.
NOTES=()

# The queue: 100 jobs, 6 running on n1-n3 and 94 held by
# their user (sbatch -H): neither Slurm's scheduler nor Loom's plans them,
# so n4 stays free for the jobs each way starts; every list shows them.
for ((i = 0; i < NJOBS; i++)); do
    if ((i < 6)); then
        sbatch --parsable -o /dev/null -w "n$((i / 2 + 1))" -c 32 --mem=100 \
            -J queued --wrap 'sleep 3600' >/dev/null
    else
        sbatch --parsable -o /dev/null -H -J queued --wrap 'sleep 3600' \
            >/dev/null
    fi
done
njobs=$(squeue -h -t all | wc -l)

# ---- direct: the command line ----------------------------------------------------
JOBS_FMT=$(jobs_format)
cli_nodes() { sinfo -h -N -O "$NODES_FORMAT"; }
cli_jobs() { SLURM_TIME_FORMAT=%s squeue -h -t all -o "$JOBS_FMT"; }
: >"$T/cli.nodes"
: >"$T/cli.jobs"
for ((i = 0; i < RUNS; i++)); do
    nap $GAP
    wall_us cli_jobs >>"$T/cli.jobs"
    wall_us cli_nodes >>"$T/cli.nodes"
done

# ---- direct: slurmrestd with curl ------------------------------------------------
JWT=(-H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $TOK")
SOCK=(--unix-socket "$SLURM_RESTD_SOCKET")
# curl_times WHAT PATH CURL-ARGS...: RUNS GETs of PATH on one connection, a
# call every $GAP s; time_total of each in seconds.
curl_times() {
    local base=$1 path=$2 urls=() i
    shift 2
    for ((i = 0; i < RUNS; i++)); do
        urls+=(-o /dev/null "$base/slurm/v0.0.38/$path")
    done
    curl -s --rate "$(awk -v g=$GAP 'BEGIN { printf "%d/m", 60 / g }')" \
        -w '%{time_total}\n' "$@" "${urls[@]}"
}
curl_times "$SLURM_RESTD_URL" jobs "${JWT[@]}" >"$T/curlj.jobs"
curl_times "$SLURM_RESTD_URL" nodes "${JWT[@]}" >"$T/curlj.nodes"
curl_times http://localhost jobs "${SOCK[@]}" >"$T/curls.jobs"
curl_times http://localhost nodes "${SOCK[@]}" >"$T/curls.nodes"
jobs_bytes=$(curl -s "${SOCK[@]}" http://localhost/slurm/v0.0.38/jobs | wc -c)

# ---- through loomd ------------------------------------------------------------
pg_start || exit 1
# CL: the cluster of the loomd timed (b; fed for A over B).
CL=b
# each Loom row's figures, none until measured
pack_nodes='' pack_jobs='' pack_start='' rest_nodes='' rest_jobs='' rest_start=''
restc_nodes='' restc_jobs='' snap_nodes='' snap_jobs='' snap_count=''
fed_nodes='' fed_jobs='' fed_start=''
# Loom's own time of the API adaptors' operations ("MEAN SHARE": ms, and
# % of calls within 1 ms) and the uncached reads' split ("CMS LOOM", ms)
own_rest_nodes='' own_rest_jobs='' own_rest_start='' st_rest=''
own_fed_nodes='' own_fed_jobs='' own_fed_start='' st_fed=''
# metric OP: loomd's mean time of OP on cluster $CL, in ms (the histogram
# loom_adaptor_op_seconds: its _sum over its _count), from $T/metrics;
# nothing when it timed none, or when one failed (its time is a failure's).
metric() {
    awk -v s="loom_adaptor_op_seconds_sum{cluster=\"$CL\",op=\"$1\"}" \
        -v c="loom_adaptor_op_seconds_count{cluster=\"$CL\",op=\"$1\"}" \
        -v f="loom_adaptor_op_failures_total{cluster=\"$CL\",op=\"$1\"}" \
        '$1 == s { sum = $2 } $1 == c { n = $2 } $1 == f { bad = $2 }
         END { if (n > 0 && bad == 0) printf "%.2f", sum / n * 1000 }' "$T/metrics"
}
# count OP [FILE]: how many OP loomd timed on cluster $CL (FILE: $T/metrics).
count() {
    awk -v k="loom_adaptor_op_seconds_count{cluster=\"$CL\",op=\"$1\"}" \
        '$1 == k { print $2 + 0 }' "${2:-$T/metrics}"
}
failures() {
    awk -v k="loom_adaptor_op_failures_total{cluster=\"$CL\",op=\"$1\"}" \
        '$1 == k { print $2 + 0 }' "$T/metrics"
}
# own OP: Loom's own time of OP on cluster $CL from $T/metrics
# (loom_adaptor_own_seconds): "MEAN SHARE", its mean in ms and the share
# of calls within 1 ms (its bucket le="0.001") in %; nothing when none.
own() {
    awk -v f=loom_adaptor_own_seconds -v l="{cluster=\"$CL\",op=\"$1\"}" \
        -v b="loom_adaptor_own_seconds_bucket{cluster=\"$CL\",op=\"$1\",le=\"0.001\"}" \
        '$1 == f "_sum" l { s = $2 } $1 == f "_count" l { n = $2 } $1 == b { w = $2 }
         END { if (n > 0) printf "%.3f %.0f", s / n * 1000, w / n * 100 }' "$T/metrics"
}
# timing_split PATH: RUNS uncached reads of PATH (Cache-Control: no-cache),
# one every $GAP s: the medians of their Server-Timing's cms and loom,
# "CMS LOOM" in ms; nothing when none answered with them.
timing_split() {
    local i
    : >"$T/timing"
    for ((i = 0; i < RUNS; i++)); do
        nap $GAP
        curl -s -o /dev/null -D - -H 'Cache-Control: no-cache' \
            -H "Authorization: Bearer $TOKEN" "$LOOM_URL$1" |
            awk -F'[=,]' 'tolower($1) ~ /^server-timing: cms;dur$/ { print $2 + 0, $4 + 0 }' \
                >>"$T/timing"
    done
    [ -s "$T/timing" ] || return 0
    printf '%s %s' "$(cut -d' ' -f1 <"$T/timing" | sort -g |
        awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] }')" \
        "$(cut -d' ' -f2 <"$T/timing" | sort -g |
            awk '{ a[NR] = $1 } END { printf "%.3f", a[int((NR + 1) / 2)] }')"
}
# measure VAR OP: VAR is metric OP; when it is none, NOTES says why.
measure() {
    local v
    v=$(metric "$2")
    printf -v "$1" '%s' "$v"
    [ -n "$v" ] && return 0
    NOTES+=("$1: loomd timed $(count "$2") $2 calls on cluster $CL, $(
        failures "$2") of them failed (LOOM_KEEP_TMP=1 keeps its log)")
}
# loomd_with DB POLL_S LINES...: loomd with one cluster $CL of these lines,
# on a database DB made for it: it meets none of the jobs of the loomds
# before it (the queue's 6 running jobs among them, which it would
# re-attach at its start: start operations timed with the ones measured).
# 1 when it does not start.
loomd_with() {
    local db=$1 poll=$2
    shift 2
    "$PG_BIN/createdb" -h "$LOOM_PG_DIR" -U postgres "$db" \
        >"$T/createdb-$db.log" 2>&1 || {
        t_diag "createdb $db failed:" "$(cat "$T/createdb-$db.log")"
        return 1
    }
    LOOM_PG_CONNINFO="host=$LOOM_PG_DIR dbname=$db user=postgres" \
        loomd_conf <<EOF2
[cluster $CL]
poll_s = $poll
$(printf '%s\n' "$@")
EOF2
    loomd_start && admin_token
}
# loom_reads NAME LINES...: its means of nodes and jobs over RUNS polls.
loom_reads() {
    local name=$1 i
    shift
    loomd_with "${name}_reads" $GAP "$@" || {
        NOTES+=("${name}_nodes, ${name}_jobs: loomd did not start")
        loomd_stop
        return 1
    }
    for ((i = 0; i < 600; i++)); do
        curl -s "$LOOM_URL/metrics" >"$T/metrics"
        [ "$(count jobs)" -ge $((RUNS + 2)) ] 2>/dev/null && break
        nap 0.25
    done
    measure "${name}_nodes" nodes
    measure "${name}_jobs" jobs
    if [ "$name" = rest ] || [ "$name" = fed ]; then
        printf -v "own_${name}_nodes" '%s' "$(own nodes)"
        printf -v "own_${name}_jobs" '%s' "$(own jobs)"
        printf -v "st_${name}" '%s' "$(timing_split "/v1/nodes?cluster=$CL")"
    fi
    if [ "$name" = rest ]; then # the snapshot, while this loomd runs
        snap_nodes=$(wrk_p50 "$LOOM_URL/v1/nodes?cluster=b")
        snap_jobs=$(wrk_p50 "$LOOM_URL/v1/jobs?cluster=b")
        snap_count=$(api GET "/v1/jobs?cluster=b&limit=1000" >/dev/null
            jlen "$BODY" .items)
    fi
    loomd_stop
}
# loom_starts NAME LINES...: its mean of start over RUNS starts. Polls
# only when a start asks for one (poll_s 60): a start timed while a poll
# of 100 jobs keeps slurmrestd busy would measure that poll, and the
# script adaptor's worker never overlaps them.
# SETTLE IDS...: waits for what the starts of IDS left under way (by
# default jobs_ended).
loom_starts() {
    local name=$1 i
    shift
    loomd_with "${name}_starts" 60 "$@" || {
        NOTES+=("${name}_start: loomd did not start")
        loomd_stop
        return 1
    }
    local ids=()
    for ((i = 0; i < RUNS; i++)); do
        submit '{"command":["true"],"name":"b","request":{"cluster":"'"$CL"'"}}' &&
            ids+=("$JOB")
        nap $START_GAP
    done
    for ((i = 0; i < 600; i++)); do
        curl -s "$LOOM_URL/metrics" >"$T/metrics"
        [ "$(count start)" -ge "$RUNS" ] 2>/dev/null && break
        nap 0.2
    done
    measure "${name}_start" start
    if [ "$name" = rest ] || [ "$name" = fed ]; then
        printf -v "own_${name}_start" '%s' "$(own start)"
    fi
    "${SETTLE:-jobs_ended}" "${ids[@]}"
    loomd_stop
}
# jobs_ended IDS...: every job ended, so that the next loomd re-attaches
# to none.
jobs_ended() {
    local i
    for i in "$@"; do
        wait_for '[ "$(field "$i" .state)" = completed ]' 90
    done
}
wrk_p50() {
    wrk -t1 -c1 -d3s --latency -H "Authorization: Bearer $TOKEN" "$1" |
        awk 'function ms(v) { if (v ~ /us$/) return v / 1000;
                              if (v ~ /ms$/) return v + 0; return v * 1000 }
             $1 == "50%" { printf "%.3f", ms($2) }'
}
AT_SLURM=("workdir = $S" "env.SLURM_CONF = $SLURM_CONF")
PACK_CONF=("adaptor = script" "pack = slurm" "${AT_SLURM[@]}")
REST_CONF=("adaptor = slurmrest" "url = $SLURM_RESTD_URL"
    "jwt_key_file = $SLURM_JWT_KEY" "conditional_polls = no" "${AT_SLURM[@]}")

# ---- the loom adaptor: loomd A over loomd B over the Slurm ---------------------
# B (innerloom.sh: a database, state and port of its own) federates the
# Slurm as its cluster slurm by REST_CONF, with poll_s 60: it polls at its
# start and after a start, never on its own while A is timed. A federates
# B's cluster slurm as its cluster fed (loomd_with, as the rows above). Its
# jobs run as $T_USER there too: B maps A's token for it so. B starts
# anew, on a new database, for A's reads and for A's starts, as A does:
# neither re-attaches the queue's running jobs.
STACK_WHY=
b_jobs() {
    bapi GET "/v1/jobs?cluster=slurm&limit=1000" >/dev/null &&
        jlen "$BODY" .items
}
# stack_up: B running on a new database, listing the queue's jobs, and A's
# tokens of B made; 1, with STACK_WHY, when it is not.
stack_up() {
    "$PG_BIN/dropdb" -h "$LOOM_PG_DIR" -U postgres --if-exists loomb \
        >"$T/dropdb-b.log" 2>&1 || {
        STACK_WHY="dropdb loomb failed: $(cat "$T/dropdb-b.log")"
        return 1
    }
    inner_conf <<EOF2 || { STACK_WHY="no configuration for B"; return 1; }
[cluster slurm]
poll_s = 60
$(printf '%s\n' "${REST_CONF[@]}")
EOF2
    printf 'LOOM admin %s\nLOOM %s %s\n' "$T_USER" "$T_USER" "$T_USER" \
        >"$BD/accounts"
    B_ADMIN= # of the database before
    inner_start || { STACK_WHY="loomd B did not start"; return 1; }
    inner_tokens "$T_USER" || { STACK_WHY="no tokens of B for A"; return 1; }
    # A's first polls would time a shorter list
    wait_for '[ "$(b_jobs)" -ge "$njobs" ] 2>/dev/null' 60 || {
        STACK_WHY="loomd B listed $(b_jobs) of the $njobs jobs"
        return 1
    }
}
# b_started IDS...: B started every one of A's jobs IDS in the Slurm (its
# count of starts), which then run on when A and B stop.
b_started() {
    local want=$#
    wait_for '[ "$(curl -s "$B_URL/metrics" >"$T/b-metrics"
                 CL=slurm count start "$T/b-metrics")" -ge $want ] 2>/dev/null' \
        90 0.25 ||
        NOTES+=("fed_start: loomd B started $(CL=slurm count start \
            "$T/b-metrics") of A's $want jobs in the Slurm")
}
# stacked reads|starts: A's row, B running under it.
stacked() {
    if stack_up; then
        local conf=("adaptor = loom" "url = $B_URL" "cluster = slurm"
            "token_file = $T/a-control.token" "token_dir = $A_TOKENS")
        if [ "$1" = reads ]; then
            CL=fed loom_reads fed "${conf[@]}"
        else
            CL=fed SETTLE=b_started loom_starts fed "${conf[@]}"
        fi
    else
        NOTES+=("fed ($1): $STACK_WHY")
    fi
    inner_stop
}

# Every read first, on the same 100 jobs; then the starts.
loom_reads pack "${PACK_CONF[@]}"
loom_reads rest "${REST_CONF[@]}"
loom_reads restc "adaptor = slurmrest" "url = $SLURM_RESTD_URL" \
    "jwt_key_file = $SLURM_JWT_KEY" "${AT_SLURM[@]}"
stacked reads
loom_starts pack "${PACK_CONF[@]}"
loom_starts rest "${REST_CONF[@]}"
stacked starts

# ---- startJob directly: the pack's sbatch, and the adaptor's submit -------------
D=$T/direct
mkdir -p "$D"
printf '#!/bin/sh\nexec true\n' >"$D/job.sh"
chmod 0755 "$D/job.sh"
: >"$T/cli.start"
for ((i = 0; i < RUNS; i++)); do
    nap $START_GAP
    wall_us sbatch --parsable --comment="bench-$i" --job-name=b \
        --nodelist=n4 --nodes=1 --ntasks-per-node=1 --cpus-per-task=1 \
        --mem=100 --time=60 --chdir="$D" --output="$D/stdout" \
        --error="$D/stderr" "$D/job.sh" >>"$T/cli.start"
done
BODYJ='{"job":{"name":"b","comment":"bench","nodelist":"n4","nodes":[1,1],"tasks_per_node":1,"cpus_per_task":1,"memory_per_node":100,"time_limit":60,"current_working_directory":"'$D'","standard_output":"'$D'/stdout","standard_error":"'$D'/stderr","environment":{"PATH":"/usr/local/bin:/usr/bin:/bin","LOOM_JOB_ID":"1"}},"script":"#!/bin/sh\nexport LOOM_JOB_ID=1\nexec true\n"}'
post_times() {
    local base=$1 urls=() i
    shift
    for ((i = 0; i < RUNS; i++)); do
        urls+=(-o /dev/null "$base/slurm/v0.0.38/job/submit")
    done
    curl -s --rate "$(awk -v g=$START_GAP 'BEGIN { printf "%d/m", 60 / g }')" \
        -w '%{time_total}\n' -H 'Content-Type: application/json' \
        -H 'Expect:' -d "$BODYJ" "$@" "${urls[@]}"
}
post_times "$SLURM_RESTD_URL" "${JWT[@]}" >"$T/curlj.start"
post_times http://localhost "${SOCK[@]}" >"$T/curls.start"

c_nodes=$(median <"$T/cli.nodes")
c_jobs=$(median <"$T/cli.jobs")
c_start=$(median <"$T/cli.start")
j_nodes=$(median -s <"$T/curlj.nodes")
j_jobs=$(median -s <"$T/curlj.jobs")
j_start=$(median -s <"$T/curlj.start")
s_nodes=$(median -s <"$T/curls.nodes")
s_jobs=$(median -s <"$T/curls.jobs")
s_start=$(median -s <"$T/curls.start")
# the direct rows' means, for the overheads: like loomd's own figure
cm_nodes=$(mean <"$T/cli.nodes")
cm_jobs=$(mean <"$T/cli.jobs")
cm_start=$(mean <"$T/cli.start")
jm_nodes=$(mean -s <"$T/curlj.nodes")
jm_jobs=$(mean -s <"$T/curlj.jobs")
jm_start=$(mean -s <"$T/curlj.start")

# ---- sustained rates ------------------------------------------------------------
cat >"$T/rate-jwt.conf" <<EOF2
[cluster sr]
adaptor = slurmrest
url = $SLURM_RESTD_URL
jwt_key_file = $SLURM_JWT_KEY
conditional_polls = no
fallback_pack = none
workdir = $S
EOF2
# srest_rate runs as root, whom the socket takes (nodes only: under
# rest_auth/local starts go to the pack).
cat >"$T/rate-sock.conf" <<EOF2
[cluster sr]
adaptor = slurmrest
url = unix:$SLURM_RESTD_SOCKET
conditional_polls = no
workdir = $S
EOF2
export SREST_STATE_DIR=$T SREST_NODES=n4
njobs_rate=$(squeue -h -t all | wc -l)
# rate CONF OP N K: srest_rate's line; n/a, with why, when a call failed
# (its rate would count the failures) or it did not run.
rate() {
    local out first
    out=$("$RATE" "$@" 2>"$T/rate.err")
    first=${out%%$'\n'*}
    if [[ $first == *", failed 0" ]]; then
        printf '%s' "$first"
    elif [[ $first =~ ^([a-z]+)\ ([0-9]+)\ calls.*,\ failed\ ([0-9]+)$ ]]; then
        printf 'n/a: %s of %s %s calls failed, %s' "${BASH_REMATCH[3]}" \
            "${BASH_REMATCH[2]}" "${BASH_REMATCH[1]}" "$(sed -n 2p <<<"$out")"
    else
        printf 'n/a: %s' "$(head -n 3 "$T/rate.err" | tr '\n' ' ')"
    fi
}
r_nodes_j=$(rate "$T/rate-jwt.conf" nodes 500 8)
r_nodes_s=$(rate "$T/rate-sock.conf" nodes 500 8)
r_jobs_j=$(rate "$T/rate-jwt.conf" jobs 200 8)
r_nodes_1=$(rate "$T/rate-sock.conf" nodes 500 1)
# 1,000 starts: the adaptor (8 under way, then 1), and sbatch in a loop.
r_start_8=$(rate "$T/rate-jwt.conf" start "$NSTART" 8)
r_start_1=$(rate "$T/rate-jwt.conf" start "$NSTART" 1)
t0=${EPOCHREALTIME/[.,]/}
for ((i = 0; i < NSTART; i++)); do
    sbatch --parsable --nodelist=n4 -N1 -c1 --mem=100 -t 60 -o /dev/null \
        -J loop --wrap true >/dev/null 2>&1
done
t1=${EPOCHREALTIME/[.,]/}
sb_rate=$(awk -v n="$NSTART" -v us=$((t1 - t0)) 'BEGIN { printf "%.0f", n / (us / 1e6) }')

# ---- the table --------------------------------------------------------------------
# row SCENARIO FIGURES...: a figure not measured shows n/a.
row() {
    local f=() x
    for x in "${@:2}"; do f+=("${x:-n/a}"); done
    printf '| %-52s | %8s | %8s | %8s |\n' "$1" "${f[@]}"
}
over() { # LOOM DIRECT: "+X.XX ms (Y.Yx)"
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b <= 0) print "-";
        else printf "%+.2f ms (%.2fx)", a - b, a / b }'
}
faster() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0) printf "%.0fx", b / a; else print "-" }'; }
min3() { printf '%s\n' "$@" | sort -g | head -n 1; }
echo
echo "Slurm $(sinfo -V | awk '{print $2}'), 4 nodes, $njobs jobs in the queue" \
    "(GET jobs: $jobs_bytes bytes); ms: direct rows the median of $RUNS" \
    "calls, rows through Loom's adaptors loomd's mean per operation" \
    "(loom_adaptor_op_seconds), the snapshot rows wrk's median"
row "scenario" getNodes getJobs startJob
row "----" "---" "---" "---"
row "direct: Slurm's command line" "$c_nodes" "$c_jobs" "$c_start"
row "direct: slurmrestd with curl (JWT, loopback)" "$j_nodes" "$j_jobs" "$j_start"
row "direct: slurmrestd with curl (Unix socket)" "$s_nodes" "$s_jobs" "$s_start"
row "through Loom, script adaptor, uncached" "$pack_nodes" "$pack_jobs" "$pack_start"
row "through Loom, slurmrestd adaptor, uncached (JWT)" "$rest_nodes" "$rest_jobs" "$rest_start"
row "through Loom, slurmrestd adaptor, update_time (JWT)" "$restc_nodes" "$restc_jobs" "-"
row "through Loom, from the snapshot" "$snap_nodes" "$snap_jobs" "-"
row "through Loom, loom adaptor over another loomd" "$fed_nodes" "$fed_jobs" "$fed_start"
for x in "${NOTES[@]}"; do echo "  n/a: $x"; done
echo
echo "Overhead of each Loom row over the row it stacks on (Loom - that, Loom / that;"
echo "means of both: the direct rows' means are $cm_nodes, $cm_jobs, $cm_start ms" \
    "(command line) and $jm_nodes, $jm_jobs, $jm_start ms (curl, JWT)):"
printf '  script adaptor - command line:   getNodes %s, getJobs %s, startJob %s\n' \
    "$(over "$pack_nodes" "$cm_nodes")" "$(over "$pack_jobs" "$cm_jobs")" "$(over "$pack_start" "$cm_start")"
printf '  slurmrest (JWT) - curl (JWT):     getNodes %s, getJobs %s, startJob %s\n' \
    "$(over "$rest_nodes" "$jm_nodes")" "$(over "$rest_jobs" "$jm_jobs")" "$(over "$rest_start" "$jm_start")"
printf '  loom adaptor - slurmrest under it: getNodes %s, getJobs %s, startJob %s\n' \
    "$(over "$fed_nodes" "$rest_nodes")" "$(over "$fed_jobs" "$rest_jobs")" "$(over "$fed_start" "$rest_start")"
fn=$(min3 "$c_nodes" "$j_nodes" "$s_nodes")
fj=$(min3 "$c_jobs" "$j_jobs" "$s_jobs")
printf '  snapshot vs the fastest direct call: getNodes %s faster (%s ms), getJobs %s faster (%s ms; %s jobs)\n' \
    "$(faster "$snap_nodes" "$fn")" "$fn" "$(faster "$snap_jobs" "$fj")" "$fj" "$snap_count"
echo
# own_row NAME OP "MEAN SHARE" [SPLIT]: one operation's own time and verdict
own_row() {
    local mean share split=${4:-} verdict
    read -r mean share <<<"$3"
    if [ -z "$mean" ]; then
        printf '  %-13s %-9s n/a (no call timed)\n' "$1" "$2"
        return
    fi
    verdict=$(awk -v s="$share" 'BEGIN { print (s >= 50) ? "yes" : "NO" }')
    printf '  %-13s %-9s mean %7s ms, %3s%% of calls within 1 ms, < 1 ms: %s%s\n' \
        "$1" "$2" "$mean" "$share" "$verdict" \
        "${split:+; Server-Timing of uncached reads (medians): cms ${split% *} ms, loom ${split#* } ms}"
    [ "$1" = slurmrest ] && [ "$verdict" != yes ] && OVER+=("$2")
}
OVER=()
echo "Loom's own time in an API adaptor's call (loom_adaptor_own_seconds: the call's"
echo "time less libcurl's own time of its requests; < 1 ms when half its calls or"
echo "more take at most 1 ms, the median, which a loaded machine's hiccups do not move):"
own_row slurmrest getNodes "$own_rest_nodes" "$st_rest"
own_row slurmrest getJobs "$own_rest_jobs"
own_row slurmrest startJob "$own_rest_start"
own_row "loom adaptor" getNodes "$own_fed_nodes" "$st_fed"
own_row "loom adaptor" getJobs "$own_fed_jobs"
own_row "loom adaptor" startJob "$own_fed_start"
if [ -z "$own_rest_nodes$own_rest_jobs$own_rest_start" ]; then
    echo "Verdict: n/a (the slurmrest adaptor's own time was not measured)"
elif [ ${#OVER[@]} -eq 0 ]; then
    echo "Verdict: the slurmrest adaptor adds < 1 ms to slurmrestd's answer (getNodes, getJobs, startJob)"
else
    echo "Verdict: the slurmrest adaptor adds 1 ms or more to: ${OVER[*]}"
fi
echo
echo "The slurmrest adaptor alone against one slurmrestd (srest_rate; K under way):"
echo "  $r_nodes_j  (JWT, K=8)"
echo "  $r_nodes_s  (socket, K=8)"
echo "  $r_nodes_1  (socket, K=1)"
echo "  $r_jobs_j  (JWT, K=8, $njobs_rate jobs by then)"
echo "Starting $NSTART jobs:"
echo "  adaptor: $r_start_8  (K=8)"
echo "  adaptor: $r_start_1  (K=1)"
echo "  sbatch in a loop: $NSTART in $(awk -v us=$((t1 - t0)) 'BEGIN { printf "%.2f", us / 1e6 }') s: $sb_rate/s"
echo
echo "Reading a list of jobs, per stage, without the network (tests/bench/poll_cost:"
echo "medians of 50; a 304 of the inner loomd is read from nothing):"
"$POLL_COST" "$LOOM_TOP_SRCDIR/tests/fixtures/slurmrest/v0.0.38-jobs.json" \
    100 1000 2>&1 | sed 's/^/  /'
t_ok 0 "benchmark ran"
t_done
