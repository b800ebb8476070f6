#!/usr/bin/env python3
# storm.py - a storm of keyed submits from several clients, each going on
# through the failure of the active loomd: it retries every submit with
# the same Idempotency-Key until it is acknowledged, at the loomd it talks
# to or at the next one of the list, and follows a standby's 307.
# SPDX-License-Identifier: MIT
#
# storm.py --urls URL[,URL...] --token-file F --bodies FILE --clients N
#          --jobs M --out PREFIX [--key-prefix P] [--deadline S]
#          [--stop-file F]
#
# Client c (0..N-1) submits jobs 0..M-1 in order, job j with the body
# bodies[(c * M + j) % len(bodies)] (FILE holds a JSON list of job
# objects) and the key P-c-j. For each acknowledged one (201, or 200 for a
# replay) it appends "KEY ID STATUS EPOCH_S URL" to PREFIX.c (flushed at
# once). Answers it retries: none (the connection failed), 503, 307 (it
# follows it), 409 for a key still in progress. Any other answer is
# written to PREFIX.c.err and ends that client; so does a submit not
# acknowledged within --deadline seconds (120). Each answer it retries is
# appended to PREFIX.c.retries as "KEY STATUS EPOCH_S" (status 0: no
# answer). With --stop-file a client stops, after the submit under way,
# once file F exists. Exit status: 0 when every client had every job
# acknowledged (up to the stop), else 1.
import argparse
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse


def connect(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


class Client(threading.Thread):
    def __init__(self, index, args, bodies, token):
        super().__init__(daemon=True)
        self.index, self.args, self.bodies = index, args, bodies
        self.token = token
        self.urls = args.urls.split(",")
        self.at = 0  # the URL of the list it talks to
        self.conns = {}
        self.ok = False

    def conn(self, base):
        if base not in self.conns:
            self.conns[base] = connect(base)
        return self.conns[base]

    def drop(self, base):
        c = self.conns.pop(base, None)
        if c:
            c.close()

    def post(self, base, path, body, key):
        """One request: (status, answer headers, body) or (0, ...)."""
        headers = {"Authorization": "Bearer " + self.token,
                   "Content-Type": "application/json",
                   "Idempotency-Key": key}
        try:
            c = self.conn(base)
            c.request("POST", path, body=body, headers=headers)
            r = c.getresponse()
            data = r.read()
            if r.getheader("Connection", "").lower() == "close":
                self.drop(base)
            return r.status, r, data
        except (OSError, http.client.HTTPException):
            self.drop(base)
            return 0, None, b""

    def submit(self, key, body, out, err, retries):
        deadline = time.time() + self.args.deadline
        while time.time() < deadline:
            base, path = self.urls[self.at], "/v1/jobs"
            for _ in range(4):  # a standby's redirect, and more
                status, r, data = self.post(base, path, body, key)
                if status not in (307, 308):
                    break
                u = urllib.parse.urlsplit(r.getheader("Location"))
                base, path = "%s://%s" % (u.scheme, u.netloc), u.path
            if status in (200, 201):
                job = json.loads(data)
                out.write("%s %s %d %.3f %s\n" % (key, job["id"], status,
                                                  time.time(), base))
                out.flush()
                return True
            if status in (0, 503, 307, 308) or (
                    status == 409 and b"in progress" in data):
                retries.write("%s %d %.3f\n" % (key, status, time.time()))
                retries.flush()
            if status == 409 and b"in progress" in data:
                time.sleep(0.05)
                continue
            if status in (0, 503, 307, 308):
                # that loomd cannot take it now: the next one of the list
                self.at = (self.at + 1) % len(self.urls)
                time.sleep(0.1)
                continue
            err.write("%s: %d %s\n" % (key, status, data.decode(
                "utf-8", "replace")))
            return False
        err.write("%s: not acknowledged within %d s\n" %
                  (key, self.args.deadline))
        return False

    def run(self):
        a = self.args
        with open("%s.%d" % (a.out, self.index), "a") as out, \
                open("%s.%d.err" % (a.out, self.index), "a") as err, \
                open("%s.%d.retries" % (a.out, self.index), "a") as retries:
            for j in range(a.jobs):
                if a.stop_file and os.path.exists(a.stop_file):
                    break
                body = self.bodies[(self.index * a.jobs + j) %
                                   len(self.bodies)]
                key = "%s-%d-%d" % (a.key_prefix, self.index, j)
                if not self.submit(key, json.dumps(body), out, err,
                                   retries):
                    return
        self.ok = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--urls", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--bodies", required=True)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--jobs", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--key-prefix", default="storm")
    p.add_argument("--deadline", type=int, default=120)
    p.add_argument("--stop-file")
    args = p.parse_args()
    with open(args.token_file) as f:
        token = f.read().strip()
    with open(args.bodies) as f:
        bodies = json.load(f)
    clients = [Client(i, args, bodies, token) for i in range(args.clients)]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    sys.exit(0 if all(c.ok for c in clients) else 1)


if __name__ == "__main__":
    main()
