# jobs.awk - `qstat -g t -xml -u '*'` plus the pack's memory of the jobs it
# saw (gridengine.jobs) to the answer of the jobs op. Needs common.awk.
# SPDX-License-Identifier: MIT
#
# Variables: state     gridengine.jobs, read at the start
#            newstate  where the next gridengine.jobs is written (the op
#                      renames it over the old one)
#            qacct     the qacct binary ("" = never ask qacct; tests)
#            acct      a file of recorded `qacct -j` output to use instead
#            grace     seconds to wait for an accounting record of a job
#                      that left qstat before calling it ended (default 30)
#            keep      how many answers show a finished job (default 3)
#
# gridengine.jobs has one tab-separated line per job:
#   J id loom_id state name owner nodes submit start end exit reason
#     missing_since shown usage
# (usage: "user_ms,system_ms,rss_kb" of an ended job, or empty; a file from
# before it was kept has no such column)
# and "C id" for a job Loom cancelled. `start` appends the J line of the job
# it submitted, `cancel` a C line; this program rewrites the file.
#
# Grid Engine forgets a job once it ends; its exit status is in the
# accounting file. A job this pack saw (or submitted) that is no longer in
# qstat is looked up with `qacct -j ID` (immediate when the cell's
# accounting_flush_time is 0); until a record appears (at most `grace`
# seconds) it is listed as it was last seen. It is listed finished in
# `keep` answers, then forgotten. What it used comes from the same record
# (ru_utime, ru_stime, ru_maxrss), so a job is reported ended only with
# its usage, or without one when the grace time ran out first.

BEGIN {
    if (grace == "") grace = 30
    if (keep == "") keep = 3
    nlive = 0
    nold = 0
    if (state != "") {
        while ((getline line < state) > 0) {
            n = split(line, f, "\t")
            if (f[1] == "C") {
                CANCEL[f[2]] = 1
            } else if (f[1] == "J" && n >= 3) {
                id = f[2]
                if (!(id in OLD))
                    OLDORDER[++nold] = id
                OLD[id] = line
            }
        }
        close(state)
    }
    if (acct != "")
        read_acct(acct)
}

# One job (or array task) per <job_list>; with -g t a parallel job has one
# per queue instance it runs in (MASTER and SLAVEs).
/<job_list/ { inj = 1; jid = jname = jown = jst = jstart = jsub = jqueue = jm = jtask = jslots = ""; next }
inj && /<\/job_list>/ { inj = 0; add_live(); next }
inj {
    t = xtag($0)
    if (t == "JB_job_number") jid = xval($0)
    else if (t == "JB_name") jname = xval($0)
    else if (t == "JB_owner") jown = xval($0)
    else if (t == "state") jst = xval($0)
    else if (t == "JAT_start_time") jstart = getime(xval($0))
    else if (t == "JB_submission_time") jsub = getime(xval($0))
    else if (t == "queue_name") jqueue = xval($0)
    else if (t == "master") jm = xval($0)
    else if (t == "tasks") jtask = xval($0)
    else if (t == "slots") jslots = xval($0)
}

# live_state(LETTERS): Grid Engine's state letters as a Loom job state.
function live_state(s) {
    if (s ~ /E/) return "held"
    if (s ~ /[sST]/) return "suspended"
    if (s ~ /[rt]/) return "running"
    if (s ~ /h/) return "held"
    return "pending"
}

function add_live(    id, host) {
    if (jid == "")
        return
    id = jtask == "" ? jid : jid "." jtask
    host = jqueue
    sub(/^[^@]*@/, "", host)
    if (!(id in LIVE)) {
        LIVE[id] = 1
        LORDER[++nlive] = id
        L_NAME[id] = jname
        L_OWNER[id] = jown
        L_LETTERS[id] = jst
        L_STATE[id] = live_state(jst)
        # held by its user only (not an error): offered to Loom with its
        # size, for a cluster with hold_for_loom
        if (jst ~ /h/ && jst !~ /E/ && jtask == "" && jslots ~ /^[0-9]+$/)
            REQ[id] = "{\"nodes\": 1, \"cpus_per_node\": " jslots "}"
        L_START[id] = jstart
        L_SUB[id] = jsub
        L_NODES[id] = ""
    }
    if (host != "" && index("," L_NODES[id] ",", "," host ",") == 0) {
        if (jm == "MASTER")
            L_NODES[id] = host (L_NODES[id] == "" ? "" : "," L_NODES[id])
        else
            L_NODES[id] = L_NODES[id] (L_NODES[id] == "" ? "" : ",") host
    }
}

function loom_of(name) {
    return name ~ /^loom-[0-9]+$/ ? substr(name, 6) : ""
}

# usage_json(U): the "usage" member for "user_ms,system_ms,rss_kb", or null.
function usage_json(u,    f) {
    if (split(u, f, ",") != 3)
        return "null"
    return "{\"user_cpu_ms\": " f[1] ", \"system_cpu_ms\": " f[2] \
        ", \"max_rss_kb\": " f[3] "}"
}

# acct_usage(R): "user_ms,system_ms,rss_kb" of accounting record R, or ""
# when one of them is not there. ru_maxrss rather than maxvmem: it is what
# max_rss_kb means (getrusage's, as the local cluster's supervisor
# measures it), where maxvmem is the sampled virtual size of all the job's
# processes together (0 for a job shorter than one sample).
function acct_usage(r,    u, s, k) {
    u = acct_ms(ARec[r, "ru_utime"])
    s = acct_ms(ARec[r, "ru_stime"])
    k = acct_kb(ARec[r, "ru_maxrss"])
    return u == "" || s == "" || k == "" ? "" : u "," s "," k
}

function item(id, loom, st, name, owner, nodes, sub_t, start, end, ex, why,
              use) {
    return "{\"native_id\": " jstr(id) ", \"loom_id\": " jstr_or_null(loom) \
        ", \"name\": " jstr_or_null(name) ", \"owner\": " jstr_or_null(owner) \
        ", \"state\": \"" st "\", \"nodes\": " jlist(nodes, ",") \
        ", \"submit_time\": " jstr_or_null(sub_t) ", \"start_time\": " \
        jstr_or_null(start) ", \"end_time\": " jstr_or_null(end) \
        ", \"exit_code\": " jnum_or_null(ex) ", \"reason\": " \
        jstr_or_null(why) ", \"stdout\": null, \"stderr\": null" \
        ", \"usage\": " usage_json(use) \
        (st == "held" && (id in REQ) ? ", \"request\": " REQ[id] : "") "}"
}

function save(id, loom, st, name, owner, nodes, sub_t, start, end, ex, why,
              missing, shown, use) {
    if (newstate != "")
        print "J\t" id "\t" loom "\t" st "\t" name "\t" owner "\t" nodes "\t" \
            sub_t "\t" start "\t" end "\t" ex "\t" why "\t" missing "\t" \
            shown "\t" use > newstate
}

# Accounting records: "qacct -j" output, records separated by "====" lines.
# The last record of a job wins (a rescheduled job has one per run).
function acct_line(line,    k, v) {
    if (line ~ /^====/) {
        A_N++
        return
    }
    k = line
    sub(/[ \t].*/, "", k)
    v = line
    sub(/^[^ \t]*[ \t]+/, "", v)
    sub(/[ \t]+$/, "", v)
    ARec[A_N, k] = v
    if (k == "jobnumber")
        A_ID[A_N] = v
    else if (k == "taskid")
        A_TASK[A_N] = v
}

function read_acct(file,    line) {
    while ((getline line < file) > 0)
        acct_line(line)
    close(file)
}

# find_acct(ID): the number of the last accounting record of job ID (or of
# task ID = job.task), 0 when there is none.
function find_acct(id,    j, t, i, cmd, line, first) {
    j = id
    t = "undefined"
    if (index(id, ".")) {
        j = substr(id, 1, index(id, ".") - 1)
        t = substr(id, index(id, ".") + 1)
    }
    if (acct == "" && qacct != "" && !(j in ASKED)) {
        ASKED[j] = 1
        cmd = qacct " -j " j " 2>/dev/null"
        while ((cmd | getline line) > 0)
            acct_line(line)
        close(cmd)
    }
    for (i = A_N; i >= 1; i--)
        if (A_ID[i] == j && A_TASK[i] == t)
            return i
    return 0
}

function old_job(id,    f, n, loom, st, name, owner, nodes, sub_t, start, end,
                 ex, why, missing, shown, r, fl, fw, use) {
    n = split(OLD[id], f, "\t")
    loom = f[3]; st = f[4]; name = f[5]; owner = f[6]; nodes = f[7]
    sub_t = f[8]; start = f[9]; end = f[10]; ex = f[11]; why = f[12]
    missing = f[13]; shown = f[14] + 0; use = n >= 15 ? f[15] : ""
    if (st !~ /^(completed|failed|cancelled)$/) {
        r = (id in CANCEL) && st ~ /^(pending|held)$/ ? 0 : find_acct(id)
        if (r) {
            fl = ARec[r, "failed"]
            fw = fl
            sub(/[ \t].*/, "", fw)
            ex = ARec[r, "exit_status"]
            sub(/[ \t].*/, "", ex)
            if (ctime3339(ARec[r, "start_time"]) != "")
                start = ctime3339(ARec[r, "start_time"])
            end = ctime3339(ARec[r, "end_time"])
            if (sub_t == "")
                sub_t = ctime3339(ARec[r, "qsub_time"])
            if (nodes == "" && ARec[r, "hostname"] != "")
                nodes = ARec[r, "hostname"]
            if (ARec[r, "owner"] != "")
                owner = ARec[r, "owner"]
            use = acct_usage(r)
            if (id in CANCEL) {
                st = "cancelled"
                why = "cancelled"
            } else if (fw + 0 == 0 && ex + 0 == 0) {
                st = "completed"
                why = ""
            } else {
                st = "failed"
                why = fw + 0 ? "failed " fl : "exit status " ex
                gsub(/ +: */, ": ", why)
            }
        } else if (id in CANCEL) {
            st = "cancelled"
            why = "cancelled"
            end = ""
        } else {
            if (missing == "")
                missing = NOW
            if (NOW - missing < grace) {
                print_item(item(id, loom, st, name, owner, nodes, sub_t,
                                start, end, ex, why, ""))
                save(id, loom, st, name, owner, nodes, sub_t, start, end,
                     ex, why, missing, shown, "")
                KEPT[id] = 1
                return
            }
            ex = ""
            if (st ~ /^(pending|held)$/) {
                st = "cancelled"
                why = "removed from Grid Engine before it ran"
            } else {
                st = "failed"
                why = "ended without an accounting record"
            }
        }
    }
    print_item(item(id, loom, st, name, owner, nodes, sub_t, start, end, ex,
                    why, use))
    if (++shown < keep) {
        save(id, loom, st, name, owner, nodes, sub_t, start, end, ex, why,
             missing, shown, use)
        KEPT[id] = 1
    }
}

function print_item(s) {
    printf "%s\n  %s", (NITEMS++ ? "," : ""), s
}

END {
    printf "{\"complete\": true, \"items\": ["
    for (i = 1; i <= nlive; i++) {
        id = LORDER[i]
        loom = loom_of(L_NAME[id])
        st = L_STATE[id]
        why = ""
        if (L_LETTERS[id] ~ /E/)
            why = "error state " L_LETTERS[id] " (see qstat -j " id "; qmod -cj clears it)"
        else if (st == "held")
            why = "held (" L_LETTERS[id] ")"
        sub_t = L_SUB[id]
        nodes = L_NODES[id]
        if (id in OLD) {
            split(OLD[id], f, "\t")
            if (sub_t == "") sub_t = f[8]
            if (loom == "") loom = f[3]
        }
        print_item(item(id, loom, st, L_NAME[id], L_OWNER[id], nodes, sub_t,
                        L_START[id], "", "", why, ""))
        save(id, loom, st, L_NAME[id], L_OWNER[id], nodes, sub_t, L_START[id],
             "", "", why, "", 0, "")
        KEPT[id] = 1
    }
    for (i = 1; i <= nold; i++)
        if (!(OLDORDER[i] in LIVE))
            old_job(OLDORDER[i])
    if (newstate != "")
        for (id in CANCEL)
            if (id in KEPT)
                print "C\t" id > newstate
    print (NITEMS ? "\n" : "") "]}"
}
