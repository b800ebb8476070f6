# common.awk - helpers shared by the Grid Engine pack's parsers: XML values,
# JSON strings, times. POSIX awk, no gawk extensions (tested with mawk 1.3.4).
# SPDX-License-Identifier: MIT
#
# Grid Engine's -xml output has one element per line, so the parsers read it
# line by line; these helpers take one line apart.

BEGIN {
    for (i = 1; i < 32; i++)
        JESC[sprintf("%c", i)] = sprintf("\\u%04x", i)
    JESC["\""] = "\\\""
    JESC["\\"] = "\\\\"
    JESC["\n"] = "\\n"
    JESC["\t"] = "\\t"
    JESC["\r"] = "\\r"
    split("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec", m, " ")
    for (i = 1; i <= 12; i++)
        MON[m[i]] = sprintf("%02d", i)
    # The time now (srand returns the previous seed: the time of the call
    # before), for the ages kept in the state files.
    srand()
    NOW = srand()
}

# jstr(S): S as a JSON string literal ("" stays "").
function jstr(s,    r, c) {
    if (s !~ /["\\\001-\037]/)
        return "\"" s "\""
    r = ""
    while (match(s, /["\\\001-\037]/)) {
        c = substr(s, RSTART, 1)
        r = r substr(s, 1, RSTART - 1) JESC[c]
        s = substr(s, RSTART + 1)
    }
    return "\"" r s "\""
}

# jstr_or_null(S): null for "", else jstr(S).
function jstr_or_null(s) {
    return s == "" ? "null" : jstr(s)
}

# jnum_or_null(S): S as a JSON number, null unless S is an integer.
function jnum_or_null(s) {
    return s ~ /^-?[0-9]+$/ ? s + 0 : "null"
}

# jlist(S, SEP): a JSON array of the SEP-separated words of S.
function jlist(s, sep,    n, a, i, r) {
    if (s == "")
        return "[]"
    n = split(s, a, sep)
    r = ""
    for (i = 1; i <= n; i++)
        r = r (i > 1 ? ", " : "") jstr(a[i])
    return "[" r "]"
}

# xunesc(S): XML entities decoded. Grid Engine 8.1 writes "<" as "%lt;"
# (sic), so that is decoded too.
function xunesc(s) {
    if (index(s, "&") == 0 && index(s, "%lt;") == 0)
        return s
    gsub(/&lt;|%lt;/, "<", s)
    gsub(/&gt;/, ">", s)
    gsub(/&quot;/, "\"", s)
    gsub(/&apos;/, "'", s)
    gsub(/&#10;/, "\n", s)
    gsub(/&amp;/, "\\&", s)
    return s
}

# xval(LINE): the text of "<tag attr...>text</tag>" (decoded).
function xval(line) {
    sub(/^[^>]*>/, "", line)
    sub(/<\/[^<]*$/, "", line)
    return xunesc(line)
}

# xattr(LINE, NAME): the value of attribute NAME='...' or NAME="...".
function xattr(line, name,    v) {
    if (!match(line, "[ \t]" name "=['\"][^'\"]*['\"]"))
        return ""
    v = substr(line, RSTART + length(name) + 3, RLENGTH - length(name) - 4)
    return xunesc(v)
}

# xtag(LINE): the name of the first element on the line ("" if none).
function xtag(line) {
    if (!match(line, /<[A-Za-z_][-A-Za-z0-9_.]*/))
        return ""
    return substr(line, RSTART + 1, RLENGTH - 1)
}

# getime(S): a Grid Engine XML time (2026-11-21T22:41:39, UTC since the
# pack sets TZ=UTC) as RFC 3339; "" when S is not such a time.
function getime(s) {
    return s ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]/ \
        ? substr(s, 1, 19) "Z" : ""
}

# ctime3339(S): a ctime-style time (Sat Nov 21 22:42:02 2026, as qacct
# prints it) as RFC 3339; "" when S is not such a time.
function ctime3339(s,    f, n) {
    n = split(s, f, " ")
    if (n != 5 || !(f[2] in MON) || f[4] !~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/)
        return ""
    return sprintf("%04d-%s-%02dT%sZ", f[5], MON[f[2]], f[3], f[4])
}

# qrtime(EPOCH): "YYYYMMDDhhmm.SS" (qrsub -a/-e) for an epoch time in
# UTC (days-to-civil from H. Hinnant's algorithms, integer arithmetic).
function qrtime(t,    d, s, z, era, doe, yoe, y, doy, mp, dd, mm) {
    d = int(t / 86400)
    s = t - d * 86400
    z = d + 719468
    era = int(z / 146097)
    doe = z - era * 146097
    yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
    y = yoe + era * 400
    doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
    mp = int((5 * doy + 2) / 153)
    dd = doy - int((153 * mp + 2) / 5) + 1
    mm = mp < 10 ? mp + 3 : mp - 9
    if (mm <= 2)
        y++
    return sprintf("%04d%02d%02d%02d%02d.%02d", y, mm, dd, int(s / 3600),
                   int(s % 3600 / 60), s % 60)
}

# mem_mb(S): a Grid Engine memory value (23.5G, 446.5M, 1024K, 0.0) in MiB.
function mem_mb(s,    u, v) {
    if (s !~ /^[0-9.]+[KkMmGgTt]?$/)
        return 0
    u = substr(s, length(s), 1)
    v = s + 0
    if (u == "K" || u == "k") return int(v / 1024)
    if (u == "M" || u == "m") return int(v)
    if (u == "G" || u == "g") return int(v * 1024)
    if (u == "T" || u == "t") return int(v * 1048576)
    return int(v / 1048576)
}

# seconds(S): a Grid Engine time limit (INFINITY, h:m:s, or seconds) in
# seconds; "" for INFINITY or anything else.
function seconds(s,    f, n) {
    if (s ~ /^[0-9]+$/)
        return s + 0
    n = split(s, f, ":")
    if (n == 3 && s ~ /^[0-9]*:[0-9]*:[0-9]*$/)
        return f[1] * 3600 + f[2] * 60 + f[3]
    return ""
}

# acct_ms(S): a cpu time of a `qacct -j` record (0.007s, 12.345, h:m:s or
# d:h:m:s, as versions print it) in milliseconds; "" for anything else.
function acct_ms(s,    f, n) {
    sub(/s$/, "", s)
    if (s ~ /^[0-9]+(\.[0-9]*)?$/)
        return int(s * 1000 + 0.5)
    n = split(s, f, ":")
    if (s !~ /^[0-9:.]+$/ || n < 3 || n > 4)
        return ""
    if (n == 4)
        return int(((f[1] * 24 + f[2]) * 3600 + f[3] * 60 + f[4]) * 1000 + 0.5)
    return int((f[1] * 3600 + f[2] * 60 + f[3]) * 1000 + 0.5)
}

# acct_kb(S): ru_maxrss of a `qacct -j` record in KiB. Grid Engine stores
# getrusage's value, which Linux gives in KiB, and qacct prints it as if it
# were bytes, scaled by 1024 (4.777KB is 4.777 * 1024 KiB); a bare number
# is the value itself. "" for anything else.
function acct_kb(s,    u, v) {
    if (s !~ /^[0-9]+(\.[0-9]*)?([KMGT]?B?)$/)
        return ""
    u = s
    sub(/^[0-9.]+/, "", u)
    sub(/B$/, "", u)
    v = s + 0
    if (u == "K") v *= 1024
    else if (u == "M") v *= 1048576
    else if (u == "G") v *= 1073741824
    else if (u == "T") v *= 1099511627776
    return int(v + 0.5)
}
