#!/usr/bin/env bash
# 0008-directives.t - scripts with #SBATCH, #$ and #PBS directives through
# the API and loomctl: the request they make, options that win over them,
# the 400 of a directive Loom cannot apply, directives = warn (after a
# reload), loomctl --time in Slurm's formats, loomctl export round trips
# in all three formats (files, env, priority, requeue, hold and
# dependency too, and what a format cannot say refused); loomctl submit
# --comment; and on a local cluster, a script's output file,
# working directory and environment, the job running as dirio-XXXXXX, an
# account this test makes.
# SPDX-License-Identifier: MIT
. "$LOOM_TOP_SRCDIR/tests/lib/harness.sh"

LOOMCTL=$LOOM_TOP_BUILDDIR/loomctl
[ -x "$LOOMCTL" ] || t_bail "$LOOMCTL is not built"

# ctl ARGS...: run loomctl; OUT, ERR, RC.
ctl() {
    "$LOOMCTL" -c "$T/loom.conf" "$@" >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
ctl_diag() {
    t_diag "loomctl exit $RC" "stdout: $OUT" "stderr: $ERR"
}

# The sim cluster runs nothing: jobs of any size are planned there, and no
# job of this test waits for a real node.
CLUSTERS='[cluster sim]
adaptor = sim
nodes = 4
cpus_per_node = 8
memory_mb = 16384
gpus = 4
features = bigmem,ssd
unpinned_jobs = yes
speed = 1
poll_s = 0.2'

pg_start || t_bail "PostgreSQL did not start"
loomd_conf "$CLUSTERS"
loomd_start || t_bail "loomd did not start"
admin_token || t_bail "no admin token"

# submit_script FILE [REQUEST]: POST /v1/jobs with the file's text as
# script (and REQUEST as request); JOB, STATUS, BODY.
submit_script() {
    local body
    body=$(python3 -c 'import json, sys
b = {"script": open(sys.argv[1]).read()}
if len(sys.argv) > 2:
    b["request"] = json.loads(sys.argv[2])
print(json.dumps(b))' "$@")
    JOB=
    api POST /v1/jobs "$body" >/dev/null
    [[ $BODY =~ \"id\":\"([0-9]+)\" ]] && JOB=${BASH_REMATCH[1]}
}

# req ID: "name nodes cpus memory gpus walltime queue features" of a job.
req() {
    job "$1"
    py '"%s %s %s %s %s %s %s %s" % (d["name"], d["request"]["nodes"],
        d["request"]["cpus_per_node"], d["request"]["memory_mb"],
        d["request"]["gpus"], d["request"]["walltime_s"], d["request"]["queue"],
        ",".join(d["request"]["features"]))' "$BODY"
}

# ---- Slurm: the example script, through the API and through loomctl ---------
cat >"$T/job.sh" <<'EOF'
#!/bin/bash
#SBATCH --job-name=sbtest
#SBATCH --nodes=2
#SBATCH --time=00:05:00
echo hello
EOF
submit_script "$T/job.sh"
t_is "$STATUS" 201 "a #SBATCH script is accepted" || t_diag "$BODY"
SB=$JOB
t_is "$(req "$JOB")" "sbtest 2 1 100 0 300 None " \
    "#SBATCH: name sbtest, 2 nodes, 300 s"
t_is "$(jget "$BODY" .script)" "$(cat "$T/job.sh")" \
    "the script is kept as it was sent"
t_is "$(py '[x["fields"] for x in d["directives"]]' "$BODY")" \
    '[["name"], ["request.nodes"], ["request.walltime_s"]]' \
    "the job's directives say what each set"
t_is "$(py 'd["directives"][1]["line"], d["directives"][1]["directive"]' "$BODY")" \
    '[3, "#SBATCH --nodes=2"]' "... with its line and text"

ctl submit "$T/job.sh"
t_is "$RC" 0 "loomctl submit job.sh" || ctl_diag
t_is "$(req "$OUT")" "sbtest 2 1 100 0 300 None " \
    "through loomctl: name sbtest (not job.sh), 2 nodes, 300 s"

# ---- options given win over directives ---------------------------------------
submit_script "$T/job.sh" '{"nodes": 1, "walltime_s": 60}'
t_is "$(req "$JOB")" "sbtest 1 1 100 0 60 None " \
    "the request's nodes and walltime win over the directives"
t_is "$(py '[x.get("ignored") for x in d["directives"]]' "$BODY")" \
    '[null, "the request gives request.nodes", "the request gives request.walltime_s"]' \
    "... and the job's directives say so"
ctl submit --name cli --nodes 1 --time 10 "$T/job.sh"
t_is "$(req "$OUT")" "cli 1 1 100 0 600 None " \
    "loomctl's --name, --nodes and --time win"

# ---- Grid Engine and PBS --------------------------------------------------------
cat >"$T/ge.sh" <<'EOF'
#!/bin/sh
#$ -N getest
#$ -pe smp 4
#$ -l h_rt=0:05:00,h_vmem=1G
#$ -l bigmem=true
date
EOF
ctl submit "$T/ge.sh"
t_is "$RC" 0 "loomctl submit of a #\$ script" || ctl_diag
GE_JOB=$OUT
t_is "$(req "$GE_JOB")" "getest 1 4 4096 0 300 None bigmem" \
    "#\$: name, -pe smp 4, h_rt, h_vmem per slot, a boolean feature"
cat >"$T/pbs.sh" <<'EOF'
#!/bin/sh
#PBS -N pbstest
#PBS -l select=2:ncpus=2:mem=2gb:ngpus=1
#PBS -l walltime=00:05:00
hostname
EOF
submit_script "$T/pbs.sh"
t_is "$STATUS" 201 "a #PBS script is accepted" || t_diag "$BODY"
t_is "$(req "$JOB")" "pbstest 2 2 2048 1 300 None " \
    "#PBS: name, select=2:ncpus=2:mem=2gb:ngpus=1, walltime"

# ---- what Loom cannot apply: 400 naming line and directive ---------------------------
cat >"$T/out.sh" <<'EOF'
#!/bin/bash
#SBATCH --job-name=sbtest
#SBATCH --nodes=2
#SBATCH --time=00:05:00
#SBATCH --exclusive
echo hello
EOF
MSG_OUT='line 5: #SBATCH --exclusive: not supported by Loom: the job request has no exclusive use of nodes'
submit_script "$T/out.sh"
t_is "$STATUS" 400 "--exclusive is refused (the request has no exclusive use)"
t_is "$(jget "$BODY" .error.message)/$(jget "$BODY" .error.field)" \
    "$MSG_OUT/script" "... naming line, directive and why"
printf '#!/bin/sh\n#SBATCH -N 1\n#SBATCH --mail-type=END\ntrue\n' >"$T/mail.sh"
submit_script "$T/mail.sh"
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/line 3: #SBATCH --mail-type=END: not supported by Loom" \
    "an unknown directive is a 400 naming line and directive"
ctl submit "$T/mail.sh"
t_is "$RC/$ERR" "1/loomctl: line 3: #SBATCH --mail-type=END: not supported by Loom (field script)" \
    "loomctl says the same"
printf '#!/bin/sh\n#SBATCH --time=1:75:00\ntrue\n' >"$T/bad.sh"
submit_script "$T/bad.sh"
t_is "$STATUS/$(jget "$BODY" .error.message)" \
    "400/line 2: #SBATCH --time=1:75:00: '1:75:00': the minutes must be 0 to 59" \
    "a bad value is a 400 saying what is wrong"

# ---- loomctl --time: Slurm's formats; --time-s: seconds -----------------------------
for pair in 5:30=330 90=5400 1:00:00=3600 2-03=183600 1-00:00:01=86401; do
    ctl submit --time "${pair%=*}" -- true
    t_is "$(field "$OUT" .request.walltime_s)" "${pair#*=}" \
        "loomctl --time ${pair%=*}: ${pair#*=} s"
done
ctl submit --time-s 45 -- true
t_is "$(field "$OUT" .request.walltime_s)" 45 "loomctl --time-s 45: 45 s"
ctl submit --time 00:00:00 -- true
t_is "$RC/$(head -n 1 <<<"$ERR")" "2/loomctl: --time: '00:00:00' asks for no time limit, which Loom does not take: give one of at most 366 days" \
    "--time 00:00:00 is a usage error saying why"

# ---- directives = warn, after a reload ------------------------------------------------
loomd_conf "$CLUSTERS"
sed -i 's/^\[loomd\]$/[loomd]\ndirectives = warn/' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
t_is "$STATUS" 200 "reload with directives = warn" || t_diag "$BODY"
submit_script "$T/out.sh"
t_is "$STATUS" 201 "warn: the script with --exclusive is accepted" || t_diag "$BODY"
t_is "$(py 'd["warnings"]' "$BODY")" "[\"$MSG_OUT\"]" \
    "... with the warning in the answer"
t_is "$(req "$JOB")" "sbtest 2 1 100 0 300 None " "... and the rest applied"
t_is "$(py 'd["directives"][3].get("ignored")' "$BODY")" \
    "not supported by Loom: the job request has no exclusive use of nodes" \
    "the job's directives show the one ignored"
job "$JOB"
t_is "$STATUS/$(py '"warnings" in d' "$BODY")" 200/false \
    "GET of the job has no warnings"
ctl submit "$T/out.sh"
t_is "$RC" 0 "loomctl submit of it, in warn mode" || ctl_diag
sed -i '/^directives = warn$/d' "$T/loom.conf"
api POST /v1/runtime/reload '{}' >/dev/null
submit_script "$T/out.sh"
t_is "$STATUS" 400 "back to strict by reload: refused again"

# ---- export: the same request, in each format ----------------------------------------------
# files ID: "workdir output error env" of a job.
files() {
    job "$1"
    py '"%s %s %s %s" % (d["workdir"], d["output"], d["error"],
        json.dumps(d["env"], sort_keys=True))' "$BODY"
}
ctl submit --name "round trip" --nodes 2 --cpus-per-node 3 --mem 3000 \
    --gpus 2 --time 1-02:03:04 --env GREETING="it's me" --env B=2 \
    --chdir "$T" --output 'rt-%j.out' --error 'rt-%x.err' "$T/ge.sh"
RT=$OUT
t_is "$(req "$RT")" "round trip 2 3 3000 2 93784 None bigmem" \
    "a job of options and a directive"
t_is "$(files "$RT")" "$T rt-%j.out rt-%x.err {\"B\": \"2\", \"GREETING\": \"it's me\"}" \
    "... with its working directory, output and error names and env"
ctl export --format slurm "$RT"
t_is "$RC" 0 "export --format slurm" || ctl_diag
printf '%s\n' "$OUT" >"$T/exp-slurm.sh"
ctl submit "$T/exp-slurm.sh"
t_is "$RC" 0 "... submitted again" || { ctl_diag; cat "$T/exp-slurm.sh"; }
t_is "$(req "$OUT")" "$(req "$RT")" "... asks for the same (slurm)"
t_is "$(files "$OUT")" "$(files "$RT")" \
    "... with the same working directory, output and error names and env"
t_like "$(cat "$T/exp-slurm.sh")" $'^#!/bin/sh\n#SBATCH --job-name="round trip"\n#SBATCH --nodes=2\n' \
    "the Slurm script begins with the #! line and its directives"
t_like "$(cat "$T/exp-slurm.sh")" $'\n#SBATCH --chdir='"$T"$'\n#SBATCH --output=rt-%j.out\n#SBATCH --error=rt-%x.err\n#SBATCH --export="B=2,GREETING=it\'s me"\n' \
    "... --chdir, --output, --error and --export among them"
t_like "$(cat "$T/exp-slurm.sh")" $'\ndate\n*$' "... then the script's body"
ctl export --format pbs "$RT"
t_is "$RC/$ERR" "1/loomctl: job $RT: its output name 'rt-%j.out' cannot be written as PBS's -o: PBS names have no patterns (%j, %x, ...)" \
    "pbs: an output name with patterns is refused, saying why"
ctl submit --name "round trip" --nodes 2 --cpus-per-node 3 --mem 3000 \
    --gpus 2 --time 1-02:03:04 --env GREETING="it's me" --env B=2 \
    --chdir "$T" --output 'rt.out' --error '100%%.err' "$T/ge.sh"
RTP=$OUT
ctl export --format pbs "$RTP"
t_is "$RC" 0 "export --format pbs of a job whose names have none" || ctl_diag
printf '%s\n' "$OUT" >"$T/exp-pbs.sh"
ctl submit "$T/exp-pbs.sh"
t_is "$RC" 0 "... submitted again" || { ctl_diag; cat "$T/exp-pbs.sh"; }
t_is "$(req "$OUT")" "$(req "$RTP")" "... asks for the same (pbs)"
t_is "$(files "$OUT")" "$T $T/rt.out $T/100%%.err {\"B\": \"2\", \"GREETING\": \"it's me\"}" \
    "... the same working directory and env, the same files named from it"
t_like "$(cat "$T/exp-pbs.sh")" $'\n#PBS -l select=2:ncpus=3:mem=3000mb:ngpus=2:bigmem=true\n#PBS -l walltime=26:03:04\n' \
    "the PBS script's select and walltime"
t_like "$(cat "$T/exp-pbs.sh")" $'\n#PBS -d '"$T"$'\n#PBS -o '"$T"$'/rt.out\n#PBS -e '"$T"$'/100%.err\n#PBS -v "B=2,GREETING=it\'s me"\n' \
    "... -d, -o and -e (absolute: PBS's relative names are the submit directory's), -v"
ctl export --format gridengine "$RT"
t_is "$RC/$ERR" "1/loomctl: job $RT asks for 2 nodes: a Grid Engine script has no node count (-pe smp puts its slots on one node)" \
    "gridengine: a job of 2 nodes is refused, saying why"
ctl export --format gridengine "$GE_JOB"
t_is "$RC" 0 "export --format gridengine" || ctl_diag
printf '%s\n' "$OUT" >"$T/exp-ge.sh"
ctl submit "$T/exp-ge.sh"
t_is "$(req "$OUT")" "$(req "$GE_JOB")" "... submitted again it asks for the same"
t_is "$(files "$OUT")" "$(files "$GE_JOB")" "... and works in the home, as it did"
t_like "$(cat "$T/exp-ge.sh")" $'#\\$ -pe smp 4\n#\\$ -l h_rt=00:05:00\n#\\$ -l h_vmem=1024M\n' \
    "... -pe smp, h_rt and h_vmem per slot"
ctl submit --chdir "$T" --output 'ge-%j.%a-%x.out' --env GREETING="it's me" "$T/ge.sh"
GE2=$OUT
ctl export --format gridengine "$GE2"
t_is "$RC" 0 "export --format gridengine of a job with files and env" || ctl_diag
printf '%s\n' "$OUT" >"$T/exp-ge2.sh"
t_like "$OUT" $'\n#\\$ -wd '"$T"$'\n#\\$ -o ge-\\$JOB_ID.\\$TASK_ID-\\$JOB_NAME.out\n#\\$ -j y\n#\\$ -v "GREETING=it\'s me"\n' \
    "... -wd, -o with Grid Engine's pseudo variables, -j y (one file), -v"
ctl submit "$T/exp-ge2.sh"
t_is "$(req "$OUT")/$(files "$OUT")" "$(req "$GE2")/$(files "$GE2")" \
    "... submitted again it asks for the same, files and env too"
ctl submit --output 'o-%A.out' -- /bin/true
ctl export --format gridengine "$OUT"
t_like "$RC/$ERR" "^1/loomctl: job [0-9]+: its output name 'o-%A.out' cannot be written as Grid Engine's -o: %A" \
    "gridengine: %A is refused, saying why"
ctl submit --env 'L=a,b' -- /bin/true
ctl export --format slurm "$OUT"
t_like "$RC/$ERR" "^1/loomctl: job [0-9]+: its variable L cannot be written as a directive: its value has a ','" \
    "a value with a ',' is refused, naming the variable"
ctl submit --cpus-per-node 3 -- /bin/echo "a b"
CMD=$OUT
ctl export --format slurm "$CMD"
t_like "$OUT" $'\nexec \'/bin/echo\' \'a b\'$' "a command is exported as exec of its words"
printf '%s\n' "$OUT" >"$T/exp-cmd.sh"
ctl submit "$T/exp-cmd.sh"
t_is "$(req "$OUT")" "$(req "$CMD")" "... and asks for the same (name echo too)"
ctl export --format lsf "$CMD"
t_is "$RC/$(head -n 1 <<<"$ERR")" "2/loomctl: --format is slurm, gridengine or pbs, not 'lsf'" \
    "an unknown format is a usage error naming the formats" || ctl_diag

# ---- export: how the job is scheduled (priority, requeue, hold, dependency) -----------------
# sched ID: "priority requeue state dependency" of a job.
sched() {
    job "$1"
    py '"%s %s %s %s" % (d["priority"], d["requeue"], d["state"], d["dependency"])' "$BODY"
}
ctl submit --comment 'kept, with a comma' -- /bin/true
t_is "$(field "$OUT" .comment)" "kept, with a comma" "loomctl submit --comment: the job's comment"
ctl submit --comment "$(head -c 1025 /dev/zero | tr '\0' c)" -- /bin/true
t_is "$RC/$(head -n 1 <<<"$ERR")" "2/loomctl: --comment takes at most 1024 bytes" \
    "... of at most 1024 bytes, checked before it is sent"
ctl submit --hold -- /bin/true
DEP=$OUT
printf '#!/bin/sh\n#SBATCH --no-requeue\necho scheduled\n' >"$T/nrq.sh"
ctl submit --priority -5 --hold --dependency "afterany:$DEP" "$T/nrq.sh"
SCH=$OUT
t_is "$(sched "$SCH")" "-5 False held afterany:$DEP" \
    "a job of priority -5, not requeued, held, waiting for another"
for fmt in slurm gridengine pbs; do
    ctl export --format $fmt "$SCH"
    t_is "$RC" 0 "export --format $fmt of it" || ctl_diag
    printf '%s\n' "$OUT" >"$T/exp-sch-$fmt.sh"
    ctl submit "$T/exp-sch-$fmt.sh"
    t_is "$RC" 0 "... submitted again" || { ctl_diag; cat "$T/exp-sch-$fmt.sh"; }
    t_is "$(sched "$OUT")/$(req "$OUT")" "$(sched "$SCH")/$(req "$SCH")" \
        "... the same priority, requeue, hold and dependency, and request ($fmt)"
done
t_like "$(cat "$T/exp-sch-slurm.sh")" $'\n#SBATCH --nice=5\n#SBATCH --no-requeue\n#SBATCH --hold\n#SBATCH --dependency=afterany:'"$DEP"$'\n' \
    "slurm: --nice=5 (priority -5), --no-requeue, --hold, --dependency"
t_like "$(cat "$T/exp-sch-gridengine.sh")" $'\n#\\$ -p -5\n#\\$ -r n\n#\\$ -h\n#\\$ -hold_jid '"$DEP"$'\n' \
    "gridengine: -p -5, -r n, -h, -hold_jid"
t_like "$(cat "$T/exp-sch-pbs.sh")" $'\n#PBS -p -5\n#PBS -r n\n#PBS -h\n#PBS -W depend=afterany:'"$DEP"$'\n' \
    "pbs: -p -5, -r n, -h, -W depend="
t_is "$(grep -c SBATCH "$T/exp-sch-pbs.sh")" 0 "... the script's own #SBATCH line left out"
ctl submit --hold --dependency "afterok:$DEP:$SCH,afterany:${DEP}" -- /bin/true
X=$OUT
t_is "$(field "$X" .dependency)" "afterok:$DEP:$SCH,afterany:$DEP" "a job waiting for two to succeed and one to end"
ctl export --format gridengine "$X"
t_is "$RC/$ERR" "1/loomctl: job $X: its dependency 'afterok:$DEP:$SCH,afterany:$DEP' cannot be written as Grid Engine's -hold_jid, which waits for whole jobs to end, all of them, however they end (afterany)" \
    "gridengine: a dependency -hold_jid cannot say is refused, naming it"
ctl export --format pbs "$X"
t_like "$OUT" $'\n#PBS -W depend=afterok:'"$DEP:$SCH"$',afterany:'"$DEP"$'\n' "... which PBS's -W depend= can say"
ctl submit --hold --dependency "afterok:$DEP?afterany:$SCH" -- /bin/true
X=$OUT
ctl export --format pbs "$X"
t_is "$RC/$ERR" "1/loomctl: job $X: its dependency '$(field "$X" .dependency)' cannot be written as PBS's -W depend=, which has no 'any of' ('?')" \
    "pbs: 'any of' is refused"
ctl submit --priority 2000 -- /bin/true
X=$OUT
ctl export --format gridengine "$X"
t_is "$RC/$ERR" "1/loomctl: job $X: its priority 2000 cannot be written as Grid Engine's -p (-1023 to 1024)" \
    "a priority outside the system's range is refused, naming it"
ctl export --format slurm "$X"
t_like "$OUT" $'\n#SBATCH --nice=-2000\n' "... which Slurm's --nice can say"

# ---- the record is stored ---------------------------------------------------------------
job "$SB"
BEFORE=$(py 'd["directives"]' "$BODY")
loomd_stop
t_is $? 0 "loomd stops with status 0"
loomd_start || t_bail "loomd did not start again"
job "$SB"
t_is "$(py 'd["directives"]' "$BODY")" "$BEFORE" \
    "the job's directives are the same after a restart"
loomd_stop
t_is $? 0 "loomd stops with status 0"

# ---- files, working directory and environment, on a local cluster -----------------------
# The jobs before ran on sim; from here a local cluster runs them as
# dirio-XXXXXX, whom the identity dirio maps to.
t_account USR dirio || t_bail "cannot make an account"
UH=$T/home/$USR
map_account dirio "$USR"
loomd_conf "$CLUSTERS
[cluster local]
adaptor = local
nodes = 1
cpus_per_node = 1
memory_mb = 1024
poll_s = 0.2"
loomd_start || t_bail "loomd did not start again"
TU=$(token_for dirio user) || t_bail "no token for dirio"
(umask 077 && printf '%s\n' "$TU" >"$T/dirio.token")
# ctl_in DIR ARGS...: loomctl as dirio, run in DIR with FROM_SHELL and
# OTHER set; OUT, ERR, RC.
ctl_in() {
    (cd "$1" && shift && FROM_SHELL=here OTHER=not-asked "$LOOMCTL" \
        --url "$LOOM_URL" --token-file "$T/dirio.token" "$@") \
        >"$T/ctl.out" 2>"$T/ctl.err"
    RC=$?
    OUT=$(cat "$T/ctl.out")
    ERR=$(cat "$T/ctl.err")
}
ended() {
    case $(job_state "$1") in completed | failed | cancelled) return 0 ;; esac
    return 1
}
install -d -m 0755 -o "$USR" -g "$USR" "$UH/w" "$UH/w/sub" "$UH/w/cli" ||
    t_bail "cannot make $UH/w"
cat >"$UH/w/io.sh" <<'EOF'
#!/bin/sh
#SBATCH --output=myout-%j.txt --chdir=sub
#SBATCH --export=FROM_SHELL,FIXED=1
id -un
pwd
echo "[$FROM_SHELL] [$FIXED] [$OTHER]"
echo to-stderr >&2
EOF
ctl_in "$UH/w" submit --cluster local io.sh
t_is "$RC" 0 "loomctl submit of a script with --output, --chdir, --export" || ctl_diag
IO=$OUT
wait_for 'ended "$IO"' 30
job "$IO"
t_is "$(py '[d["state"], d["account"], d["submit_dir"], d["workdir"], d["output"], d["env"]]' "$BODY")" \
    "[\"completed\", \"$USR\", \"$UH/w\", \"$UH/w/sub\", \"myout-%j.txt\", {\"FIXED\": \"1\", \"FROM_SHELL\": \"here\"}]" \
    "it ran as $USR: submit_dir where loomctl ran, workdir sub/ in it, its output name, the env it asked for" ||
    t_diag "$BODY"
t_is "$(stat -c %U "$UH/w/sub/myout-$IO.txt" 2>&1)" "$USR" \
    "myout-$IO.txt is in sub/, owned by $USR"
t_is "$(cat "$UH/w/sub/myout-$IO.txt" 2>&1)" "$USR
$UH/w/sub
[here] [1] []
to-stderr" "id -un said $USR, pwd sub/; FROM_SHELL came from loomctl, FIXED from the line, OTHER not; stderr joined"

ctl_in "$UH/w" submit --cluster local --chdir cli --export NONE io.sh
OV=$OUT
wait_for 'ended "$OV"' 30
t_is "$(field "$OV" .workdir)/$(field "$OV" .env)" "$UH/w/cli/{}" \
    "loomctl's --chdir and --export NONE win over the script's"
t_is "$(sed -n 2,3p "$UH/w/cli/myout-$OV.txt" 2>&1)" "$UH/w/cli
[] [] []" "... it ran in cli/ without the script's variables"

api POST /v1/jobs "$(python3 -c 'import json, sys
print(json.dumps({"script": open(sys.argv[1]).read(), "submit_dir": sys.argv[2],
                  "request": {"cluster": "local"}}))' "$UH/w/io.sh" "$UH/w")" >/dev/null
t_is "$STATUS/$(jget "$BODY" .error.field)" 400/script \
    "through the API without submit_env: 400 on the script"
t_is "$(jget "$BODY" .error.message)" \
    "line 3: #SBATCH --export=FROM_SHELL,FIXED=1: it passes the submitter's environment, which only the client has: submit with 'loomctl submit --export ALL', or give the request's submit_env" \
    "... naming the line and how to submit it"
loomd_stop
t_is $? 0 "loomd stops with status 0"
t_done
