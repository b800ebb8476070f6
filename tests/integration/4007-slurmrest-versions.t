#!/usr/bin/env bash
# 4007-slurmrest-versions.t - the API version and the two Slurm adaptors
# side by side: api_version = auto on a slurmrestd that offers only
# v0.0.37 and v0.0.36 settles on v0.0.37; api_version = v0.0.36 sends nodes
# and queues to the fallback pack (that version has no node flags), jobs to
# slurmrestd; and a job the slurm pack started is adopted by the slurmrest
# adaptor after a restart, and the other way round, never started twice;
# a job its user holds is released by Loom onto its nodes (hold_for_loom).
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"
. "$LOOM_TOP_SRCDIR/tests/lib/slurm.sh"

slurm_available || t_bail "no Slurm: $SLURM_WHY"
slurm_restd_available || t_bail "no slurmrestd: $SLURM_WHY"
export LOOM_SLURM_JWT=1
slurm_start 2 || t_bail "Slurm did not start"
slurm_restd_start || t_bail "slurmrestd did not start"
pg_start || t_bail "no PostgreSQL"
mkdir -p "$T/scratch"
chmod 1777 "$T/scratch"

# A third slurmrestd, with the two older API versions only (rest_auth/jwt:
# rest_auth/local takes only root and slurmrestd's own account, and
# loomd's, the SlurmUser, cannot be slurmrestd's).
for ((p = SLURM_PORT + 60; p < SLURM_PORT + 120; p++)); do
    slurm_port_free "$p" && break
done
OLD=http://127.0.0.1:$p
slurm_bg restd-old env SLURM_JWT=daemon slurmrestd -f "$SLURM_CONF" \
    -a rest_auth/jwt -s openapi/v0.0.36,openapi/v0.0.37 \
    -u "$SLURM_RESTD_USER" "127.0.0.1:$p"
TOK=$(slurm_jwt root 600) || t_bail "no token"
wait_for 'curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $TOK" "$OLD/slurm/v0.0.37/ping" >/dev/null' 30 ||
    t_bail "the older slurmrestd did not answer"
JWT="jwt_key_file = $SLURM_JWT_KEY"

# conf ADAPTOR-LINES...: one cluster "slurm" with these lines.
conf() {
    loomd_conf <<EOF2
[cluster slurm]
workdir = $T/scratch
env.SLURM_CONF = $SLURM_CONF
poll_s = 0.3
$(printf '%s\n' "$@")
EOF2
}
ops() {
    api GET /v1/clusters/slurm >/dev/null
    py '" ".join(k + "=" + v for k, v in sorted(d["operations"].items()) if k in ("jobs", "nodes", "queues", "start"))' "$BODY"
}

# ---- auto: the newest version slurmrestd offers --------------------------------
conf "adaptor = slurmrest" "url = $OLD" "$JWT"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no token"
t_is "$(ops)" "jobs=slurmrestd v0.0.37 nodes=slurmrestd v0.0.37 queues=slurmrestd v0.0.37 start=slurmrestd v0.0.37" \
    "auto on a slurmrestd without v0.0.38 settles on v0.0.37"
api GET /v1/clusters/slurm >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .nodes)" up/2 "the cluster is up"
loomd_stop

# ---- v0.0.36: nodes and queues through the pack, the rest through the API -------
conf "adaptor = slurmrest" "url = $SLURM_RESTD_URL" "$JWT" "api_version = v0.0.36"
loomd_start || t_bail "loomd did not start"
t_is "$(ops)" "jobs=slurmrestd v0.0.36 nodes=pack slurm queues=pack slurm start=slurmrestd v0.0.36" \
    "v0.0.36: nodes and queues go to the pack, jobs and starts to slurmrestd"
scontrol update nodename=n2 state=drain reason=v36
wait_for '[ "$(api GET /v1/nodes/slurm/n2 >/dev/null; jget "$BODY" .state)" = drained ]' 30
api GET /v1/nodes/slurm/n2 >/dev/null
t_is "$(jget "$BODY" .state)/$(jget "$BODY" .reason)" \
    "drained/v36" "a drained node shows drained (which v0.0.36 alone cannot tell)"
scontrol update nodename=n2 state=resume
submit '{"command":["/bin/sh","-c","exit 4"],"request":{"cluster":"slurm"}}'
J=$JOB
wait_for '[ "$(field "$J" .state)" = failed ]' 30
t_is "$(field "$J" .state)/$(field "$J" .exit_code)" failed/4 \
    "a job through v0.0.36 runs and its exit code comes back"
loomd_stop

# ---- a job the pack started, adopted by slurmrest ---------------------------------
conf "adaptor = script" "pack = slurm"
loomd_start || t_bail "loomd did not start"
submit '{"name":"long","command":["sleep","300"],"request":{"cluster":"slurm"}}'
JP=$JOB
wait_for '[ "$(field "$JP" .state)" = running ]' 30
NP=$(field "$JP" .native_id)
t_like "$NP" '^[0-9]+$' "the pack started job $JP as Slurm job $NP"
loomd_stop
conf "adaptor = slurmrest" "url = $SLURM_RESTD_URL" "jwt_key_file = $SLURM_JWT_KEY"
loomd_start || t_bail "loomd did not start with slurmrest"
wait_for 'grep -q "job=$JP cluster=slurm re-attached" "$T/loomd.log"' 30
t_ok $? "slurmrest re-attaches to the pack's job (it says so)"
t_is "$(field "$JP" .state)/$(field "$JP" .native_id)" "running/$NP" \
    "... still running, as the same Slurm job"
t_is "$(squeue -h -t all -o '%k' | grep -cx "loom:$JP")" 1 "Slurm has it once"

# ---- and one slurmrest started, adopted by the pack ---------------------------------
submit '{"name":"long2","command":["sleep","300"],"request":{"cluster":"slurm"}}'
JR=$JOB
wait_for '[ "$(field "$JR" .state)" = running ]' 30
NR=$(field "$JR" .native_id)
t_is "$(squeue -h -j "$NR" -o %u)" "$T_USER" "slurmrest started job $JR as $T_USER's, its account"
loomd_stop
conf "adaptor = script" "pack = slurm"
loomd_start || t_bail "loomd did not start with the pack"
# The pack answers a found job as it answers a new one: "started".
wait_for 'grep -Eq "job=$JR cluster=slurm (started|re-attached)" "$T/loomd.log"' 30
t_ok $? "the pack is asked to start slurmrest's job again, after the restart"
t_is "$(field "$JR" .state)/$(field "$JR" .native_id)" "running/$NR" \
    "... still running, as the same Slurm job"
t_is "$(squeue -h -t all -o '%k' | grep -cx "loom:$JR")" 1 "Slurm has it once"
api DELETE "/v1/jobs/$JR" >/dev/null
api DELETE "/v1/jobs/$JP" >/dev/null
wait_for '[ "$(field "$JR" .state)/$(field "$JP" .state)" = cancelled/cancelled ]' 30
t_is "$(field "$JR" .state)/$(field "$JP" .state)" cancelled/cancelled \
    "both cancel through the pack"
loomd_stop
t_is $? 0 "loomd stops with status 0"

# ---- a job its user holds, Loom's to start (hold_for_loom) ----------------------
conf "adaptor = slurmrest" "url = $SLURM_RESTD_URL" \
    "jwt_key_file = $SLURM_JWT_KEY" "hold_for_loom = yes"
loomd_start || t_bail "loomd did not start with hold_for_loom"
mkdir -p "$T/native"
NS=$(sbatch --parsable -H -N 1 -c 2 -t 5 -J held-s -o "$T/native/s.out" \
    --wrap 'echo ran on $SLURMD_NODENAME')
loom_id_of() {
    api GET "/v1/jobs?cluster=slurm" >/dev/null
    py '" ".join(j["id"] for j in d["items"] if j["native_id"] == "'"$1"'")' "$BODY"
}
wait_for '[ -n "$(loom_id_of "$NS")" ]' 30
JH=$(loom_id_of "$NS")
t_is "$(field "$JH" .held_for_loom)/$(field "$JH" .request.cpus_per_node)/$(field "$JH" .request.walltime_s)" \
    "true/2/300" "sbatch -H: held for Loom, with its size from slurmrestd"
wait_for '[ "$(field "$JH" .state)" = completed ]' 60
t_is "$(field "$JH" .state)/$(field "$JH" .native_id)" "completed/$NS" \
    "Loom released it onto its nodes through slurmrestd, and it completed"
t_like "$(cat "$T/native/s.out" 2>/dev/null)" "^ran on $(field "$JH" .nodes.0)\$" \
    "it ran on the node Loom chose"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
