#!/usr/bin/env bash
# 0011-openapi.t - GET /openapi.json serves docs/openapi.json as it is, with
# no token; a standard linter (@redocly/cli, its recommended-strict rules,
# installed by ./bootstrap check in the build tree's npm/: without it this
# test fails, it never skips) finds nothing in it. That the route table
# and the document agree is the unit test core_openapi's; that loomd's
# answers are what the document says, every integration test's (t_done).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

REDOCLY=$LOOM_TOP_BUILDDIR/npm/node_modules/.bin/redocly
[ -x "$REDOCLY" ]
t_ok $? "@redocly/cli is installed in $LOOM_TOP_BUILDDIR/npm (./bootstrap npm DIR)" ||
    t_bail "no @redocly/cli: run ./bootstrap check (or ./bootstrap npm BUILD_DIR)"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf '[cluster local]' 'adaptor = local' 'nodes = 1'
loomd_start || t_bail "loomd did not start"

TOKEN= api GET /openapi.json >/dev/null
t_is "$STATUS" 200 "GET /openapi.json without a token: 200"
t_ok "$(cmp -s "$T/api.body" "$LOOM_TOP_SRCDIR/docs/openapi.json"; echo $?)" \
    "... docs/openapi.json, byte for byte"
# (py, not jget: the document is past what one argument of a program
# may hold, 128 KiB)
t_is "$(py 'd["openapi"]' "$BODY")" 3.1.0 "... OpenAPI 3.1"
t_is "$(py 'd["info"]["version"]' "$BODY")" \
    "$("$LOOM_TOP_BUILDDIR/loomd" -V | awk '{print $2}')" "... of loomd's version"
TOKEN= api POST /openapi.json >/dev/null
t_is "$STATUS" 400 "POST /openapi.json: 400, a method the path does not take"

# The linter, run where the document is, with its strict rules
(cd "$T" && "$REDOCLY" lint --extends recommended-strict --format stylish \
    "$LOOM_TOP_SRCDIR/docs/openapi.json") >"$T/lint.out" 2>&1
t_is $? 0 "redocly lint (recommended-strict) passes docs/openapi.json" ||
    t_diag "$(grep -vE '^\s*[║╔╚]' "$T/lint.out" | tail -n 40)"
# (past the banner node 20 gets: a box of ║ lines)
t_is "$(grep -v '║' "$T/lint.out" | grep -ciE '(error|warning)')" 0 \
    "... with no error and no warning" ||
    t_diag "$(grep -v '║' "$T/lint.out" | grep -iE '(error|warning)' | head -20)"

# The answer checker catches a wrong answer: an answer the document does
# not describe (a job without its fields) is refused, naming it.
mkdir -p "$T/wrong"
printf '{"id":"1","state":"bogus"}' >"$T/wrong/a"
printf 'GET\t/v1/jobs/1\t200\tapplication/json\ta\n' >"$T/wrong/index"
node "$LOOM_TOP_SRCDIR/tests/lib/openapi_check.js" "$LOOM_TOP_BUILDDIR/npm/node_modules" \
    "$LOOM_TOP_SRCDIR/docs/openapi.json" "$T/wrong" >"$T/wrong.out" 2>&1
t_is $? 1 "tests/lib/openapi_check.js refuses an answer the document does not describe"
t_like "$(head -n 1 "$T/wrong.out")" "^GET /v1/jobs/1 200: .*/state must be equal to one of the allowed values" \
    "... naming what is wrong"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
