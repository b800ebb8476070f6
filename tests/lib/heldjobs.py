#!/usr/bin/env python3
# heldjobs.py - many ended jobs quickly (9012, 9016): submits N held jobs
# named "bulk" over one connection, then cancels them; prints the first
# and the last id. PAD (0) environment variables of 100 bytes each make
# each job's record larger.
#   heldjobs.py URL TOKEN N [PAD]
# SPDX-License-Identifier: MIT
import http.client
import json
import sys
import urllib.parse


def main():
    url, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pad = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    u = urllib.parse.urlparse(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    h = {"Authorization": "Bearer " + token,
         "Content-Type": "application/json"}
    env = {"PAD%d" % i: "x" * 100 for i in range(pad)}
    ids = []
    for i in range(n):
        c.request("POST", "/v1/jobs", json.dumps({
            "name": "bulk", "hold": True, "command": ["/bin/true"],
            "env": env}), h)
        r = c.getresponse()
        body = r.read()
        if r.status != 201:
            sys.exit("submit %d: %d %s" % (i, r.status, body))
        ids.append(json.loads(body)["id"])
    for i in ids:
        c.request("DELETE", "/v1/jobs/" + i, headers=h)
        r = c.getresponse()
        r.read()
        if r.status != 200:
            sys.exit("cancel %s: %d" % (i, r.status))
    print(ids[0], ids[-1])


main()
