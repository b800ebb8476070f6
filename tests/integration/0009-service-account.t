#!/usr/bin/env bash
# 0009-service-account.t - loomd runs as its own unprivileged account:
# started as root it becomes [loomd] user (loom) for good before it opens
# anything; it refuses a loom.conf that others may read, a state_dir that
# is not its own or that others may enter, and an account that does not
# exist; user = root keeps root and says so; started as loom it stays loom.
# What loomd keeps (loom.conf, state_dir, the key, the log, PostgreSQL's
# socket) is out of another account's reach.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

[ "$(id -u)" = 0 ] || t_bail "this test starts loomd as root"
U=$LOOM_SERVICE_USER
UID_L=$(id -u "$U") && GID_L=$(id -g "$U") ||
    t_bail "no account $U (./bootstrap creates it)"

# fails_with CONF: run loomd on CONF in the foreground; OUT is what it said,
# RC its exit status (124 when it did not end within 60 s).
fails_with() {
    OUT=$(timeout 60 env LOOM_LIBEXECDIR="$LOOM_TOP_BUILDDIR" \
        "$LOOM_TOP_BUILDDIR/loomd" -c "$1" -f </dev/null 2>&1)
    RC=$?
    OUT=$(printf '%s\n' "$OUT" | grep '^loomd: ')
}

# status_field PID NAME: the values of NAME: in /proc/PID/status, with
# one blank between them.
status_field() {
    awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print }' "/proc/$1/status"
}

# as_other CMD...: CMD as an account that is neither root nor loom: the
# test's own, $T_USER (loomd_conf makes it).
as_other() {
    setpriv --reuid="$T_USER" --regid="$T_USER" --clear-groups -- "$@"
}

pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<'EOF'
[cluster local]
adaptor = local
nodes = 1
EOF
loomd_start || t_bail "loomd did not start"
P=$LOOMD_PID

t_is "$(status_field "$P" Uid)" "$UID_L $UID_L $UID_L $UID_L" \
    "started as root, loomd's real, effective, saved and file uid are $U's"
t_is "$(status_field "$P" Gid)" "$GID_L $GID_L $GID_L $GID_L" \
    "... and so are its gids"
t_is "$(status_field "$P" Groups | tr ' ' '\n' | grep . | sort -n | paste -sd' ')" \
    "$(id -G "$U" | tr ' ' '\n' | sort -n | paste -sd' ')" \
    "... its supplementary groups are $U's (initgroups), no longer root's"
t_is "$(status_field "$P" CapPrm) $(status_field "$P" CapEff)" \
    "0000000000000000 0000000000000000" \
    "... it has no capability left, permitted or effective: root is gone for good"
t_like "$(cat "$T/loomd.log")" \
    "info thread=main running as $U \\(uid $UID_L, gid $GID_L\\)" \
    "... and its log says as whom it runs"
t_is "$(stat -c '%U %a' "$T/state" "$T/state/token.key" | paste -sd' ')" \
    "$U 700 $U 600" "the token key it created in its state_dir (0700) is $U's, mode 0600"

admin_token || t_bail "no admin token"
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "as $U it serves the API from its PostgreSQL (socket directory postgres:$U 0750)"

# Another account ($T_USER) reaches none of it.
as_other cat "$T/loom.conf" >/dev/null 2>&1
t_isnt "$?" 0 "another account cannot read loom.conf (it holds the database connection)"
as_other ls "$T/state" >/dev/null 2>&1
t_isnt "$?" 0 "... nor list state_dir"
as_other cat "$T/loomd.log" >/dev/null 2>&1
t_isnt "$?" 0 "... nor read loomd's log"
OUT=$(as_other "$PG_BIN/psql" -X -tA -h "$LOOM_PG_DIR" -U postgres -d loom \
    -c 'SELECT 1' 2>&1)
t_like "$OUT" "Permission denied" "... nor reach PostgreSQL's socket (permission denied)"
as_other kill -0 "$P" 2>/dev/null
t_isnt "$?" 0 "... nor signal loomd"

loomd_stop
t_is "$?" 0 "loomd exits 0 on SIGTERM"

# ---- refusals: one line, exit 1 ---------------------------------------------
chmod 0640 "$T/loom.conf"
fails_with "$T/loom.conf"
t_is "$RC $OUT" "1 loomd: $T/loom.conf may be read or written by group or others (mode 0640), and it holds the database connection; chmod 600 it" \
    "a loom.conf that group may read is refused"
chmod 0600 "$T/loom.conf"

chown root: "$T/loom.conf"
fails_with "$T/loom.conf"
t_is "$RC $OUT" "1 loomd: $T/loom.conf: uid $UID_L that loomd runs as cannot read it (Permission denied), and a reload must; chown it to that account" \
    "a loom.conf that $U cannot read is refused once loomd is $U"
loom_owns "$T/loom.conf"

chmod 0750 "$T/state"
fails_with "$T/loom.conf"
t_is "$RC $OUT" "1 loomd: state_dir $T/state may be entered by group or others (mode 0750); chmod 700 it" \
    "a state_dir that group may enter is refused"
chmod 0700 "$T/state"

chown root: "$T/state"
fails_with "$T/loom.conf"
t_is "$RC $OUT" "1 loomd: state_dir $T/state belongs to uid 0, not to uid $UID_L that loomd runs as; chown it" \
    "a state_dir of another account is refused"
loom_owns "$T/state"

NOSUCH=nosuch-$$
sed "s/^\[loomd\]\$/[loomd]\nuser = $NOSUCH/" "$T/loom.conf" >"$T/nosuch.conf"
chmod 0600 "$T/nosuch.conf"
fails_with "$T/nosuch.conf"
t_is "$RC $OUT" "1 loomd: [loomd] user: there is no account '$NOSUCH' to run as (create it: useradd --system --user-group --no-create-home --shell /usr/sbin/nologin $NOSUCH)" \
    "an account that does not exist is refused, saying how to make it"

# ---- user = root: keeps root, and warns -------------------------------------
mkdir -m 0700 "$T/rootstate"
sed -e "s/^\[loomd\]\$/[loomd]\nuser = root/" \
    -e "s#^state_dir = .*#state_dir = $T/rootstate#" \
    -e "s#^token_key_file = .*#token_key_file = $T/rootstate/token.key#" \
    "$T/loom.conf" >"$T/root.conf"
chmod 0600 "$T/root.conf"
cp "$T/loom.conf" "$T/loom.conf.orig"
cp "$T/root.conf" "$T/loom.conf"
loomd_start || t_bail "loomd with user = root did not start"
t_is "$(status_field "$LOOMD_PID" Uid)" "0 0 0 0" "with user = root loomd keeps root"
t_like "$(cat "$T/loomd.log")" \
    "warning thread=main running as root \\(\\[loomd\\] user = root\\): a flaw in loomd, in a script pack or in a maintenance action has the whole machine" \
    "... and warns about it"
loomd_stop
t_is "$?" 0 "... and exits 0"
cp "$T/loom.conf.orig" "$T/loom.conf"

# ---- started as loom: stays loom; a missing state_dir is made 0700 -----------
mkdir -m 0700 "$T/own"
loom_owns "$T/own"
sed -i -e "s#^state_dir = .*#state_dir = $T/own/new/state#" \
    -e "s#^token_key_file = .*#token_key_file = $T/own/new/state/token.key#" \
    "$T/loom.conf"
: >"$T/loomd.log"
setpriv --reuid="$U" --regid="$U" --init-groups -- env \
    LOOM_LIBEXECDIR="$LOOM_TOP_BUILDDIR" "$LOOM_TOP_BUILDDIR/loomd" \
    -c "$T/loom.conf" -f </dev/null >>"$T/loomd.log" 2>&1 &
LOOMD_PID=$!
wait_for 'curl -sf -o /dev/null --max-time 1 "$LOOM_URL/healthz"' 60
t_ok $? "started as $U, loomd serves"
t_is "$(status_field "$LOOMD_PID" Uid)" "$UID_L $UID_L $UID_L $UID_L" \
    "... as $U"
t_is "$(stat -c '%U %a' "$T/own/new/state")" "$U 700" \
    "... and made its missing state_dir, mode 0700"
t_like "$(cat "$T/loomd.log")" "info thread=main running as $U \\(uid $UID_L," \
    "... and its log says as whom it runs"
t_is "$(grep -c 'warning thread=main running as' "$T/loomd.log")" 0 \
    "... with no warning"
loomd_stop
t_is "$?" 0 "... and exits 0"
t_done
