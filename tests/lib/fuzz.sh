# fuzz.sh - one fuzz target as a test: its regression inputs, then fuzzing.
# SPDX-License-Identifier: MIT
#
# Sourced by tests/fuzz/NAME.t: fuzz_target NAME. The target is
# tests/fuzz/fuzz_NAME of the clang build that `make fuzz` keeps in fuzz/
# under the build directory (made here when missing, one test at a time).
#  1. every input of tests/fuzz/corpus/NAME/ (seeds, and the inputs of
#     crashes fixed since) runs once, without a sanitizer's report;
#  2. then libFuzzer mutates them for LOOM_FUZZ_SECONDS (default 30; `make
#     fuzz-long` gives 3600). What it finds (crash, leak, sanitizer report,
#     an input slower than 10 s) fails the test; the input is kept in
#     fuzz-found/NAME/ of the build directory, to be fixed and then added
#     to the corpus.
# Needs LOOM_FUZZ_CC (configure's FUZZ_CC): without clang the test fails.

. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

fuzz_target() {
    local name=$1 secs=${LOOM_FUZZ_SECONDS:-30} bin corpus found rc
    local inputs=()
    t_plan 3
    [ -n "${LOOM_FUZZ_CC:-}" ] ||
        t_bail "configure found no clang that links libFuzzer (apt-get install clang libclang-rt-14-dev, then configure again; ./bootstrap check installs them)"
    # one build for all the fuzz tests: the first to come makes it
    if ! (unset MAKEFLAGS MFLAGS MAKELEVEL
        flock "$LOOM_TOP_BUILDDIR/.fuzz.lock" \
            make -C "$LOOM_TOP_BUILDDIR" fuzz) >"$T/build.log" 2>&1; then
        t_bail "make fuzz failed: $(tail -n 20 "$T/build.log")"
    fi
    bin=$LOOM_TOP_BUILDDIR/fuzz/tests/fuzz/fuzz_$name
    corpus=$LOOM_TOP_SRCDIR/tests/fuzz/corpus/$name
    [ -x "$bin" ]
    t_ok $? "make fuzz built $bin"

    mapfile -t inputs < <(find "$corpus" -type f | LC_ALL=C sort)
    "$bin" -timeout=10 "${inputs[@]}" >"$T/regress.log" 2>&1
    rc=$?
    t_ok $((rc != 0 || ${#inputs[@]} == 0)) \
        "the ${#inputs[@]} inputs of tests/fuzz/corpus/$name run without a report" ||
        t_diag "$(grep -E 'ERROR|SUMMARY|Running:' "$T/regress.log" | tail -n 20)"

    mkdir -p "$T/corpus" "$T/found"
    "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$T/found/" \
        "$T/corpus" "$corpus" >"$T/fuzz.log" 2>&1
    rc=$?
    found=$LOOM_TOP_BUILDDIR/fuzz-found/$name
    if [ -n "$(ls -A "$T/found")" ]; then
        mkdir -p "$found" && cp "$T/found"/* "$found/"
    fi
    t_ok "$rc" "$secs s of fuzzing found nothing ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$T/fuzz.log" | cut -d' ' -f2) runs)" ||
        t_diag "$(grep -E 'ERROR|SUMMARY|#[0-9]+ |artifact' "$T/fuzz.log" | tail -n 30)" \
            "the input is in $found/: fix the crash, then add it to tests/fuzz/corpus/$name/"
    t_done
}
