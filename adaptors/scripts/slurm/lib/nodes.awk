# nodes.awk - the answer of the `nodes` op from sinfo's per-node lines.
# SPDX-License-Identifier: MIT
#
# Input: sinfo -h -N -O with NODES_FORMAT (see ../nodes): one line per node
# and partition, fields separated by "|", the reason last (it may hold "|"):
#   name|statecomplete|cpus|A/I/O/T|memory|allocmem|gres|features|partition|reason|
# A node in several partitions has several lines: they are merged.
#
# Node states (Slurm's base state plus flags, e.g. "mixed+drain"):
#   down (any flags), future, error         -> down
#   drain or fail flag, CPUs still allocated -> draining
#   drain or fail flag, nothing allocated    -> drained
#   maintenance flag (a maint reservation)   -> maint
#   not_responding ("*" in sinfo), otherwise -> unknown: slurmctld lost
#       contact but has not declared the node down (it does after
#       SlurmdTimeout); nothing new starts there meanwhile. Its reason is
#       "not responding" when Slurm gives none.
#   idle, mixed, allocated, unknown          -> the same
#   anything else                            -> unknown
# Other flags (reserved, completing, planned, power saving) leave the base.

BEGIN { FS = "|" }

NF < 10 { next }

{
    name = $1
    part = $9
    sub(/\*$/, "", part)
    if (name in SEEN) {
        if (part != "" && !((name, part) in HASPART)) {
            HASPART[name, part] = 1
            PARTS[name] = PARTS[name] "|" part
        }
        next
    }
    SEEN[name] = 1
    ORDER[++count] = name
    if (part != "") {
        HASPART[name, part] = 1
        PARTS[name] = part
    }
    split($4, c, "/")
    reason = $10
    for (i = 11; i <= NF; i++)
        reason = reason "|" $i
    sub(/\|$/, "", reason)
    if (reason == "none")
        reason = ""
    STATE[name] = node_state($2, c[1] + 0)
    if (reason == "" && $2 ~ /not_responding/)
        reason = "not responding"
    REST[name] = "\"cpus\": " ($3 + 0) ", \"cpus_alloc\": " (c[1] + 0) \
        ", \"memory_mb\": " ($5 + 0) ", \"memory_alloc_mb\": " ($6 + 0) \
        ", \"gpus\": " gpus($7) ", \"features\": " features($8)
    REASON[name] = reason
}

function node_state(sc, alloc,    f, n, i, base, fl) {
    n = split(sc, f, "+")
    base = f[1]
    sub(/[^a-z_]+$/, "", base)
    for (i = 2; i <= n; i++)
        fl[f[i]] = 1
    if (base == "down" || base == "future" || base == "error")
        return "down"
    if (("drain" in fl) || ("fail" in fl) || base == "drain" || base == "fail")
        return (alloc > 0 || base == "allocated" || base == "mixed" || \
            ("completing" in fl)) ? "draining" : "drained"
    if (("maintenance" in fl) || ("maint" in fl) || base == "maint")
        return "maint"
    if ("not_responding" in fl)
        return "unknown"
    if (base == "idle" || base == "mixed" || base == "allocated" || base == "unknown")
        return base
    if (base == "completing")
        return "allocated"
    return "unknown"
}

# The GPU count of a Gres string: "gpu:2", "gpu:a100:4(S:0-1),mps:100".
function gpus(g,    items, n, i, p, m, total) {
    if (g == "" || g == "(null)")
        return 0
    gsub(/\([^)]*\)/, "", g)
    total = 0
    n = split(g, items, ",")
    for (i = 1; i <= n; i++) {
        m = split(items[i], p, ":")
        if (p[1] != "gpu")
            continue
        total += (m > 1 && p[m] ~ /^[0-9]+$/) ? p[m] : 1
    }
    return total
}

function features(f,    a, n) {
    if (f == "" || f == "(null)")
        return "[]"
    n = split(f, a, ",")
    return jarr(a, n)
}

END {
    printf "{\"items\": ["
    for (k = 1; k <= count; k++) {
        name = ORDER[k]
        nq = split(PARTS[name], q, "|")
        printf "%s\n {\"name\": %s, \"state\": \"%s\", %s, \"queues\": %s, \"reason\": %s}", \
            (k > 1 ? "," : ""), jstr(name), STATE[name], REST[name], \
            jarr(q, nq), jstr_null(REASON[name])
    }
    printf "%s]}\n", (count ? "\n" : "")
}
