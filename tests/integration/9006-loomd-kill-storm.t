#!/usr/bin/env bash
# 9006-loomd-kill-storm.t - loomd SIGKILLed at KILLS (55) random points of a
# storm of keyed submits from 8 clients to a local, a simulated and a real
# Slurm cluster, and started again after each kill. The clients retry each
# submit with its Idempotency-Key until it is acknowledged. No acknowledged
# job is lost or doubled: in PostgreSQL (one row per key), in Slurm (one
# Slurm job per Loom job, by its comment loom:ID) and in the processes
# (each local and Slurm job appends its id to a file once). The jobs run as
# a test account.
# The size is LOOM_KILL_STORM_JOBS submits per client (default 300: 2,400
# submits, a few minutes on a loaded 2-core machine); tests/bench/
# kill-storm.sh runs it with 1,250 (10,000 submits).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

CLIENTS=8
PER_CLIENT=${LOOM_KILL_STORM_JOBS:-300}
KILLS=${LOOM_KILL_STORM_KILLS:-55}
N=$((CLIENTS * PER_CLIENT))
# Of every ten bodies one is a local job, one a Slurm job, eight simulated.
N_LOCAL=$((N / 10))
N_SLURM=$((N / 10))
N_SIM=$((N - N_LOCAL - N_SLURM))

W=$T/w
mkdir -m 1777 "$W"

LOOM_SLURM_CPUS=8
slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 2 || t_bail "Slurm did not start"
pg_start || t_bail "PostgreSQL did not start"
# lease_s = 1: a loomd started after a kill waits for the dead one's lease
# to end (docs/internals/standby.md); the shortest keeps the restarts short.
loomd_conf <<EOF
lease_s = 1
$(local_cluster 4 1)
$(sim_cluster 64 4 8192)
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"
printf '%s' "$TOKEN" >"$T/token"
t_diag "the jobs of this test run as $ALICE; $N submits, $KILLS kills"

python3 -c 'import json, sys
w = sys.argv[1]
mark = "echo $LOOM_JOB_ID $(id -un) >> " + w
local = {"name": "storm-local", "command": ["/bin/sh", "-c",
         mark + "/local"], "request": {"cluster": "local", "walltime_s": 300}}
slurm = {"name": "storm-slurm", "command": ["/bin/sh", "-c",
         mark + "/slurm"], "request": {"cluster": "slurm", "walltime_s": 300}}
sim = {"name": "storm-sim", "command": ["/bin/true"],
       "env": {"LOOM_SIM_RUNTIME_S": "1"},
       "request": {"cluster": "sim", "walltime_s": 300}}
json.dump([local, slurm] + [sim] * 8, sys.stdout)' "$W" >"$T/bodies.json"

# A client gives a submit up after 300 s without an acknowledgement: far
# more than a restart of loomd takes.
python3 "$LOOM_TOP_SRCDIR/tests/lib/storm.py" --urls "$LOOM_URL" \
    --token-file "$T/token" --bodies "$T/bodies.json" --clients $CLIENTS \
    --jobs "$PER_CLIENT" --out "$T/acks" --deadline 300 &
STORM=$!
t_cleanup "kill $STORM 2>/dev/null"

acks() { cat "$T"/acks.[0-9] 2>/dev/null | wc -l; }
completed() {
    pg_sql "SELECT count(*) FROM jobs WHERE state = 'completed'" 2>/dev/null
}

# ---- the kills ---------------------------------------------------------------
# The storm's progress is its acknowledged submits plus its completed jobs
# (0 to 2N). Kill k comes once the progress has reached KILL_AT[k] (random,
# spread over 90% of it), then a random 0 to 0.5 s later: in the middle of
# submits, commits, starts, adoptions and ends alike. A point passed while
# loomd restarted is killed at as soon as loomd is up again, so every kill
# is made, whatever the machine's speed.
progress() { echo $(($(acks) + $(completed))); }
mapfile -t KILL_AT < <(python3 -c 'import random, sys
n, k = int(sys.argv[1]), int(sys.argv[2])
print("\n".join(str(x) for x in sorted(random.randint(1, 2 * n * 9 // 10)
                                      for _ in range(k))))' "$N" "$KILLS")
KILLED=0 RESTARTED=0 IN_SUBMITS=0 IN_DISPATCH=0
for at in "${KILL_AT[@]}"; do
    wait_for '[ "$(progress)" -ge $at ]' 300
    t_sleep "0.$((RANDOM % 5))$((RANDOM % 10))"
    if [ "$(acks)" -lt "$N" ]; then
        IN_SUBMITS=$((IN_SUBMITS + 1))
    elif [ "$(completed)" -lt "$N" ]; then
        IN_DISPATCH=$((IN_DISPATCH + 1))
    fi
    pid=$LOOMD_PID
    loomd_kill9
    alive "$pid" || KILLED=$((KILLED + 1))
    loomd_start && RESTARTED=$((RESTARTED + 1)) ||
        t_bail "loomd did not start again after kill $KILLED"
done
t_is "$KILLED/$RESTARTED" "$KILLS/$KILLS" \
    "loomd was SIGKILLed $KILLS times and started again after each kill"
t_ok "$([ $((IN_SUBMITS + IN_DISPATCH)) -ge 50 ]; echo $?)" \
    "at least 50 kills came while the storm went on: $IN_SUBMITS while the clients submitted, $IN_DISPATCH while jobs were still to end"

wait_for '! alive $STORM' 600
wait "$STORM"
t_is "$?" 0 "every client had every submit acknowledged"
cat "$T"/acks.*.err 2>/dev/null | head -5 | while read -r l; do t_diag "$l"; done

# ---- nothing lost, nothing doubled in PostgreSQL --------------------------------
# Every key acknowledged, always with the same job (201, or 200 for a
# replay after a kill).
cat "$T"/acks.[0-9] | awk '{print $1, $2}' | sort -u >"$T/acked"
t_is "$(cut -d' ' -f1 "$T/acked" | sort -u | wc -l)" "$N" "$N keys acknowledged"
t_is "$(wc -l <"$T/acked")" "$N" "... each always with the same job"
t_diag "$(awk '$3 == 200' "$T"/acks.[0-9] | wc -l) acknowledgements were replays (200)"
pg_sql "SELECT idem_key || ' ' || id FROM jobs WHERE idem_key LIKE 'storm-%'" |
    sort >"$T/stored"
t_is "$(comm -3 "$T/acked" "$T/stored" | wc -l)" 0 \
    "PostgreSQL holds exactly the acknowledged jobs, with their ids" ||
    t_diag "$(comm -3 "$T/acked" "$T/stored" | head -5)"
t_is "$(pg_sql "SELECT count(*) || ' ' || count(DISTINCT idem_key) FROM jobs")" \
    "$N $N" "no job twice: $N rows, $N keys"

# ---- they all ran, downstream once each ---------------------------------------
wait_for '[ "$(completed)" = $N ]' 600 1
t_is "$(completed)" "$N" "every job completed" ||
    t_diag "$(pg_sql "SELECT doc->'request'->>'cluster', state, count(*) FROM jobs GROUP BY 1, 2")"

ids_in() {
    pg_sql "SELECT id FROM jobs WHERE doc->'request'->>'cluster' = '$1'" | sort
}
ids_in local >"$T/local.ids"
ids_in slurm >"$T/slurm.ids"
t_is "$(wc -l <"$T/local.ids")/$(wc -l <"$T/slurm.ids")/$(ids_in sim | wc -l)" \
    "$N_LOCAL/$N_SLURM/$N_SIM" "$N_LOCAL local, $N_SLURM Slurm, $N_SIM simulated jobs"

# Slurm: one job for each Loom job, by its comment loom:ID.
squeue -h -t all -o '%k' | sed -n 's/^loom://p' | sort >"$T/in_slurm"
t_is "$(uniq -d "$T/in_slurm" | wc -l)/$(wc -l <"$T/in_slurm")" "0/$N_SLURM" \
    "Slurm has $N_SLURM jobs, none twice" ||
    t_diag "twice: $(uniq -d "$T/in_slurm" | head -5 | paste -sd' ')"
t_is "$(comm -3 "$T/slurm.ids" "$T/in_slurm" | wc -l)" 0 \
    "... those of the Loom jobs for Slurm"

# The processes: each local and each Slurm job wrote its id once, as ALICE.
for c in local slurm; do
    cut -d' ' -f1 "$W/$c" 2>/dev/null | sort >"$T/$c.started"
    t_is "$(uniq -d "$T/$c.started" | wc -l)/$(wc -l <"$T/$c.started")" \
        "0/$(wc -l <"$T/$c.ids")" "each $c job's process ran once" ||
        t_diag "twice: $(uniq -d "$T/$c.started" | head -5 | paste -sd' ')"
    t_is "$(comm -3 "$T/$c.started" "$T/$c.ids" | wc -l)" 0 \
        "... the processes are those of the $c jobs"
done
t_is "$(cut -d' ' -f2 "$W/local" "$W/slurm" | sort -u)" "$ALICE" \
    "they ran as $ALICE"

t_ok "$(alive "$LOOMD_PID"; echo $?)" "the last loomd runs"
loomd_stop
t_is $? 0 "loomd stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd.log" | head -40)"
t_done
