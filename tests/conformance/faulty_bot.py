"""A deliberately faulty bot: a plain pyzmq client that breaks one protocol rule on demand.

The conformance kit must fail it and name what it broke. With ``--fault none`` it plays
correctly (first legal action, heartbeats, reconnection, bye): the control that shows
each fault, not the client, is what the kit catches.

    python faulty_bot.py --connect ENDPOINT --token TOKEN --fault wrong-seq
"""

from __future__ import annotations

import argparse
import signal
import sys
import time

import msgpack
import zmq

FAULTS = (
    "none",
    "exit-at-once",
    "wrong-seq",
    "bad-frame",
    "no-heartbeat",
    "no-reconnect",
    "crash-on-error",
    "no-exit",
    "illegal-move",
    "stay",
)
# "stay" is no fault: after game_end it stays in the lobby (protocol.md §4) until the
# launcher's SIGTERM, which protocol.md §18 allows. "no-exit" stays and ignores SIGTERM.


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--connect", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--fault", choices=FAULTS, default="none")
    args = p.parse_args()
    fault = args.fault
    if fault == "no-exit":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if fault == "exit-at-once":
        print("faulty bot: giving up before connecting", file=sys.stderr)
        return 3
    ctx = zmq.Context()
    sock: zmq.Socket | None = None
    heartbeat, liveness = 5.0, 3
    last_sent = last_recv = time.monotonic()
    broke_frame = False
    moves = 0

    def send(msg: dict) -> None:
        nonlocal last_sent
        assert sock is not None
        sock.send(msgpack.packb(msg))
        last_sent = time.monotonic()

    def connect() -> None:
        nonlocal sock, last_recv
        if sock is not None:
            sock.close(0)
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.SNDTIMEO, 20000)  # a send never hangs it (zmq.Again instead)
        sock.connect(args.connect)
        send({"type": "hello", "protocol": 1, "role": "player", "name": f"faulty-{fault}", "token": args.token})
        last_recv = time.monotonic()

    connect()
    while True:
        assert sock is not None
        if sock.poll(50):
            msg = msgpack.unpackb(sock.recv())
            last_recv = time.monotonic()
            kind = msg.get("type")
            if kind == "welcome":
                heartbeat, liveness = msg["heartbeat_ms"] / 1000, msg["liveness"]
                if fault == "bad-frame" and not broke_frame:
                    broke_frame = True
                    sock.send(msgpack.packb(["hello", "not a map"]))
            elif kind == "prompt":
                moves += 1
                action = msg["legal"][0]
                if fault == "illegal-move" and moves == 4:
                    action = {"kind": "discard", "card": "Zz"}
                seq = msg["seq"] + (1 if fault == "wrong-seq" else 0)
                send({"type": "act", "table": msg["table"], "seq": seq, "action": action})
            elif kind == "error":
                print(f"faulty bot: error {msg.get('name')}: {msg.get('message')}", file=sys.stderr)
                if fault == "crash-on-error":
                    return 3
            elif kind == "game_end" and fault not in ("no-exit", "stay"):
                send({"type": "bye"})
                sock.close(1000)
                return 0
        now = time.monotonic()
        if fault != "no-heartbeat" and now - last_sent >= heartbeat:
            send({"type": "heartbeat"})
        if now - last_recv >= heartbeat * liveness and fault != "no-reconnect":
            connect()


if __name__ == "__main__":
    sys.exit(main())
