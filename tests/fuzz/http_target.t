#!/usr/bin/env bash
# http_target.t - fuzz the HTTP request target (core/http_target.c);
# tests/fuzz/fuzz_http_target.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target http_target
