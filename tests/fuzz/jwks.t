#!/usr/bin/env bash
# jwks.t - fuzz an issuer's JWKS document (grid/jwk.c) and the keys it
# gives; tests/fuzz/fuzz_jwks.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target jwks
