#!/usr/bin/env bash
# 0001-health-auth.t - loomd starts on a private PostgreSQL, answers
# /healthz without a token, refuses /v1 without a valid one, serves an admin,
# and stops cleanly on SIGTERM.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<'EOF_CONF'
[cluster local]
adaptor = local
nodes = 2
EOF_CONF
loomd_start || t_bail "loomd did not start"

TOKEN= api GET /healthz >/dev/null
t_is "$STATUS" 200 "GET /healthz answers 200 without a token"

TOKEN= api GET /v1/clusters >/dev/null
t_is "$STATUS" 401 "GET /v1/clusters without a token is 401"
t_is "$(jget "$BODY" .error.code)" unauthenticated "... error.code is unauthenticated"
t_is "$(jget "$BODY" .error.message)" \
    "a bearer token is required (Authorization: Bearer <token>)" "... with an error.message saying so"

TOKEN=garbage.not-a-token api GET /v1/clusters >/dev/null
t_is "$STATUS" 401 "a garbage token is 401"
t_is "$(jget "$BODY" .error.code)" unauthenticated "... error.code is unauthenticated"

admin_token
t_ok $? "loomctl token create makes an admin token"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "GET /v1/clusters with the admin token is 200"
t_is "$(jlen "$BODY" .items)" 1 "... one cluster in items"
t_is "$(jget "$BODY" .items.0.name)" local "... named local"
t_is "$(jget "$BODY" .items.0.adaptor)" local "... with the local adaptor"

loomd_stop
t_is "$?" 0 "loomd exits 0 on SIGTERM"
t_done
