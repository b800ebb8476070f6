#!/usr/bin/env bash
# jwt.t - fuzz tokens of outside issuers (grid/jwt.c, grid/verify.c): as
# sent, and claims signed by the issuer's key; tests/fuzz/fuzz_jwt.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target jwt
