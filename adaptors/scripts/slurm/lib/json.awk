# json.awk - JSON output helpers shared by the Slurm pack's awk programs.
# SPDX-License-Identifier: MIT
#
# POSIX awk (mawk 1.3.4 is the reference); run with LC_ALL=C so that strings
# are bytes. jstr() escapes quotes, backslashes and control characters and
# replaces bytes that are not valid UTF-8 with U+FFFD, so that any name or
# reason Slurm prints gives valid JSON.

BEGIN {
    for (_i = 1; _i < 32; _i++)
        JESC[sprintf("%c", _i)] = sprintf("\\u%04x", _i)
    JESC["\b"] = "\\b"; JESC["\f"] = "\\f"; JESC["\n"] = "\\n"
    JESC["\r"] = "\\r"; JESC["\t"] = "\\t"
    JESC["\""] = "\\\""; JESC["\\"] = "\\\\"
    for (_i = 128; _i < 256; _i++)
        BYTE[sprintf("%c", _i)] = _i
}

# The JSON string for s, quotes included.
function jstr(s,    out, i, n, c) {
    if (s ~ /[\200-\377]/)
        s = utf8_clean(s)
    if (s !~ /[\001-\037"\\]/)
        return "\"" s "\""
    out = ""
    n = length(s)
    for (i = 1; i <= n; i++) {
        c = substr(s, i, 1)
        out = out ((c in JESC) ? JESC[c] : c)
    }
    return "\"" out "\""
}

# jstr(s), or null when s is empty.
function jstr_null(s) {
    return s == "" ? "null" : jstr(s)
}

# s when it is a non-negative integer, else null.
function jint_null(s) {
    return s ~ /^[0-9]+$/ ? s + 0 : "null"
}

# A JSON array of the strings a[1..n].
function jarr(a, n,    i, out) {
    out = "["
    for (i = 1; i <= n; i++)
        out = out (i > 1 ? ", " : "") jstr(a[i])
    return out "]"
}

# s with every byte that is not part of a well-formed UTF-8 sequence
# replaced by U+FFFD.
function utf8_clean(s,    out, i, n, b, c, k, need, lo, hi, j, ok) {
    out = ""
    n = length(s)
    for (i = 1; i <= n; i++) {
        b = substr(s, i, 1)
        if (!(b in BYTE)) {
            out = out b
            continue
        }
        k = BYTE[b]
        need = 0
        lo = 128; hi = 191
        if (k >= 194 && k <= 223) need = 1
        else if (k >= 224 && k <= 239) {
            need = 2
            if (k == 224) lo = 160
            if (k == 237) hi = 159
        } else if (k >= 240 && k <= 244) {
            need = 3
            if (k == 240) lo = 144
            if (k == 244) hi = 143
        }
        ok = need > 0 && i + need <= n
        for (j = 1; ok && j <= need; j++) {
            c = substr(s, i + j, 1)
            if (!(c in BYTE)) ok = 0
            else if (j == 1 && (BYTE[c] < lo || BYTE[c] > hi)) ok = 0
            else if (j > 1 && BYTE[c] > 191) ok = 0
        }
        if (ok) {
            out = out substr(s, i, need + 1)
            i += need
        } else
            out = out "\357\277\275"
    }
    return out
}
