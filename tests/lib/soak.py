#!/usr/bin/env python3
# soak.py - a steady load on one loomd for a soak: submits and reads at
# fixed rates, node reports that make a maintenance rule fire, and
# loomd's memory and descriptors sampled as it goes.
# SPDX-License-Identifier: MIT
#
# soak.py --url URL --token-file F --report-token-file F --pid PID
#         --bodies FILE --seconds S --warmup W --window N
#         [--submit-rate 50] [--read-rate 200] [--drift-cluster C
#          --drift-nodes K --drift-every S] > summary.json
#
# Submits (bodies from FILE, a JSON list, in turn) go at --submit-rate a
# second from 4 threads, reads at --read-rate from 8 (GET /v1/jobs?limit=20,
# GET /v1/jobs/ID of a recent job, GET /v1/nodes, GET /v1/clusters, in
# turn), each thread on a keep-alive connection and paced by the clock
# (open loop: a slow answer delays only its own thread's next request).
# Every --drift-every seconds one of nodes n1..nK of cluster C reports
# kernel 5.10 (POST /v1/actual/nodes/C/NODE, with the report token), which
# the test's rule repairs. Every 5 s it reads loomd's VmRSS and counts its
# descriptors (/proc/PID; root). The summary, on stdout, compares the
# first window of N seconds after the warm-up of W seconds with the last
# N seconds: submits and reads done per second, their p50 and p99 (ms),
# RSS (kB) and descriptors at the end of the warm-up and at the end, the
# answers by status (and the first 10 that were not 2xx, with their
# bodies), and the number of submits acknowledged.
import argparse
import http.client
import json
import os
import random
import sys
import threading
import time
import urllib.parse

LOCK = threading.Lock()
RECORDS = []  # (kind, t_done, latency_s, status)
SAMPLES = []  # (t, rss_kb, fds)
JOB_IDS = []
REFUSED = []  # "METHOD PATH STATUS BODY" of the first 10 answers not 2xx
STOP = threading.Event()


def connect(url):
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port, timeout=30)


def call(state, method, path, token, body=None):
    headers = {"Authorization": "Bearer " + token}
    if body is not None:
        headers["Content-Type"] = "application/json"
    t0 = time.monotonic()
    try:
        if state.get("c") is None:
            state["c"] = connect(state["url"])
        state["c"].request(method, path, body=body, headers=headers)
        r = state["c"].getresponse()
        data = r.read()
        status = r.status
        if r.getheader("Connection", "").lower() == "close":
            state["c"].close()
            state["c"] = None
    except (OSError, http.client.HTTPException):
        if state.get("c") is not None:
            state["c"].close()
        state["c"] = None
        status, data = 0, b""
    if not 200 <= status < 300:
        with LOCK:
            if len(REFUSED) < 10:
                REFUSED.append("%s %s %d %s" % (method, path, status, data[
                    :300].decode("utf-8", "replace")))
    return status, data, time.monotonic() - t0


def paced(rate, threads, index, work):
    """Run work(n) at rate/threads a second until STOP, on the clock."""
    period = threads / rate
    t = time.monotonic() + index * period / threads
    n = 0
    while not STOP.is_set():
        delay = t - time.monotonic()
        if delay > 0 and STOP.wait(delay):
            return
        work(n)
        n += 1
        t += period
        if t < time.monotonic() - 1:  # far behind: do not burst to catch up
            t = time.monotonic()


def submitter(a, token, bodies, index):
    state = {"url": a.url}

    def work(n):
        body = json.dumps(bodies[(n * 4 + index) % len(bodies)])
        status, data, lat = call(state, "POST", "/v1/jobs", token, body)
        with LOCK:
            RECORDS.append(("submit", time.monotonic(), lat, status))
            if status == 201:
                JOB_IDS.append(json.loads(data)["id"])
    paced(a.submit_rate, 4, index, work)


def reader(a, token, index):
    state = {"url": a.url}

    def work(n):
        k = (n + index) % 4
        if k == 0:
            path = "/v1/jobs?limit=20"
        elif k == 1:
            with LOCK:
                jid = JOB_IDS[-1 - random.randrange(min(len(JOB_IDS), 200))] \
                    if JOB_IDS else None
            path = "/v1/jobs/%s" % jid if jid else "/v1/clusters"
        elif k == 2:
            path = "/v1/nodes"
        else:
            path = "/v1/clusters"
        status, _, lat = call(state, "GET", path, token)
        with LOCK:
            RECORDS.append(("read", time.monotonic(), lat, status))
    paced(a.read_rate, 8, index, work)


def drifter(a, token):
    state = {"url": a.url}
    while not STOP.wait(a.drift_every):
        node = "n%d" % random.randint(1, a.drift_nodes)
        status, _, lat = call(state, "POST", "/v1/actual/nodes/%s/%s" % (
            a.drift_cluster, node), token,
            json.dumps({"attributes": {"kernel": "5.10"}}))
        with LOCK:
            RECORDS.append(("report", time.monotonic(), lat, status))


def sample(pid):
    rss = None
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return rss, len(os.listdir("/proc/%d/fd" % pid))


def sampler(a):
    while True:
        try:
            rss, fds = sample(a.pid)
        except OSError:
            rss, fds = None, None
        with LOCK:
            SAMPLES.append((time.monotonic(), rss, fds))
        if STOP.wait(5):
            return


def pct(v, p):
    if not v:
        return None
    v = sorted(v)
    return round(1000 * v[min(len(v) - 1, int(p / 100.0 * len(v)))], 1)


def window(t0, t1):
    out = {"from_s": round(t0 - START, 1), "to_s": round(t1 - START, 1)}
    for kind in ("submit", "read"):
        lat = [r[2] for r in RECORDS if r[0] == kind and t0 <= r[1] < t1
               and 200 <= r[3] < 300]
        out[kind + "s_per_s"] = round(len(lat) / (t1 - t0), 1)
        out[kind + "_p50_ms"] = pct(lat, 50)
        out[kind + "_p99_ms"] = pct(lat, 99)
    return out


def at(t):
    """The last sample taken at or before t (the first one if none)."""
    best = SAMPLES[0]
    for s in SAMPLES:
        if s[0] <= t:
            best = s
    return {"rss_kb": best[1], "fds": best[2]}


def main():
    global START
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--token-file", required=True)
    p.add_argument("--report-token-file")
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--bodies", required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--warmup", type=float, required=True)
    p.add_argument("--window", type=float, required=True)
    p.add_argument("--submit-rate", type=float, default=50)
    p.add_argument("--read-rate", type=float, default=200)
    p.add_argument("--drift-cluster")
    p.add_argument("--drift-nodes", type=int, default=0)
    p.add_argument("--drift-every", type=float, default=2)
    a = p.parse_args()
    if a.warmup + 2 * a.window > a.seconds:
        sys.exit("soak.py: --seconds must hold the warm-up and two windows")
    with open(a.token_file) as f:
        token = f.read().strip()
    with open(a.bodies) as f:
        bodies = json.load(f)
    START = time.monotonic()
    threads = [threading.Thread(target=sampler, args=(a,), daemon=True)]
    threads += [threading.Thread(target=submitter, args=(a, token, bodies, i),
                                 daemon=True) for i in range(4)]
    threads += [threading.Thread(target=reader, args=(a, token, i),
                                 daemon=True) for i in range(8)]
    if a.drift_cluster and a.drift_nodes and a.report_token_file:
        with open(a.report_token_file) as f:
            rtoken = f.read().strip()
        threads.append(threading.Thread(target=drifter, args=(a, rtoken),
                                        daemon=True))
    for t in threads:
        t.start()
    STOP.wait(a.seconds)
    STOP.set()
    for t in threads:
        t.join(60)
    end = START + a.seconds
    w0 = START + a.warmup
    statuses = {}
    for r in RECORDS:
        key = "%s %d" % (r[0], r[3])
        statuses[key] = statuses.get(key, 0) + 1
    json.dump({"seconds": a.seconds, "warmup_s": a.warmup,
               "submit_rate": a.submit_rate, "read_rate": a.read_rate,
               "start": window(w0, w0 + a.window),
               "end": window(end - a.window, end),
               "after_warmup": at(w0), "at_end": at(end),
               "fds_max": max(s[2] for s in SAMPLES if s[2] is not None),
               "answers": statuses, "refused": REFUSED,
               "acknowledged": len(JOB_IDS)},
              sys.stdout)
    print()


if __name__ == "__main__":
    main()
