# jobs.awk - bjobs -o into the jobs answer.
# SPDX-License-Identifier: MIT
#
# `bjobs -a -u all -o "<fields> delimiter=';'" -noheader` into
# the protocol's jobs answer.
#
# Variables (-v): TZOFF (seconds east of UTC), NOW (epoch seconds: bjobs
# prints times without a year, "Nov 21 20:00", so a time is taken in NOW's
# year, or the year before when that would be more than a day ahead),
# CANCELLED (a file of native ids this pack cancelled), KEEP (where to write
# those still listed; optional), MODE ("json", the default, or "list":
# lines "native<TAB>state<TAB>loom id<TAB>LSF status").
#
# Fields (lsf.sh's BJOBS_FORMAT): 1 jobid, 2 stat, 3 user, 4 queue,
# 5 exit_code, 6 submit_time, 7 start_time, 8 finish_time, 9 exec_host
# ("4*hostA:2*hostB"), 10 output_file, 11 error_file, 12 job_name (the rest
# of the line: a name may hold ';'). "-" is LSF's empty value. An element of
# a job array shares the array's jobid; its name ends in "[N]", and its
# native id is "jobid[N]" as bkill and bjobs take it.
#
# States: PEND, WAIT -> pending; PSUSP -> held (bstop of a pending job);
# RUN, UNKWN (mbatchd lost the host; the job may still run) -> running;
# USUSP, SSUSP -> suspended; DONE, POST_DONE -> completed; EXIT, POST_ERR,
# ZOMBI -> failed, or cancelled when this pack cancelled the job (bkill
# leaves EXIT with the signal's exit code, 130 to 143).

function lsf_time(s,    f, n, t, mo, y, e) {
    sub(/[ \t]+[A-Z]$/, "", s)      # " E" estimated, " L" limit, " X"
    n = split(s, f, /[ \t]+/)
    if (n < 3 || (mo = month_num(f[1])) == 0 || f[2] !~ /^[0-9]+$/)
        return ""
    if (split(f[3], t, ":") < 2)
        return ""
    if (n >= 4 && f[4] ~ /^[0-9][0-9][0-9][0-9]$/)
        return local_epoch(f[4] + 0, mo, f[2] + 0, t[1] + 0, t[2] + 0, t[3] + 0)
    y = year_of(NOW)
    e = local_epoch(y, mo, f[2] + 0, t[1] + 0, t[2] + 0, t[3] + 0)
    if (e > NOW + 86400)
        e = local_epoch(y - 1, mo, f[2] + 0, t[1] + 0, t[2] + 0, t[3] + 0)
    return e
}

function dash(s) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t\r]+$/, "", s)
    return s == "-" ? "" : s
}

# "4*hostA:2*hostB" -> "hostA:hostB"
function exec_hosts(s,    p, n, i, out, h) {
    out = ""
    n = split(s, p, ":")
    for (i = 1; i <= n; i++) {
        h = p[i]
        sub(/^[0-9]+\*/, "", h)
        if (h != "")
            out = out (out == "" ? "" : ":") h
    }
    return out
}

BEGIN {
    FS = ";"
    items = ""
    if (CANCELLED != "")
        while ((getline c < CANCELLED) > 0)
            if (c != "")
                WAS_CANCELLED[c] = 1
}

$1 == "JOBID" || NF < 12 { next }

{
    id = dash($1)
    if (id !~ /^[0-9]+$/)
        next
    st = dash($2)
    name = $12
    for (i = 13; i <= NF; i++)
        name = name ";" $i
    name = dash(name)
    if (match(name, /\[[0-9]+\]$/))
        id = id substr(name, RSTART)
    ex = dash($5)
    start_t = lsf_time(dash($7))
    end_t = ""
    code = ""
    if (st ~ /^(DONE|POST_DONE)$/) {
        state = "completed"
        code = ex ~ /^[0-9]+$/ ? ex : 0
    } else if (st ~ /^(EXIT|POST_ERR|ZOMBI)$/) {
        state = (id in WAS_CANCELLED) ? "cancelled" : "failed"
        code = ex
    } else if (st == "PSUSP") {
        state = "held"
    } else if (st ~ /^(RUN|UNKWN)$/) {
        state = "running"
    } else if (st ~ /^(USUSP|SSUSP)$/) {
        state = "suspended"
    } else {
        state = "pending"
    }
    if (state ~ /^(completed|failed|cancelled)$/)
        end_t = lsf_time(dash($8))
    if ((id in WAS_CANCELLED) && KEEP != "")
        print id > KEEP
    loom = name ~ /^loom-[0-9]+$/ ? substr(name, 6) : ""
    if (MODE == "list") {
        print id "\t" state "\t" loom "\t" st
        next
    }
    nodes = state ~ /^(pending|held)$/ ? "" : exec_hosts(dash($9))
    reason = ""
    if (st == "UNKWN")
        reason = "UNKWN: mbatchd lost contact with the execution host"
    else if (st == "SSUSP")
        reason = "SSUSP: suspended by LSF (load or run window)"
    items = items (items == "" ? "" : ",") \
        "{\"native_id\":" jstr(id) ",\"loom_id\":" jstr_or_null(loom) \
        ",\"name\":" jstr_or_null(name) ",\"owner\":" jstr_or_null(dash($3)) \
        ",\"state\":" jstr(state) ",\"nodes\":" jarr(nodes, ":") \
        ",\"submit_time\":" jnum(lsf_time(dash($6))) \
        ",\"start_time\":" jnum(start_t) ",\"end_time\":" jnum(end_t) \
        ",\"exit_code\":" jnum(code) ",\"reason\":" jstr_or_null(reason) \
        ",\"stdout\":" jstr_or_null(dash($10)) \
        ",\"stderr\":" jstr_or_null(dash($11)) "}"
}

END {
    if (MODE != "list")
        printf "{\"complete\":true,\"items\":[%s]}\n", items
}
