#!/usr/bin/env bash
# 3208-slurm-filters.t - squeue -j/-u/-p, sacct -j/-u/-r and scancel -u/-p
# ask loomd for the jobs they select (GET /v1/jobs?id=, ?user=, ?queue=)
# instead of fetching every job: the filters of the API, what they refuse,
# the request each command sends, and its answer the same as the unfiltered
# list filtered by hand; sbatch -Q beside the real sbatch -Q.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurmcmds.sh"

# ids PATH: the ids of GET PATH's items, in order, comma-separated.
ids() {
    api GET "$1" >/dev/null
    py '",".join(j["id"] for j in d["items"])' "$BODY"
}

# recorder: a stand-in for loomd on $REC_URL that answers every GET with
# no jobs and writes each request's target to $T/requests, a line each.
recorder() {
    local port
    port=$(free_port) || return 1
    python3 - "$port" "$T/requests" <<'EOF' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(sys.argv[2], "a") as f:
            f.write(self.path + "\n")
        body = b'{"items":[]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
    REC_PID=$!
    t_cleanup "kill $REC_PID"
    REC_URL=http://127.0.0.1:$port
    wait_for 'curl -s -o /dev/null "$REC_URL/"' 30
}

# asked CMD...: the target the command sent to the recorder.
asked() {
    : >"$T/requests"
    LOOM_URL=$REC_URL "$@" >/dev/null 2>&1
    cat "$T/requests"
}

slurm_available || t_bail "no Slurm: $SLURM_WHY"
t_account ALICE alice || t_bail "cannot make an account"
t_account BOB bob || t_bail "cannot make an account"
slurmcmds_setup || t_bail "cannot set up the commands"
slurmcmds_fabric || t_bail "$SC_WHY"
recorder || t_bail "the recorder did not start"

# ---- the jobs: alice's and bob's, held, on both clusters; an array ----------
sub() { # sub USER ARGS...: the job id sbatch --parsable prints
    local u=$1 out
    shift
    out=$(as_user "$u" sbatch --parsable -H -t 10 "$@" --wrap true) || return 1
    echo "${out%%;*}"
}
J1=$(sub "$ALICE" -M local -p default -J one)
J2=$(sub "$BOB" -M local -p default -J two)
J3=$(sub "$ALICE" -M slurm -p debug -J three)
JA=$(sub "$ALICE" -M local -p default --array=1-3 -J arr)
as_user "$ALICE" scontrol release "${JA}_2" >/dev/null
wait_for '[ "$(field "${JA}_2" .loom_id)" != "" ] && [ "$(job_state "${JA}_2")" = completed ]' 60 ||
    t_diag "task 2 of $JA did not run"
T2=$(field "${JA}_2" .loom_id)
t_like "$J1/$J2/$J3/$JA/$T2" '^[0-9]+/[0-9]+/[0-9]+/[0-9]+/[0-9]+$' \
    "the jobs are there (alice's one and three, bob's two, alice's array and its task 2 of its own)"

# ---- GET /v1/jobs?id=, ?user=, ?queue= ----------------------------------------
t_is "$(ids "/v1/jobs?id=$J1,$J2&fields=id")" "$J1,$J2" "?id=A,B: those jobs"
t_is "$(ids "/v1/jobs?id=$JA&fields=id")" "$JA,${JA}_2" \
    "?id=ARRAY: the array's item (its waiting tasks) and its task of its own"
t_is "$(ids "/v1/jobs?id=${JA}_2&fields=id")" "${JA}_2" "?id=ARRAY_N: the task's own record"
t_is "$(ids "/v1/jobs?id=${JA}_3&fields=id")" "$JA" \
    "?id=ARRAY_N of a task that waits: the array's item, which stands for it"
t_is "$(ids "/v1/jobs?id=${JA}_9&fields=id")" "" "?id=ARRAY_N of no task of it: nothing"
t_is "$(ids "/v1/jobs?id=$T2&fields=id")" "${JA}_2" "?id= of a task's loom_id: the task"
t_is "$(ids "/v1/jobs?user=$BOB&fields=id")" "$J2" "?user=: the jobs of that owner or account"
t_is "$(ids "/v1/jobs?user=$BOB,$ALICE&state=held&fields=id")" "$J1,$J2,$J3,$JA" \
    "?user=A,B: of either, with the other filters (state)"
t_is "$(ids "/v1/jobs?queue=debug&fields=id")" "$J3" "?queue=: the jobs that asked for that queue"
t_is "$(ids "/v1/jobs?queue=debug,default&user=$ALICE&id=$J1,$J2,$J3&fields=id")" "$J1,$J3" \
    "?queue=A,B with ?user= and ?id=: every filter at once"
api GET "/v1/jobs?id=$J1,$J2,$J3&limit=1&fields=id" >/dev/null
t_is "$(py '[[j["id"] for j in d["items"]], d["next"]]' "$BODY")" \
    "[[\"$J1\"], \"/v1/jobs?after=$J1&limit=1&fields=id&id=$J1%2C$J2%2C$J3\"]" \
    "the next page keeps ?id="
api GET "/v1/jobs?id=$J1,12x" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)/$(jget "$BODY" .error.field)" \
    "400/query parameter id: '12x' is not a job: the ids are a comma-separated list of jobs (123) and array tasks (123_7)/id" \
    "?id= of what is not a job: 400 naming it"
api GET "/v1/jobs?id=${J1}_" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" "400/id" "?id=ID_ without a task: 400"
api GET "/v1/jobs?user=$ALICE,,$BOB" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/query parameter user: '$ALICE,,$BOB' has an empty item; it is a comma-separated list of names" \
    "?user= with an empty name: 400"
api GET "/v1/jobs?queue=debug," >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" "400/queue" "?queue= ending in a comma: 400"
OUT=$(TOKEN=$(token_for "$BOB" user) api GET "/v1/jobs?user=$ALICE,$BOB&fields=id")
t_is "$(py '",".join(j["id"] for j in d["items"])' "$OUT")" "$J2" \
    "?user= narrows what a user sees, never widens it (bob: his own)"

# ---- the commands send the filters -------------------------------------------
t_like "$(asked "$SC/squeue" -h -j "$J1,${JA}_3" -u alice,bob -p debug,default)" \
    "^/v1/jobs\\?fields=[^&]*&id=$J1%2C${JA}_3&user=alice%2Cbob&queue=debug%2Cdefault\$" \
    "squeue -j -u -p: GET /v1/jobs?id=&user=&queue= (with -j, every state)"
t_like "$(asked "$SC/squeue" -h -u alice)" \
    "^/v1/jobs\\?state=pending%2Cheld%2Cstarting%2Crunning%2Csuspended&fields=[^&]*&user=alice\$" \
    "squeue -u alone: the queue's states and ?user="
t_like "$(asked "$SC/sacct" -j "$J1.batch,$J2" -u alice -r debug)" \
    "^/v1/jobs\\?id=$J1%2C$J2&user=alice&queue=debug\$" \
    "sacct -j (a step as its job) -u -r: ?id=&user=&queue="
t_like "$(asked "$SC/scancel" -u alice -p debug)" "&user=alice&queue=debug\$" \
    "scancel -u -p: ?user=&queue="
MANY=$(seq -s, 100000 100400)
t_like "$(asked "$SC/squeue" -h -j "$MANY")" '^/v1/jobs\?fields=[^&]*$' \
    "squeue -j of more ids than a request's path holds: every job, picked by squeue"
MANYU="$(seq -f 'nobody%g' -s, 1 300),$ALICE"
t_like "$(asked "$SC/squeue" -h -u "$MANYU")" \
    '^/v1/jobs\?state=pending%2Cheld%2Cstarting%2Crunning%2Csuspended&fields=[^&]*$' \
    "squeue -u of more names than a request's path holds: the queue, picked by squeue"
t_like "$(asked "$SC/scancel" -u "$MANYU" -p debug)" \
    '^/v1/jobs\?state=[^&]*&fields=[^&]*$' \
    "scancel -u -p of more names than a path holds: no ?user= nor ?queue="
t_like "$(asked "$SC/sacct" -j "$J1" -u "$MANYU")" '^/v1/jobs$' \
    "sacct -j -u of more names than a path holds: no ?id= nor ?user="

# ---- the same answers as the unfiltered list, filtered by hand ----------------
FMT='%i %u %P %T'
ALL=$(as_user "$ALICE" squeue -h -t all -o "$FMT")
ALLR=$(as_user "$ALICE" squeue -h -t all -r -o "$FMT")
pick() { # pick AWK-CONDITION [LIST]: lines of the full list that match
    awk "$1" <<<"${2:-$ALL}"
}
t_is "$(as_user "$ALICE" squeue -h -j "$J1,$J3" -o "$FMT")" \
    "$(pick "\$1 == \"$J1\" || \$1 == \"$J3\"")" "squeue -j A,B: the lines of A and B"
t_is "$(as_user "$ALICE" squeue -h -j "$JA" -t all -o "$FMT")" \
    "$(pick "\$1 == \"$JA\" || \$1 ~ /^${JA}_/")" "squeue -j ARRAY -t all: the array and its task"
t_is "$(as_user "$ALICE" squeue -h -r -j "${JA}_3" -o "$FMT")" \
    "$(pick "\$1 == \"${JA}_3\"" "$ALLR")" "squeue -r -j ARRAY_N: the waiting task, a line of its own"
t_is "$(as_user "$ALICE" squeue -h -t all -u "$ALICE" -o "$FMT")" \
    "$(pick "\$2 == \"$ALICE\"")" "squeue -u: the user's lines"
t_is "$(as_user "$ALICE" squeue -h -t all -u "$MANYU" -o "$FMT")" \
    "$(pick "\$2 == \"$ALICE\"")" "squeue -u of more names than a path holds: the same lines"
t_is "$(as_user "$ALICE" squeue -h -t all -p debug -o "$FMT")" \
    "$(pick '$3 == "debug"')" "squeue -p: the partition's lines"
t_is "$(as_user "$ALICE" squeue -h -t all -p debug -o "$FMT" | wc -l)" 1 \
    "(one job asked for debug)"
SA=$(as_user "$ALICE" sacct -a -S now-1days -n -P -o JobID,User,Partition)
t_is "$(as_user "$ALICE" sacct -S now-1days -n -P -o JobID,User,Partition -j "$J1,${JA}_2")" \
    "$(awk -F'|' "\$1 == \"$J1\" || \$1 ~ /^${JA}_2(\\.batch)?\$/" <<<"$SA")" \
    "sacct -j: the lines of those jobs (and the task's batch step)"
t_is "$(as_user "$ALICE" sacct -a -S now-1days -n -P -o JobID,User,Partition -r debug)" \
    "$(awk -F'|' '$3 == "debug"' <<<"$SA")" "sacct -r: the partition's lines"
OUT=$(as_user "$ALICE" squeue -h -j 12x 2>&1)
t_is "$?/$OUT" "1/squeue: error: slurm_load_jobs error: query parameter id: '12x' is not a job: the ids are a comma-separated list of jobs (123) and array tasks (123_7)" \
    "squeue -j of what is no job id: loomd's refusal"
OUT=$(as_user "$ALICE" squeue -h -j 999999 -o %i 2>&1)
t_is "$?/$OUT" "1/squeue: error: slurm_load_jobs error: Invalid job id specified" \
    "squeue -j of an unknown job still fails as Slurm's does"
as_user "$BOB" scancel -u "$BOB" -p default
wait_for '[ "$(job_state "$J2")" = cancelled ]' 30
t_is "$(job_state "$J2")/$(job_state "$J1")" "cancelled/held" \
    "scancel -u -p: bob's job in that partition, and none of alice's"

# ---- sbatch -Q as Slurm's: nothing on stdout -----------------------------------
REAL=$(/usr/bin/sbatch -Q -H -J quiet --wrap true 2>&1)
REALP=$(/usr/bin/sbatch -Q -H -J quiet --parsable --wrap true 2>&1)
t_is "$REAL|$REALP|$(/usr/bin/squeue -h -n quiet -o %j | wc -l)" "||2" \
    "(Slurm's sbatch -Q prints nothing, with --parsable too, and submits)"
/usr/bin/scancel -n quiet >/dev/null 2>&1
api GET "/v1/jobs?user=$ALICE&fields=id" >/dev/null
N=$(py 'len(d["items"])' "$BODY")
OUT=$(as_user "$ALICE" sbatch -Q -H -M local --wrap true 2>&1)
OUTP=$(as_user "$ALICE" sbatch -Q -H --parsable -M local --wrap true 2>&1)
t_is "$?/$OUT|$OUTP" "0/|" "sbatch -Q prints nothing either, with --parsable too"
api GET "/v1/jobs?user=$ALICE&fields=id" >/dev/null
t_is "$(py 'len(d["items"])' "$BODY")" $((N + 2)) "and submits the jobs"

t_done
