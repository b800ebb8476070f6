#!/usr/bin/env bash
# conf.t - fuzz loom.conf (core/conf.c) and the readers of its sections:
# [loomd] with the TLS keys, [scheduler], [limits], [maintenance], [action],
# [rule]; tests/fuzz/fuzz_conf.c.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/fuzz.sh"
fuzz_target conf
