#!/usr/bin/env bash
# directives.t - fuzz a job script's directives (core/directives*.c) and
# the copies a cluster system gets; tests/fuzz/fuzz_directives.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target directives
