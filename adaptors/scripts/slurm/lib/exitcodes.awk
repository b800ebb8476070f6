# exitcodes.awk - "JOBID EXITCODE" lines for the cache of the `jobs` op,
# from `scontrol show job -o` (one line of KEY=VALUE words per job).
# SPDX-License-Identifier: MIT
#
# Variables: want, the job ids (separated by spaces) to report; a wanted id
# scontrol did not show gets "-" (unknown for good). ExitCode is looked up
# after JobState= (the job's name, which comes before, could hold anything).

BEGIN {
    n = split(want, w, " ")
    for (i = 1; i <= n; i++)
        WANT[w[i]] = 1
}

# A job's line may go on over several lines (a name with a newline).
/^JobId=[0-9]+ / {
    if (rec != "")
        job(rec)
    rec = $0
    next
}
rec != "" { rec = rec "\n" $0 }

function job(r,    id, k, ec) {
    id = substr(r, 7, index(r, " ") - 7)
    if (!(id in WANT) || (id in DONE))
        return
    k = index(r, " JobState=")
    if (k)
        r = substr(r, k)
    ec = "-"
    if (match(r, / ExitCode=[0-9]+:[0-9]+ /))
        ec = substr(r, RSTART + 10, RLENGTH - 11)
    print id, ec
    DONE[id] = 1
}

END {
    if (rec != "")
        job(rec)
    for (i = 1; i <= n; i++)
        if (!(w[i] in DONE))
            print w[i], "-"
}
