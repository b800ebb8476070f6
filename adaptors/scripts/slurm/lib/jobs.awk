# jobs.awk - the answer of the `jobs` op from squeue's lines.
# SPDX-License-Identifier: MIT
#
# Input: squeue -h -t all -o with JOBS_FIELDS (lib/formats.sh): each record
# starts with \036 and has fourteen fields separated by \037, the name last:
#   jobid state reason user nodes submit start end nnodes cpus memory
#   timelimit comment name
# (times in epoch seconds: SLURM_TIME_FORMAT=%s). A line that does not
# start with \036 continues the name of the record before (a name with a
# newline); a name may even hold \037. A job its user holds (JobHeldUser)
# gets "request" from nnodes, cpus (per node), memory ("4G") and timelimit
# ("1-02:03:04").
#
# Variables:
#   cache    file of "JOBID EXITCODE" lines (EXITCODE as scontrol prints it,
#            "3:0", or "-" when scontrol no longer knew the job): the exit
#            codes of finished jobs, fetched once per job. Entries of jobs
#            squeue no longer lists are dropped (the file is rewritten).
#   missing  a file name, or empty. When set and a finished job other than
#            COMPLETED has no cache entry, nothing is printed: the ids go to
#            that file, one a line, and the exit status is 3 (the caller
#            asks scontrol and runs this again with missing empty).
#   ucache   file of usage lines (lib/usage.awk: "JOBID USER_MS SYSTEM_MS
#            RSS_KB", or "JOBID wait SINCE" while sacct lacks the job's
#            end), or empty: the cluster has no accounting, every usage is
#            null. Rewritten like cache.
#   umissing like missing, for finished jobs without a usage entry or still
#            waiting for one (the caller asks sacct); with missing.
#   grace    seconds a finished job waits for its record in sacct (default
#            30); meanwhile it is listed as it was before it ended
#            (running, or pending when it never started), so that Loom
#            takes its end and its usage together; then it is listed ended
#            without usage, and sacct is not asked again.
#   noacct   a file holding when sacct said the cluster has no accounting
#            (epoch seconds): for 10 minutes from then, as if ucache were
#            empty.
#
# Job states (squeue's compact codes):
#   PD pending (held when the reason is JobHeldUser/JobHeldAdmin);
#   R CG CF RS SI SO running; S ST suspended; CD completed;
#   F TO NF OOM BF DL PR failed; CA RV cancelled; RQ RF pending;
#   RH RD SE held; anything else running when it has nodes, else pending.
# exit_code: 0 for CD; for other finished jobs from scontrol's ExitCode
# "code:signal": 128+signal when a signal ended it, else code; null for a
# cancelled job that has neither (it never ran). loom_id: the comment
# "loom:<id>" that `start` gives; null for jobs submitted to Slurm directly.
# NF adds "node_failure": true: Loom requeues such a job as a lost one.

BEGIN {
    FS = "\037"
    split("PD:pending R:running CG:running CF:running RS:running " \
        "SI:running SO:running S:suspended ST:suspended CD:completed " \
        "F:failed TO:failed NF:failed OOM:failed BF:failed DL:failed " \
        "PR:failed CA:cancelled RV:cancelled RQ:pending RF:pending " \
        "RH:held RD:held SE:held", m, " ")
    for (i in m) {
        k = index(m[i], ":")
        STATE[substr(m[i], 1, k - 1)] = substr(m[i], k + 1)
    }
    FINISHED["completed"] = FINISHED["failed"] = FINISHED["cancelled"] = 1
    ncache = 0
    if (cache != "") {
        while ((getline line < cache) > 0) {
            split(line, p, " ")
            if (p[1] != "" && !(p[1] in EXIT)) {
                EXIT[p[1]] = p[2]
                CORDER[++ncache] = p[1]
            }
        }
        close(cache)
    }
    srand()
    NOW = srand()
    UMFILE = umissing # written (empty) at status 3 even without accounting
    # no accounting, as sacct said less than 10 minutes ago: no usage
    if (noacct != "" && (getline t < noacct) > 0 && NOW - t < 600)
        ucache = umissing = ""
    nuse = 0
    if (ucache != "") {
        while ((getline line < ucache) > 0) {
            k = index(line, " ")
            if (k < 2)
                continue
            id = substr(line, 1, k - 1)
            if (!(id in USE))
                UORDER[++nuse] = id
            else
                udup = 1
            USE[id] = substr(line, k + 1) # the last line of a job wins
        }
        close(ucache)
    }
    if (grace == "")
        grace = 30
    rec = ""
    nout = 0
    nmiss = 0
    numiss = 0
}

# usage_of(ID): the "usage" member of a finished job, or "null"; sets
# HOLD when the job still waits for its record.
function usage_of(id,    u, p, waiting) {
    HOLD = 0
    if (ucache == "")
        return "null"
    u = (id in USE) ? USE[id] : ""
    split(u, p, " ")
    waiting = u ~ /^wait / && NOW - p[2] < grace
    if (u == "" || waiting) {
        if (umissing != "")
            UMISS[++numiss] = id
        else
            HOLD = waiting
        return "null"
    }
    if (split(u, p, " ") != 3 || u ~ /^wait /) # past the grace time
        return "null"
    return "{\"user_cpu_ms\": " p[1] ", \"system_cpu_ms\": " p[2] \
        ", \"max_rss_kb\": " p[3] "}"
}

# mib("4G"): squeue's memory (default unit MiB) in MiB.
function mib(s,    n, u) {
    n = s + 0
    u = substr(s, length(s))
    if (u == "K") return int(n / 1024)
    if (u == "G") return n * 1024
    if (u == "T") return n * 1024 * 1024
    return int(n)
}

# seconds("1-02:03:04"): a time limit in seconds (0 when UNLIMITED or
# unknown: Loom's default then).
function seconds(s,    d, k, p, n, t) {
    d = 0
    if ((k = index(s, "-")) > 0) {
        d = substr(s, 1, k - 1) + 0
        s = substr(s, k + 1)
    }
    if (s !~ /^[0-9:]+$/)
        return 0
    n = split(s, p, ":")
    t = n == 3 ? p[1] * 3600 + p[2] * 60 + p[3] : n == 2 ? p[1] * 60 + p[2] : p[1] * 60
    return d * 86400 + t
}

/^\036/ {
    if (rec != "")
        job(rec)
    rec = substr($0, 2)
    next
}
rec != "" { rec = rec "\n" $0 }

function job(r,    f, n, i, name, st, state, nodes, nn, ec, loom, start, end,
             req, use, why, nf) {
    n = split(r, f, "\037")
    if (n < 14)
        return
    name = f[14]
    for (i = 15; i <= n; i++)
        name = name "\037" f[i]
    LISTED[f[1]] = 1
    st = f[2]
    state = (st in STATE) ? STATE[st] : (f[5] != "" ? "running" : "pending")
    if (state == "pending" && f[3] ~ /^JobHeld/)
        state = "held"
    req = ""
    if (state == "held" && f[3] == "JobHeldUser")
        req = sprintf(", \"request\": {\"nodes\": %d, \"cpus_per_node\": %d, " \
            "\"memory_mb\": %d, \"walltime_s\": %d}", f[9] + 0, f[10] + 0,
            mib(f[11]), seconds(f[12]))
    use = "null"
    HOLD = 0
    if (state in FINISHED) {
        use = usage_of(f[1])
        if (HOLD) # as squeue showed it before it ended
            state = f[5] != "" && f[7] + 0 > 0 ? "running" : "pending"
    }
    ec = "null"
    if (st == "CD" && !HOLD)
        ec = 0
    else if (state in FINISHED) {
        if (f[1] in EXIT)
            ec = exit_code(EXIT[f[1]], state)
        else if (missing != "") {
            MISS[++nmiss] = f[1]
            return
        }
    }
    nn = hl_expand(f[5], nodes)
    start = (nn && state != "pending" && state != "held") ? jint_null(f[7]) : "null"
    end = (state in FINISHED) ? jint_null(f[8]) : "null"
    loom = f[13] ~ /^loom:[A-Za-z0-9._-]+$/ ? jstr(substr(f[13], 6)) : "null"
    why = f[3] == "None" || HOLD ? "" : f[3]
    if (st == "NF" && !HOLD && why == "") # squeue gives no reason for it
        why = "node failure: Slurm ended the job (NODE_FAIL)"
    nf = st == "NF" && !HOLD ? ", \"node_failure\": true" : ""
    OUTL[++nout] = sprintf("{\"native_id\": %s, \"loom_id\": %s, \"name\": %s, " \
        "\"owner\": %s, \"state\": \"%s\", \"nodes\": %s, \"submit_time\": %s, " \
        "\"start_time\": %s, \"end_time\": %s, \"exit_code\": %s, " \
        "\"reason\": %s%s, \"stdout\": null, \"stderr\": null, \"usage\": %s%s}", \
        jstr(f[1]), loom, jstr(name), jstr_null(f[4]), state, jarr(nodes, nn), \
        jint_null(f[6]), start, end, ec, \
        jstr_null(why), nf, use, req)
    split("", nodes)
}

function exit_code(raw, state,    p) {
    if (split(raw, p, ":") != 2 || p[1] !~ /^[0-9]+$/ || p[2] !~ /^[0-9]+$/)
        return "null"
    if (p[2] > 0)
        return 128 + p[2]
    if (state == "cancelled" && p[1] == 0)
        return "null"
    return p[1] + 0
}

END {
    if (rec != "")
        job(rec)
    if (nmiss || numiss) {
        printf "" > missing
        for (i = 1; i <= nmiss; i++)
            print MISS[i] > missing
        if (UMFILE != "") {
            printf "" > UMFILE
            for (i = 1; i <= numiss; i++)
                print UMISS[i] > UMFILE
        }
        exit 3
    }
    printf "{\"complete\": true, \"items\": ["
    for (i = 1; i <= nout; i++)
        printf "%s\n %s", (i > 1 ? "," : ""), OUTL[i]
    printf "%s]}\n", (nout ? "\n" : "")
    # Forget the exit codes of jobs Slurm has purged.
    stale = 0
    for (i = 1; i <= ncache; i++)
        if (!(CORDER[i] in LISTED))
            stale = 1
    if (stale) {
        printf "" > cache
        for (i = 1; i <= ncache; i++)
            if (CORDER[i] in LISTED)
                print CORDER[i], EXIT[CORDER[i]] > cache
        close(cache)
    }
    stale = udup
    for (i = 1; i <= nuse; i++)
        if (!(UORDER[i] in LISTED))
            stale = 1
    if (stale && ucache != "") {
        printf "" > ucache
        for (i = 1; i <= nuse; i++)
            if (UORDER[i] in LISTED)
                print UORDER[i], USE[UORDER[i]] > ucache
        close(ucache)
    }
}
