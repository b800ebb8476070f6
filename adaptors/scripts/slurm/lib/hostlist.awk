# hostlist.awk - expand Slurm hostlists: "n[1-3,5],gpu[08-10]" gives n1 n2
# n3 n5 gpu08 gpu09 gpu10. SPDX-License-Identifier: MIT
#
# POSIX awk. Several bracket groups in one name multiply ("r[1-2]n[1-2]":
# r1n1 r1n2 r2n1 r2n2); a range keeps the width of its lower bound
# (zero padding), as Slurm does. Something that is not a hostlist (an
# unbalanced bracket, a range of more than 100000 names) is kept as it is.

# hl_expand(s, out): the names of hostlist s in out[1..n]; returns n.
function hl_expand(s, out,    n, i, c, depth, start, len) {
    n = 0
    if (s == "" || s == "(null)" || s == "None" || s == "None assigned")
        return 0
    depth = 0
    start = 1
    len = length(s)
    for (i = 1; i <= len; i++) {
        c = substr(s, i, 1)
        if (c == "[")
            depth++
        else if (c == "]")
            depth--
        else if (c == "," && depth == 0) {
            n = hl_item(substr(s, start, i - start), out, n)
            start = i + 1
        }
    }
    return hl_item(substr(s, start), out, n)
}

# hl_item(item, out, n): append the names of one item ("n[1-3]x") after
# out[n]; returns the new count.
function hl_item(item, out, n,    lb, rb, pre, body, post, parts, m, j, k,
                 lo, hi, w, v) {
    if (item == "")
        return n
    lb = index(item, "[")
    rb = lb ? index(substr(item, lb), "]") : 0
    if (lb == 0 || rb == 0) {
        out[++n] = item
        return n
    }
    rb += lb - 1
    pre = substr(item, 1, lb - 1)
    body = substr(item, lb + 1, rb - lb - 1)
    post = substr(item, rb + 1)
    m = split(body, parts, ",")
    for (j = 1; j <= m; j++) {
        k = index(parts[j], "-")
        lo = k ? substr(parts[j], 1, k - 1) : parts[j]
        hi = k ? substr(parts[j], k + 1) : parts[j]
        if (lo !~ /^[0-9]+$/ || hi !~ /^[0-9]+$/ || hi - lo > 100000) {
            out[++n] = item
            return n
        }
    }
    for (j = 1; j <= m; j++) {
        k = index(parts[j], "-")
        lo = k ? substr(parts[j], 1, k - 1) : parts[j]
        hi = k ? substr(parts[j], k + 1) : parts[j]
        w = length(lo)
        for (v = lo + 0; v <= hi + 0; v++)
            n = hl_item(pre sprintf("%0" w "d", v) post, out, n)
    }
    return n
}
