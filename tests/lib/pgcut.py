#!/usr/bin/env python3
"""pgcut.py - a PostgreSQL proxy on a Unix socket that cuts a connection
at a chosen point of a job write, for tests of a commit whose answer is
lost.

    pgcut.py --listen DIR --upstream PGDIR --mode-file F --log L

Clients connect to DIR/.s.PGSQL.5432 and are passed to the server at
PGDIR/.s.PGSQL.5432. F holds one word, read at each write of new jobs
(the prepared statements loom_jobs_insert and loom_jobs_turn, with a
first parameter, the new ids, that is not empty) and each write of a
maintenance request (INSERT INTO maintenance):

    pass    pass it on
    before  cut the connection instead of sending the write: the server
            never sees it (nothing is stored)
    after   send it, and cut the connection once the server is ready for
            the next query outside a transaction, before the client hears
            so: the write is committed and the client does not know

Each cut is done once: F then reads "pass" again, and L gets a line
"cut before|after WHAT" (the statement's name, or "maintenance").
"""
import argparse
import os
import socket
import struct
import threading

WATCHED = (b"loom_jobs_insert", b"loom_jobs_turn")
WATCHED_SQL = {b"INSERT INTO maintenance": "maintenance"}
LOCK = threading.Lock()


def take_mode(args):
    """The mode for a job write now; a cut mode is used up."""
    with LOCK:
        try:
            with open(args.mode_file) as f:
                mode = f.read().strip()
        except OSError:
            mode = "pass"
        if mode in ("before", "after"):
            with open(args.mode_file, "w") as f:
                f.write("pass\n")
        return mode


def note(args, line):
    with LOCK:
        with open(args.log, "a") as f:
            f.write(line + "\n")


class Conn:
    def __init__(self, client, server):
        self.client, self.server = client, server
        self.cut_at_ready = None  # the statement whose answer is cut
        self.unnamed_sql = b""  # the last unnamed statement parsed
        self.closed = False

    def close(self):
        self.closed = True
        for s in (self.client, self.server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def watched(c, body):
    """What a Bind writes, when it is watched: its statement's name (new
    jobs) or "maintenance"; else None."""
    portal_end = body.index(b"\0")
    stmt_end = body.index(b"\0", portal_end + 1)
    stmt = body[portal_end + 1:stmt_end]
    if stmt == b"":
        for sql, what in WATCHED_SQL.items():
            if c.unnamed_sql.startswith(sql):
                return what
        return None
    if stmt not in WATCHED:
        return None
    at = stmt_end + 1
    n_formats = struct.unpack("!h", body[at:at + 2])[0]
    at += 2 + 2 * n_formats
    n_params = struct.unpack("!h", body[at:at + 2])[0]
    if n_params < 1:
        return None
    length = struct.unpack("!i", body[at + 2:at + 6])[0]
    first = body[at + 6:at + 6 + length] if length >= 0 else b""
    return stmt.decode() if first not in (b"", b"{}") else None


def client_to_server(args, c):
    try:
        head = read_exact(c.client, 8)
        length, code = struct.unpack("!ii", head)
        body = read_exact(c.client, length - 8)
        c.server.sendall(head + body)
        if code in (80877103, 80877104):  # SSL or GSS request: not parsed
            while True:
                data = c.client.recv(65536)
                if not data:
                    break
                c.server.sendall(data)
            return
        while True:
            kind = read_exact(c.client, 1)
            length = struct.unpack("!i", read_exact(c.client, 4))[0]
            body = read_exact(c.client, length - 4)
            if kind == b"P" and body.startswith(b"\0"):
                c.unnamed_sql = body[1:body.index(b"\0", 1)]
            stmt = watched(c, body) if kind == b"B" else None
            if stmt:
                mode = take_mode(args)
                if mode == "before":
                    note(args, "cut before " + stmt)
                    c.close()
                    return
                if mode == "after":
                    c.cut_at_ready = stmt
            c.server.sendall(kind + struct.pack("!i", length) + body)
    except (EOFError, OSError):
        pass
    if not c.closed:
        c.close()


def server_to_client(args, c):
    try:
        while True:
            kind = read_exact(c.server, 1)
            length = struct.unpack("!i", read_exact(c.server, 4))[0]
            body = read_exact(c.server, length - 4)
            if kind == b"Z" and body[:1] == b"I" and c.cut_at_ready:
                note(args, "cut after " + c.cut_at_ready)
                c.close()
                return
            c.client.sendall(kind + struct.pack("!i", length) + body)
    except (EOFError, OSError):
        pass
    if not c.closed:
        c.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--listen", required=True)
    p.add_argument("--upstream", required=True)
    p.add_argument("--mode-file", required=True)
    p.add_argument("--log", required=True)
    args = p.parse_args()
    path = os.path.join(args.listen, ".s.PGSQL.5432")
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    os.chmod(path, 0o777)  # the directory's mode says who may connect
    ls.listen(64)
    while True:
        client, _ = ls.accept()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.connect(os.path.join(args.upstream, ".s.PGSQL.5432"))
        except OSError:
            client.close()
            continue
        c = Conn(client, server)
        for fn in (client_to_server, server_to_client):
            threading.Thread(target=fn, args=(args, c), daemon=True).start()


if __name__ == "__main__":
    main()
