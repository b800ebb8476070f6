# jobs.awk - qstat -f into the jobs answer.
# SPDX-License-Identifier: MIT
#
# `qstat -f` of Torque, OpenPBS (with -x) or Slurm's Torque
# wrappers into the protocol's jobs answer.
#
# Variables (-v): FLAVOR (torque, openpbs, slurm), TZOFF (seconds east of
# UTC), CANCELLED (a file of native ids this pack cancelled), KEEP (where
# to write those of them still listed; optional), MODE ("json", the
# default, or "list": lines "native<TAB>state<TAB>loom id").
#
# Each job is "Job Id: ID" then indented "Attribute = value" lines. Torque
# and OpenPBS indent 4 spaces and fold long values onto lines that start
# with a tab; the wrappers indent with a tab and never fold. Times are
# ctime(3) strings in local time. Which attribute holds which time:
#   submit: ctime (Torque, OpenPBS: creation); qtime (the wrappers, whose
#           ctime is the end time)
#   start:  start_time (Torque), stime (OpenPBS), mtime (the wrappers)
#   end:    comp_time (Torque), obittime (OpenPBS), ctime (the wrappers,
#           finished jobs only)
# The wrappers show a held job as Q with Priority = 0 (Slurm's hold) and
# have no exit status: a finished job that ran is "completed" unless this
# pack cancelled it.

function flush(    st, state, code, ex, sig, loom, nodes, owner, sub_t, \
                   start_t, end_t, reason, o, e) {
    if (id == "")
        return
    st = A["job_state"]
    ex = ("exit_status" in A) ? A["exit_status"] : A["Exit_status"]
    start_t = first_time(A["start_time"], A["stime"])
    end_t = first_time(A["comp_time"], A["obittime"])
    sub_t = first_time(A["ctime"], A["qtime"])
    if (FLAVOR == "slurm") {
        sub_t = first_time(A["qtime"])
        start_t = st == "Q" ? "" : first_time(A["mtime"])
        end_t = st == "C" ? first_time(A["ctime"]) : ""
    }
    code = ""
    if (st ~ /^[CFX]$/) {
        if (ex ~ /^-?[0-9]+$/) {
            ex += 0
            code = ex >= 256 ? 128 + ex % 256 : ex
        }
        if (id in WAS_CANCELLED)
            state = "cancelled"
        else if (FLAVOR == "openpbs" && A["substate"] == "91")
            state = "cancelled"
        else if (ex == "")      # ended before it ran, or the wrappers
            state = A["exec_host"] == "" ? "cancelled" : "completed"
        else
            state = ex == 0 ? "completed" : "failed"
    } else if (st == "H" || (FLAVOR == "slurm" && st == "Q" && \
                              A["Priority"] == "0")) {
        state = "held"          # the wrappers show a held job as Q, priority 0
    } else if (st ~ /^[QWT]$/) {
        state = "pending"
    } else if (st ~ /^[REB]$/) {
        state = "running"
    } else if (st == "S" || (st == "U" && FLAVOR != "slurm")) {
        state = "suspended"
    } else if (st == "M") {
        state = "cancelled"     # moved to another server: gone from here
    } else {
        state = "pending"
    }
    if (id in WAS_CANCELLED && KEEP != "")
        print id > KEEP
    loom = A["Job_Name"]
    loom = (loom ~ /^loom-[0-9]+$/) ? substr(loom, 6) : ""
    if (MODE == "list") {
        print id "\t" state "\t" loom
        id = ""
        split("", A)
        return
    }
    nodes = state ~ /^(pending|held)$/ ? "" : exec_hosts(A["exec_host"])
    owner = A["Job_Owner"]
    sub(/@.*/, "", owner)
    reason = state ~ /^(running|completed)$/ ? "" : A["comment"]
    o = out_path(A["Output_Path"])
    e = out_path(A["Error_Path"])
    items = items (items == "" ? "" : ",") \
        "{\"native_id\":" jstr(id) ",\"loom_id\":" jstr_or_null(loom) \
        ",\"name\":" jstr_or_null(A["Job_Name"]) \
        ",\"owner\":" jstr_or_null(owner) ",\"state\":" jstr(state) \
        ",\"nodes\":" jarr(nodes, "\\+") \
        ",\"submit_time\":" jnum(sub_t) ",\"start_time\":" jnum(start_t) \
        ",\"end_time\":" jnum(end_t) ",\"exit_code\":" jnum(code) \
        ",\"reason\":" jstr_or_null(reason) \
        ",\"stdout\":" jstr_or_null(o) ",\"stderr\":" jstr_or_null(e) "}"
    id = ""
    split("", A)
}

function first_time(a, b,    t) {
    t = ctime_epoch(a)
    if (t == "")
        t = ctime_epoch(b)
    return t
}

# "n1/0-1+n2/0-1" (Torque), "n1/0*2+n2/0*2" (OpenPBS), "n1/2+n2/2" (the
# wrappers): "n1+n2".
function exec_hosts(s,    parts, n, i, out, h) {
    out = ""
    n = split(s, parts, "+")
    for (i = 1; i <= n; i++) {
        h = parts[i]
        sub(/\/.*/, "", h)
        gsub(/[ \t]/, "", h)
        if (h != "")
            out = out (out == "" ? "" : "+") h
    }
    return out
}

# "host:/path" -> "/path".
function out_path(s) {
    if (match(s, /^[^\/:]*:/))
        s = substr(s, RLENGTH + 1)
    return s
}

BEGIN {
    items = ""
    id = ""
    if (CANCELLED != "")
        while ((getline c < CANCELLED) > 0)
            if (c != "")
                WAS_CANCELLED[c] = 1
}

/^Job Id:/ {
    flush()
    id = $0
    sub(/^Job Id:[ \t]*/, "", id)
    sub(/[ \t\r]+$/, "", id)
    indent = ""
    last = ""
    next
}

id == "" { next }

/^[ \t]*$/ { next }

{
    line = $0
    sub(/\r$/, "", line)
    c = substr(line, 1, 1)
    if (indent == "" && line ~ /^[ \t]+[A-Za-z_][A-Za-z0-9_.]* =( |$)/)
        indent = c
    if (c == indent && line ~ /^[ \t]+[A-Za-z_][A-Za-z0-9_.]* =( |$)/) {
        sub(/^[ \t]+/, "", line)
        i = index(line, " =")
        last = substr(line, 1, i - 1)
        A[last] = substr(line, i + 3)
    } else if (c == "\t" && last != "") {
        A[last] = A[last] substr(line, 2)   # a folded value goes on
    }
}

END {
    flush()
    if (MODE != "list")
        printf "{\"complete\":true,\"items\":[%s]}\n", items
}
