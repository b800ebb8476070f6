# nodes.awk - `qhost -q -xml` to the answer of the nodes op (and, with
# mode=queues, of the queues op). Needs common.awk.
# SPDX-License-Identifier: MIT
#
# Variables: queue    the queue Loom places jobs in (its slots are a node's
#                     cpus; other queues count when a host lacks it)
#            reasons  gridengine.nodes: "host<TAB>state<TAB>reason" lines
#                     written by set-node-state (state drain or down)
#            mode     "nodes" (default) or "queues"
#            limits   for queues: "queue<TAB>h_rt" lines (from qconf -sq)
#
# A node per exec host (the pseudo-host "global" is skipped):
#   cpus        slots of the host's instance of `queue` (else the largest
#               instance, else num_proc); cpus_alloc: slots used, all queues
#   memory_mb   mem_total
#   state       from its queue instances' states: u (execd not heard
#               from) -> down; E (error) -> unknown; every instance
#               disabled (d, D) or suspended (s, S, C) -> drained, or
#               draining while slots are used (down when set-node-state
#               said down); else idle / mixed / allocated by slots used.
#               No instance at all: drained ("no queue instance").

BEGIN {
    FS = "\n"
    if (reasons != "") {
        while ((getline line < reasons) > 0) {
            split(line, f, "\t")
            RSTATE[f[1]] = f[2]
            RTEXT[f[1]] = f[3]
        }
        close(reasons)
    }
    if (limits != "") {
        while ((getline line < limits) > 0) {
            split(line, f, "\t")
            HRT[f[1]] = f[2]
        }
        close(limits)
    }
    nh = 0
    nq = 0
}

/<host name=/ {
    h = xattr($0, "name")
    if (h == "global") {
        h = ""
        next
    }
    HOST[++nh] = h
    next
}

h == "" { next }

/<hostvalue / {
    HV[h, xattr($0, "name")] = xval($0)
    next
}

/<queue name=/ {
    q = xattr($0, "name")
    if (!((h, q) in QI)) {
        QI[h, q] = 1
        HQ[h] = HQ[h] (HQ[h] == "" ? "" : "\t") q
        if (!(q in QN)) {
            QN[q] = 0
            QORDER[++nq] = q
        }
        QN[q]++
    }
    next
}

/<queuevalue / {
    QV[h, xattr($0, "qname"), xattr($0, "name")] = xval($0)
    next
}

/<\/host>/ { h = "" }

function node(h,    n, qs, i, q, st, slots, used, cpus, alloc, down, err,
              off, state, reason, numq) {
    numq = split(HQ[h], qs, "\t")
    cpus = 0
    alloc = 0
    down = err = off = 0
    for (i = 1; i <= numq; i++) {
        q = qs[i]
        slots = QV[h, q, "slots"] + 0
        used = QV[h, q, "slots_used"] + 0
        st = QV[h, q, "state_string"]
        if (q == queue || (!((h, queue) in QI) && slots > cpus))
            cpus = slots
        alloc += used
        if (st ~ /u/) down++
        if (st ~ /E/) err++
        if (st ~ /[dDsSC]/) off++
    }
    if (cpus == 0)
        cpus = HV[h, "num_proc"] + 0
    if (alloc > cpus)
        alloc = cpus
    reason = ""
    if (numq == 0) {
        state = "drained"
        reason = "no queue instance on this host"
    } else if (down || HV[h, "load_avg"] == "-") {
        state = "down"
        reason = "execd not responding (queue instance state u)"
    } else if (err) {
        state = "unknown"
        reason = "queue instance in error state E (clear with qmod -c)"
    } else if (off == numq) {
        if (RSTATE[h] == "down")
            state = "down"
        else
            state = alloc > 0 ? "draining" : "drained"
        reason = RTEXT[h] != "" ? RTEXT[h] : "queue instances disabled"
    } else if (alloc == 0) {
        state = "idle"
    } else {
        state = alloc < cpus ? "mixed" : "allocated"
    }
    gsub(/\t/, ",", HQ[h])
    return "{\"name\": " jstr(h) ", \"state\": \"" state "\", \"cpus\": " cpus \
        ", \"cpus_alloc\": " alloc ", \"memory_mb\": " mem_mb(HV[h, "mem_total"]) \
        ", \"memory_alloc_mb\": 0, \"gpus\": 0, \"features\": [], \"queues\": " \
        jlist(HQ[h], ",") ", \"reason\": " jstr_or_null(reason) "}"
}

# A queue is open while one of its instances takes jobs.
function cqueue(q,    i, h, st, open, n, lim) {
    open = 0
    n = 0
    for (i = 1; i <= nh; i++) {
        h = HOST[i]
        if (!((h, q) in QI))
            continue
        n++
        st = QV[h, q, "state_string"]
        if (st !~ /[dDsSCuE]/)
            open = 1
    }
    lim = seconds(HRT[q])
    return "{\"name\": " jstr(q) ", \"state\": \"" (open ? "open" : "closed") \
        "\", \"nodes\": " n ", \"max_walltime_s\": " (lim == "" ? "null" : lim) "}"
}

END {
    printf "{\"items\": ["
    if (mode == "queues") {
        for (i = 1; i <= nq; i++)
            printf "%s\n  %s", (i > 1 ? "," : ""), cqueue(QORDER[i])
    } else {
        for (i = 1; i <= nh; i++)
            printf "%s\n  %s", (i > 1 ? "," : ""), node(HOST[i])
    }
    print (nh || nq ? "\n" : "") "]}"
}
