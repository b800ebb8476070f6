# queues.awk - qstat -Q -f into the queues answer.
# SPDX-License-Identifier: MIT
#
# `qstat -Q -f` of Torque, OpenPBS or Slurm's Torque wrappers
# into the protocol's queues answer.
#
# Variables (-v): NODES, a file with `pbsnodes -a` (to count the nodes of a
# queue), FLAVOR. Each queue is "Queue: NAME" then indented
# "attribute = value" lines. A queue is open when it is enabled and started
# (True, or yes from the wrappers). Its nodes: resources_available.nodect
# when set; the wrappers' resources_default.nodes (the partition's node
# count there); OpenPBS nodes whose queue attribute names it; else all
# nodes. max_walltime_s: resources_max.walltime.

function flush(    state, nodes, wall) {
    if (q == "")
        return
    state = (tolower(A["enabled"]) ~ /^(true|yes)$/ && \
             tolower(A["started"]) ~ /^(true|yes)$/) ? "open" : "closed"
    if (A["resources_available.nodect"] ~ /^[0-9]+$/)
        nodes = A["resources_available.nodect"] + 0
    else if (FLAVOR == "slurm" && A["resources_default.nodes"] ~ /^[0-9]+$/)
        nodes = A["resources_default.nodes"] + 0
    else if (q in PER_QUEUE)
        nodes = PER_QUEUE[q]
    else
        nodes = TOTAL - ASSIGNED
    wall = hms_seconds(A["resources_max.walltime"])
    items = items (items == "" ? "" : ",") "{\"name\":" jstr(q) \
        ",\"state\":" jstr(state) ",\"nodes\":" nodes \
        ",\"max_walltime_s\":" jnum(wall) "}"
    q = ""
    split("", A)
}

BEGIN {
    items = ""
    q = ""
    TOTAL = 0
    ASSIGNED = 0
    if (NODES != "") {
        while ((getline l < NODES) > 0) {
            if (l ~ /^[^ \t]/) {
                TOTAL++
            } else if (l ~ /^[ \t]+queue = /) {
                sub(/^[ \t]+queue = /, "", l)
                sub(/[ \t\r]+$/, "", l)
                PER_QUEUE[l]++
                ASSIGNED++
            }
        }
    }
}

/^Queue:/ {
    flush()
    q = $0
    sub(/^Queue:[ \t]*/, "", q)
    sub(/[ \t\r]+$/, "", q)
    next
}

q != "" && /^[ \t]+[A-Za-z_][A-Za-z0-9_.]* =( |$)/ {
    line = $0
    sub(/^[ \t]+/, "", line)
    sub(/\r$/, "", line)
    i = index(line, " =")
    A[substr(line, 1, i - 1)] = substr(line, i + 3)
}

END {
    flush()
    printf "{\"items\":[%s]}\n", items
}
