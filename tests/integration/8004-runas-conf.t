#!/usr/bin/env bash
# 8004-runas-conf.t - loom-runas's own policy, runas.conf (root's): the
# keys it takes (min_uid, allow_root_jobs with the words loom.conf takes
# for it) are honoured, and a line it cannot read, an unknown key or a bad
# value is refused with file:line, so that nothing there is silently
# ignored. The loom-runas of this test reads its file from the build tree
# (tests/integration/runas_policy), not the one other tests rely on.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

[ "$(id -u)" = 0 ] || t_bail "runas.conf must be root's: run this test as root"
RUNAS=$LOOM_TOP_BUILDDIR/tests/integration/runas_policy
ETC=$LOOM_TOP_BUILDDIR/tests/runas-etc
CONF=$ETC/loom/runas.conf
[ -x "$RUNAS" ] || t_bail "no $RUNAS (make check builds it)"
mkdir -p "$ETC/loom" && chmod 0755 "$ETC" "$ETC/loom" || t_bail "cannot make $ETC/loom"
rm -f "$CONF"
t_account ALICE alice
ALICE_UID=$(id -u "$ALICE")

# conf TEXT: runas.conf holds TEXT (root's, 0644).
conf() {
    printf '%s\n' "$1" >"$CONF" && chmod 0644 "$CONF"
}
# as ACCOUNT: OUT is what `loom-runas run ACCOUNT -- id -u` said (both
# streams), RC its status.
as() {
    OUT=$("$RUNAS" run "$1" -- /usr/bin/id -u 2>&1)
    RC=$?
}

as "$ALICE"
t_is "$RC $OUT" "0 $ALICE_UID" "without runas.conf, $ALICE runs"
as root
t_is "$RC $OUT" "1 loom-runas: account root is root: root may not run jobs (allow_root_jobs is not set in $ETC/loom/runas.conf)" \
    "... and root does not"

conf "# the policy
min_uid = 1000

  allow_root_jobs = yes"
as root
t_is "$RC $OUT" "0 0" "allow_root_jobs = yes (as loom.conf says it) lets root run"
conf "min_uid = $((ALICE_UID + 1))"
as "$ALICE"
t_is "$RC $OUT" "1 loom-runas: account $ALICE has uid $ALICE_UID, below min_uid $((ALICE_UID + 1)): system accounts may not run jobs" \
    "min_uid is honoured"

# refused: each line names the file, the line and what is wrong
refused() {
    conf "$1"
    as "$ALICE"
    t_is "$RC $OUT" "1 loom-runas: $CONF:$2" "$3"
}
refused "allow_root_jobs = maybe" "1: allow_root_jobs must be yes or no, not 'maybe'" \
    "allow_root_jobs of another word is refused (it was taken for no)"
refused "# min_uid
min_uid = none" "2: min_uid must be a uid, not 'none'" \
    "a min_uid that is not a number is refused (it was taken for 0: every system account)"
refused "min_uid = -1" "1: min_uid must be a uid, not '-1'" "a negative min_uid is refused"
refused "min_uid = 500 600" "1: expected KEY = VALUE (min_uid, allow_root_jobs)" \
    "a line with more than KEY = VALUE is refused"
refused "min-uid = 500" "1: expected KEY = VALUE (min_uid, allow_root_jobs)" \
    "a line that is not KEY = VALUE is refused (it was skipped)"
refused "max_uid = 5" "1: unknown key 'max_uid' (known: min_uid, allow_root_jobs)" \
    "an unknown key is refused (it was skipped)"

rm -rf "$ETC"
t_done
