"""A hostile sandboxed participant that goes for the referee itself (issue 24 item 1).

Through the socket its sandbox shows it (``{endpoint}``) it tries what a bot must not
do there, and writes one JSON line per attempt to its standard error (its log):

    {"spy": "lobby", "target": "list_tables", "ok": false, "answer": "seat_only"}

``ok`` true means the attempt worked (the referee answered it with anything but an
error). Attempts: a tokenless hello, a hello with a token that is not its seat's, a
spectator hello with its own token, and, once welcomed with its own token, every lobby
request (``list_tables``, ``watch`` of its table and of another, ``create_table``
with a name that would carry its hand, ``join``, ``queue``, ``leave``, ``rematch``).
Then, with ``--flood N``, it opens N raw connections to the socket (at most ``--hold``
open at once, oldest closed first; before it sits, so the other games are played
meanwhile) and reports how many connected and how many the referee cut. Then it plays
its seat with the SDK's simple bot. With ``--reach HOST:PORT`` (repeatable) it first
tries to open a TCP connection to each (a port of the host: a sandboxed bot has no
network, so each must fail), and reports the endpoint it was given.

    python lobby_spy.py ENDPOINT [TOKEN, default $OKGIN_TOKEN] [--flood N] [--hold K] [--reach HOST:PORT]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections import deque
from typing import Any

import msgpack
import zmq

from clients.bots import get_bot
from clients.sdk import run_bot

WAIT_MS = 10_000


def report(target: str, ok: bool, kind: str = "lobby", **extra: Any) -> None:
    sys.stderr.write(json.dumps({"spy": kind, "target": target, "ok": ok, **extra}) + "\n")
    sys.stderr.flush()


class Conn:
    def __init__(self, ctx: zmq.Context, endpoint: str) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.linger = 0
        self.sock.setsockopt(zmq.SNDTIMEO, WAIT_MS)  # a send never hangs the spy (zmq.Again instead)
        self.sock.connect(endpoint)
        self.n = 0

    def ask(self, msg: dict[str, Any]) -> dict[str, Any]:
        self.n += 1
        self.sock.send(msgpack.packb({**msg, "id": self.n}))
        while self.sock.poll(WAIT_MS):
            m = msgpack.unpackb(self.sock.recv(), raw=False)
            if m.get("id") == self.n:
                return m
        return {"type": "error", "name": "no answer"}

    def close(self) -> None:
        self.sock.close(0)


def hello(token: str | None, role: str = "player") -> dict[str, Any]:
    m: dict[str, Any] = {"type": "hello", "protocol": 1, "role": role, "name": "spy"}
    if token is not None:
        m["token"] = token
    return m


def attack(endpoint: str, token: str) -> str | None:
    """Every refused thing; returns the table it is seated at (from its snapshot)."""
    ctx = zmq.Context.instance()
    for label, msg in (("tokenless hello", hello(None)),
                       ("hello with another token", hello("f" * 32)),
                       ("spectator hello with its own token", hello(token, "spectator"))):
        c = Conn(ctx, endpoint)
        a = c.ask(msg)
        report(label, a.get("type") != "error", answer=a.get("name") or a.get("type"))
        c.close()
    c = Conn(ctx, endpoint)
    w = c.ask(hello(token))
    table = None
    if w.get("type") == "welcome":
        # its seat's snapshot follows the welcome
        while c.sock.poll(WAIT_MS):
            m = msgpack.unpackb(c.sock.recv(), raw=False)
            if m.get("type") in ("snapshot", "seated", "game_start", "prompt") and m.get("table"):
                table = m["table"]
                break
    report("hello with its own token", w.get("type") != "welcome", answer=w.get("type"), table=table)
    mine = table or "unknown"
    for label, msg in (("list_tables", {"type": "list_tables"}),
                       ("watch its own table", {"type": "watch", "table": mine}),
                       ("watch another table", {"type": "watch", "table": mine + "x"}),
                       ("create_table named after its hand", {"type": "create_table", "table": "hand-AS-2C-3D"}),
                       ("join", {"type": "join", "table": "side-channel"}),
                       ("queue", {"type": "queue"}),
                       ("leave", {"type": "leave", "table": mine}),
                       ("rematch", {"type": "rematch", "table": mine})):
        a = c.ask(msg)
        report(label, a.get("type") != "error", answer=a.get("name") or a.get("type"))
    c.sock.send(msgpack.packb({"type": "bye"}))
    c.close()
    return table


def flood(path: str, n: int, hold: int, out: dict[str, int]) -> None:
    """Open ``n`` connections, at most ``hold`` at once; count what got through and what
    the referee cut (an end of file before the spy closed it)."""
    live: deque[socket.socket] = deque()
    connected = failed = cut = 0
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(path)
                connected += 1
                live.append(s)
            except BlockingIOError:
                failed += 1
                s.close()
                time.sleep(0.001)  # the listen backlog is full: let the referee accept
            except OSError:  # refused: nothing listens any more (its door was closed)
                failed += 1
                s.close()
            while len(live) >= hold:
                old = live.popleft()
                try:
                    while True:
                        data = old.recv(4096)
                        if not data:
                            cut += 1
                            break
                except BlockingIOError:
                    pass
                except OSError:
                    cut += 1
                old.close()
    finally:
        for s in live:
            s.close()
    out.update(connected=connected, failed=failed, cut=cut)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("endpoint")
    ap.add_argument("token", nargs="?", default=os.environ.get("OKGIN_TOKEN"),
                   help="default $OKGIN_TOKEN (how the runner passes it)")
    ap.add_argument("--flood", type=int, default=0)
    ap.add_argument("--hold", type=int, default=256)
    ap.add_argument("--reach", action="append", default=[], help="HOST:PORT it must not reach")
    args = ap.parse_args()
    report("its endpoint", False, kind="endpoint", answer=args.endpoint)
    for target in args.reach:
        host, port = target.rsplit(":", 1)
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
            report(target, True, kind="reach", answer="connected")
        except OSError as e:
            report(target, False, kind="reach", answer=type(e).__name__)
    attack(args.endpoint, args.token)
    if args.flood and args.endpoint.startswith("ipc://"):
        # Before it sits (its own game waits for it; the others' games go on meanwhile).
        counts: dict[str, int] = {}
        flood(args.endpoint[len("ipc://") :], args.flood, args.hold, counts)
        sys.stderr.write(json.dumps({"spy": "flood", "target": str(args.flood), "ok": False, **counts}) + "\n")
        sys.stderr.flush()
    run_bot(get_bot("simple", seed=1), args.endpoint, token=args.token, name="spy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
