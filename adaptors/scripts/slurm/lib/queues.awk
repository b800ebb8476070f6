# queues.awk - the answer of the `queues` op from `scontrol show partition
# -o` (one line of KEY=VALUE words per partition). SPDX-License-Identifier: MIT
#
# Variables: only (optional): a comma-separated list of the partitions to
# keep (env.LOOM_PARTITION). State UP is "open"; DOWN, DRAIN and INACTIVE
# are "closed". MaxTime UNLIMITED is null.

BEGIN {
    printf "{\"items\": ["
    n = split(only, a, ",")
    for (i = 1; i <= n; i++)
        ONLY[a[i]] = 1
}

/^PartitionName=/ {
    split("", kv)
    for (i = 1; i <= NF; i++) {
        e = index($i, "=")
        if (e)
            kv[substr($i, 1, e - 1)] = substr($i, e + 1)
    }
    name = kv["PartitionName"]
    if (n && !(name in ONLY))
        next
    printf "%s\n {\"name\": %s, \"state\": \"%s\", \"nodes\": %d, \"max_walltime_s\": %s}", \
        (count++ ? "," : ""), jstr(name), (kv["State"] == "UP" ? "open" : "closed"), \
        kv["TotalNodes"] + 0, slurm_secs(kv["MaxTime"])
}

# Seconds of a Slurm time limit: [days-]hours:minutes:seconds,
# minutes:seconds, minutes; null for UNLIMITED or anything else.
function slurm_secs(t,    d, p, n) {
    d = 0
    if (t ~ /^[0-9]+-/) {
        d = substr(t, 1, index(t, "-") - 1)
        t = substr(t, index(t, "-") + 1)
    }
    if (t !~ /^[0-9]+(:[0-9]+)*$/)
        return "null"
    n = split(t, p, ":")
    if (n == 3)
        return d * 86400 + p[1] * 3600 + p[2] * 60 + p[3]
    if (n == 2)
        return d * 86400 + (d ? p[1] * 3600 + p[2] * 60 : p[1] * 60 + p[2])
    return d * 86400 + (d ? p[1] * 3600 : p[1] * 60)
}

END { printf "%s]}\n", (count ? "\n" : "") }
