# queues.awk - bqueues -w and -l into the queues answer.
# SPDX-License-Identifier: MIT
#
# `bqueues -w` (with `bqueues -l` for limits and hosts) into
# the protocol's queues answer.
#
# Variables (-v): LONG, a file with `bqueues -l`; NHOSTS, the number of
# hosts bhosts lists. A queue is open when its STATUS is Open:Active;
# Closed:* (no new jobs) and Open:Inact* (no dispatch: a run window or
# badmin qinact) read closed. nodes: the queue's HOSTS in bqueues -l, "all"
# (minus the hosts excluded with ~) being NHOSTS and a host group counting
# as one; max_walltime_s: its RUNLIMIT (the maximum, not the default).

BEGIN {
    items = ""
    if (LONG != "") {
        q = ""
        while ((getline l < LONG) > 0) {
            sub(/\r$/, "", l)
            if (l ~ /^QUEUE: /) {
                q = substr(l, 8)
                sub(/[ \t]+$/, "", q)
                section = ""
                want_limit = 0
                continue
            }
            if (q == "")
                continue
            if (l ~ /^DEFAULT LIMITS:/) { section = "default"; continue }
            if (l ~ /^MAXIMUM LIMITS:/) { section = "max"; continue }
            if (l ~ /^[ \t]*RUNLIMIT[ \t]*$/) {
                want_limit = section != "default"
                continue
            }
            if (want_limit && l ~ /[0-9]/) {
                if (match(l, /[0-9]+(\.[0-9]+)?/))
                    RUNLIMIT[q] = int(substr(l, RSTART, RLENGTH) * 60)
                want_limit = 0
                continue
            }
            if (l ~ /^HOSTS:/) {
                sub(/^HOSTS:[ \t]*/, "", l)
                HOSTS[q] = count_hosts(l)
            }
        }
    }
}

function count_hosts(s,    w, n, i, c, all, ex) {
    n = split(s, w, /[ \t]+/)
    c = 0
    all = 0
    ex = 0
    for (i = 1; i <= n; i++) {
        if (w[i] == "")
            continue
        if (w[i] ~ /^all([+@].*)?$/) all = 1
        else if (w[i] ~ /^~/) ex++
        else if (w[i] != "none") c++
    }
    if (all)
        return NHOSTS - ex > 0 ? NHOSTS - ex : 0
    return c
}

{
    sub(/\r$/, "")
    n = split($0, f, /[ \t]+/)
    if (f[1] == "")
        for (i = 1; i < n; i++)
            f[i] = f[i + 1]
}

f[1] == "QUEUE_NAME" {
    for (i = 1; i <= n; i++)
        COL[f[i]] = i
    next
}

!("STATUS" in COL) || f[1] == "" { next }

{
    q = f[1]
    state = f[COL["STATUS"]] == "Open:Active" ? "open" : "closed"
    nodes = (q in HOSTS) ? HOSTS[q] : NHOSTS + 0
    items = items (items == "" ? "" : ",") "{\"name\":" jstr(q) \
        ",\"state\":" jstr(state) ",\"nodes\":" nodes \
        ",\"max_walltime_s\":" ((q in RUNLIMIT) ? RUNLIMIT[q] : "null") "}"
}

END {
    printf "{\"items\":[%s]}\n", items
}
