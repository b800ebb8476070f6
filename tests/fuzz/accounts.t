#!/usr/bin/env bash
# accounts.t - fuzz the accounts file (core/accounts.c) and the mapping of
# an identity with it; tests/fuzz/fuzz_accounts.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target accounts
