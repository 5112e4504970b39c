#!/usr/bin/env python3
"""A spectator process that watches tables and never reads (for test_faults.py).

It keeps its session alive with heartbeats, so the referee cannot treat it as gone: only
the bounded-feed rule (protocol.md §11, ``lagging``) can stop the feed piling up. Its
receive queue is one message and its kernel buffer a few kilobytes, so the pile-up
reaches the referee quickly. When the file ``--until`` appears it reads everything that
reached it, sends a ``ping``, reads up to the ``pong``, prints one JSON line with what it
got, and exits.

    python deaf_spectator.py ENDPOINT --watch t1 --watch t2 --until FLAGFILE
"""

from __future__ import annotations

import argparse
import json
import os
import time

import msgpack
import zmq


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("endpoint")
    p.add_argument("--watch", action="append", default=[])
    p.add_argument("--until", required=True)
    args = p.parse_args()
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVHWM, 1)
    s.setsockopt(zmq.RCVBUF, 4096)
    s.setsockopt(zmq.SNDTIMEO, 20000)  # a send never hangs it (zmq.Again instead)
    s.connect(args.endpoint)

    def send(m: dict) -> None:
        s.send(msgpack.packb(m))

    send({"type": "hello", "protocol": 1, "role": "spectator", "name": "deaf", "id": 0})
    for i, t in enumerate(args.watch):
        send({"type": "watch", "table": t, "id": i + 1})
    print(json.dumps({"ready": True}), flush=True)
    deadline = time.monotonic() + 600  # the test gives up long before
    while not os.path.exists(args.until) and time.monotonic() < deadline:  # never reads; beats so that it is not "gone"
        send({"type": "heartbeat"})
        time.sleep(0.1)
    got: dict[str, int] = {}
    lagging = []

    def take(m: dict) -> None:
        got[m["type"]] = got.get(m["type"], 0) + 1
        if m["type"] == "error" and m["name"] == "lagging":
            lagging.append(m["message"])

    while s.poll(1000):  # what reached it while it did not read
        take(msgpack.unpackb(s.recv(), raw=False))
    send({"type": "ping", "id": "last"})  # its next message: the referee tells it, if it cut it off
    while s.poll(10000):
        m = msgpack.unpackb(s.recv(), raw=False)
        take(m)
        if m.get("id") == "last":
            break
    print(json.dumps({"got": got, "lagging": lagging}), flush=True)
    s.close(0)
    ctx.term()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
