#!/usr/bin/env bash
# restart-ended.sh - loomd's start with many jobs that ended long ago: the
# time until it answers for the last of them, its peak RSS (VmHWM) and its
# RSS once the ended ones left memory. With BENCH_PEER_BUILDDIR (another
# optimised build, e.g. of an older commit) both are measured in the same
# run, on the same PostgreSQL, in turns, and the table gives their ratios:
# on a machine shared with other work only such ratios compare. Run from
# an optimised build directory:
#   LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD \
#       BENCH_PEER_BUILDDIR=/path/to/other/build bash ../../tests/bench/restart-ended.sh
# BENCH_JOBS (100000) ended jobs, BENCH_ROUNDS (3) starts of each build.
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/restarts.sh"

N=${BENCH_JOBS:-100000}

pg_start || exit 1
loomd_conf <<'EOF'
[scheduler]
job_memory_s = 300
[cluster sim]
adaptor = sim
nodes = 100
cpus_per_node = 32
EOF
loomd_start && loomd_stop || exit 1 # the tables
# N jobs that completed ten minutes to months ago, as loomd writes them
# (an environment of a few variables, as real submits carry), and 100
# that wait, held.
pg_sql "insert into jobs (id, state, owner, doc)
  select g, s, 'bench', json_build_object('id', g::text, 'name', 'bench',
    'owner', 'bench', 'account', null, 'source', 'local',
    'submitted_by', 'bench', 'state', s,
    'request', json_build_object('nodes', 1, 'cpus_per_node', 4,
       'memory_mb', 100, 'gpus', 0, 'walltime_s', 3600, 'features', '[]'::json,
       'cluster', 'sim', 'queue', null, 'reservation', null),
    'command', '[\"/bin/true\"]'::json, 'script', null,
    'env', json_build_object('HOME', '/home/bench', 'PATH', '/usr/bin:/bin',
       'LANG', 'C.UTF-8', 'PROJECT', 'bench-' || (g % 97)::text),
    'workdir', '/home/bench/run', 'priority', 0,
    'cluster', case when s = 'completed' then 'sim' end,
    'native_id', case when s = 'completed' then g::text end,
    'nodes', case when s = 'completed' then '[\"sim1\"]'::json else '[]'::json end,
    'submit_time', '2026-01-01T00:00:00Z',
    'start_time', case when s = 'completed' then '2026-01-01T00:00:00Z' end,
    'end_time', case when s = 'completed'
        then to_char(now() at time zone 'UTC' - interval '10 minutes' - (g || ' s')::interval,
                     'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') end,
    'exit_code', case when s = 'completed' then 0 end,
    'stdout', '/home/bench/run/loom-' || g || '.out',
    'stderr', '/home/bench/run/loom-' || g || '.out',
    'held', s = 'held', 'requeues', 0, 'requeue', true)
  from (select g, case when g <= $N then 'completed' else 'held' end s
        from generate_series(1, $N + 100) g) x" >/dev/null || exit 1
pg_sql "vacuum analyze jobs" >/dev/null
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"

# one_start BUILD: start loomd of BUILD, print "ms hwm_kb rss_kb in_memory".
one_start() {
    restarts_one "$1" "[ \"\$(curl -s -o /dev/null -w '%{http_code}' \
        -H \"\$AUTH\" \"\$LOOM_URL/v1/jobs/$N\")\" = 200 ]" \
        '[ "$(runtime_counter .scheduler.jobs_in_memory)" -le 100 ]' \
        .scheduler.jobs_in_memory
}

restarts_run
