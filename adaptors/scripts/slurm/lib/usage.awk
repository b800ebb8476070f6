# usage.awk - lines for the usage cache of the `jobs` op, from
# `sacct -a -n -P -j IDS -o JobIDRaw,State,UserCPU,SystemCPU,MaxRSS`
# (the job's line, then one per step: ID.batch, ID.0, ...).
# SPDX-License-Identifier: MIT
#
# Variables: want   the job ids (separated by spaces) to report
#            old    the cache file, for the time a job began to wait
#            now    the time now (epoch seconds)
# Prints, for each wanted job, one of
#   ID USER_MS SYSTEM_MS RSS_KB  sacct has its end: the job line's UserCPU
#                                and SystemCPU (its steps' sum), the
#                                largest MaxRSS of its steps (0 for none)
#   ID wait SINCE                no ended record yet (slurmdbd has it a
#                                moment after the job ends); SINCE is when
#                                the pack first asked
# The caller decides, with the grace time, how long a job may wait.

BEGIN {
    FS = "|"
    n = split(want, w, " ")
    for (i = 1; i <= n; i++)
        WANT[w[i]] = 1
    if (old != "") {
        while ((getline line < old) > 0) {
            split(line, p, " ")
            if (p[2] == "wait")
                SINCE[p[1]] = p[3]
        }
        close(old)
    }
}

# cpu_ms("1-02:03:04"): sacct's [D-][HH:]MM:SS[.mmm] in ms; -1 if not one.
function cpu_ms(s,    d, k, p, n, t) {
    d = 0
    if ((k = index(s, "-")) > 0) {
        d = substr(s, 1, k - 1)
        s = substr(s, k + 1)
        if (d !~ /^[0-9]+$/)
            return -1
    }
    if (s !~ /^[0-9]+(:[0-9]+)*(\.[0-9]+)?$/)
        return -1
    n = split(s, p, ":")
    if (n == 3)
        t = p[1] * 3600 + p[2] * 60 + p[3]
    else if (n == 2)
        t = p[1] * 60 + p[2]
    else
        return -1
    return int((d * 86400 + t) * 1000 + 0.5)
}

# rss_kb("3156K"): sacct's MaxRSS (K, M, G, T: KiB and up; bare: bytes)
# in KiB; 0 when empty.
function rss_kb(s,    u, v) {
    if (s == "")
        return 0
    if (s !~ /^[0-9]+(\.[0-9]+)?[KMGT]?$/)
        return -1
    u = substr(s, length(s))
    v = s + 0
    if (u == "K") return int(v + 0.5)
    if (u == "M") return int(v * 1024 + 0.5)
    if (u == "G") return int(v * 1048576 + 0.5)
    if (u == "T") return int(v * 1073741824 + 0.5)
    return int(v / 1024 + 0.5)
}

{
    id = $1
    step = ""
    if ((k = index(id, ".")) > 0) {
        step = substr(id, k + 1)
        id = substr(id, 1, k - 1)
    }
    if (!(id in WANT))
        next
    if (step == "") {
        # still running, pending or finishing in slurmdbd's record: wait
        if ($2 !~ /^(RUNNING|PENDING|REQUEUED|SUSPENDED|RESIZING)/) {
            U[id] = cpu_ms($3)
            S[id] = cpu_ms($4)
        }
    } else {
        r = rss_kb($5)
        if (r > RSS[id] + 0)
            RSS[id] = r
        else if (r < 0)
            BAD[id] = 1
    }
}

END {
    for (i = 1; i <= n; i++) {
        id = w[i]
        if (id in DONE)
            continue
        DONE[id] = 1
        if ((id in U) && U[id] >= 0 && S[id] >= 0 && !(id in BAD))
            print id, U[id], S[id], RSS[id] + 0
        else
            print id, "wait", (id in SINCE) ? SINCE[id] : now
    }
}
