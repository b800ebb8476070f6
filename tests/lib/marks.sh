# marks.sh - reading $T_OUT/marks, where the jobs of a test append
# "<loom id> start|end <native id> <epoch>" lines (9003, 9005, 9013).
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh:
#
# marks ID KIND  how many KIND (start|end) marks job ID left.

# marks ID KIND: how many KIND (start|end) marks job ID left.
marks() {
    awk -v id="$1" -v k="$2" '$1 == id && $2 == k { n++ } END { print n + 0 }' \
        "$T_OUT/marks" 2>/dev/null
}
