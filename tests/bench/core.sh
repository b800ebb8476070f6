#!/usr/bin/env bash
# core.sh - benchmarks of the core: read path beside a bare libmicrohttpd
# server, node and job lists, durable submits, restart time and memory.
# Durable submits and restarts depend on the machine's disk (fsync) more
# than on Loom, so the same run also measures, on the same PostgreSQL with
# the same settings, what PostgreSQL itself does: pgbench's commit rate of
# one-row and of 100-row insert transactions into a copy of the jobs table
# (8 clients), and the time to read the restart's rows out with COPY; the
# last table gives Loom's figures as ratios to those, which compare across
# machines. On a machine shared with other work the disk's flushes and the
# CPU come and go from one second to the next: durable submits are
# measured in rounds, each a few seconds of pgbench's one-row transactions
# then as many of Loom's submits, and the ratio is of their sums (each
# round's figures are printed too). Two rows say what this machine leaves
# room for: the rows a second of 8-row transactions from one client (a
# server that answered 8 clients, each after the commit that carries its
# job, and cost nothing itself could do no better), and the CPU time each
# process spends per submit beside what all the cores allow a submit at
# 1.5 x pgbench's rate. Run from an optimised build directory:
#   make bench && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/core.sh
# BENCH_WRITE_ONLY=1 runs pgbench and the durable submits alone.
# Needs wrk (Debian package wrk; installed when missing and running as root)
# and pgbench (beside the PostgreSQL server binaries, or in PATH).
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

READ_S=${BENCH_READ_S:-10}
WRITE_S=${BENCH_WRITE_S:-30}
PGBENCH_S=${BENCH_PGBENCH_S:-15}
ROUNDS=${BENCH_ROUNDS:-3} # of WRITE_S / ROUNDS seconds each: pgbench, Loom
CLIENTS=8

if ! command -v wrk >/dev/null; then
    [ "$(id -u)" = 0 ] || { echo "core.sh: needs wrk" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null ||
        { echo "core.sh: cannot install wrk" >&2; exit 1; }
fi

ROWS=()
row() { ROWS+=("$(printf '%-52s %14s %12s %12s' "$@")"); }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# with_cpu FILE CMD...: run CMD; the CPU time it used (user and system,
# microseconds) goes to FILE.
with_cpu() {
    local f=$1
    shift
    (
        "$@"
        rc=$?
        times >"$f.times" # not in a pipe: a pipe's part is a shell of its own
        awk 'function us(v, a) { split(v, a, /[ms]/); return (a[1] * 60 + a[2]) * 1e6 }
             NR == 2 { printf "%.0f\n", us($1) + us($2) }' "$f.times" >"$f"
        exit $rc
    )
}
# cpu_us PID...: the CPU time (microseconds) the processes PID and the
# children they reaped have used so far.
cpu_us() {
    local p
    for p in "$@"; do
        sed 's/.*) //' "/proc/$p/stat" 2>/dev/null
    done | awk -v hz="$(getconf CLK_TCK)" '{ t += $12 + $13 + $14 + $15 }
                                           END { printf "%.0f\n", t * 1e6 / hz }'
}
# pg_cpu: cpu_us of PostgreSQL's postmaster and its processes.
pg_cpu() {
    cpu_us "$LOOM_PG_PID" $(pgrep -P "$LOOM_PG_PID")
}

# wrk_run ARGS...: run wrk, print "req/s p50_ms p99_ms non2xx".
wrk_run() {
    with_cpu "$T/wrk.cpu" wrk --latency "$@" >"$T/wrk.out" 2>&1
    awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0;
                     if (v ~ /s$/) return v * 1000; return v }
    /Requests\/sec/ { rps = $2 }
    $1 == "50%" { p50 = ms($2) }
    $1 == "99%" { p99 = ms($2) }
    /Non-2xx/ { bad = $NF }
    END { printf "%.0f %.2f %.2f %d\n", rps, p50, p99, bad + 0 }' "$T/wrk.out"
}

durable_pg() {
    pg_start || exit 1
    # The harness's PostgreSQL trades durability for speed; the write
    # benchmark must measure real commits.
    printf 'fsync = on\nsynchronous_commit = on\nfull_page_writes = on\n' \
        >>"$LOOM_PG_DIR/data/postgresql.conf"
    pg_stop && pg_restart_same || exit 1
}

durable_pg
PGBENCH=$PG_BIN/pgbench
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench) ||
    { echo "core.sh: needs pgbench (PostgreSQL's server package)" >&2; exit 1; }
loomd_conf <<'EOF2'
[cluster local]
adaptor = local
nodes = 4
[cluster sim1000]
adaptor = sim
nodes = 1000
cpus_per_node = 32
speed = 1
EOF2
loomd_start || exit 1
admin_token || exit 1
AUTH="Authorization: Bearer $TOKEN"

# ---- PostgreSQL's own commit rate -------------------------------------------
# pgbench_run FILE [SECONDS [CLIENTS]]: run the pgbench script FILE for
# SECONDS (PGBENCH_S) from CLIENTS (8) clients; print its transactions per
# second. The CPU time of pgbench itself goes to $T/pgbench.cpu.
pgbench_run() {
    local c=${3:-$CLIENTS}
    with_cpu "$T/pgbench.cpu" "$PGBENCH" -n -c "$c" -j "$((c < 2 ? c : 2))" \
        -T "${2:-$PGBENCH_S}" -f "$1" \
        -h "$LOOM_PG_DIR" -U postgres loom >"$T/pgbench.out" 2>&1 ||
        { cat "$T/pgbench.out" >&2; exit 1; }
    awk '/^tps = / { printf "%.0f\n", $3; exit }' "$T/pgbench.out"
}

# A table like jobs (its columns and indexes, loomd's migrations made it),
# rows like a submit's: a job document of the size loomd writes.
pg_sql "CREATE TABLE bench_jobs (LIKE jobs INCLUDING ALL);
        CREATE SEQUENCE bench_ids" >/dev/null || exit 1
DOC='{"id":"1","name":"job","owner":"admin","source":"local","state":"pending","request":{"nodes":1,"cpus_per_node":1,"memory_mb":100,"gpus":0,"walltime_s":3600,"features":[],"cluster":"sim1000","queue":null,"reservation":null},"command":["true"],"script":null,"env":{"LOOM_SIM_RUNTIME_S":"1"},"priority":0,"cluster":null,"native_id":null,"nodes":[],"submit_time":"2026-11-26T10:00:00Z","start_time":null,"end_time":null,"exit_code":null,"reason":null,"planned_start":null,"planned_cluster":null,"queue_position":null,"priority_factors":null,"stdout":null,"stderr":null,"requeues":0,"held_for_loom":false}'
echo "INSERT INTO bench_jobs (id, state, owner, doc) VALUES (nextval('bench_ids'), 'pending', 'admin', '$DOC');" >"$T/one.sql"
echo "INSERT INTO bench_jobs (id, state, owner, doc) SELECT nextval('bench_ids'), 'pending', 'admin', '$DOC' FROM generate_series(1, 100);" >"$T/hundred.sql"
echo "INSERT INTO bench_jobs (id, state, owner, doc) SELECT nextval('bench_ids'), 'pending', 'admin', '$DOC' FROM generate_series(1, $CLIENTS);" >"$T/batch.sql"
pg_one=$(pgbench_run "$T/one.sql")
pg_hundred=$(pgbench_run "$T/hundred.sql")
# The most a server that answers each of 8 clients after a commit that
# carries its job could do if nothing but PostgreSQL cost any time: each
# commit carries all 8 clients' rows, one commit at a time.
pg_batch=$(pgbench_run "$T/batch.sql" "" 1)
# The 100-row inserts leave PostgreSQL a checkpoint of some gigabytes to
# finish, whose flushes would hold up the commits measured next.
pg_sql "CHECKPOINT" >/dev/null
row "pgbench 1-row insert transactions (8 clients)" "$pg_one tx/s" "" ""
row "pgbench 100-row insert transactions (8 clients)" "$pg_hundred tx/s" "$((pg_hundred * 100)) rows/s" ""
row "pgbench $CLIENTS-row insert transactions (1 client)" "$pg_batch tx/s" "$((pg_batch * CLIENTS)) rows/s" ""
row "  its rows / pgbench 1-row (8 clients)" "$(ratio "$((pg_batch * CLIENTS))" "$pg_one")" "" ""

if [ -z "${BENCH_WRITE_ONLY:-}" ]; then
# ---- read path --------------------------------------------------------------
api POST /v1/jobs '{"command":["sleep","600"],"request":{"cluster":"sim1000"}}' >/dev/null
BARE_PORT=$(free_port)
"$LOOM_TOP_BUILDDIR/tests/bench/http_bare" "$BARE_PORT" &
BARE_PID=$!
t_cleanup "kill $BARE_PID"
sleep 0.3
read -r b_rps b_p50 b_p99 _ < <(wrk_run -t2 -c$CLIENTS -d${READ_S}s "http://127.0.0.1:$BARE_PORT/")
read -r l_rps l_p50 l_p99 l_bad < <(wrk_run -t2 -c$CLIENTS -d${READ_S}s -H "$AUTH" "$LOOM_URL/v1/jobs/1")
row "GET bare MHD 200-byte JSON (8 clients)" "$b_rps req/s" "p50 $b_p50" "p99 $b_p99"
row "GET /v1/jobs/{id} (8 clients)" "$l_rps req/s" "p50 $l_p50" "p99 $l_p99"
row "  loomd / bare" "$(awk -v a="$l_rps" -v b="$b_rps" 'BEGIN{printf "%.0f %%", 100*a/b}')" "target" ">= 90 %"
read -r n_rps n_p50 n_p99 _ < <(wrk_run -t1 -c1 -d5s -H "$AUTH" "$LOOM_URL/v1/nodes?cluster=sim1000")
row "GET /v1/nodes, 1,000 nodes (1 client)" "$n_rps req/s" "p50 $n_p50" "p99 $n_p99"
fi

# ---- write path ---------------------------------------------------------------
# wakes [NAME]: the times loomd's threads named NAME (all of them without
# NAME) have gone to sleep so far (their voluntary context switches, each
# one a wake later): a wake on a loaded machine waits for a CPU.
wakes() {
    local f n sum=0
    for f in /proc/"$LOOMD_PID"/task/*; do
        [ -z "${1:-}" ] || [ "$(cat "$f/comm" 2>/dev/null)" = "$1" ] || continue
        n=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$f/status" 2>/dev/null)
        sum=$((sum + ${n:-0}))
    done
    echo "$sum"
}
# write_run RUNTIME_S: durable submits of sim jobs that run RUNTIME_S
# seconds, in ROUNDS rounds, each pgbench's one-row transactions for
# WRITE_S / ROUNDS seconds and then Loom's submits as long; the table's
# rows. sim1000's 32,000 cpus take 32,000 jobs/s of 1 s, so the first run
# measures the write path alone. At 5 s they take 6,400/s: a write rate
# near that fills the cluster, jobs queue and start in waves, and the
# second run shows the write path beside a saturated scheduler. Sets
# W_RPS and W_PG (the sums' rates), W_P50 (the rounds' median p50) and
# W_P99 (their largest p99).
write_run() {
    local before after w_rps w_p50 w_p99 w_bad pg r s=$((WRITE_S / ROUNDS))
    local sum_w=0 sum_pg=0 bad=0 p50s=() p99=0 w0 s0 wk=0 sk=0 c0 tx=0
    local f0 f1 fl=0 fp=0 n_pg=0 p0 l0 cpu_pg=0 cpu_pgb=0 cpu_loomd=0
    local cpu_pgl=0 cpu_wrk=0 k0 ck
    cat >"$T/post.lua" <<EOF2
wrk.method = "POST"
wrk.body = '{"command":["true"],"request":{"cluster":"sim1000"},"env":{"LOOM_SIM_RUNTIME_S":"$1"}}'
wrk.headers["Content-Type"] = "application/json"
EOF2
    before=$(pg_sql "select count(*) from jobs")
    for ((r = 1; r <= ROUNDS; r++)); do
        f0=$(wal_syncs) p0=$(pg_cpu)
        pg=$(pgbench_run "$T/one.sql" "$s")
        cpu_pg=$((cpu_pg + $(pg_cpu) - p0)) cpu_pgb=$((cpu_pgb + $(cat "$T/pgbench.cpu")))
        f1=$(wal_syncs)
        fp=$((fp + f1 - f0)) n_pg=$((n_pg + $(awk '/number of transactions actually processed/ { print $NF }' "$T/pgbench.out")))
        w0=$(wakes) s0=$(wakes loom-sched) c0=$(commits)
        p0=$(pg_cpu) l0=$(cpu_us "$LOOMD_PID") k0=$(checkpoints)
        wrk_run -t2 -c$CLIENTS -d${s}s -H "$AUTH" -s "$T/post.lua" "$LOOM_URL/v1/jobs" >"$T/wrk.row"
        read -r w_rps w_p50 w_p99 w_bad <"$T/wrk.row"
        cpu_loomd=$((cpu_loomd + $(cpu_us "$LOOMD_PID") - l0))
        cpu_pgl=$((cpu_pgl + $(pg_cpu) - p0)) cpu_wrk=$((cpu_wrk + $(cat "$T/wrk.cpu")))
        wk=$((wk + $(wakes) - w0)) sk=$((sk + $(wakes loom-sched) - s0))
        tx=$((tx + $(commits) - c0))
        fl=$((fl + $(wal_syncs) - f1))
        ck=
        [ "$(checkpoints)" = "$k0" ] || ck=", checkpoint"
        row "  round $r: POST /v1/jobs | pgbench 1-row (${s} s each$ck)" \
            "$w_rps | $pg" "p50 $w_p50" "p99 $w_p99"
        sum_w=$((sum_w + w_rps))
        sum_pg=$((sum_pg + pg))
        bad=$((bad + w_bad))
        p50s+=("$w_p50")
        p99=$(awk -v a="$p99" -v b="$w_p99" 'BEGIN { print (b > a ? b : a) }')
    done
    after=$(pg_sql "select count(*) from jobs")
    W_RPS=$((sum_w / ROUNDS))
    W_PG=$((sum_pg / ROUNDS))
    W_P50=$(printf '%s\n' "${p50s[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    W_P99=$p99
    row "POST /v1/jobs durable, $1 s jobs (8 clients, ${WRITE_S} s)" "$W_RPS jobs/s" "p50 $W_P50" "p99 $W_P99"
    row "  pgbench 1-row, in the same rounds" "$W_PG tx/s" "Loom / it" "$(ratio "$W_RPS" "$W_PG")"
    row "  rows committed / non-2xx answers" "$((after - before))" "$bad" ""
    row "  wakes per submit: loom-sched / all of loomd" \
        "$(ratio "$sk" "$((after - before))")" \
        "$(ratio "$wk" "$((after - before))")" ""
    row "  PostgreSQL transactions per submit" \
        "$(ratio "$tx" "$((after - before))")" "" ""
    row "  WAL flushes per submit / per pgbench tx" \
        "$(ratio "$fl" "$((after - before))")" "$(ratio "$fp" "$n_pg")" ""
    # CPU, the machine's limit: at 1.5 x pgbench's rate a submit may cost
    # the machine's cores' time divided by that rate, all processes
    # together (loomd's includes its jobs' scheduling, start and end).
    row "  CPU us per submit: loomd / PostgreSQL / wrk" \
        "$(ratio "$cpu_loomd" "$((after - before))")" \
        "$(ratio "$cpu_pgl" "$((after - before))")" \
        "$(ratio "$cpu_wrk" "$((after - before))")"
    row "  CPU us per pgbench tx: PostgreSQL / pgbench" \
        "$(ratio "$cpu_pg" "$n_pg")" "$(ratio "$cpu_pgb" "$n_pg")" ""
    row "  CPU us per submit at 1.5 x pgbench ($(nproc) cores)" \
        "$(awk -v c="$(nproc)" -v r="$W_PG" 'BEGIN { printf "%.0f", c * 1e6 / (1.5 * r) }')" "" ""
}
# commits: loomd's transactions of job changes so far (loom_db_commit_jobs).
commits() {
    curl -s "$LOOM_URL/metrics" |
        awk '$1 == "loom_db_commit_jobs_count" { print $2 + 0; f = 1 }
             END { if (!f) print 0 }'
}
# checkpoints: PostgreSQL's checkpoints so far (each one's flushes may hold
# up the commits beside it: a round with one says so).
checkpoints() {
    pg_sql "select checkpoints_timed + checkpoints_req from pg_stat_bgwriter"
}
# wal_syncs: PostgreSQL's flushes of its WAL to disk so far (each carries
# the commits that wait for it); a second first, for the backends to report.
wal_syncs() {
    sleep 1.5
    pg_sql "select wal_sync from pg_stat_wal"
}
write_run 1
loom_submits=$W_RPS
pg_beside=$W_PG
row "  target" ">= 1.5 x pgbench" "" "p99 < 15"
sleep 2 # the last jobs end
write_run 5
pg_sql "DROP TABLE bench_jobs; DROP SEQUENCE bench_ids; CHECKPOINT" >/dev/null

if [ -z "${BENCH_WRITE_ONLY:-}" ]; then
# ---- job list ---------------------------------------------------------------------
read -r j_rps j_p50 j_p99 _ < <(wrk_run -t1 -c1 -d5s -H "$AUTH" "$LOOM_URL/v1/jobs?limit=10000")
row "GET /v1/jobs, 10,000 per page (1 client)" "$j_rps req/s" "p50 $j_p50" "p99 $j_p99"
loomd_stop

# ---- restart with 50,000 unfinished and 100,000 finished jobs -----------------------
pg_sql "delete from jobs" >/dev/null
pg_sql "insert into jobs (id, state, owner, doc)
  select g, s, 'bench', jsonb_build_object('id', g::text, 'name', 'bench',
    'owner', 'bench', 'source', 'local', 'state', s,
    'request', jsonb_build_object('nodes', 1, 'cpus_per_node', 1,
       'memory_mb', 100, 'gpus', 0, 'walltime_s', 3600, 'features', '[]'::jsonb,
       'cluster', 'sim10k', 'queue', null),
    'command', '[\"true\"]'::jsonb, 'script', null,
    'env', jsonb_build_object('LOOM_SIM_RUNTIME_S', '3600'), 'priority', 0,
    'cluster', null, 'native_id', null, 'nodes', '[]'::jsonb,
    'submit_time', '2026-11-21T20:00:00Z', 'start_time', null,
    'end_time', null, 'exit_code', case when s = 'completed' then 0 end,
    'reason', null, 'planned_start', null, 'planned_cluster', null,
    'stdout', null, 'stderr', null)::json
  from (select g, case when g <= 100000 then 'completed' else 'pending' end s
        from generate_series(1, 150000) g) x" >/dev/null
pg_sql "vacuum analyze jobs" >/dev/null
# What PostgreSQL takes to hand over the rows a restart reads (warm cache).
"$PG_BIN/psql" -X -q -h "$LOOM_PG_DIR" -U postgres -d loom \
    -c "COPY (SELECT id, doc FROM jobs) TO STDOUT" >/dev/null
t0=$(date +%s%N)
"$PG_BIN/psql" -X -q -h "$LOOM_PG_DIR" -U postgres -d loom \
    -c "COPY (SELECT id, doc FROM jobs) TO STDOUT" >/dev/null
t1=$(date +%s%N)
copy_ms=$(( (t1 - t0) / 1000000 ))
loomd_conf <<'EOF2'
[cluster sim10k]
adaptor = sim
nodes = 10000
cpus_per_node = 32
EOF2
t0=$(date +%s%N)
loomd_start || exit 1
until [ "$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$LOOM_URL/v1/jobs/150000")" = 200 ]; do
    sleep 0.05
done
t1=$(date +%s%N)
restart_ms=$(( (t1 - t0) / 1000000 ))
row "restart, 150,000 jobs in PostgreSQL" "$restart_ms ms" "target" "< 5000 ms"
sleep 3
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
running=$(curl -s -H "$AUTH" "$LOOM_URL/v1/runtime" | python3 -c 'import json,sys; print(json.load(sys.stdin)["scheduler"]["jobs"]["running"])')
row "loomd RSS, 150,000 jobs + 10,000 sim nodes" "$rss MiB" "running" "$running"
loomd_stop

# ---- memory with 100,000 jobs and 10,000 sim nodes -------------------------------
pg_sql "delete from jobs where id > 100000" >/dev/null
loomd_start || exit 1
sleep 3
rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$LOOMD_PID/status")
row "loomd RSS, 100,000 jobs + 10,000 sim nodes" "$rss MiB" "target" "< 300 MiB"
loomd_stop
else
    loomd_stop
fi

echo
printf '%-52s %14s %12s %12s\n' "benchmark" "result" "" ""
printf '%s\n' "${ROWS[@]}"

# Loom against PostgreSQL on this machine: durable submits per second over
# PostgreSQL's commits per second (one job a transaction would be 1.0 of
# the first; submits grouped into one transaction may pass it), and the
# restart's time over the time to read its rows.
echo
printf '%-44s %12s %12s %10s\n' "durable inserts, 8 clients, one PostgreSQL" "per second" "rows/s" "Loom / it"
printf '%-44s %12s %12s %10s\n' "Loom: POST /v1/jobs, 1 s jobs" "$loom_submits jobs" "$loom_submits" "1.00"
printf '%-44s %12s %12s %10s\n' "pgbench: 1-row insert tx (same rounds)" "$pg_beside tx" "$pg_beside" "$(ratio "$loom_submits" "$pg_beside")"
printf '%-44s %12s %12s %10s\n' "pgbench: 100-row insert transactions" "$pg_hundred tx" "$((pg_hundred * 100))" "$(ratio "$loom_submits" "$((pg_hundred * 100))")"
[ -n "${BENCH_WRITE_ONLY:-}" ] ||
    printf '%-44s %25s %10s\n' "restart, 150,000 jobs: Loom / COPY of the rows" "$restart_ms ms / $copy_ms ms" "$(ratio "$restart_ms" "$copy_ms")"
t_ok 0 "benchmarks ran"
t_done
