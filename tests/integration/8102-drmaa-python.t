#!/usr/bin/env bash
# 8102-drmaa-python.t - Debian's python3-drmaa, a DRMAA client written
# elsewhere, drives libdrmaa through DRMAA_LIBRARY_PATH against one loomd
# with the local cluster and a real Slurm: submit, wait, exit status,
# bulk jobs, a job's files where its working directory and output and
# error paths say (the account's), hold and release, terminate, on each
# cluster
# (tests/fixtures/drmaa/client.py runs the session and says what it saw).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

LIB=$LOOM_TOP_BUILDDIR/grid/drmaa/.libs/libdrmaa.so.1
[ -f "$LIB" ] || t_bail "$LIB is not built"
# Debian's module is for Debian's python: /usr/bin/python3 (python3 on the
# PATH may be another). Found, not imported: importing loads a library.
PY=/usr/bin/python3
"$PY" -c 'import importlib.util, sys
sys.exit(importlib.util.find_spec("drmaa") is None)' 2>/dev/null ||
    t_bail "python3-drmaa is not installed (apt-get install python3-drmaa; ./bootstrap check does it)"
slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "no PostgreSQL"
loomd_conf <<EOF2
[cluster local]
adaptor = local
nodes = 2
poll_s = 0.2
[cluster slurm]
adaptor = script
pack = slurm
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.5
EOF2
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"
t_account DRMAA_USER drmaa # the account the client's jobs run as
t_diag "the DRMAA client's jobs run as $DRMAA_USER"
HOME_DIR=$(getent passwd "$DRMAA_USER" | cut -d: -f6)
# the jobs' working directories, the account's, each with a directory for
# errors
for C in local slurm; do
    install -d -m 0755 -o "$DRMAA_USER" -g "$DRMAA_USER" "$T/wd" "$T/wd/$C" \
        "$T/wd/$C/err" || t_bail "cannot make $T/wd/$C"
done
(umask 077 && token_for "$DRMAA_USER" user >"$T/user.token") || t_bail "no user token"

# A library built with AddressSanitizer needs its runtime loaded first in a
# program that was not built with it; python's own allocations are not
# this test's leaks.
PRELOAD=$(ldd "$LIB" | awk '/libasan/ {print $3}')

# client CLUSTER: run client.py's session on CLUSTER; OUT is what it saw.
client() {
    OUT=$(env DRMAA_LIBRARY_PATH="$LIB" LOOM_TOKEN_FILE="$T/user.token" \
        DRMAA_CHECK_ADMIN="$TOKEN" DRMAA_CHECK_WD="$T/wd" \
        ${PRELOAD:+LD_PRELOAD=$PRELOAD} \
        ASAN_OPTIONS=detect_leaks=0 \
        timeout 600 "$PY" "$LOOM_TOP_SRCDIR/tests/fixtures/drmaa/client.py" \
        "$1" 2>"$T/client-$1.err")
    local rc=$?
    t_is "$rc" 0 "$1: python3-drmaa ran its session" ||
        t_diag "$(tail -n 30 "$T/client-$1.err")"
}

for C in local slurm; do
    client "$C"
    t_is "$(jget "$OUT" .contact)" "$LOOM_URL" "$C: the contact is LOOM_URL"
    t_like "$(jget "$OUT" .drms)" '^Loom [0-9]' "$C: the DRM system is Loom"
    t_is "$(jget "$OUT" .version)" 1.0 "$C: DRMAA version 1.0"
    t_like "$(jget "$OUT" .implementation)" '^Loom DRMAA' "$C: the implementation"
    t_is "$(py '[d["exit"][k] for k in ("same_id", "exited", "status", "signaled", "aborted")]' "$OUT")" \
        '[true, true, 7, false, false]' "$C: a job exits 7 and wait says so"
    t_is "$(py 'sorted(set(d["exit"]["usage"]) & {"end_time", "exit_status", "start_time", "submission_time", "wallclock"})' "$OUT")" \
        '["end_time", "exit_status", "start_time", "submission_time", "wallclock"]' \
        "$C: its resource usage has the times, the wallclock and the exit status"
    t_is "$(jget "$OUT" .exit_ps)" failed "$C: its status is failed (it exited 7)"
    t_is "$(jget "$OUT" .bulk)" '[1, 2, 3]' "$C: three bulk jobs exit with their index"
    t_is "$(jget "$OUT" .paths_exit)/$(jget "$OUT" .paths_bulk)" '0/[0, 0]' \
        "$C: a job with paths and two bulk jobs exit 0"
    ID=$(jget "$OUT" .paths_id)
    F=$T/wd/$C/out%.txt
    t_is "$(stat -c %U "$F" 2>&1)" "$DRMAA_USER" \
        "$C: the output is in the working directory, out%.txt, the account's"
    t_is "$(cat "$F" 2>&1)" "$DRMAA_USER"$'\n'"$T/wd/$C" \
        "$C: ... with id -un and pwd"
    F=$T/wd/$C/err/py-paths.e$ID
    t_is "$(stat -c %U "$F" 2>&1)/$(cat "$F" 2>&1)" "$DRMAA_USER/oops" \
        "$C: the errors are in the directory err/, py-paths.e$ID, the account's"
    for I in 1 2; do
        F=$HOME_DIR/py-$C.$I.out
        t_is "$(stat -c %U "$F" 2>&1)" "$DRMAA_USER" \
            "$C: bulk job $I wrote \$drmaa_hd_ph\$/py-$C.$I.out, the account's"
        t_is "$(cat "$F" 2>&1)" "$DRMAA_USER"$'\n'"$HOME_DIR"$'\noops' \
            "$C: ... with id -un, pwd (the home) and its errors"
    done
    t_is "$(jget "$OUT" .hold_queued)/$(jget "$OUT" .hold_held)/$(jget "$OUT" .hold_again)/$(jget "$OUT" .hold_released)" \
        queued_active/user_on_hold/HoldInconsistentState/queued_active \
        "$C: a waiting job is held, cannot be held twice, and is released"
    t_is "$(py '[d["hold_end"][k] for k in ("exited", "status", "ps")]' "$OUT")" \
        '[true, 0, "done"]' "$C: released, it runs and is done"
    t_is "$(jget "$OUT" .term_running)/$(jget "$OUT" .term_started)" running/true \
        "$C: a long job runs, its program begun"
    t_is "$(py '[d["term_end"][k] for k in ("signaled", "exited", "aborted", "ps")]' "$OUT")" \
        '[true, false, false, "failed"]' "$C: terminated, it is signaled and failed"
    t_like "$(jget "$OUT" .term_end.signal)" '^SIG(TERM|KILL)$' \
        "$C: ... by SIGTERM or SIGKILL ($(jget "$OUT" .term_end.signal))"
    t_like "$(jget "$OUT" .bad_native)" "unknown option '--account'" \
        "$C: an unknown native option is refused, naming it"
done

# The jobs ran where the native specification said.
api GET "/v1/jobs?owner=$DRMAA_USER" >/dev/null
t_is "$(py 'sorted({(j["name"], j["cluster"]) for j in d["items"]})' "$BODY")" \
    '[["py-bulk", "local"], ["py-bulk", "slurm"], ["py-exit", "local"], ["py-exit", "slurm"], ["py-hold", "local"], ["py-hold", "slurm"], ["py-paths", "local"], ["py-paths", "slurm"], ["py-term", "local"], ["py-term", "slurm"]]' \
    "each job ran on the cluster its native specification named"

loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
