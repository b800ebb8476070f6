#!/usr/bin/env bash
# sched-scale.sh - the built-in scheduler at fabric scale, in loomd: 16 sim
# clusters x 1,000 nodes x 32 cores, every node busy, 100,000 waiting jobs of
# mixed sizes. Reports the cycle times loomd measures (EASY over the whole
# queue, with the first cycles after start-up, after a reload that changes
# the planning depth and after the scheduler is switched off and on again;
# conservative over the first 10,000), the cycle after one job ends,
# the API's latency while cycles run, and loomd's memory. Then the same
# EASY cycles again with a tenth of the waiting jobs in arrays (100 tasks
# each) and a tenth with a dependency (afterok on an earlier job: half of
# them on one that completed, so they wait in the queue like the others,
# half on an earlier waiting job, so they wait for it outside the queue),
# beside the first run in a table of their own, with the ratios of its
# cycles to the first run's: what array and dependency bookkeeping adds to
# a cycle (target: 1.10 at most; BENCH_MIXED=0 leaves it out).
# Beside loomd, in the same run, the in-process planner (plan_scale, on the
# same fabric: one whole-node job on every node) before and after loomd's
# runs: loomd's cycle against it is a ratio, which a machine loaded by
# others changes far less than either time alone.
# Run from an optimised build directory:
#   make bench && LOOM_TOP_SRCDIR=.. LOOM_TOP_BUILDDIR=$PWD bash ../tests/bench/sched-scale.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

CLUSTERS=${BENCH_CLUSTERS:-16}
NODES=${BENCH_NODES:-1000}
WAITING=${BENCH_WAITING:-100000}
# Each sim cluster is polled every 5 s, as script clusters are by default
# (BENCH_POLL_S=1 polls every second; the row "scheduler off" tells the
# API's tail from polling apart from the one from cycles).
POLL_S=${BENCH_POLL_S:-5}
# The queue's order: fifo (the default) or priority (BENCH_POLICY=priority).
POLICY=${BENCH_POLICY:-fifo}
MIXED=${BENCH_MIXED:-1}
# BENCH_EXTRA=0 leaves out the API's latency and the conservative cycles:
# the two EASY runs alone, to repeat them.
EXTRA=${BENCH_EXTRA:-1}
command -v wrk >/dev/null || { echo "sched-scale.sh: needs wrk" >&2; exit 1; }

ROWS=()
row() { ROWS+=("$(printf '%-50s %14s %14s' "$@")"); }

# peer: plan_scale on loomd's fabric; adds its wall and CPU times (ms) to
# PEER[easy|cons|after|kept.wall|cpu] (kept: the cycle after one job ended
# keeping the estimates jobs show, as loomd's cycle after an event does)
# and counts the run in PEER[runs].
declare -A PEER=([runs]=0)
peer() {
    local out
    out=$("$LOOM_TOP_BUILDDIR/tests/bench/plan_scale" -c "$CLUSTERS" \
        -n "$NODES" -j "$WAITING" -d 10000 -e 1000 -r 1) ||
        { echo "sched-scale.sh: plan_scale failed" >&2; exit 1; }
    read -r ew ec cw cc aw ac kw kc < <(awk '
        /^full EASY/ { e = $(NF-6) " " $(NF-4) }
        /^conservative/ { c = $(NF-6) " " $(NF-4) }
        /^EASY cycle after/ { a = $(NF-6) " " $(NF-4) }
        /^  the same, estimates kept/ { k = $(NF-6) " " $(NF-4) }
        END { print e, c, a, k }' <<<"$out")
    PEER[easy.wall]=$(python3 -c "print(${PEER[easy.wall]:-0} + $ew)")
    PEER[easy.cpu]=$(python3 -c "print(${PEER[easy.cpu]:-0} + $ec)")
    PEER[cons.wall]=$(python3 -c "print(${PEER[cons.wall]:-0} + $cw)")
    PEER[cons.cpu]=$(python3 -c "print(${PEER[cons.cpu]:-0} + $cc)")
    PEER[after.wall]=$(python3 -c "print(${PEER[after.wall]:-0} + $aw)")
    PEER[after.cpu]=$(python3 -c "print(${PEER[after.cpu]:-0} + $ac)")
    PEER[kept.wall]=$(python3 -c "print(${PEER[kept.wall]:-0} + $kw)")
    PEER[kept.cpu]=$(python3 -c "print(${PEER[kept.cpu]:-0} + $kc)")
    PEER[runs]=$((PEER[runs] + 1))
}
# pmean KEY: the mean of PEER[KEY] over the runs, in ms.
pmean() { python3 -c "print(round(${PEER[$1]} / ${PEER[runs]}, 1))"; }
# ratio A B: A / B, to two places ("-" when either is not a number).
ratio() {
    python3 -c "import sys
try: print('%.2f' % (float(sys.argv[1]) / float(sys.argv[2])))
except Exception: print('-')" "$1" "$2"
}

pg_start || exit 1
loomd_conf '[cluster c0]' 'adaptor = sim' 'nodes = 1'
loomd_start && loomd_stop || exit 1 # the schema
# fill: the jobs table as the runs start from.
fill() {
    pg_sql "truncate jobs" >/dev/null
    # Every node runs one whole-node job (1 to 2 h left); the waiting jobs ask
    # 1 node (60 %), 1-4 nodes (25 %), 4-32 (12 %) or 32-256 (3 %), 1-32 cpus
    # per node (whole nodes when several), 5 min to 24 h.
    pg_sql "insert into jobs (id, state, owner, doc)
      select g, s, 'u' || (g % 32), json_build_object('id', g::text, 'name', 'b',
        'owner', 'u' || (g % 32), 'source', 'local', 'state', s,
        'request', json_build_object('nodes', n, 'cpus_per_node', c,
           'memory_mb', 100, 'gpus', 0, 'walltime_s', w, 'features', '[]'::json,
           'cluster', null, 'queue', null, 'reservation', null),
        'command', '[\"true\"]'::json, 'script', null,
        'env', json_build_object('LOOM_SIM_RUNTIME_S', w::text), 'priority', 0,
        'cluster', cl, 'native_id', null,
        'nodes', case when cl is null then '[]'::json
                      else json_build_array(nd) end,
        'submit_time', to_char(now() at time zone 'utc' - interval '1 hour',
                               'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
        'start_time', case when cl is null then null else
           to_char(now() at time zone 'utc' - interval '10 minutes',
                   'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') end,
        'end_time', null, 'exit_code', null, 'reason', null,
        'stdout', null, 'stderr', null, 'requeues', 0)
      from (select g,
              case when g <= $((CLUSTERS * NODES)) then 'running' else 'pending' end s,
              case when g <= $((CLUSTERS * NODES)) then 'c' || ((g - 1) / $NODES) end cl,
              case when g <= $((CLUSTERS * NODES)) then 'n' || ((g - 1) % $NODES + 1) end nd,
              case when g <= $((CLUSTERS * NODES)) then 1
                   when r < 0.60 then 1 when r < 0.85 then 1 + (g % 4)
                   when r < 0.97 then 4 + (g % 29) else 32 + (g % 225) end n,
              case when g <= $((CLUSTERS * NODES)) then 32
                   when r < 0.60 then 1 + (g % 32) else 32 end c,
              case when g <= $((CLUSTERS * NODES)) then 4200 + (g % 3600)
                   else 300 + (g * 7919 % 86100) end w
            from (select g, (g * 2654435761 % 1000) / 1000.0 r
                  from generate_series(1, $((CLUSTERS * NODES + WAITING))) g) x) y" \
        >/dev/null || { echo "sched-scale.sh: cannot fill the database" >&2; exit 1; }
    pg_sql "vacuum analyze jobs" >/dev/null
}
fill

# mix: a tenth of the waiting jobs become 100-task arrays (the last tenth:
# each hundredth job stands for its hundred) and another tenth depend on
# an earlier job (afterok): the even ones on a job that has completed
# successfully, the odd ones on the waiting job 1,000 before them.
mix() {
    local n=$((CLUSTERS * NODES + WAITING)) tenth=$((WAITING / 10))
    local a0=$((n - tenth + 1)) d0=$((n - 2 * tenth + 1)) done_id=$((n + 1))
    pg_sql "insert into jobs (id, state, owner, doc)
      select $done_id, 'completed', 'u0', (doc::jsonb || jsonb_build_object(
        'id', '$done_id', 'state', 'completed', 'cluster', null,
        'nodes', '[]'::jsonb, 'exit_code', 0,
        'end_time', doc->>'submit_time'))::json from jobs where id = $n;
      update jobs set doc = (doc::jsonb || jsonb_build_object('dependency',
        case when id % 2 = 0 then 'afterok:$done_id'
             else 'afterok:' || (id - 1000) end))::json
        where id between $d0 and $((a0 - 1));
      update jobs set doc = (doc::jsonb || jsonb_build_object('array',
        '1-100'))::json where id >= $a0 and id <= $n and (id - $a0) % 100 = 0;
      delete from jobs where id >= $a0 and id <= $n and (id - $a0) % 100 <> 0" \
        >/dev/null && pg_sql "vacuum analyze jobs" >/dev/null ||
        { echo "sched-scale.sh: cannot mix the database" >&2; exit 1; }
}

# conf BACKFILL DEPTH: loom.conf for the fabric.
conf() {
    local lines=('[scheduler]' "policy = $POLICY" "backfill = $1" "depth = $2"
                 'interval_s = 1') c
    for c in $(seq 0 $((CLUSTERS - 1))); do
        # unpinned_jobs: the waiting jobs name no cluster; without it no
        # sim cluster takes them, and every cycle plans nothing.
        lines+=("[cluster c$c]" 'adaptor = sim' "nodes = $NODES"
                'cpus_per_node = 32' 'memory_mb = 128000' 'speed = 1'
                "poll_s = $POLL_S" 'unpinned_jobs = yes')
    done
    loomd_conf "${lines[@]}"
}

# cycles: "count last_ms max_ms mean_ms" from /v1/runtime.
cycles() {
    api GET /v1/runtime >/dev/null
    py '" ".join(str(round(d["scheduler"]["cycles"][k], 1)) for k in ("count", "last_ms", "max_ms", "mean_ms"))' "$BODY"
}

# csum: "count sum_ms" of the cycles so far.
csum() {
    api GET /v1/runtime >/dev/null
    py 'str(d["scheduler"]["cycles"]["count"]) + " " + repr(d["scheduler"]["cycles"]["count"] * d["scheduler"]["cycles"]["mean_ms"])' "$BODY"
}

# thread_cpu: the CPU time (ms) loomd's scheduler and planner threads have
# used: what a cycle costs, whatever else this machine runs meanwhile.
thread_cpu() {
    local tick
    tick=$(getconf CLK_TCK)
    for t in /proc/"$LOOMD_PID"/task/*; do
        case $(cat "$t/comm" 2>/dev/null) in
        loom-sched | loom-plan)
            awk -v tick="$tick" '{ sub(/^.*\) /, ""); print ($12 + $13) * 1000 / tick }' "$t/stat" ;;
        esac
    done | awk '{ s += $1 } END { print s + 0 }'
}

# steady: over 10 s of periodic cycles, "cycles wall_ms_mean cpu_ms_mean".
steady() {
    local n0 s0 c0 n1 s1 c1
    read -r n0 s0 < <(csum)
    c0=$(thread_cpu)
    sleep 10
    read -r n1 s1 < <(csum)
    c1=$(thread_cpu)
    python3 -c "import sys; n0, s0, c0, n1, s1, c1 = map(float, sys.argv[1:]); d = n1 - n0
print('%d %s %s' % (d, round((s1 - s0) / d, 1) if d else '-', round((c1 - c0) / d, 1) if d else '-'))" \
        "$n0" "$s0" "$c0" "$n1" "$s1" "$c1"
}

# latency: GET /v1/jobs/{id} while cycles run, and with the scheduler off.
latency() {
    # get_latency: "req/s p50 p99" of GET /v1/jobs/{id}, 8 clients for 10 s.
    get_latency() {
        wrk --latency -t2 -c"${1:-8}" -d10s -H "$AUTH" "$LOOM_URL/v1/jobs/20000" 2>&1 |
            awk 'function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
                                  if (v ~ /s$/) return v * 1000; return v }
                 /Requests\/sec/ { r = $2 } $1 == "50%" { a = ms($2) } $1 == "99%" { b = ms($2) }
                 END { printf "%.0f %.2f %.2f\n", r, a, b }'
    }
    read -r rps p50 p99 < <(get_latency)
    read -r n2 _ _ _ < <(cycles)
    row "GET /v1/jobs/{id} while $((n2 - n)) cycles ran (8 clients)" "p50 $p50 ms" "p99 $p99 ms"
    read -r rps p50 p99 < <(get_latency 2)
    read -r n3 _ _ _ < <(cycles)
    row "GET /v1/jobs/{id} while $((n3 - n2)) cycles ran (2 clients)" "p50 $p50 ms" "p99 $p99 ms"
    row "  target" "p99 < 5 ms" ""
    api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
    read -r rps p50 p99 < <(get_latency)
    row "  the same with the scheduler off (no cycles)" "p50 $p50 ms" "p99 $p99 ms"
    api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
}

# after_cycles N: the longest of the next N cycles (ms), read from
# /v1/runtime as each one ends; a cycle that ended unseen between two
# reads counts through the maximum, when it raised it.
after_cycles() {
    local want=$1 n0 n m0 seen=0 worst=0 last max end=$((SECONDS + 60))
    read -r n0 _ m0 _ < <(cycles)
    while ((seen < want && SECONDS < end)); do
        read -r n last max _ < <(cycles)
        if ((n > n0)); then
            seen=$((seen + n - n0))
            n0=$n
            worst=$(awk -v w="$worst" -v l="$last" -v m0="$m0" -v m="$max" \
                'BEGIN { if (l > w) w = l; if (m > m0 && m > w) w = m; print w }')
        fi
        sleep 0.05
    done
    ((seen >= want)) && echo "$worst" || echo "-"
}

# log_mark: the lines of loomd's log so far; longest MARK: the parts of the
# longest cycle loomd logged after that mark, "build / plan / apply", wall
# then CPU: a wall time far above its CPU time waited for the CPU.
log_mark() { wc -l <"$T/loomd.log" 2>/dev/null || echo 0; }
longest() {
    tail -n +"$(($1 + 1))" "$T/loomd.log" | grep 'longest scheduling cycle' |
        tail -1 | sed -E 's/.*\(build ([0-9.]+), plan ([0-9.]+), apply ([0-9.]+); CPU ([0-9.]+), ([0-9.]+), ([0-9.]+)\).*/\1 \/ \2 \/ \3 (CPU \4 \/ \5 \/ \6)/'
}

# easy_run MODE: the EASY cycles, into R[MODE.*]; the API's latency too
# when MODE is plain.
declare -A R
easy_run() {
    local mode=$1
    conf easy 1000
    t0=$(date +%s%N)
    mark=$(log_mark)
    loomd_start || exit 1
    admin_token || exit 1
    AUTH="Authorization: Bearer $TOKEN"
    wait_for '[ "$(cycles | cut -d" " -f1 | cut -d. -f1)" -ge 3 ]' 120 0.5 ||
        { echo "sched-scale.sh: no cycles" >&2; exit 1; }
    t1=$(date +%s%N)
    R[$mode.startup]="$(( (t1 - t0) / 1000000 )) ms"
    sleep 5
    read -r n last max mean < <(cycles)
    R[$mode.easy_mean]=$mean
    R[$mode.easy_max]=$max
    R[$mode.easy]="mean $mean ms"
    R[$mode.easymax]="max $max ms"
    R[$mode.longest]=$(longest "$mark")
    R[$mode.cycles]=$n
    read -r sn swall scpu < <(steady)
    R[$mode.scpu_ms]=$scpu
    R[$mode.swall_ms]=$swall
    R[$mode.steady]="$sn cycles"
    R[$mode.swall]="mean $swall ms"
    R[$mode.scpu]="$scpu ms"
    api GET /v1/runtime >/dev/null
    R[$mode.queue]=$(py 'd["scheduler"]["jobs"]["pending"]' "$BODY")
    if [ "$mode" = plain ]; then
        row "start-up to 3 cycles (116,000 jobs, 16,000 nodes)" "${R[$mode.startup]}" ""
        row "EASY cycle, whole queue (loomd, $n cycles)" "mean $mean ms" "max $max ms"
        row "  the longest: build / plan / apply (ms)" "${R[$mode.longest]}" ""
        row "  target" "< 250 ms" ""
        row "  the $sn cycles of the next 10 s: wall, CPU" "mean $swall ms" "$scpu ms"
        [ "$EXTRA" = 1 ] && latency
    fi
    # One running job ends (cancelled): the first cycle after loomd saw the
    # end, then the mean of the cycles in the 3 s after it (the queue and the
    # plan's picture of running jobs are kept between cycles: these are the
    # incremental cycles).
    api DELETE /v1/jobs/1 >/dev/null
    wait_for '[ "$(field 1 .state)" = cancelled ]' 20 0.02
    read -r n1 sum1 < <(csum)
    wait_for '[ "$(csum | cut -d" " -f1)" -gt "$n1" ]' 10 0.02
    api GET /v1/runtime >/dev/null
    last=$(py 'round(d["scheduler"]["cycles"]["last_ms"], 1)' "$BODY")
    parts=$(py '" ".join(str(round(d["scheduler"]["cycles"]["last_parts_ms"][k], 1)) for k in ("build", "plan", "apply"))' "$BODY")
    read -r p_build p_plan p_apply <<<"$parts"
    sleep 3
    read -r n2 sum2 < <(csum)
    after=$(python3 -c "import sys; n1, s1, n2, s2 = map(float, sys.argv[1:]); print(round((s2 - s1) / (n2 - n1), 1) if n2 > n1 else '-')" "$n1" "$sum1" "$n2" "$sum2")
    rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
    R[$mode.last_ms]=$last
    R[$mode.after_ms]=$after
    R[$mode.last]="$last ms"
    R[$mode.parts]="$p_build / $p_plan / $p_apply"
    R[$mode.after]="$after ms"
    R[$mode.rss]="$rss MiB"
    if [ "$mode" = plain ]; then
        row "first cycle after one job ended" "$last ms" ""
        row "  its parts: build / plan / apply" "$p_build / $p_plan" "/ $p_apply ms"
        row "  mean of the $((n2 - n1)) cycles in the 3 s after" "$after ms" ""
        row "  target" "< 20 ms" ""
        row "loomd RSS at that size" "$rss MiB" ""
        # A reload that changes the planning depth estimates every job
        # anew; the scheduler switched off and on again forgets what
        # jobs show. The longest of the 3 cycles after each.
        conf easy 2000
        api POST /v1/runtime/reload '{}' >/dev/null
        [ "$STATUS" = 200 ] || { echo "sched-scale.sh: reload: $STATUS $BODY" >&2; exit 1; }
        row "longest of 3 cycles after a reload (depth 2,000)" "$(after_cycles 3) ms" ""
        api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null
        sleep 2
        api POST /v1/runtime/scheduler '{"enabled": true}' >/dev/null
        row "  after the scheduler was switched off and on" "$(after_cycles 3) ms" ""
        row "  target" "< 250 ms" ""
    fi
    loomd_stop
}

peer
easy_run plain

if [ "$EXTRA" = 1 ]; then
    conf conservative 10000
    mark=$(log_mark)
    loomd_start || exit 1
    wait_for '[ "$(cycles | cut -d" " -f1 | cut -d. -f1)" -ge 3 ]' 300 0.5 ||
        { echo "sched-scale.sh: no conservative cycles" >&2; exit 1; }
    sleep 5
    read -r n last max mean < <(cycles)
    row "conservative cycle, depth 10,000 (loomd, $n cycles)" "mean $mean ms" "max $max ms"
    row "  the longest: build / plan / apply (ms)" "$(longest "$mark")" ""
    row "  target" "< 500 ms" ""
    loomd_stop
    R[cons_mean]=$mean
    R[cons_max]=$max
fi
peer

# loomd against the in-process planner of the same run.
row "in-process planner (plan_scale, $((PEER[runs])) runs, same fabric)" "wall" "CPU"
row "  EASY cycle" "$(pmean easy.wall) ms" "$(pmean easy.cpu) ms"
row "  EASY cycle after one job ended" "$(pmean after.wall) ms" "$(pmean after.cpu) ms"
row "    the same, estimates kept (as loomd)" "$(pmean kept.wall) ms" "$(pmean kept.cpu) ms"
[ "$EXTRA" = 1 ] &&
    row "  conservative cycle, depth 10,000" "$(pmean cons.wall) ms" "$(pmean cons.cpu) ms"
row "loomd / plan_scale (wall; CPU where loomd's is known)" "" ""
row "  EASY cycle: mean, max" "$(ratio "${R[plain.easy_mean]}" "$(pmean easy.wall)")" \
    "$(ratio "${R[plain.easy_max]}" "$(pmean easy.wall)")"
row "  EASY periodic cycle, CPU" "$(ratio "${R[plain.scpu_ms]}" "$(pmean easy.cpu)")" ""
row "  first cycle after one job ended" "$(ratio "${R[plain.last_ms]}" "$(pmean kept.wall)")" ""
[ "$EXTRA" = 1 ] &&
    row "  conservative cycle: mean, max" "$(ratio "${R[cons_mean]}" "$(pmean cons.wall)")" \
        "$(ratio "${R[cons_max]}" "$(pmean cons.wall)")"

if [ "$MIXED" = 1 ]; then
    fill
    mix
    easy_run mixed
fi

echo
printf '%-50s %14s %14s\n' "benchmark" "result" ""
printf '%s\n' "${ROWS[@]}"
if [ "$MIXED" = 1 ]; then
    echo
    printf '%-40s %22s %22s\n' "EASY, depth 1,000" "plain" \
        "1/10 arrays, 1/10 deps"
    for k in "start-up to 3 cycles:startup" "pending jobs (GET /v1/runtime):queue" \
        "first cycles measured:cycles" "cycle, whole queue:easy" "  max:easymax" \
        "  its build / plan / apply (CPU):longest" \
        "periodic cycles of 10 s after them:steady" "  their wall time:swall" \
        "  their CPU (scheduler, planner):scpu" \
        "first cycle after one job ended:last" \
        "  build / plan / apply (ms):parts" "  mean of the cycles after:after" \
        "loomd RSS:rss"; do
        printf '%-40s %22s %22s\n' "${k%%:*}" "${R[plain.${k##*:}]}" \
            "${R[mixed.${k##*:}]}"
    done
    printf '%-40s %22s %22s\n' "mixed / plain: cycle mean, max" \
        "$(ratio "${R[mixed.easy_mean]}" "${R[plain.easy_mean]}")" \
        "$(ratio "${R[mixed.easy_max]}" "${R[plain.easy_max]}")"
    printf '%-40s %22s %22s\n' "  periodic cycles: wall, CPU" \
        "$(ratio "${R[mixed.swall_ms]}" "${R[plain.swall_ms]}")" \
        "$(ratio "${R[mixed.scpu_ms]}" "${R[plain.scpu_ms]}")"
    printf '%-40s %22s\n' "  target (mixed against plain)" "< 1.10"
    printf '(CPU: of loomd'"'"'s scheduler and planner threads, per cycle, from\n'
    printf '/proc; unlike wall time it does not grow with what else runs.)\n'
fi
t_ok 0 "benchmarks ran"
t_done
