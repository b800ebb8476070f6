# submitload.sh - a load of submits through Loom while the cluster's
# system is killed and started again (9003, 9005): two clients submit one
# job after the other, each job marks its start and its end, and what the
# test reads afterwards of Loom's jobs and of the marks.
# SPDX-License-Identifier: MIT
#
# Sourced after harness.sh, once loomd runs and TOKEN is set (it sources
# marks.sh):
#
# load_start CLUSTER IDVAR  start the two clients on cluster CLUSTER. Each
#               job (one cpu, 600 s walltime) appends "<loom id> start|end
#               <native id> <epoch>" to $T_OUT/marks, the native id read
#               from the job's environment variable IDVAR (SLURM_JOB_ID),
#               and runs a second. The id of each submit answered 201 goes
#               to $T/client.C (C 1 or 2), anything else, with the body, to
#               $T/refused. They stop at load_stop; the clean-up kills them.
# load_stop     stop the clients and wait for them.
# acked         how many submits the clients have had answered 201.
# table         "id state native_id requeues" of every job, one a line.
# native N      at least N jobs have a native id (sets TABLE).
# ended N       the N jobs have all ended (sets TABLE).
# marks ID KIND how many KIND (start|end) marks job ID left (marks.sh).
# starts ID     how many times loomd's log says it started job ID.

. "$LOOM_TOP_SRCDIR/tests/lib/marks.sh"

# starts ID: how many times loomd's log says it started job ID.
starts() {
    grep -c "job=$1 cluster=$LOAD_CLUSTER started\$" "$T/loomd.log"
}

# table: "id state native_id requeues" of every job, one a line.
table() {
    api GET /v1/jobs >/dev/null
    printf '%s' "$BODY" | python3 -c 'import json, sys
for j in json.load(sys.stdin)["items"]:
    print(j["id"], j["state"], j["native_id"] or "-", j.get("requeues", "?"))'
}

# acked: how many submits the clients have had answered 201.
acked() {
    cat "$T"/client.? 2>/dev/null | wc -l
}

# native N: at least N jobs have a native id (TABLE).
native() {
    TABLE=$(table)
    [ "$(awk '$3 != "-"' <<<"$TABLE" | wc -l)" -ge "$1" ]
}

# ended N: the N jobs have all ended (TABLE).
ended() {
    TABLE=$(table)
    [ "$(awk '$2 ~ /^(completed|failed|cancelled)$/' <<<"$TABLE" | wc -l)" = "$1" ]
}

# load_client C: submit jobs one after the other until $T/stop exists.
load_client() {
    local c=$1 code
    while [ ! -e "$T/stop" ]; do
        code=$(curl -s -o "$T/client.$c.body" -w '%{http_code}' --max-time 30 \
            -X POST -H 'Content-Type: application/json' \
            -H "Authorization: Bearer $TOKEN" --data-binary "$LOAD_JOB" \
            "$LOOM_URL/v1/jobs")
        if [ "$code" = 201 ]; then
            python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["id"])' "$T/client.$c.body" >>"$T/client.$c"
        else
            echo "$code $(cat "$T/client.$c.body")" >>"$T/refused"
        fi
        t_sleep 0.2
    done
}

load_start() {
    LOAD_CLUSTER=$1
    : >"$T_OUT/marks" && chmod 0666 "$T_OUT/marks" # its jobs append to it
    LOAD_JOB=$(python3 -c 'import json, sys
rec = "echo \"$LOOM_JOB_ID %s $" + sys.argv[2] + " $(date +%%s.%%N)\" >>" + sys.argv[1]
cmd = (rec % "start") + "; sleep 1; " + (rec % "end")
print(json.dumps({"command": ["/bin/sh", "-c", cmd],
                  "request": {"cluster": sys.argv[3], "walltime_s": 600}}))' \
        "$T_OUT/marks" "$2" "$1")
    LOAD_PIDS=()
    for c in 1 2; do
        : >"$T/client.$c"
        load_client "$c" &
        LOAD_PIDS+=($!)
        t_cleanup "kill ${LOAD_PIDS[*]: -1} 2>/dev/null"
    done
}

load_stop() {
    local p
    touch "$T/stop"
    for p in "${LOAD_PIDS[@]}"; do wait "$p"; done
}
