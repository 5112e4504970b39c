"""A tiny bot that speaks protocol.md directly (no SDK), with ways to misbehave.

Used by the tournament tests as a ``command`` participant: it is what a bot in "any
language" looks like to the runner (it borrows only the engine's deadwood function).
It plays greedily (see :func:`choose`) and on request crashes, hangs, breaks the
protocol or plays illegal moves after a number of its own moves:

    python protobot.py ENDPOINT [TOKEN, default $OKGIN_TOKEN] [--random SEED] [--crash-after N] [--hang-after N]
                       [--garbage-after N] [--illegal-after N] [--exit-at-start] [--exit-after-hello] [--never-knock] [--serve]
                       [--record] [--nonce HEX [--withhold]] [--pace-ms N]

``--nonce HEX`` commits to that nonce in ``hello`` and reveals it when asked (protocol
1.5, 5.27); with ``--withhold`` it commits and never reveals. Without ``--nonce`` it is a
1.4 bot: no commitment.

The bot leaves by itself (exit status 6, a line on stderr) when the referee goes silent:
no message for ``2 × liveness × heartbeat_ms`` after the ``welcome`` (twice what
protocol.md 10 says a client SHOULD wait, for a loaded machine), or for
``--gone-after`` seconds (default 60) before it. A runner that dies without ending its
bots (a test worker killed mid-tournament) then leaves no protobot behind for long, even
where no sandbox ties the bot's life to its runner's.

``--record`` writes every message the bot receives to its stderr (its log, kept by
``okgin tournament --keep-logs``), one ``protobot-recv JSON`` line each: what a bot
sees, for the tests of secret deals (stderr, because a sandboxed bot can write nowhere
else that outlives its game).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

import msgpack
import zmq

from okgin import mask_of, parse_card
from okgin.melds import deadwood_after_discard_mask


def choose(legal: list[dict], view: dict, rng: random.Random, never_knock: bool) -> dict:
    """Greedy: knock when allowed (unless never_knock), else draw from the stock and
    throw a card that leaves the least deadwood (ties broken by the seeded rng)."""
    knocks = [x for x in legal if x["kind"] in ("knock", "big_gin")]
    if knocks and not never_knock:
        return knocks[0]
    discards = [x for x in legal if x["kind"] == "discard"]
    if discards and view.get("hand"):
        _, best = deadwood_after_discard_mask(mask_of(parse_card(c) for c in view["hand"]))
        options = [x for x in discards if parse_card(x["card"]) in best] or discards
        return rng.choice(options)
    for kind in ("draw_stock", "pass"):
        for x in legal:
            if x["kind"] == kind:
                return x
    return legal[0]


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("endpoint")
    p.add_argument("token", nargs="?", default=os.environ.get("OKGIN_TOKEN"),
                  help="default $OKGIN_TOKEN (how the runner passes it)")
    p.add_argument("--random", type=int, default=None)
    p.add_argument("--crash-after", type=int, default=-1)
    p.add_argument("--hang-after", type=int, default=-1)
    p.add_argument("--garbage-after", type=int, default=-1)
    p.add_argument("--illegal-after", type=int, default=-1)
    p.add_argument("--exit-at-start", action="store_true")
    p.add_argument("--start-delay", type=float, default=0.0,
                   help="wait this many seconds before connecting to a game's table (not the preflight's): a slow start")
    p.add_argument("--exit-after-hello", action="store_true", help="exit at welcome: passes a preflight, loses every game")
    p.add_argument("--never-knock", action="store_true")
    p.add_argument("--serve", action="store_true", help="keep playing game after game (a remote bot)")
    p.add_argument("--record", action="store_true", help="write every received message to stderr (JSON lines)")
    p.add_argument("--nonce", default=None, help="commit to this nonce (64 hex) and reveal it when asked")
    p.add_argument("--withhold", action="store_true", help="with --nonce: commit, never reveal")
    p.add_argument("--stall-in-seat", type=int, default=None,
                   help="seated in this seat, never move (heartbeats go on: the game stays unfinished)")
    p.add_argument("--spew-mb", type=int, default=0,
                   help="first write this many MB to stdout and stderr, its own token among them (the log's bounds)")
    p.add_argument("--pace-ms", type=int, default=0,
                   help="think this many ms before each move: a game that lasts long enough to be caught in progress")
    p.add_argument("--gone-after", type=float, default=60.0,
                   help="seconds without a welcome after which the referee counts as gone (default 60)")
    a = p.parse_args()
    if a.exit_at_start:
        print("protobot: exiting before connecting, as asked", file=sys.stderr)
        return 3
    if a.spew_mb:
        line = f"protobot spews, its token is {a.token} ".ljust(1023, ".") + "\n"
        for i in range(a.spew_mb * 1024):
            (sys.stdout if i % 2 else sys.stderr).write(line)
        sys.stdout.flush()
        sys.stderr.flush()
    if a.start_delay and "-preflight-" not in os.environ.get("OKGIN_TABLE", ""):
        time.sleep(a.start_delay)  # a process that takes this long to start (an interpreter on a loaded machine)
    rng = random.Random(a.random or 0)
    ctx = zmq.Context()
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.SNDTIMEO, 20000)  # a send never hangs the bot (zmq.Again instead)
    s.connect(a.endpoint)

    def send(m: dict) -> None:
        s.send(msgpack.packb(m, use_bin_type=True))

    hello = {"type": "hello", "id": 1, "protocol": 1, "role": "player", "name": "protobot", "token": a.token}
    if a.nonce:
        from okgin.schedule import nonce_commitment

        hello["entropy_commit"] = nonce_commitment(bytes.fromhex(a.nonce))
    send(hello)
    moves = 0
    seat = None
    heartbeat = 5.0
    gone_after = a.gone_after  # until the welcome; then 2 x liveness x heartbeat (module docstring)
    last_sent = last_heard = time.monotonic()
    while True:
        if not s.poll(int(heartbeat * 1000 / 2)):
            if time.monotonic() - last_heard > gone_after:
                print(f"protobot: no message from the referee for {gone_after:g} s, leaving", file=sys.stderr, flush=True)
                return 6
            send({"type": "heartbeat"})
            last_sent = time.monotonic()
            continue
        m = msgpack.unpackb(s.recv(), raw=False)
        last_heard = time.monotonic()
        t = m.get("type")
        if a.record:
            print("protobot-recv " + json.dumps(m, default=repr), file=sys.stderr, flush=True)
        if t == "welcome":
            heartbeat = m.get("heartbeat_ms", 5000) / 1000
            gone_after = 2 * m.get("liveness", 3) * heartbeat
            if a.exit_after_hello:
                print("protobot: exiting after hello, as asked", file=sys.stderr, flush=True)
                return 4
        elif t == "seated":
            seat = m.get("seat")
        elif t == "prompt":
            if a.stall_in_seat is not None and seat == a.stall_in_seat:
                continue
            if moves == a.crash_after:
                raise RuntimeError("protobot: crashing on purpose")
            if moves == a.hang_after:
                print("protobot: hanging on purpose", file=sys.stderr, flush=True)
                time.sleep(600)  # hung, not immortal: a runner that never ends it leaves it for 10 minutes at most
                return 7
            if moves == a.garbage_after:
                s.send(b"\xc1 this is not msgpack")
                moves += 1
                continue
            if a.pace_ms:
                time.sleep(a.pace_ms / 1000)  # the bot's own think time, far inside any clock the tests set
            action = choose(m["legal"], m.get("view") or {}, rng, a.never_knock)
            if moves >= a.illegal_after >= 0:
                action = {"kind": "discard", "card": "Xx"}
            send({"type": "act", "table": m["table"], "seq": m["seq"], "action": action})
            moves += 1
        elif t == "entropy_request" and a.nonce and not a.withhold:
            send({"type": "entropy_reveal", "id": 2, "table": m["table"], "nonce": a.nonce})
        elif t == "game_end" and not a.serve:
            return 0
        elif t in ("shutdown", "table_closed") and not a.serve:
            return 0
        if time.monotonic() - last_sent > heartbeat:
            send({"type": "heartbeat"})
            last_sent = time.monotonic()


if __name__ == "__main__":
    sys.exit(main())
