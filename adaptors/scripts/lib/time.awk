# time.awk - calendar arithmetic for a pack's awk parsers.
# SPDX-License-Identifier: MIT
#
# Calendar arithmetic for a pack's awk parsers: POSIX awk has no mktime.
#
# Shared by the pbs, lsf and condor packs. TZOFF (set with -v) is the
# local zone's offset east of UTC in seconds, now: a time printed in local
# time during the other half of a daylight-saving year is off by the
# difference (one hour).
#
#   days_from_civil(y, m, d)   days since 1970-01-01 (proleptic Gregorian)
#   month_num(name)            1-12 for Jan..Dec (first three letters), or 0
#   local_epoch(y, mo, d, h, mi, s)  epoch seconds of a local time
#   ctime_epoch(s)             "Sat Nov 21 20:00:00 2026" (ctime(3), local)
#                              into epoch seconds; "" when s is not that
#   hms_seconds(s)             "[[[D:]H:]M:]S" into seconds; "" when not
#   year_of(t)                 the local calendar year at epoch second t

function days_from_civil(y, m, d,    era, yoe, doy, doe) {
    y -= (m <= 2)
    era = int((y >= 0 ? y : y - 399) / 400)
    yoe = y - era * 400
    doy = int((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
    doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + doy
    return era * 146097 + doe - 719468
}

function month_num(name,    i) {
    i = index("JanFebMarAprMayJunJulAugSepOctNovDec", substr(name, 1, 3))
    return (i > 0 && (i - 1) % 3 == 0) ? (i + 2) / 3 : 0
}

function local_epoch(y, mo, d, h, mi, s) {
    return days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - TZOFF
}

function ctime_epoch(s,    f, n, t, mo) {
    n = split(s, f, /[ \t]+/)
    if (n < 5 || f[1] == "")
        return ""
    mo = month_num(f[2])
    if (mo == 0 || f[3] !~ /^[0-9]+$/ || f[5] !~ /^[0-9][0-9][0-9][0-9]$/ || \
        split(f[4], t, ":") != 3)
        return ""
    return local_epoch(f[5] + 0, mo, f[3] + 0, t[1] + 0, t[2] + 0, t[3] + 0)
}

function hms_seconds(s,    f, n, i, v) {
    if (s !~ /^[0-9]+(:[0-9]+)*(\.[0-9]+)?$/)
        return ""
    sub(/\.[0-9]+$/, "", s)
    n = split(s, f, ":")
    if (n > 4)
        return ""
    v = 0
    for (i = 1; i <= n; i++)
        v = v * ((n == 4 && i == 2) ? 24 : 60) + f[i]
    return v
}

# The local calendar year at epoch second t.
function year_of(t,    d, z, era, doe, yoe, y, doy, mp) {
    d = t + TZOFF
    z = int(d / 86400)
    if (d < 0 && z * 86400 != d)
        z--                     # floor, not truncation
    z += 719468
    era = int((z >= 0 ? z : z - 146096) / 146097)
    doe = z - era * 146097
    yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
    y = yoe + era * 400
    doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
    mp = int((5 * doy + 2) / 153)
    return y + (mp >= 10)
}
