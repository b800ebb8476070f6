#!/usr/bin/env bash
# restart-ended-resv.sh - loomd's start with many reservations and
# maintenance requests that ended long ago: the time until it answers for
# the last of them, its peak RSS (VmHWM) and its RSS once the ended ones
# left memory. As restart-ended.sh (the same for jobs): with
# BENCH_PEER_BUILDDIR (another optimised build, e.g. of an older commit)
# both are measured in the same run, on the same PostgreSQL, in turns, and
# the table gives their ratios. Run from an optimised build directory:
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD \
#       BENCH_PEER_BUILDDIR=/path/to/other/build bash ../../tests/bench/restart-ended-resv.sh
# BENCH_RESV (100000) ended reservations, half of them the windows of as
# many ended maintenance requests; BENCH_ROUNDS (3) starts of each build.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/restarts.sh"

N=${BENCH_RESV:-100000}
M=$((N / 2))

pg_start || exit 1
loomd_conf <<'EOF'
[scheduler]
resv_memory_s = 300
[maintenance]
request_memory_s = 300
[cluster sim]
adaptor = sim
nodes = 100
cpus_per_node = 32
EOF
loomd_start && loomd_stop || exit 1 # the tables
# As loomd writes them: N reservations that ended ten minutes to a day ago
# (the even ones the windows of node-off requests, the odd ones users'),
# M such requests done, and 10 reservations planned for tomorrow.
pg_sql "create function pg_temp.t(s int) returns text language sql as
    \$\$ select to_char(now() at time zone 'UTC' + (s || ' s')::interval,
                        'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') \$\$;
  insert into reservations (id, state, doc)
  select g, s, ('{\"id\":' || to_json(g::text) ||
    ',\"purpose\":' || to_json(case when m then 'maintenance' else 'user' end) ||
    ',\"owner\":\"bench\",\"cluster\":\"sim\",\"nodes\":[' ||
    to_json('sim/sim' || (1 + g % 100)) || '],\"start\":' ||
    to_json(pg_temp.t(e - 3600)) || ',\"end\":' || to_json(pg_temp.t(e)) ||
    ',\"state\":' || to_json(s) || ',\"reason\":' ||
    to_json(case when m then 'loom maintenance ' || g / 2 || ': node-off'
                 else 'bench' end) ||
    case when m then ',\"maintenance\":' || to_json((g / 2)::text) else '' end ||
    ',\"account\":' || case when m then 'null' else '\"bench\"' end ||
    ',\"native\":null,\"native_error\":null}')::json
    from (select g, g % 2 = 0 and g <= $N as m,
            case when g <= $N then 'done' else 'planned' end as s,
            case when g <= $N then -600 - g else 86400 end as e
          from generate_series(1, $N + 10) g) x;
  insert into maintenance (id, state, doc)
  select k, 'done', ('{\"id\":' || to_json(k::text) ||
    ',\"cluster\":\"sim\",\"nodes\":[' || to_json('sim/sim' || (1 + (2 * k) % 100)) ||
    '],\"action\":\"node-off\",\"reason\":\"bench\",\"owner\":\"bench\",' ||
    '\"window\":{\"not_before\":' || to_json(pg_temp.t(e - 7200)) ||
    ',\"deadline\":null,\"duration_s\":3600},\"asap\":false,' ||
    '\"reservation\":' || to_json((2 * k)::text) || ',\"start\":' ||
    to_json(pg_temp.t(e - 3600)) || ',\"end\":' || to_json(pg_temp.t(e)) ||
    ',\"state\":\"done\",\"rule\":null,\"error\":null,\"output\":null,' ||
    '\"action_began\":' || to_json(pg_temp.t(e - 3000)) ||
    ',\"cancelled_jobs\":[],\"history\":[' ||
    '{\"state\":\"planned\",\"time\":' || to_json(pg_temp.t(e - 7200)) || '},' ||
    '{\"state\":\"draining\",\"time\":' || to_json(pg_temp.t(e - 3600)) || '},' ||
    '{\"state\":\"in-progress\",\"time\":' || to_json(pg_temp.t(e - 3000)) || '},' ||
    '{\"state\":\"verifying\",\"time\":' || to_json(pg_temp.t(e - 700)) || '},' ||
    '{\"state\":\"done\",\"time\":' || to_json(pg_temp.t(e)) || '}]}')::json
    from (select k, -600 - 2 * k as e from generate_series(1, $M) k) x" \
    >/dev/null || exit 1
pg_sql "vacuum analyze reservations" >/dev/null
pg_sql "vacuum analyze maintenance" >/dev/null
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"

# answers PATH: 200 for GET PATH?
answers() {
    [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$LOOM_URL$1")" = 200 ]
}
# one_start BUILD: start loomd of BUILD, print "ms hwm_kb rss_kb in_memory".
one_start() {
    restarts_one "$1" \
        "answers /v1/reservations/$N && answers /v1/maintenance/$M" \
        '[ "$(runtime_counter .scheduler.reservations_in_memory)" -le 10 ] &&
         [ "$(runtime_counter .maintenance.in_memory)" = 0 ]' \
        .scheduler.reservations_in_memory
}

restarts_run
