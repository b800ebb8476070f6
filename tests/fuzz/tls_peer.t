#!/usr/bin/env bash
# tls_peer.t - fuzz the certificate chain a client sends (core/tls_peer.c
# tls_chain_check); tests/fuzz/fuzz_tls_peer.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target tls_peer
