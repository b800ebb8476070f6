#!/usr/bin/env bash
# script_parse.t - fuzz a script pack's answers (adaptors/script_parse.c):
# nodes, jobs, queues; tests/fuzz/fuzz_script_parse.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target script_parse
