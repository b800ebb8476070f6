#!/usr/bin/env bash
# slurmcmds.sh - Loom's Slurm commands beside Slurm's own, in one run:
# sbatch's rate (jobs/s) from one loop and from four at once, Loom's
# through the listen_peer socket as an unprivileged account into a sim
# cluster, Slurm's against a real slurmctld (held jobs, so that nothing
# runs); then squeue's latency with 10,000 jobs in each: the queue, one
# job (squeue -j ID) and ARC's scan of 100 (squeue -a -h -o %i:%T -t all
# -j IDS). BENCH_BEFORE names another loom-slurm (an earlier build) timed
# beside this one on the same loomd. On a shared machine only the ratios
# mean something. Run from a build directory:
#   make && LOOM_TOP_SRCDIR=../.. LOOM_TOP_BUILDDIR=$PWD bash ../../tests/bench/slurmcmds.sh
# SPDX-License-Identifier: MIT
set -u
: "${LOOM_TOP_SRCDIR:=$(cd "$(dirname "$0")/../.." && pwd -P)}"
: "${LOOM_TOP_BUILDDIR:=$PWD}"
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

SUBMITS=${BENCH_SUBMITS:-200}  # per loop
QUEUE=${BENCH_QUEUE:-10000}    # jobs squeue lists
LISTS=${BENCH_LISTS:-10}       # squeue calls timed, each
BEFORE=${BENCH_BEFORE:-}       # another loom-slurm, timed beside

ROWS=()
row() { ROWS+=("$(printf '%-34s %18s %18s %18s' "$@")"); }

# rate LOOPS CMD...: jobs/s of LOOPS loops of $SUBMITS runs of CMD.
rate() {
    local loops=$1 t0 t1 k
    shift
    t0=$(date +%s.%N)
    for ((k = 0; k < loops; k++)); do
        (for ((i = 0; i < SUBMITS; i++)); do "$@" >/dev/null || exit 1; done) &
    done
    wait
    t1=$(date +%s.%N)
    awk -v n=$((loops * SUBMITS)) -v a="$t0" -v b="$t1" \
        'BEGIN { printf "%.1f\n", n / (b - a) }'
}

# median_ms CMD...: the median wall time of $LISTS runs of CMD, in ms.
median_ms() {
    local i t0 t1
    for ((i = 0; i < LISTS; i++)); do
        t0=$(date +%s.%N)
        "$@" >/dev/null || return 1
        t1=$(date +%s.%N)
        awk -v a="$t0" -v b="$t1" 'BEGIN { print (b - a) * 1000 }'
    done | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f\n", v[int((NR + 1) / 2)] }'
}

slurm_available || { echo "slurmcmds.sh: no Slurm: $SLURM_WHY" >&2; exit 1; }
t_account U bench || exit 1
slurmcmds_setup || exit 1
slurm_start 2 || exit 1
# room for the queue in slurmctld (MaxJobCount defaults to 10,000)
echo "MaxJobCount=$((QUEUE * 2))" >>"$SLURM_CONF"
scontrol reconfigure >/dev/null 2>&1
pg_start || exit 1
loomd_conf "listen_peer = unix:$PEER_SOCK" "[cluster sim]" \
    "adaptor = sim" "nodes = 100" || exit 1
loomd_start || exit 1
admin_token || exit 1
# nothing starts: both queues only grow
api POST /v1/runtime/scheduler '{"enabled": false}' >/dev/null

SB=(--hold -t 10 --wrap true)
L1=$(rate 1 as_user "$U" sbatch "${SB[@]}" -M sim)
S1=$(rate 1 /usr/bin/sbatch "${SB[@]}")
L4=$(rate 4 as_user "$U" sbatch "${SB[@]}" -M sim)
S4=$(rate 4 /usr/bin/sbatch "${SB[@]}")
row "sbatch, jobs/s" "Loom" "Slurm"
row "  one loop" "$L1" "$S1"
row "  four loops" "$L4" "$S4"

# fill both queues to $QUEUE jobs: Loom's through the socket as the
# account, Slurm's with its own sbatch, four at once
HAVE=$((SUBMITS * 5))
seq $((HAVE + 1)) "$QUEUE" | setpriv --reuid="$U" --regid="$U" \
    --init-groups xargs -P4 -I{} curl -s -o /dev/null \
    --unix-socket "$PEER_SOCK" -H 'Content-Type: application/json' \
    -d '{"command":["true"],"hold":true,"request":{"cluster":"sim"}}' \
    http://loom/v1/jobs
seq $((HAVE + 1)) "$QUEUE" | xargs -P4 -I{} /usr/bin/sbatch --hold -t 10 \
    --wrap true >/dev/null
LQ=$(as_user "$U" squeue -h -o %i | wc -l)
SQ=$(/usr/bin/squeue -h -o %i | wc -l)
LM=$(median_ms as_user "$U" squeue)
SM=$(median_ms /usr/bin/squeue)
row "squeue, ms (median of $LISTS)" "Loom ($LQ jobs)" "Slurm ($SQ jobs)" \
    "${BEFORE:+Loom before}"
if [ -n "$BEFORE" ]; then # its commands, as $SC's are
    SCB=$T/slurmbin-before
    mkdir -p "$SCB" && chmod 0755 "$SCB" && cp "$BEFORE" "$SCB/loom-slurm" &&
        chmod 0755 "$SCB/loom-slurm" && ln -sf loom-slurm "$SCB/squeue" ||
        exit 1
fi
# before CMD...: CMD's median with the commands of $BEFORE, or nothing
before() { [ -z "$BEFORE" ] || SC=$SCB median_ms "$@"; }
row "  default format" "$LM" "$SM" "$(before as_user "$U" squeue)"
LJ=$(as_user "$U" squeue -h -o %i | sed -n "$((QUEUE / 2))p")
SJ=$(/usr/bin/squeue -h -o %i | sed -n "$((QUEUE / 2))p")
row "  -j ID" "$(median_ms as_user "$U" squeue -j "$LJ")" \
    "$(median_ms /usr/bin/squeue -j "$SJ")" \
    "$(before as_user "$U" squeue -j "$LJ")"
LS=$(as_user "$U" squeue -h -o %i | sed -n "$((QUEUE / 4)),+99p" | paste -sd,)
SS=$(/usr/bin/squeue -h -o %i | sed -n "$((QUEUE / 4)),+99p" | paste -sd,)
ARC=(-a -h -o %i:%T -t all -j)
row "  ARC's scan of 100 (-j IDS)" "$(median_ms as_user "$U" squeue "${ARC[@]}" "$LS")" \
    "$(median_ms /usr/bin/squeue "${ARC[@]}" "$SS")" \
    "$(before as_user "$U" squeue "${ARC[@]}" "$LS")"

printf '%s\n' "${ROWS[@]}"
