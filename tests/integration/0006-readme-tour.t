#!/usr/bin/env bash
# 0006-readme-tour.t - the README's five-minute tour, run as written: on
# what ./bootstrap demo sets up (tests/lib/demo.sh), every `$ ` command of
# the tour in order, each output compared with the README's.
# SPDX-License-Identifier: MIT
#
# Before the comparison both sides are normalised, and only in what must
# vary from run to run: RFC 3339 times, the Date header, ages ("3s ago"),
# run times (0:02), loomd's port (shown as 8470), the clone's directory
# (shown as $PWD), the accounts the jobs run as (this test makes its own:
# shown as the demo's, loom-demo and loom-alice, their homes as
# /home/NAME), uptime, cycle and comparison counts and timings, what a
# job used (its usage), and the width of the blanks that align a table.
# Ids, states, nodes, messages and everything else must match. A command that only reads (loomctl's lists,
# show and output, cat, a curl GET) is run again until its output matches,
# for up to 60 s: the README shows the state the fabric reaches, not how
# fast.
# A mismatch prints a diff (-README +loomd).
#
# After a mismatch the fabric is not where the README expects it, so the
# reads that follow wait 5 s only (and may fail in turn): read the first.
# With LOOM_TOUR_OUT=FILE the tour as it ran, commands and outputs, is also
# written to FILE, with the clone's directory as $PWD and the port as
# 8470: what the README's blocks hold, to regenerate them from.
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/demo.sh"

README=$LOOM_TOP_SRCDIR/README.md
[ -x "$LOOM_TOP_BUILDDIR/loomctl" ] || t_bail "loomctl is not built"

# ---- the tour, out of the README ----------------------------------------
# Each `$ ` line of a code block in "## A five-minute tour" is a command
# (with its continuation lines: a trailing backslash, or a here-document up
# to its end word); what follows until the next `$ ` line or the end of the
# block is its output. NNN.cmd and NNN.want in $T/tour; a block without a
# command is an error (every output the tour shows is checked).
mkdir -p "$T/tour"
python3 - "$README" "$T/tour" >"$T/tour.err" 2>&1 <<'PY'
import re, sys

readme, out = sys.argv[1], sys.argv[2]
lines = open(readme, encoding="utf-8").read().split("\n")
try:
    start = lines.index("## A five-minute tour")
except ValueError:
    sys.exit("README.md has no '## A five-minute tour' section")
end = next((i for i in range(start + 1, len(lines))
            if lines[i].startswith("## ")), len(lines))
blocks, block = [], None
for i in range(start + 1, end):
    if lines[i].startswith("```"):
        if block is None:
            block = (i + 1, [])
        else:
            blocks.append(block)
            block = None
    elif block is not None:
        block[1].append(lines[i])
if block is not None:
    sys.exit("README.md:%d: a code block of the tour is not closed" % block[0])
n = 0
for first, body in blocks:
    if not body or not body[0].startswith("$ "):
        sys.exit("README.md:%d: a code block of the tour does not start "
                 "with a `$ ` command" % first)
    i = 0
    while i < len(body):
        cmd = [body[i][2:]]
        i += 1
        heredoc = re.search(r"<<-?\s*'?([A-Za-z_]+)'?", cmd[0])
        while cmd[-1].endswith("\\") and i < len(body):
            cmd.append(body[i])
            i += 1
        if heredoc:
            while i < len(body) and body[i] != heredoc.group(1):
                cmd.append(body[i])
                i += 1
            if i == len(body):
                sys.exit("README.md:%d: the here-document is not ended by "
                         "%s" % (first + i, heredoc.group(1)))
            cmd.append(body[i])
            i += 1
        want = []
        while i < len(body) and not body[i].startswith("$ "):
            want.append(body[i])
            i += 1
        n += 1
        open("%s/%03d.cmd" % (out, n), "w").write("\n".join(cmd) + "\n")
        open("%s/%03d.want" % (out, n), "w").write(
            "".join(w + "\n" for w in want))
if n == 0:
    sys.exit("README.md: the tour has no `$ ` command")
PY
[ $? = 0 ] || t_bail "the tour cannot be read: $(cat "$T/tour.err")"

# ---- the demo ----------------------------------------------------------------
# As ./bootstrap demo: its loom.conf in var/ (the harness starts loomd on
# $T/loom.conf: a link to it), its admin token, its ten jobs. $T stands for
# the top of the clone: the tour's PATH is $PWD/build/release.
pg_start || t_bail "PostgreSQL did not start"
PORT=$(free_port) || t_bail "no free port"
LOOM_URL=http://127.0.0.1:$PORT
mkdir -p "$T/build"
# the accounts of the demo's jobs: the admin token's and loomctl's, alice's
t_account DEMO_ACCOUNT demo
t_account DEMO_ALICE alice
demo_conf_write "$PORT" "$LOOM_PG_CONNINFO" "$T/var" ||
    t_bail "cannot write the demo's loom.conf"
ln -s var/loom.conf "$T/loom.conf"
ln -s "$LOOM_TOP_BUILDDIR" "$T/build/release"
loomd_start || t_bail "loomd did not start"

demo_ctl() {
    "$LOOM_TOP_BUILDDIR/loomctl" -c "$T/var/loom.conf" "$@"
}
demo_submit() {
    demo_ctl submit "$@" >/dev/null
}
demo_admin_token "$T/var/admin.token" demo_ctl
t_ok $? "the demo's admin token"
demo_jobs demo_submit
t_ok $? "the demo's ten jobs are accepted"

# The demo's jobs have ended before the tour begins (the demo waits too).
ended() {
    api GET '/v1/jobs?limit=100' >/dev/null
    [ "$(py 'sum(1 for j in d["items"] if j["state"] in
        ("completed", "failed", "cancelled"))' "$BODY")" = 10 ]
}
TOKEN=$(cat "$T/var/admin.token")
wait_for ended 60
t_ok $? "the demo's ten jobs have ended"
unset -f loomctl # the tour's loomctl is the one in its PATH
unset TOKEN LOOM_URL

# ---- the tour ----------------------------------------------------------------

T_RE=$(printf '%s' "$T" | sed 's/[.[\*^$/]/\\&/g')
# tour_accounts: stdin to stdout with this test's accounts and their homes
# shown as the demo's.
tour_accounts() {
    sed -E -e "s/$T_RE\/home\/$DEMO_ALICE([^a-z0-9-]|$)/\/home\/loom-alice\1/g" \
        -e "s/$T_RE\/home\/$DEMO_ACCOUNT([^a-z0-9-]|$)/\/home\/loom-demo\1/g" \
        -e "s/$DEMO_ALICE/loom-alice/g" -e "s/$DEMO_ACCOUNT/loom-demo/g"
}

# tour_norm: stdin to stdout with what may vary replaced (see the top).
tour_norm() {
    tour_accounts | sed -E \
        -e 's/\r$//' \
        -e "s/127\\.0\\.0\\.1:$PORT([^0-9]|$)/127.0.0.1:8470\\1/g" \
        -e "s/$T_RE/\$PWD/g" \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/<time>/g' \
        -e 's/^Date: .*/Date: <date>/' \
        -e 's/(^| )[0-9]+[smhd] ago( |$)/\1<age>\2/g' \
        -e 's/(^| )([0-9]+-)?([0-9]+:)?[0-9]+:[0-9]{2}( |$)/\1<runtime>\4/g' \
        -e 's/"(uptime_s|count|compares|jobs_in_memory|jobs_evicted|reservations_in_memory|reservations_evicted)":[0-9]+/"\1":<n>/g' \
        -e 's/"identity":"[^"]*"/"identity":"<host:pid:nonce>"/g' \
        -e 's/"([a-z_]*_ms|compare_ms_[a-z]+|build|plan|apply)":[0-9.e+-]+/"\1":<ms>/g' \
        -e 's/"max_rss_kb":[0-9]+/"max_rss_kb":<kb>/g' \
        -e 's/^(usage\.[a-z_]+: +)[0-9]+$/\1<n>/' \
        -e 's/ +/ /g'
}

# tour_is_read CMD: the command only reads, so it may run again.
tour_is_read() {
    local first=${1%%$'\n'*}
    [[ $first =~ ^loomctl\ (clusters|nodes|queues|jobs|show|reservations|diff|status|output)(\ |$) ]] && return 0
    [[ $first =~ ^loomctl\ maintenance(\ list)?(\ --[a-z]|\ \||$) ]] && return 0
    [[ $first =~ ^cat\  ]] && return 0
    [[ $first =~ ^curl\  ]] && ! [[ $1 =~ \ (-d|-X|--data)\  ]] && return 0
    return 1
}

# tour_run CMD: run CMD in this shell (the tour's exports and variables
# carry on to the next command); GOT is its output, normalised.
tour_run() {
    eval "$1" >"$T/tour.got" 2>&1 </dev/null
    GOT=$(tour_norm <"$T/tour.got")
}

if [ -n "${LOOM_TOUR_OUT:-}" ]; then
    : >"$LOOM_TOUR_OUT" || t_bail "cannot write $LOOM_TOUR_OUT"
fi
# A read waits up to LIMIT s for the README's answer. The tour's
# maintenance window is 30 s and the README shows it in progress: on a
# loaded machine the commands before that read may take longer than the
# window, so the test asks for 120 s (its times are normalised) and waits
# long enough for it to end.
LIMIT=180
for cmdf in "$T"/tour/*.cmd; do
    cmd=$(<"$cmdf")
    cmd=${cmd//127.0.0.1:8470/127.0.0.1:$PORT}
    cmd=${cmd//--duration 30 /--duration 120 }
    WANT=$(tour_norm <"${cmdf%.cmd}.want")
    if tour_is_read "$cmd"; then
        wait_for 'tour_run "$cmd"; [ "$GOT" = "$WANT" ]' "$LIMIT" 0.5
    else
        tour_run "$cmd"
    fi
    if [ -n "${LOOM_TOUR_OUT:-}" ]; then
        printf '$ %s\n' "$(<"$cmdf")" >>"$LOOM_TOUR_OUT"
        tour_accounts <"$T/tour.got" | sed -E -e 's/\r$//' -e "s/$T_RE/\$PWD/g" \
            -e "s/127\\.0\\.0\\.1:$PORT([^0-9]|$)/127.0.0.1:8470\\1/g" \
            -e '$a\' >>"$LOOM_TOUR_OUT"
    fi
    name="\$ ${cmd%%$'\n'*}"
    if [ "$GOT" = "$WANT" ]; then
        t_ok 0 "$name"
    else
        t_ok 1 "$name"
        t_diag "$(diff -u --label README --label loomd \
            <(printf '%s\n' "$WANT") <(printf '%s\n' "$GOT"))"
        LIMIT=5 # the fabric is not where the README is: do not wait long
    fi
done

t_done
