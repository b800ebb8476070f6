#!/usr/bin/env bash
# 1103-standby-slurm.t - the active loomd killed (SIGKILL) under a storm of
# keyed submits from 8 clients to a real Slurm cluster (the bundled pack);
# a standby on the same database and state_dir takes over, adopts what the
# dead one had started and starts the rest. No acknowledged job is lost or
# doubled, in PostgreSQL and in Slurm (one Slurm job per Loom job, by its
# comment), and each ran once (its batch script writes its id). Both loomd
# run as loomd's account, the jobs as a test account. The takeover time is
# printed.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/standby.sh"

[ -x /usr/bin/python3 ] && python3() { /usr/bin/python3 "$@"; }

CLIENTS=8
PER_CLIENT=${LOOM_STORM_JOBS:-25} # 200 submits
N=$((CLIENTS * PER_CLIENT))
KILL_AT=$((N * 3 / 10))

W=$T/w
mkdir -m 1777 "$W"

LOOM_SLURM_CPUS=4
slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_start 4 || t_bail "Slurm did not start"
pg_start || t_bail "PostgreSQL did not start"
loomd_conf <<EOF
$(slurm_pack_section)
EOF
loomd_start || t_bail "loomd a did not start"
t_account ALICE alice
admin_token "$ALICE" || t_bail "no admin token"
printf '%s' "$TOKEN" >"$T/token"
peer_start b || t_bail "loomd b did not start"
B=${PEER_URL[b]}
wait_for 'role "$B" >/dev/null; [ "$ROLE/$ACTIVE_URL" = "standby/$LOOM_URL" ]' 30
role "$B" >/dev/null
t_is "$ROLE/$ACTIVE_URL" "standby/$LOOM_URL" "b stands by and names a, the active one"
t_is "$(ps -o user= -p "$LOOMD_PID")/$(ps -o user= -p "${PEER_PID[b]}")" \
    "$LOOM_SERVICE_USER/$LOOM_SERVICE_USER" "a and b run as $LOOM_SERVICE_USER"

python3 -c 'import json, sys
json.dump([{"name": "storm-slurm", "command": ["/bin/sh", "-c",
            "echo $LOOM_JOB_ID $(id -un) >> " + sys.argv[1] + "/starts"],
            "request": {"cluster": "slurm", "walltime_s": 300}}],
          sys.stdout)' "$W" >"$T/bodies.json"

python3 "$LOOM_TOP_SRCDIR/tests/lib/storm.py" --urls "$LOOM_URL,$B" \
    --token-file "$T/token" --bodies "$T/bodies.json" --clients $CLIENTS \
    --jobs "$PER_CLIENT" --out "$T/acks" --deadline 180 &
STORM=$!
t_cleanup "kill $STORM 2>/dev/null"

acks() { cat "$T"/acks.[0-9] 2>/dev/null | wc -l; }
wait_for '[ "$(acks)" -ge $KILL_AT ] || ! alive $STORM' 120
t_ok "$( [ "$(acks)" -ge $KILL_AT ] && echo 0 || echo 1)" \
    "the storm is under way ($(acks) of $N acknowledged by a)"

# ---- a dies ---------------------------------------------------------------
T_KILL=$(now_s)
loomd_kill9
wait_role "$B" active 60
T_ACTIVE=$(now_s)
role "$B" >/dev/null
t_is "$ROLE" active "b takes over"
t_diag "takeover: b active $(python3 -c "print('%.2f' % ($T_ACTIVE - $T_KILL))") s after a was killed"

wait_for '! alive $STORM' 300
wait "$STORM"
t_is "$?" 0 "every client had every submit acknowledged"
cat "$T"/acks.*.err 2>/dev/null | head -5 | while read -r l; do t_diag "$l"; done

# ---- nothing lost, nothing doubled ------------------------------------------
cat "$T"/acks.[0-9] | awk '{print $1, $2}' | sort -u >"$T/acked"
t_is "$(cut -d' ' -f1 "$T/acked" | sort -u | wc -l)" "$N" "$N keys acknowledged"
t_is "$(wc -l <"$T/acked")" "$N" "... each always with the same job"
pg_sql "SELECT idem_key || ' ' || id FROM jobs WHERE idem_key LIKE 'storm-%'" |
    sort >"$T/stored"
t_is "$(comm -3 "$T/acked" "$T/stored" | wc -l)" 0 \
    "PostgreSQL holds exactly the acknowledged jobs, with their ids" ||
    t_diag "$(comm -3 "$T/acked" "$T/stored" | head -5)"
t_is "$(pg_sql "SELECT count(*) || ' ' || count(DISTINCT idem_key) FROM jobs")" \
    "$N $N" "no job twice: $N rows, $N keys"

completed() {
    pg_sql "SELECT count(*) FROM jobs WHERE state = 'completed'"
}
wait_for '[ "$(completed)" = $N ]' 300 1
t_is "$(completed)" "$N" "every job completed in Slurm"

# Slurm: one job for each Loom job, by its comment loom:ID.
pg_sql "SELECT id FROM jobs" | sort >"$T/ids"
squeue -h -t all -o '%k' | sed -n 's/^loom://p' | sort >"$T/in_slurm"
t_is "$(uniq -d "$T/in_slurm" | wc -l)/$(wc -l <"$T/in_slurm")" "0/$N" \
    "Slurm has $N jobs, none twice" ||
    t_diag "twice: $(uniq -d "$T/in_slurm" | head -5 | paste -sd' ')"
t_is "$(comm -3 "$T/ids" "$T/in_slurm" | wc -l)" 0 "... those of the Loom jobs"
t_is "$(squeue -h -t all -o '%u' | sort -u)" "$ALICE" \
    "Slurm has them as $ALICE's"

# b starts every job it loads with adoption: the pack finds a's by their
# comment and submits nothing for them.
t_diag "starts: a $(grep -c 'cluster=slurm started$' "$T/loomd.log"), then b $(grep -cE 'cluster=slurm (started|re-attached)$' "$T/loomd-b.log") (a's among them)"

# Each ran once.
cut -d' ' -f1 "$W/starts" | sort >"$T/started"
t_is "$(wc -l <"$T/started")" "$N" "$N batch scripts ran"
t_is "$(uniq -d "$T/started" | wc -l)" 0 "no job ran twice"
t_is "$(comm -3 "$T/started" "$T/ids" | wc -l)" 0 "... they are the Loom jobs"
t_is "$(cut -d' ' -f2 "$W/starts" | sort -u)" "$ALICE" "they ran as $ALICE"

peer_stop b
t_is $? 0 "b stops with status 0 (no leak, no sanitizer report)" ||
    t_diag "$(grep -A15 -E 'Sanitizer|runtime error:' "$T/loomd-b.log" | head -40)"
t_done
