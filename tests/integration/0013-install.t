#!/usr/bin/env bash
# 0013-install.t - make install into a temporary root (DESTDIR) puts every
# piece where it belongs: loomd, loomctl, loom-supervise, loom-runas
# (setuid root, group loom, mode 4750), the packs, the man pages, the
# systemd unit (Type=notify, as loom, with this build's paths), the example
# configuration, the Grafana dashboard, the OpenAPI document and the web
# dashboard's files; then the installed loomd runs as the service account
# loom, on a loom.conf made from the installed example, against a private
# PostgreSQL, serves the installed dashboard, and the installed loomctl,
# as loom too, runs a job through it.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

# make as if from a shell: not with the flags and variables of the make
# check that runs this test (TESTS=..., -w, the jobserver)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

[ "$(id -u)" = 0 ] || t_bail "this test installs loom-runas setuid root: run it as root"
getent passwd loom >/dev/null || t_bail "no account loom (the service account)"

ROOT=$T/root
mk -s -C "$LOOM_TOP_BUILDDIR" install DESTDIR="$ROOT" >"$T/install.out" 2>&1
t_is $? 0 "make install DESTDIR=$ROOT" || t_bail "make install failed: $(tail -n 30 "$T/install.out")"

# The directories of this build (configure's), as make sees them.
dir() {
    printf 'print:\n\t@echo $(%s)\n' "$1" |
        mk -s -C "$LOOM_TOP_BUILDDIR" -f Makefile -f - print
}
SBIN=$(dir sbindir) BIN=$(dir bindir) LIBEXEC=$(dir pkglibexecdir)
DATA=$(dir pkgdatadir) DOC=$(dir docdir) MAN=$(dir mandir)
SYSCONF=$(dir sysconfdir) UNITDIR=$(dir systemdsystemunitdir)

for f in "$SBIN/loomd" "$BIN/loomctl" "$LIBEXEC/loom-supervise"; do
    [ -x "$ROOT$f" ]
    t_ok $? "installed: $f"
done
for c in sbatch squeue scancel scontrol sinfo sacct sacctmgr srun; do
    [ -x "$ROOT$LIBEXEC/slurm/$c" ] &&
        [ "$(readlink "$ROOT$LIBEXEC/slurm/$c")" = ../loom-slurm ]
    t_ok $? "installed: $LIBEXEC/slurm/$c, a link to loom-slurm"
done
t_is "$(stat -c '%a %U %G' "$ROOT$LIBEXEC/loom-runas")" "4750 root loom" \
    "installed: $LIBEXEC/loom-runas, setuid root, group loom, mode 4750"
for f in "$MAN/man8/loomd.8" "$MAN/man1/loomctl.1" "$MAN/man1/loom-slurm.1" \
    "$MAN/man5/loom.conf.5" \
    "$DOC/examples/loom.conf.example" "$DOC/examples/accounts.example" \
    "$DOC/examples/remote-only.conf" "$DOC/grafana-dashboard.json" \
    "$DOC/openapi.json" "$UNITDIR/loomd.service" \
    "$DATA/scripts/slurm/pack.json" "$DATA/scripts/gridengine/jobs" \
    "$DATA/scripts/pbs/jobs" "$DATA/scripts/lsf/jobs" "$DATA/scripts/condor/jobs" \
    "$DATA/sql/0001_init.sql" "$DATA/web/index.html" "$DATA/web/app.js"; do
    [ -s "$ROOT$f" ]
    t_ok $? "installed: $f"
done
[ -x "$ROOT$DATA/scripts/slurm/jobs" ]
t_ok $? "a pack's operations are executable"

# ---- the systemd unit --------------------------------------------------------
U=$ROOT$UNITDIR/loomd.service
unit() { sed -n "s/^$1=//p" "$U"; }
t_is "$(unit ExecStart)" "$SBIN/loomd -f -c $SYSCONF/loom/loom.conf" \
    "the unit starts the installed loomd in the foreground, on the installed loom.conf"
t_is "$(unit Type)/$(unit NotifyAccess)" notify/main "Type=notify (loomd sends READY=1 itself)"
t_is "$(unit User)/$(unit Group)" loom/loom "it runs as loom"
t_is "$(unit Delegate)/$(unit KillMode)" yes/process \
    "Delegate=yes for the jobs' cgroups, KillMode=process: jobs outlive a restart"
t_is "$(unit ExecReload)" '/bin/kill -HUP $MAINPID' "a reload is SIGHUP"
t_is "$(grep -cE '^(NoNewPrivileges|ProtectHome|PrivateTmp|RestrictSUIDSGID)=' "$U")" 0 \
    "no option that breaks the setuid loom-runas or the jobs in homes"
t_is "$(grep -c '@' "$U")" 0 "every @...@ of the template is filled in"

# ---- the installed loomd as loom ---------------------------------------------
pg_start || t_bail "PostgreSQL did not start"
chmod 0755 "$LOOM_PG_DIR" # loom reaches the socket in it
PORT=$(free_port)
LOOM_URL=http://127.0.0.1:$PORT
mkdir -p "$T/etc" "$T/var" "$T/jobs"
install -d -o loom -g loom -m 0700 "$T/var/loom"
chmod 1777 "$T/jobs"
# the first line that matches wins: loomctl's and admin's jobs run as an
# account of this run, ahead of the example's lines
t_account T_USER user
printf 'LOOM loomctl %s\nLOOM admin %s\n' "$T_USER" "$T_USER" >"$T/etc/accounts"
cat "$ROOT$DOC/examples/accounts.example" >>"$T/etc/accounts"
sed -e "s|^listen = .*|listen = 127.0.0.1:$PORT|" \
    -e "s|^database = .*|database = $LOOM_PG_CONNINFO|" \
    -e "s|^state_dir = .*|state_dir = $T/var/loom|" \
    -e "s|^accounts_file = .*|accounts_file = $T/etc/accounts|" \
    "$ROOT$DOC/examples/loom.conf.example" >"$T/etc/loom.conf"
# loom.conf holds the database connection: loom's, mode 0600, as the
# operator guide installs it
chown loom:loom "$T/etc/loom.conf"
chmod 0600 "$T/etc/loom.conf"
chmod 0644 "$T/etc/accounts"
t_is "$(grep -cE "^(listen = 127.0.0.1:$PORT|state_dir = $T/var/loom)$" "$T/etc/loom.conf")" 2 \
    "a loom.conf made from the installed example"

# as loom, with the installed helpers and packs (they are not where this
# build's paths say: DESTDIR is a staging root)
AS_LOOM=(setpriv --reuid=loom --regid=loom --init-groups --reset-env --
    env PATH=/usr/bin:/bin LOOM_LIBEXECDIR="$ROOT$LIBEXEC"
    LOOM_SCRIPTS_DIR="$ROOT$DATA/scripts" LOOM_WEB_DIR="$ROOT$DATA/web")
as_loom() { "${AS_LOOM[@]}" "$@"; }
(exec "${AS_LOOM[@]}" "$ROOT$SBIN/loomd" -f -c "$T/etc/loom.conf" \
    </dev/null >>"$T/loomd.log" 2>&1) &
LOOMD_PID=$!
wait_for 'curl -sf -o /dev/null --max-time 1 "$LOOM_URL/healthz"' 60
t_ok $? "the installed loomd serves" || t_bail "it did not: $(tail -n 20 "$T/loomd.log")"
t_is "$(awk '/^Uid:/ {print $2}' "/proc/$LOOMD_PID/status")" "$(id -u loom)" \
    "... as loom"
t_is "$(stat -c %U "$T/var/loom/token.key")" loom "its key was made, loom's"

lctl() { as_loom "$ROOT$BIN/loomctl" -c "$T/etc/loom.conf" "$@"; }
t_like "$(lctl clusters 2>&1)" $'\nlocal +local +up ' "the installed loomctl, as loom: loomctl clusters"
J=$(cd "$T/jobs" && lctl submit --chdir "$T/jobs" --name hello -- \
    /bin/sh -c 'echo hello from the installed loom, as $(id -un)' 2>&1)
t_like "$J" '^[0-9]+$' "loomctl submit: job $J"
wait_for '[ "$(lctl show job "$J" 2>/dev/null | awk "/^state:/ {print \$2}")" = completed ]' 60
t_ok $? "the job completed (run through the installed loom-runas)" ||
    t_diag "$(lctl show job "$J" 2>&1 | grep -E '^(state|reason)')" "$(tail -n 20 "$T/loomd.log")"
t_is "$(lctl output "$J" 2>&1)" "hello from the installed loom, as $T_USER" \
    "loomctl output: what it wrote, as $T_USER"
t_is "$(lctl show job "$J" | awk '/^account:/ {print $2}')" "$T_USER" \
    "... the job's account, as the accounts file maps loomctl"

TOKEN=$(lctl token create --subject admin --role admin --ttl 600)
api GET /v1/clusters >/dev/null
t_is "$STATUS" 200 "an admin token made by the installed loomctl is taken"
curl -s "$LOOM_URL/metrics" | grep -q '^loom_jobs{state="completed",cluster="local",source="local",account="'"$T_USER"'"} 1$'
t_ok $? "/metrics counts the job"
STATUS=$(curl -s -o "$T/index.html" -w '%{http_code}' "$LOOM_URL/")
t_is "$STATUS" 200 "the installed dashboard is served at /"
cmp -s "$T/index.html" "$ROOT$DATA/web/index.html"
t_ok $? "... its installed index.html"

loomd_stop
t_is $? 0 "the installed loomd stops with status 0"

mk -s -C "$LOOM_TOP_BUILDDIR" uninstall DESTDIR="$ROOT" >"$T/uninstall.out" 2>&1
t_is $? 0 "make uninstall DESTDIR=$ROOT"
t_is "$(find "$ROOT" \( -type f -o -type l \) | sed "s|^$ROOT||" | head -n 5)" "" \
    "... leaves no file or link behind"
t_done
