# nodes.awk - condor_status -af:t into the nodes answer.
# SPDX-License-Identifier: MIT
#
# `condor_status -af:t Name Machine State Activity SlotType Cpus
# TotalSlotCpus Memory TotalSlotMemory Gpus TotalSlotGpus DrainReason` (one
# line per slot) into the protocol's nodes answer, one node per machine.
#
# Variables (-v): KNOWN, a file of the machines seen before (name<TAB>cpus
# <TAB>memory<TAB>gpus), and KNOWN_OUT, where to write the new list. A
# machine that was seen before and is missing now (its startd is off, or the
# collector dropped its ad) is reported "down": the collector forgets such
# machines. Delete the file in the state directory to forget retired ones.
#
# A partitionable slot holds the machine's resources: TotalSlotCpus,
# TotalSlotMemory (MB), TotalSlotGpus in all, Cpus, Memory, Gpus still free;
# its dynamic slots (slot1_1@...) are parts of it and are not counted again.
# A static slot counts its Cpus, Memory and Gpus, in use when it is Claimed
# (or Matched, Preempting). Machine state:
#   a Drained slot (condor_drain) or an Owner slot (START is false)
#     -> draining while jobs still run there, else drained
#   nothing in use -> idle; everything -> allocated; else mixed
# "undefined" is HTCondor's empty value.

function adval(s) {
    return (s == "undefined" || s == "error") ? "" : s
}

function adnum(s) {
    s = adval(s)
    if (s ~ /^[0-9]+(\.[0-9]+)?$/)
        return int(s)
    return 0
}

function slot(f,    m, st, act, type, cpus, tc, mem, tm, gp, tg) {
    m = adval(f[2])
    if (m == "") {
        m = adval(f[1])
        sub(/^[^@]*@/, "", m)
    }
    if (m == "")
        return
    if (!(m in SEEN)) {
        SEEN[m] = 1
        ORDER[++NM] = m
    }
    st = adval(f[3])
    act = adval(f[4])
    type = adval(f[5])
    cpus = adnum(f[6])
    tc = adnum(f[7])
    mem = adnum(f[8])
    tm = adnum(f[9])
    gp = adnum(f[10])
    tg = adnum(f[11])
    if (type == "Dynamic") {
        if (st == "Drained")
            DRAIN[m] = 1
        if (act == "Retiring" || act == "Busy")
            BUSY[m] = 1
        return
    }
    if (type == "Partitionable") {
        CPUS[m] += tc > 0 ? tc : cpus
        ALLOC[m] += tc > cpus ? tc - cpus : 0
        MEM[m] += tm > 0 ? tm : mem
        MALLOC[m] += tm > mem ? tm - mem : 0
        GPUS[m] += tg > 0 ? tg : gp
        GALLOC[m] += tg > gp ? tg - gp : 0
    } else {
        CPUS[m] += cpus
        MEM[m] += mem
        GPUS[m] += gp
        if (st ~ /^(Claimed|Matched|Preempting)$/ || \
            (st == "Drained" && act == "Retiring")) {
            ALLOC[m] += cpus
            MALLOC[m] += mem
            GALLOC[m] += gp
        }
    }
    if (st == "Drained") {
        DRAIN[m] = 1
        if (act == "Retiring")
            BUSY[m] = 1
    } else if (st == "Owner") {
        OWNER[m] = 1
    }
    if (adval(f[12]) != "")
        REASON[m] = adval(f[12])
}

function state_of(m) {
    if (DRAIN[m] || OWNER[m])
        return (ALLOC[m] > 0 || BUSY[m]) ? "draining" : "drained"
    if (ALLOC[m] <= 0)
        return "idle"
    return ALLOC[m] >= CPUS[m] ? "allocated" : "mixed"
}

function item(name, st, cpus, ca, mem, ma, gp, ga, reason) {
    items = items (items == "" ? "" : ",") \
        "{\"name\":" jstr(name) ",\"state\":" jstr(st) \
        ",\"cpus\":" cpus ",\"cpus_alloc\":" ca \
        ",\"memory_mb\":" mem ",\"memory_alloc_mb\":" ma \
        ",\"gpus\":" gp ",\"gpus_alloc\":" ga \
        ",\"features\":[],\"queues\":[\"default\"]" \
        ",\"reason\":" jstr_or_null(reason) "}"
}

BEGIN {
    FS = "\t"
    items = ""
    NM = 0
    NK = 0
    if (KNOWN != "")
        while ((getline l < KNOWN) > 0)
            if (split(l, k, "\t") >= 4 && k[1] != "") {
                KORDER[++NK] = k[1]
                KCPUS[k[1]] = k[2] + 0
                KMEM[k[1]] = k[3] + 0
                KGPUS[k[1]] = k[4] + 0
            }
}

{
    line = $0
    sub(/\r$/, "", line)
    if (line ~ /^\t/)
        line = substr(line, 2)  # -af:t may put a tab before the first field
    n = split(line, f, "\t")
    if (n >= 12) {
        slot(f)
        last = f[2]
    }
}

END {
    for (i = 1; i <= NM; i++) {
        m = ORDER[i]
        st = state_of(m)
        reason = ""
        if (st ~ /^drain/)
            reason = REASON[m] != "" ? REASON[m] : OWNER[m] ? "Owner: START is false" : "condor_drain"
        item(m, st, CPUS[m], ALLOC[m] > CPUS[m] ? CPUS[m] : ALLOC[m], MEM[m],
             MALLOC[m], GPUS[m], GALLOC[m], reason)
    }
    for (i = 1; i <= NK; i++) {
        m = KORDER[i]
        if (m in SEEN)
            continue
        item(m, "down", KCPUS[m], 0, KMEM[m], 0, KGPUS[m], 0,
             "not in the collector (startd off or unreachable)")
        SEEN[m] = 1
        ORDER[++NM] = m
        CPUS[m] = KCPUS[m]
        MEM[m] = KMEM[m]
        GPUS[m] = KGPUS[m]
    }
    printf "{\"items\":[%s]}\n", items
    if (KNOWN_OUT != "") {
        for (i = 1; i <= NM; i++)
            print ORDER[i] "\t" CPUS[ORDER[i]] + 0 "\t" MEM[ORDER[i]] + 0 "\t" GPUS[ORDER[i]] + 0 > KNOWN_OUT
        close(KNOWN_OUT)
    }
}
