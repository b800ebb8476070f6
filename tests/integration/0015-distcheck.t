#!/usr/bin/env bash
# 0015-distcheck.t - make distcheck passes: the tarball has every file the
# build, the tests and the installation need (it is unpacked read-only,
# built out of tree, its unit tests run, installed into a prefix and a
# DESTDIR and uninstalled without a file left), and it holds what an
# operator installs (the unit's template, the examples, the OpenAPI
# document, the npm lock of the tests). Configured in this test's own
# directory; the tarball's integration tests do not run there (see
# AM_DISTCHECK_CONFIGURE_FLAGS), this suite runs them.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# make as if from a shell: not with the flags and variables of the make
# check that runs this test (TESTS=..., -w, the jobserver)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

mkdir -p "$T/build"
cd "$T/build" || t_bail "no $T/build"
"$LOOM_TOP_SRCDIR/configure" -q >"$T/configure.out" 2>&1
t_is $? 0 "configure in $T/build" || t_bail "$(tail -n 20 "$T/configure.out")"
mk -j2 distcheck >"$T/distcheck.out" 2>&1
t_is $? 0 "make distcheck" || t_diag "$(grep -vE '^(PASS|ok) ' "$T/distcheck.out" | tail -n 60)"
t_like "$(grep -A1 'archives ready for distribution' "$T/distcheck.out" | tail -n 1)" \
    'loom-[0-9.]+\.tar\.gz' "... the tarball is ready for distribution"
TARBALL=$(ls "$T"/build/loom-*.tar.gz 2>/dev/null | head -n 1)
[ -n "$TARBALL" ] && tar -tzf "$TARBALL" | sed 's|^[^/]*/||' | sort >"$T/files"
for f in docs/openapi.json docs/grafana-dashboard.json docs/systemd/loomd.service.in \
    docs/systemd/remote-only.conf docs/examples/loom.conf.example \
    docs/examples/accounts.example tests/lib/npm/package.json \
    tests/lib/npm/package-lock.json tests/lib/openapi_check.js \
    tests/integration/0015-distcheck.t core/api/openapi.c bootstrap; do
    grep -qxF "$f" "$T/files"
    t_ok $? "the tarball has $f"
done
# every file git knows is in the tarball, but the CI's and git's own
missing=$(cd "$LOOM_TOP_SRCDIR" && git ls-files 2>/dev/null |
    grep -vE '^(\.ci/|\.gitignore$)' | sort | comm -23 - "$T/files")
t_is "$missing" "" "every file of the tree is in the tarball"
t_done
