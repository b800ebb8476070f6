# json.awk - JSON output helpers for a pack's awk parsers.
# SPDX-License-Identifier: MIT
#
# Shared by the pbs, lsf and condor packs. Works in mawk, gawk and a
# POSIX awk; run it with LC_ALL=C so that strings are bytes. Bytes that are
# not UTF-8 become U+FFFD: Loom's JSON parser rejects invalid UTF-8, and one
# odd job name must not make a whole answer unreadable.
#
#   jstr(s)         s as a JSON string
#   jstr_or_null(s) null when s is empty, else jstr(s)
#   jnum(v)         v when it is an integer, else null
#   jarr(s, sep)    the non-empty parts of s split on the regex sep, as a
#                   JSON array of strings (duplicates dropped, order kept)

function json_setup(i) {
    for (i = 1; i < 32; i++)
        JSON_ESC[sprintf("%c", i)] = sprintf("\\u%04x", i)
    JSON_ESC["\t"] = "\\t"
    JSON_ESC["\n"] = "\\n"
    JSON_ESC["\r"] = "\\r"
    JSON_ESC["\""] = "\\\""
    JSON_ESC["\\"] = "\\\\"
    for (i = 128; i < 256; i++)
        JSON_BYTE[sprintf("%c", i)] = i
    JSON_SPECIAL = "[\"\\\\" sprintf("%c", 1) "-" sprintf("%c", 31) \
        sprintf("%c", 128) "-" sprintf("%c", 255) "]"
    JSON_READY = 1
}

# The length of the UTF-8 sequence that starts at byte i of s (1 to 4), or
# 0 when the bytes there are not valid UTF-8 (as RFC 3629 defines it).
function json_utf8_len(s, i, n,    b, b2, need, k) {
    b = JSON_BYTE[substr(s, i, 1)]
    if (b >= 194 && b <= 223) need = 1
    else if (b >= 224 && b <= 239) need = 2
    else if (b >= 240 && b <= 244) need = 3
    else return 0
    if (i + need > n)
        return 0
    for (k = 1; k <= need; k++)
        if (!(substr(s, i + k, 1) in JSON_BYTE) || \
            JSON_BYTE[substr(s, i + k, 1)] >= 192)
            return 0
    b2 = JSON_BYTE[substr(s, i + 1, 1)]
    if ((b == 224 && b2 < 160) || (b == 237 && b2 >= 160) || \
        (b == 240 && b2 < 144) || (b == 244 && b2 >= 144))
        return 0
    return need + 1
}

function jstr(s,    out, i, n, c, k) {
    if (!JSON_READY)
        json_setup()
    if (s !~ JSON_SPECIAL)
        return "\"" s "\""
    out = ""
    n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        if (c in JSON_ESC) {
            out = out JSON_ESC[c]
        } else if (!(c in JSON_BYTE)) {
            out = out c
        } else if ((k = json_utf8_len(s, i, n)) > 0) {
            out = out substr(s, i, k)
            i += k - 1
        } else {
            out = out "\\ufffd"
        }
    }
    return "\"" out "\""
}

function jstr_or_null(s) {
    return s == "" ? "null" : jstr(s)
}

function jnum(v) {
    if (v ~ /^-?[0-9]+$/)
        return sprintf("%d", v + 0)
    return "null"
}

function jarr(s, sep,    parts, n, i, out, seen) {
    out = ""
    n = split(s, parts, sep)
    for (i = 1; i <= n; i++) {
        if (parts[i] == "" || (parts[i] in seen))
            continue
        seen[parts[i]] = 1
        out = out (out == "" ? "" : ",") jstr(parts[i])
    }
    return "[" out "]"
}
