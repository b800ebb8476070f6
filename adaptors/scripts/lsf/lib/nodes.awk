# nodes.awk - bhosts -w and lshosts -w into the nodes answer.
# SPDX-License-Identifier: MIT
#
# `bhosts -w` (with `lshosts -w` for cpus, memory and
# resources) into the protocol's nodes answer.
#
# Variables (-v): LSHOSTS, a file with `lshosts -w`. Both outputs are tables
# with a header line; columns are found by their header (HOST_NAME STATUS
# JL/U MAX NJOBS RUN SSUSP USUSP RSV; HOST_NAME type model cpuf ncpus maxmem
# maxswp server RESOURCES). "-" is an unknown or unlimited value.
#
# cpus: lshosts ncpus, else bhosts MAX (job slots); cpus_alloc: NJOBS (the
# slots that jobs use). memory_mb: lshosts maxmem ("63.8G", "7987M"; a bare
# number is taken as MB, LSF_UNIT_FOR_LIMITS=MB). features: the RESOURCES in
# parentheses. GPUs are not read (lshosts -gpu is separate): 0.
# States (bhosts STATUS):
#   ok -> idle, mixed or allocated by NJOBS against the slots
#   closed_Full, closed_Excl, closed_Cu_excl, closed_Busy -> allocated
#   closed_Adm, closed_Lock, closed_Wind, closed -> drained, or draining
#     while jobs still run there
#   closed_RC (resource connector provisioning) -> maint
#   unavail, unreach, closed_LIM, unlicensed -> down
#   anything else -> unknown
# The reason is the LSF status (bhosts -w has no admin comment).

function mem_mb(v,    n, u) {
    if (!match(v, /^[0-9]+(\.[0-9]+)?/))
        return 0
    n = substr(v, 1, RLENGTH) + 0
    u = toupper(substr(v, RLENGTH + 1))
    if (u ~ /^K/) n /= 1024
    else if (u ~ /^G/) n *= 1024
    else if (u ~ /^T/) n *= 1048576
    return int(n)
}

function state_of(s, njobs, slots) {
    if (s == "ok")
        return njobs <= 0 ? "idle" : (slots > 0 && njobs >= slots) ? "allocated" : "mixed"
    if (s ~ /^closed_(Full|Excl|Cu_excl|Busy)$/)
        return "allocated"
    if (s ~ /^closed(_(Adm|Lock|Wind))?$/)
        return njobs > 0 ? "draining" : "drained"
    if (s == "closed_RC")
        return "maint"
    if (s ~ /^(unavail|unreach|closed_LIM|unlicensed)$/)
        return "down"
    return "unknown"
}

BEGIN {
    items = ""
    if (LSHOSTS != "") {
        while ((getline l < LSHOSTS) > 0) {
            n = split(l, f, /[ \t]+/)
            if (f[1] == "")
                for (i = 1; i < n; i++)
                    f[i] = f[i + 1]
            if (f[1] == "HOST_NAME") {
                for (i = 1; i <= n; i++)
                    LCOL[f[i]] = i
                continue
            }
            if (!("ncpus" in LCOL) || f[1] == "")
                continue
            NCPUS[f[1]] = f[LCOL["ncpus"]]
            MAXMEM[f[1]] = f[LCOL["maxmem"]]
            r = ""
            if ((p = index(l, "(")) > 0) {
                r = substr(l, p + 1)
                sub(/\).*/, "", r)
            }
            RES[f[1]] = r
        }
    }
}

{
    sub(/\r$/, "")
    n = split($0, f, /[ \t]+/)
    if (f[1] == "")
        for (i = 1; i < n; i++)
            f[i] = f[i + 1]
}

f[1] == "HOST_NAME" {
    for (i = 1; i <= n; i++)
        COL[f[i]] = i
    next
}

!("STATUS" in COL) || f[1] == "" { next }

{
    h = f[1]
    status = f[COL["STATUS"]]
    slots = f[COL["MAX"]]
    njobs = f[COL["NJOBS"]]
    slots = slots ~ /^[0-9]+$/ ? slots + 0 : 0
    njobs = njobs ~ /^[0-9]+$/ ? njobs + 0 : 0
    cpus = (h in NCPUS && NCPUS[h] ~ /^[0-9]+$/) ? NCPUS[h] + 0 : slots
    st = state_of(status, njobs, slots > 0 ? slots : cpus)
    ca = njobs
    if (cpus > 0 && ca > cpus)
        ca = cpus
    items = items (items == "" ? "" : ",") \
        "{\"name\":" jstr(h) ",\"state\":" jstr(st) \
        ",\"cpus\":" cpus ",\"cpus_alloc\":" ca \
        ",\"memory_mb\":" mem_mb(MAXMEM[h]) ",\"memory_alloc_mb\":0" \
        ",\"gpus\":0,\"gpus_alloc\":0" \
        ",\"features\":" jarr(RES[h], "[ \t]+") ",\"queues\":[]" \
        ",\"reason\":" (status == "ok" ? "null" : jstr(status)) "}"
}

END {
    printf "{\"items\":[%s]}\n", items
}
