"""What the referee's outbox costs per move (issue 25 item 1, referee.sending).

Since issue 25 a handler's sends wait in the outbox (``Sender.out``) and the transport
writes them when the handler returns (``Sender.flush``); before, each was written from
inside the handler. This measures the CPU time of a move's three session sends (two
events and the next prompt, as in bench/referee.py's events mode), on a real ROUTER with
a real DEALER peer reading them:

- ``held``: as a handler sends them, through the outbox, then one flush;
- ``direct``: as a timer sends them, each written at once (the pre-issue-25 cost per
  send, plus one ``kick`` per move, which a timer's send pays anyway).

CPU time (``time.process_time``), best of ``--reps``, so the machine's load matters
less than for wall-clock figures; the figure includes pyzmq's send, not the peer's work.

    python -m bench.sending [--moves 20000] [--reps 7]

Prints one line per mode, then one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

import zmq

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]  # not bench/ first


def measure(moves: int, reps: int) -> dict[str, float]:
    from referee.config import RefereeConfig
    from referee.sessions import Session
    from referee.transport import Transport

    loop = asyncio.new_event_loop()
    tr = Transport(RefereeConfig(bind="tcp://127.0.0.1:0", hwm=10**7), time.monotonic)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    peer = ctx.socket(zmq.DEALER)
    try:
        endpoint = tr.open(loop)
        peer.setsockopt(zmq.RCVHWM, 0)
        peer.setsockopt(zmq.LINGER, 0)
        peer.connect(endpoint)
        peer.send(b"hello")
        assert tr.sock is not None and tr.sock.poll(10000)
        rid = tr.sock.recv_multipart()[0]
        sess = Session("token", "peer", "player", rid=rid)
        data = b"x" * 300  # a prompt's size
        sender = tr.sender
        out: dict[str, float] = {}
        for mode in ("held", "direct"):
            best = float("inf")
            for _ in range(reps):
                sender.holding = mode == "held"
                send, pending, flush = sender.send_bytes, sender.out, sender.flush
                t0 = time.process_time()
                for _ in range(moves):
                    send(sess, data)
                    send(sess, data)
                    send(sess, data)
                    if pending:
                        flush()
                best = min(best, time.process_time() - t0)
                sender.holding = False
                got = 0
                while got < 3 * moves and peer.poll(2000):
                    peer.recv()
                    got += 1
                assert got == 3 * moves, f"the peer got {got} of {3 * moves} frames"
            out[mode] = best / moves * 1e6
        return out
    finally:
        peer.close(0)
        loop.run_until_complete(tr.close())
        loop.close()
        ctx.term()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--moves", type=int, default=20000)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    load = os.getloadavg()
    res = measure(args.moves, args.reps)
    print(f"# load average before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    for mode, us in res.items():
        print(f"{mode:>6}: {us:.2f} us CPU per move (3 sends of 300 bytes), best of {args.reps}")
    print(json.dumps({"bench": "sending", **{f"{k}_us_per_move": round(v, 2) for k, v in res.items()},
                      "loadavg_before": [round(x, 2) for x in load]}))


if __name__ == "__main__":
    main()
