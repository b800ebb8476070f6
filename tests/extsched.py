#!/usr/bin/env python3
# extsched.py - a small external scheduler for loomd, for the tests.
# SPDX-License-Identifier: MIT
#
# With loomd's built-in scheduler switched off (`[loomd] scheduler = false`
# or POST /v1/runtime/scheduler {"enabled": false}), each round reads
#   GET /v1/nodes, GET /v1/clusters, GET /v1/queues, GET /v1/reservations,
#   GET /v1/jobs?state=pending (every page, following "next"),
#   GET /v1/jobs?state=starting|running|suspended (what holds nodes),
# and starts the pending jobs in submit order, first fit: a job goes on the
# first nodes (in the order GET /v1/nodes lists them) of its pinned cluster,
# or of the first cluster with room that takes jobs which name no cluster
# (GET /v1/clusters: unpinned_jobs), that are up (idle or mixed, or reserved:
# idle inside an active reservation, which reserved_against sorts out), have its
# features (a node's features, or KEY=VALUE of its annotations) and queue, have the cpus, memory and gpus it asks free (what the
# node reports allocated, or what the active jobs on it ask, whichever is
# more, less what this round started there), and are not reserved by a
# reservation whose window overlaps [now, now + walltime) - unless the job
# belongs to that reservation (request.reservation), in which case it runs
# only on the reservation's nodes and only inside its window.
#   POST /v1/jobs/{id}/start {"cluster": C, "nodes": [names]}
# One line on stdout per start ("start job ID on CLUSTER: n1,n2") and per
# refusal ("refused job ID on CLUSTER: n1: HTTP 409 conflict: ..."); a
# refusal or any other failed start of one job never stops the round.
#
# With --view fabric, the queues are read as the partitions of one cluster
# (GET /v1/queues?view=fabric), and a node serves a queue when its
# partition lists it.
#
# Usage: extsched.py --url URL --token-file FILE (--once | [--interval S]
#        [--until-idle] [--max-time S]) [--view clusters|fabric]
#        [--assume-idle] [--verbose]
# --assume-idle (a test aid) takes allocated nodes for empty ones, so that
# loomd refuses the start (409) and the refusal path can be seen.
# Exit: 0; 1 when a read failed with --once or --max-time passed; 2 usage.
# Standard library only.

import argparse
import datetime
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

UP = ("idle", "mixed", "reserved")  # reserved: its reservation's jobs only
ACTIVE = ("starting", "running", "suspended")
RESV_LIVE = ("planned", "active")


class HttpError(Exception):
    def __init__(self, method, path, status, message):
        Exception.__init__(self, "%s %s: %s" % (method, path, message))
        self.method, self.path, self.status, self.message = \
            method, path, status, message


class Api:
    def __init__(self, url, token, timeout=30):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def call(self, method, path, body=None):
        """The decoded answer of a 2xx; HttpError otherwise (status 0 when
        there was no answer at all)."""
        data = None
        headers = {"Authorization": "Bearer " + self.token,
                   "Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data,
                                     headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                raw = r.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            msg = "HTTP %d" % e.code
            try:
                err = json.loads(raw)["error"]
                msg += " %s: %s" % (err.get("code"), err.get("message"))
            except (ValueError, KeyError, TypeError):
                text = raw.decode("utf-8", "replace").strip()
                if text:
                    msg += ": " + text[:200]
            raise HttpError(method, path, e.code, msg)
        except urllib.error.URLError as e:
            raise HttpError(method, path, 0, "no answer from %s: %s"
                            % (self.url, e.reason))
        except OSError as e:  # a timeout or a reset connection
            raise HttpError(method, path, 0, "no answer from %s: %s"
                            % (self.url, e))
        try:
            return json.loads(raw) if raw else None
        except ValueError as e:
            raise HttpError(method, path, 200, "the answer is not JSON: %s" % e)

    def items(self, path):
        """Every item of a list, following "next" from page to page."""
        out = []
        seen = set()
        while path:
            doc = self.call("GET", path)
            out.extend(doc.get("items", []))
            path = doc.get("next")
            if path in seen:  # a server bug must not loop us forever
                raise HttpError("GET", path, 200, "'next' repeats itself")
            seen.add(path)
        return out


def parse_time(s):
    """RFC 3339 to seconds since the epoch; None for null."""
    if s is None:
        return None
    t = s.strip()
    if t.endswith("Z") or t.endswith("z"):
        t = t[:-1] + "+00:00"
    d = datetime.datetime.fromisoformat(t)
    if d.tzinfo is None:
        d = d.replace(tzinfo=datetime.timezone.utc)
    return d.timestamp()


def scalar_text(v):
    """An annotation's value as a job's feature names it (as loomd does):
    6.1 and "6.1" alike, true, false; None for anything else."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "%.15g" % v
    if isinstance(v, str):
        return v
    return None


def node_features(n):
    """What a job's features match on node n: its features, and
    KEY=VALUE of each of its annotations (each item of a list)."""
    out = set(n.get("features") or [])
    for k, v in (n.get("annotations") or {}).items():
        for x in (v if isinstance(v, list) else [v]):
            t = scalar_text(x)
            if t is not None:
                out.add("%s=%s" % (k, t))
    return out


def say(line):
    print(line, flush=True)


def warn(line):
    print("extsched: " + line, file=sys.stderr, flush=True)


class Round:
    """One look at the fabric and the starts it leads to."""

    def __init__(self, api, args, state):
        self.api = api
        self.args = args
        self.state = state  # kept across rounds (one-time notes)
        self.started = 0
        self.refused = 0
        self.pending = 0
        self.active = 0

    def read(self):
        api = self.api
        self.nodes = api.call("GET", "/v1/nodes").get("items", [])
        # a cluster that takes only the jobs that name it (a simulated one)
        self.pinned_only = set(
            c["name"] for c in api.call("GET", "/v1/clusters").get("items", [])
            if c.get("unpinned_jobs") is False)
        self.members = None  # queue id -> the node ids of its partition
        try:
            if self.args.view == "fabric":
                parts = api.call("GET", "/v1/queues?view=fabric")["items"]
                self.queues = {p["name"]: p for p in parts}
                self.members = {p["name"]: set(p["nodes"]) for p in parts}
            else:
                self.queues = {q["id"]: q for q in
                               api.call("GET", "/v1/queues").get("items", [])}
        except HttpError as e:
            if e.status != 404:
                raise
            self.queues = {}
        try:
            self.resvs = api.call("GET", "/v1/reservations").get("items", [])
        except HttpError as e:
            if e.status != 404:
                raise
            if not self.state.get("no_resv_noted"):
                warn("GET /v1/reservations answers 404: no reservations "
                     "are honoured")
                self.state["no_resv_noted"] = True
            self.resvs = []
        self.jobs = api.items("/v1/jobs?state=pending")
        self.running = []
        for st in ACTIVE:
            self.running.extend(api.items("/v1/jobs?state=" + st))
        self.pending = len(self.jobs)
        self.active = len(self.running)

    def free_table(self):
        """node id -> [cpus, memory_mb, gpus] free now."""
        use = {}
        if not self.args.assume_idle:
            for j in self.running:
                r = j.get("request") or {}
                for name in j.get("nodes") or []:
                    k = "%s/%s" % (j.get("cluster"), name)
                    u = use.setdefault(k, [0, 0, 0])
                    u[0] += r.get("cpus_per_node", 1)
                    u[1] += r.get("memory_mb", 0)
                    u[2] += r.get("gpus", 0)
        free = {}
        for n in self.nodes:
            u = use.get(n["id"], [0, 0, 0])
            if self.args.assume_idle:
                alloc = [0, 0, 0]
            else:
                alloc = [n.get("cpus_alloc") or 0,
                         n.get("memory_alloc_mb") or 0,
                         n.get("gpus_alloc") or 0]
            free[n["id"]] = [(n.get("cpus") or 0) - max(alloc[0], u[0]),
                             (n.get("memory_mb") or 0) - max(alloc[1], u[1]),
                             (n.get("gpus") or 0) - max(alloc[2], u[2])]
        return free

    def clusters(self):
        """The clusters that take a job which names none."""
        seen = []
        for n in self.nodes:
            if n["cluster"] not in seen and n["cluster"] not in self.pinned_only:
                seen.append(n["cluster"])
        return seen

    def reserved_against(self, node_id, job, now, walltime):
        """The id of a live reservation that keeps this job off the node
        over [now, now + walltime), or None."""
        mine = (job.get("request") or {}).get("reservation")
        for r in self.resvs:
            if r.get("state") not in RESV_LIVE or node_id not in r.get("nodes", []):
                continue
            if mine is not None and str(r.get("id")) == str(mine):
                continue
            try:
                rs, re_ = parse_time(r.get("start")), parse_time(r.get("end"))
            except (ValueError, TypeError):
                continue
            if rs is None or re_ is None:
                continue
            if rs < now + walltime and now < re_:
                return r.get("id")
        return None

    def place(self, job, free, now):
        """(cluster, [node names], None) or (None, None, why it waits)."""
        r = job.get("request") or {}
        want = r.get("nodes", 1)
        cpus, mem, gpus = r.get("cpus_per_node", 1), r.get("memory_mb", 0), \
            r.get("gpus", 0)
        walltime = r.get("walltime_s", 3600)
        feats = set(r.get("features") or [])
        queue = r.get("queue")
        pin = r.get("cluster")
        resv_nodes = None
        if r.get("reservation") is not None:
            rid = str(r["reservation"])
            rv = [x for x in self.resvs if str(x.get("id")) == rid]
            if not rv or rv[0].get("state") not in RESV_LIVE:
                return None, None, "its reservation %s is not live" % rid
            rv = rv[0]
            rs, re_ = parse_time(rv.get("start")), parse_time(rv.get("end"))
            if rs is None or now < rs:
                return None, None, "its reservation %s has not begun" % rid
            if re_ is not None and now + walltime > re_:
                return None, None, ("its walltime does not fit in what is "
                                    "left of reservation %s" % rid)
            resv_nodes = set(rv.get("nodes", []))
            pin = rv.get("cluster") or pin
        why = "no cluster has %d node(s) free for it" % want
        for c in ([pin] if pin else self.clusters()):
            picks = []
            for n in self.nodes:
                up = UP + ("allocated",) if self.args.assume_idle else UP
                if n["cluster"] != c or n.get("state") not in up:
                    continue
                if resv_nodes is not None and n["id"] not in resv_nodes:
                    continue
                if not feats <= node_features(n):
                    continue
                if queue is not None:
                    q = self.queues.get("%s/%s" % (c, queue))
                    serves = (n["id"] in self.members.get(q["name"], ())
                              if self.members is not None and q
                              else queue in (n.get("queues") or []))
                    if not serves or not q or \
                            q.get("state") != "open" or \
                            (q.get("max_walltime_s") and walltime > q["max_walltime_s"]):
                        continue
                f = free.get(n["id"], [0, 0, 0])
                if f[0] < cpus or f[1] < mem or f[2] < gpus:
                    continue
                if self.reserved_against(n["id"], job, now, walltime) is not None:
                    continue
                picks.append(n)
                if len(picks) == want:
                    return c, picks, None
        return None, None, why

    def run(self):
        now = time.time()
        free = self.free_table()
        for job in sorted(self.jobs, key=lambda j: int(j["id"])):
            c, picks, why = self.place(job, free, now)
            if c is None:
                if self.args.verbose:
                    say("wait job %s: %s" % (job["id"], why))
                continue
            names = [n["name"] for n in picks]
            path = "/v1/jobs/%s/start" % job["id"]
            try:
                self.api.call("POST", path, {"cluster": c, "nodes": names})
            except HttpError as e:
                self.refused += 1
                say("refused job %s on %s: %s: %s" % (job["id"], c,
                                                     ",".join(names), e.message))
                continue
            self.started += 1
            r = job.get("request") or {}
            for n in picks:
                f = free[n["id"]]
                f[0] -= r.get("cpus_per_node", 1)
                f[1] -= r.get("memory_mb", 0)
                f[2] -= r.get("gpus", 0)
            say("start job %s on %s: %s" % (job["id"], c, ",".join(names)))


def main():
    ap = argparse.ArgumentParser(
        description="A first-fit external scheduler for loomd (tests).")
    ap.add_argument("--url", required=True, help="loomd's base URL")
    ap.add_argument("--token-file", required=True,
                    help="a file holding a bearer token (admin, or scheduler)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--once", action="store_true", help="one round, then exit")
    mode.add_argument("--interval", type=float, default=1.0,
                      help="seconds between rounds (default 1)")
    ap.add_argument("--until-idle", action="store_true",
                    help="exit once no job is pending, starting, running "
                         "or suspended")
    ap.add_argument("--max-time", type=float, default=0,
                    help="give up (exit 1) after this many seconds")
    ap.add_argument("--assume-idle", action="store_true",
                    help="test aid: take allocated nodes for idle, ignoring what "
                         "they have allocated and what runs on them (to "
                         "provoke loomd's 409)")
    ap.add_argument("--view", choices=("clusters", "fabric"),
                    default="clusters",
                    help="read the queues per cluster (default) or as the "
                         "partitions of one cluster (GET /v1/queues?"
                         "view=fabric)")
    ap.add_argument("--verbose", action="store_true",
                    help="also a line per job that waits")
    args = ap.parse_args()
    if args.interval <= 0:
        ap.error("--interval must be positive")
    try:
        with open(args.token_file) as f:
            token = f.read().strip()
    except OSError as e:
        ap.error("cannot read the token file: %s" % e)
    if not token:
        ap.error("the token file %s is empty" % args.token_file)
    api = Api(args.url, token)
    state = {}
    t0 = time.time()
    while True:
        rnd = Round(api, args, state)
        try:
            rnd.read()
        except HttpError as e:
            warn("cannot read the fabric: %s" % e)
            if args.once:
                return 1
        else:
            rnd.run()
            if args.once:
                return 0
            if args.until_idle and rnd.started == 0 and rnd.pending == 0 \
                    and rnd.active == 0:
                return 0
        if args.max_time and time.time() - t0 > args.max_time:
            warn("gave up after %g s" % args.max_time)
            return 1
        time.sleep(args.interval)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
