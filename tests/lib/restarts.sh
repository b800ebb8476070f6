# restarts.sh - the rounds of a restart benchmark (tests/bench/restart-
# ended*.sh): this build (SELF) and, with BENCH_PEER_BUILDDIR, a peer
# build (BUILDS, the peer first), each started BENCH_ROUNDS (ROUNDS, 3)
# times in turns by the caller's one_start BUILD, which prints "start_ms
# peak_rss_kb rss_kb in_memory" (restarts_one does the work); a line per
# start, then each build's means and, with the peer, this build's ratios
# to the peer's. Sourced after harness.sh.
# SPDX-License-Identifier: MIT

ROUNDS=${BENCH_ROUNDS:-3}
SELF=$LOOM_TOP_BUILDDIR
BUILDS=("$SELF")
[ -n "${BENCH_PEER_BUILDDIR:-}" ] && BUILDS=("$BENCH_PEER_BUILDDIR" "$SELF")

# restarts_one BUILD READY LEFT COUNTER: start BUILD's loomd and time it
# until READY (a command, run until it succeeds: the last stored thing
# answers), then wait for LEFT (as wait_for takes it: the ended ones left
# memory at the first look); print the time, the peak and the present RSS
# and the runtime counter COUNTER (what stayed in memory); stop it.
restarts_one() {
    local t0 t1 hwm rss
    LOOM_TOP_BUILDDIR=$1
    LOOM_LIBEXECDIR=$1
    t0=$(date +%s%N)
    loomd_start || exit 1
    until eval "$2"; do
        sleep 0.02
    done
    t1=$(date +%s%N)
    wait_for "$3" 60
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$LOOMD_PID/status")
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$LOOMD_PID/status")
    echo "$(((t1 - t0) / 1000000)) $hwm $rss $(runtime_counter "$4")"
    loomd_stop
    LOOM_TOP_BUILDDIR=$SELF
}

restarts_label() { [ "$1" = "$SELF" ] && echo "this build" || echo "peer build"; }

restarts_run() {
    local r b ms hwm rss in p
    local -A sum_ms sum_hwm sum_rss
    printf '%-8s %-40s %10s %12s %12s %10s\n' round build "start ms" \
        "peak RSS KB" "RSS KB" "in memory"
    for ((r = 1; r <= ROUNDS; r++)); do
        for b in "${BUILDS[@]}"; do
            read -r ms hwm rss in < <(one_start "$b")
            printf '%-8s %-40s %10s %12s %12s %10s\n' "$r" \
                "$(restarts_label "$b")" "$ms" "$hwm" "$rss" "$in"
            sum_ms[$b]=$((${sum_ms[$b]:-0} + ms))
            sum_hwm[$b]=$((${sum_hwm[$b]:-0} + hwm))
            sum_rss[$b]=$((${sum_rss[$b]:-0} + rss))
        done
    done
    echo
    printf '%-40s %10s %12s %12s\n' "build (mean of $ROUNDS)" "start ms" \
        "peak RSS KB" "RSS KB"
    for b in "${BUILDS[@]}"; do
        printf '%-40s %10s %12s %12s\n' "$(restarts_label "$b")" \
            $((sum_ms[$b] / ROUNDS)) $((sum_hwm[$b] / ROUNDS)) \
            $((sum_rss[$b] / ROUNDS))
    done
    if [ ${#BUILDS[@]} = 2 ]; then
        p=${BUILDS[0]}
        printf '%-40s %10s %12s %12s\n' "this build / peer" \
            "$(awk "BEGIN {printf \"%.2f\", ${sum_ms[$SELF]} / ${sum_ms[$p]}}")" \
            "$(awk "BEGIN {printf \"%.2f\", ${sum_hwm[$SELF]} / ${sum_hwm[$p]}}")" \
            "$(awk "BEGIN {printf \"%.2f\", ${sum_rss[$SELF]} / ${sum_rss[$p]}}")"
    fi
}
