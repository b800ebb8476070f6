# restarts.sh - the rounds of a restart benchmark (tests/bench/restart-
# ended*.sh): each build of BUILDS started ROUNDS times in turns by the
# caller's one_start BUILD, which prints "start_ms peak_rss_kb rss_kb
# in_memory"; a line per start, then each build's means and, with two
# builds (the peer first), this build's ratios to the peer's.
# Needs SELF (this build's directory), BUILDS and ROUNDS set.
# SPDX-License-Identifier: MIT

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
