# reserve.awk - plan an advance reservation from `qhost -q -xml`: prints
# one line "INSTANCES SLOTS START END NAME" for qrsub (START "-" = now), or
# "error: MESSAGE". Needs common.awk.
# SPDX-License-Identifier: MIT
#
# Variables: nodes (comma-separated hosts), q (queue), start and end (epoch
# seconds), tz (the offset of the zone qrsub reads times in, as date +%z
# prints it: "+0100"), name (the reservation's name; Grid Engine object
# names take no blanks, "/", ":", "@", "\", "*" or "?": those become "_").

/<host name=/ { h = xattr($0, "name"); next }
/<queue name=/ { inq = xattr($0, "name") == q; next }
/<\/queue>/ { inq = 0; next }
inq && /<queuevalue / && xattr($0, "name") == "slots" { SLOTS[h] = xval($0) + 0 }

END {
    n = split(nodes, a, ",")
    inst = ""
    total = 0
    for (i = 1; i <= n; i++) {
        if (!(a[i] in SLOTS)) {
            print "error: node " a[i] " has no instance of queue " q
            exit
        }
        inst = inst (i > 1 ? "," : "") q "@" a[i]
        total += SLOTS[a[i]]
    }
    if (end + 0 <= NOW) {
        print "error: the reservation ends in the past"
        exit
    }
    if (end + 0 <= start + 0) {
        print "error: the reservation ends before it starts"
        exit
    }
    gsub(/[^A-Za-z0-9_.=+-]/, "_", name)
    if (name !~ /^[A-Za-z]/)
        name = "r" name
    off = (substr(tz, 2, 2) * 3600 + substr(tz, 4, 2) * 60) * \
        (substr(tz, 1, 1) == "-" ? -1 : 1)
    print inst, total, (start + 0 > NOW + 1 ? qrtime(start + off) : "-"), \
        qrtime(end + off), name
}
