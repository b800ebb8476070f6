# nodes.awk - pbsnodes -a into the nodes answer.
# SPDX-License-Identifier: MIT
#
# `pbsnodes -a` of Torque, OpenPBS or Slurm's Torque wrappers
# into the protocol's nodes answer.
#
# The output is one block per node: the name on a line of its own, then
# indented "attribute = value" lines (Torque and OpenPBS indent 5 spaces,
# the wrappers 4), a blank line after each block. Torque keeps cpus in np
# and the jobs per cpu in jobs ("0-1/12.srv,2/13.srv"), memory in the
# status attribute (physmem=...kb); OpenPBS has resources_available.* and
# resources_assigned.*; the wrappers put Slurm's state (free, mixed,
# allocated -> job-exclusive/busy, drained -> offline, down, unknown) and
# status "...,ncpus=2,availmem=2048mb,slurmstate=idle" .

function flush(    st, cpus, ca, mem, ma, gpus, ga, reason, feats, queues) {
    if (name == "")
        return
    status_split(A["status"])
    cpus = first_num(A["resources_available.ncpus"], A["np"], A["pcpus"], S["ncpus"])
    if ("resources_assigned.ncpus" in A)
        ca = first_num(A["resources_assigned.ncpus"])
    else
        ca = job_cpus(A["jobs"])
    mem = 0
    if ("resources_available.mem" in A)
        mem = size_mb(A["resources_available.mem"])
    else if ("physmem" in S)
        mem = size_mb(S["physmem"])
    else if ("slurmstate" in S && "availmem" in S)
        mem = size_mb(S["availmem"])    # the wrappers: Slurm's RealMemory
    ma = ("resources_assigned.mem" in A) ? size_mb(A["resources_assigned.mem"]) : 0
    gpus = first_num(A["resources_available.ngpus"], A["gpus"])
    ga = first_num(A["resources_assigned.ngpus"])
    st = node_state(tolower(A["state"]), ca, cpus)
    if (st ~ /^(allocated)$/ && ca == 0)
        ca = cpus               # busy, and the CMS does not say with what
    if (cpus > 0 && ca > cpus)
        ca = cpus
    reason = ""
    if (st ~ /^(draining|drained|down|maint|unknown)$/) {
        reason = ("note" in A) ? A["note"] : A["comment"]
        if (reason == "")
            reason = A["state"]
    }
    feats = jarr(A["properties"], "[ ,]+")
    queues = jarr(A["queue"], "[ ,]+")
    items = items (items == "" ? "" : ",") \
        "{\"name\":" jstr(name) ",\"state\":" jstr(st) \
        ",\"cpus\":" cpus ",\"cpus_alloc\":" ca \
        ",\"memory_mb\":" mem ",\"memory_alloc_mb\":" ma \
        ",\"gpus\":" gpus ",\"gpus_alloc\":" ga \
        ",\"features\":" feats ",\"queues\":" queues \
        ",\"reason\":" jstr_or_null(reason) "}"
    name = ""
    split("", A)
}

# Torque's status: "k=v,k=v,..." into S.
function status_split(s,    parts, n, i, eq) {
    split("", S)
    n = split(s, parts, ",")
    for (i = 1; i <= n; i++)
        if ((eq = index(parts[i], "=")) > 1)
            S[substr(parts[i], 1, eq - 1)] = substr(parts[i], eq + 1)
}

# The first argument that is a non-negative integer, else 0.
function first_num(a, b, c, d) {
    if (a ~ /^[0-9]+$/) return a + 0
    if (b ~ /^[0-9]+$/) return b + 0
    if (c ~ /^[0-9]+$/) return c + 0
    if (d ~ /^[0-9]+$/) return d + 0
    return 0
}

# A PBS size ("16318872kb", "2048mb", "4gb", "1024" bytes, "8w" words) in MB.
function size_mb(v,    n, u) {
    v = tolower(v)
    if (!match(v, /^[0-9]+/))
        return 0
    n = substr(v, 1, RLENGTH) + 0
    u = substr(v, RLENGTH + 1)
    if (u ~ /^kw/) n *= 8 * 1024
    else if (u ~ /^mw/) n *= 8 * 1048576
    else if (u ~ /^gw/) n *= 8 * 1073741824
    else if (u ~ /^w/) n *= 8
    else if (u ~ /^k/) n *= 1024
    else if (u ~ /^m/) n *= 1048576
    else if (u ~ /^g/) n *= 1073741824
    else if (u ~ /^t/) n *= 1099511627776
    else if (u ~ /^p/) n *= 1125899906842624
    return int(n / 1048576)
}

# Torque's jobs attribute: "0-1/12.srv,2/13.srv" (Torque 4 and later) or
# "0/12.srv, 1/12.srv" (earlier): the cpus in use.
function job_cpus(s,    parts, n, i, p, r, c) {
    c = 0
    n = split(s, parts, ",")
    for (i = 1; i <= n; i++) {
        p = parts[i]
        gsub(/[ \t]/, "", p)
        if (p == "")
            continue
        if (index(p, "/"))
            p = substr(p, 1, index(p, "/") - 1)
        if (p ~ /^[0-9]+-[0-9]+$/) {
            split(p, r, "-")
            c += r[2] - r[1] + 1
        } else {
            c++
        }
    }
    return c
}

# A PBS node state (a comma-separated set) into a protocol state.
function node_state(s, alloc, cpus,    set, n, i, has) {
    n = split(s, set, ",")
    for (i = 1; i <= n; i++) {
        gsub(/[ \t*]/, "", set[i])
        has[set[i]] = 1
    }
    if ("down" in has || "stale" in has || "unresolvable" in has)
        return "down"
    if ("offline" in has || "drained" in has || "draining" in has || \
        "drain" in has)
        return (alloc > 0 || "draining" in has || "job-exclusive" in has || \
                "job-busy" in has || "busy" in has) ? "draining" : "drained"
    if ("maintenance" in has || "provisioning" in has || \
        "wait-provisioning" in has || "maint" in has)
        return "maint"
    if ("state-unknown" in has || "unknown" in has || "sleep" in has || \
        "initializing" in has)
        return "unknown"
    if ("job-exclusive" in has || "job-busy" in has || "busy" in has || \
        "resv-exclusive" in has || "reserve" in has || "allocated" in has)
        return "allocated"
    if ("mixed" in has || "job-sharing" in has)
        return "mixed"
    if ("free" in has || "idle" in has || "time-shared" in has)
        return alloc <= 0 ? "idle" : (cpus > 0 && alloc >= cpus) ? "allocated" : "mixed"
    return "unknown"
}

BEGIN {
    items = ""
    name = ""
}

/^[^ \t]/ {
    flush()
    name = $0
    sub(/[ \t\r]+$/, "", name)
    next
}

/^[ \t]+[A-Za-z_][A-Za-z0-9_.-]* =( |$)/ {
    if (name == "")
        next
    line = $0
    sub(/^[ \t]+/, "", line)
    i = index(line, " =")
    A[substr(line, 1, i - 1)] = substr(line, i + 3)
    next
}

/^[ \t]*$/ {
    flush()
}

END {
    flush()
    printf "{\"items\":[%s]}\n", items
}
