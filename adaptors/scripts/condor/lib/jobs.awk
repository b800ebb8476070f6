# jobs.awk - condor_q and condor_history -af:t into the jobs answer.
# SPDX-License-Identifier: MIT
#
# `condor_q -allusers -af:t ...` and `condor_history -af:t ...`
# (the attributes in condor.sh's JOB_ATTRS, then the reason) into the
# protocol's jobs answer. Give the queue's output first: a job found in both
# (it just left the queue) is taken as the history says.
#
# Variables (-v): MODE ("json", the default, or "list": lines
# "native<TAB>state<TAB>loom id").
#
# Fields: 1 ClusterId, 2 ProcId, 3 JobStatus, 4 Owner, 5 LoomId, 6 QDate,
# 7 JobStartDate, 8 JobCurrentStartDate, 9 CompletionDate,
# 10 EnteredCurrentStatus, 11 ExitCode, 12 ExitBySignal, 13 ExitSignal,
# 14 RemoteHost, 15 LastRemoteHost, 16 Out, 17 Err, 18 JobBatchName, 19 Cmd,
# 20 HoldReason when held, else RemoveReason. Times are epoch seconds;
# "undefined" is HTCondor's empty value. A line that does not start with
# three numbers goes on the reason of the job before (a reason may hold a
# newline).
#
# JobStatus: 1 Idle -> pending, 2 Running and 6 Transferring Output ->
# running, 3 Removed -> cancelled (failed when the walltime's
# periodic_remove removed it), 4 Completed -> completed (exit 0) or failed
# (ExitBySignal: exit code 128 + signal), 5 Held -> held, 7 Suspended ->
# suspended.

function adval(s) {
    return (s == "undefined" || s == "error") ? "" : s
}

function adtime(s) {
    s = adval(s)
    return (s ~ /^[0-9]+$/ && s + 0 > 0) ? s + 0 : ""
}

function host_of(s) {
    s = adval(s)
    sub(/^[^@]*@/, "", s)
    return s
}

function record(f,    id, js, state, code, start_t, end_t, name, nodes, reason, loom) {
    id = f[1] "." f[2]
    js = f[3] + 0
    reason = adval(f[20])
    code = ""
    start_t = adtime(f[8])
    if (start_t == "")
        start_t = adtime(f[7])
    end_t = ""
    if (js == 1) state = "pending"
    else if (js == 2 || js == 6) state = "running"
    else if (js == 5) state = "held"
    else if (js == 7) state = "suspended"
    else if (js == 3) {
        state = reason ~ /PeriodicRemove|periodic_remove|[Ww]alltime/ ? "failed" : "cancelled"
        end_t = adtime(f[9])
        if (end_t == "")
            end_t = adtime(f[10])
    } else if (js == 4) {
        if (adval(f[12]) == "true") {
            state = "failed"
            code = 128 + (adval(f[13]) ~ /^[0-9]+$/ ? f[13] : 0)
        } else {
            code = adval(f[11]) ~ /^-?[0-9]+$/ ? f[11] + 0 : ""
            state = code == "" || code == 0 ? "completed" : "failed"
        }
        end_t = adtime(f[9])
        if (end_t == "")
            end_t = adtime(f[10])
        reason = ""
    } else state = "pending"
    loom = adval(f[5])
    if (loom !~ /^[0-9]+$/)
        loom = ""
    if (!(id in ITEM))
        IDS[++N] = id
    if (MODE == "list") {
        ITEM[id] = id "\t" state "\t" loom
        return
    }
    if (state ~ /^(running|suspended)$/)
        nodes = host_of(f[14])
    else if (state ~ /^(completed|failed|cancelled)$/)
        nodes = host_of(f[15])
    else
        nodes = ""
    name = adval(f[18])
    if (name == "") {
        name = adval(f[19])
        sub(/.*\//, "", name)
    }
    ITEM[id] = "{\"native_id\":" jstr(id) ",\"loom_id\":" jstr_or_null(loom) \
        ",\"name\":" jstr_or_null(name) ",\"owner\":" jstr_or_null(adval(f[4])) \
        ",\"state\":" jstr(state) ",\"nodes\":" jarr(nodes, " ") \
        ",\"submit_time\":" jnum(adtime(f[6])) ",\"start_time\":" jnum(start_t) \
        ",\"end_time\":" jnum(end_t) ",\"exit_code\":" jnum(code) \
        ",\"reason\":" jstr_or_null(state ~ /^(held|cancelled|failed)$/ ? reason : "") \
        ",\"stdout\":" jstr_or_null(adval(f[16])) \
        ",\"stderr\":" jstr_or_null(adval(f[17])) "}"
}

function flush() {
    if (have)
        record(F)
    have = 0
}

BEGIN {
    items = ""
    N = 0
    have = 0
}

{
    line = $0
    sub(/\r$/, "", line)
    if (line ~ /^\t[0-9]/)
        line = substr(line, 2)  # -af:t may put a tab before the first field
    if (line ~ /^[0-9]+\t[0-9]+\t[0-9]+\t/) {
        flush()
        n = split(line, F, "\t")
        for (i = 21; i <= n; i++)
            F[20] = F[20] "\t" F[i]    # a tab in the reason
        have = n >= 20
    } else if (have) {
        F[20] = F[20] " " line         # a newline in the reason
    }
}

END {
    flush()
    for (i = 1; i <= N; i++) {
        if (MODE == "list")
            print ITEM[IDS[i]]
        else
            items = items (items == "" ? "" : ",") ITEM[IDS[i]]
    }
    if (MODE != "list")
        printf "{\"complete\":true,\"items\":[%s]}\n", items
}
