#!/usr/bin/env bash
# token.t - fuzz Loom's bearer tokens (core/token.c): as sent, and payloads
# signed with the fuzzer's key; tests/fuzz/fuzz_token.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target token
