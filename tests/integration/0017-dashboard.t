#!/usr/bin/env bash
# 0017-dashboard.t - the web dashboard in a real browser (headless
# Chromium driven by Playwright: tests/integration/dashboard.js) against a
# fabric of a real Slurm (4 nodes) and 16 sim clusters of 1,000 nodes:
# log in; every cluster and its node grid (the time to fetch and draw the
# 16,004 nodes is reported); submit a job and watch it complete; cancel
# one; schedule maintenance from goal versus actual, see it on the
# timeline and the node turn maint and back; a reader is offered nothing
# it may not do; a user sees its own job only, with its account. loomd
# runs as loom; the dashboard's jobs run on Slurm as $T_USER (the admin
# token's account), the user's (on a sim cluster, which runs nothing) is
# alice's, an account of its own. Screenshots go to tests/integration/dashboard-shots/ in
# the build directory. Chromium and playwright-core (in the build
# directory's node_modules) are installed by ./bootstrap check: without
# them the test fails.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

PW=$LOOM_TOP_BUILDDIR/node_modules/playwright-core
SHOTS=$LOOM_TOP_BUILDDIR/tests/integration/dashboard-shots
command -v node >/dev/null || t_bail "no node (apt-get install nodejs; ./bootstrap check does it)"
[ -x /usr/bin/chromium ] || t_bail "no /usr/bin/chromium (apt-get install chromium; ./bootstrap check does it)"
[ -f "$PW/package.json" ] ||
    t_bail "no playwright-core in $LOOM_TOP_BUILDDIR/node_modules (npm install playwright-core there; ./bootstrap check does it)"
slurm_available || t_bail "no Slurm here: $SLURM_WHY"
t_account ALICE_U alice
map_account alice "$ALICE_U"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"

SIMS=
for i in $(seq -w 1 16); do
    SIMS="$SIMS
[cluster sim$i]
adaptor = sim
nodes = 1000
cpus_per_node = 32
poll_s = 2
"
done
loomd_conf <<EOF2
[scheduler]
interval_s = 1

[maintenance]
compare_s = 2

[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
$SIMS
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"
t_is "$(ps -o user= -p "$LOOMD_PID")" "$LOOM_SERVICE_USER" "loomd runs as $LOOM_SERVICE_USER"
READER=$(token_for viewer reader) && [ -n "$READER" ] || t_bail "no reader token"
ALICE=$(token_for alice user) && [ -n "$ALICE" ] || t_bail "no token for alice"
TOKEN=$ALICE submit '{"name":"alices","command":["true"],"request":{"cluster":"sim01"},"env":{"LOOM_SIM_RUNTIME_S":"3600"}}' ||
    t_bail "alice cannot submit"
ALICE_JOB=$JOB
wait_for 'api GET /v1/clusters/slurm >/dev/null; [ "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" = up/4 ]' 30
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" up/4 "the Slurm cluster is up with 4 nodes"
api PUT /v1/goal/nodes/slurm/n2 '{"attributes":{"kernel":"6.1"}}' >/dev/null
t_is "$STATUS" 200 "a goal of kernel 6.1 for slurm/n2"
api POST /v1/actual/nodes/slurm/n2 '{"attributes":{"kernel":"5.10"}}' >/dev/null
t_is "$STATUS" 200 "... and a report of 5.10"

rm -rf "$SHOTS"
mkdir -p "$SHOTS" "$T/chrome"
LOOM_URL=$LOOM_URL ADMIN=$TOKEN ADMIN_ACCOUNT=$T_USER READER=$READER \
    USER=$ALICE USER_JOB=$ALICE_JOB USER_ACCOUNT=$ALICE_U JOBS=$T/browser.jobs \
    SHOTS=$SHOTS PROFILE=$T/chrome PW=$PW CLUSTERS=17 node "$LOOM_TOP_SRCDIR/tests/integration/dashboard.js" \
    >"$T/browser.out" 2>&1
RC=$?
while IFS= read -r line; do
    case $line in
    "ok - "*) t_ok 0 "${line#ok - }" ;;
    "not ok - "*) t_ok 1 "${line#not ok - }" ;;
    "#"*) echo "$line" ;;
    *) t_diag "$line" ;;
    esac
done <"$T/browser.out"
t_is "$RC" 0 "the browser's run ended well"

# as whom the dashboard's jobs ran
{ read -r DONE; read -r GONE; } <"$T/browser.jobs"
api GET "/v1/jobs/$DONE" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .account)" "completed/$T_USER" \
    "the job submitted in the browser ran as $T_USER, the admin token's account"
OUT=$(jget "$BODY" .stdout)
t_is "$(stat -c %U "$OUT" 2>&1)" "$T_USER" "... and its output ($OUT) is that account's file"
api GET "/v1/jobs/$GONE" >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .account)" "cancelled/$T_USER" "the one cancelled was $T_USER's too"
t_ok "$([ "$(ls "$SHOTS"/*.png 2>/dev/null | wc -l)" -ge 13 ] && echo 0 || echo 1)" \
    "the screenshots are in $SHOTS"
t_done
